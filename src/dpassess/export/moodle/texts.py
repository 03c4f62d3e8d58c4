"""An item -> its texts as Moodle stores them (HTML, with warnings), the multilang filter form
of several languages, its grades and its category: what Moodle XML and GIFT share.

Every rule here is taken from Moodle's own code (4.5): `question_bank::fraction_options_full`
(lib/questionlib.php), `match_grade_options`, `qtype_multichoice::save_question_options`,
`qformat_default::clean_question_name` and `filter_multilang\\text_filter`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from copy import copy
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import TypeGuard

from lxml import etree
from lxml import html as lxml_html

from dpassess.diagnostics import Diagnostic
from dpassess.export import MULTI, Collection
from dpassess.lms.moodle import (
    MAX_NAME,
    is_multilang_name,
    moodle_name,
    percent,
    snap,
)
from dpassess.markup.markdown import to_html, to_inline_html
from dpassess.markup.media import may_show_images
from dpassess.markup.xmlchars import xml_safe
from dpassess.model import ChoiceBase, Item, MultipleResponse
from dpassess.model.items import TRUE_FALSE_WORDS

# --- grades -----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Grades:
    """Each option's grade for one item, ready to write: `percents` is `percent` of each grade,
    in option order."""

    by_option: dict[str, Decimal]
    percents: dict[str, str]

    def percent(self, option_id: str) -> str:
        return self.percents[option_id]


def grades(item: ChoiceBase, warn: Callable[[str, str], None]) -> Grades:
    """The item's fractions snapped to Moodle's list; a warning for each one Moodle would alter
    and for a multiple-answer item whose positive grades do not add up to 100% (Moodle refuses
    it: `errfractionsaddwrong`). The result may be shared: read only."""
    where = "weights" if isinstance(item, MultipleResponse) and item.weights is not None else "key"
    result, notes = _grades(isinstance(item, MultipleResponse), where,
                            tuple(item.fractions().items()))
    for field_, message in notes:
        warn(field_, message)
    return result


@lru_cache(maxsize=4096)
def _grades(multiple: bool, where: str, fractions: tuple[tuple[str, float], ...]
            ) -> tuple[Grades, tuple[tuple[str, str], ...]]:
    """`grades` of an item's `fractions` (in option order), and its warnings as (field,
    message). Memoised: a bank repeats a few patterns of keys and weights."""
    notes: list[tuple[str, str]] = []
    out: dict[str, Decimal] = {}
    for oid, fraction in fractions:
        grade, exact = snap(fraction)
        if not exact:
            notes.append((f"{where}.{oid}",
                          f"fraction {fraction:g} is not one of Moodle's grades (import would "
                          f"abort); written as the nearest, {percent(grade)}%"))
        out[oid] = grade
    if multiple:
        total = sum((g for g in out.values() if g > 0), Decimal(0))
        if round(float(total), 2) != 1:
            notes.append((where, f"the positive grades add up to {percent(total)}%, not 100%: "
                                 "Moodle refuses this question (errfractionsaddwrong)"))
    return Grades(out, {oid: percent(g) for oid, g in out.items()}), tuple(notes)


# --- paths, names ---------------------------------------------------------------------------


def category_path(collection: Collection, topic: str | None = None) -> str:
    """`$course$/top/<bank>/<topic path>`: the category Moodle creates ("Get category from file")."""
    parts = ["$course$", "top", collection.category, *(topic.split("/") if topic else [])]
    return "/".join(parts)





# --- Moodle's multilang filter form ---------------------------------------------------------

#: Elements that stay outside the language spans (the filter's spans may hold inline HTML only).
BLOCK_TAGS = frozenset(
    "address article aside blockquote dd details div dl dt figcaption figure footer form h1 h2 h3 "
    "h4 h5 h6 header hr li main nav ol p pre section summary table tbody td tfoot th thead tr ul"
    .split()
)

_Node = str | etree._Element
#: A piece of a text: a run of inline nodes (text and inline elements), or a block element.
_Seg = list[_Node] | etree._Element


def _nodes(el: etree._Element) -> list[_Node]:
    out: list[_Node] = [el.text] if el.text else []
    for child in el:
        c = copy(child)
        c.tail = None
        out.append(c)
        if child.tail:
            out.append(child.tail)
    return out


def _is_block(node: _Node) -> TypeGuard[etree._Element]:
    return (not isinstance(node, str) and isinstance(node.tag, str)
            and node.tag.lower() in BLOCK_TAGS)


def _segments(el: etree._Element) -> list[_Seg]:
    segs: list[_Seg] = []
    for node in _nodes(el):
        if _is_block(node):
            segs.append(node)
        elif segs and isinstance(segs[-1], list):
            segs[-1].append(node)
        else:
            segs.append([node])
    return segs


def _same_shape(a: _Seg, b: _Seg) -> bool:
    """Both inline runs, or blocks of the same tag and attributes."""
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list)
    return a.tag == b.tag and dict(a.attrib.items()) == dict(b.attrib.items())


def _inline(seg: _Seg) -> list[_Node]:
    assert isinstance(seg, list)
    return seg


def _block(seg: _Seg) -> etree._Element:
    assert not isinstance(seg, list)
    return seg


def _append(parent: etree._Element, node: _Node) -> None:
    if isinstance(node, str):
        if len(parent):
            parent[-1].tail = (parent[-1].tail or "") + node
        else:
            parent.text = (parent.text or "") + node
    else:
        parent.append(copy(node))


def _key(nodes: list[_Node]) -> str:
    return "".join(
        n if isinstance(n, str) else etree.tostring(n, method="html", encoding="unicode")
        for n in nodes
    )


class _Merger:
    def __init__(self, langs: tuple[str, ...]) -> None:
        self.langs = langs
        self.problems: set[str] = set()

    def spans(self, out: etree._Element, runs: dict[str, list[_Node]]) -> None:
        keys = {lang: _key(nodes) for lang, nodes in runs.items()}
        if all(not k.strip() for k in keys.values()):
            _append(out, next(iter(keys.values())))
            return
        if len(set(keys.values())) == 1:  # the same in every language: no spans needed
            for n in runs[self.langs[0]]:
                _append(out, n)
            return
        for lang in self.langs:
            span = etree.SubElement(out, "span")
            span.set("lang", lang)
            span.set("class", "multilang")
            for n in runs.get(lang, []):
                if not isinstance(n, str) and (n.tag == "span" or n.find(".//span") is not None):
                    self.problems.add("span")
                _append(span, n)

    def merge(self, out: etree._Element, segs: dict[str, list[_Seg]]) -> None:
        first = segs[self.langs[0]]
        aligned = all(
            len(s) == len(first) and all(_same_shape(a, b) for a, b in zip(s, first, strict=False))
            for s in segs.values()
        )
        if not aligned:
            self.problems.add("structure")
            # Each language's segments in turn. Inline segments that end up adjacent (the end of
            # one language, the start of the next) become one span group: Moodle's filter reads
            # adjacent spans as one group and shows one span per language of it.
            run: dict[str, list[_Node]] = {}
            for lang in self.langs:
                for seg in segs[lang]:
                    if isinstance(seg, list):
                        run[lang] = seg
                        continue
                    if run:
                        self.spans(out, {la: run.get(la, []) for la in self.langs})
                        run = {}
                    self.only(out, lang, seg)
            if run:
                self.spans(out, {la: run.get(la, []) for la in self.langs})
            return
        for i, seg in enumerate(first):
            if isinstance(seg, list):
                self.spans(out, {lang: _inline(s[i]) for lang, s in segs.items()})
            else:
                block = self.block(out, seg)
                self.merge(block, {lang: _segments(_block(s[i])) for lang, s in segs.items()})

    def block(self, out: etree._Element, el: etree._Element) -> etree._Element:
        """An empty copy of block element `el` in `out`, with the attributes lxml can set: the
        HTML parser keeps names that are not XML from malformed HTML (`<p 0` gives `0<`),
        which are left out (and reported)."""
        block = etree.SubElement(out, el.tag)
        for name, value in el.attrib.items():
            try:
                block.set(name, value)
            except ValueError:
                self.problems.add("attribute")
        return block

    def only(self, out: etree._Element, lang: str, seg: _Seg) -> None:
        """One language's content where the others have none (the languages differ in shape)."""
        if isinstance(seg, list):
            self.spans(out, {la: (seg if la == lang else []) for la in self.langs})
        else:
            block = self.block(out, seg)
            for s in _segments(seg):
                self.only(block, lang, s)


