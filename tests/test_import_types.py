"""Numerical, short-answer, matching, essay and ordering questions from GIFT, Moodle XML and
QTI 2.1: hand-written cases in the shapes Moodle's GIFT and Moodle XML documentation show and
its readers (question/format/gift/format.php, question/format/xml/format.php, Moodle 4.5;
qtype_ordering's import_from_xml) accept, each with what Moodle itself makes of it, worked by
hand from that code; and the bad input Moodle imports silently or aborts on."""

from __future__ import annotations

import pytest

from dpassess.importers import gift, moodle_xml, qti21
from dpassess.markup.markdown import to_plain
from dpassess.model import Cloze, ItemType


def read_gift(text: str, lang: str | None = "en"):
    return gift.read(text.encode(), "q.gift", lang)


def one(result):
    assert result.skipped == [], [str(s) for s in result.skipped]
    assert len(result.items) == 1
    return result.items[0]


# --- GIFT ------------------------------------------------------------------------------------


def test_gift_numerical_tolerance_range_and_partial_credit():
    # Moodle's docs: {#1822:5}, {#3.141..3.142}, and several answers with =%50%
    item = one(read_gift("::Born::In which year was the bridge opened?{#\n"
                         "=1932:0#Exactly.\n=%50%1932:2#Close.\n}"))
    assert item.type is ItemType.numerical
    assert [(a.id, a.value, a.tolerance, a.fraction) for a in item.answers] == [
        ("a", 1932, 0, 1), ("b", 1932, 2, 0.5)]
    assert item.text["en"].feedback == {"a": "Exactly.", "b": "Close."}
    item = one(read_gift("Pi to two places?{#3.14..3.15}"))
    assert [(a.value, a.min, a.max) for a in item.answers] == [(None, 3.14, 3.15)]
    assert item.answers[0].accepts(3.145) and not item.answers[0].accepts(3.16)


def test_gift_numerical_feedback_for_any_other_number_is_kept():
    result = read_gift("Q{#=2 ~#Count again.}")
    item = one(result)
    assert [(a.value, a.fraction, a.any_other) for a in item.answers] == [
        (2, 1, False), (None, 0, True)]
    assert item.text["en"].feedback == {"b": "Count again."}
    assert result.warnings == []


def test_gift_short_answer_wordings_weights_and_feedback():
    # Moodle's docs: {=Grant =Ulysses S. Grant =Ulysses Grant}; =%50% for a partly right one
    item = one(read_gift("::Capital::The capital of Indonesia is {=Jakarta =DKI Jakarta "
                         "=%50%Batavia#That was its old name.}."))
    # missing-word format (text after the answers): a cloze item of one gap where they were
    assert isinstance(item, Cloze)
    (gap,) = item.gaps
    assert gap.type == "short_answer" and not gap.case_sensitive
    assert [(a.id, a.fraction) for a in gap.answers] == [("a", 1), ("b", 0.5)]
    assert item.text["en"].gaps["g1"].answers == {"a": ("Jakarta", "DKI Jakarta"),
                                                  "b": ("Batavia",)}
    assert item.text["en"].gaps["g1"].feedback == {"b": "That was its old name."}
    assert item.text["en"].stem == "The capital of Indonesia is [[g1]]."


def test_gift_answers_last_stay_a_short_answer_and_a_description_is_read():
    item = one(read_gift("::Capital::The capital of Indonesia is?{=Jakarta}"))
    assert item.type is ItemType.short_answer
    item = one(read_gift("::Intro::Read the **next** three questions together."))
    assert item.type is ItemType.description and item.text["en"].title == "Intro"


def test_gift_matching_with_a_distractor():
    # Moodle's docs: {=Canada -> Ottawa =Italy -> Rome ...}; an empty premise is a distractor
    item = one(read_gift("Match each island with its province.{\n=Bali -> Bali\n"
                         "=Lombok -> NTB\n=Flores -> NTT\n= -> Maluku\n}"))
    assert item.type is ItemType.matching and item.shuffle
    assert (item.pairs, item.distractors) == (("a", "b", "c"), ("d",))
    assert item.text["en"].premises == {"a": "Bali", "b": "Lombok", "c": "Flores"}
    assert item.text["en"].responses == {"a": "Bali", "b": "NTB", "c": "NTT", "d": "Maluku"}


