"""Moodle XML and GIFT export of the numerical, short-answer, matching, essay and ordering
types (and stimuli, Moodle's penalty and numbering), read back through the ports of Moodle's
readers in tests/test_export_moodle_oracle.py: each question must come back with the type,
answers, grades, tolerances, units and feedback the bank says."""

from __future__ import annotations

import html
import math

import pytest
from hypothesis import given, settings

from dpassess.export import Collection
from dpassess.export.moodle import gift, moodle_xml
from dpassess.lms.moodle import moodle_name, name_html, snap
from dpassess.markup.markdown import to_html, to_inline_html, to_plain
from dpassess.model import (
    Essay,
    Item,
    Matching,
    Numerical,
    Ordering,
    ShortAnswer,
    Stimulus,
    parse_item,
)
from strategies import (
    essay_items,
    matching_items,
    numerical_items,
    ordering_items,
    short_answer_items,
)
from test_export_gift import start_gift_pegjs
from test_export_moodle_oracle import Question, multilang, read_gift, read_xml


def collection(*items: Item, stimuli: dict[str, Stimulus] | None = None) -> Collection:
    return Collection(id="b", title={"id": "B", "en": "B"}, languages=("id", "en"),
                      items=list(items), category="b", default_language="id",
                      stimuli=stimuli or {})


def xml_question(item: Item, lang: str = "en") -> tuple[Question, list[str]]:
    result = moodle_xml.export(collection(item), lang)
    return read_xml(result.data)[-1], [w.message for w in result.warnings]


def gift_question(item: Item, lang: str = "en") -> tuple[Question, list[str]]:
    result = gift.export(collection(item), lang)
    return read_gift(result.data.decode("utf-8"))[-1], [w.message for w in result.warnings]


def grade(fraction: float) -> float:
    return float(snap(fraction)[0])


def covers(mid: float, tol: float, lo: float, hi: float) -> bool:
    """Moodle's check `answer ± (tolerance + 1e-14)` accepts both ends (to float precision)."""
    eps = 1e-14 + 1e-12 * max(1.0, abs(lo), abs(hi))
    return mid - tol - eps <= lo and hi <= mid + tol + eps


def check_numerical(q: Question, item: Numerical, lang: str) -> None:
    assert q.qtype == "numerical"
    assert q.fractions == [grade(a.fraction) for a in item.answers]
    assert q.feedback == [to_html(item.text[lang].feedback.get(a.id, "")) for a in item.answers]
    for a, text, tol in zip(item.answers, q.answers, q.tolerances, strict=True):
        mid = float(text)
        if a.value is not None:
            assert math.isclose(mid, a.value, rel_tol=1e-12, abs_tol=1e-12)
            assert math.isclose(tol, a.tolerance, rel_tol=1e-12, abs_tol=1e-12)
        else:
            assert a.min is not None and a.max is not None
            assert covers(mid, tol, a.min, a.max)


@settings(max_examples=60)
@given(numerical_items())
def test_numerical_through_moodles_readers(item: Numerical) -> None:
    q, _ = xml_question(item)
    check_numerical(q, item, "en")
    assert q.units == [(u.multiplier, u.unit) for u in item.units]
    assert q.unitgradingtype == (2 if item.unit_penalty is not None else 0)
    if item.unit_penalty is not None:
        assert q.unitpenalty == item.unit_penalty
    assert q.showunits == (0 if item.units else 3)
    assert q.questiontext == to_html(item.text["en"].stem)
    g, warnings = gift_question(item)
    check_numerical(g, item, "en")
    assert g.questiontext == to_html(item.text["en"].stem)
    assert bool(item.units) == any("cannot carry units" in w for w in warnings)


def _moodle_accepts(answer: str, tolerance: str, response: float) -> bool:
    """Moodle's numerical check (question/type/numerical: `answer ± (tolerance + 1e-14)` in
    PHP floats, which are IEEE doubles like Python's)."""
    mid, tol = float(answer), float(tolerance) + 1e-14
    return mid - tol <= response <= mid + tol


