"""Cloze items (a text with gaps) and description items, checked against outside oracles: Moodle's
own cloze parser (ported in tests/moodle_multianswer.py) and GIFT reader (the port in
test_export_moodle_oracle), the QTI 2.1 XSD and the response-processing engine in tests/, and
hand-worked scores."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from lxml import etree
from pydantic import ValidationError

import moodle_multianswer as multianswer
from dpassess.assemble.forms import FormItem
from dpassess.assemble.keys import answer
from dpassess.bank.load import load_bank
from dpassess.diagnostics import BankLoadError
from dpassess.export import Collection
from dpassess.export.moodle import gift, moodle_xml
from dpassess.export.qti.cloze import response_id
from dpassess.export.qti.items import assessment_item
from dpassess.markup.markdown import to_inline_html
from dpassess.model import Cloze, Description, parse_item
from dpassess.stats.generic import cloze_response
from dpassess.stats.lms import moodle_cloze_response
from dpassess.stats.scoring import Response, gap_fraction, score
from qti_engine import Engine
from strategies import cloze_items
from test_export_moodle_oracle import read_gift, read_xml
from test_export_qti21 import assert_valid

ROOT = Path(__file__).resolve().parent.parent
KS = ROOT / "tests" / "banks" / "kitchen-sink"


def cloze(**over: Any) -> Cloze:
    data: dict[str, Any] = {
        "schema": 1, "id": "c1", "type": "cloze", "topic": "t/a", "points": 4,
        "gaps": [
            {"id": "w", "type": "short_answer", "points": 2,
             "answers": [{"id": "a"}, {"id": "b", "fraction": 0.5}]},
            {"id": "n", "type": "numerical", "answers": [{"id": "x", "value": 2.5,
                                                          "tolerance": 0.1}]},
            {"id": "c", "type": "choice", "options": ["p", "q"], "key": "q"},
        ],
        "text": {"en": {"stem": "Word [[w]], number [[n]], pick [[c]].",
                        "gaps": {"w": {"answers": {"a": ["Paris"], "b": ["paris*"]},
                                       "feedback": {"a": "Yes."}},
                                 "c": {"options": {"p": "P", "q": "Q"}}}}},
    }
    data.update(over)
    item = parse_item(data)
    assert isinstance(item, Cloze)
    return item


def collection(*items: Any) -> Collection:
    return Collection(id="bank", title={"en": "Bank"}, languages=("en",), items=tuple(items),
                      category="bank")


# --- the model ------------------------------------------------------------------------------------


def test_the_stem_names_every_gap_once_in_order():
    with pytest.raises(ValidationError, match="must name each gap once"):
        cloze(text={"en": {"stem": "Only [[w]] and [[c]].", "gaps": {
            "w": {"answers": {"a": ["x"], "b": ["y"]}}, "c": {"options": {"p": "P", "q": "Q"}}}}})


def test_a_gap_needs_a_right_answer_and_its_key_an_option():
    with pytest.raises(ValidationError, match="no answer earns full marks"):
        cloze(gaps=[{"id": "w", "type": "short_answer", "answers": [{"id": "a",
                                                                       "fraction": 0.5}]}],
              text={"en": {"stem": "[[w]]", "gaps": {"w": {"answers": {"a": ["x"]}}}}})
    with pytest.raises(ValidationError, match="names no option"):
        cloze(gaps=[{"id": "c", "type": "choice", "options": ["p", "q"], "key": "z"}],
              text={"en": {"stem": "[[c]]", "gaps": {"c": {"options": {"p": "P", "q": "Q"}}}}})


def test_a_bad_gap_field_is_reported_at_its_line_and_column(tmp_path: Path):
    bank = tmp_path / "b"
    bank.mkdir()
    (bank / "bank.yaml").write_text("schema: 1\nid: bb\ntitle: {en: B}\nlanguages: [en]\n"
                                     "default_language: en\n")
    (bank / "c.yaml").write_text(
        "schema: 1\nid: c1\ntype: cloze\ntopic: t/a\ngaps:\n"
        "  - id: n\n    type: numerical\n    answers:\n      - {id: x, value: many}\n"
        "text:\n  en:\n    stem: '[[n]]'\n")
    with pytest.raises(BankLoadError) as caught:
        load_bank(bank)
    where = [(d.line, d.field) for d in caught.value.diagnostics]
    assert any(line == 9 and field == "gaps[0].answers[0].value" for line, field in where), where


# --- Moodle XML: read back by Moodle's own cloze parser ----------------------------------------


def moodle_questions(item: Any, lang: str = "en") -> list[Any]:
    result = moodle_xml.export(collection(item) if not isinstance(item, Collection) else item,
                               lang)
    return [q for q in read_xml(result.data) if q.qtype != "category"]


def test_moodle_reads_each_gap_with_its_answers_fractions_tolerances_and_feedback():
    item = cloze()
    (q,) = moodle_questions(item)
    assert q.qtype == "cloze"
    parsed = multianswer.extract(q.questiontext)
    assert multianswer.validate(parsed) == []
    assert parsed.questiontext == "<p>Word {#1}, number {#2}, pick {#3}.</p>"
    w, n, c = parsed.subs
    assert (w.qtype, w.defaultmark, w.usecase) == ("shortanswer", 2, 0)
    assert (w.answers, w.fractions, w.feedback) == (["Paris", "paris*"], [1, 0.5], ["Yes.", ""])
    assert (n.qtype, n.answers, n.tolerance, n.fractions) == ("numerical", ["2.5"], [0.1], [1])
    assert (c.qtype, c.single, c.layout, c.answers, c.fractions) == (
        "multichoice", 1, "dropdown", ["P", "Q"], [0, 1])
    assert parsed.defaultmark == 4  # Moodle: the sum of the gaps' weights


def test_multiple_response_gap_keeps_the_banks_fractions():
    item = cloze(gaps=[{"id": "m", "type": "multiple_response", "display": "horizontal",
                        "options": ["a", "b", "c", "d"], "key": ["a", "b", "c"]}],
                 points=1, text={"en": {"stem": "[[m]]", "gaps": {"m": {"options": {
                     "a": "A", "b": "B", "c": "C", "d": "D"}}}}})
    (q,) = moodle_questions(item)
    (sub,) = multianswer.extract(q.questiontext).subs
    assert (sub.single, sub.layout) == (0, "horizontal")
    expected = list(item.gaps[0].fractions().values())  # type: ignore[union-attr]
    assert sub.fractions == pytest.approx(expected, abs=1e-6)


#: Characters Moodle's embedded-answer syntax reads as its own, and HTML's.
HOSTILE = st.lists(st.sampled_from([*"ab }{#~/\"\\=%:&<>;1", "&amp;", "{1:SA:", "\\}", "&#"]),
                   min_size=1, max_size=12).map("".join).map(str.strip).filter(bool)


@given(wording=HOSTILE, option=HOSTILE, feedback=HOSTILE, prose=HOSTILE)
@example(wording="a&", option="b", feedback="c", prose="{#1} {1:SA:=x}")  # `&amp;#`: no end
@example(wording="a", option="</ b", feedback="&lt;i&gt;", prose="c")  # HTML `&lt;`: not a `<`
def test_hostile_gap_text_reaches_moodle_as_written(wording: str, option: str, feedback: str,
                                                    prose: str):
    data = {"schema": 1, "id": "c1", "type": "cloze", "topic": "t/a",
            "gaps": [{"id": "w", "type": "short_answer", "answers": [{"id": "a"}]},
                     {"id": "c", "type": "choice", "options": ["p", "q"], "key": "p"}],
            "text": {"en": {"stem": f"x [[w]] y [[c]] {prose.replace('[', '(')}",
                            "gaps": {"w": {"answers": {"a": [wording]},
                                           "feedback": {"a": feedback}},
                                     "c": {"options": {"p": option, "q": "other"}}}}}}
    item = parse_item(data)
    result = moodle_xml.export(collection(item), "en")
    (q,) = [q for q in read_xml(result.data) if q.qtype != "category"]
    parsed = multianswer.extract(q.questiontext)
    assert len(parsed.subs) == 2  # the prose around the gaps opens none
    assert multianswer.validate(parsed) == []
    w, c = parsed.subs

    def moodle(text: str) -> str:  # what Moodle's parser does to any text, however escaped
        return text.replace("\\}", "}").replace("\\#", "#")

    # a wording is plain text; Moodle keeps a choice and a feedback as HTML, as decoded
    warned = any("turns \\} into }" in d.message for d in result.warnings)
    assert w.answers == [moodle(wording)]
    assert w.feedback == [moodle(to_inline_html(feedback))]
    assert c.answers[0] == moodle(to_inline_html(option))
    assert warned == any(moodle(t) != t for t in (
        wording, to_inline_html(feedback), to_inline_html(option)))


def test_every_language_in_a_multi_file_warns_and_writes_the_first():
    item = cloze(text={la: cloze().text["en"].model_dump() for la in ("en", "id")})
    coll = Collection(id="bank", title={"en": "B", "id": "B"}, languages=("en", "id"),
                      items=(item,), category="bank")
    result = moodle_xml.export(coll, "multi")
    assert any("one text with its gaps" in d.message for d in result.warnings)
    (q,) = [q for q in read_xml(result.data) if q.qtype != "category"]
    assert len(multianswer.extract(q.questiontext).subs) == 3


def test_description_is_moodles_description():
    item = parse_item({"schema": 1, "id": "d1", "type": "description", "topic": "t/a",
                       "text": {"en": {"stem": "Read **this** first."}}})
    assert isinstance(item, Description)
    (q,) = moodle_questions(item)
    assert (q.qtype, q.defaultmark) == ("description", 0)
    assert "<strong>this</strong>" in q.questiontext
    (g,) = [q for q in read_gift(gift.export(collection(item), "en").data.decode())
            if q.qtype != "category"]
    assert (g.qtype, g.idnumber) == ("description", "d1")
    assert score(item, Response(typed="x")) == 0


# --- GIFT ---------------------------------------------------------------------------------------


def test_gift_writes_one_gap_as_missing_word_and_leaves_out_more_with_a_warning_each():
    one = cloze(id="one", gaps=[{"id": "c", "type": "choice", "options": ["p", "q"], "key": "q"}],
                text={"en": {"stem": "Before [[c]] after.",
                             "gaps": {"c": {"options": {"p": "P", "q": "Q"}}}}})
    many = cloze(id="many")
    other = cloze(id="many2")
    result = gift.export(collection(one, many, other), "en")
    questions = [q for q in read_gift(result.data.decode()) if q.qtype != "category"]
    assert [q.idnumber for q in questions] == ["one"]
    (q,) = questions
    assert q.qtype == "multichoice" and q.fractions == [0, 1]
    assert q.questiontext == "<p>Before _____ after.</p>"
    left_out = [d for d in result.warnings if "one gap only" in d.message]
    assert [d.item for d in left_out] == ["many", "many2"]  # each at its item


# --- QTI 2.1 --------------------------------------------------------------------------------------


def key_responses(item: Cloze) -> dict[str, Any]:
    lang = "en"
    out: dict[str, Any] = {}
    for g in item.gaps:
        match g.type:
            case "short_answer":
                out[response_id(g.id)] = item.text[lang].gaps[g.id].answers[g.answers[0].id][0]
            case "numerical":
                lo, hi = g.answers[0].bounds
                out[response_id(g.id)] = (lo + hi) / 2
            case "choice":
                out[response_id(g.id)] = g.key
            case "multiple_response":
                out[response_id(g.id)] = list(g.key)
    return out


WRONG = {"short_answer": "zzz", "numerical": -999.0, "choice": "p", "multiple_response": ["d"]}


def qti_cloze() -> Cloze:
    return cloze(gaps=[
        {"id": "w", "type": "short_answer", "points": 2, "answers": [{"id": "a"}]},
        {"id": "n", "type": "numerical", "points": 3,
         "answers": [{"id": "x", "min": 1, "max": 2}]},
        {"id": "c", "type": "choice", "options": ["p", "q"], "key": "q"},
        {"id": "m", "type": "multiple_response", "options": ["a", "b", "d"], "key": ["a", "b"]},
    ], points=14, text={"en": {"stem": "A $x^2$ [[w]] b [[n]]\n\n- c [[c]]\n\nm [[m]]", "gaps": {
        "w": {"answers": {"a": ["Paris"]}}, "c": {"options": {"p": "P", "q": "Q"}},
        "m": {"options": {"a": "A", "b": "B", "d": "D"}}}}})


def test_qti_cloze_is_valid_and_the_key_scores_full_marks_each_wrong_gap_its_share():
    item = qti_cloze()
    root, warnings = assessment_item(item, "en")
    assert_valid("qti", root, item.id)
    assert not [w for w in warnings if "not in the stem" in w.message]
    interactions = [el.get("responseIdentifier") for el in root.iter()
                    if str(el.tag).endswith("Interaction")]
    assert sorted(interactions) == sorted(response_id(g.id) for g in item.gaps)
    key = key_responses(item)
    assert float(Engine(root).run(key)["SCORE"]) == pytest.approx(14)
    assert float(Engine(root).run({})["SCORE"]) == 0
    for gap in item.gaps:
        wrong = {**key, response_id(gap.id): WRONG[gap.type]}
        lost = 14 - float(Engine(root).run(wrong)["SCORE"])
        assert lost == pytest.approx(14 * item.gap_share(gap.id)), gap.id
        # the scorer of the statistics agrees
        parts = {g.id: _as_response(v) for g, v in zip(item.gaps, wrong.values(), strict=True)}
        assert score(item, Response(parts=tuple(parts.items()))) == pytest.approx(14 - lost)


def _as_response(value: Any) -> Response:
    if isinstance(value, list):
        return Response(chosen=frozenset(value))
    if isinstance(value, float):
        return Response(typed=f"{value:g}")
    if value in ("p", "q"):
        return Response(chosen=frozenset([value]))
    return Response(typed=str(value))


@given(points=st.lists(st.integers(1, 9), min_size=4, max_size=4), total=st.integers(1, 50))
def test_gap_points_share_the_items_points(points: list[int], total: int):
    item = qti_cloze()
    data = item.model_dump(by_alias=True, exclude_none=True)
    for g, p in zip(data["gaps"], points, strict=True):
        g["points"] = p
    data["points"] = total
    item = parse_item(data)
    assert isinstance(item, Cloze)
    root, _ = assessment_item(item, "en")
    key = key_responses(item)
    assert float(Engine(root).run(key)["SCORE"]) == pytest.approx(total)
    for gap, p in zip(item.gaps, points, strict=True):
        wrong = {**key, response_id(gap.id): WRONG[gap.type]}
        assert float(Engine(root).run(wrong)["SCORE"]) == pytest.approx(
            total - total * p / sum(points))


# --- statistics -----------------------------------------------------------------------------------


def test_each_gap_is_scored_by_its_own_grading():
    item = cloze()
    assert gap_fraction(item, "w", Response(typed=" PARIS ")) == 1
    assert gap_fraction(item, "w", Response(typed="parisian")) == 0.5
    assert gap_fraction(item, "n", Response(typed="2.45")) == 1
    assert gap_fraction(item, "n", Response(typed="2.7")) == 0
    assert gap_fraction(item, "c", Response(chosen=frozenset("q"))) == 1
    full = cloze_response(item, "w=Paris; n=2.5; c=q")
    assert score(item, full) == 4
    assert score(item, cloze_response(item, "w=Paris; c=p")) == 2  # half of 4: w weighs 2 of 4
    assert math.isclose(score(item, cloze_response(item, "w=paris x; n=2.5")), 0.5 * 2 + 1)


def test_moodles_responses_cell_is_read_part_by_part():
    item = cloze()
    response = moodle_cloze_response(item, "part 1: Paris; part 2: 2.5; part 3: Q")
    assert score(item, response) == 4
    assert dict(response.parts)["c"].chosen == {"q"}


# --- keys and printed forms -------------------------------------------------------------------


def test_the_key_lists_each_gap():
    item = cloze()
    words = answer(FormItem(1, item, item), ["en"]).words["en"]
    assert words == "(1) Paris; paris* (50%); (2) 2.5 ± 0.1; (3) B"


def test_kitchen_sink_forms_print_numbered_blanks_and_the_choices():
    from dpassess.assemble.paper import gap_choices, stem_of

    bank = load_bank(KS)
    item = bank.get("ks-cloze-hash")
    assert isinstance(item, Cloze)
    stem = stem_of(item, "en")
    assert "[[" not in stem and "**(1)**" in stem and "**(4)**" in stem
    assert [n for n, _ in gap_choices(item, "en")] == [3, 4]
    tree = etree.fromstring(f"<p>{to_inline_html(stem)}</p>")
    assert "".join(tree.itertext()).count("_" * 12) == 4


# --- import: cloze cases in Moodle's formats, and round trips ---------------------------------

CASES = ROOT / "tests" / "fixtures" / "moodle" / "cloze-cases"


def test_moodle_cases_every_saved_cloze_and_description_is_kept_the_broken_refused():
    from dpassess.importers import gift as gift_import
    from dpassess.importers import moodle_xml as xml_import

    kept: list[tuple[str, int]] = []
    saved: list[tuple[str, int]] = []  # what Moodle saves: its own parser's gaps, not refused
    for name in ("cloze_with_pictures.xml", "cloze_in_old_image_field.xml",
                 "cloze_and_description.xml"):
        data = (CASES / name).read_bytes()
        result = xml_import.read(data, name, "en")
        assert result.skipped == [], [str(s) for s in result.skipped]
        kept += [(it.type.value, len(getattr(it, "gaps", ()))) for it in result.items
                 if it.type.value in ("cloze", "description")]
        for q in read_xml(data):
            if q.qtype == "cloze":
                parsed = multianswer.extract(q.questiontext)
                assert multianswer.validate(parsed) == []
                saved.append(("cloze", len(parsed.subs)))
            elif q.qtype == "description":
                saved.append(("description", 0))
    result = gift_import.read((CASES / "mixed_questions.gift.txt").read_bytes(), "q.gift", "en")
    assert result.skipped == []
    kept += [(it.type.value, len(getattr(it, "gaps", ()))) for it in result.items
             if it.type.value in ("cloze", "description")]
    saved.append(("cloze", 1))  # its one missing-word question
    # Moodle saves 6 cloze questions and 2 descriptions of these files: all kept, gaps and all
    assert len(saved) == 8 and sorted(kept) == sorted(saved)
    broken = xml_import.read((CASES / "refused_cloze.xml").read_bytes(), "b.xml", "en")
    assert broken.items == []
    assert [str(s).split(": ", 2)[2] for s in broken.skipped] == [
        "Cloze text with no gap at all: Invalid embedded answers (Cloze) question "
        "(The question text must include at least one embedded answer.) (Moodle refuses it too)",
        "Drop-down gap that lists no choices: Invalid embedded answers (Cloze) question "
        "(The question text must include at least one embedded answer.) (Moodle refuses it too)",
        "Drop-down gap with a single choice: Invalid embedded answers (Cloze) question "
        "(gap 1: Please fill in at least 2 answers.) (Moodle refuses it too)",
        "Drop-down gap where no choice earns full marks: Invalid embedded "
        "answers (Cloze) question (gap 1: One of the answers should have a score of 100% so it is "
        "possible to get full marks for this question.) (Moodle refuses it too)",
        "Number gap whose answer is not a number: Invalid embedded answers (Cloze) question "
        "(gap 1: You must enter a valid number or '*'.) (Moodle refuses it too)",
    ]
    assert [s.line for s in broken.skipped] == [4, 20, 36, 52, 68]


def test_a_moodle_cloze_with_two_gaps_comes_in_with_its_gaps_grades_and_feedback():
    from dpassess.importers import moodle_xml as xml_import

    result = xml_import.read((CASES / "cloze_and_description.xml").read_bytes(), "x", "en")
    item = next(it for it in result.items if isinstance(it, Cloze))
    assert item.text["en"].stem == 'Finish the proverb: "An [[g1]] a day keeps the [[g2]] away".'
    words, menu = item.gaps
    assert [(a.id, a.fraction) for a in words.answers] == [("a", 0), ("b", 1), ("c", 0)]
    gaps = item.text["en"].gaps
    assert gaps["g1"].answers == {"a": ("orange",), "b": ("apple",), "c": ("*",)}
    assert gaps["g1"].feedback["b"] == "Right!"
    assert (menu.type, menu.key, menu.display) == ("choice", "c", "dropdown")
    assert gaps["g2"].options["c"] == "doctor"
    assert item.points == 2


@given(wording=HOSTILE, option=HOSTILE, feedback=HOSTILE)
def test_a_cloze_comes_back_from_moodle_xml_as_it_went(wording: str, option: str, feedback: str):
    from dpassess.importers import moodle_xml as xml_import

    item = parse_item({
        "schema": 1, "id": "c1", "type": "cloze", "topic": "t/a", "points": 3,
        "gaps": [{"id": "g1", "type": "short_answer", "points": 2, "answers": [{"id": "a"}]},
                 {"id": "g2", "type": "choice", "options": ["a", "b"], "key": "b"}],
        "text": {"en": {"stem": "x [[g1]] y [[g2]]",
                        "gaps": {"g1": {"answers": {"a": [wording]}, "feedback": {"a": feedback}},
                                 "g2": {"options": {"a": option, "b": "other"}}}}}})
    data = moodle_xml.export(collection(item), "en").data
    (back,) = xml_import.read(data, "x.xml", "en").items
    assert isinstance(back, Cloze)
    assert [g.type for g in back.gaps] == ["short_answer", "choice"]
    assert [g.points for g in back.gaps] == [2, 1]
    assert back.text["en"].gaps["g1"].answers["a"][0].strip() == \
        wording.replace("\\}", "}").replace("\\#", "#").strip()
    assert back.gaps[1].key == "b"  # type: ignore[union-attr]


def test_the_analysis_reports_each_gaps_p(tmp_path: Path):
    from dpassess.stats import analyse, read_responses

    bank = tmp_path / "bank"
    bank.mkdir()
    (bank / "bank.yaml").write_text("schema: 1\nid: bb\ntitle: {en: B}\nlanguages: [en]\n"
                                    "default_language: en\n")
    item = cloze()
    import yaml

    (bank / "c1.yaml").write_text(yaml.safe_dump(item.model_dump(
        mode="json", by_alias=True, exclude_none=True)), encoding="utf-8")
    rows = ["person,item,response",
            "p1,c1,w=Paris; n=2.5; c=q",   # 4
            "p2,c1,w=Paris; n=9; c=p",     # 2
            "p3,c1,w=parisx; n=2.5; c=q",  # 0.5 * 2 + 1 + 1 = 3
            "p4,c1,"]                      # omitted: 0
    (tmp_path / "r.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    analysis = analyse(read_responses(tmp_path / "r.csv", load_bank(bank)))
    stats = analysis.item("c1")
    assert stats.mean == pytest.approx((4 + 2 + 3 + 0) / 4)
    assert dict(stats.gaps) == pytest.approx({"w": (1 + 1 + 0.5 + 0) / 4, "n": 2 / 4,
                                              "c": 2 / 4})
    assert analysis.to_dict()["items"][0]["gaps"] == {"w": 0.625, "n": 0.5, "c": 0.5}
    from dpassess.stats.report import to_text

    assert "  [[w]]" in to_text(analysis) and "0.625" in to_text(analysis)


def test_forms_take_a_cloze_like_any_item_and_a_description_only_when_named():
    from dpassess.assemble import assemble_problem
    from dpassess.assemble.problem import resolve
    from dpassess.model.blueprint import Blueprint

    bank = load_bank(KS)
    base = {"id": "ks", "bank": ".", "forms": 1, "items": 13, "statuses": ["reviewed", "draft"]}
    ids = [fi.source.id for fi in assemble_problem(resolve(
        Blueprint.model_validate(base), "<bp>", bank)).forms[0].items]
    assert "ks-cloze-hash" in ids and "ks-intro-hashing" not in ids  # never drawn
    form = assemble_problem(resolve(Blueprint.model_validate(
        {**base, "anchors": ["ks-intro-hashing"]}), "<bp>", bank)).forms[0]
    # on top of the 13 items: a description does not count unless the blueprint says so
    assert "ks-intro-hashing" in [fi.source.id for fi in form.items] and len(form.items) == 14


def test_a_qti_item_of_several_text_entries_and_inline_choices_comes_in_as_a_cloze():
    from dpassess.importers import qti21 as qti_import

    base = cloze()
    gaps = [g.model_dump() for g in base.gaps]
    gaps[1]["answers"][0]["id"] = "a"  # the importer names answers a, b, ... in order
    item = cloze(gaps=gaps)
    root, _ = assessment_item(item, "en")
    result = qti_import.read(etree.tostring(root, xml_declaration=True, encoding="utf-8"),
                             "c1.xml", "en")
    assert result.skipped == [] and result.warnings == []
    (back,) = result.items
    assert isinstance(back, Cloze)
    assert back.text["en"].stem == "Word [[g1]], number [[g2]], pick [[g3]]."
    renamed = {"w": "g1", "n": "g2", "c": "g3"}
    assert [g.model_dump() for g in back.gaps] == [
        {**g.model_dump(), "id": renamed[g.id]} for g in item.gaps]
    assert back.text["en"].gaps == {renamed[k]: v for k, v in item.text["en"].gaps.items()} | {
        "g2": back.text["en"].gaps["g2"]}
    assert back.points == item.points


@pytest.mark.parametrize("lang", ["id", "en"])
def test_the_kitchen_sink_cloze_comes_back_from_its_qti_golden(lang: str):
    from dpassess.importers import qti21 as qti_import

    item = load_bank(KS).get("ks-cloze-hash")
    assert isinstance(item, Cloze)
    data = (ROOT / "tests" / "golden" / "kitchen-sink" / "qti21" / lang / "items"
            / "ks-cloze-hash.xml").read_bytes()
    result = qti_import.read(data, "ks.xml", lang)
    assert result.skipped == [] and result.warnings == []
    (back,) = result.items
    assert isinstance(back, Cloze)
    names = {g.id: f"g{n}" for n, g in enumerate(item.gaps, 1)}
    stem = item.text[lang].stem.strip()
    for old, new in names.items():
        stem = stem.replace(f"[[{old}]]", f"[[{new}]]")
    assert back.text[lang].stem == stem
    for g, b in zip(item.gaps, back.gaps, strict=True):
        assert (b.type, b.points) == (g.type, g.points)
        if g.type in ("choice", "multiple_response"):
            assert (b.options, b.key) == (g.options, g.key)  # type: ignore[union-attr]
            assert back.text[lang].gaps[b.id].options == item.text[lang].gaps[g.id].options
            assert back.text[lang].gaps[b.id].feedback == item.text[lang].gaps[g.id].feedback
        else:
            assert [a.fraction for a in b.answers] == [a.fraction for a in g.answers]  # type: ignore[union-attr]


def test_a_description_in_a_responses_file_is_not_analysed(tmp_path: Path):
    from dpassess.stats import analyse, read_responses

    bank = tmp_path / "bank"
    bank.mkdir()
    (bank / "bank.yaml").write_text("schema: 1\nid: bb\ntitle: {en: B}\nlanguages: [en]\n"
                                    "default_language: en\n")
    import yaml

    (bank / "c1.yaml").write_text(yaml.safe_dump(cloze().model_dump(
        mode="json", by_alias=True, exclude_none=True)), encoding="utf-8")
    (bank / "d1.yaml").write_text("schema: 1\nid: d1\ntype: description\ntopic: t/a\n"
                                  "text: {en: {stem: Read this.}}\n", encoding="utf-8")
    (tmp_path / "r.csv").write_text("person,item,response\np1,c1,w=Paris\np1,d1,\n"
                                    "p2,c1,c=q\np2,d1,\n", encoding="utf-8")
    analysis = analyse(read_responses(tmp_path / "r.csv", load_bank(bank)))
    assert [s.item for s in analysis.items] == ["c1"]


def test_a_moodle_responses_report_with_a_cloze_question_is_read(tmp_path: Path):
    from dpassess.stats import analyse, read_responses

    bank = tmp_path / "bank"
    bank.mkdir()
    (bank / "bank.yaml").write_text("schema: 1\nid: bb\ntitle: {en: B}\nlanguages: [en]\n"
                                    "default_language: en\n")
    import yaml

    (bank / "c1.yaml").write_text(yaml.safe_dump(cloze().model_dump(
        mode="json", by_alias=True, exclude_none=True)), encoding="utf-8")
    # qtype_multianswer's summary: typed gaps as _____, a choice gap as {its options}
    question = "Word _____, number _____, pick {P; Q}."
    head = '"Last name","First name","State","Grade/4.00","Question 1","Response 1"'
    rows = [head,
            f'"A","P1","Finished","4.00","{question}","part 1: Paris; part 2: 2.5; part 3: Q"',
            f'"B","P2","Finished","2.00","{question}","part 1: Paris; part 2: 3; part 3: P"']
    (tmp_path / "r.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    analysis = analyse(read_responses(tmp_path / "r.csv", load_bank(bank)))
    stats = analysis.item("c1")
    assert stats.mean == pytest.approx(3) and dict(stats.gaps) == {"w": 1, "n": 0.5, "c": 0.5}


def _key_response(item: Cloze, lang: str) -> tuple[dict[str, Any], Response]:
    """The key as QTI responses and as the statistics' response."""
    qti: dict[str, Any] = {}
    parts = []
    for g in item.gaps:
        match g.type:
            case "short_answer":
                w = item.text[lang].gaps[g.id].answers[g.answers[0].id][0]
                qti[response_id(g.id)] = w
                parts.append((g.id, Response(typed=w)))
            case "numerical":
                v = g.answers[0].value
                qti[response_id(g.id)] = v
                parts.append((g.id, Response(typed=repr(v))))
            case "choice":
                qti[response_id(g.id)] = g.key
                parts.append((g.id, Response(chosen=frozenset([g.key]))))
            case "multiple_response":
                qti[response_id(g.id)] = list(g.key)
                parts.append((g.id, Response(chosen=frozenset(g.key))))
    return qti, Response(parts=tuple(parts))