def test_gift_matching_responses_are_the_text_moodles_menu_shows():
    # qtype_match_renderer::format_choices shows a response through format_string, which reads
    # it as HTML: `&lt;` shows as `<`, a tag is stripped, `&amp;lt;` shows as `&lt;` (dpassess's
    # export writes `<` as `&lt;`; read as literal text, `4 < 5` came back as `4 &lt; 5`)
    item = one(read_gift("Match.{\n=Less -> 4 &lt; 5 &amp; 6 &gt; 3\n=Bold -> <b>Jakarta</b>\n"
                         "= -> x &amp;lt; y\n}"))
    assert item.text["en"].responses == {"a": "4 < 5 & 6 > 3", "b": "Jakarta",
                                         "c": "x \\&lt\\; y"}
    assert to_plain(item.text["en"].responses["c"]) == "x &lt; y"


def test_gift_essay_takes_moodles_defaults():
    item = one(read_gift("::Bio::Write a short biography of Kartini.{}"))
    assert item.type is ItemType.essay
    assert (item.response_format, item.response_required, item.lines) == ("editor", True, 15)


@pytest.mark.parametrize(("text", "reason"), [
    # Moodle 4.5 imports a non-number as '*' (any response fully right): refused here
    ("Q{#=eight}", "answer 1: 'eight' is not a number (Moodle 4.5 would import it as 'any "
                   "answer is right')"),
    ("Q{#=1:x}", "answer 1 tolerance: 'x' is not a number"),
    ("Q{#1:-0.5}", "answer 1: tolerance -0.5 is below 0"),
    ("Q{#}", "a numerical question needs at least one answer"),
    # Moodle aborts the whole import at a short answer with no 100% answer
    ("Q{=%50%Paris =%20%Lyon}", "no answer is worth 100%"),
    ("Q{=Bali -> Bali}", "a matching question needs at least two pairs"),
    ("Q{=Bali -> Bali =-> NTB}", "at least two pairs (this one has 1)"),
])
def test_gift_bad_input_is_refused_naming_question_and_line(text, reason):
    result = read_gift("// first\n\n::Named::" + text)
    assert result.items == []
    [skip] = result.skipped
    assert (skip.path, skip.line, skip.item, skip.code) == ("q.gift", 3, "Named", "gift")
    assert reason in skip.message


def test_duplicate_short_answers_keep_moodles_grading():
    """Moodle grades a response by the first answer it matches (case-folded without usecase):
    a repeat can never be reached, so it is left out with a warning; the grades stay."""
    result = read_gift("::Dup::Q{=Jakarta =%50%jakarta =Batavia}")
    item = one(result)
    # what is left is two right wordings in a row: one answer
    assert item.text["en"].answers == {"a": ("Jakarta", "Batavia")}
    assert [a.fraction for a in item.answers] == [1]
    assert [(w.line, w.item, w.message) for w in result.warnings] == [
        (1, "Dup", "answer 2 ('jakarta') repeats answer 1; left out (Moodle grades a response "
                   "by the first answer it matches)")]


def test_off_list_grades_are_warned_and_weights_stay_readable():
    result = read_gift("::W::Q{~%33.33333%a ~%33.33333%b ~%33.33333%c ~%-100%d}")
    item = one(result)
    assert item.weights is None or item.weights["a"] == 0.3333333
    assert result.warnings == []
    result = read_gift("::W::Q{~%33%a ~%33%b ~%34%c ~%-100%d}")
    item = one(result)
    assert item.weights == {"a": 0.33, "b": 0.33, "c": 0.34, "d": -1.0}
    assert [w.message for w in result.warnings] == [
        "answer 1: grade 33% is not one Moodle accepts (Moodle refuses the whole file; the "
        "nearest is 33.33333%); kept as it is",
        "answer 2: grade 33% is not one Moodle accepts (Moodle refuses the whole file; the "
        "nearest is 33.33333%); kept as it is",
        "answer 3: grade 34% is not one Moodle accepts (Moodle refuses the whole file; the "
        "nearest is 33.33333%); kept as it is"]