@pytest.mark.parametrize(("lo", "hi", "narrowed"), [
    (0.1, 0.7, False),                     # 0.4 ± 0.3 holds both ends
    (123456789.1, 123456789.3, True),      # 123456789.2 ± 0.1 misses an end in floats
])
def test_a_range_floating_point_narrows_is_warned_as_moodle_would_mark_it(lo, hi, narrowed) -> None:
    item = parse_item({"id": "qq", "topic": "t", "type": "numerical",
                       "answers": [{"id": "r", "min": lo, "max": hi}],
                       "text": {"en": {"stem": "How many?"}}})
    q, warnings = xml_question(item)
    [answer], [tolerance] = q.answers, q.tolerances
    both_ends = all(_moodle_accepts(answer, str(tolerance), x) for x in (lo, hi))
    assert both_ends is not narrowed
    said = [w for w in warnings if "floating point rounding narrows" in w]
    if narrowed:
        assert said == [f"Moodle holds the range {lo}..{hi} as {answer} ± {tolerance:g}, "
                        "which floating point rounding narrows: a response at either end "
                        "may be marked wrong"]
    else:
        assert said == []


def wordings(item: ShortAnswer, langs: tuple[str, ...]) -> list[tuple[str, float]]:
    out, seen = [], set()
    for a in item.answers:
        for la in langs:
            for w in item.text[la].answers[a.id]:
                key = w.strip() if item.case_sensitive else w.strip().casefold()
                if key not in seen:
                    seen.add(key)
                    out.append((w.strip(), grade(a.fraction)))
    return out


@settings(max_examples=60)
@given(short_answer_items())
def test_short_answer_through_moodles_readers(item: ShortAnswer) -> None:
    for lang, langs in (("en", ("en",)), ("multi", ("id", "en"))):
        want = wordings(item, langs)
        q, _ = xml_question(item, lang)
        assert q.qtype == "shortanswer" and q.usecase == int(item.case_sensitive)
        assert list(zip(q.answers, q.fractions, strict=True)) == want
        g, _ = gift_question(item, lang)
        assert g.qtype == "shortanswer"
        assert list(zip(g.answers, g.fractions, strict=True)) == want
    q, _ = xml_question(item)
    by_wording = {w: a.id for a in item.answers for w in item.text["en"].answers[a.id]}
    assert q.feedback == [to_html(item.text["en"].feedback.get(by_wording[w], ""))
                          for w in q.answers]


@settings(max_examples=60)
@given(matching_items())
def test_matching_through_moodles_readers(item: Matching) -> None:
    text = item.text["en"]
    premises = [to_inline_html(text.premises[p]) for p in item.pairs] + [""] * len(
        item.distractors)
    responses = [name_html(to_plain(text.responses[r])) for r in item.response_ids]
    q, warnings = xml_question(item)
    assert q.qtype == "match" and q.shuffleanswers == int(item.shuffle)
    assert q.subquestions == premises and q.subanswers == responses
    assert (len(item.response_ids) < 3) == any("at least 3" in w for w in warnings)
    assert any(not r.strip() for r in responses) == any("empty as plain text" in w
                                                        for w in warnings)
    g, _ = gift_question(item)
    assert g.qtype == "match"
    # GIFT: the premise's `->` is written `-&gt;` (the same HTML)
    assert [html.unescape(s) for s in g.subquestions] == [html.unescape(s) for s in premises]
    assert g.subanswers == [r.strip() for r in responses]


def test_matching_response_formatting_is_warned_in_both_formats() -> None:
    # Moodle's menu shows a response through format_string (tags stripped): `x` y shows "x y"
    item = parse_item({"id": "mm", "type": "matching", "topic": "t", "pairs": ["a", "b"],
                       "distractors": ["c"],
                       "text": {la: {"stem": "Match.", "premises": {"a": "A", "b": "B"},
                                     "responses": {"a": "`x` y", "b": "4 < 5", "c": "*z*"}}
                                for la in ("id", "en")}})
    said = "Moodle shows matching responses as plain text (in a menu), without formatting or "
    for export in (moodle_xml.export, gift.export):
        result = export(collection(item), "en")
        assert sorted((w.field, w.message) for w in result.warnings
                      if "plain text" in w.message) == [
            ("text.en.responses.a", said + "images: shown as 'x y'"),
            ("text.en.responses.c", said + "images: shown as 'z'")]
    assert xml_question(item)[0].subanswers == ["x y", "4 &lt; 5", "z"]
    assert gift_question(item)[0].subanswers == ["x y", "4 &lt; 5", "z"]


