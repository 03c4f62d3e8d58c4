"""GIFT export: golden files for the seed bank, the rules of Moodle's GIFT importer, and round
trips through two readers written by others' rules: gift-pegjs (npm, an independent PEG parser,
run by tests/js/parse-gift.js) and a line-by-line port of Moodle's qformat_gift
(tests/test_export_moodle_oracle.py).

gift-pegjs is installed by `npm ci --prefix tests/js`. Rewrite the golden files with pytest's
`--update-goldens` (see tests/test_export_moodle.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from conftest import ROOT
from dpassess.export import EXPORTERS, Collection
from dpassess.export.moodle.gift import escape
from dpassess.markup.markdown import to_html, to_inline_html
from dpassess.model import Content, Item, ItemType, parse_item
from strategies import LANGS
from test_export_moodle import (
    GOLDEN,
    by_question,
    check_golden,
    clean,
    expected_fractions,
    mr_item,
    name_of,
    one,
    seed,
    tf_item,
    unique_items,
    visible,
)
from test_export_moodle_oracle import match_grade, multilang, read_gift

JS = Path(__file__).parent / "js"


def export(collection, lang):
    return EXPORTERS["gift"].export(collection, lang)


# --- gift-pegjs, one long-running node process --------------------------------------------------


class GiftPegjs:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            ["node", str(JS / "parse-gift.js")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, encoding="utf-8", cwd=JS,
        )

    def parse(self, text: str) -> list[dict]:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(text) + "\n")
        self.proc.stdin.flush()
        out = json.loads(self.proc.stdout.readline())
        assert out["ok"], f"gift-pegjs: {out['error']} at {out.get('location')}"
        return out["questions"]

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=10)


def start_gift_pegjs() -> GiftPegjs:
    """The gift-pegjs process, or a skip that says what is missing: node, or gift-pegjs in
    tests/js/node_modules (`make test` installs it when npm is there). In CI (`CI` set) a
    missing gift-pegjs under node is a failure, so that the cross-check is never lost there."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if not (JS / "node_modules" / "gift-pegjs").exists():
        message = ("gift-pegjs is not installed: run `make tests/js/node_modules/.installed` "
                   "(npm ci --prefix tests/js)")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return GiftPegjs()


@pytest.fixture(scope="module")
def pegjs():
    p = start_gift_pegjs()
    yield p
    p.close()


# --- golden files ---------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["id", "en", "multi"])
def test_seed_bank_matches_golden(request, lang):
    result = export(seed(), lang)
    fixed = any(not it.shuffle for it in seed().items if it.type.value != "true_false")
    assert [(w.item, w.field) for w in result.warnings if w.field == "shuffle"] == (
        [(None, "shuffle")] if fixed else [])
    check_golden(request.config, GOLDEN / "gift" / f"data-parallelism-{lang}.txt", result.data)
    assert export(seed(), lang).data == result.data


@pytest.mark.parametrize("lang", ["id", "en", "multi"])
def test_committed_build_output_is_fresh(lang):
    built = ROOT / "exports" / "gift" / f"data-parallelism-{lang}.txt"
    if not built.exists():
        pytest.skip("no exports/ committed yet")
    assert built.read_bytes() == export(seed(), lang).data, "stale: run `dpassess build`"


@pytest.mark.parametrize("lang", ["id", "en", "multi"])
def test_seed_bank_reads_back_in_both_readers(lang, pegjs):
    text = export(seed(), lang).data.decode()
    moodle = [q for q in read_gift(text) if q.qtype != "category"]
    peg = [q for q in pegjs.parse(text) if q["type"] != "Category"]
    assert len(moodle) == len(peg) == 8
    for m, p in zip(moodle, peg, strict=True):
        assert m.questiontext == p["stem"]["text"] and m.name == p["title"]
        assert m.idnumber == p["id"] and m.tags == p["tags"]


# --- the rules of Moodle's importer ------------------------------------------------------------


def blocks(text: str) -> list[list[str]]:
    return [b.split("\n") for b in text.rstrip("\n").split("\n\n")]


def test_blocks_have_no_blank_or_comment_lines_inside():
    text = export(seed(), "multi").data.decode()
    for block in blocks(text):
        assert all(line.strip() for line in block)
        if block[0].startswith("$CATEGORY:"):
            assert len(block) == 1
            continue
        assert re.fullmatch(r"// \[id:[a-z0-9-]+\]( \[tag:[a-z0-9._-]+\])*", block[0])
        assert not any(line.strip().startswith("//") for line in block[1:])
        assert block[1].startswith("::") and "::[html]<p>" in block[1]


def unescaped(text: str, char: str) -> int:
    return len(re.findall(r"(?<!\\)(?:\\\\)*" + re.escape(char), text))


