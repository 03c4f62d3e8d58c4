"""What Canvas's QTI importer reads from a QTI 2.1 package, and so how the QTI export is shaped.

Each fact is taken from Canvas's own importer (canvas-lms, `gems/plugins/qti_exporter/lib/qti/`:
`converter.rb`, `assessment_item_converter.rb`, `choice_interaction.rb`,
`assessment_test_converter.rb`); the reason is beside it.
"""

from __future__ import annotations

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