#: A gap inside a formula (MathML holds no interaction: it follows the stem, with a warning).
GAP_IN_FORMULA = parse_item({
    "schema": 1, "id": "f1", "type": "cloze", "topic": "t/a",
    "gaps": [{"id": "g1", "type": "short_answer", "answers": [{"id": "a"}]}],
    "text": {"en": {"stem": "$0 [[g1]] 0$", "gaps": {"g1": {"answers": {"a": ["0"]}}}}}})


@given(item=cloze_items(langs=("en",)))
@example(item=GAP_IN_FORMULA)
def test_any_cloze_is_valid_qti_moodle_reads_every_gap_and_the_key_scores_full(item: Cloze):
    root, _ = assessment_item(item, "en")
    assert_valid("qti", root, item.id)
    qti, response = _key_response(item, "en")
    assert float(Engine(root).run(qti)["SCORE"]) == pytest.approx(item.points)
    assert score(item, response) == pytest.approx(item.points)
    (q,) = moodle_questions(item)
    parsed = multianswer.extract(q.questiontext)
    assert multianswer.validate(parsed) == [] and len(parsed.subs) == len(item.gaps)


def test_a_name_made_from_a_cloze_stem_shows_its_gaps_as_blanks():
    item = cloze(id="one", gaps=[{"id": "c", "type": "choice", "options": ["p", "q"], "key": "q"}],
                 text={"en": {"stem": "Before [[c]] after.",
                              "gaps": {"c": {"options": {"p": "P", "q": "Q"}}}}})
    (q,) = moodle_questions(item)
    assert q.name == "Before ___ after."
    (g,) = [q for q in read_gift(gift.export(collection(item), "en").data.decode())
            if q.qtype != "category"]
    assert g.name == "Before ___ after."


