"""Links and MathML in item text -> only what may reach a student: URLs decided as a browser
reads them, against an allow-list of schemes, and MathML held to the elements and attributes
that maths needs.

A URL is decided on its parsed value (the attribute's value with character references decoded,
as the HTML parser gives it), read as a browser reads it (the WHATWG URL parser): leading and
trailing C0 controls and spaces are stripped, tabs and line breaks anywhere are removed, and the
scheme is the ASCII letters, digits, `+`, `-` and `.` before the first `:` (lower-cased). A URL
without a scheme is relative: a file of the bank or a page of the same site. Allowed schemes are
`http`, `https` and `mailto`, and for an image's `src` a PNG, JPEG, GIF or WebP `data:` URL;
`javascript:`, other `data:`, `vbscript:`, `file:` and every other scheme are not.

HTML written as a string (Moodle XML, GIFT) is read by the standard library's HTML tokenizer
(character references decoded as HTML5 says, a missing semicolon too); a field whose URLs are
all allowed is kept as it is, byte for byte, and in a field with one that is not, each start tag
that holds one is written again without it (the rest of the field is left as it was). QTI's XHTML is built as a tree (`dpassess.markup.xhtml`), which asks
`url_allowed` for each URL attribute and `clean_mathml` for each `math` element.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import escape
from html.parser import HTMLParser
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lxml import etree

#: Schemes a link or an image may use (besides a relative URL, which has none).
ALLOWED_SCHEMES = frozenset({"http", "https", "mailto"})

#: Attributes whose value is a URL a browser may follow, load or submit to (HTML, SVG, MathML).
URL_ATTRIBUTES = frozenset({
    "href", "src", "action", "formaction", "cite", "longdesc", "poster", "background", "data",
    "codebase", "classid", "dynsrc", "lowsrc", "ping", "manifest", "icon", "profile", "usemap",
    "archive", "srcset", "xlink:href", "xml:base",
})

_C0_AND_SPACE = "".join(chr(c) for c in range(0x21))
_REMOVED = {ord("\t"): None, ord("\n"): None, ord("\r"): None}
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


#: A raster image inlined as a data URL (what an `<img>` may show without a file: no SVG, which
#: can hold script when opened on its own).
_DATA_IMAGE = re.compile(r"data:image/(?:png|jpeg|gif|webp)[;,]", re.IGNORECASE)


def _as_read(url: str) -> str:
    return url.strip(_C0_AND_SPACE).translate(_REMOVED)


def url_scheme(url: str) -> str | None:
    """The scheme a browser reads in `url` (an attribute's decoded value), lower-cased; None for
    a relative URL."""
    m = _SCHEME.match(_as_read(url))
    return m.group(0)[:-1].lower() if m else None


def url_allowed(url: str, *, image: bool = False) -> bool:
    """Whether `url` is relative or uses an allowed scheme; with `image` (an `<img src>`), a PNG,
    JPEG, GIF or WebP data URL too."""
    scheme = url_scheme(url)
    if scheme is None or scheme in ALLOWED_SCHEMES:
        return True
    return image and _DATA_IMAGE.match(_as_read(url)) is not None


def _srcset_allowed(value: str) -> bool:
    """Every candidate of a `srcset` (URLs separated by commas, each with a descriptor)."""
    return all(url_allowed(part.strip().split(" ")[0]) for part in value.split(",") if part.strip())


def attribute_allowed(element: str, name: str, value: str) -> bool:
    """Whether attribute `name` (lower case) of `element` may carry `value`: anything for a
    non-URL attribute, an allowed URL for a URL attribute (`url_allowed`)."""
    if name == "srcset":
        return _srcset_allowed(value)
    return name not in URL_ATTRIBUTES or url_allowed(value, image=(element, name) == ("img", "src"))


#: The URL attributes' names as the tokenizer reports them (lower case, without a prefix).
_URL_NAMES = tuple(sorted({a.split(":")[-1] for a in URL_ATTRIBUTES}))

#: A URL attribute's name followed by `=`: HTML without one holds no URL (a cheap first look;
#: the decision itself is made on the parsed HTML).
_MAY_HOLD_URL = re.compile(
    r"(?i)(?:" + "|".join(sorted((re.escape(a) for a in _URL_NAMES), key=len, reverse=True))
    + r")\s*=")


def _may_hold_url(html: str) -> bool:
    """Whether `html` has a URL attribute's name followed by `=` (`_MAY_HOLD_URL`), with two
    substring tests first: a name the tokenizer reports is in `html.lower()` (it lower-cases
    names character by character), and an attribute with a value has a `=`. Most fields pass
    neither, and these tests cost a tenth of the pattern's search."""
    if "=" not in html:
        return False
    low = html.lower()
    return any(name in low for name in _URL_NAMES) and _MAY_HOLD_URL.search(html) is not None


class _StartTags(HTMLParser):
    """Every start tag with an attribute that is not allowed in HTML `source`: where it is (an
    offset), its source text and what to write instead. A comment that holds one goes whole:
    where this tokenizer and a browser end a comment differently (`--!>`), the browser may read
    part of it as markup."""

    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=True)
        self.source = source
        self.starts = [0]
        for i, ch in enumerate(source):
            if ch == "\n":
                self.starts.append(i + 1)
        self.found: list[tuple[int, str, str]] = []
        self.dropped: list[str] = []

    def _offset(self) -> int:
        line, col = self.getpos()
        return self.starts[line - 1] + col

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._check(tag, attrs, ">")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._check(tag, attrs, " />")

    def handle_comment(self, data: str) -> None:
        if "<" not in data or not _may_hold_url(data):
            return
        inner = _StartTags(data)
        inner.feed(data)
        inner.close()
        if not inner.dropped:
            return
        self.dropped += inner.dropped
        at = self._offset()
        close = self.source.find(">", at + 4 + len(data))
        if close != -1:
            self.found.append((at, self.source[at:close + 1], ""))

    def _check(self, tag: str, attrs: list[tuple[str, str | None]], end: str) -> None:
        bad = [(k, v) for k, v in attrs if v is not None and not attribute_allowed(tag, k, v)]
        if not bad:
            return
        self.dropped += [f"{k}={v!r} on <{tag}>" for k, v in bad]
        kept = "".join(f" {k}" if v is None else f' {k}="{escape(v, quote=True)}"'
                       for k, v in attrs if (k, v) not in bad)
        raw = self.get_starttag_text()
        assert raw is not None
        self.found.append((self._offset(), raw, f"<{tag}{kept}{end}"))