def test_matching_response_maths_is_warned_in_both_formats() -> None:
    # Moodle's menu is plain text: its TeX/MathJax filters never see it, so the TeX stays raw
    item = parse_item({"id": "mm", "type": "matching", "topic": "t", "pairs": ["a", "b"],
                       "distractors": ["c"],
                       "text": {la: {"stem": "Match.", "premises": {"a": "A", "b": "B"},
                                     "responses": {"a": r"\(\chi^2\)", "b": "chi squared",
                                                   "c": r"about $\sqrt{n}$"}}
                                for la in ("id", "en")}})
    for export in (moodle_xml.export, gift.export):
        result = export(collection(item), "en")
        said = sorted((w.field, w.message) for w in result.warnings if "maths" in w.message)
        assert [f for f, _ in said] == ["text.en.responses.a", "text.en.responses.c"]
        assert "'\\\\(\\\\chi^2\\\\)' is shown as TeX source" in said[0][1]
        assert "'$\\\\sqrt{n}$' is shown as TeX source" in said[1][1]
    # the oracle: Moodle's reader keeps the TeX source as the menu's text
    assert xml_question(item)[0].subanswers[0] == r"\(\chi^2\)"


def test_plain_essay_template_is_plain_text_as_written() -> None:
    # qformat_xml::trans_format knows `plain_text`; any other name (`plain`) is read as HTML
    item = parse_item({"id": "ee", "type": "essay", "topic": "t", "response_format": "plain",
                       "text": {la: {"stem": "Write.", "response_template": "> *a* & <b>"}
                                for la in ("id", "en")}})
    data = moodle_xml.export(collection(item), "en").data
    assert b'<responsetemplate format="plain_text">' in data
    q, _ = xml_question(item)
    assert (q.responsetemplate, q.responsetemplateformat) == ("> *a* & <b>", "plain")


@settings(max_examples=60)
@given(essay_items())
def test_essay_through_moodles_readers(item: Essay) -> None:
    text = item.text["en"]
    q, _ = xml_question(item)
    assert q.qtype == "essay" and q.responseformat == item.response_format
    assert (q.responserequired, q.responsefieldlines) == (int(item.response_required),
                                                           item.lines)
    assert (q.minwordlimit, q.maxwordlimit) == (item.min_words, item.max_words)
    assert q.graderinfo == to_html(text.grader_info or "")
    template = text.response_template or ""
    if item.response_format == "editor":
        assert (q.responsetemplate, q.responsetemplateformat) == (
            to_html(template) if template else "", "html")
    else:
        # stored as FORMAT_PLAIN (Moodle reads a format name it does not know as HTML)
        assert (q.responsetemplate, q.responsetemplateformat) == (template.strip(), "plain")
    assert q.penalty == 0
    g, warnings = gift_question(item)
    assert g.qtype == "essay" and g.generalfeedback == to_html(text.explanation or "")
    lost = (item.response_format != "editor" or not item.response_required or item.lines != 15
            or item.min_words or item.max_words or text.grader_info or text.response_template)
    assert bool(lost) == any("cannot carry an essay" in w for w in warnings)


@settings(max_examples=60)
@given(ordering_items())
def test_ordering_through_moodles_reader_and_left_out_of_gift(item: Ordering) -> None:
    q, _ = xml_question(item)
    assert q.qtype == "ordering"
    assert q.answers == [to_inline_html(item.text["en"].options[o]) for o in item.options]
    assert q.gradingtype == item.grading.upper() and q.selecttype == "ALL"
    assert q.selectcount == len(item.options)
    result = gift.export(collection(item), "en")
    assert read_gift(result.data.decode()) == []
    assert [w.message for w in result.warnings if "no ordering" in w.message]


def test_moodle_settings_written_in_xml_and_said_once_in_gift() -> None:
    base = {"id": "qq", "topic": "t", "options": ["a", "b"], "key": "a",
            "text": {"en": {"stem": "S", "options": {"a": "A", "b": "B"}}}}
    item = parse_item({**base, "lms": {"moodle": {"penalty": 0.1, "answer_numbering": "iii"}}})
    q, _ = xml_question(item)
    assert q.penalty == 0.1 and q.answernumbering == "iii"
    plain = parse_item(base)
    assert xml_question(plain)[0].penalty == 0.3333333
    messages = [w.message for w in gift.export(collection(item, plain.model_copy(
        update={"id": "rr"})), "en").warnings]
    assert len([m for m in messages if "penalty or answer numbering" in m]) == 1
    assert not [m for m in gift.export(collection(plain), "en").warnings
                if "penalty" in m.message]


