"""HTML (as LMSs store it) -> Markdown source (as the bank stores it), verified by rendering.

Export renders Markdown with `dpassess.markup.markdown`; import must give back Markdown that renders to the
same HTML. Markdown has many spellings for one rendering (`*a*` and `_a_`), so the guarantee is:
`render(html_to_markdown(h))` is the same HTML as `h` (compared as parsed trees). Three attempts,
each checked by rendering, the first that reproduces the HTML wins:

1. plain conversion (readable Markdown, no escapes): what authors would write;
2. the same with every ASCII punctuation character in text escaped (CommonMark backslash escapes);
3. the HTML itself as raw HTML blocks: blank lines (which would end a block) are dropped, or,
   where dropping them changes the rendering (inside `<pre>`), written as `&#10;`. A comment
   keeps its blank lines (a character reference is not read inside a comment) by starting an
   HTML block of its own, the kind that ends at `-->` rather than at a blank line: a blank line
   goes before it, or, after other HTML on its line, a line break and a blank line, which adds
   whitespace between blocks (no browser shows it; the rendering is then compared without it).

A comment holding a blank line in the middle of a paragraph's text has no CommonMark spelling:
its blank lines are written as `&#10;` inside the comment (which no browser shows either).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

import lxml.html
from lxml import etree

from dpassess.markup.markdown import to_html, to_inline_html
from dpassess.markup.maths import find_maths
from dpassess.markup.xmlchars import xml_safe

_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character
_BLANK = re.compile(r"\n[ \t]*\n")
# An element with nothing in it, first in the HTML: `<b></b>` is not an HTML block (CommonMark
# wants the opening tag alone on its line) but `<b>` is, and renders to the same tree.
_EMPTY_FIRST = re.compile(r"^(<([A-Za-z][A-Za-z0-9-]*)\b[^<>]*>)</\2\s*>")


def canonical(html: str) -> bytes:
    """A canonical form of an HTML fragment, for comparing renderings."""
    html = html.strip()
    if not html:
        return b""
    try:
        root = lxml.html.fragment_fromstring(html, create_parent="div")
    except (etree.ParserError, ValueError):
        return html.encode()
    return etree.tostring(root, method="c14n")


def same_html(a: str, b: str) -> bool:
    return canonical(a) == canonical(b)


def renders_as(md: str, html: str, *, inline: bool) -> bool:
    return same_html((to_inline_html if inline else to_html)(md), html)


@lru_cache(maxsize=4096)
def html_to_markdown(html: str, *, inline: bool = False) -> str:
    """Markdown whose rendering is `html` (`inline`: as `render.to_inline_html` renders it)."""
    html = html.strip()
    if not html:
        return ""
    for escape in (False, True):
        try:
            md = _Converter(escape).convert(html)
        except _Unsupported:
            break
        if renders_as(md, html, inline=inline):
            dollars = dollar_maths(md)
            return dollars if dollars != md and renders_as(dollars, html, inline=inline) else md
    if inline and not renders_as(html, html, inline=True):
        # Raw inline HTML that CommonMark would not pass through (`<b> \</b>`: the backslash
        # escapes the `<`) passes through inside a <p> HTML block, which inline rendering unwraps.
        wrapped = f"<p>{html}</p>"
        if renders_as(wrapped, html, inline=True):
            return wrapped
    raw = _BLANK.sub("\n", html)
    unclosed = _EMPTY_FIRST.sub(r"\1", raw, count=1)
    if unclosed != raw and renders_as(unclosed, html, inline=inline):
        return unclosed
    if raw == html or renders_as(raw, html, inline=inline):
        return raw
    # A blank line ends an HTML block, but dropping it changed the rendering (inside <pre>):
    # it is kept as a character reference instead, which the HTML parser reads back as the
    # same line break, on a line that is no longer blank.
    referenced = _as_reference(html)
    if renders_as(referenced, html, inline=inline) or _COMMENT not in html:
        return referenced
    # ... but not inside a comment: there the blank line stays, in an HTML block of its own.
    for outside in (_dropped, _as_reference):
        md = _comment_blocks(html, outside)
        shown = (to_inline_html if inline else to_html)(md)
        if same_html(shown, html) or _loose(shown) == _loose(html):
            return md
    return referenced


_COMMENT = "<!--"


def dollar_maths(md: str) -> str:
    """`md` with each `\\(tex\\)` written `$tex$` and each `\\[tex\\]` `$$tex$$`, the bank's usual
    spelling, where that reads as the same maths (no space inside the dollars, no digit or
    dollar after them, no dollar in the TeX); the caller checks the rendering."""
    out: list[str] = []
    at = 0
    for m in find_maths(md):
        span = md[m.start:m.end]
        if m.start == m.end or "$" in m.tex or not span.startswith(("\\(", "\\[")):
            continue
        after = md[m.end:m.end + 1]
        if m.display:
            new = f"$${m.tex}$$"
        elif m.tex.strip() == m.tex and m.tex and not (after.isdigit() or after == "$"):
            new = f"${m.tex}$"
        else:
            continue
        out += [md[at:m.start], new]
        at = m.end
    return "".join(out) + md[at:] if out else md


def moodle_maths(html: str) -> str:
    """HTML as Moodle stores it with its maths as the bank's exporters write maths: Moodle's
    MathJax and TeX filters read `$$tex$$` and `[tex]tex[/tex]` as maths too, which become
    `\\[tex\\]` and `\\(tex\\)` (outside code, pre, script, style and textarea, where no
    filter looks). Linear: each opening looks for its closing once. A character XML cannot
    carry (a control character, raw or as `&#1;`) cannot be held by the tree: it is left out
    of a text that changes (the importer warns about such characters; every export leaves
    them out too)."""
    if "$$" not in html and "[tex]" not in html:
        return html
    try:
        root = lxml.html.fragment_fromstring(html, create_parent="div")
    except (etree.ParserError, ValueError):
        return html
    changed = False

    def fix(text: str | None) -> str | None:
        nonlocal changed
        if not text or ("$$" not in text and "[tex]" not in text):
            return text
        new = _delimited(_delimited(text, "$$", "$$", "\\[", "\\]"), "[tex]", "[/tex]",
                         "\\(", "\\)")
        if new == text:
            return text
        changed = True
        return xml_safe(new)[0]

    def walk(el: etree._Element) -> None:
        if el.tag not in _NO_MATHS:
            if (old := el.text) is not (text := fix(old)):
                el.text = text
            for child in el:
                walk(child)
        if (old := el.tail) is not (tail := fix(old)):
            el.tail = tail

    if (old := root.text) is not (text := fix(old)):
        root.text = text
    for child in root:
        walk(child)
    if not changed:
        return html
    return _escape_text(root.text or "") + "".join(etree.tostring(c, encoding="unicode", method="html") for c in root)


_NO_MATHS = frozenset({"code", "pre", "script", "style", "textarea", "kbd", "samp"})


def _escape_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _delimited(text: str, start: str, end: str, new_start: str, new_end: str) -> str:
    """`text` with each `start`..`end` span (not empty) rewritten between the new delimiters."""
    out: list[str] = []
    at = 0
    while (i := text.find(start, at)) != -1:
        j = text.find(end, i + len(start))
        if j == -1:
            break
        body = text[i + len(start):j]
        if body.strip():
            out += [text[at:i], new_start, body, new_end]
        else:
            out.append(text[at:j + len(end)])
        at = j + len(end)
    return "".join(out) + text[at:] if out else text


def _dropped(html: str) -> str:
    return _BLANK.sub("\n", html)


def _as_reference(html: str) -> str:
    return _BLANK.sub(lambda m: m[0][:-1] + "&#10;", html)


def _comment_blocks(html: str, outside: Callable[[str], str]) -> str:
    """`html` as raw HTML blocks with each comment that holds a blank line starting a block of
    its own (CommonMark's HTML block kind 2: from a line starting with `<!--` to the line holding
    `-->`, or to the end: a comment never closed runs to the end in HTML and in CommonMark);
    `outside` writes the rest's blank lines. Comments are found as HTML reads them: from `<!--`
    to the first `-->` after it (`<!-->` is an empty comment), else to the end."""
    out: list[str] = []
    pos = 0
    while (start := html.find(_COMMENT, pos)) != -1:
        end = html.find("-->", start + 2)
        end = len(html) if end == -1 else end + 3
        if not _BLANK.search(html, start, end):
            out.append(outside(html[pos:end]))
            pos = end
            continue
        before = outside(html[pos:start])
        line = before[before.rfind("\n") + 1:]
        if line.strip(" \t"):
            before += "\n\n"  # after other HTML on the line: a line break of its own
        elif before.strip() and not before[: len(before) - len(line)].endswith("\n\n"):
            before = before[: len(before) - len(line)] + "\n" + line  # a blank line before
        out += [before, html[start:end]]
        pos = end
    out.append(outside(html[pos:]))
    return "".join(out)


#: Elements a browser lays out as blocks: whitespace beside them is not shown.
_BLOCK_TAGS = frozenset(
    "address article aside blockquote dd details div dl dt figcaption figure footer form h1 h2 h3 "
    "h4 h5 h6 header hr li main nav ol p pre section summary table tbody td tfoot th thead tr ul"
    .split()
)


def _loose(html: str) -> bytes:
    """`canonical(html)` without the whitespace-only text beside block elements (between two
    blocks, before the first or after the last in a block), which no browser shows; `<pre>`
    keeps all of its text."""
    html = html.strip()
    if not html:
        return b""
    try:
        root = lxml.html.fragment_fromstring(html, create_parent="div")
    except (etree.ParserError, ValueError):
        return html.encode()
    for el in root.iter():
        if not isinstance(el.tag, str) or el.tag == "pre" or any(
                a.tag == "pre" for a in el.iterancestors()):
            continue
        kids = list(el)
        if kids and _is_block(kids[0]) and el.text is not None and not el.text.strip():
            el.text = None
        for kid, after in zip(kids, [*kids[1:], None], strict=False):
            if kid.tail is None or kid.tail.strip():
                continue
            if _is_block(kid) or (after is not None and _is_block(after)) or (
                    after is None and el.tag in _BLOCK_TAGS):
                kid.tail = None
    return etree.tostring(root, method="c14n")


def _is_block(el: etree._Element) -> bool:
    return isinstance(el.tag, str) and el.tag in _BLOCK_TAGS


class _Unsupported(Exception):
    pass


_BLOCK = {"p", "ul", "ol", "li", "pre", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "hr"}


class _Converter:
    def __init__(self, escape: bool) -> None:
        self.escape = escape

    def convert(self, html: str) -> str:
        try:
            root = lxml.html.fragment_fromstring(html, create_parent="div")
        except (etree.ParserError, ValueError) as exc:
            raise _Unsupported from exc
        return self.blocks(root).strip("\n")

    # block level -----------------------------------------------------------------------
    def blocks(self, el: etree._Element) -> str:
        parts: list[str] = []
        inline_run: list[str] = []

        def flush() -> None:
            text = "".join(inline_run).strip()
            if text:
                parts.append(text)
            inline_run.clear()

        if el.text:
            inline_run.append(self.text(el.text))
        for child in el:
            tag = child.tag if isinstance(child.tag, str) else ""
            if tag in _BLOCK:
                flush()
                parts.append(self.block(child))
            else:
                inline_run.append(self.inline(child))
            if child.tail:
                inline_run.append(self.text(child.tail))
        flush()
        return "\n\n".join(p for p in parts if p)

    def block(self, el: etree._Element) -> str:
        tag = el.tag
        if tag == "p":
            return self.inline_content(el).strip()
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            return "#" * int(tag[1]) + " " + self.inline_content(el).strip()
        if tag == "hr":
            return "***"
        if tag == "blockquote":
            inner = self.blocks(el)
            return "\n".join(("> " + line).rstrip() for line in inner.split("\n"))
        if tag == "pre":
            code = el[0] if len(el) and el[0].tag == "code" else el
            text = str(code.xpath("string()"))  # text_content(), which the stubs lack
            lang = ""
            for cls in (code.get("class") or "").split():
                if cls.startswith("language-"):
                    lang = cls[len("language-") :]
            fence = "```"
            while fence in text:
                fence += "`"
            return f"{fence}{lang}\n{text}{'' if text.endswith(chr(10)) else chr(10)}{fence}"
        if tag in ("ul", "ol"):
            return self.list_block(el)
        raise _Unsupported(tag)

    def list_block(self, el: etree._Element) -> str:
        ordered = el.tag == "ol"
        start = int(el.get("start", "1")) if ordered else 1
        loose = any(len(li) and li[0].tag == "p" for li in el)
        lines: list[str] = []
        for n, li in enumerate(el):
            if li.tag != "li":
                raise _Unsupported("list child")
            marker = f"{start + n}. " if ordered else "- "
            body = self.blocks(li)
            pad = " " * len(marker)
            sub = body.split("\n")
            lines.append(marker + sub[0] + "".join("\n" + (pad + s if s else "") for s in sub[1:]))
        return ("\n\n" if loose else "\n").join(lines)

    # inline level ----------------------------------------------------------------------
    def inline_content(self, el: etree._Element) -> str:
        out = [self.text(el.text or "")]
        for child in el:
            out.append(self.inline(child))
            tail = child.tail or ""
            if child.tag == "br" and tail.startswith("\n"):
                tail = tail[1:]  # markdown-it writes "<br />\n"; our "\\\n" already ends the line
            out.append(self.text(tail))
        return "".join(out)

    def inline(self, el: etree._Element) -> str:
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag in ("em", "strong"):
            mark = "*" if tag == "em" else "**"
            return f"{mark}{self.inline_content(el)}{mark}"
        if tag == "code" and len(el) == 0:
            text = el.text or ""
            ticks = "`"
            while ticks in text:
                ticks += "`"
            pad = " " if text.startswith("`") or text.endswith("`") or (
                text.startswith(" ") and text.endswith(" ") and text.strip()
            ) else ""
            return f"{ticks}{pad}{text}{pad}{ticks}"
        if tag == "br":
            return "\\\n"
        if tag == "a" and el.get("href") is not None and set(el.attrib) <= {"href", "title"}:
            title = el.get("title")
            dest = _dest(el.get("href", ""))
            t = f' "{_quote(title)}"' if title is not None else ""
            return f"[{self.inline_content(el)}]({dest}{t})"
        if tag == "img" and set(el.attrib) <= {"src", "alt", "title"} and len(el) == 0:
            title = el.get("title")
            t = f' "{_quote(title)}"' if title is not None else ""
            alt = _PUNCT.sub(r"\\\1", el.get("alt", ""))
            return f"![{alt}]({_dest(el.get('src', ''))}{t})"
        # anything else stays raw inline HTML (CommonMark passes it through)
        if tag in _BLOCK or not tag:
            raise _Unsupported(tag or "comment")
        html = etree.tostring(el, encoding="unicode", method="html", with_tail=False)
        return html

    def text(self, text: str) -> str:
        if not text:
            return ""
        if not self.escape:
            return text
        # maths (TeX between \\( \\) or \\[ \\], as the exporters write it) stays as it is
        out: list[str] = []
        at = 0
        for m in find_maths(text) if "\\" in text else ():
            if m.start == m.end or text[m.start] != "\\":
                continue
            out += [_PUNCT.sub(r"\\\1", text[at:m.start]), text[m.start:m.end]]
            at = m.end
        return "".join(out) + _PUNCT.sub(r"\\\1", text[at:])


def _dest(url: str) -> str:
    if not url or re.search(r"[\s()<>]", url):
        return "<" + url.replace("<", "%3C").replace(">", "%3E") + ">"
    return url


def _quote(title: str) -> str:
    return title.replace("\\", "\\\\").replace('"', '\\"')