def drop_unsafe_urls(html: str) -> tuple[str, list[str]]:
    """`html` without the URL attributes that are not allowed, and a description of each one
    dropped (`href='javascript:alert(1)' on <a>`); `html` itself, unchanged, when there is
    none. Only the start tags that held one (and a comment that held one) are written again."""
    if "<" not in html or not _may_hold_url(html):
        return html, []
    tags = _StartTags(html)
    tags.feed(html)
    tags.close()
    if not tags.dropped:
        return html, []
    out, last = [], 0
    for at, raw, instead in tags.found:
        if at < last or html[at:at + len(raw)] != raw:  # cannot happen: read there, in order
            return escape(html, quote=False), tags.dropped
        out += [html[last:at], instead]
        last = at + len(raw)
    out.append(html[last:])
    return "".join(out), tags.dropped


# --- TeX for MathJax ----

#: TeX commands (MathJax's and latex2mathml's) that put a link, CSS, a class, an id, data
#: attributes, a tooltip or an action into the formula, or load code.
ACTIVE_TEX = frozenset({
    "href", "url", "style", "class", "cssId", "colorbox", "fcolorbox", "htmlClass",
    "htmlStyle", "htmlId", "htmlData", "data", "bbox", "toggle", "mathtip", "texttip",
    "require", "unicode",
})


def tex_commands(tex: str) -> Iterator[tuple[int, str]]:
    """Each command of `tex` (`\\name`, letters only) with its offset; `\\\\` and other
    escaped characters are not commands. One pass over the characters."""
    i, n = 0, len(tex)
    while i < n:
        if tex[i] != "\\":
            i += 1
            continue
        j = i + 1
        while j < n and tex[j].isascii() and tex[j].isalpha():
            j += 1
        if j == i + 1:  # an escaped character: \\, \{, \$ ...
            i += 2
            continue
        yield i, tex[i + 1:j]
        i = j


_MATHS_OPEN = re.compile(r"\\[(\[]")
_MATHS_CLOSE = {"(": "\\)", "[": "\\]"}


