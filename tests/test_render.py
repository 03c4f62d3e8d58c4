"""The one Markdown renderer: the plain-text fast path gives exactly markdown-it's output."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from dpassess.markup.markdown import _md, to_html, to_inline_html, to_plain
from strategies import line_text

_ascii = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=30)


@given(st.one_of(line_text(), _ascii, st.text(max_size=20)))
@example("1. first")
@example("a - b")
@example("- x")
@example("x.  ")
@example("Word\u00a0")
@example("a \u2028b")
@example("a $x$ b")
@example("pay $5 or $x$")
def test_fast_path_equals_markdown_it(text):
    assert to_html(text) == _md.render(text).strip()


def test_inline_and_plain():
    assert to_inline_html("a *b*") == "a <em>b</em>"
    assert to_inline_html("- a\n- b").startswith("<ul>")
    assert to_plain('Use `x < y` & "z"') == 'Use x < y & "z"'


def test_plain_text_keeps_a_bare_less_than_sign() -> None:
    """Found by hypothesis (QTI export property): raw HTML may hold `a < b`, which a browser
    shows as text; only tags and comments are dropped."""
    from dpassess.markup.markdown import to_plain

    assert to_plain("<b>\n0 0 < 1\n\n2") == "0 0 < 1 2"
    assert to_plain("x <!-- note --> *y* <br/>z") == "x y z"


def test_a_pipe_table_is_a_table_in_html_and_in_qti():
    """Stimuli are often tables: a GFM pipe table renders as <table> (lxml.html reads it back
    cell by cell), and its column alignment becomes QTI's `align` on each cell."""
    import lxml.html
    from lxml import etree

    from dpassess.markup.xhtml import QTI_NS, append_flow

    src = "| GPU | samples/s |\n|---|--:|\n| 1 | 900 |\n| 8 | 6300 |\n"
    html = to_html(src)
    table = lxml.html.fromstring(html)
    assert table.tag == "table"
    assert [[c.text_content() for c in row] for row in table.iter("tr")] == [
        ["GPU", "samples/s"], ["1", "900"], ["8", "6300"]]
    root = etree.Element(f"{{{QTI_NS}}}div")
    notes: set[str] = set()
    append_flow(root, html, notes)
    cells = root.findall(f".//{{{QTI_NS}}}td")
    assert [c.get("align") for c in cells] == [None, "right", None, "right"]
    assert notes == set()


# --- the visible text: what lint judges is what the renderer shows -----------------------------

#: Block elements and `<br>`: a browser starts a new line of text there.
_BLOCKS = {"p", "div", "li", "ul", "ol", "blockquote", "pre", "h1", "h2", "h3", "h4", "h5", "h6",
           "hr", "br", "table", "thead", "tbody", "tr", "th", "td"}


def rendered_text(source: str) -> str:
    """The oracle: the text of the HTML `to_html` writes, as lxml.html reads it (an image as its
    `alt`, a block element or `<br>` as a line break), white space collapsed."""
    import lxml.html
    from lxml import etree

    html = to_html(source)
    if not html.strip():
        return ""
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    for el in root.iter(etree.Element):
        if el.tag == "img":
            el.tail = (el.get("alt") or "") + (el.tail or "")
        elif el.tag in _BLOCKS:
            el.text = "\n" + (el.text or "")
            el.tail = "\n" + (el.tail or "")
    return " ".join(root.text_content().split())


#: Markdown-ish text: words, every character Markdown gives a meaning to, entities, escapes,
#: maths, line starts of blocks, and raw HTML of ordinary elements, each closed where it opens
#: (an HTML parser's recovery from stray end tags is its own, not what a student sees).
_PIECES = st.sampled_from([
    "a", "b c", "word", "x1", " ", "  ", "\n", "\n\n", "*", "**", "_", "`", "``", "\\", "\\*",
    "\\_", "&amp;", "&lt;", "&copy;", "&#65;", "&", "[", "]", "(", ")", "![alt](i.png)",
    "[link](u)", "$", "$x^2$", "$$", "\\(", "\\)", "# ", "> ", "- ", "1. ", "    ", "---", "===",
    "|", "~~~", "```", "<b>x</b>", "<em>y z</em>", "<br>", "<p>p</p>", "<div>d</div>",
    "<div>\n", "\n</div>", '<img src="i.png" alt="a &amp; b">', "<!-- c -->", "<span>s</span>",
    "<", ">", "H<sub>2</sub>O", "é", "\t",
])
_markdownish = st.lists(_PIECES, max_size=14).map("".join)


@given(st.one_of(_markdownish, line_text(), _ascii))
@example("a &amp; b")
@example("x \\*y\\*")
@example("H<sub>2</sub>O")
@example("![a *b* `c`](i.png) d")
@example("<div>\nfoo <b>bar</b>\n</div>\n\ntext")
@example("| a | b |\n|---|---|\n| c | d |")
@example("$$\nx^2\n$$")
def test_lints_visible_text_is_the_rendered_text(source: str) -> None:
    from dpassess.lint.text import plain

    assert plain(source) == rendered_text(source)


def test_the_visible_text_of_entities_escapes_and_raw_html() -> None:
    """Hand-worked: what a student sees, not the Markdown source."""
    from dpassess.lint.text import plain, without_code, words

    assert plain("a &amp; b") == "a & b"
    assert plain("x \\*y\\*") == "x *y*"
    assert "amp" not in words(plain("a &amp; b"))
    assert plain("H<sub>2</sub>O is water") == "H2O is water"
    assert plain("one<br>two") == "one two"
    assert plain("- first\n- second") == "first second"
    assert plain("Is $x^2$ positive?") == "Is \\(x^2\\) positive?"
    assert without_code("Call `f(x)` on $x^2$ now") == "Call on now"


def test_the_visible_text_of_raw_html_holding_a_control_character():
    """Found by the importers' fuzz slice (a GIFT question whose stem is an HTML block): lxml
    refuses a control character in a text it is given, so the block's text crashed the import.
    A control character shows nothing; the rest of the block reads as before."""
    assert to_plain('<div>a\x01<br>b<img alt="q\x02"></div>\n\nnext') == "a bq next"