def test_stimulus_before_each_items_text_in_both_formats() -> None:
    stim = Stimulus.model_validate({"type": "stimulus", "id": "st", "text": {
        "id": {"text": "Tabel {a=b}"}, "en": {"text": "Table {a=b}"}}})
    items = [parse_item({"id": f"qq{n}", "topic": "t", "type": "numerical", "stimulus": "st",
                         "answers": [{"id": "x", "value": n}],
                         "text": {"id": {"stem": f"Soal {n}"}, "en": {"stem": f"Item {n}"}}})
             for n in (1, 2)]
    c = collection(*items, stimuli={"st": stim})
    for fmt, read in ((moodle_xml, lambda d: read_xml(d)), (gift, lambda d: read_gift(d.decode()))):
        qs = [q for q in read(fmt.export(c, "en").data) if q.qtype != "category"]
        assert [q.questiontext for q in qs] == [f"<p>Table {{a=b}}</p>\n<p>Item {n}</p>"
                                                for n in (1, 2)]
        multi = [q for q in read(fmt.export(c, "multi").data) if q.qtype != "category"]
        assert multilang(multi[0].questiontext, "id").startswith("<p>Tabel {a=b}</p>")
    alone = moodle_xml.export(collection(items[0]), "en")
    assert any("not in this collection" in w.message for w in alone.warnings)


def test_names_cut_at_a_word_within_255_characters() -> None:
    stem = "Moodle has to " + "shortened " * 20 + "this"
    item = parse_item({"id": "qq", "topic": "t", "options": ["a", "b"], "key": "a",
                       "text": {la: {"stem": ("& " * 60) + stem if la == "id" else stem,
                                     "options": {"a": "A", "b": "B"}} for la in ("id", "en")}})
    q, _ = xml_question(item, "en")
    assert q.name.endswith(" shortened ...") and len(q.name) <= 80
    multi, warnings = xml_question(item, "multi")
    assert len(multi.name) <= 255
    assert multi.name == moodle_name(item, ("id", "en"))
    assert not [w for w in warnings if "name" in w]


def test_each_languages_file_imports_into_categories_of_its_own() -> None:
    """Moodle drops an idnumber already used in the category (qformat_default::importprocess):
    the -id and -en files imported into one course must not share a category."""
    item = parse_item({"id": "qq", "topic": "a/b", "options": ["a", "b"], "key": "a",
                       "text": {la: {"stem": "S", "options": {"a": "A", "b": "B"}}
                                for la in ("id", "en")}})
    titled = Collection(id="b", title={"id": "Kuis / Ujian", "en": "Quiz"},
                        languages=("id", "en"), items=[item], category="b",
                        default_language="id")
    same = Collection(id="b", title={"id": "Quiz", "en": "Quiz"}, languages=("id", "en"),
                      items=[item], category="b", default_language="id")
    for c, roots in ((titled, {"id": "Kuis // Ujian", "en": "Quiz"}),
                     (same, {"id": "Quiz (id)", "en": "Quiz (en)"})):
        placed = []
        for fmt, read in ((moodle_xml, read_xml), (gift, lambda d: read_gift(d.decode()))):
            for lang in ("id", "en"):
                category = ""
                for q in read(fmt.export(c, lang).data):
                    if q.qtype == "category":
                        category = q.category
                    else:
                        placed.append((fmt.FORMAT, category, q.idnumber))
                assert category == f"$course$/top/{roots[lang]}/a/b"
        for fmt in (moodle_xml.FORMAT, gift.FORMAT):
            pairs = [(cat, idn) for f, cat, idn in placed if f == fmt]
            assert len(set(pairs)) == len(pairs) == 2


def test_a_field_missing_in_one_language_is_shown_from_the_other_and_named() -> None:
    item = parse_item({"id": "qq", "topic": "t", "options": ["a", "b"], "key": "a",
                       "text": {"id": {"stem": "Soal", "options": {"a": "A", "b": "B"},
                                       "explanation": "Karena *itu*.",
                                       "feedback": {"a": "Ya"}},
                                "en": {"stem": "Item", "options": {"a": "A", "b": "B"},
                                       "feedback": {"a": "Yes"}}}})
    result = moodle_xml.export(collection(item), "multi")
    [q] = [q for q in read_xml(result.data) if q.qtype != "category"]
    for lang in ("id", "en"):  # every reader sees the explanation, in the language it has
        assert multilang(q.generalfeedback, lang) == "<p>Karena <em>itu</em>.</p>"
    assert multilang(q.feedback[0], "en") == "<p>Yes</p>"
    [w] = [w for w in result.warnings if w.field == "text.en.explanation"]
    assert w.message == "no 'en' text for this field: readers in 'en' see the 'id' text"


