"""Markdown source -> HTML, the one place text is rendered (CommonMark, through markdown-it-py).

The model stores Markdown; each exporter asks for HTML here, so the same text renders the same way
everywhere, and each distinct string is rendered once (memoised).
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache

from markdown_it import MarkdownIt

_md = MarkdownIt("commonmark", {"html": True, "linkify": False, "typographer": False})
# markdown-it logs every rule at DEBUG; the calls alone cost a few percent of an export.
logging.getLogger("markdown_it").setLevel(logging.WARNING)

# Text made only of these characters, not starting with a digit or a space, is one plain
# paragraph in CommonMark: no emphasis, code, links, HTML, entities, lists, headings or breaks.
# Most item text is like that, and it skips the parser (tests/test_render.py checks equality
# with markdown-it on generated strings).
_PLAIN = re.compile(r"[^\s\d\\`*_\[\]<>&!#|~=+\-{}^$@%][^\\`*_\[\]<>&!#|~=+{}^\n\r\t\f\v]*")


def _fast_paragraph(source: str) -> str | None:
    if not source.isprintable():
        return None
    if _PLAIN.fullmatch(source) is None or source != source.rstrip() or "  " in source:
        return None
    return "<p>" + source.replace('"', "&quot;") + "</p>"


@lru_cache(maxsize=65536)
def to_html(source: str) -> str:
    """Block HTML for a text field (paragraphs, lists, code blocks). No trailing newline."""
    fast = _fast_paragraph(source)
    if fast is not None:
        return fast
    html: str = _md.render(source)
    return html.strip()


@lru_cache(maxsize=65536)
def to_inline_html(source: str) -> str:
    """HTML for a short one-paragraph text (an option, a title): no `<p>` wrapper when the
    Markdown is a single paragraph; block HTML otherwise."""
    html = to_html(source)
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
