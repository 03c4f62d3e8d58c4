"""Moodle XML export: golden files for the seed bank, Moodle's structure, and a round trip through
an independent reader that follows Moodle's qformat_xml (tests/test_export_moodle_oracle.py).

Rewrite the golden files after an intended change (tests/test_golden.py rewrites them too),
then review the diff:

    .venv/bin/python -m pytest tests/test_golden.py tests/test_export_moodle.py tests/test_export_gift.py --update-goldens
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from lxml import html as lxml_html

from conftest import ROOT, SEED_BANK
from dpassess.bank.load import load_banks
from dpassess.export import EXPORTERS, Collection
from dpassess.export.moodle import moodle_xml
from dpassess.markup.markdown import plain_title, to_html, to_inline_html, to_plain
from dpassess.model import Content, Item, ItemType, Option, parse_item
from strategies import LANGS, items
from test_export_moodle_oracle import (
    GRADES,
    match_grade,
    multilang,
    nearest_grade,
    read_xml,
    shorten_text,
)

GOLDEN = Path(__file__).parent / "golden"


def seed() -> Collection:
    return Collection.from_bank(load_banks([SEED_BANK])[0])


def export(collection: Collection, lang: str, fmt: str = "moodle-xml"):
    return EXPORTERS[fmt].export(collection, lang)


def check_golden(config: pytest.Config, path: Path, data: bytes) -> None:
    """`data` is the golden file at `path`; with pytest's `--update-goldens`, it is rewritten
    first."""
    if config.getoption("--update-goldens"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    assert path.exists(), f"{path} missing: run pytest with --update-goldens"
    assert data == path.read_bytes(), (f"{path.name} differs from the export (after a deliberate "
                                       "change: pytest --update-goldens, then review the diff)")


# --- golden files ---------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["id", "en", "multi"])
def test_seed_bank_matches_golden(request, lang):
    result = export(seed(), lang)
    # the seed bank has formulas: a file in several languages says once where Moodle's
    # multilang filter must sit (docs/export-moodle.md), and nothing else
    said = [w.message.split(":")[0] for w in result.warnings]
    assert said == (["this file shows formulas in several languages"] if lang == "multi" else [])
    check_golden(request.config, GOLDEN / "moodle" / f"data-parallelism-{lang}.xml", result.data)
    assert export(seed(), lang).data == result.data  # byte-identical on every run


@pytest.mark.parametrize("lang", ["id", "en", "multi"])
def test_committed_build_output_is_fresh(lang):
    """`dpassess build` output under exports/ must be what the exporter writes now."""
    built = ROOT / "exports" / "moodle" / f"data-parallelism-{lang}.xml"
    if not built.exists():
        pytest.skip("no exports/ committed yet")
    assert built.read_bytes() == export(seed(), lang).data, "stale: run `dpassess build`"


# --- Moodle's structure ------------------------------------------------------------------------

#: The child elements qformat_xml::writequestion writes, in order (Moodle 4.5).
HEAD = ["name", "questiontext", "generalfeedback", "defaultgrade", "penalty", "hidden",
        "idnumber"]
MULTICHOICE = [*HEAD, "single", "shuffleanswers", "answernumbering", "showstandardinstruction",
               "correctfeedback", "partiallycorrectfeedback", "incorrectfeedback"]


def test_structure_is_what_moodle_writes():
    root = ET.fromstring(export(seed(), "en").data)
    assert root.tag == "quiz"
    questions = root.findall("question")
    assert [q.get("type") for q in questions][:3] == ["category", "category", "multichoice"]
    for q in questions:
        tags = [c.tag for c in q]
        if q.get("type") == "category":
            assert tags == ["category", "info"]
            path = q.find("category/text").text
            assert re.fullmatch(r"\$course\$/top/(Kuis Paralelisme Data|Data Parallelism Quiz)(/[a-z0-9-]+)*", path)
            continue
        assert q.get("type") == "multichoice"
        n = len(MULTICHOICE)
        assert tags[:n] == MULTICHOICE
        assert set(tags[n:]) <= {"answer", "tags"} and tags[-1] == "tags"
        for field in ("questiontext", "generalfeedback", "correctfeedback"):
            assert q.find(field).get("format") == "html"
            assert [c.tag for c in q.find(field)] == ["text"]
        assert q.find("single").text in ("true", "false")
        assert q.find("shuffleanswers").text in ("true", "false")
        assert q.find("defaultgrade").text == "1.0000000"
        assert q.find("penalty").text == "0.3333333"
        for a in q.findall("answer"):
            assert [c.tag for c in a] == ["text", "feedback"]
            assert a.get("format") == "html"
            assert match_grade(float(a.get("fraction")) / 100) is not None
        assert all(t.tag == "tag" and [c.tag for c in t] == ["text"] for t in q.find("tags"))


def test_html_is_in_cdata_and_text_is_well_formed():
    data = export(seed(), "multi").data
    assert b"<questiontext format=\"html\">\n      <text><![CDATA[<p>" in data
    assert data.startswith(b"<?xml version='1.0' encoding='UTF-8'?>\n<quiz>")
    ET.fromstring(data)


def tf_item(**kw) -> Item:
    base = dict(
        id="tf-one", type=ItemType.true_false, topic="t", points=2.5, key=("false",),
        text={"en": Content(stem="Sky is *green*.", options={},
                            feedback={"true": "No: it is blue.", "false": "Right."})},
    )
    return parse_item(dict(**{**base, **kw}))


def one(*its: Item, langs=("en",)) -> Collection:
    return Collection(id="b", title={la: "Bank" for la in langs}, languages=langs,
                      items=list(its), category="b", default_language=langs[0])


def test_true_false_is_lower_case_and_fraction_100_on_the_key():
    data = export(one(tf_item()), "en").data
    q = ET.fromstring(data).findall("question")[-1]
    assert q.get("type") == "truefalse"
    assert [c.tag for c in q] == [*HEAD, "answer", "answer"]
    answers = [(a.find("text").text, a.get("fraction")) for a in q.findall("answer")]
    assert answers == [("true", "0"), ("false", "100")]
    assert q.find("penalty").text == "1.0000000"
    assert q.find("defaultgrade").text == "2.5000000"
    [_, _, back] = read_xml(data)
    assert back.correctanswer == 0
    assert back.feedbacktrue == "<p>No: it is blue.</p>" and back.feedbackfalse == "<p>Right.</p>"


# --- warnings for what Moodle would alter ---------------------------------------------------------


def mr_item(weights: dict[str, float] | None, **kw) -> Item:
    return parse_item(dict(
        id="mr-one", type=ItemType.multiple_response, topic="t", options=(
            Option(id="a"), Option(id="b", locked=True), Option(id="c")),
        key=("a", "b"), weights=weights,
        text={"en": Content(stem="Pick", options={"a": "A", "b": "B", "c": "C"})}, **kw,
    ))


def test_fraction_outside_moodles_list_is_snapped_with_a_warning():
    result = export(one(mr_item({"a": 0.33, "b": 0.67, "c": -0.2})), "en")
    q = read_xml(result.data)[-1]
    assert q.fractions == [pytest.approx(0.3333333), pytest.approx(0.6666667), -0.2]
    fields = {w.field for w in result.warnings}
    assert {"weights.a", "weights.b"} <= fields and "weights.c" not in fields
    assert all(w.item == "mr-one" for w in result.warnings)


def test_positive_grades_not_adding_to_100_warn_that_moodle_refuses():
    result = export(one(mr_item({"a": 0.5, "b": 0.25, "c": 0})), "en")
    assert any(w.field == "weights" and "75%" in w.message for w in result.warnings)


def test_locked_option_with_shuffling_warns():
    result = export(one(mr_item(None)), "en")
    assert [w.field for w in result.warnings] == ["options.b.locked"]
    assert "<single>false</single>" in result.data.decode()


@pytest.mark.parametrize("fmt", ["moodle-xml", "gift"])
def test_an_item_without_the_language_is_left_out_and_multi_says_what_is_shown(fmt):
    other = tf_item(id="tf-two", text={"en": Content(stem="Grass is green.", options={}),
                                       "id": Content(stem="Rumput hijau.", options={})})
    collection = one(tf_item(), other, langs=("id", "en"))
    result = export(collection, "id", fmt)
    assert [(w.item, w.field, w.message) for w in result.warnings
            if w.item == "tf-one" and w.field.startswith("text")] == [
        ("tf-one", "text", "no 'id' text; not exported")]
    assert "green" not in result.data.decode() and "Rumput" in result.data.decode()
    multi = export(collection, "multi", fmt)
    assert [(w.item, w.field, w.message) for w in multi.warnings
            if w.item == "tf-one" and w.field.startswith("text")] == [
        ("tf-one", "text.id", "no 'id' text; the 'en' text is written in its place")]
    assert "Sky is <em>green</em>" in multi.data.decode()


@pytest.mark.parametrize("fmt", ["moodle-xml", "gift", "qti21"])
def test_a_language_no_item_has_or_the_collection_lacks_is_a_usage_error(fmt):
    from dpassess.diagnostics import UsageError

    with pytest.raises(UsageError, match=r"^b: no item has 'id' text; nothing to export$"):
        export(one(tf_item(), langs=("en", "id")), "id", fmt)
    with pytest.raises(UsageError, match=r"^language 'fr': the collection has en") as error:
        export(one(tf_item()), "fr", fmt)
    assert "--" not in str(error.value)


def test_true_false_words_are_not_carried():
    item = tf_item(text={"en": Content(stem="s", options={"true": "Yes", "false": "False"})})
    result = export(one(item), "en")
    assert [w.field for w in result.warnings] == ["text.en.options.true"]


def test_characters_xml_cannot_carry_are_removed_with_a_warning():
    item = tf_item(text={"en": Content(stem="a\x01b ]]> c", options={})})
    result = export(one(item), "en")
    q = read_xml(result.data)[-1]
    assert q.questiontext == "<p>ab ]]&gt; c</p>"
    assert [w.field for w in result.warnings] == ["title", "text.en.stem"]  # title: from the stem


def test_cdata_terminator_in_raw_html_round_trips():
    item = tf_item(text={"en": Content(stem='<div title="]]>">x</div>', options={})})
    data = export(one(item), "en").data
    assert read_xml(data)[-1].questiontext == '<div title="]]>">x</div>'


def test_empty_option_warns_that_moodle_drops_it():
    item = mr_item(None, shuffle=False).model_copy(update={"text": {"en": Content(
        stem="s", options={"a": "A", "b": "", "c": "C"})}})
    result = export(one(item), "en")
    assert [w.field for w in result.warnings] == ["text.en.options.b"]


def test_duplicate_id_in_a_category_warns():
    result = export(one(tf_item(), tf_item()), "en")
    assert [w.field for w in result.warnings] == ["id"]


# --- hypothesis: round trip through Moodle's reader ----------------------------------------------


def name_of(item: Item, lang: str) -> str:
    """The name Moodle gets: the title as plain text (no Markdown), else the stem's first line
    as plain text shortened as Moodle's `shorten_text(..., 80)` (the ported oracle)."""
    content = item.text[lang]
    if content.title and plain_title(content.title):
        return html.escape(plain_title(content.title), quote=False)
    lines = content.stem.strip().splitlines()
    plain = html.escape(to_plain(lines[0]), quote=False) if lines else ""
    return shorten_text(plain, 80) if plain else item.id


