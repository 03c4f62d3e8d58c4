"""HTML -> Markdown for importers: the Markdown renders back to the same HTML, always."""

from __future__ import annotations

import pytest
from hypothesis import given

from dpassess.importers.html_markdown import html_to_markdown, same_html
from dpassess.markup.markdown import to_html, to_inline_html
from strategies import line_text

READABLE = [
    "a * b", "1. x", "Use `B × W` *now*", "- a\n- b", "- a\n\n- b", "# h", "> q",
    '[a](http://x "t")', "![i](s.png)", "```py\ncode <\n```", "line1\nline2", "a ]]> b",
    "**strong** and *em*", "``a ` b``",
]


@pytest.mark.parametrize("md", READABLE)
def test_plain_markdown_comes_back_as_written(md):
    assert html_to_markdown(to_html(md)) == md.replace("``a ` b``", "``a ` b``")


@given(line_text(max_words=12))
def test_block_round_trip_renders_identically(md):
    html = to_html(md)
    assert same_html(to_html(html_to_markdown(html)), html)


@given(line_text(max_words=6))
def test_inline_round_trip_renders_identically(md):
    html = to_inline_html(md)
    assert same_html(to_inline_html(html_to_markdown(html, inline=True)), html)


def test_html_from_an_editor_is_kept_as_html():
    html = '<p>Hello <span style="color:red">world</span></p>\n<table><tr><td>1</td></tr></table>'
    md = html_to_markdown(html)
    assert same_html(to_html(md), html)
