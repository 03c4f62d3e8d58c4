"""What a real Moodle 4.5 showed when it saved and graded dpassess's exports, kept as tests over
the ports of Moodle's code in tests/test_export_moodle_oracle.py (CI has no Moodle):

- an ordering question without `<shownumcorrect>` fails when its hints are saved;
- a numerical item whose unit Moodle cannot read (`1`) never got full marks with graded units;
- a GIFT numerical answer split at an `=` in its feedback gave two equal answers;
- single-answer questions with two right answers or partial credit (Moodle's documentation);
- a `multi` file with maths needs the multilang filter above MathJax: said once per file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dpassess.bank.load import load_banks
from dpassess.export import Collection
from dpassess.export.moodle import gift, moodle_xml
from dpassess.importers import gift as gift_import
from dpassess.importers import moodle_xml as xml_import
from dpassess.lms.moodle import reads_unit
from dpassess.model import Numerical, SingleChoice, parse_item
from dpassess.stats.scoring import Response, score
from test_export_moodle_oracle import (
    grade_numerical,
    ordering_save_error,
    read_gift,
    read_xml,
)

ROOT = Path(__file__).resolve().parents[1]
KITCHEN_SINK = ROOT / "tests" / "banks" / "kitchen-sink"
MATHS = ROOT / "tests" / "banks" / "maths"
LANGS = ("id", "en", "multi")


def bank_collection(path: Path) -> Collection:
    return Collection.from_bank(load_banks([path])[0])


@pytest.fixture(scope="module")
def kitchen_sink() -> Collection:
    return bank_collection(KITCHEN_SINK)


# --- ordering: saved with its hints ----------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_ordering_questions_save_their_hints(kitchen_sink, lang):
    """Moodle's own export writes `<shownumcorrect>0</shownumcorrect>`; without it the import
    fills two hints' settings with no hint text, and saving them fails."""
    questions = [q for q in read_xml(moodle_xml.export(kitchen_sink, lang).data)
                 if q.qtype == "ordering"]
    assert questions
    for qo in questions:
        assert qo.shownumcorrect == "0"
        assert ordering_save_error(qo) is None
        assert qo.numberingstyle == "none"


def test_the_ordering_port_fails_as_moodle_did_without_shownumcorrect(kitchen_sink):
    """The port is not blind: the same question without the element fails to save."""
    data = moodle_xml.export(kitchen_sink, "en").data.replace(
        b"<shownumcorrect>0</shownumcorrect>", b"")
    questions = [q for q in read_xml(data) if q.qtype == "ordering"]
    assert questions
    assert all(ordering_save_error(qo) == "hint 0: hintformat NULL" for qo in questions)


# --- numerical units: a bare number in the answers' unit ---------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_a_ratio_with_units_gets_full_marks_as_a_bare_number(kitchen_sink, lang):
    """ks-load-factor: 0.75 ± 0.005 in unit `1`, or `%` (x100), unit penalty 0.1. Moodle reads
    `0.75 1` as 0.751: `1` is no unit it can read, so with graded units even its own right
    answer lost 10%. The units are written optional."""
    [qo] = [q for q in read_xml(moodle_xml.export(kitchen_sink, lang).data)
            if q.idnumber == "ks-load-factor"]
    assert qo.unitgradingtype == 0
    for response, fraction in (("0.75", 1), ("0.751", 1), ("75 %", 1),
                               ("75%", 1), ("75", 0.5), ("0.8", 0)):
        assert grade_numerical(qo, response) == pytest.approx(fraction), response
    item = kitchen_sink.items[[i.id for i in kitchen_sink.items].index("ks-load-factor")]
    assert isinstance(item, Numerical)
    for response in ("0.75", "75 %"):  # the bank's own scoring agrees
        assert score(item, Response(typed=response)) == item.points


def numerical(units: list[dict[str, object]], penalty: float | None) -> Numerical:
    item = parse_item({
        "id": "q1", "type": "numerical", "topic": "t",
        "answers": [{"id": "a", "value": 2}],
        "units": units, "unit_penalty": penalty,
        "text": {"en": {"stem": "How big?"}}})
    assert isinstance(item, Numerical)
    return item


