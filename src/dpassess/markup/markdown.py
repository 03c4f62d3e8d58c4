"""Markdown source -> HTML, the one place text is rendered (CommonMark, through markdown-it-py).

The model stores Markdown; each exporter asks for HTML here, so the same text renders the same way
everywhere, and each distinct string is rendered once (memoised). Maths (`dpassess.markup.maths`)
is a token of its own, untouched by emphasis and escapes, and is written as TeX between `\\(` `\\)`
/ `\\[` `\\]` (mode `tex`, what MathJax reads) or as MathML (mode `mathml`, for QTI).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from dpassess.markup.maths import DISPLAY_TYPES, TYPES, MathsMode, mathml_html, use_maths
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
    md = use_maths(MarkdownIt("commonmark", {"html": True, "linkify": False,
                                             "typographer": False}).enable("table"))
    for name in TYPES:
        md.add_render_rule(name, rule)
    return md


_md = _parser(_tex_rule)
_md_mathml = _parser(_mathml_rule)
# markdown-it logs every rule at DEBUG; the calls alone cost a few percent of an export.
logging.getLogger("markdown_it").setLevel(logging.WARNING)

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


# Tags and comments only: a `<` that starts neither stays text (raw HTML may hold `a < b`).
_TAG = re.compile(r"<(?:/?[A-Za-z][^>]*|!--.*?--)>", re.S)
_ENT = {"&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'", "&amp;": "&"}
_ENT_RE = re.compile("|".join(map(re.escape, _ENT)))


@lru_cache(maxsize=65536)
def to_plain(source: str) -> str:
    """Plain text of a Markdown string (for titles and names): tags dropped, entities decoded."""
    text = _TAG.sub("", to_html(source))
    text = _ENT_RE.sub(lambda m: _ENT[m.group(0)], text)
    return " ".join(text.split())


def clear_cache() -> None:
    for f in (to_html, to_inline_html, to_plain):
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


def item_title(item: ItemBase, lang: str, limit: int = TITLE_MAX) -> str:
    """The title of `item` in `lang` for every export: the authored title as `plain_title`
    gives it, else `derived_title` of the stem; "" when neither has text (use the id)."""
    content = item.text[lang]
    if content.title:
        return plain_title(content.title)
    return derived_title(content.stem, limit)
