"""Item text (Markdown) -> HTML as Canvas stores it in a quiz question: maths as Canvas's own
equation images, local files as `$IMS-CC-FILEBASE$` references to files in the package.

Maths: Canvas's rich content editor writes a formula as
`<img class="equation_image" src="/equation_images/<TeX, percent-encoded twice>" alt="LaTeX: <TeX>"
data-equation-content="<TeX>">`; Canvas serves the image from that host-relative address (its
equation service), and where its updated equation handling is on, replaces the image with MathJax
rendering of `data-equation-content`. So what a student sees is the formula rendered, in Classic
Quizzes and New Quizzes, with nothing to switch on. (MathML would need a browser that shows it
and survives Canvas's sanitiser only in part; TeX between delimiters needs MathJax enabled.)

Files: Canvas's own quiz export keeps a question's files in the package under `web_resources/`
and refers to them as `$IMS-CC-FILEBASE$/<path>`; its importer puts them into the course files
and rewrites the reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from urllib.parse import quote

from lxml import etree
from lxml import html as lxml_html
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from dpassess.markup.markdown import to_html
from dpassess.markup.maths import DISPLAY_TYPES, TYPES
from dpassess.markup.media import is_local_image
from dpassess.markup.parser import new_parser

#: Where Canvas's quiz export keeps a question's files, and how its text refers to them.
FILES_FOLDER = "web_resources"
FILEBASE = "$IMS-CC-FILEBASE$"


def equation_image(tex: str) -> str:
    """Canvas's equation image of `tex` (the HTML its editor writes)."""
    src = "/equation_images/" + quote(quote(tex, safe=""), safe="")
    attr = escapeHtml(tex)
    return (f'<img class="equation_image" title="{attr}" src="{src}?scale=1" '
            f'alt="LaTeX: {attr}" data-equation-content="{attr}">')


def _tex(token: Token) -> str:
    return token.content.strip("\n") if token.type == "math_block" else token.content


def _equation_rule(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict,
                   env: EnvType) -> str:
    token = tokens[idx]
    tex = _tex(token)
    if token.type in DISPLAY_TYPES:
        tex = "\\displaystyle " + tex
    image = equation_image(tex)
    return f"<p>{image}</p>\n" if token.type == "math_block" else image


@lru_cache(maxsize=1)
def _renderer() -> object:
    md = new_parser()
    for name in TYPES:
        md.add_render_rule(name, _equation_rule)
    return md


@lru_cache(maxsize=65536)
def canvas_html(source: str) -> str:
    """Block HTML of a Markdown field, formulas as Canvas's equation images."""
    if "$" not in source and "\\" not in source:
        return to_html(source)
    md = _renderer()
    html: str = md.render(source)  # type: ignore[attr-defined]
    return html.strip()


def inline(html: str) -> str:
    """One paragraph's HTML without its `<p>` (an option, a premise)."""
    if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
        return html[3:-4]
    return html


def local_refs(html: str) -> list[str]:
    """The local files `html` shows or links (`src` of `img`, `href` of `a`), in order."""
    if "<img" not in html and "<a" not in html:
        return []
    root = lxml_html.fragment_fromstring(html, create_parent="div")
    out = []
    for el in root.iter("img", "a"):
        value = el.get("src" if el.tag == "img" else "href")
        if value and is_local_image(value) and "equation_image" not in (el.get("class") or ""):
            out.append(value)
    return out


def rewrite_refs(html: str, paths: dict[str, str]) -> str:
    """`html` with each local reference in `paths` (as written -> package path under the files
    folder) replaced by its `$IMS-CC-FILEBASE$` reference."""
    if not paths:
        return html
    root = lxml_html.fragment_fromstring(html, create_parent="div")
    for el in root.iter("img", "a"):
        attr = "src" if el.tag == "img" else "href"
        value = el.get(attr)
        if value in paths:
            el.set(attr, f"{FILEBASE}/{quote(paths[value])}")
    inner = (root.text or "") and escapeHtml(root.text or "")
    return inner + "".join(etree.tostring(child, encoding="unicode", method="html")
                           for child in root)