def export_one(item: object, lang: str = "en") -> tuple[bytes, list[str]]:
    c = Collection(id="b", title={"en": "B"}, languages=("en",), items=[item],  # type: ignore[list-item]
                   category="b", default_language="en", stimuli={})
    result = moodle_xml.export(c, lang)
    return result.data, [w.message for w in result.warnings]


def test_readable_units_stay_graded():
    """With a unit Moodle reads (GB), a bare number is a missing unit, as the bank says."""
    data, warnings = export_one(numerical([{"unit": "GB"}, {"unit": "MB", "multiplier": 1000}],
                                          0.1))
    qo = read_xml(data)[-1]
    assert qo.unitgradingtype == 2
    assert grade_numerical(qo, "2 GB") == 1
    assert grade_numerical(qo, "2000MB") == 1
    assert grade_numerical(qo, "2") == pytest.approx(0.9)
    assert not [w for w in warnings if "unit" in w]


def test_an_unreadable_unit_is_warned():
    data, warnings = export_one(numerical([{"unit": "1"}, {"unit": "per 100", "multiplier": 100}],
                                          0.2))
    qo = read_xml(data)[-1]
    assert qo.unitgradingtype == 0
    assert grade_numerical(qo, "2") == 1
    assert any("cannot read '1'" in w and "optional" in w for w in warnings)
    assert any("cannot read 'per 100'" in w for w in warnings)


@pytest.mark.parametrize(("unit", "readable"), [
    ("1", False), ("%", True), ("m", True), ("m/s", True), ("GB", True), ("km h", False),
    ("10^3 m", False), ("°C", True), ("e", True), ("e5", False),
])
def test_which_units_moodle_reads(unit, readable):
    """Hand-worked from apply_units: spaces removed, e-notation read, the number taken first."""
    assert reads_unit(unit) is readable


# --- GIFT import: what Moodle saves ----------------------------------------------------------

GIFT_256 = "::G::Q{#256:0#Right: 32 × 8 = 256.}\n"


def test_gift_numerical_split_at_an_equals_sign_imports():
    """Moodle splits the answers at the unescaped `=` in the feedback: two answers, 256 and
    `256.`, which grade alike; the second is never reached and is left out, warned."""
    [qo] = read_gift(GIFT_256)
    assert (qo.answers, qo.tolerances) == (["256.0", "256.0"], [0, 0])
    result = gift_import.read(GIFT_256.encode(), "t.gift", "en")
    [item] = result.items
    assert not result.skipped
    assert isinstance(item, Numerical)
    assert [(a.value, a.tolerance, a.fraction) for a in item.answers] == [(256, 0, 1)]
    assert item.text["en"].feedback == {"a": "Right: 32 × 8"}
    assert [w.message for w in result.warnings] == [
        "answer 2 accepts the same numbers as answer 1; left out (Moodle grades a response "
        "by the first answer it matches)"]
    assert grade_numerical(qo, "256") == score(item, Response(typed="256")) == 1


# --- single-answer questions with two right answers, or partial credit --------------------------

TWO_EQUALS = "::Two equals::Which of these is a prime number? {=2 =3 ~4 ~6}\n"
SINGLE_WITH_PARTIAL = b"""<?xml version="1.0" encoding="UTF-8"?>
<quiz>
  <question type="multichoice">
    <name><text>Single with partial</text></name>
    <questiontext format="html"><text>Which city is the capital of Australia?</text></questiontext>
    <defaultgrade>1</defaultgrade>
    <single>true</single>
    <answer fraction="100" format="html"><text>Canberra</text>
      <feedback format="html"><text>Right.</text></feedback></answer>
    <answer fraction="50" format="html"><text>Sydney</text>
      <feedback format="html"><text>The largest city.</text></feedback></answer>
    <answer fraction="0" format="html"><text>Perth</text></answer>
  </question>
</quiz>
"""


