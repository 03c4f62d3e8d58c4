"""Structure rules (ST): keys, option counts, duplicates, empty fields, identifiers, letter refs."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from difflib import SequenceMatcher
from typing import assert_never

from dpassess.diagnostics import FieldPath
from dpassess.lint.context import ItemContext
from dpassess.lint.registry import CHOICE, Hit, rule
from dpassess.lint.text import norm, plain, quote
from dpassess.lint.words import AND_OR, LETTER_NOUNS, STOPWORDS
from dpassess.lms.moodle import MAX_IDNUMBER
from dpassess.markup.maths import find_maths
from dpassess.markup.parser import parser
from dpassess.model import (
    ChoiceBase,
    ChoiceGap,
    ChoiceItem,
    Cloze,
    Essay,
    Item,
    Matching,
    MultipleResponse,
    MultipleResponseGap,
    Ordering,
    ShortAnswer,
    SingleChoice,
    TrueFalse,
    gap_refs,
)

#: The choice classes with exactly one key, and those with a choice among several options (a
#: mixed tuple is typed by hand: inferred, it would be every item class).
ONE_KEY: tuple[type[SingleChoice | TrueFalse], ...] = (SingleChoice, TrueFalse)
OPTION_CHOICE: tuple[type[SingleChoice | MultipleResponse], ...] = (SingleChoice, MultipleResponse)


@rule(
    "ST001", "key-unknown-option", "error",
    key_risk="Yes: no option is graded right.",
    fix="Make the key name one of the item's option ids.",
    items=CHOICE,
)
def key_unknown_option(ctx: ItemContext[ChoiceItem]) -> Iterator[Hit]:
    """## What it does
    Checks that every id in `key` names an option of the item.

    ## Why is this bad?
    A key naming no option makes an item nobody can answer correctly; most LMS importers accept
    it silently and score every attempt as wrong. The loader already refuses such files; this
    rule also guards items built in code (importers, scripts) without validation.

    ## Example
    ```yaml
    options: [ring, tree, mesh]
    key: star
    ```

    ## Use instead
    ```yaml
    options: [ring, tree, mesh]
    key: ring
    ```
    """
    ids = ctx.item.option_ids
    for i, k in enumerate(ctx.item.key):
        if k not in ids:
            yield Hit(("key", i), f"key {k!r} names no option (options: {', '.join(ids)})")


@rule(
    "ST002", "key-count", "error",
    key_risk="Yes: LMSs keep one key, or refuse the item.",
    fix="Give a single-choice or true/false item exactly one key; use type: multiple_response "
    "for several correct options.",
    items=ONE_KEY,
)
def key_count(ctx: ItemContext[SingleChoice | TrueFalse]) -> Iterator[Hit]:
    """## What it does
    Checks that a single-choice or true/false item has exactly one key.

    ## Why is this bad?
    Moodle and QTI score a single-choice item against one correct option; a second key is
    dropped or makes the import fail, and an empty key scores everyone zero.

    ## Example
    ```yaml
    type: single_choice
    key: [ring, tree]
    ```

    ## Use instead
    ```yaml
    type: multiple_response
    key: [ring, tree]
    ```
    """
    item = ctx.item
    if len(item.key) != 1:
        yield Hit(("key",), f"a {item.type.value} item needs exactly one key, found {len(item.key)}")


@rule(
    "ST003", "response-mix", "error",
    key_risk="Yes: with no correct option nobody can answer right; with no wrong one ticking "
             "everything scores full marks.",
    fix="Give a multiple-response item at least one correct and at least one wrong option.",
    items=(MultipleResponse,),
)
def response_mix(ctx: ItemContext[MultipleResponse]) -> Iterator[Hit]:
    """## What it does
    Checks that a multiple-response item has at least one correct and one wrong option.

    ## Why is this bad?
    When every option is correct, ticking everything scores full marks; when none is, the item
    cannot be answered. Either way it measures nothing.

    ## Example
    ```yaml
    type: multiple_response
    options: [ring, tree]
    key: [ring, tree]
    ```

    ## Use instead
    ```yaml
    type: multiple_response
    options: [ring, tree, star]
    key: [ring, tree]
    ```
    """
    item = ctx.item
    right = [o for o in item.option_ids if o in item.key]
    if not right:
        yield Hit(("key",), "no option is correct")
    elif len(right) == len(item.options):
        yield Hit(("key",), f"all {len(right)} options are correct; no option is wrong")


@rule(
    "ST004", "too-few-options", "warning",
    key_risk="No: a guess is more likely to score, but a right answer stays right.",
    fix="Add plausible distractors (three or more options), or set min-options in the config.",
    items=OPTION_CHOICE,
)
def too_few_options(ctx: ItemContext[SingleChoice | MultipleResponse]) -> Iterator[Hit]:
    """## What it does
    Checks that a choice item has at least `min-options` options (default 3). True/false items
    are exempt.

    ## Why is this bad?
    With two options a guess scores 50%; the item tells little about what a student knows.
    Three good options are usually as effective as four or five (Rodriguez 2005).

    ## Example
    ```yaml
    options: [ring, tree]
    ```

    ## Use instead
    ```yaml
    options: [ring, tree, direct]
    ```
    """
    item = ctx.item
    n, need = len(item.options), ctx.config.min_options
    if n < need:
        yield Hit(("options",), f"{n} options; at least {need} are needed",
                  f"Add plausible distractors ({need} or more options), or set min-options in "
                  "the config.")


#: The item classes whose options (or premises and responses) must differ from each other.
DISTINCT: tuple[type[ChoiceItem | Matching | Ordering], ...] = (*CHOICE, Matching, Ordering)


def _choices(ctx: ItemContext[ChoiceItem | Matching | Ordering], lang: str
             ) -> Iterator[tuple[str, dict[str, str]]]:
    """The groups of texts of one language a student tells apart: (what one is, id -> text)."""
    item = ctx.item
    match item:
        case ChoiceBase():
            yield "option", {oid: item.option_text(lang, oid) for oid in item.option_ids}
        case Ordering():
            yield "option", item.text[lang].options
        case Matching():
            yield "premise", item.text[lang].premises
            yield "response", item.text[lang].responses
        case _:
            assert_never(item)


@rule(
    "ST005", "duplicate-option", "error",
    key_risk="Yes: a student who picks the copy of the key is graded wrong (in matching and "
             "ordering items the two cannot be told apart).",
    fix="Make every option say something different; remove or rewrite the copy.",
    items=DISTINCT,
)
def duplicate_option(ctx: ItemContext[ChoiceItem | Matching | Ordering]) -> Iterator[Hit]:
    """## What it does
    Finds two options of an item whose text is the same in one language (ignoring case,
    punctuation, Markdown and spacing); in a matching item, two premises or two responses; in
    an ordering item, two options that put in either order read the same.

    ## Why is this bad?
    Two identical options cannot both be wrong and right; students spot the copy and the item
    loses an option. It is usually a copy-paste slip. In a matching or ordering item the
    student cannot tell the two apart, and the right answer may be graded wrong.

    ## Example
    ```yaml
    options:
      a: All-reduce
      b: all-reduce.
    ```

    ## Use instead
    ```yaml
    options:
      a: All-reduce
      b: All-gather
    ```
    """
    for lang in ctx.item.text:
        for what, texts in _choices(ctx, lang):
            seen: dict[str, str] = {}
            for oid, text in texts.items():
                key = norm(text)
                if not key:
                    continue
                if key in seen:
                    yield Hit(
                        ("text", lang, f"{what}s" if what != "option" else "options", oid),
                        f"{what} {oid!r} repeats {what} {seen[key]!r} in {lang!r}: "
                        f"{quote(plain(text))}",
                    )
                else:
                    seen[key] = oid


NEAR = 0.9


@rule(
    "ST006", "near-duplicate-option", "warning",
    key_risk="No: near-copies test reading, but each option is graded as it says.",
    fix="Rewrite one of the two options so that they differ in what they claim.",
    items=CHOICE,
)
def near_duplicate_option(ctx: ItemContext[ChoiceItem]) -> Iterator[Hit]:
    r"""## What it does
    Finds two options of an item that differ only slightly (90% or more of the text the same,
    and no content word or number of one missing from the other but as a spelling variant) or
    use the same words in another order. Parallel options that differ in the word that
    matters ("the mean of the scores", "the median of the scores") pass, and so do options
    whose formulas differ: `$\sqrt{\dfrac{\sigma}{n}}$` and `$\dfrac{\sigma}{\sqrt{n}}$` have
    the same words but are different formulas (formulas are compared as TeX, spaces aside).

    ## Why is this bad?
    Near-identical options test reading, not knowledge; when one of them is the key, the pair
    also tells a test-wise student where to look.

    ## Example
    ```yaml
    options:
      a: The gradients are averaged across GPUs
      b: The gradients are averaged across the GPUs
    ```

    ## Use instead
    ```yaml
    options:
      a: The gradients are averaged across GPUs
      b: The parameters are broadcast from one GPU
    ```
    """
    for v in ctx.views():
        keys = [(oid, k, set(k.split()), t)
                for oid, k, t in ((o, norm(t), t) for o, t in v.options.items())]
        for i, (a, ka, wa, ta) in enumerate(keys):
            for b, kb, wb, tb in keys[i + 1:]:
                if not ka or not kb or ka == kb:
                    continue  # empty or identical: other rules
                shared = len(wa & wb)
                if shared < 0.6 * (len(wa) + len(wb) - shared):  # the union's size
                    continue  # too few shared words to be near-identical
                if (sorted(ka.split()) == sorted(kb.split()) or (
                    min(len(ka), len(kb)) >= 10 and _similar(ka, kb)
                    and not _differ_in_content(ka, kb, v.lang)
                )) and _formulas(ta) == _formulas(tb):
                    yield Hit(
                        ("text", v.lang, "options", b),
                        f"option {b!r} nearly repeats option {a!r} in {v.lang!r}",
                    )


_MATHS_MARKS = ("$", "\\(", "\\[")


def _formulas(text: str) -> tuple[str, ...]:
    r"""The formulas of an option as TeX without spaces: words alone do not tell
    `\sqrt{\dfrac{\sigma}{n}}` from `\dfrac{\sigma}{\sqrt{n}}`."""
    if not any(m in text for m in _MATHS_MARKS):
        return ()
    return tuple("".join(m.tex.split()) for m in find_maths(text))


def _differ_in_content(a: str, b: str, lang: str) -> bool:
    """Whether two option keys differ in a content word (or a number) that is not a spelling
    variant of a word of the other: "the mean of the scores" and "the median of the scores"
    are parallel options, not copies."""
    ca, cb = Counter(a.split()), Counter(b.split())
    only_a, only_b = list((ca - cb).elements()), list((cb - ca).elements())
    stop = STOPWORDS.get(lang.split("-")[0], frozenset())
    for mine, theirs in ((only_a, only_b), (only_b, only_a)):
        for w in mine:
            if w in stop:
                continue
            if not any(SequenceMatcher(None, w, o, autojunk=False).ratio() >= SPELLING
                       for o in theirs):
                return True
    return False


#: Two words this similar are one word spelt two ways (gradient, gradients; allreduce, all-reduce).
SPELLING = 0.85


def _similar(a: str, b: str) -> bool:
    sm = SequenceMatcher(None, a, b, autojunk=False)
    return sm.real_quick_ratio() >= NEAR and sm.quick_ratio() >= NEAR and sm.ratio() >= NEAR


@rule("ST007", "empty-field", "error",
    key_risk="Yes: a blank option or stem cannot be recognised as the right answer.",
    fix="Write the text, or remove the field if it is optional.")
def empty_field(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    Finds text fields (title, stem, option, feedback, explanation) that are empty or only
    whitespace.

    ## Why is this bad?
    An empty stem or option is shown as a blank; Moodle refuses some empty fields on import and
    accepts others, so the problem surfaces in front of students.

    ## Example
    ```yaml
    stem: ""
    ```

    ## Use instead
    ```yaml
    stem: Which collective keeps replicas in sync?
    ```
    """
    for loc, text in ctx.all_fields():
        if not text or text.isspace():
            yield Hit(loc, f"{_name(loc)} is empty")