@lru_cache(maxsize=16384)
def multilang(texts: tuple[tuple[str, str], ...]) -> tuple[str, frozenset[str]]:
    """One HTML text carrying every language as Moodle's multilang filter expects it.

    `texts` is ((lang, html), ...). Block elements (`<p>`, `<li>`, ...) stay outside; inside each
    innermost block the inline content becomes adjacent
    `<span lang="id" class="multilang">…</span><span lang="en" class="multilang">…</span>`.
    Content that is the same in every language is written once, without spans. Returns the HTML
    and the problems found: "structure" (the languages' block structure differs, so each
    language's blocks are written with empty spans for the others) and "span" (the content has
    its own `<span>`, which ends the filter's match early).
    """
    values = [h for _, h in texts]
    if len(set(values)) == 1:
        return values[0], frozenset()
    fast = _plain_multilang(texts)
    if fast is not None:
        return fast, frozenset()
    langs = tuple(lang for lang, _ in texts)
    merger = _Merger(langs)
    parsed = {lang: lxml_html.fragment_fromstring(h, create_parent="div") for lang, h in texts}
    out = etree.Element("div")
    merger.merge(out, {lang: _segments(el) for lang, el in parsed.items()})
    return etree.tostring(out, method="html", encoding="unicode")[5:-6], frozenset(merger.problems)


# Plain text: no markup, entity, CR or character XML cannot carry, no space at either end.
_PLAIN_TEXT = re.compile(
    "[^<>&\\s\x00-\x1f\ud800-\udfff\ufffe\uffff]"
    "(?:[^<>&\r\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]*"
    "[^<>&\\s\x00-\x1f\ud800-\udfff\ufffe\uffff])?"
)