def reexported(item: SingleChoice) -> tuple[list[float], list[float], int | None]:
    """The item's grades as Moodle reads them back from its Moodle XML and GIFT export, and
    whether the XML question is single-answer."""
    c = Collection(id="b", title={"en": "B"}, languages=("en",), items=[item], category="b",
                   default_language="en", stimuli={})
    xml_q = read_xml(moodle_xml.export(c, "en").data)[-1]
    gift_q = read_gift(gift.export(c, "en").data.decode())[-1]
    assert gift_q.single == 1
    return xml_q.fractions, gift_q.fractions, xml_q.single


def test_two_right_answers_in_a_single_answer_gift_question():
    [original] = read_gift(TWO_EQUALS)
    assert (original.single, original.fractions) == (1, [1, 1, 0, 0])
    result = gift_import.read(TWO_EQUALS.encode(), "t.gift", "en")
    [item] = result.items
    assert isinstance(item, SingleChoice)
    assert (item.key, item.weights) == (("a",), {"b": 1.0})
    assert reexported(item) == ([1, 1, 0, 0], [1, 1, 0, 0], 1)
    for option, points in (("a", 1), ("b", 1), ("c", 0), ("d", 0)):
        assert score(item, Response(chosen=frozenset({option}))) == points


def test_partial_credit_in_a_single_answer_xml_question():
    [original] = read_xml(SINGLE_WITH_PARTIAL)
    assert (original.single, original.fractions) == (1, [1, 0.5, 0])
    result = xml_import.read(SINGLE_WITH_PARTIAL, "t.xml", "en")
    [item] = result.items
    assert isinstance(item, SingleChoice)
    assert (item.key, item.weights) == (("a",), {"b": 0.5})
    assert reexported(item) == ([1, 0.5, 0], [1, 0.5, 0], 1)
    assert score(item, Response(chosen=frozenset({"b"}))) == 0.5


def test_negative_credit_in_a_single_answer_question_is_still_refused():
    data = SINGLE_WITH_PARTIAL.replace(b'fraction="0"', b'fraction="-50"')
    result = xml_import.read(data, "t.xml", "en")
    assert not result.items
    assert "negative credit" in result.skipped[0].message


def test_a_single_choice_weight_names_options_and_leaves_the_key_whole():
    base = {"id": "q1", "topic": "t", "options": ["a", "b"], "key": "a",
            "text": {"en": {"stem": "S", "options": {"a": "A", "b": "B"}}}}
    with pytest.raises(ValueError, match="unknown option 'z'"):
        parse_item({**base, "weights": {"z": 0.5}})
    with pytest.raises(ValueError, match="the key 'a' earns all the points"):
        parse_item({**base, "weights": {"a": 0.5}})


# --- bilingual files with maths: the filter order, said once ------------------------------------


@pytest.mark.parametrize("fmt", [moodle_xml, gift])
def test_multi_files_with_maths_name_the_filter_order_once(fmt):
    maths = bank_collection(MATHS)
    multi = [w.message for w in fmt.export(maths, "multi").warnings
             if "Multi-language content filter" in w.message]
    assert len(multi) == 1
    assert "above MathJax" in multi[0]
    assert not [w for w in fmt.export(maths, "en").warnings
                if "Multi-language content filter" in w.message]


# --- element by element: what Moodle's own export writes for the same questions ---------------

#: Moodle 4.5's own export (qformat_xml::writequestion and each type's export_to_xml) of the
#: kitchen-sink bank's English Moodle XML file after a real Moodle imported it: the canonical
#: form of every question type the bank has.
MOODLE_REEXPORT = ROOT / "tests" / "fixtures" / "moodle" / "reexport" / "kitchen-sink-en.xml"

#: What dpassess writes that Moodle's export leaves out, and why that is the same to Moodle.
WRITTEN_BEYOND_MOODLE = {
    # Moodle writes <instructions> only when the question has an instructions format; its
    # import of an empty one, or of none, gives the same empty HTML text
    "numerical": {"/instructions[@format]", "/instructions[@format]/text"},
}
#: What Moodle's writequestion writes that dpassess does not: a category's `<idnumber>`
#: (empty for a category made on import; qformat_default::create_category_path uses it only
#: when it is not empty, and a bank topic has no id of its own). The harness's re-export holds
#: questions only, so categories are checked against the PHP, here.
MOODLE_CATEGORY = ["category", "info", "idnumber"]
NOT_WRITTEN_CATEGORY = {"idnumber"}


