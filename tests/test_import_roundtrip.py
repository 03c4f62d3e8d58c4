"""Export then import gives the same item, per format and language mode, over hostile text.

"The same" is every field the format carries (docs/import.md lists what each cannot carry):
Markdown is compared by what it renders to, option ids by position where the format has none,
fractions to Moodle's precision (7 decimals), titles by their plain text; in a file of several
languages, a field one language lacks as the LMS shows it: the text of a language that has it.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable

import lxml.html
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from lxml import etree

from conftest import SEED_BANK
from dpassess.bank.load import load_banks
from dpassess.diagnostics import Diagnostic
from dpassess.export import EXPORTERS, MULTI, Collection
from dpassess.export.moodle.texts import BLOCK_TAGS
from dpassess.importers import READERS
from dpassess.importers.common import option_ids
from dpassess.importers.qti21 import _html as qti_html
from dpassess.markup.markdown import item_title, to_html, to_inline_html
from dpassess.markup.xhtml import parse as xhtml_parse
from dpassess.model import Item, ItemType, parse_item
from strategies import LANGS, items

POSITIONAL = {"gift", "moodle-xml"}  # formats whose answers have no ids


def reader(fmt: str):
    return importlib.import_module(READERS[fmt])


def collection(its: list[Item]) -> Collection:
    return Collection(id="test-bank", title={la: f"Bank {la}" for la in LANGS}, languages=LANGS,
                      items=its, category="test-bank", default_language=LANGS[0])


def same(html: str) -> bytes:
    """The canonical form of `html`, without the whitespace between blocks (which no browser
    shows, and which the multilang form does not keep when the languages differ in shape)."""
    html = html.strip()
    if not html:
        return b""
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    for el in root.iter():
        kids = list(el)
        if kids and kids[0].tag in BLOCK_TAGS and el.text is not None and not el.text.strip():
            el.text = None
        for c, after in zip(kids, [*kids[1:], None], strict=False):
            beside_block = c.tag in BLOCK_TAGS or (after is not None and after.tag in BLOCK_TAGS)
            if c.tail is not None and not c.tail.strip() and (beside_block or (after is None
                                                               and el.tag in BLOCK_TAGS)):
                c.tail = None
    # nor the whitespace at the text's edges, which `strip` leaves before a tag that the parse
    # drops (`x </p>`: a stray end tag) and an importer does not write back
    root.text = (root.text or "").lstrip() or None
    if len(root):
        root[-1].tail = (root[-1].tail or "").rstrip() or None
    else:
        root.text = (root.text or "").rstrip() or None
    return etree.tostring(root, method="c14n")


def shown(htmls: dict[str, str]) -> dict[str, str]:
    """What the readers of each language see of one field of a file in several languages, from
    its HTML in each: a language whose HTML is blank sees the first language that has some.
    The exporter writes a field that one language lacks from the languages that have it (one:
    alone, without spans, so every reader sees it) and warns ("no 'id' text for this field:
    readers in 'id' see the 'en' text"); the importer reads that text back as every language's.
    Where several languages have spans and a reader's has none, Moodle's multilang filter shows
    the first span (moodle/moodle filter/multilang/classes/text_filter.php, process_match:
    "default to the first provided translation", after the reader's language and its explicit
    parents; 'en', the implicit parent of every language, is not among them:
    lib/classes/string_manager_standard.php, get_language_dependencies). With the two languages
    drawn here, a field one lacks has one present."""
    present = [h for h in htmls.values() if h.strip()]  # the exporter's test of "blank"
    return {la: h if h.strip() or not present else present[0] for la, h in htmls.items()}


def view(item: Item, fmt: str, langs: tuple[str, ...],
         written: tuple[str, ...] | None = None) -> dict:
    """The fields of `item` that `fmt` carries, in a form that compares by meaning. `written`:
    the languages of the file `item` was exported to, when several (the expected side of a
    multi round trip), so that a field one of them lacks shows another's text (`shown`)."""
    ids = item.option_ids
    if fmt in POSITIONAL and item.type is not ItemType.true_false:
        rename = dict(zip(ids, option_ids(len(ids)), strict=True))
    else:
        rename = {o: o for o in ids}
    out: dict = {
        "id": item.id,
        "type": item.type,
        "topic": item.topic,
        "tags": item.tags,
        "options": [rename[o] for o in ids],
        "key": sorted(rename[k] for k in item.key),
        "fractions": {rename[o]: round(f, 5) for o, f in item.fractions().items()},
        "weights given": getattr(item, "weights", None) is not None,
    }
    if fmt != "gift":
        out["points"] = item.points
    if fmt in ("qti21", "moodle-xml") and item.type is not ItemType.true_false:
        out["shuffle"] = item.shuffle  # true/false is never shuffled (QTI) or has no setting
    if fmt == "qti21":
        out["locked"] = [o.locked for o in item.options]
        out["status"] = item.status
        out["difficulty"] = item.difficulty

    def field(render: Callable[[str], str]) -> dict[str, str]:
        """The HTML `render(lang)` that the readers of each language see."""
        if written is None:
            return {la: render(la) for la in langs}
        return shown({la: render(la) for la in written})

    stems = field(lambda la: to_html(item.text[la].stem))
    explanations = field(lambda la: to_html(item.text[la].explanation or ""))
    feedback = {o: field(lambda la, o=o: to_html(item.text[la].feedback.get(o, ""))) for o in ids}
    carries_options = item.type is not ItemType.true_false or fmt == "qti21"
    options = {o: field(lambda la, o=o: to_inline_html(item.option_text(la, o)))
               for o in ids} if carries_options else {}
    for la in langs:
        text = {
            # the name every export writes (the stem's first line rendered, then shortened)
            "title": " ".join(item_title(item, la).split()) or item.id,
            "stem": same(stems[la]),
            "feedback": {rename[o]: h for o in ids if (h := same(feedback[o][la]))},
            "explanation": same(explanations[la]),
        }
        if carries_options:
            text["options"] = {rename[o]: same(options[o][la]) for o in ids}
        out[la] = text
    return out


#: Export warnings that mean a text is not carried as written (the exporter says so), so the
#: round trip cannot be exact for that item.
LOSSY = ("removed characters", "&&0", "its own <span>", "first </span>", "blank answers",
         "shortens names", "not in QTI's XHTML", "not allowed inside", "left out",
         "QTI does not allow", "not a language code", "not XML", "empty as plain text",
         "not in the stem as written", "cannot be carried")


def lossy(warnings: list[Diagnostic]) -> bool:
    return any(any(s in w.message for s in LOSSY) for w in warnings)


def empty_block(html: str) -> bool:
    """Whether `html` has a block with nothing in it (`<hr>`, `<blockquote></blockquote>`)."""
    if not html.strip():
        return False
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    return any(el.tag in BLOCK_TAGS and not el.text_content().strip()
               and all(d.tag in BLOCK_TAGS for d in el.iterdescendants())
               for el in root.iterdescendants())


def survives_merge(html: str, *, block: bool) -> bool:
    """Whether `html` comes out of the exporter's multilang merge (lxml.html parse, serialise)
    unchanged, and has no bare text outside elements (which Markdown can only write as a
    paragraph)."""
    if not html.strip():
        return True
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    if block and ((root.text or "").strip() or any((c.tail or "").strip() for c in root)):
        return False
    again = lxml.html.tostring(root, encoding="unicode")[5:-6]
    return same(again) == same(html)


def unmarkable(item: Item) -> bool:
    """Texts the multilang form cannot carry exactly. A block with no content carries no
    language span, so Moodle shows it (empty) in every language (the exporter warns: "block
    structure"). And the exporter parses each language's HTML to merge them, so raw HTML that
    is not well-formed (`<P`, a stray `</p>`) comes out changed, without a warning: reported."""
    fields: dict[str, list[str]] = {}
    for c in item.text.values():
        fields.setdefault("stem", []).append(to_html(c.stem))
        fields.setdefault("explanation", []).append(to_html(c.explanation or ""))
        for o in item.option_ids:
            fields.setdefault(f"feedback {o}", []).append(to_html(c.feedback.get(o, "")))
            if item.type is not ItemType.true_false:
                fields.setdefault(f"option {o}", []).append(to_inline_html(c.options[o]))
    if item.type is not ItemType.true_false and any(
            re.search(r"<p[\s>]", to_inline_html(c.options[o]), re.I)
            for c in item.text.values() for o in item.option_ids):
        # An option that renders as a paragraph of its own (raw `<P> 0`) reads back as its
        # text: importers drop the one paragraph Moodle's editor wraps an answer in.
        return True
    for name, htmls in fields.items():
        if any(empty_block(h) for h in htmls):
            return True
        block = not name.startswith("option")
        if len(set(htmls)) > 1 and not all(survives_merge(h, block=block) for h in htmls):
            return True
    return False


def malformed_for_qti(item: Item) -> bool:
    """HTML that the QTI exporter's tolerant parser (used when the HTML is not well-formed XML)
    reads differently from browsers and lxml (`<P` at the end, a stray `</p>`, an unclosed
    `<P>` inside a paragraph): it is changed without a warning (reported)."""
    for c in item.text.values():
        texts = [to_html(c.stem), to_html(c.explanation or ""),
                 *(to_html(f) for f in c.feedback.values()),
                 *(to_inline_html(o) for o in c.options.values())]
        if any(re.search(r"<p[\s>]", to_inline_html(o), re.I) for o in c.options.values()):
            return True  # raw <P> in an option: render.to_inline_html counts "<p>" by case
        for h in texts:
            root = xhtml_parse(h, set())
            if same(qti_html(root.text, list(root))) != same(h):
                return True
    return False


def round_trip(its: list[Item], fmt: str, lang: str, *, property_test: bool = True) -> bool:
    """Export `its` in `fmt`, import the file back and compare. Whether it compared: a property
    test passes over a format whose exporter reports a text it cannot carry as written (False);
    anywhere else that fails."""
    result = EXPORTERS[fmt].export(collection(its), lang)
    exact = not lossy(result.warnings) and not (
        lang == MULTI and any(unmarkable(i) for i in its)) and not (
        fmt == "qti21" and any(malformed_for_qti(i) for i in its))
    if not exact:
        assert property_test, "the exporter reports a text it cannot carry as written"
        return False
    langs = LANGS if lang == MULTI else (lang,)
    written = LANGS if lang == MULTI else None
    read_lang = None if lang == MULTI else lang
    if lang == MULTI and b"multilang" not in result.data:
        # every text is the same in both languages: nothing says which languages they are
        read_lang, langs = LANGS[0], (LANGS[0],)
    imported = reader(fmt).read(result.data, f"export.{fmt}", read_lang)
    assert imported.skipped == []
    assert [i.id for i in imported.items] == [i.id for i in its]
    for original, back in zip(its, imported.items, strict=True):
        assert back.languages == langs
        # the importer's item as it is, against what the target LMS shows of the original
        assert view(back, fmt, langs) == view(original, fmt, langs, written)
    return True


item_lists = st.lists(items(), min_size=1, max_size=3, unique_by=lambda i: i.id)


#: Found by hypothesis (a commit's seed): an image without a source, which QTI's XHTML cannot
#: hold; the exporter says so ("cannot be carried") and leaves the element out.
IMAGE_WITHOUT_SOURCE = parse_item({
    "id": "a0", "type": "single_choice", "topic": "a", "options": ["a", "a0"], "key": "a",
    "text": {"id": {"stem": "0", "options": {"a": "0", "a0": "0"}},
             "en": {"stem": "<IMG >", "options": {"a": "0", "a0": "0"}}},
})


#: Found by hypothesis (the random profile): a raw-HTML comment holding a blank line, which the
#: importer's raw-HTML fallback changed (a blank line ends an HTML block; a character
#: reference is not read inside a comment); in `multi`, beside another language's paragraph.
COMMENT_WITH_BLANK_LINE = parse_item({
    "id": "q1", "type": "single_choice", "topic": "t", "options": ["a", "b"], "key": "a",
    "text": {"id": {"stem": "<!--0\n\n0-->", "options": {"a": "x", "b": "y"}},
             "en": {"stem": "s", "options": {"a": "x", "b": "z"}}},
})


#: Found by hypothesis (the random profile): in `multi`, a stem whose blocks differ between the
#: languages comes back as raw HTML (`<blockquote><p>…`), a first line longer than 80
#: characters whose text is not; the view compared the model's cut of that Markdown source,
#: not the name the exports write (its text, rendered first).
QUOTE_IN_ONE_LANGUAGE = parse_item({
    "id": "a0", "type": "single_choice", "topic": "a", "options": ["a", "a0"], "key": "a",
    "shuffle": False,
    "text": {"id": {"stem": "0", "options": {"a": "0", "a0": "0"}},
             "en": {"stem": "> 0 0 0 0 0 0 00 0000000 00000000 00000000 00000000",
                    "options": {"a": "0", "a0": "0"}}},
})


#: The gap a 600-example run found: in `multi`, a field one language lacks is written from the
#: other alone (warned), and the importer reads it back in both. Here the texts are otherwise the
#: same, so the GIFT file has no language spans at all and is read in the first language.
FEEDBACK_IN_ONE_LANGUAGE = parse_item({
    "id": "q2", "type": "single_choice", "topic": "t", "options": ["a", "b"], "key": "a",
    "text": {"id": {"stem": "s", "options": {"a": "x", "b": "y"}},
             "en": {"stem": "s", "options": {"a": "x", "b": "y"}, "feedback": {"a": "f"}}},
})


#: Found beside it: a field is missing where its Markdown renders as nothing (`[0]: 0` is a link
#: reference definition), as the exporter tests it, not only where the key is absent.
BLANK_IN_ONE_LANGUAGE = parse_item({
    "id": "q3", "type": "single_choice", "topic": "t", "options": ["a", "b"], "key": "a",
    "text": {"id": {"stem": "s", "options": {"a": "x", "b": "y"}, "feedback": {"a": "[0]: 0"},
                    "explanation": "e"},
             "en": {"stem": "t", "options": {"a": "x", "b": "y"}, "feedback": {"a": "f"},
                    "explanation": "[0]: 0"}},
})


#: The formats a file of each language goes through (QTI 2.1 writes no `multi` file).
FORMATS = {**{lang: ("gift", "moodle-xml", "qti21") for lang in LANGS},
           MULTI: ("gift", "moodle-xml")}


@pytest.mark.parametrize("lang", [*LANGS, MULTI])
# Each drawn list goes through every format, since drawing it is most of the cost. A format that
# reports a text it cannot carry is passed over for that list, so half again as many lists as
# the profile's are drawn, and each format still compares about as many lists.
@settings(max_examples=settings.default.max_examples * 3 // 2)
@given(its=item_lists)
@example(its=[IMAGE_WITHOUT_SOURCE])
@example(its=[COMMENT_WITH_BLANK_LINE])
@example(its=[QUOTE_IN_ONE_LANGUAGE])
@example(its=[FEEDBACK_IN_ONE_LANGUAGE])
@example(its=[BLANK_IN_ONE_LANGUAGE])
def test_round_trip_through_every_format(its, lang):
    compared = [fmt for fmt in FORMATS[lang] if round_trip(its, fmt, lang)]
    assume(compared)


@st.composite
def weighted_items(draw) -> Item:
    """Multiple-response items with explicit weights from Moodle's grade list (the key is the
    options with a positive weight, as every format derives it)."""
    item = draw(items(types=(ItemType.multiple_response,)))
    grades = [1.0, 0.5, 0.3333333, 0.25, 0.2, 0.0, -0.5, -0.25, -1.0, 0.1, 0.9]
    weights = {o: draw(st.sampled_from(grades)) for o in item.option_ids}
    first = item.option_ids[0]
    if max(weights.values()) <= 0:
        weights[first] = 1.0
    key = tuple(o for o in item.option_ids if weights[o] > 0)
    return item.model_copy(update={"weights": weights, "key": key})


@pytest.mark.parametrize("fmt", ["gift", "moodle-xml", "qti21"])
@given(item=weighted_items())
def test_weights_round_trip(item, fmt):
    n_right = len(item.key)
    n_wrong = len(item.options) - n_right
    default = {o: (1 / n_right if o in item.key else -1 / n_wrong if n_wrong else 0.0)
               for o in item.option_ids}
    assume(any(abs(item.weights[o] - default[o]) > 1e-5 for o in item.option_ids))
    assume(round_trip([item], fmt, LANGS[0]))


@pytest.mark.parametrize(("fmt", "lang"), [
    ("gift", "id"), ("gift", "en"), ("gift", MULTI), ("moodle-xml", "id"), ("moodle-xml", "en"),
    ("moodle-xml", MULTI), ("qti21", "id"), ("qti21", "en"),
])
def test_seed_bank_round_trip(fmt, lang):
    bank = Collection.from_bank(load_banks([SEED_BANK])[0])
    round_trip(list(bank.items), fmt, lang, property_test=False)


def test_blank_lines_inside_pre_survive_the_raw_html_fallback() -> None:
    """Found by hypothesis: an unclosed code fence renders as <pre> with a blank line and no
    closing newline, which no fence reproduces; the raw HTML kept it only without the blank
    line (one ends an HTML block), so the code changed."""
    from dpassess.importers.html_markdown import html_to_markdown, renders_as

    html = to_html("```\n\n0\n\n0")
    md = html_to_markdown(html)
    assert renders_as(md, html, inline=False) and "\n\n" not in md


def test_multilang_merge_of_malformed_html_attributes() -> None:
    """Found by hypothesis: `<P 0` parses as <p> with an attribute named `0<`, which lxml
    cannot set on a new element; the merge leaves it out and says so."""
    from dpassess.export.moodle.texts import multilang

    html, problems = multilang((("id", "0"), ("en", to_inline_html("<P 0"))))
    assert "attribute" in problems and 'lang="en"' in html
    assert "0<=" not in html  # the attribute `0<` is left out
