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