def _element_paths(el, prefix: str = "") -> list[str]:
    """Every descendant element as a path with its attribute names (not their values)."""
    out = []
    for child in el:
        if not isinstance(child.tag, str):
            continue
        path = f"{prefix}/{child.tag}" + "".join(f"[@{a}]" for a in sorted(child.attrib))
        out += [path, *_element_paths(child, path)]
    return out


def _questions(data: bytes) -> dict[str, tuple[str, list[str]]]:
    from lxml import etree

    root = etree.fromstring(data)
    return {(q.findtext("idnumber") or "").strip(): (q.get("type"), _element_paths(q))
            for q in root.iter("question") if q.get("type") != "category"}


def test_every_element_moodle_writes_is_written(kitchen_sink):
    """Per question: the same type name and, element by element (attributes by name, and as
    many of each), what Moodle's own export writes, plus only the documented extras."""
    from collections import Counter

    moodle = _questions(MOODLE_REEXPORT.read_bytes())
    ours = _questions(moodle_xml.export(kitchen_sink, "en").data)
    assert set(ours) == set(moodle)
    assert {t for t, _ in moodle.values()} == {
        "multichoice", "truefalse", "numerical", "shortanswer", "matching", "essay", "ordering",
        "cloze", "description"}
    for idnumber, (qtype, paths) in ours.items():
        mtype, mpaths = moodle[idnumber]
        assert qtype == mtype, idnumber
        missing = Counter(mpaths) - Counter(paths)
        assert not missing, (idnumber, sorted(missing.elements()))
        extra = Counter(paths) - Counter(mpaths)
        assert set(extra) <= WRITTEN_BEYOND_MOODLE.get(qtype, set()), (idnumber, extra)
        # and in Moodle's order
        top = [p for p in paths if p.count("/") == 1 and p not in extra]
        assert top == [p for p in mpaths if p.count("/") == 1], idnumber


def test_categories_carry_what_moodle_writes_but_an_empty_idnumber(kitchen_sink):
    from lxml import etree

    root = etree.fromstring(moodle_xml.export(kitchen_sink, "en").data)
    for q in root.iter("question"):
        if q.get("type") == "category":
            assert [c.tag for c in q] == [t for t in MOODLE_CATEGORY
                                          if t not in NOT_WRITTEN_CATEGORY]


# --- a numerical answer for any other number (Moodle's `*`) -----------------------------------

ANY_OTHER = {
    "id": "q1", "type": "numerical", "topic": "t",
    "answers": [{"id": "a", "value": 2}, {"id": "b", "value": 3, "fraction": 0},
                {"id": "z", "any_other": True}],
    "text": {"en": {"stem": "1 + 1?", "feedback": {"b": "Too many.", "z": "Count again."}}}}


def test_any_other_number_grades_nothing_and_keeps_its_feedback():
    item = parse_item(ANY_OTHER)
    assert isinstance(item, Numerical)
    assert [item.fraction_for(x) for x in (2, 3, 7)] == [1, 0, 0]
    c = Collection(id="b", title={"en": "B"}, languages=("en",), items=[item], category="b",
                   default_language="en", stimuli={})
    xml_q = read_xml(moodle_xml.export(c, "en").data)[-1]
    gift_q = read_gift(gift.export(c, "en").data.decode())[-1]
    for qo in (xml_q, gift_q):  # Moodle's `*` answer, last, worth 0, with the feedback
        assert qo.answers[-1] == "*" and qo.fractions[-1] == 0
        assert "Count again." in qo.feedback[-1]
        assert [grade_numerical(qo, r) for r in ("2", "3", "7")] == [1, 0, 0]