def test_multiple_response_has_no_equals_sign_and_grades_have_five_decimals():
    text = export(one(mr_item({"a": 1 / 3, "b": 2 / 3, "c": -1 / 7}, shuffle=False)),
                  "en").data.decode()
    answers = text[text.index("{") + 1:text.rindex("}")]
    assert unescaped(answers, "=") == 0
    assert re.findall(r"~%(-?[0-9.]+)%", answers) == ["33.33333", "66.66667", "-14.28571"]
    [_, q] = read_gift(text)
    assert q.single == 0
    assert q.fractions == pytest.approx([0.3333333, 0.6666667, -0.1428571])


def test_true_false_is_upper_case_with_wrong_then_right_feedback(pegjs):
    text = export(one(tf_item()), "en").data.decode()
    assert "{FALSE#<p>No\\: it is blue.</p>#<p>Right.</p>}" in text
    [_, q] = read_gift(text)
    assert (q.qtype, q.correctanswer) == ("truefalse", 0)
    assert q.feedbacktrue == "<p>No: it is blue.</p>" and q.feedbackfalse == "<p>Right.</p>"
    [_, p] = pegjs.parse(text)
    # gift-pegjs calls the first feedback `trueFeedback`; Moodle shows it when the answer is
    # wrong (qformat_gift::split_truefalse_comment), which is what the export means.
    assert p["isTrue"] is False and p["trueFeedback"]["text"] == "<p>No: it is blue.</p>"


def test_escapes_every_special_including_html_attributes():
    assert escape('a\\b ~=#{}: <span lang="en">\nx') == (
        'a\\\\b \\~\\=\\#\\{\\}\\: <span lang\\="en">\\nx')


def test_warns_that_gift_cannot_set_shuffling_numbering_or_points():
    result = export(one(tf_item(), mr_item(None, shuffle=False)), "en")
    w = {(x.item, x.field): x.message for x in result.warnings}
    assert "keep the answers in the order this file gives them" in w[(None, "shuffle")]
    assert "mr-one" in w[(None, "shuffle")] and "tf-one" not in w[(None, "shuffle")]
    assert "not 2.5" in w[("tf-one", "points")]
    # only when some item keeps its order, once per file
    shuffled = export(one(tf_item(), mr_item(None)), "en").warnings
    assert not [x for x in shuffled if x.field == "shuffle"]
    twice = export(one(mr_item(None, shuffle=False), mr_item(None, shuffle=False).model_copy(
        update={"id": "mr-two"})), "en").warnings
    assert len([x for x in twice if x.field == "shuffle"]) == 1


def test_placeholder_lookalike_warns():
    item = tf_item(text={"en": Content(stem='<a title="&&035;">x</a>', options={})})
    result = export(one(item), "en")
    assert ("tf-one", "text.en.stem") in {(w.item, w.field) for w in result.warnings}


# --- hypothesis: round trips ----------------------------------------------------------------------


def check_moodle(q, item: Item, lang: str, category: str) -> None:
    c = item.text[lang]
    # the root is the bank's title (tests/test_export_moodle_types.py names it per language)
    assert category.startswith("$course$/top/Bank")
    assert category.split("/")[3:] == item.topic.split("/")
    assert q.name == name_of(item, lang)
    assert q.questiontext == to_html(c.stem).strip()
    assert q.generalfeedback == to_html(c.explanation or "").strip()
    assert (q.idnumber, q.tags) == (item.id, list(item.tags))
    if item.type is ItemType.true_false:
        assert q.qtype == "truefalse"
        assert q.correctanswer == (1 if item.key == ("true",) else 0)
        assert q.feedbacktrue == to_html(c.feedback.get("true", "")).strip()
        assert q.feedbackfalse == to_html(c.feedback.get("false", "")).strip()
        return
    assert q.qtype == "multichoice"
    assert q.single == (1 if item.type is ItemType.single_choice else 0)
    assert q.answers == [to_inline_html(c.options[o]).strip() for o in item.option_ids]
    assert set(q.answerformats) <= {"html"}
    assert q.feedback == [to_html(c.feedback.get(o, "")).strip() for o in item.option_ids]
    assert q.fractions == pytest.approx(expected_fractions(item), abs=1e-9)
    assert all(match_grade(f) is not None for f in q.fractions)


def check_pegjs(p: dict, item: Item, lang: str, category: str) -> None:
    c = item.text[lang]
    # the root is the bank's title (tests/test_export_moodle_types.py names it per language)
    assert category.startswith("$course$/top/Bank")
    assert category.split("/")[3:] == item.topic.split("/")
    assert p["title"] == name_of(item, lang)
    if c.stem and to_html(c.stem):
        assert p["stem"] == {"format": "html", "text": to_html(c.stem).strip()}
    explanation = to_html(c.explanation or "").strip()
    assert (p["globalFeedback"] or {}).get("text", "") == explanation
    assert (p["id"], p["tags"] or []) == (item.id, list(item.tags))

    def text(x):
        return (x or {}).get("text", "")

    if item.type is ItemType.true_false:
        assert p["type"] == "TF" and p["isTrue"] == (item.key == ("true",))
        right, wrong = (("true", "false") if p["isTrue"] else ("false", "true"))
        assert text(p["trueFeedback"]) == to_html(c.feedback.get(wrong, "")).strip()
        assert text(p["falseFeedback"]) == to_html(c.feedback.get(right, "")).strip()
        return
    choices = p["choices"]
    assert [text(ch["text"]) for ch in choices] == [
        to_inline_html(c.options[o]).strip() for o in item.option_ids]
    assert [text(ch["feedback"]) for ch in choices] == [
        to_html(c.feedback.get(o, "")).strip() for o in item.option_ids]
    got = [1.0 if ch["isCorrect"] else (ch["weight"] or 0) / 100 for ch in choices]
    assert got == pytest.approx(expected_fractions(item), abs=1e-9)


