"""Rendered Markdown (HTML from `render.to_html`) -> lxml elements in QTI 2.1's XHTML subset.

The HTML is parsed, never pasted: well-formed output (everything markdown-it writes itself) goes
through libxml2's XML parser straight into the QTI namespace; anything else (hand-written raw HTML
such as `<br>` or `&nbsp;`) goes through the standard library's tolerant HTML tokenizer. The tree is
then held to the content model of the QTI 2.1.2 schema: an element or attribute QTI does not allow
there is reported in `notes` and only that wrapper is removed, its text and children kept. MathML
`math` elements (from `to_html(..., maths="mathml")`, or raw in the Markdown) are kept where QTI
2.1 allows `m:math` (wherever it allows inline or block content), held to the elements and
attributes maths needs (`dpassess.markup.sanitize.clean_mathml`: no links, styles or classes).
A link or image whose URL is not http, https, mailto or relative (or, for an image, a raster
`data:` URL) loses that attribute
(`dpassess.markup.sanitize.url_allowed`), with a note.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from lxml import etree

from dpassess.markup.maths import MATHML_NS
from dpassess.markup.sanitize import clean_mathml, mathml_attribute_allowed, url_allowed

QTI_NS = "http://www.imsglobal.org/xsd/imsqti_v2p1"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_Q = "{%s}" % QTI_NS  # noqa: UP031 - a constant prefix, not formatting
_MATH = "{%s}" % MATHML_NS  # noqa: UP031

# --- the content model of QTI 2.1.2 for its XHTML elements (read off imsqti_v2p1p2.xsd) ----------

INLINE = frozenset(
    "a abbr acronym b big br cite code dfn em i img kbd q samp small span strong sub sup tt var"
    .split()
)
BLOCK = frozenset("address blockquote div dl h1 h2 h3 h4 h5 h6 hr ol p pre table ul".split())
FLOW = INLINE | BLOCK
_INLINE_ONLY = (INLINE - {"br", "img"}) | set("address caption dt h1 h2 h3 h4 h5 h6 p pre".split())
_TABLE_PARTS = frozenset({"caption", "col", "colgroup", "thead", "tfoot", "tbody"})

#: element -> the child elements QTI allows in it
CHILDREN: dict[str, frozenset[str]] = {
    **{name: INLINE for name in _INLINE_ONLY},
    **{name: FLOW for name in ("div", "li", "dd", "td", "th")},
    "blockquote": BLOCK,
    "ol": frozenset({"li"}),
    "ul": frozenset({"li"}),
    "dl": frozenset({"dt", "dd"}),
    "table": _TABLE_PARTS | {"tr"},  # bare rows are put in a tbody, as HTML parsers do
    "colgroup": frozenset({"col"}),
    "thead": frozenset({"tr"}),
    "tbody": frozenset({"tr"}),
    "tfoot": frozenset({"tr"}),
    "tr": frozenset({"td", "th"}),
    "br": frozenset(),
    "hr": frozenset(),
    "img": frozenset(),
    "col": frozenset(),
}
KNOWN = frozenset(CHILDREN)
#: elements that may hold text directly (XSD mixed="true")
MIXED = _INLINE_ONLY | {"div", "li", "dd", "td", "th"}
#: elements that must hold at least one child element
_NEEDS_CHILD = frozenset({"ol", "ul", "dl", "thead", "tbody", "tfoot", "tr"})
_VOID = frozenset({"br", "hr", "img", "col"})

_INT = re.compile(r"-?[0-9]{1,9}")
_LENGTH = re.compile(r"[0-9]+%?")
_NCNAME = re.compile(r"[A-Za-z_][\w.\-]*")
_LANGUAGE = re.compile(r"[a-zA-Z]{1,8}(?:-[a-zA-Z0-9]{1,8})*")
_MIME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+/[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _enum(*values: str) -> re.Pattern[str]:
    return re.compile("|".join(values))


_COMMON: dict[str, re.Pattern[str] | None] = {"class": None, "label": None}
_CELL = {
    **_COMMON, "abbr": None, "axis": None, "headers": _NCNAME, "colspan": _INT, "rowspan": _INT,
    "scope": _enum("col", "colgroup", "row", "rowgroup"),
    "align": _enum("left", "center", "right", "justify", "char"),
    "valign": _enum("top", "middle", "bottom", "baseline"),
}
#: element -> attribute -> pattern its value must match (None: any string)
ATTRS: dict[str, dict[str, re.Pattern[str] | None]] = {name: _COMMON for name in KNOWN}
ATTRS.update({
    "a": {**_COMMON, "href": None, "type": _MIME},
    "img": {**_COMMON, "src": None, "alt": None, "longdesc": None,
            "width": _LENGTH, "height": _LENGTH},
    "q": {**_COMMON, "cite": None},
    "blockquote": {**_COMMON, "cite": None},
    "table": {**_COMMON, "summary": None},
    "col": {**_COMMON, "span": _INT},
    "colgroup": {**_COMMON, "span": _INT},
    "td": _CELL,
    "th": _CELL,
})
_REQUIRED = {"a": ("href",), "img": ("src",)}
#: The style markdown-it writes on the cells of an aligned table column -> QTI's `align`.
_CELL_ALIGN = {f"text-align:{a}": a for a in ("left", "center", "right")}
_URI_ATTRS = frozenset({"href", "src", "cite", "longdesc"})
# xs:anyURI as libxml2 (and so every lxml-based validator) checks it.
_ANY_URI = etree.XMLSchema(etree.XML(
    b'<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">'
    b'<xs:element name="u" type="xs:anyURI"/></xs:schema>'))
_STRAY_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _uri(value: str) -> str | None:
    """`value` as a valid xs:anyURI (a stray `%` escaped), or None when it cannot be one."""
    for candidate in (value, _STRAY_PERCENT.sub("%25", value)):
        probe = etree.Element("u")
        probe.text = candidate
        if _ANY_URI.validate(probe):
            return candidate
    return None

# Characters XML 1.0 cannot carry (C0 controls but tab/LF/CR, surrogates, U+FFFE/U+FFFF).


# --- parsing -----------------------------------------------------------------------------------

_XML_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=False)
_OPEN = f'<div xmlns="{QTI_NS}">'.encode()


def parse(html: str, notes: set[str]) -> etree._Element:
    """A `div` (QTI namespace) holding the parsed HTML, before the content-model check."""
    try:
        return etree.fromstring(_OPEN + html.encode() + b"</div>", _XML_PARSER)
    except etree.XMLSyntaxError:
        builder = _Builder(notes)
        builder.feed(html)
        if builder.rawdata.startswith(("<?", "<!")):
            # an unclosed `<?...` or `<!...` is a comment to the end of the text, as a browser
            # reads it (the tokenizer would give it back as text)
            notes.add("an HTML comment or processing instruction is not shown and was left out")
            builder.rawdata = ""
        builder.close()
        return builder.root


class _Builder(HTMLParser):
    """Tolerant HTML -> element tree: unknown tags are left out (content kept), stray end tags are
    ignored, unclosed elements close with their parent, as a browser would render them."""

    def __init__(self, notes: set[str]) -> None:
        super().__init__(convert_charrefs=True)
        self.root = etree.Element(_Q + "div")
        self.stack = [self.root]
        self.notes = notes

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        tag = tag.removeprefix("m:")
        if tag == "math" or etree.QName(self.stack[-1]).namespace == MATHML_NS:
            # MathML names and attributes are lower case, so the tokenizer's folding keeps them;
            # only the attributes maths needs are kept (`dpassess.markup.sanitize`)
            if not _NCNAME.fullmatch(tag):
                self.notes.add(f"<{tag}> is not MathML that maths needs; left out")
                return
            kept = {}
            for k, v in attrs:
                if k.startswith("xmlns"):
                    continue
                if mathml_attribute_allowed(k):
                    kept[k] = v or ""
                else:
                    self.notes.add(f"attribute {k!r} on MathML <{tag}> is not allowed (links, "
                                   "styles and classes do not belong in maths); left out")
            mathml = etree.SubElement(self.stack[-1], _MATH + tag, kept)
            self.stack.append(mathml)
            return
        if tag not in KNOWN:
            self.notes.add(f"<{tag}> is not in QTI's XHTML subset; its content is kept without it")
            return
        el = etree.SubElement(self.stack[-1], _Q + tag)
        for name, value in attrs:
            try:
                el.set(name, value or "")
            except ValueError:
                self.notes.add(f"attribute {name!r} on <{tag}> is not XML; left out")
        if tag not in _VOID:
            self.stack.append(el)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        tag = tag.removeprefix("m:")
        in_math = tag == "math" or etree.QName(self.stack[-1]).namespace == MATHML_NS
        self.handle_starttag(tag, attrs)
        if in_math or (tag in KNOWN and tag not in _VOID):
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        tag = tag.removeprefix("m:")
        for depth in range(len(self.stack) - 1, 0, -1):
            if etree.QName(self.stack[depth]).localname == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        parent = self.stack[-1]
        if len(parent):
            parent[-1].tail = (parent[-1].tail or "") + data
        else:
            parent.text = (parent.text or "") + data

    def handle_comment(self, data: str) -> None:
        self.notes.add("an HTML comment is not shown and was left out")

    def handle_decl(self, decl: str) -> None:
        self.notes.add(f"<!{decl}> was left out")

    def unknown_decl(self, data: str) -> None:
        self.notes.add(f"<![{data}]> was left out")

    def parse_marked_section(self, i: int, report: int = 1) -> int:
        """`<![` opens what a browser reads as a comment up to the next `>` (HTML's tokenizer,
        outside SVG and MathML). Python 3.11's parser raises on a keyword it does not know
        (`<![CDn`), and reads `<![CDATA[` on to `]]>`."""
        end = self.rawdata.find(">", i + 3)
        if end < 0:
            return -1  # unclosed: the rest is a comment (`parse` leaves it out)
        self.unknown_decl(self.rawdata[i + 3:end].removesuffix("]]").removesuffix("]"))
        return end + 1

    def handle_pi(self, data: str) -> None:
        self.notes.add(f"<?{data}> was left out")


# --- the content-model check -------------------------------------------------------------------


def clean(container: etree._Element, allowed: frozenset[str], notes: set[str]) -> None:
    """Hold the children of `container` to `allowed` (and their subtrees to QTI's model)."""
    parent_name = etree.QName(container).localname
    i = 0
    while i < len(container):
        child = container[i]
        if not isinstance(child.tag, str):  # comment or processing instruction
            notes.add("an HTML comment or processing instruction is not shown and was left out")
            _unwrap(child, keep_children=False)
            continue
        qname = etree.QName(child)
        if qname.namespace == MATHML_NS and qname.localname == "math" and (
                "span" in allowed or "p" in allowed):
            clean_mathml(child, notes)  # the elements and attributes maths needs, no links
            i += 1
            continue
        name = qname.localname.lower() if qname.namespace == QTI_NS else qname.text
        if name not in KNOWN:
            notes.add(f"<{name}> is not in QTI's XHTML subset; its content is kept without it")
            _unwrap(child)
            continue
        if name not in allowed:
            notes.add(f"<{name}> is not allowed inside <{parent_name}> in QTI; "
                      "its content is kept without it")
            _unwrap(child)
            continue
        if qname.localname != name:
            child.tag = _Q + name
        if not _attributes(child, name, notes):
            _unwrap(child)
            continue
        clean(child, CHILDREN[name], notes)
        if (name == "table" and not _table(child)) or not _shape_ok(child, name):
            notes.add(f"<{name}> holds content QTI does not allow there; "
                      "its content is kept without it")
            _unwrap(child)
            continue
        i += 1


def _attributes(el: etree._Element, name: str, notes: set[str]) -> bool:
    """Drop attributes QTI does not allow (noted); False when a required one is missing."""
    allowed = ATTRS[name]
    for key, value in [(str(k), str(v)) for k, v in el.attrib.items()]:
        if key == XML_LANG or key == "lang":
            del el.attrib[key]
            if _LANGUAGE.fullmatch(value):
                el.set(XML_LANG, value)
            else:
                notes.add(f"lang={value!r} on <{name}> is not a language code; left out")
            continue
        if key == "style" and name in ("td", "th") and value in _CELL_ALIGN:
            del el.attrib[key]  # a Markdown table column's alignment, as QTI says it
            el.set("align", _CELL_ALIGN[value])
            continue
        if key not in allowed:
            notes.add(f"attribute {key!r} on <{name}> is not in QTI's XHTML subset; left out")
            del el.attrib[key]
            continue
        pattern = allowed[key]
        if key in _URI_ATTRS and not url_allowed(value, image=(name, key) == ("img", "src")):
            notes.add(f"{key}={value!r} on <{name}>: only http, https, mailto and relative links "
                      "are written; left out")
            del el.attrib[key]
        elif key in _URI_ATTRS:
            uri = _uri(value)
            if uri is None:
                notes.add(f"{key}={value!r} on <{name}> is not a URI; left out")
                del el.attrib[key]
            elif uri != value:
                el.set(key, uri)
        elif pattern is not None and not pattern.fullmatch(value):
            notes.add(f"{key}={value!r} on <{name}> is not a value QTI accepts; left out")
            del el.attrib[key]
    for key in _REQUIRED.get(name, ()):
        if el.get(key) is None:
            notes.add(f"<{name}> without {key} cannot be carried; its content is kept without it")
            return False
    if name == "img" and el.get("alt") is None:
        el.set("alt", "")
    return True


def _shape_ok(el: etree._Element, name: str) -> bool:
    if name in MIXED:
        return True
    if (el.text or "").strip() or any((c.tail or "").strip() for c in el):
        return False
    if name in _NEEDS_CHILD and not len(el):
        return False
    return name != "table" or any(etree.QName(c).localname == "tbody" for c in el)


_TABLE_ORDER = {"caption": 0, "col": 1, "colgroup": 2, "thead": 3, "tfoot": 4, "tbody": 5}


def _table(table: etree._Element) -> bool:
    """Put bare rows in a tbody and the parts in the order QTI requires (HTML renders by part,
    not by source order, so the reading order is unchanged). False if QTI cannot hold it."""
    if (table.text or "").strip() or any((c.tail or "").strip() for c in table):
        return False
    parts: list[etree._Element] = []
    body: etree._Element | None = None
    for child in list(table):
        child.tail = None
        if etree.QName(child).localname == "tr":
            if body is None:
                body = etree.Element(_Q + "tbody")
                parts.append(body)
            body.append(child)
        else:
            body = None
            parts.append(child)
    names = [etree.QName(p).localname for p in parts]
    if any(names.count(n) > 1 for n in ("caption", "thead", "tfoot")):
        return False
    parts.sort(key=lambda p: _TABLE_ORDER[etree.QName(p).localname])
    table.text = None
    table[:] = parts
    return True


def _unwrap(el: etree._Element, *, keep_children: bool = True) -> None:
    """Replace `el` by its text and children (or by nothing but its tail)."""
    parent = el.getparent()
    assert parent is not None
    index = parent.index(el)
    text = (el.text or "") if keep_children else ""
    children = list(el) if keep_children else []
    tail = el.tail or ""
    _append_text(parent, index, text)
    parent.remove(el)
    for offset, c in enumerate(children):
        parent.insert(index + offset, c)
    _append_text(parent, index + len(children), tail)


def _append_text(parent: etree._Element, index: int, text: str) -> None:
    """Add `text` just before position `index` among `parent`'s children."""
    if not text:
        return
    if index == 0:
        parent.text = (parent.text or "") + text
    else:
        prev = parent[index - 1]
        prev.tail = (prev.tail or "") + text


# --- the entry point ---------------------------------------------------------------------------


PLAIN_TEXT, PLAIN_PARAGRAPH, MARKUP = "text", "paragraph", "markup"


def _plain(html: str) -> bool:
    """Whether `html` has no markup, entity or carriage return to read."""
    return "<" not in html and ">" not in html and "&" not in html and "\r" not in html


def flow_kind(html: str) -> str:
    """`PLAIN_TEXT` (no markup, entity or carriage return to read), `PLAIN_PARAGRAPH` (one
    `<p>` of such text) or `MARKUP` (anything else: parsed)."""
    if _plain(html):
        return PLAIN_TEXT
    if html.startswith("<p>") and html.endswith("</p>") and _plain(html[3:-4]):
        return PLAIN_PARAGRAPH
    return MARKUP


def append_flow(parent: etree._Element, html: str, notes: set[str]) -> str:
    """Append the content of `html` to `parent`, a QTI element holding flow content (div,
    simpleChoice, modalFeedback), and return its `flow_kind`. Everything left out is described
    in `notes`.

    Most rendered text is plain text or one plain paragraph (`flow_kind`); those are appended
    directly, as parsing them would give them."""
    kind = flow_kind(html)
    if kind is PLAIN_TEXT:
        _append_text(parent, len(parent), html)
        return kind
    if kind is PLAIN_PARAGRAPH:
        etree.SubElement(parent, _Q + "p").text = html[3:-4] or None
        return kind
    root = parse(html, notes)
    clean(root, FLOW, notes)
    if root.text:
        _append_text(parent, len(parent), root.text)
    for child in root:
        parent.append(child)
    return kind