def expected_fractions(item: Item) -> list[float]:
    return [nearest_grade(f) for f in item.fractions().values()]


def clean(item: Item) -> bool:
    """Items whose every answer renders to something (Moodle drops blank answers)."""
    return all(to_inline_html(item.option_text(la, o)).strip()
               for la in item.text for o in item.option_ids)


def check_question(q, item: Item, lang: str, category: str) -> None:
    c = item.text[lang]
    assert q.name == name_of(item, lang)
    assert q.questiontext == to_html(c.stem).strip()
    assert q.generalfeedback == to_html(c.explanation or "").strip()
    assert q.idnumber == item.id
    assert q.tags == list(item.tags)
    # the root is the bank's title (tests/test_export_moodle_types.py names it per language)
    assert category.startswith("$course$/top/Bank")
    assert category.split("/")[3:] == item.topic.split("/")
    if item.type is ItemType.true_false:
        assert q.qtype == "truefalse"
        assert q.correctanswer == (1 if item.key == ("true",) else 0)
        assert q.feedbacktrue == to_html(c.feedback.get("true", "")).strip()
        assert q.feedbackfalse == to_html(c.feedback.get("false", "")).strip()
        return
    assert q.qtype == "multichoice"
    assert q.single == (1 if item.type is ItemType.single_choice else 0)
    assert q.shuffleanswers == int(item.shuffle)
    assert q.answers == [to_inline_html(c.options[o]).strip() for o in item.option_ids]
    assert q.feedback == [to_html(c.feedback.get(o, "")).strip() for o in item.option_ids]
    assert q.fractions == pytest.approx(expected_fractions(item), abs=1e-9)
    assert all(match_grade(f) is not None for f in q.fractions)
    assert q.defaultmark == item.points


