"""An item -> its texts as Moodle stores them (HTML, with warnings), the multilang filter form
of several languages, its grades and its category: what Moodle XML and GIFT share.

Every rule here is taken from Moodle's own code (4.5): `question_bank::fraction_options_full`
(lib/questionlib.php), `match_grade_options`, `qtype_multichoice::save_question_options`,
`qformat_default::clean_question_name` and `filter_multilang\\text_filter`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from copy import copy
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache, partial
from typing import TypeGuard

from lxml import etree
from lxml import html as lxml_html

from dpassess.diagnostics import Diagnostic
from dpassess.export import MULTI, Collection, Fragments, fact
from dpassess.export.moodle.images import may_link_files
from dpassess.lms.moodle import (
    MAX_NAME,
    exported_name,
    is_multilang_name,
    name_html,
    percent,
    snap,
)
from dpassess.markup.fields import markdown_texts
from dpassess.markup.markdown import to_html, to_inline_html, to_plain
from dpassess.markup.maths import find_maths
from dpassess.markup.media import has_img_tag
from dpassess.markup.sanitize import defuse_tex, drop_unsafe_urls, tex_warning
from dpassess.markup.xmlchars import xml_safe
from dpassess.model import (
    ChoiceBase,
    Essay,
    Item,
    Matching,
    MultipleResponse,
    ShortAnswer,
    SingleChoice,
    Stimulus,
    TrueFalse,
)
from dpassess.model.items import TRUE_FALSE_WORDS, AnswerContent, Content, ContentBase

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
    and for a multiple-answer item whose positive grades do not add up to 100%. The result may
    be shared: read only."""
    weighted = isinstance(item, MultipleResponse | SingleChoice) and item.weights is not None
    where = "weights" if weighted else "key"
    result, notes = _grades(isinstance(item, MultipleResponse), where,
                            tuple(item.fractions().items()))
    for field_, message in notes:
        warn(field_, message)
    return result


def answer_grades(fractions: tuple[tuple[str, float], ...], warn: Callable[[str, str], None]
                  ) -> Grades:
    """The fractions of typed answers (numerical, short answer: answer id -> fraction) snapped
    to Moodle's list, with a warning for each one Moodle would alter."""
    result, notes = _grades(False, "answers", fractions)
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
            best = min(total, Decimal(1))
            notes.append((where, f"the positive grades add up to {percent(total)}%, not 100%: "
                                 "Moodle 4.5 imports the question as it is (only its editing "
                                 "form checks the total), and a student who chooses every right "
                                 f"option and no wrong one gets {percent(best)}% of the mark"
                                 + (" (a total above 100% is capped: fewer right options "
                                    "already earn full marks)" if total > 1 else "")))
    return Grades(out, {oid: percent(g) for oid, g in out.items()}), tuple(notes)


