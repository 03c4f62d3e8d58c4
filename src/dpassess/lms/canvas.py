"""What Canvas's QTI importer reads from a QTI 2.1 package, and so how the QTI export is shaped.

Each fact is taken from Canvas's own importer (canvas-lms, `gems/plugins/qti_exporter/lib/qti/`:
`converter.rb`, `assessment_item_converter.rb`, `choice_interaction.rb`,
`assessment_test_converter.rb`); the reason is beside it.
"""

from __future__ import annotations

from collections.abc import Sequence

from lxml import etree

#: `Qti::Converter.is_qti_2` takes a package for QTI 2 when the manifest declares one of the QTI 2
#: namespaces (or its metadata schema says QTIv2.x); otherwise Canvas runs its QTI 1.2 converter,
#: which finds no questions in a QTI 2 package. So the manifest root declares this namespace
#: (prefix `imsqti`) although no manifest element uses it.
QTI2_NAMESPACE_PREFIX = "imsqti"

#: `AssessmentItemConverter#get_feedback` files a modalFeedback whose identifier matches
#: `/general_|_all/i` as the question's general ("neutral") comments, after testing for
#: `/wrong|incorrect|_IC$/i`, `/correct|_C$/i` and `/solution/i`, which this one matches none of.
GENERAL_FEEDBACK_ID = "general_feedback"


def answer_feedback_id(n: int) -> str:
    """The modalFeedback identifier of the `n`-th option's feedback (1-based): `FB<n>` matches
    none of `get_feedback`'s patterns, so Canvas does not take it for the question's feedback;
    `attach_feedback_values` gives it to the answer whose response condition adds it to
    FEEDBACK (`get_feedback_id`: `setOutcomeValue FEEDBACK` over `variable FEEDBACK` and a
    `baseValue` identifier)."""
    return f"FB{n}"


def keeps_part_of_answer_feedback(feedback: etree._Element) -> bool:
    """Whether Canvas keeps only part of the answer feedback held in `feedback` (the div inside
    a modalFeedback): `attach_feedback_values` reads the first `<p>` inside the modalFeedback
    (`feedback.at_css('p') || feedback.at_css('div')`), so a feedback with a paragraph and
    anything more loses the rest."""
    children = len(feedback)
    if children == 0:  # text only: no paragraph
        return False
    if children == 1 and etree.QName(feedback[0]).localname == "p":
        return bool((feedback[0].tail or "").strip() or (feedback.text or "").strip())
    return next(feedback.iter("{*}p"), None) is not None


#: `AssessmentTestConverter#process_section` turns a section with `visible="true"` and a title
#: into an extra text-only question holding the title; the test's one section is not visible.
SECTION_VISIBLE = "false"

#: `process_question` takes a quiz question's points from the value of the first `weight` of its
#: `assessmentItemRef` (`get_node_att(item_ref, "weight", "value")`); the test's outcome
#: processing uses no weights, so other systems score by SCORE alone.
POINTS_WEIGHT_ID = "points"


#: The class of the block that holds a shared stimulus in each item of its set. QTI 2.1 has no
#: shared stimulus (assessmentStimulus came with QTI 2.2), so the block is repeated in each item;
#: Canvas's `create_instructure_question` reads every `itemBody > div` into the question text,
#: so the stimulus shows above the stem there too.
STIMULUS_CLASS = "stimulus"

#: Longest question text Canvas's importer keeps (characters of HTML as written, entities
#: counted as written): a longer one is replaced by "The imported question text for this
#: question was too long." (16,384 kept, 16,385 replaced). Lint and the QTI export share it.
QUESTION_TEXT_LIMIT = 16_384

#: The class Canvas's importer does not see through: `HtmlHelper#sanitize_html!` unwraps a lone
#: `p`, `div` or `span` without attributes (or with a known meta class, `FORMATTED_TEXT_BLOCK`
#: or `flow_1`), and `detect_html` keeps a feedback as HTML only if what is left is more than
#: one text node; otherwise it stores the *escaped* text as plain text (`Fish &amp; chips`).
KEEP_HTML_CLASS = "feedback"

def keep_as_html(feedback: etree._Element) -> None:
    """Make Canvas keep the feedback held in `feedback` (the div inside a modalFeedback) as
    HTML when it is one paragraph of plain text that Canvas would store escaped (it has `&`,
    `<`, `>` or a no-break space): its text goes into `<span class="feedback">` inside the
    paragraph, which `sanitize_html!` does not unwrap."""
    if len(feedback) != 1 or (feedback.text or "").strip():
        return
    para = feedback[0]
    text = para.text
    if (len(para) or not text or para.tag != _P or (para.tail or "").strip()
            or not ("&" in text or "<" in text or ">" in text or "\xa0" in text)):
        return
    span = etree.SubElement(para, _SPAN, {"class": KEEP_HTML_CLASS})
    span.text, para.text = text, None