def _name(loc: FieldPath) -> str:
    return ".".join(str(s) for s in loc)


_NCNAME = re.compile(r"^[A-Za-z_][A-Za-z0-9._-]*$")


@rule(
    "ST008", "invalid-identifier", "error",
    key_risk="No, but the item cannot be delivered: QTI players refuse an invalid identifier and "
             "Moodle re-imports stop matching.",
    fix="Use a lower-case slug (letters, digits, - or _), starting with a letter and not with "
    f"'xml', at most {MAX_IDNUMBER} characters.",
)
def invalid_identifier(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    Checks that the item id and option ids are valid QTI identifiers (XML NCNames, not starting
    with `xml`) and Moodle idnumbers (at most 100 characters).

    ## Why is this bad?
    Exports use these ids verbatim: QTI `identifier` attributes must be NCNames, names starting
    with `xml` are reserved by XML, and Moodle truncates or rejects longer idnumbers, so
    re-imports stop matching.

    ## Example
    ```yaml
    id: xml-parsing-1
    ```

    ## Use instead
    ```yaml
    id: parsing-xml-1
    ```
    """
    item = ctx.item
    ids: list[tuple[FieldPath, str, int]] = [(("id",), item.id, MAX_IDNUMBER)]
    ids += [(loc, value, MAX_IDNUMBER) for loc, value in item.ids()]
    for loc, value, limit in ids:
        if not _NCNAME.match(value):
            yield Hit(loc, f"{value!r} is not a valid QTI identifier")
        elif value.lower().startswith("xml"):
            yield Hit(loc, f"{value!r} starts with 'xml', which XML reserves")
        elif len(value) > limit:
            yield Hit(loc, f"{value!r} is {len(value)} characters; Moodle allows {limit}")


def _letter_patterns() -> dict[str, re.Pattern[str]]:
    pats = {}
    for lang, nouns in LETTER_NOUNS.items():
        noun = "|".join(nouns)
        conj = "|".join(AND_OR[lang])
        pats[lang] = re.compile(
            rf"\b(?i:{noun})\s+\(?([A-F])\)?(?![\w-])"
            rf"|(?<![\w-])\(?([A-F])\)?\s+(?i:{conj})\s+\(?([A-F])\)?(?![\w-])"
        )
    return pats


_LETTERS = _letter_patterns()
#: What every letter reference contains: a capital A-F with neither a word character nor a
#: hyphen on either side. Starting with the letter class, the scan skips ahead in C; the
#: reference patterns run only on fields that have one.
_LONE_CAPITAL = re.compile(r"[A-F](?<![\w-][A-F])(?![\w-])")


@rule(
    "ST009", "letter-reference", "error",
    key_risk="Yes: options are shuffled, so \"option C\" names another option than the one the "
             "author meant.",
    fix="Refer to the option by what it says, not by its letter: options are shuffled.",
)
def letter_reference(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    Finds options, feedback and explanations that refer to options by letter ("option C",
    "A and B", "jawaban B", "A dan C").

    ## Why is this bad?
    Options are shuffled per student and per form, and LMSs number them differently (a., A.,
    1.); "option C" then points at the wrong option. Declared `symbols` are not letters.

    ## Example
    ```yaml
    options:
      d: Both A and B
    ```

    ## Use instead
    ```yaml
    options:
      d: Both the ring and the tree algorithm
    ```
    """
    if not _LONE_CAPITAL.search(ctx.joined):
        return
    symbols = set(ctx.item.symbols)
    for lang in ctx.item.text:
        pat = _LETTERS.get(lang.split("-")[0])
        if pat is None:
            continue
        for loc, text in ctx.fields(lang):
            if loc[2] in ("title", "stem") or not _LONE_CAPITAL.search(text):
                continue
            for m in pat.finditer(text):
                letters = {g for g in m.groups() if g}
                if letters and letters <= symbols:
                    continue
                yield Hit(loc, f"refers to an option by letter: {m.group(0)!r}")
                break


@rule(
    "ST010", "single-key-multiple-response", "warning",
    key_risk="No: ticking the one key still scores full marks; the type misleads.",
    fix="Use type: single_choice when one option is right; keep multiple_response only when "
    "students may have to tick several.",
    items=(MultipleResponse,),
)
def single_key_multiple_response(ctx: ItemContext[MultipleResponse]) -> Iterator[Hit]:
    """## What it does
    Flags a multiple-response item whose key names exactly one option.

    ## Why is this bad?
    Students see checkboxes and look for several right answers, and the LMSs disagree about
    what the item is: Canvas counts the correct answers and turns it into a radio-button
    question, Moodle keeps checkboxes, GIFT writes `~%100%` answers. A one-key item is usually
    a single-choice item imported or typed with the wrong type.

    ## Example
    ```yaml
    type: multiple_response
    options: [ring, tree, star]
    key: [ring]
    ```

    ## Use instead
    ```yaml
    type: single_choice
    options: [ring, tree, star]
    key: ring
    ```
    """
    if len(ctx.item.key) == 1:
        yield Hit(("key",), f"a multiple_response item with one key ({ctx.item.key[0]!r}): did "
                            "you mean type: single_choice?")


#: A letter label at the start of an option: "A) ...", "(b) ...", "D. ...", "c: ...".
_LABEL = re.compile(r"\s*(?:\(([A-Ha-h])\)|([A-Ha-h])[.):])\s")


@rule(
    "ST011", "option-letter-label", "error",
    key_risk="Yes: on a printed form answered by letter, a student writes the letter in the text, "
             "which is no longer the option's position.",
    fix="Remove the letter from the option text: the LMS numbers the options itself, after "
    "shuffling.",
    items=OPTION_CHOICE,
)
def option_letter_label(ctx: ItemContext[SingleChoice | MultipleResponse]) -> Iterator[Hit]:
    """## What it does
    Finds options whose text starts with a letter label (`A) ...`, `(b) ...`, `D. ...`) in an
    item whose options are shuffled.

    ## Why is this bad?
    The LMS shuffles the options and numbers them itself: students read "a. D) 64" and "b. A)
    8", and a printed answer key or a feedback text that says "A" points at the wrong option.

    ## Example
    ```yaml
    options:
      a: A) 8 GPUs
      b: B) 16 GPUs
    ```

    ## Use instead
    ```yaml
    options:
      a: 8 GPUs
      b: 16 GPUs
    ```
    """
    if not ctx.item.shuffle:
        return
    for lang, content in ctx.item.text.items():
        for oid, text in content.options.items():
            m = _LABEL.match(text)
            if m:
                label = (m.group(1) or m.group(2)).upper()
                yield Hit(("text", lang, "options", oid),
                          f"option {oid!r} starts with the letter label {label!r} in {lang!r}, "
                          "but the options are shuffled")
                break


@rule(
    "ST012", "essay-without-guide", "warning",
    key_risk="No: graders without a guide grade unevenly, but no answer is graded by rule.",
    fix="Write `grader_info` (a rubric or a model answer) in every language.",
    items=(Essay,),
)
def essay_without_guide(ctx: ItemContext[Essay]) -> Iterator[Hit]:
    """## What it does
    Flags an essay item with no `grader_info` in any language (TR001 reports one written in
    some languages only).

    ## Why is this bad?
    An essay is graded by people; without a rubric or a model answer two graders give the
    same response different marks, and a grader of the other language has nothing to go by.

    ## Example
    ```yaml
    type: essay
    text:
      en: {stem: Explain why all-reduce keeps the replicas in sync.}
    ```

    ## Use instead
    ```yaml
    type: essay
    text:
      en:
        stem: Explain why all-reduce keeps the replicas in sync.
        grader_info: "Full marks: every replica applies the same averaged gradient."
    ```
    """
    if all(not (c.grader_info or "").strip() for c in ctx.item.text.values()):
        yield Hit(("text",), "the essay has no grader_info in any language")


@rule(
    "ST013", "wildcard-accepts-anything", "error",
    key_risk="Yes, the other way round: every answer, a wrong one included, is graded right.",
    fix="Write the accepted wording; `*` matches any characters, so a wording of only `*` "
    "accepts every answer.",
    items=(ShortAnswer,),
)
def wildcard_accepts_anything(ctx: ItemContext[ShortAnswer]) -> Iterator[Hit]:
    """## What it does
    Finds an accepted wording of a short-answer item that is only `*` (and spaces), for an
    answer that earns points.

    ## Why is this bad?
    Moodle reads `*` as "any characters": the wording accepts every response, an empty one
    included, so every student gets the points. A catch-all wording with fraction 0 (to give
    feedback on any other answer) is fine.

    ## Example
    ```yaml
    answers: [{id: queue}]
    text: {en: {answers: {queue: ["*"]}}}
    ```

    ## Use instead
    ```yaml
    answers: [{id: queue}]
    text: {en: {answers: {queue: [queue, "a queue"]}}}
    ```
    """
    earns = {a.id for a in ctx.item.answers if a.fraction > 0}
    for lang, content in ctx.item.text.items():
        for aid, wordings in content.answers.items():
            if aid not in earns:
                continue
            for k, w in enumerate(wordings):
                if not w.replace("*", "").strip():
                    yield Hit(("text", lang, "answers", aid, k),
                              f"the wording {w!r} of answer {aid!r} accepts any response in "
                              f"{lang!r}")


@rule(
    "ST014", "one-option-gap", "error",
    key_risk="No, but there is nothing to choose (every student gets the gap right), and Moodle "
             "refuses the whole cloze question (\"Please fill in at least 2 answers\").",
    fix="Give the gap at least one more option (a plausible wrong one), or make it a "
    "short-answer gap.",
    items=(Cloze,),
)
def one_option_gap(ctx: ItemContext[Cloze]) -> Iterator[Hit]:
    """## What it does
    Finds choice and multiple-response gaps of a cloze item with fewer than two options.

    ## Why is this bad?
    A drop-down with one entry is not a question: whoever opens it picks the key. Moodle's
    cloze parser refuses a choice gap with fewer than two answers, so the question is not
    imported at all.

    ## Example
    ```yaml
    gaps:
      - {id: probe, type: choice, options: [linear], key: linear}
    ```

    ## Use instead
    ```yaml
    gaps:
      - {id: probe, type: choice, options: [linear, chaining, doubling], key: linear}
    ```
    """
    for i, gap in enumerate(ctx.item.gaps):
        if isinstance(gap, ChoiceGap | MultipleResponseGap) and len(gap.options) < 2:
            yield Hit(("gaps", i, "options"),
                      f"gap {gap.id!r} has {len(gap.options)} option; a choice needs two or more")


@rule(
    "ST015", "gap-in-maths-or-code", "error",
    key_risk="Yes: the answer box cannot stand where the gap is written. The QTI export moves it "
             "after the stem, and Moodle puts it inside the formula, which MathJax then cannot "
             "typeset, or inside the code.",
    fix="Write the gap outside the formula or the code: close the maths before `[[id]]` and "
    "open it again after it, or end the code span there.",
    items=(Cloze,),
)
def gap_in_maths_or_code(ctx: ItemContext[Cloze]) -> Iterator[Hit]:
    """## What it does
    Finds a cloze gap (`[[id]]`) written inside a formula or inside code in a stem.

    ## Why is this bad?
    A formula is typeset as a whole and code is shown as written: neither can hold an answer
    box. QTI 2.1 cannot place an interaction inside MathML, so the export puts the gap after
    the stem, away from its sentence. Moodle replaces the gap with an input box inside the
    formula's delimiters, and MathJax then fails on the formula.

    ## Example
    ```yaml
    stem: "The standard error is \\(\\sigma / [[root]]\\)."
    ```

    ## Use instead
    ```yaml
    stem: "The standard error is \\(\\sigma\\) divided by [[root]]."
    ```
    """
    for lang, content in ctx.item.text.items():
        stem = content.stem
        inside = {gid: "a formula" for m in find_maths(stem)
                  for gid in gap_refs(stem[m.start:m.end])}
        for tok in parser().parse(stem):
            spans = [tok] if tok.type in ("fence", "code_block") else [
                c for c in tok.children or () if c.type == "code_inline"]
            for span in spans:
                for gid in gap_refs(span.content):
                    inside.setdefault(gid, "code")
        for gid, where in sorted(inside.items()):
            yield Hit(("text", lang, "stem"),
                      f"gap {gid!r} is written inside {where}, where no answer box can stand")
