"""Mathematics in Moodle XML and GIFT: the TeX of every maths span comes back exactly, between
`\\(` `\\)` or `\\[` `\\]`, through the ports of Moodle's readers (GIFT's escaping of `{ } = ~ #
:` and backslashes included), for the maths test bank and for random TeX-like strings."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dpassess.bank.load import load_bank
from dpassess.export import Collection
from dpassess.export.moodle import gift, moodle_xml
from dpassess.markup.maths import find_maths
from dpassess.model import parse_item
from test_export_moodle_oracle import multilang, read_gift, read_xml

MATHS_BANK = Path(__file__).parent / "banks" / "maths"

# `\(tex\)` / `\[tex\]` in Moodle's stored HTML, as MathJax's FindTeX finds them: after the
# opening delimiter a backslash and the character after it are one unit (`\\` is TeX's line
# break, not the start of `\]`), braces nest, and the first closing delimiter outside braces
# ends the span
_START = re.compile(r"\\[(\[]")
_SCAN = {"(": re.compile(r"(\\\))|\\.|([{}])", re.S), "[": re.compile(r"(\\\])|\\.|([{}])", re.S)}


def tex_in(text: str) -> list[str]:
    """The TeX of each maths span of stored HTML, entities decoded (the browser's view)."""
    text = html.unescape(text)
    spans, i = [], 0
    while (start := _START.search(text, i)) is not None:
        braces = 0
        for m in _SCAN[start.group()[1]].finditer(text, start.end()):
            if m.group(1) and braces == 0:
                spans.append(text[start.end():m.start()])
                i = m.end()
                break
            if m.group(2) == "{":
                braces += 1
            elif m.group(2) == "}" and braces:
                braces -= 1
        else:
            break  # never closed: not maths
    return spans


def read(fmt: str, data: bytes):
    qs = read_xml(data) if fmt == "moodle-xml" else read_gift(data.decode("utf-8"))
    return [q for q in qs if q.qtype != "category"]


def source_tex(item, lang: str) -> list[str]:
    """Every maths span of the item's texts in `lang`, in the order Moodle's fields hold them:
    stem, explanation, then each option's text and feedback."""
    c = item.text[lang]
    fields = [c.stem, c.explanation or ""]
    if item.type.value == "true_false":  # Moodle shows its own words for the options
        return [m.tex for f in [*fields, c.feedback.get("true", ""), c.feedback.get("false", "")]
                for m in find_maths(f)]
    for oid in item.option_ids:
        fields += [item.option_text(lang, oid), c.feedback.get(oid, "")]
    return [m.tex for f in fields for m in find_maths(f)]


def stored_tex(q) -> list[str]:
    fields = [q.questiontext, q.generalfeedback]
    if q.qtype == "truefalse":
        fields += [q.feedbacktrue, q.feedbackfalse]
    for a, f in zip(q.answers, q.feedback, strict=True):
        fields += [a, f]
    return [t for f in fields for t in tex_in(f)]


@pytest.mark.parametrize("fmt", ["moodle-xml", "gift"])
@pytest.mark.parametrize("lang", ["id", "en", "multi"])
def test_maths_bank_gives_back_exactly_the_tex(fmt: str, lang: str) -> None:
    bank = load_bank(MATHS_BANK)
    collection = Collection.from_bank(bank)
    exporter = moodle_xml if fmt == "moodle-xml" else gift
    questions = read(fmt, exporter.export(collection, lang).data)
    by_id = {it.id: it for it in collection.items}
    assert questions
    for q in questions:
        item = by_id[q.idnumber]
        if not hasattr(item, "option_ids"):
            continue
        for la in (("id", "en") if lang == "multi" else (lang,)):
            shown = q if lang != "multi" else _shown(q, la)
            assert stored_tex(shown) == source_tex(item, la), (q.idnumber, la)


def _shown(q, lang: str):
    """The question as a reader in `lang` sees it through the multilang filter."""
    from dataclasses import replace
    return replace(q, questiontext=multilang(q.questiontext, lang),
                   generalfeedback=multilang(q.generalfeedback, lang),
                   answers=[multilang(a, lang) for a in q.answers],
                   feedbacktrue=multilang(q.feedbacktrue, lang),
                   feedbackfalse=multilang(q.feedbackfalse, lang),
                   feedback=[multilang(f, lang) for f in q.feedback])


# TeX-like: commands, braces, GIFT's specials, HTML's, backslashes (never `\)` or `\(`, which
# end or open a span, nor a backslash at the end)
_piece = st.one_of(
    st.sampled_from(["\\frac{a}{b}", "\\{", "\\}", "\\#", "\\sim", "\\colon", "\\\\", "\\,",
                     "\\text{a = b}", "x_{i}", "e^{-x}", "{", "}", "=", "~", "#", ":", "&",
                     "<", ">", "%", "'", '"', "*", "_", "a*b*c", "->", "//", "[", "]"]),
    st.text(alphabet="abcxyz0123456789+-/|., ", min_size=1, max_size=4),
)
tex_like = st.lists(_piece, min_size=1, max_size=8).map("".join).filter(
    lambda t: t.strip() == t and t.strip() != "")


@settings(max_examples=150)
@given(tex_like, st.booleans())
@example("\\\\]", True)  # `\\]`: a line break, then `]`
def test_random_tex_with_gift_specials_survives_both_formats(tex: str, display: bool) -> None:
    span = f"\\[{tex}\\]" if display else f"\\({tex}\\)"
    item = parse_item({"id": "mm", "topic": "t", "options": ["a", "b"], "key": "a",
                       "text": {"en": {"stem": f"Find {span} now", "options": {
                           "a": span, "b": "B"}, "feedback": {"a": f"So {span}."}}}})
    found = [m.tex for m in find_maths(f"Find {span} now")]
    if found != [tex] or tex_in(html.escape(f"Find {span} now")) != [tex]:
        return  # not one maths span to the Markdown parser or to MathJax (unbalanced braces)
    collection = Collection(id="b", title={"en": "B"}, languages=("en",), items=[item],
                            category="b", default_language="en")
    for fmt, exporter in (("moodle-xml", moodle_xml), ("gift", gift)):
        [q] = read(fmt, exporter.export(collection, "en").data)
        assert tex_in(q.questiontext) == [tex]
        assert tex_in(q.answers[0]) == [tex]
        assert tex_in(q.feedback[0]) == [tex]