def pegjs_by_question(questions):
    category = ""
    for q in questions:
        if q["type"] == "Category":
            category = q["title"]
        else:
            yield category, q


@given(unique_items, st.sampled_from(LANGS))
def test_round_trip_through_moodles_gift_reader_and_gift_pegjs(pegjs, its, lang):
    assume(all(clean(i) for i in its))
    text = export(one(*its, langs=LANGS), lang).data.decode()
    moodle = list(by_question(read_gift(text)))
    peg = list(pegjs_by_question(pegjs.parse(text)))
    assert len(moodle) == len(peg) == len(its)
    for (cat, q), (pcat, p), item in zip(moodle, peg, its, strict=True):
        check_moodle(q, item, lang, cat)
        check_pegjs(p, item, lang, pcat)


@given(unique_items)
def test_multi_reads_back_each_language(pegjs, its):
    assume(all(clean(i) for i in its))
    result = export(one(*its, langs=LANGS), "multi")
    assume(not any("own <span>" in w.message for w in result.warnings))
    text = result.data.decode()
    got = [q for _, q in by_question(read_gift(text))]
    assert len([p for p in pegjs.parse(text) if p["type"] != "Category"]) == len(got)
    for q, item in zip(got, its, strict=True):
        assert q.idnumber == item.id
        for lang in LANGS:
            c = item.text[lang]
            assert multilang(q.name, lang) == name_of(item, lang)
            assert visible(multilang(q.questiontext, lang)) == visible(to_html(c.stem))
            if item.type is not ItemType.true_false:
                assert [visible(multilang(a, lang)) for a in q.answers] == [
                    visible(to_inline_html(c.options[o])) for o in item.option_ids]
                assert q.fractions == pytest.approx(expected_fractions(item), abs=1e-9)



@pytest.mark.parametrize("text", ["%50% off", "[markdown] *x*", "%", "[html]"])
def test_answer_text_that_looks_like_a_grade_or_format_stays_text(text, pegjs):
    item = mr_item(None, shuffle=False).model_copy(update={"text": {"en": Content(
        stem="s", options={"a": text, "b": "B", "c": "C"})}})
    gift = export(one(item), "en").data.decode()
    [_, q] = read_gift(gift)
    [_, p] = pegjs.parse(gift)
    want = to_inline_html(text)
    assert q.answers[0] == p["choices"][0]["text"]["text"] == want
    assert q.fractions[0] == 0.5 and p["choices"][0]["weight"] == 50


def test_empty_stem_keeps_answers_html_in_both_readers(pegjs):
    item = tf_item(text={"en": Content(title="T", stem="[x]: y", options={},
                                       feedback={"true": "*a*"}, explanation="e")})
    gift = export(one(item), "en").data.decode()
    assert "::T::{FALSE#[html]<p><em>a</em></p>####[html]<p>e</p>}" in gift  # as Moodle writes
    [_, q] = read_gift(gift)
    [_, p] = pegjs.parse(gift)
    assert q.questiontext == "" and q.feedbacktrue == "<p><em>a</em></p>"
    assert p["trueFeedback"] == {"format": "html", "text": "<p><em>a</em></p>"}


def test_an_option_with_a_control_character_and_an_image_is_written_and_reported(tmp_path):
    """A control character is left out (Moodle keeps questions in XML and HTML, which cannot
    hold it), with a warning; finding the option's image must not crash."""
    item = parse_item({"id": "qq", "topic": "t", "options": ["a", "b"], "key": "a",
                       "text": {"en": {"stem": "S", "options": {"a": "x\x01 ![i](img/x.png)",
                                                                "b": "B"}}}})
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "x.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    collection = Collection(id="b", title={"en": "B"}, languages=("en",), items=[item],
                            category="b", default_language="en",
                            paths={"qq": str(tmp_path / "q.yaml")})
    result = export(collection, "en")
    [q] = [q for q in read_gift(result.data.decode()) if q.qtype != "category"]
    assert q.answers[0] == 'x <img src="img/x.png" alt="i" />'
    assert any("cannot embed image files: upload img/x.png" in w.message
               for w in result.warnings)
    assert [(w.field, w.message) for w in result.warnings if "U+0001" in w.message] == [
        ("text.en.options.a", "removed characters XML cannot carry: U+0001")]