def defuse_tex(html: str) -> tuple[str, list[str]]:
    """`html` rendered with its maths as TeX (between `\\(` `\\)` or `\\[` `\\]`, what MathJax
    reads) with each command of `ACTIVE_TEX` inside the maths written without its backslash, so
    that MathJax shows its name as text instead of making a link, a style or an action; and the
    commands found (each once, in order). `html` itself when there is none."""
    if "\\(" not in html and "\\[" not in html:
        return html, []
    out: list[str] = []
    found: list[str] = []
    last = 0
    pos = 0
    while (m := _MATHS_OPEN.search(html, pos)) is not None:
        close = html.find(_MATHS_CLOSE[m.group(0)[1]], m.end())
        if close == -1:
            break
        for at, name in tex_commands(html[m.end():close]):
            if name in ACTIVE_TEX:
                cut = m.end() + at
                out.append(html[last:cut])
                last = cut + 1  # the backslash
                if name not in found:
                    found.append(name)
        pos = close + 2
    if not found:
        return html, []
    out.append(html[last:])
    return "".join(out), found


def tex_warning(commands: list[str]) -> str:
    """The export warning for the commands `defuse_tex` found."""
    names = ", ".join(f"\\{c}" for c in commands)
    return (f"the maths uses {names}, which MathJax makes a link, a style or an action of: "
            "written without the backslash, so it shows as text (lint MT005)")


# --- MathML ----------------------------------------------------------------------------------

#: The MathML elements maths needs (presentation MathML 2, which QTI 2.1 imports, and what
#: browsers render): no `maction` (it runs actions), nothing from another namespace.
MATHML_ELEMENTS = frozenset("""
math semantics annotation mrow mi mn mo ms mtext mspace msub msup msubsup mfrac msqrt mroot
mstyle merror mpadded mphantom mfenced menclose munder mover munderover mmultiscripts
mprescripts none mtable mtr mtd mlabeledtr maligngroup malignmark
""".split())

#: The attributes those elements may carry: layout and typography only. No links (`href`,
#: `xlink:href`), no CSS (`style`, `class`, `id`), no `mathbackground` or `background`.
MATHML_ATTRIBUTES = frozenset("""
display mathvariant mathsize mathcolor color fontsize fontweight fontstyle fontfamily dir
encoding fence separator stretchy symmetric largeop movablelimits accent accentunder lspace
rspace minsize maxsize form linethickness numalign denomalign bevelled width height depth
voffset columnalign rowalign columnlines rowlines columnspacing rowspacing columnwidth frame
framespacing equalrows equalcolumns displaystyle scriptlevel columnspan rowspan notation open
close separators align side scriptminsize scriptsizemultiplier subscriptshift
superscriptshift alignmentscope groupalign rowspacing mslinethickness lquote rquote
linebreak indentalign altimg alttext
""".split())

_MATHML_NS = "http://www.w3.org/1998/Math/MathML"


def mathml_attribute_allowed(name: str) -> bool:
    """Whether a MathML element may keep attribute `name` (a local name without namespace)."""
    return name in MATHML_ATTRIBUTES


def clean_mathml(math: etree._Element, notes: set[str]) -> None:
    """Hold the `math` element `math` (MathML namespace) to `MATHML_ELEMENTS` and
    `MATHML_ATTRIBUTES`: an element that is not allowed is removed with its content (an
    attribute, alone), each described in `notes`."""
    from lxml import etree

    todo = [math]
    while todo:
        el = todo.pop()
        qname = etree.QName(el)
        for key in list(el.attrib):
            name = etree.QName(key)
            if name.namespace is None and mathml_attribute_allowed(name.localname):
                continue
            shown = name.localname if name.namespace is None else f"{{{name.namespace}}}{name.localname}"
            notes.add(f"attribute {shown!r} on MathML <{qname.localname}> is not allowed "
                      "(links, styles and classes do not belong in maths); left out")
            del el.attrib[key]
        for child in list(el):
            if not isinstance(child.tag, str):  # a comment or processing instruction
                _remove_keeping_tail(child)
                continue
            cq = etree.QName(child)
            if cq.namespace != _MATHML_NS or cq.localname not in MATHML_ELEMENTS:
                notes.add(f"<{cq.localname}> is not MathML that maths needs; left out with "
                          "its content")
                _remove_keeping_tail(child)
                continue
            todo.append(child)


def _remove_keeping_tail(el: etree._Element) -> None:
    parent = el.getparent()
    assert parent is not None
    tail = el.tail
    prev = el.getprevious()
    parent.remove(el)
    if tail:
        if prev is not None:
            prev.tail = (prev.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