# --- Moodle XML -----------------------------------------------------------------------------


def quiz(*questions: str) -> bytes:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<quiz>\n' + "\n".join(questions)
            + "\n</quiz>\n").encode()


def question(qtype: str, name: str, body: str, text: str = "Q?") -> str:
    return (f'<question type="{qtype}"><name><text>{name}</text></name>'
            f'<questiontext format="html"><text><![CDATA[<p>{text}</p>]]></text>'
            f"</questiontext>{body}</question>")


def read_xml(*questions: str):
    return moodle_xml.read(quiz(*questions), "q.xml", "en")


def test_moodle_xml_numerical_with_units():
    result = read_xml(question("numerical", "Speed", """
      <defaultgrade>2</defaultgrade><penalty>0.1</penalty>
      <answer fraction="100"><text>12.5</text><tolerance>0.05</tolerance>
        <feedback format="html"><text>Right.</text></feedback></answer>
      <answer fraction="50"><text>45</text><tolerance>0</tolerance>
        <feedback format="html"><text>That is km/h.</text></feedback></answer>
      <answer fraction="0"><text>*</text><tolerance>0</tolerance>
        <feedback format="html"><text></text></feedback></answer>
      <units><unit><multiplier>1</multiplier><unit_name>m/s</unit_name></unit>
        <unit><multiplier>3.6</multiplier><unit_name>km/h</unit_name></unit></units>
      <unitgradingtype>2</unitgradingtype><unitpenalty>0.2</unitpenalty>
      <showunits>0</showunits><unitsleft>0</unitsleft>""", "How fast?"))
    item = one(result)
    assert item.points == 2
    assert [(a.value, a.tolerance, a.fraction) for a in item.answers] == [
        (12.5, 0.05, 1), (45, 0, 0.5)]
    assert [(u.unit, u.multiplier) for u in item.units] == [("m/s", 1), ("km/h", 3.6)]
    assert item.unit_penalty == 0.2
    assert item.text["en"].feedback == {"a": "Right.", "b": "That is km/h."}
    assert item.lms is not None and item.lms.moodle is not None
    assert item.lms.moodle.penalty == 0.1
    assert result.warnings == []  # the '*' answer has no feedback: nothing is lost


def test_moodle_xml_units_not_graded():
    item = one(read_xml(question("numerical", "N", """
      <answer fraction="100"><text>3</text><tolerance>0</tolerance></answer>
      <units><unit><multiplier>1</multiplier><unit_name>m</unit_name></unit></units>
      <unitgradingtype>0</unitgradingtype><unitpenalty>0.1</unitpenalty>""")))
    assert [u.unit for u in item.units] == ["m"] and item.unit_penalty is None


def test_moodle_xml_short_answer_case_sensitive():
    item = one(read_xml(question("shortanswer", "Symbol", """
      <usecase>1</usecase>
      <answer fraction="100" format="moodle_auto_format"><text>Fe</text>
        <feedback format="html"><text><![CDATA[<p>Yes: <em>ferrum</em>.</p>]]></text></feedback>
      </answer>
      <answer fraction="0" format="moodle_auto_format"><text>fe</text>
        <feedback format="html"><text>Capital F.</text></feedback></answer>""")))
    assert item.case_sensitive
    assert [(a.id, a.fraction) for a in item.answers] == [("a", 1), ("b", 0)]
    assert item.text["en"].answers == {"a": ("Fe",), "b": ("fe",)}
    assert item.text["en"].feedback == {"a": "Yes: *ferrum*.", "b": "Capital F."}


def test_moodle_xml_short_answer_without_a_right_answer_is_refused():
    result = read_xml(question("shortanswer", "None right", """
      <answer fraction="50"><text>half</text></answer>"""))
    assert result.items == [] and "no answer is worth 100%" in result.skipped[0].message
    assert result.skipped[0].line == 3 and result.skipped[0].item == "None right"


