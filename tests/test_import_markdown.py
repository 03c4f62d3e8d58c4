"""HTML -> Markdown for importers: the Markdown renders back to the same HTML, always."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

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


# --- comments holding a blank line ------------------------------------------------------------
# A blank line ends an HTML block, and a character reference is not read inside a comment, so
# the raw-HTML fallback changed such a comment (found by hypothesis in the GIFT round trip).

COMMENT = "<!--0\n\n0-->"


@pytest.mark.parametrize("md", [
    COMMENT,                       # the whole text
    f"a\n{COMMENT}",               # after a paragraph (a comment interrupts it)
    f"{COMMENT}\nb",               # before one
    f"{COMMENT} tail\n\nb",        # the rest of its last line belongs to it
    f"- {COMMENT.replace(chr(10) * 2, chr(10) * 2 + '  ')}",  # in a list item
    "> <!--0\n>\n> 0-->",          # in a block quote
    "```\na\n\nb\n```\n" + COMMENT,  # after code whose blank lines are written as &#10;
    "<!--a\n\nb-->\n\n<!--c\n\n\nd-->",  # two of them
    "<!-- never closed\n\nthe rest `x`",  # to the end (found in the Moodle XML round trip)
    "a\n\n<!-- never closed\n\n\nb",   # after a paragraph, to the end
])
def test_a_comment_with_a_blank_line_comes_back_exactly(md):
    html = to_html(md)
    back = html_to_markdown(html)
    assert same_html(to_html(back), html), back


def test_a_comment_with_a_blank_line_as_an_option():
    html = to_inline_html(COMMENT)
    assert same_html(to_inline_html(html_to_markdown(html, inline=True)), html)


def test_after_a_block_on_its_line_a_comment_gets_a_line_of_its_own():
    """Moodle's multilang form joins blocks without line breaks: the comment cannot start a
    line without the whitespace before it, which no browser shows (the same rendering)."""
    html = f"<p>a</p>{COMMENT}<p>b</p>"
    md = html_to_markdown(html)
    assert md == f"<p>a</p>\n\n{COMMENT}<p>b</p>"
    assert to_html(md).strip() == f"<p>a</p>\n{COMMENT}<p>b</p>"


def test_inside_a_paragraph_the_comment_keeps_everything_but_its_blank_lines():
    """No CommonMark spelling keeps a blank line inside a comment inside a paragraph: the blank
    line is written as a character reference, read literally inside the comment (not shown)."""
    html = f"<p>x{COMMENT}y</p>"
    md = html_to_markdown(html)
    assert md == "<p>x<!--0\n&#10;0-->y</p>"
    assert to_html(md).strip() == md  # one HTML block: the text around the comment is the same


@st.composite
def with_comments(draw) -> str:
    """Markdown blocks, some of them comments holding blank lines, some inside lists and block
    quotes, joined by one or two line breaks."""
    def comment() -> str:
        lines = draw(st.lists(st.sampled_from(["", " ", "0", "x y", "- a", "<p>"]), min_size=2,
                              max_size=4))
        return "<!--" + "\n".join(["", *lines][: len(lines)]) + "\n\n" + lines[-1] + "-->"

    blocks = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["text", "comment", "list", "quote", "tail"]))
        if kind == "text":  # not a line that starts raw HTML: the comments after it would be
            # inside that HTML block's text, where no spelling keeps their blank lines (above)
            blocks.append(draw(line_text(max_words=4).filter(
                lambda t: not t.lstrip().startswith("<"))))
        elif kind == "comment":
            blocks.append(comment())
        elif kind == "list":
            blocks.append("- " + comment().replace("\n", "\n  "))
        elif kind == "quote":
            blocks.append("> " + comment().replace("\n", "\n> "))
        else:
            blocks.append(comment() + " " + draw(line_text(max_words=2)))
    seps = [draw(st.sampled_from(["\n", "\n\n"])) for _ in blocks[1:]]
    return blocks[0] + "".join(s + b for s, b in zip(seps, blocks[1:], strict=True))


@given(with_comments())
def test_comments_with_blank_lines_round_trip(md):
    html = to_html(md)
    assert same_html(to_html(html_to_markdown(html)), html)
