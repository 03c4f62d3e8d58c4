"""Each rule's answer to "can this make a student's right answer wrong?", which sets its default
severity: `error` when it can (or when the item cannot be delivered as written), `warning` for
flaws that cue or confuse without changing what is graded right, `info` for what to look at.

`docs.py` prints the answer on each rule's page; tests/test_lint_rules.py checks that every
rule has one and that every rule answering "Yes" is an error (but those answering "Yes, but",
whose finding may be what the author meant).
"""

from __future__ import annotations

KEY_RISK: dict[str, str] = {
    "ST001": "Yes: no option is graded right.",
    "ST002": "Yes: LMSs keep one key, or refuse the item.",
    "ST003": "Yes: with no correct option nobody can answer right; with no wrong one ticking "
             "everything scores full marks.",
    "ST004": "No: a guess is more likely to score, but a right answer stays right.",
    "ST005": "Yes: a student who picks the copy of the key is graded wrong (in matching and "
             "ordering items the two cannot be told apart).",
    "ST006": "No: near-copies test reading, but each option is graded as it says.",
    "ST007": "Yes: a blank option or stem cannot be recognised as the right answer.",
    "ST008": "No, but the item cannot be delivered: QTI players refuse an invalid identifier "
             "and Moodle re-imports stop matching.",
    "ST009": "Yes: options are shuffled, so \"option C\" names another option than the one the "
             "author meant.",
    "ST010": "No: ticking the one key still scores full marks; the type misleads.",
    "ST011": "Yes: on a printed form answered by letter, a student writes the letter in the "
             "text, which is no longer the option's position.",
    "ST012": "No: graders without a guide grade unevenly, but no answer is graded by rule.",
    "ST013": "Yes, the other way round: every answer, a wrong one included, is graded right.",
    "TR001": "Yes: students of the missing language get no item, or an empty one.",
    "TR002": "Yes: a number changed in translation changes the question, and the key may be "
             "right for one language only.",
    "TR003": "Yes: a formula or code that differs asks a different question in one language.",
    "TR004": "Yes: a renamed symbol leaves the options of one language pointing at nothing.",
    "TR005": "No: an ad-hoc rendering hides the term, but the question is the same.",
    "TR006": "Yes: a declared wrong rendering names another concept (\"siaran\" is a radio "
             "broadcast, not the collective).",
    "TR007": "No: the text is the right question in a language the student may not read.",
    "TR008": "No: an untranslated field is readable by some students only.",
    "TR009": "No: a lost or added clause is worth reading, not always wrong.",
    "TR010": "No: the number is still readable (ambiguous grouped thousands are not flagged).",
    "WR001": "No: a cue lets a guess score; right answers stay right.",
    "WR002": "No: the option is a cue, not a change of the key.",
    "WR003": "No: a cue lets a guess score.",
    "WR004": "No: a missed negation can make a student answer wrong, but the key is right; "
             "the emphasis makes the question read as graded.",
    "WR005": "No: a cue lets a guess score.",
    "WR006": "No: options out of order slow students down.",
    "WR007": "No: a cue lets a guess score.",
    "WR008": "No: repeated words slow reading.",
    "WR009": "No: uneven options are a cue.",
    "WR010": "No: a cue lets a guess score.",
    "BK001": "No: a form may show the question twice; each copy is graded right.",
    "BK002": "No: near-duplicates give each other away.",
    "BK003": "No, but the assembler cannot keep apart what the author asked it to: an error "
             "in the bank's references.",
    "BK004": "No: a skewed key position is a cue across items.",
    "BK005": "No: a key pattern is a cue across items.",
    "BK006": "No: a long key is a cue across items.",
    "BK007": "No: a test-wise strategy scores above chance.",
    "BK008": "No: it says which checks did not run.",
    "IA001": "Yes, but the figures only point at it: a wrong key is the usual cause, a trap in "
             "the wording or a topic apart from the rest of the test others; someone must read "
             "the item, so it warns.",
    "IA002": "No: an option nobody chooses makes guessing easier; the key stays right.",
    "IA003": "No: forms are balanced on a wrong difficulty; every answer is graded as before.",
    "IA004": "No, but what the record says is lost: the other IA rules and the assembler's "
             "observed p-values go on without it, so it is an error.",
    "IA005": "No: the key stays right, but equally able students score differently by the "
             "language they read; someone must compare the versions, so it warns.",
    "LM001": "No: some Moodle databases refuse the character (the question is not saved); "
             "nothing is graded differently.",
    "LM002": "Yes: Moodle snaps the grade to its list, and a partly right answer earns "
             "another fraction.",
    "LM003": "Yes: the browser drops the text, and an option can lose the words that made it "
             "right.",
    "LM004": "No, but the text is refused or stripped by every LMS: an error for safety.",
    "LM005": "No: Moodle cuts the name; students do not see it.",
    "LM006": "No, usually: browsers repair the markup, though text after it may move.",
    "MT001": "Yes: students read broken TeX (or red MathJax errors) instead of the formula.",
    "MT002": "Yes: the rest of the field turns into a formula, or the formula into text.",
    "MT003": "Yes, but the author may mean the emphasis: Markdown drops the characters, so "
             "2*3*4 reads as 234 with the 3 in italics; the rule cannot tell, so it warns.",
    "LM007": "Yes: Canvas replaces the whole question text, so no answer can be right.",
    "SP001": "No: it reports a suppression that does nothing.",
}