def by_question(questions):
    category = ""
    for q in questions:
        if q.qtype == "category":
            category = q.category
        else:
            yield category, q


unique_items = st.lists(items(), min_size=1, max_size=3, unique_by=lambda i: i.id)


@given(unique_items, st.sampled_from(LANGS))
def test_round_trip_through_moodles_xml_reader(its, lang):
    assume(all(clean(i) for i in its))
    result = export(one(*its, langs=LANGS), lang)
    got = list(by_question(read_xml(result.data)))
    assert len(got) == len(its)
    for (category, q), item in zip(got, its, strict=True):
        check_question(q, item, lang, category)


_BLOCKS = {"p", "div", "li", "ul", "ol", "pre", "blockquote", "br", "hr", "table", "tr", "td",
           "th", "h1", "h2", "h3", "h4", "h5", "h6"}


def visible(fragment: str) -> str:
    """The words a reader sees, a block boundary being a space (where the languages' blocks
    differ, the multilang text keeps every block, some of them empty, so only the words and
    their order can be compared)."""
    if not fragment.strip():
        return ""
    root = lxml_html.fragment_fromstring(fragment, create_parent="div")
    for el in root.iter():
        if isinstance(el.tag, str) and el.tag.lower() in _BLOCKS:
            el.tail = " " + (el.tail or "")
    return " ".join(root.text_content().split())