@pytest.mark.parametrize(("fmt", "data", "line", "field"), [
    # GIFT's missing-word form: a raw control character in an answer and in its feedback
    ("gift", b"::p::First? {T}\n\n::q::Pick {=a\x01b#f\x02g ~c} now.\n", 3, "answer 1"),
    # Moodle XML: a character reference to one in an embedded answer (XML holds no raw one)
    ("moodle-xml", b"""<?xml version="1.0" encoding="UTF-8"?><quiz>
<question type="cloze"><name><text>q</text></name>
<questiontext format="html"><text><![CDATA[Say {1:SA:=a&#1;b} and {1:MC:=x~y}.]]></text>
</questiontext></question></quiz>""", 2, "gap 1 answer 1"),
])
def test_a_control_character_in_a_cloze_gap_is_left_out_with_one_warning(
        fmt: str, data: bytes, line: int, field: str) -> None:
    """The importer says a character XML cannot carry is left out: it is (the gap's answer
    reads `ab`), with one warning naming the file, the line and the field."""
    import importlib

    from dpassess.importers import READERS

    result = importlib.import_module(READERS[fmt]).read(data, "t.in", "en")
    item = result.items[-1]
    assert isinstance(item, Cloze)
    dumped = repr(item.model_dump())
    assert "\\x01" not in dumped and "\\x02" not in dumped
    gap = item.text["en"].gaps["g1"]
    assert "ab" in [*gap.options.values(), *(w for ws in gap.answers.values() for w in ws)]
    first = [w for w in result.warnings if "U+0001" in w.message]
    assert [(w.path, w.line, w.field) for w in first] == [("t.in", line, field)]
    assert "left out" in first[0].message
    if fmt == "gift":
        assert "fg" in gap.feedback.values()