def test_moodle_xml_matching_with_a_distractor_and_no_shuffle():
    item = one(read_xml(question("matching", "Capitals", """
      <shuffleanswers>false</shuffleanswers>
      <subquestion format="html"><text><![CDATA[<p>Aceh</p>]]></text>
        <answer><text>Banda Aceh</text></answer></subquestion>
      <subquestion format="html"><text><![CDATA[<p>Bali</p>]]></text>
        <answer><text>Denpasar</text></answer></subquestion>
      <subquestion format="html"><text></text><answer><text>Kupang &amp; co</text></answer>
      </subquestion>""")))
    assert not item.shuffle and item.pairs == ("a", "b") and item.distractors == ("c",)
    assert item.text["en"].premises == {"a": "Aceh", "b": "Bali"}
    assert item.text["en"].responses == {"a": "Banda Aceh", "b": "Denpasar", "c": "Kupang & co"}


def test_moodle_xml_essay_settings_grader_info_and_template():
    item = one(read_xml(question("essay", "Essay", """
      <responseformat>monospaced</responseformat><responserequired>0</responserequired>
      <responsefieldlines>10</responsefieldlines><minwordlimit>50</minwordlimit>
      <maxwordlimit>200</maxwordlimit><attachments>0</attachments>
      <graderinfo format="html"><text><![CDATA[<p>Two points for <strong>each</strong> reason.</p>]]>
      </text></graderinfo>
      <responsetemplate format="html"><text>def f():</text></responsetemplate>""")))
    assert (item.response_format, item.response_required, item.lines) == ("monospaced", False,
                                                                           10)
    assert (item.min_words, item.max_words) == (50, 200)
    assert item.text["en"].grader_info == "Two points for **each** reason."
    assert item.text["en"].response_template == "def f():"


def test_moodle_xml_matching_responses_are_the_text_moodles_menu_shows():
    # the answer's text, once XML is decoded, goes through format_string as HTML (see the GIFT
    # case); Moodle's own export writes `4 &lt; 5` as `4 &amp;lt; 5` in XML, as dpassess does
    item = one(read_xml(question("matching", "Signs", """
      <subquestion format="html"><text>Less</text>
        <answer><text>4 &amp;lt; 5 &amp;amp; 6</text></answer></subquestion>
      <subquestion format="html"><text>Bold</text>
        <answer><text><![CDATA[<b>Jakarta</b>]]></text></answer></subquestion>""")))
    assert item.text["en"].responses == {"a": "4 < 5 & 6", "b": "Jakarta"}


@pytest.mark.parametrize("fmt", ["plain", "html", "plain_text"])
def test_moodle_xml_plain_essay_template_is_the_text_as_written(fmt):
    # qtype_essay_format_plain_renderer fills the box with `s($template)`, whatever the
    # template's format: Markdown and HTML characters are the text (dpassess wrote
    # format="plain", which Moodle reads as HTML; `>` came back empty)
    item = one(read_xml(question("essay", "Essay", f"""
      <responseformat>plain</responseformat>
      <responsetemplate format="{fmt}"><text><![CDATA[> *a* `b` &amp; <c>]]></text>
      </responsetemplate>""")))
    assert item.text["en"].response_template == "> *a* `b` &amp; <c>"


def test_moodle_xml_ordering():
    result = read_xml(question("ordering", "Order", """
      <layouttype>VERTICAL</layouttype><selecttype>ALL</selecttype><selectcount>0</selectcount>
      <gradingtype>ABSOLUTE_POSITION</gradingtype><showgrading>SHOW</showgrading>
      <answer fraction="1" format="html"><text><![CDATA[<p>Subuh</p>]]></text></answer>
      <answer fraction="2" format="html"><text>Zuhur</text></answer>
      <answer fraction="3" format="html"><text>Asar</text></answer>"""))
    item = one(result)
    assert item.type is ItemType.ordering and item.grading == "absolute_position"
    assert item.options == ("a", "b", "c")
    assert item.text["en"].options == {"a": "Subuh", "b": "Zuhur", "c": "Asar"}
    assert result.warnings == []
    subset = read_xml(question("ordering", "Order", """
      <selecttype>RANDOM</selecttype><selectcount>2</selectcount>
      <answer fraction="1"><text>a</text></answer><answer fraction="2"><text>b</text></answer>
      <answer fraction="3"><text>c</text></answer>"""))
    assert one(subset).grading == "relative_next_exclude_last"  # Moodle's default
    assert [w.message for w in subset.warnings] == [
        "Moodle shows 2 of the 3 items (random); the item shows them all"]