def seen(item: Item, lang: str, field) -> str:
    """What a reader in `lang` sees of a block field: their language's text; when it is empty
    and exactly one other language has the field, that language's text (written without
    spans, so every reader sees it)."""
    if to_html(field(item.text[lang])).strip():
        return visible(to_html(field(item.text[lang])))
    others = [to_html(field(item.text[la])) for la in LANGS if la != lang]
    others = [o for o in others if o.strip()]
    return visible(others[0]) if len(others) == 1 else ""


@given(unique_items)
def test_multi_shows_each_language_through_moodles_multilang_filter(its):
    assume(all(clean(i) for i in its))
    result = export(one(*its, langs=LANGS), "multi")
    # characters XML cannot carry (U+FFFE) are removed, with a warning tested below
    assume(not any(s in w.message for w in result.warnings
                   for s in ("own <span>", "removed characters")))
    got = [q for _, q in by_question(read_xml(result.data))]
    for q, item in zip(got, its, strict=True):
        assert q.idnumber == item.id
        for lang in LANGS:
            c = item.text[lang]
            assert multilang(q.name, lang) == name_of(item, lang)
            assert visible(multilang(q.questiontext, lang)) == visible(to_html(c.stem))
            assert (visible(multilang(q.generalfeedback, lang))
                    == seen(item, lang, lambda c: c.explanation or ""))
            if item.type is not ItemType.true_false:
                assert [visible(multilang(a, lang)) for a in q.answers] == [
                    visible(to_inline_html(c.options[o])) for o in item.option_ids]
                assert [visible(multilang(f, lang)) for f in q.feedback] == [
                    seen(item, lang, lambda c, o=o: c.feedback.get(o, ""))
                    for o in item.option_ids]
                assert q.fractions == pytest.approx(expected_fractions(item), abs=1e-9)


def test_grade_list_is_moodles():
    assert len(GRADES) == 41 and sorted(GRADES)[0] == -1.0


# --- every field's characters XML cannot carry ------------------------------------------------