_P = "{http://www.imsglobal.org/xsd/imsqti_v2p1}p"
_SPAN = "{http://www.imsglobal.org/xsd/imsqti_v2p1}span"

#: How Canvas picks the converter of an item (`AssessmentItemConverter.create_instructure_question`):
#: from an `interactionType` in the resource's metadata that it finds only in the manifest's
#: default namespace or a QTI *item* namespace (`imsqti_v2p1`), never in the QTI metadata
#: namespace a valid manifest uses (so the export writes none), else by
#: `QuestionTypeEducatedGuesser` from the item: these interactions, in this order. An
#: `orderInteraction` is not among them: Canvas imports an ordering item as an error question.
INTERACTION_TYPES = {
    "choiceInteraction": "multiple_choice_question / multiple_answers_question",
    "associateInteraction": "matching_question",
    "extendedTextInteraction": "essay_question",
    "textEntryInteraction": "fill_in_multiple_blanks_question (the correctResponse value)",
    "matchInteraction": "matching_question",
}


# --- what Canvas's quizzes cannot carry: one wording for the export warnings and lint (LM008) ---

#: Canvas's QTI 2.1 importer knows no `orderInteraction` (`INTERACTION_TYPES`): the question is
#: imported as an "Error" question students cannot answer, which still counts its points. The
#: manifest's `interactionType` hint would make it a matching question, but the hint is not valid
#: in the content-package profile and is lost by the QTI 3.0 upgrade, so the QTI export warns.
ORDERING_IN_QTI21 = ("Canvas imports an ordering question in a QTI 2.1 package as an error "
                     "question students cannot answer; for Canvas, export with -f canvas "
                     "(ordering becomes a matching question Canvas grades)")

#: Classic Quizzes have no ordering question: the canvas export writes a matching question that
#: pairs each option with its position (1st, 2nd, ...), which Canvas grades pair by pair.
ORDERING_AS_MATCHING = ("Canvas quizzes have no ordering question: written as a matching "
                        "question pairing each option with its position, graded pair by pair "
                        "(the ordering's own grading is not carried)")

#: `Quizzes::QuizQuestion::NumericalQuestion` compares the number alone: no units.
UNITS_NOT_GRADED = ("Canvas's numerical question has no units: the number alone is graded "
                    "(units and unit_penalty are not carried; say the unit in the stem)")

#: Canvas's numerical and short-answer questions give full points for every answer they
#: accept (the importer sets each answer's weight to 100): an answer worth part of the points,
#: or none (kept for its feedback), cannot be carried without becoming fully right.
def partial_answer_left_out(answer_id: str, fraction: float) -> str:
    return (f"Canvas gives full points for every answer it accepts: answer {answer_id!r} "
            f"({fraction:.0%} of the points) is left out")


#: `Quizzes::QuizQuestion::ShortAnswerQuestion` compares whole wordings, stripped and
#: lower-cased: no wildcard, and never case-sensitive.
def wildcard_left_out(wording: str) -> str:
    return (f"Canvas's short answer has no wildcard: the wording {wording!r} (with '*') is "
            "left out")


CASE_NOT_CARRIED = ("Canvas's short answer ignores case: case_sensitive is not carried "
                    "(any capitalisation is accepted)")


# --- cloze and description: Canvas's blanks questions ---------------------------------------------

#: Canvas has two questions with blanks (`[blank]` in the question text): fill in multiple
#: blanks (every blank typed, graded like a short answer) and multiple drop-downs (every blank
#: a menu with one right option). A cloze whose gaps are not all of one of these kinds cannot be
#: said as one Canvas question that grades, so the export leaves it out.
def cloze_left_out(kinds: Sequence[str]) -> str:
    return ("Canvas's blanks questions take either typed blanks (short answer gaps) or "
            "drop-downs (choice gaps), not both nor numbers or check boxes: this cloze (gaps: "
            f"{', '.join(kinds)}) is not exported; split it into items Canvas has, or make its "
            "gaps all short answer or all choice")


#: Canvas splits a blanks question's points equally over its blanks.
CLOZE_POINTS_EQUAL = ("Canvas shares a blanks question's points equally over its blanks: the "
                      "gaps' own points are not carried (give the gaps equal points to match)")


def cloze_kind(kinds: Sequence[str]) -> str | None:
    """The Canvas question a cloze with gaps of these kinds becomes, or None."""
    if kinds and all(k == "short_answer" for k in kinds):
        return "fill_in_multiple_blanks_question"
    if kinds and all(k == "choice" for k in kinds):
        return "multiple_dropdowns_question"
    return None


#: Canvas's importer reads no feedback of a blank's answers (`FillInTheBlank#process_canvas`
#: gives them none): only the question's own comments (the explanation) arrive.
GAP_FEEDBACK_NOT_CARRIED = ("Canvas's blanks questions keep no feedback per answer: the gaps' "
                            "feedback is not carried (say it in the explanation, which Canvas "
                            "shows after any answer)")