def test_moodle_xml_cloze_refused_as_moodle_refuses_it():
    result = read_xml(question("cloze", "Cloze", "", "A {1:MULTICHOICE:=x} b"))
    assert result.items == []
    assert [s.message for s in result.skipped] == [
        "Invalid embedded answers (Cloze) question (gap 1: Please fill in at least 2 answers.) "
        "(Moodle refuses it too)"]


def test_moodle_xml_penalty_and_numbering_into_lms_moodle():
    def mc(extra: str) -> str:
        return question("multichoice", "MC", extra + """<single>true</single>
          <answer fraction="100"><text>a</text></answer>
          <answer fraction="0"><text>b</text></answer>""")
    plain = one(read_xml(mc("<penalty>0.3333333</penalty><answernumbering>abc</answernumbering>")))
    assert plain.lms is None  # Moodle's defaults: nothing to carry
    item = one(read_xml(mc("<penalty>0.1</penalty><answernumbering>iii</answernumbering>")))
    assert item.lms is not None and item.lms.moodle is not None
    assert (item.lms.moodle.penalty, item.lms.moodle.answer_numbering) == (0.1, "iii")
    old = one(read_xml(mc("<penalty>0.333</penalty>")))  # Moodle's fix for old files' 1/3
    assert old.lms is None


def test_moodle_19_image_is_appended_to_the_question_text():
    """qformat_xml::import_headers: `<image>` + `<image_base64>` become a file of the question
    text, shown at its end (`<img src="@@PLUGINFILE@@/name">`)."""
    png = "iVBORw0KGgo="
    result = read_xml(question("multichoice", "Old", f"""<image>pics/fig 1.png</image>
      <image_base64>{png}</image_base64><single>true</single>
      <answer fraction="100"><text>a</text></answer><answer fraction="0"><text>b</text></answer>
      """, "Look:"))
    item = one(result)
    assert item.text["en"].stem == '<p>Look:</p> <img src="img/old/pics_fig%201.png" />'
    assert result.files == {"img/old/pics_fig 1.png": b"\x89PNG\r\n\x1a\n"}


# --- QTI 2.1 (shapes from other tools, read as far as they go) --------------------------------

QTI = "http://www.imsglobal.org/xsd/imsqti_v2p1"


def qti_item(decl: str, body: str, processing: str = "", title: str = "T") -> bytes:
    return (f'<assessmentItem xmlns="{QTI}" identifier="q1" title="{title}" adaptive="false" '
            f'timeDependent="false" xml:lang="en">{decl}'
            '<outcomeDeclaration identifier="SCORE" cardinality="single" baseType="float"/>'
            f"<itemBody>{body}</itemBody>{processing}</assessmentItem>").encode()


def test_qti_text_entry_float_with_tolerance():
    data = qti_item(
        '<responseDeclaration identifier="R" cardinality="single" baseType="float">'
        "<correctResponse><value>9.81</value></correctResponse></responseDeclaration>",
        '<p>g in m/s2: <textEntryInteraction responseIdentifier="R"/></p>',
        '<responseProcessing><responseCondition><responseIf><equal toleranceMode="absolute" '
        'tolerance="0.01"><variable identifier="R"/><baseValue baseType="float">9.81</baseValue>'
        '</equal><setOutcomeValue identifier="SCORE"><baseValue baseType="float">1</baseValue>'
        "</setOutcomeValue></responseIf></responseCondition></responseProcessing>")
    item = one(qti21.read(data, "q.xml", None))
    assert [(a.value, a.tolerance, a.fraction) for a in item.answers] == [(9.81, 0.01, 1)]
    assert item.text["en"].stem == "g in m/s2:"