def test_an_item_in_none_of_the_files_languages_is_written_in_its_own_in_multi() -> None:
    """`multi` writes every item: one with text only in a language the file does not list
    (`fr` in an `id`/`en` file) is shown in that language to every reader, as the warnings
    say, not left out."""
    item = parse_item({"id": "qq", "topic": "t", "options": ["a", "b"], "key": "a",
                       "text": {"fr": {"stem": "Lequel ?", "options": {"a": "A", "b": "B"}}}})
    for fmt, read in ((moodle_xml, read_xml), (gift, lambda d: read_gift(d.decode("utf-8")))):
        result = fmt.export(collection(item), "multi")
        [q] = [q for q in read(result.data) if q.qtype != "category"]
        for lang in ("id", "en"):
            assert multilang(q.questiontext, lang) == "<p>Lequel ?</p>", fmt
        assert sorted((w.field, w.message) for w in result.warnings if w.item == "qq") == [
            ("text.en", "no 'en' text; the 'fr' text is written in its place"),
            ("text.id", "no 'id' text; the 'fr' text is written in its place"),
        ], fmt


def test_titles_are_plain_text_byte_exact_in_both_formats() -> None:
    title = "Use `dict[k]` with *args and __init__ & 2*3*4 <b>"
    item = parse_item({"id": "qq", "topic": "t", "options": ["a", "b"], "key": "a",
                       "text": {"en": {"title": title, "stem": "S",
                                       "options": {"a": "A", "b": "B"}}}})
    want = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert xml_question(item)[0].name == want
    assert gift_question(item)[0].name == want


def test_grades_not_adding_up_are_imported_as_they_are_and_the_warning_says_so() -> None:
    item = parse_item({"id": "qq", "topic": "t", "type": "multiple_response",
                       "options": ["a", "b", "c"], "key": ["a", "b"],
                       "weights": {"a": 1, "b": 1, "c": 0},
                       "text": {"en": {"stem": "S", "options": {"a": "A", "b": "B", "c": "C"}}}})
    q, warnings = xml_question(item)
    assert q.fractions == [1.0, 1.0, 0.0]  # Moodle's importer keeps them (no total check)
    [w] = [w for w in warnings if "add up" in w]
    assert "Moodle 4.5 imports the question as it is" in w and "gets 100%" in w
    assert "fewer right options already earn full marks" in w


# --- gift-pegjs, an independent GIFT grammar --------------------------------------------------


@pytest.fixture(scope="module")
def pegjs():
    p = start_gift_pegjs()
    yield p
    p.close()


def pegjs_question(pegjs, item: Item) -> dict:
    return pegjs.parse(gift.export(collection(item), "en").data.decode())[-1]


@settings(max_examples=40)
@given(item=numerical_items())
def test_numerical_through_gift_pegjs(pegjs, item: Numerical) -> None:
    q = pegjs_question(pegjs, item)
    assert q["type"] == "Numerical"
    for a, choice in zip(item.answers, q["choices"], strict=True):
        assert choice["weight"] == pytest.approx(grade(a.fraction) * 100)
        number = choice["text"]
        if a.value is not None:
            assert number["number"] == pytest.approx(a.value)
            assert number.get("range", 0) == pytest.approx(a.tolerance)
        else:
            assert (number["numberLow"], number["numberHigh"]) == pytest.approx((a.min, a.max))


@settings(max_examples=40)
@given(item=short_answer_items())
def test_short_answer_through_gift_pegjs(pegjs, item: ShortAnswer) -> None:
    q = pegjs_question(pegjs, item)
    assert q["type"] == "Short"
    want = wordings(item, ("en",))
    assert [c["text"]["text"] for c in q["choices"]] == [w for w, _ in want]
    assert [c["weight"] / 100 for c in q["choices"]] == pytest.approx([f for _, f in want])


@settings(max_examples=40)
@given(item=matching_items())
def test_matching_and_essay_through_gift_pegjs(pegjs, item: Matching) -> None:
    result = gift.export(collection(item), "en")
    if any("empty as plain text" in w.message for w in result.warnings):
        return  # a response with no plain text (`>`): warned, and not a pair either reader keeps
    q = pegjs.parse(result.data.decode())[-1]
    assert q["type"] == "Matching"
    assert len(q["matchPairs"]) == len(item.response_ids)
    assert [p["subquestion"]["text"] == "" for p in q["matchPairs"]] == [
        r not in item.pairs for r in item.response_ids]
    essay = parse_item({"id": "ee", "topic": "t", "type": "essay",
                        "text": {"en": {"stem": "Write.", "explanation": "Model: x = y"}}})
    e = pegjs_question(pegjs, essay)
    assert e["type"] == "Essay" and e["globalFeedback"]["text"] == "<p>Model: x = y</p>"