def _plain_multilang(texts: tuple[tuple[str, str], ...]) -> str | None:
    """What `multilang` writes when every language is plain text, or every language one
    `<p>` of plain text (no markup, entity or CR; no space at either end): the texts in
    adjacent spans, inside one `<p>` in the second case. None for anything else."""
    values = [h for _, h in texts]
    if all(_PLAIN_TEXT.fullmatch(v) for v in values):
        return "".join(f'<span lang="{la}" class="multilang">{v}</span>' for la, v in texts)
    if all(v.startswith("<p>") and v.endswith("</p>") and _PLAIN_TEXT.fullmatch(v, 3, len(v) - 4)
           for v in values):
        inner = "".join(f'<span lang="{la}" class="multilang">{v[3:-4]}</span>' for la, v in texts)
        return f"<p>{inner}</p>"
    return None


_MULTI_PROBLEMS = {
    "structure": "the languages differ in block structure (paragraphs, lists); each language's "
                 "blocks are written with empty spans for the others, so Moodle shows empty "
                 "blocks",
    "span": "the text has its own <span>: Moodle's multilang filter ends a language at the "
            "first </span>",
    "attribute": "malformed HTML (an attribute name that is not XML, such as `<p 0`): left out "
                 "when the languages were merged",
}


# --- an item's texts in one language or all -------------------------------------------------


class ItemTexts:
    """The HTML Moodle will store for each field of one item, in the languages `langs` (one, or
    several merged into the multilang form: `multi`), for a file in `lang`. Warnings about texts
    Moodle would alter go to `warnings`."""

    def __init__(self, fmt: str, collection: Collection, item: Item, lang: str,
                 langs: tuple[str, ...]) -> None:
        self.fmt, self.collection, self.item, self.lang, self.langs = (
            fmt, collection, item, lang, langs)
        self.warnings: list[Diagnostic] = []
        # One language (every export but multi): each field is that language's HTML as it is.
        self._one = item.text[langs[0]] if len(langs) == 1 else None
        #: False when no text of the item can show an image (no field needs looking at)
        self.may_show_images = may_show_images(item, langs)

    def warn(self, field_: str, message: str) -> None:
        self.warnings.append(self.collection.warning(self.fmt, self.item.id, field_, message))

    def _field(self, where: str, render: Callable[[str], str]) -> str:
        """`render` of each language merged (`multilang`); `where` names the field, with
        `{lang}` for the language."""
        texts = []
        for la in self.langs:
            # the languages are merged through lxml, which cannot hold what XML cannot
            text, removed = xml_safe(render(la))
            if removed:
                self.warn(where.format(lang=la), f"removed characters XML cannot carry: {removed}")
            texts.append((la, text))
        html, problems = multilang(tuple(texts))
        for p in sorted(problems):
            self.warn(where.format(lang=MULTI), _MULTI_PROBLEMS[p])
        return html

    def name(self) -> str:
        text = moodle_name(self.item, self.langs)
        if len(text) > MAX_NAME:
            self.warn("title", f"the name is {len(text)} characters; Moodle shortens names past "
                               f"{MAX_NAME}" + (", breaking the language spans"
                                                if is_multilang_name(text) else ""))
        return text

    def stem(self) -> str:
        if self._one is not None:
            return to_html(self._one.stem)
        return self._field("text.{lang}.stem", lambda la: to_html(self.item.text[la].stem))

    def explanation(self) -> str:
        if self._one is not None:
            return to_html(self._one.explanation or "")
        return self._field("text.{lang}.explanation",
                           lambda la: to_html(self.item.text[la].explanation or ""))

    def option(self, oid: str) -> str:
        if self._one is not None:
            html = to_inline_html(self.item.option_text(self.langs[0], oid))
        else:
            html = self._field(f"text.{{lang}}.options.{oid}",
                               lambda la: to_inline_html(self.item.option_text(la, oid)))
        if not html.strip():
            self.warn(f"text.{self.lang}.options.{oid}",
                      "the option text is empty: Moodle drops blank answers on import")
        return html

    def feedback(self, oid: str) -> str:
        if self._one is not None:
            return to_html(self._one.feedback.get(oid, ""))
        return self._field(f"text.{{lang}}.feedback.{oid}",
                           lambda la: to_html(self.item.text[la].feedback.get(oid, "")))

    def check_true_false_words(self) -> None:
        """Moodle shows its own True/False words: authored option text is not carried."""
        for la in self.langs:
            for oid, text in self.item.text[la].options.items():
                words = TRUE_FALSE_WORDS.get(la, TRUE_FALSE_WORDS["en"])
                if text != words.get(oid):
                    self.warn(f"text.{la}.options.{oid}",
                              f"Moodle shows its own word for {oid!r}; {text!r} is not carried")

    def check_locked(self) -> None:
        if self.item.shuffle:
            for o in self.item.options:
                if o.locked:
                    self.warn(f"options.{o.id}.locked",
                              "Moodle shuffles all answers or none: this option is not kept "
                              "in place")