def number(value: float) -> str:
    """A number as Moodle reads it (PHP `is_numeric`): its shortest decimal form, never an
    exponent (`0.00001`, `1500`, `-2.5`)."""
    text = format(Decimal(repr(value)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def midpoint(lo: float, hi: float) -> tuple[str, str, bool]:
    """A range as Moodle's numerical answer holds it: the middle and the half-width, as exact
    decimals, and whether Moodle's check (`answer ± (tolerance + 1e-14)`, in floats) accepts
    both ends."""
    a, b = Decimal(repr(lo)), Decimal(repr(hi))
    mid, tol = number(float((a + b) / 2)), number(float((b - a) / 2))
    m, t = float(mid), float(tol) + 1e-14
    return mid, tol, m - t <= lo and hi <= m + t


# --- paths, names ---------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def category_path(root: str, topic: str | None = None) -> str:
    """`$course$/top/<root>/<topic path>`: the category Moodle creates ("Get category from
    file"); `root` is `category_name` of the file."""
    parts = ["$course$", "top", root, *(topic.split("/") if topic else [])]
    return "/".join(parts)


def category_name(collection: Collection, lang: str) -> str:
    """The root category's name for a file in `lang`: the collection's title in the file's
    language (the default language's in a `multi` file), a `/` in it doubled as Moodle's
    `split_category_path` reads a literal slash; when two languages have the same title, the
    language follows in brackets, so the files of two languages always import into categories
    of their own (question ID numbers are unique per category)."""
    if lang == MULTI:
        lang = collection.default_language or collection.languages[0]
    title = " ".join(collection.title_in(lang).split()) or collection.category
    same = [la for la in collection.languages if " ".join(collection.title_in(la).split()) == title]
    if len(same) > 1:
        title = f"{title} ({lang})"
    return title.replace("/", "//")


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
    "structure": "the languages' texts differ in paragraphs or lists: each language's blocks "
                 "are written in turn, with empty spans for the others, so a reader sees their "
                 "language's blocks and an empty line for each block of the other",
    "span": "the text has its own <span>: Moodle's multilang filter ends a language at the "
            "first </span>",
    "attribute": "malformed HTML (an attribute name that is not XML, such as `<p 0`): left out "
                 "when the languages were merged",
}


# --- an item's texts in one language or all -------------------------------------------------


#: Said once per `multi` file with maths (docs/export-moodle.md, "Several languages").
MULTILANG_MATHS = (
    "this file shows formulas in several languages: in Moodle, put the Multi-language "
    "content filter above MathJax (Site administration > Plugins > Filters > Manage filters; "
    "switching it on puts it below). Below MathJax, students see every language's text after "
    "the first formula")


def multilang_maths(fmt: str, collection: Collection, lang: str, fragments: Fragments
                    ) -> list[Diagnostic]:
    """In a `multi` file, one warning when an item of several languages has maths: Moodle's
    multilang filter must then run before MathJax (`MULTILANG_MATHS`). Whether an item has is
    a fact of the item (`fragments.fact`: kept by the runner)."""
    if lang != MULTI:
        return []
    for item in collection.items:
        if len(item.text) > 1 and fact(fragments, item, "maths", partial(item_has_maths, item)):
            return [collection.warning(fmt, None, "text", MULTILANG_MATHS)]
    return []


def multilang_glue(collection: Collection, item: Item, lang: str, fragments: Fragments
                   ) -> tuple[object, ...]:
    """What the file's own parts read of `item` in a Moodle XML or GIFT file in `lang` (its
    `Format.glue`, with what the format reads besides): its id, topic, languages and source
    path (the warnings of a language it lacks, its category), and in a `multi` file whether it
    has maths in several languages (`multilang_maths`)."""
    return (item.id, item.topic, tuple(item.text), collection.paths.get(item.id),
            lang == MULTI and len(item.text) > 1
            and fact(fragments, item, "maths", partial(item_has_maths, item)))


def item_has_maths(item: Item) -> bool:
    """Whether a text of `item`, in any language, has maths (none, without looking at each
    text, when no text holds a maths delimiter)."""
    joined = _joined_texts(item, tuple(item.text))
    if "$" not in joined and "\\(" not in joined and "\\[" not in joined:
        return False
    return any(_has_maths(src) for content in item.text.values()
               for _, src in markdown_texts(content))


def _has_maths(source: str) -> bool:
    return ("$" in source or "\\(" in source or "\\[" in source) and bool(find_maths(source))


def _feedback_of(content: ContentBase) -> Mapping[str, str]:
    """Feedback by option or answer id, for the types that have it."""
    return content.feedback if isinstance(content, Content | AnswerContent) else {}


def _joined_texts(item: Item, langs: tuple[str, ...]) -> str:
    """Every Markdown text of `item` in `langs`, joined by spaces (a choice item's read
    directly: the common case, several times faster than walking `markdown_texts`)."""
    if isinstance(item, ChoiceBase):
        parts: list[str] = []
        for la in langs:
            c = item.text[la]
            parts += (c.stem, c.explanation or "", *c.options.values(), *c.feedback.values())
        return " ".join(parts)
    return " ".join([t for la in langs for _, t in markdown_texts(item.text[la])])


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
        self.stimulus = self._stimulus()
        #: False when no text of the item can show an image or link a file (no field needs
        #: looking at)
        texts = _joined_texts(item, langs)
        self.may_show_images = (self.stimulus is not None or may_link_files(texts)
                                or has_img_tag(texts))

    def warn(self, field_: str, message: str) -> None:
        self.warnings.append(self.collection.warning(self.fmt, self.item.id, field_, message))

    def safe(self, field_: str, html: str) -> str:
        """`html` without the links and image sources whose URL is not http, https, mailto or
        relative, and its maths without the TeX commands that make links, styles or actions in
        MathJax (`dpassess.markup.sanitize`), with one warning naming each kind."""
        html, dropped = drop_unsafe_urls(html)
        if dropped:
            self.warn(field_, f"{'; '.join(dropped)}: only http, https, mailto and relative "
                              "links are written; left out")
        html, active = defuse_tex(html)
        if active:
            self.warn(field_, tex_warning(active))
        return html

    def _stimulus(self) -> Stimulus | None:
        sid = self.item.stimulus
        if sid is None:
            return None
        found = self.collection.stimuli.get(sid)
        if found is None:
            self.warn("stimulus", f"stimulus {sid!r} is not in this collection: the question is "
                                  "written without it")
            return None
        for la in self.langs:
            if la not in found.text:
                first = next(iter(found.text))
                self.warn("stimulus", f"stimulus {sid!r} has no {la!r} text: its {first!r} text "
                                      "is shown")
        return found

    def _stimulus_source(self, lang: str) -> str:
        assert self.stimulus is not None
        text = self.stimulus.text
        return (text.get(lang) or next(iter(text.values()))).text

    def _field(self, where: str, render: Callable[[str], str]) -> str:
        """`render` of each language merged (`multilang`); `where` names the field, with
        `{lang}` for the language. A field that some languages leave empty is written from the
        languages that have it (one: without spans, so every reader sees it), with a warning
        naming the languages without it."""
        texts = []
        for la in self.langs:
            # the languages are merged through lxml, which cannot hold what XML cannot
            at = where.format(lang=la)
            text, removed = xml_safe(self.safe(at, render(la)))
            if removed:
                self.warn(at, f"removed characters XML cannot carry: {removed}")
            texts.append((la, text))
        present = [(la, h) for la, h in texts if h.strip()]
        if present and len(present) < len(texts):
            have = ", ".join(repr(la) for la, _ in present)
            for la, h in texts:
                if not h.strip():
                    self.warn(where.format(lang=la),
                              f"no {la!r} text for this field: readers in {la!r} see the {have} "
                              "text" + ("" if len(present) == 1 else "s as the multilang filter "
                                        "chooses"))
            texts = present
        if len(texts) == 1:
            return texts[0][1]
        html, problems = multilang(tuple(texts))
        for p in sorted(problems):
            self.warn(where.format(lang=MULTI), _MULTI_PROBLEMS[p])
        return html

    def block(self, where: str, source: Callable[[str], str]) -> str:
        """Block HTML of the Markdown `source(lang)` in the file's language(s)."""
        if self._one is not None:
            return self.safe(where.format(lang=self.langs[0]), to_html(source(self.langs[0])))
        return self._field(where, lambda la: to_html(source(la)))

    def inline(self, where: str, source: Callable[[str], str]) -> str:
        """Inline HTML (no `<p>` around one paragraph) of the Markdown `source(lang)`."""
        if self._one is not None:
            return self.safe(where.format(lang=self.langs[0]),
                             to_inline_html(source(self.langs[0])))
        return self._field(where, lambda la: to_inline_html(source(la)))

    def plain(self, source: Callable[[str], str]) -> str:
        """Plain text of the Markdown `source(lang)` (what Moodle shows as a menu choice), as
        HTML text; several languages as multilang spans."""
        values = [(la, name_html(to_plain(source(la)))) for la in self.langs]
        if len({v for _, v in values}) == 1:
            return values[0][1]
        return "".join(f'<span lang="{la}" class="multilang">{v}</span>' for la, v in values)

    def name(self) -> str:
        text, full = exported_name(self.item, self.langs)
        text, active = defuse_tex(text)  # Moodle's maths filter may read names too
        if active:
            self.warn("title", tex_warning(active))
        if text != full:
            self.warn("title", f"the name is {len(full)} characters; Moodle keeps {MAX_NAME}: "
                               "written cut at a word" + (
                                   " in each language" if is_multilang_name(full) else ""))
        return text

    def stem(self) -> str:
        if self.stimulus is not None:
            return self.block("text.{lang}.stem", lambda la: self._stimulus_source(la) + "\n\n"
                              + self.item.text[la].stem)
        if self._one is not None:
            return self.safe(f"text.{self.langs[0]}.stem", to_html(self._one.stem))
        return self._field("text.{lang}.stem", lambda la: to_html(self.item.text[la].stem))

    def explanation(self) -> str:
        if self._one is not None:
            return self.safe(f"text.{self.langs[0]}.explanation",
                             to_html(self._one.explanation or ""))
        return self._field("text.{lang}.explanation",
                           lambda la: to_html(self.item.text[la].explanation or ""))

    def option(self, item: ChoiceBase, oid: str) -> str:
        if self._one is not None:
            html = self.safe(f"text.{self.langs[0]}.options.{oid}",
                             to_inline_html(item.option_text(self.langs[0], oid)))
        else:
            html = self._field(f"text.{{lang}}.options.{oid}",
                               lambda la: to_inline_html(item.option_text(la, oid)))
        if not html.strip():
            self.warn(f"text.{self.lang}.options.{oid}",
                      "the option text is empty: Moodle drops blank answers on import")
        return html

    def feedback(self, oid: str) -> str:
        if self._one is not None:
            return self.safe(f"text.{self.langs[0]}.feedback.{oid}",
                             to_html(_feedback_of(self._one).get(oid, "")))
        return self._field(f"text.{{lang}}.feedback.{oid}",
                           lambda la: to_html(_feedback_of(self.item.text[la]).get(oid, "")))

    def check_true_false_words(self, item: TrueFalse) -> None:
        """Moodle shows its own True/False words: authored option text is not carried."""
        for la in self.langs:
            for oid, text in item.text[la].options.items():
                words = TRUE_FALSE_WORDS.get(la, TRUE_FALSE_WORDS["en"])
                if text != words.get(oid):
                    self.warn(f"text.{la}.options.{oid}",
                              f"Moodle shows its own word for {oid!r}; {text!r} is not carried")

    def check_locked(self, item: ChoiceBase) -> None:
        if item.shuffle:
            for o in item.options:
                if o.locked:
                    self.warn(f"options.{o.id}.locked",
                              "Moodle shuffles all answers or none: this option is not kept "
                              "in place")


# --- what Moodle XML and GIFT write alike for the other types -------------------------------


def accepted_wordings(t: ItemTexts, item: ShortAnswer) -> list[tuple[str, str]]:
    """(answer id, wording) for each accepted wording, answer by answer in the item's order,
    each answer's wordings language by language, a wording Moodle would compare as equal to
    an earlier one (trimmed; case-insensitively unless `case_sensitive`) written once; a
    warning when one language accepts under another answer what an earlier one grades."""
    seen: dict[str, str] = {}
    out: list[tuple[str, str]] = []
    for a in item.answers:
        for la in t.langs:
            for wording in item.text[la].answers.get(a.id, ()):
                text = wording.strip()
                key = text if item.case_sensitive else text.casefold()
                if key in seen:
                    if seen[key] != a.id:
                        t.warn(f"text.{la}.answers.{a.id}",
                               f"{wording!r} is accepted under answer {seen[key]!r} too: "
                               "Moodle grades it by the first")
                    continue
                seen[key] = a.id
                out.append((a.id, text))
    return out


def premise_html(t: ItemTexts, item: Matching, rid: str) -> str:
    """A matching premise as inline HTML."""
    return t.inline(f"text.{{lang}}.premises.{rid}", partial(_premise, item, rid))


def _premise(item: Matching, rid: str, lang: str) -> str:
    return item.text[lang].premises[rid]


def response_text(t: ItemTexts, item: Matching, rid: str) -> str:
    """A matching response as Moodle stores it: plain text (shown in a menu)."""
    return t.plain(lambda la: item.text[la].responses[rid])


def check_match(t: ItemTexts, item: Matching) -> None:
    """Warnings for what Moodle's `match` does differently: fewer than three responses (it
    saves the question with the notice "you must supply at least 3 answers"), responses with
    formatting or maths (its menu shows plain text, where the maths filter does not run), and
    responses that read the same (its menu shows them once, so either is taken as right)."""
    if len(item.response_ids) < 3:
        t.warn("distractors", f"{len(item.response_ids)} responses: Moodle asks for at least 3 "
                              "(it imports the question with a notice); add a distractor")
    seen: dict[str, str] = {}
    for rid in item.response_ids:
        for la in t.langs:
            source = item.text[la].responses[rid]
            if maths := find_maths(source):
                t.warn(f"text.{la}.responses.{rid}",
                       f"Moodle shows matching responses as plain text (in a menu), where its "
                       f"maths filter does not run: {source[maths[0].start:maths[0].end]!r} is "
                       f"shown as TeX source; write the response without maths (χ², √n) or "
                       f"move the formula into the premises")
                continue
            # inline HTML holds a `<` only in a tag (a text `<` is `&lt;`)
            if "<" in to_inline_html(source) and (plain := to_plain(source)):
                t.warn(f"text.{la}.responses.{rid}",
                       f"Moodle shows matching responses as plain text (in a menu), without "
                       f"formatting or images: shown as {plain!r}")
        text = response_text(t, item, rid)
        if not text.strip():
            t.warn(f"text.{t.lang}.responses.{rid}",
                   "the response is empty as plain text (Moodle shows responses in a menu, "
                   "without formatting): Moodle keeps no answer for its premise")
            continue
        if text in seen:
            t.warn(f"text.{t.lang}.responses.{rid}",
                   f"reads the same as response {seen[text]!r} as plain text: Moodle shows "
                   "one menu entry for both")
        seen.setdefault(text, rid)


def response_template(t: ItemTexts, item: Essay) -> tuple[str, str]:
    """The essay's response template and its format (Moodle XML's name for it): HTML for the
    editor, the source text as written (`plain_text`: Moodle's `trans_format` reads any other
    name, `plain` too, as HTML) for a plain or monospaced box. Moodle fills the box with it
    unfiltered, so a file of several languages carries one: the first language's, with a
    warning when they differ."""
    texts = [item.text[la].response_template or "" for la in t.langs]
    if len(set(texts)) > 1:
        t.warn(f"text.{t.langs[1]}.response_template",
               f"the languages' response templates differ, and Moodle does not filter the "
               f"response box: the {t.langs[0]!r} template is written")
    if item.response_format == "editor":
        return (t.safe(f"text.{t.langs[0]}.response_template", to_html(texts[0]))
                if texts[0] else ""), "html"
    return texts[0], "plain_text"
