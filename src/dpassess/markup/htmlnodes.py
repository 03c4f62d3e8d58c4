"""Markdown source -> lxml HTML nodes for a page a browser shows, maths as MathML.

The text is rendered by `dpassess.markup.markdown` (maths through the TeX -> MathML converter of
`dpassess.markup.maths`, as the QTI export does) and parsed by lxml's HTML parser, never pasted
as a string. The MathML comes out as plain `math` elements (HTML5 puts them in the MathML
namespace; every current browser draws them); a formula the converter cannot say stays as its
TeX between delimiters, and `problems` says why, in the QTI export's words. What an author's raw
HTML could run in a reader's browser (scripts, frames, event handlers, `javascript:` links) is
left out: these pages are opened from disk.
"""

from __future__ import annotations

from typing import Any

import lxml.html
from lxml.html import HtmlElement

from dpassess.markup.markdown import to_html
from dpassess.markup.maths import mathml_problems

#: Elements dropped with their content (they run code or pull in other documents).
_DROP = frozenset({"script", "style", "iframe", "frame", "frameset", "object", "embed", "applet",
                   "link", "meta", "base", "form", "noscript", "template"})
_URL_ATTRS = ("href", "src", "action", "formaction", "xlink:href", "poster", "srcset")


def html_nodes(markdown: str) -> tuple[list[Any], list[str]]:
    """`markdown` as HTML nodes (elements, and the leading text if any, as lxml's builder takes
    them) with every formula as a MathML `math` element, and one message per formula that
    stays TeX (see `dpassess.markup.maths.mathml_problems`)."""
    if not markdown.strip():
        return [], []
    nodes: list[Any] = [*lxml.html.fragments_fromstring(to_html(markdown, "mathml"))]
    for node in nodes:
        if isinstance(node, HtmlElement):
            _tidy(node)
    problems = mathml_problems(markdown) if ("$" in markdown or "\\" in markdown) else []
    return [n for n in nodes if not isinstance(n, HtmlElement) or n.tag not in _DROP], problems


def _tidy(root: HtmlElement) -> None:
    """MathML tags without their `m:` prefix; active content out."""
    for el in list(root.iter()):
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag in _DROP and el is not root:
            el.drop_tree()
            continue
        if tag.startswith("m:"):
            el.tag = tag[2:]
        for name in list(el.attrib):
            low = name.lower()
            active = low in _URL_ATTRS and el.attrib[name].strip().lower().startswith(
                ("javascript:", "vbscript:", "data:text"))
            if low.startswith(("xmlns", "on")) or active:
                del el.attrib[name]
