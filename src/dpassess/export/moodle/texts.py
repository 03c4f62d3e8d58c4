"""What Moodle XML and GIFT share: Moodle's grade list, category paths, question names, the
multilang filter form, and each item's texts as the HTML Moodle stores (with warnings).

Every rule here is taken from Moodle's own code (4.5): `question_bank::fraction_options_full`
(lib/questionlib.php), `match_grade_options`, `qtype_multichoice::save_question_options`,
`qformat_default::clean_question_name` and `filter_multilang\\text_filter`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from copy import copy
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache

from lxml import etree
from lxml import html as lxml_html

from dpassess.export import MULTI, Collection, ExportWarning
from dpassess.lms.moodle import (
    MAX_NAME,
    is_multilang_name,
    moodle_name,
    percent,
    snap,
)
from dpassess.markup.markdown import to_html, to_inline_html
from dpassess.markup.media import has_img_tag, is_local_image
from dpassess.markup.xmlchars import xml_safe
from dpassess.model import Content, Item, ItemType
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


def grades(item: Item, warn: Callable[[str, str], None]) -> Grades:
    """The item's fractions snapped to Moodle's list; a warning for each one Moodle would alter
    and for a multiple-answer item whose positive grades do not add up to 100% (Moodle refuses
    it: `errfractionsaddwrong`).

    Memoised by what the fractions depend on (a bank repeats a few key and option patterns):
    the lookup costs a fraction of the Decimal work it saves. The result is shared: read only."""
    weights = getattr(item, "weights", None)
    memo_key = (item.type, item.key, item.option_ids,
                None if weights is None else tuple(weights.items()))
    found = _GRADES.get(memo_key)
    if found is None:
        if len(_GRADES) >= _GRADES_MAX:
            _GRADES.clear()
        found = _GRADES[memo_key] = _grades(item)
    result, notes = found
    for where, message in notes:
        warn(where, message)
    return result


_GRADES: dict[tuple, tuple[Grades, list[tuple[str, str]]]] = {}
_GRADES_MAX = 4096


def _grades(item: Item) -> tuple[Grades, list[tuple[str, str]]]:
    """`grades` of `item`, and its warnings as (where, message)."""
    notes: list[tuple[str, str]] = []
    out: dict[str, Decimal] = {}
    where = "weights" if getattr(item, "weights", None) is not None else "key"
    for oid, fraction in item.fractions().items():
        grade, exact = snap(fraction)
        if not exact:
            notes.append((f"{where}.{oid}",
                          f"fraction {fraction:g} is not one of Moodle's grades (import would "
                          f"abort); written as the nearest, {percent(grade)}%"))
        out[oid] = grade
    if item.type is ItemType.multiple_response:
        total = sum((g for g in out.values() if g > 0), Decimal(0))
        if round(float(total), 2) != 1:
            notes.append((where, f"the positive grades add up to {percent(total)}%, not 100%: "
                                 "Moodle refuses this question (errfractionsaddwrong)"))
    return Grades(out, {oid: percent(g) for oid, g in out.items()}), notes


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
_Seg = tuple[str, object]  # ("inline", [nodes]) or ("block", element)


def _nodes(el: etree._Element) -> list[_Node]:
    out: list[_Node] = [el.text] if el.text else []
    for child in el:
        c = copy(child)
        c.tail = None
        out.append(c)
        if child.tail:
            out.append(child.tail)
    return out


def _is_block(node: _Node) -> bool:
    return (not isinstance(node, str) and isinstance(node.tag, str)
            and node.tag.lower() in BLOCK_TAGS)


def _segments(el: etree._Element) -> list[_Seg]:
    segs: list[_Seg] = []
    for node in _nodes(el):
        if _is_block(node):
            segs.append(("block", node))
        elif segs and segs[-1][0] == "inline":
            segs[-1][1].append(node)  # type: ignore[union-attr]
        else:
            segs.append(("inline", [node]))
    return segs


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
            len(s) == len(first)
            and all(a[0] == b[0] and (a[0] == "inline" or (
                a[1].tag == b[1].tag and dict(a[1].attrib) == dict(b[1].attrib)))  # type: ignore[union-attr]
                for a, b in zip(s, first, strict=False))
            for s in segs.values()
        )
        if not aligned:
            self.problems.add("structure")
            # Each language's segments in turn. Inline segments that end up adjacent (the end of
            # one language, the start of the next) become one span group: Moodle's filter reads
            # adjacent spans as one group and shows one span per language of it.
            run: dict[str, list[_Node]] = {}
            for lang in self.langs:
                for kind, value in segs[lang]:
                    if kind == "inline":
                        run[lang] = value  # type: ignore[assignment]
                        continue
                    if run:
                        self.spans(out, {la: run.get(la, []) for la in self.langs})
                        run = {}
                    self.only(out, lang, (kind, value))
            if run:
                self.spans(out, {la: run.get(la, []) for la in self.langs})
            return
        for i, (kind, value) in enumerate(first):
            if kind == "inline":
                self.spans(out, {lang: s[i][1] for lang, s in segs.items()})  # type: ignore[misc]
            else:
                block = self.block(out, value)  # type: ignore[arg-type]
                self.merge(block, {lang: _segments(s[i][1]) for lang, s in segs.items()})  # type: ignore[arg-type]

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
        kind, value = seg
        if kind == "inline":
            self.spans(out, {la: (value if la == lang else []) for la in self.langs})  # type: ignore[misc]
        else:
            block = self.block(out, value)  # type: ignore[arg-type]
            for s in _segments(value):  # type: ignore[arg-type]
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


@dataclass
class ItemTexts:
    """The HTML Moodle will store for each field of one item, in `lang` or (multi) all languages.

    Warnings about texts Moodle would alter are collected in `warnings`.
    """

    fmt: str
    collection: Collection
    item: Item
    lang: str
    warnings: list[ExportWarning] = field(default_factory=list)
    langs: tuple[str, ...] = ()
    _one: Content | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        wanted = self.collection.languages if self.lang == MULTI else (self.lang,)
        have = [la for la in wanted if la in self.item.text]
        for la in wanted:
            if la not in self.item.text:
                fallback = self._fallback()
                self.warn(f"text.{la}", f"no {la!r} text; the {fallback!r} text is written "
                                        "in its place")
                if fallback not in have:
                    have.append(fallback)
        self.langs = tuple(have)
        # One language (every export but multi): each field is that language's HTML as it is.
        self._one = self.item.text[have[0]] if len(have) == 1 else None

    def _fallback(self) -> str:
        d = self.collection.default_language
        return d if d in self.item.text else next(iter(self.item.text))

    def warn(self, where: str, message: str) -> None:
        self.warnings.append(ExportWarning(self.fmt, self.item.id, where, message))

    def _field(self, where: str, render: Callable[[str], str]) -> str:
        """`render` of the one language, or of each language merged (`multilang`)."""
        langs = self.langs
        if len(langs) == 1:
            return render(langs[0])
        texts = []
        for la in langs:
            # the languages are merged through lxml, which cannot hold what XML cannot
            text, removed = xml_safe(render(la))
            if removed:
                self.warn(where.format(lang=la), f"removed characters XML cannot carry: {removed}")
            texts.append((la, text))
        html, problems = multilang(tuple(texts))
        if problems:
            for p in sorted(problems):
                self.warn(where.format(lang=MULTI), _MULTI_PROBLEMS[p])
        return html

    def _content(self, la: str):
        return self.item.text[la]

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
        return self._field("text.{lang}.stem", lambda la: to_html(self._content(la).stem))

    def explanation(self) -> str:
        if self._one is not None:
            return to_html(self._one.explanation or "")
        return self._field("text.{lang}.explanation",
                           lambda la: to_html(self._content(la).explanation or ""))

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
                           lambda la: to_html(self._content(la).feedback.get(oid, "")))

    def check_true_false_words(self) -> None:
        """Moodle shows its own True/False words: authored option text is not carried."""
        for la in self.langs:
            for oid, text in self._content(la).options.items():
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


# --- images -----------------------------------------------------------------------------------


def image_fragment(html: str) -> etree._Element | None:
    """`html` parsed as a fragment under a `<div>` when it has an `<img>`, else None."""
    if not has_img_tag(html):
        return None
    return lxml_html.fragment_fromstring(html, create_parent="div")


def local_images(html: str) -> list[str]:
    """The `src` of each local image `html` shows, in document order."""
    root = image_fragment(html)
    if root is None:
        return []
    return [src for img in root.iter("img") if is_local_image(src := img.get("src", ""))]