@pytest.mark.parametrize("source", [
    (b"Q{#=2 =%0%3#Too many. ~#Count again.}", "gift"),
    (b"""<quiz><question type="numerical"><name><text>Q</text></name>
      <questiontext format="html"><text>Q</text></questiontext>
      <answer fraction="100"><text>2</text><tolerance>0</tolerance></answer>
      <answer fraction="0"><text>3</text><feedback><text>Too many.</text></feedback></answer>
      <answer fraction="0"><text>*</text><feedback><text>Count again.</text></feedback></answer>
      </question></quiz>""", "xml"),
])
def test_an_any_other_answer_imports_and_exports_as_moodle_saves_it(source):
    data, fmt = source
    result = (gift_import.read(data, "t.gift", "en") if fmt == "gift"
              else xml_import.read(data, "t.xml", "en"))
    [item] = result.items
    assert not result.warnings
    assert isinstance(item, Numerical)
    assert [(a.id, a.fraction, a.any_other) for a in item.answers] == [
        ("a", 1, False), ("b", 0, False), ("c", 0, True)]
    assert item.text["en"].feedback == {"b": "Too many.", "c": "Count again."}
    c = Collection(id="b", title={"en": "B"}, languages=("en",), items=[item], category="b",
                   default_language="en", stimuli={})
    assert read_xml(moodle_xml.export(c, "en").data)[-1].answers == ["2", "3", "*"]


def test_any_other_comes_last_and_earns_nothing():
    with pytest.raises(ValueError, match="comes last"):
        parse_item({**ANY_OTHER, "answers": [{"id": "z", "any_other": True},
                                             {"id": "a", "value": 2}]})
    with pytest.raises(ValueError, match="earns nothing"):
        parse_item({**ANY_OTHER, "answers": [{"id": "a", "value": 2},
                                             {"id": "z", "any_other": True, "fraction": 1}]})
    with pytest.raises(ValueError, match="no value, tolerance or range"):
        parse_item({**ANY_OTHER, "answers": [{"id": "a", "value": 2},
                                             {"id": "z", "any_other": True, "value": 3}]})


def test_single_choice_partial_credit_survives_qti():
    """The QTI export maps each option to its points; the QTI import reads them back as
    weights (true/false items still take no partial credit)."""
    from lxml import etree

    from dpassess.export.qti.items import assessment_item
    from dpassess.importers.qti21 import read as read_qti

    item = parse_item({"id": "q1", "topic": "t", "points": 2, "options": ["a", "b", "c"],
                       "key": "a", "weights": {"b": 0.5},
                       "text": {"en": {"stem": "S", "options": {"a": "A", "b": "B", "c": "C"}}}})
    root, _ = assessment_item(item, "en")
    result = read_qti(etree.tostring(root), "q.xml", "en")
    [back] = result.items
    assert isinstance(back, SingleChoice)
    assert (back.key, back.weights) == (("a",), {"b": 0.5})


def test_an_any_other_answer_survives_qti():
    """The QTI export makes `any_other` the scoring rule's `responseElse` (0 points, its
    feedback); the QTI import reads that branch back as the answer, with its feedback, and
    grades alike (tests/qti_engine.py runs the exported rules)."""
    from lxml import etree

    from dpassess.export.qti.items import assessment_item
    from dpassess.importers.qti21 import read as read_qti

    item = parse_item(ANY_OTHER)
    root, _ = assessment_item(item, "en")
    result = read_qti(etree.tostring(root), "q.xml", "en")
    [back] = result.items
    assert not result.warnings, [w.message for w in result.warnings]
    assert isinstance(back, Numerical)
    assert [(a.value, a.fraction, a.any_other) for a in back.answers] == [
        (2, 1, False), (3, 0, False), (None, 0, True)]
    assert back.text["en"].feedback == {"b": "Too many.", "c": "Count again."}
    for typed in ("2", "3", "7"):
        assert score(back, Response(typed=typed)) == score(item, Response(typed=typed))
    # without feedback, a response else that scores 0 says nothing: no answer is added
    bare = parse_item({**ANY_OTHER, "text": {"en": {"stem": "1 + 1?"}}})
    [plain] = read_qti(etree.tostring(assessment_item(bare, "en")[0]), "q.xml", "en").items
    assert isinstance(plain, Numerical)
    assert [a.any_other for a in plain.answers] == [False, False]
