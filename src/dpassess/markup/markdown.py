"""Markdown source -> HTML, the one place text is rendered (CommonMark, through markdown-it-py).

The model stores Markdown; each exporter asks for HTML here, so the same text renders the same way
everywhere, and each distinct string is rendered once (memoised). Maths (`dpassess.markup.maths`)
is a token of its own, untouched by emphasis and escapes, and is written as TeX between `\\(` `\\)`
/ `\\[` `\\]` (mode `tex`, what MathJax reads) or as MathML (mode `mathml`, for QTI).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from dpassess.markup.maths import DISPLAY_TYPES, TYPES, MathsMode, delimited, mathml_html
from dpassess.markup.parser import new_parser, parser
from dpassess.markup.xmlchars import xml_safe

if TYPE_CHECKING:  # the model (pydantic) is not imported to render text
    from dpassess.model.items import ItemBase


def _tex(token: Token) -> str:
    """The TeX of a maths token as written (a display block loses its surrounding line breaks)."""
    return token.content.strip("\n") if token.type == "math_block" else token.content


def _tex_rule(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict,
              env: EnvType) -> str:
    token = tokens[idx]
    display = token.type in DISPLAY_TYPES
    html = ("\\[" if display else "\\(") + escapeHtml(_tex(token)) + ("\\]" if display else "\\)")
    return f"<p>{html}</p>\n" if token.type == "math_block" else html


def _mathml_rule(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict,
                 env: EnvType) -> str:
    token = tokens[idx]
    mathml = mathml_html(_tex(token), token.type in DISPLAY_TYPES)
    if mathml is None:  # kept as TeX; `mathml_problems` says why
        return _tex_rule(self, tokens, idx, options, env)
    return mathml + "\n" if token.type == "math_block" else mathml


def _parser(rule: Callable[..., str]) -> MarkdownIt:
    md = new_parser()
    for name in TYPES:
        md.add_render_rule(name, rule)
    return md


_md = _parser(_tex_rule)
_md_mathml = _parser(_mathml_rule)

# Text made only of these characters, not starting with a digit or a space, is one plain
# paragraph in CommonMark: no emphasis, code, links, HTML, entities, lists, headings or breaks.
# Most item text is like that, and it skips the parser (tests/test_render.py checks equality
# with markdown-it on generated strings).
_PLAIN = re.compile(r"[^\s\d\\`*_\[\]<>&!#|~=+\-{}^$@%][^\\`*_\[\]<>&!#|~=+{}^$\n\r\t\f\v]*")


def _fast_paragraph(source: str) -> str | None:
    if not source.isprintable():
        return None
    if _PLAIN.fullmatch(source) is None or source != source.rstrip() or "  " in source:
        return None
    return "<p>" + source.replace('"', "&quot;") + "</p>"


@lru_cache(maxsize=65536)
def to_html(source: str, maths: MathsMode = "tex") -> str:
    """Block HTML for a text field (paragraphs, lists, code blocks). No trailing newline.

    Maths is written as `maths` says: `tex` (TeX HTML-escaped between `\\(` `\\)` or `\\[`
    `\\]`, a display block as its own `<p>`), or `mathml` (a MathML `math` element; TeX that
    cannot be converted stays as in `tex` mode, and `mathml_problems` says why)."""
    fast = _fast_paragraph(source)
    if fast is not None:
        return fast
    if maths == "mathml" and "$" not in source and "\\" not in source:
        return to_html(source)  # no maths: the same HTML, rendered once
    html: str = (_md_mathml if maths == "mathml" else _md).render(source)
    return html.strip()


@lru_cache(maxsize=65536)
def to_inline_html(source: str, maths: MathsMode = "tex") -> str:
    """HTML for a short one-paragraph text (an option, a title): no `<p>` wrapper when the
    Markdown is a single paragraph; block HTML otherwise."""
    html = to_html(source, maths)
    if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
        return html[3:-4]
    return html


# --- visible text ----------------------------------------------------------------------------
# What a reader sees of a field, read from the parser's own tokens: the text of the HTML that
# `to_html` writes (maths as `\\(tex\\)`, entities and escapes decoded, code as written), an
# image as its description, and a line break, a raw block element or a `<br>` as white space;
# then white space collapsed. tests/test_render.py checks it against the rendered HTML's text.

#: Text with none of these characters, and no line starting like a block marker, is one
#: paragraph whose text is the source itself (most item text: it skips the parser).
_MARKUP = re.compile(r"[\\`*_\[\]<&$|~\x00]")
_LINE_MARK = re.compile(r"^[ \t]*(?:[#>+=-]|\d+[.)])", re.M)


def _no_markup(source: str) -> bool:
    """Whether `source` is one paragraph whose text is the source itself (two searches: one
    search for either is slower, the character class then tried at every line start)."""
    return _MARKUP.search(source) is None and _LINE_MARK.search(source) is None
#: Raw HTML elements that begin a new line of text (block elements and `br`).
_BREAKING = frozenset(
    """address article aside blockquote br dd details dialog div dl dt fieldset figcaption figure
    footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section summary table tbody td
    tfoot th thead tr ul""".split())
_TAG_NAME = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)")


def _alt(tokens: Sequence[Token]) -> str:
    """An image's description as the renderer writes its `alt` (markdown-it's
    `renderInlineAsText`: text and code as written, raw HTML as its source, images'
    descriptions, line breaks; nothing else)."""
    out = []
    for t in tokens:
        if t.type in ("text", "code_inline", "html_inline"):
            out.append(t.content)
        elif t.type == "image":
            out.append(_alt(t.children or ()))
        elif t.type in ("softbreak", "hardbreak"):
            out.append("\n")
    return "".join(out)


def _html_text(fragment: str) -> str:
    """The text of raw HTML as a browser shows it (parsed by lxml): an image's `alt`, white
    space around block elements and `<br>`; comments and tags give nothing."""
    import lxml.html
    from lxml import etree

    from dpassess.markup.xmlchars import xml_safe

    # a control character shows nothing, and lxml refuses it in a text it is given
    fragment = xml_safe(fragment)[0]
    try:
        root = lxml.html.fragment_fromstring(fragment, create_parent="div")
    except (etree.ParserError, ValueError):
        return ""
    for el in root.iter(etree.Element):
        if el is root:  # the wrapper, not the author's
            continue
        if el.tag == "img":
            el.tail = (el.get("alt") or "") + (el.tail or "")
        elif el.tag in _BREAKING:
            el.text = "\n" + (el.text or "")
            el.tail = "\n" + (el.tail or "")
    text: str = root.text_content()
    return text


def _tag_text(tag: str, opened: dict[str, int]) -> str:
    """What one raw inline tag shows: an image its `alt`, `<br>` or a block element a line
    break, anything else (a comment, an inline element, an end tag that closes nothing, which
    a browser ignores) nothing. `opened` counts the elements opened so far."""
    m = _TAG_NAME.match(tag)
    if m is None:
        return ""
    name = m.group(1).lower()
    if tag.startswith("</"):
        if not opened.get(name):  # HTML reads a stray `</p>` as `<p></p>`, `</br>` as `<br>`
            return "\n" if name in ("p", "br") else ""
        opened[name] -= 1
    elif name == "img":
        return _html_text(tag)
    else:
        opened[name] = opened.get(name, 0) + 1
    return "\n" if name in _BREAKING else ""


def _visible(tokens: Sequence[Token], out: list[str], code: bool = True,
             opened: dict[str, int] | None = None) -> None:
    """The visible text of `tokens` into `out`; `code=False` leaves out code and maths."""
    opened = {} if opened is None else opened
    for t in tokens:
        typ = t.type
        if not code and typ in _CODE_TYPES:
            out.append(" ")
        elif typ == "text" or typ == "code_inline" or typ == "text_special":
            out.append(t.content)
        elif typ == "inline":
            _visible(t.children or (), out, code, opened)
        elif typ in ("softbreak", "hardbreak"):
            out.append("\n")
        elif typ in TYPES:
            tex = delimited(_tex(t), typ in DISPLAY_TYPES)
            out.append(f" {tex} " if typ == "math_block" else tex)
        elif typ == "image":
            out.append(_alt(t.children or ()))
        elif typ == "html_inline":
            out.append(_tag_text(t.content, opened))
        elif typ == "html_block":
            out.append(" " + _html_text(t.content) + " ")
        elif typ == "fence" or typ == "code_block":
            out.append(" " + t.content + " ")
        elif t.nesting != 0 and t.block:
            out.append(" ")  # a block opens or closes


_CODE_TYPES = frozenset({"code_inline", "fence", "code_block", *TYPES})


@lru_cache(maxsize=65536)
def to_plain(source: str) -> str:
    """What a reader sees of a Markdown string, as one line of plain text (the text of the HTML
    `to_html` writes: tags dropped, entities and escapes decoded, maths as `\\(tex\\)`, an image
    as its description). Lint judges this text; the exporters name questions with it."""
    if _no_markup(source):
        return " ".join(source.split())
    out: list[str] = []
    _visible(parser().parse(source), out)
    return " ".join("".join(out).split())


_CODE_OR_MATHS = re.compile(r"[`$\\~\t]|    ")


def to_prose(source: str) -> str:
    """`to_plain` without code (spans and blocks) and maths: the words a reader reads as
    language (lint's translation and glossary rules)."""
    if _CODE_OR_MATHS.search(source) is None:
        return to_plain(source)  # no code span, fence, indented code or maths (shares its memo)
    return _prose(source)


@lru_cache(maxsize=16384)
def _prose(source: str) -> str:
    out: list[str] = []
    _visible(parser().parse(source), out, code=False)
    return " ".join("".join(out).split())


def clear_text_cache() -> None:
    """Empty the visible text's memos (lint does after each run)."""
    to_plain.cache_clear()
    _prose.cache_clear()


def clear_cache() -> None:
    for f in (to_html, to_inline_html, to_plain, _prose):
        f.cache_clear()


# --- titles -----------------------------------------------------------------------------------

_BREAKS = re.compile(r"[\t\n\r\v\f\x85\u2028\u2029]+")
TITLE_MAX = 80


def plain_title(title: str) -> str:
    """An authored title as every target shows it: plain text, never Markdown (`*args` and
    `__init__` stay as written), with only what no target can carry changed: characters XML 1.0
    cannot hold are removed, line breaks and tabs become one space, the ends are trimmed.
    Escaping for the format (lxml for XML, GIFT's backslashes, HTML inside Moodle's multilang
    names) is the writer's."""
    return _BREAKS.sub(" ", xml_safe(title)[0]).strip()


def derived_title(stem: str, limit: int = TITLE_MAX) -> str:
    """A title made from a stem (for an item without one): the plain text of its first line
    (the stem is Markdown, so it is rendered, maths kept as `\\(...\\)`), cut at a word to at most
    `limit` characters with `...` when longer."""
    first = next((line for line in stem.splitlines() if line.strip()), "")
    text = to_plain(xml_safe(first)[0])
    if len(text) <= limit:
        return text
    cut = text[:limit - 2]
    space = cut.rfind(" ")
    return (cut[:space] if space > 0 else cut[:limit - 3]).rstrip() + "..."


#: A cloze gap in a stem (`model.items.GAP_REF`; the model is not imported here).
_GAP = re.compile(r"\[\[[A-Za-z][A-Za-z0-9_-]{0,39}\]\]")


def blank_gaps(stem: str) -> str:
    """A cloze stem with each gap as a blank (`___`), for a title made from it."""
    return _GAP.sub("___", stem)


def item_title(item: ItemBase, lang: str, limit: int = TITLE_MAX) -> str:
    """The title of `item` in `lang` for every export: the authored title as `plain_title`
    gives it, else `derived_title` of the stem; "" when neither has text (use the id)."""
    content = item.text[lang]
    if content.title:
        return plain_title(content.title)
    if getattr(item, "gaps", None):  # a cloze item: a gap shows as a blank, not its [[id]]
        return derived_title(blank_gaps(content.stem), limit)
    return derived_title(content.stem, limit)