def test_qti_text_entry_string_from_the_map_response_template():
    data = qti_item(
        '<responseDeclaration identifier="R" cardinality="single" baseType="string">'
        "<correctResponse><value>Jakarta</value></correctResponse>"
        '<mapping defaultValue="0"><mapEntry mapKey="Jakarta" mappedValue="1" '
        'caseSensitive="false"/><mapEntry mapKey="jkt" mappedValue="0.5" caseSensitive="false"/>'
        "</mapping></responseDeclaration>",
        '<p>Capital? <textEntryInteraction responseIdentifier="R"/></p>',
        '<responseProcessing template="http://www.imsglobal.org/question/qti_v2p1/rptemplates/'
        'map_response"/>')
    item = one(qti21.read(data, "q.xml", None))
    assert not item.case_sensitive
    assert [(a.id, a.fraction) for a in item.answers] == [("a", 1), ("b", 0.5)]
    assert item.text["en"].answers == {"a": ("Jakarta",), "b": ("jkt",)}


def test_qti_match_interaction_directed_pairs():
    data = qti_item(
        '<responseDeclaration identifier="R" cardinality="multiple" baseType="directedPair">'
        "<correctResponse><value>P1 R2</value><value>P2 R1</value></correctResponse>"
        "</responseDeclaration>",
        '<matchInteraction responseIdentifier="R" shuffle="true" maxAssociations="2">'
        "<prompt>Match.</prompt><simpleMatchSet>"
        '<simpleAssociableChoice identifier="P1" matchMax="1">Cat</simpleAssociableChoice>'
        '<simpleAssociableChoice identifier="P2" matchMax="1">Cow</simpleAssociableChoice>'
        "</simpleMatchSet><simpleMatchSet>"
        '<simpleAssociableChoice identifier="R1" matchMax="1">Moo</simpleAssociableChoice>'
        '<simpleAssociableChoice identifier="R2" matchMax="1">Meow</simpleAssociableChoice>'
        '<simpleAssociableChoice identifier="R3" matchMax="1">Oink</simpleAssociableChoice>'
        "</simpleMatchSet></matchInteraction>")
    item = one(qti21.read(data, "q.xml", None))
    assert (item.pairs, item.distractors, item.shuffle) == (("a", "b"), ("c",), True)
    assert item.text["en"].premises == {"a": "Cat", "b": "Cow"}
    assert item.text["en"].responses == {"a": "Meow", "b": "Moo", "c": "Oink"}
    assert item.text["en"].stem == "Match."


def test_qti_extended_text_and_order_interaction():
    essay = one(qti21.read(qti_item(
        '<responseDeclaration identifier="R" cardinality="single" baseType="string"/>',
        '<p>Discuss.</p><extendedTextInteraction responseIdentifier="R" format="plain" '
        'expectedLines="5" placeholderText="Start here"/>'
        '<rubricBlock view="scorer"><p>Look for two causes.</p></rubricBlock>'), "q.xml", None))
    assert (essay.response_format, essay.lines, essay.response_required) == ("plain", 5, False)
    assert essay.text["en"].grader_info == "Look for two causes."
    assert essay.text["en"].response_template == "Start here"
    assert essay.text["en"].stem == "Discuss."
    order = one(qti21.read(qti_item(
        '<responseDeclaration identifier="R" cardinality="ordered" baseType="identifier">'
        "<correctResponse><value>b</value><value>a</value></correctResponse>"
        "</responseDeclaration>",
        '<orderInteraction responseIdentifier="R" shuffle="true">'
        '<simpleChoice identifier="a">Two</simpleChoice>'
        '<simpleChoice identifier="b">One</simpleChoice></orderInteraction>',
        '<responseProcessing template="http://www.imsglobal.org/question/qti_v2p1/rptemplates/'
        'match_correct"/>'), "q.xml", None))
    assert order.options == ("b", "a") and order.grading == "all_or_nothing"
    assert order.text["en"].options == {"b": "One", "a": "Two"}