@pytest.mark.parametrize("lang", ["id", "en"])
def test_characters_xml_cannot_carry_are_removed_and_named_per_field(lang):
    bad = "x\x01<b>y</b>\x0b"
    mr = parse_item(dict(id="mr", type="multiple_response", topic="t", tags=("tag", "ok"),
              options=[Option(id="a"), Option(id="b"), Option(id="c")], key=("a", "b"),
              text={la: Content(stem=f"{la} {bad}", options={"a": bad, "b": "B", "c": bad},
                                feedback={"a": bad, "c": "fine"}, explanation=bad)
                    for la in ("id", "en")}))
    collection = Collection(id="c", title={"id": "K", "en": "C"}, languages=("id", "en"),
                            items=[mr], category="c", default_language="en")
    result = moodle_xml.export(collection, lang)
    # in the order of the question's fields (the title is the stem's first line)
    assert [(w.item, w.field, w.message) for w in result.warnings] == [
        ("mr", field, "removed characters XML cannot carry: U+0001") for field in
        ("title", *(f"text.{lang}.{f}" for f in
                    ("stem", "explanation", "options.a", "feedback.a", "options.c")))]
    assert b"\x01" not in result.data and b"\x0b" not in result.data
    q = read_xml(result.data)[-1]
    assert q.questiontext == f"<p>{lang} x<b>y</b></p>"
    assert q.answers == ["x<b>y</b>", "B", "x<b>y</b>"]


def _two_languages(en_a: str, id_a: str = "0") -> Collection:
    it = parse_item(dict(
        id="a0", topic="a", options=(Option(id="a"), Option(id="b")), key=("a",),
        text={"id": Content(stem="S", options={"a": id_a, "b": "x"}),
              "en": Content(stem="S", options={"a": en_a, "b": "x"})},
    ))
    return one(it, langs=("id", "en"))


@pytest.mark.parametrize("fmt", ["moodle-xml", "gift"])
def test_multi_with_a_control_character_strips_it_and_says_so(fmt: str) -> None:
    """The languages are merged through lxml: a character XML cannot hold is removed with a
    warning naming the language, instead of an lxml ValueError."""
    result = EXPORTERS[fmt].export(_two_languages("a\x01b <b>x</b>"), "multi")
    assert "\x01" not in result.data.decode()
    assert any(w.field == "text.en.options.a" and "U+0001" in w.message for w in result.warnings)


def test_differing_structure_keeps_every_language_visible_through_moodles_filter() -> None:
    """id is inline text, en inline text then a block: the inline parts of both languages sit
    side by side, and Moodle's filter (which reads adjacent spans as one group) must still show
    each language its own text."""
    result = moodle_xml.export(_two_languages("1 <P>"), "multi")
    assert any("differ in paragraphs or lists" in w.message for w in result.warnings)
    answers = next(q for _, q in by_question(read_xml(result.data))).answers
    assert visible(multilang(answers[0], "id")) == "0"
    assert visible(multilang(answers[0], "en")) == "1"


def test_control_characters_in_plain_texts_are_removed_with_a_warning():
    """Short-answer wordings, matching responses and essay templates are written as plain
    text: a control character there was a ValueError from lxml (found by `make fuzz`); now it
    is removed, named in a warning at its field, and the rest of the text is kept."""
    short = parse_item({"id": "s-one", "type": "short_answer", "topic": "t",
                        "answers": [{"id": "a"}],
                        "text": {"en": {"stem": "Name?", "answers": {"a": ["ab\x14cd"]}}}})
    match = parse_item({"id": "m-one", "type": "matching", "topic": "t", "pairs": ["x", "y"],
                        "text": {"en": {"stem": "Match.", "premises": {"x": "X", "y": "Y"},
                                        "responses": {"x": "o\x01ne", "y": "two"}}}})
    essay = parse_item({"id": "e-one", "type": "essay", "topic": "t",
                        "text": {"en": {"stem": "Write.", "response_template": "Start\x02:"}}})
    collection = Collection(id="c", title={"en": "C"}, languages=("en",),
                            items=[short, match, essay], category="c")
    result = export(collection, "en")
    root = ET.fromstring(result.data)
    texts = [t.text for t in root.iter("text")]
    assert "abcd" in texts and "one" in texts and "<p>Start:</p>" in texts
    fields = {(w.item, w.field) for w in result.warnings if "XML cannot carry" in w.message}
    assert fields == {("s-one", "text.en.answers.a"), ("m-one", "text.en.responses.x"),
                      ("e-one", "text.en.response_template")}
