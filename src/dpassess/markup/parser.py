"""The one Markdown configuration: CommonMark with raw HTML, tables and maths (markdown-it-py).

Every reader of item text parses with it: the renderer (`markup/markdown.py`), its visible text
(what lint, the exporters' names and the statistics read), the maths scanner and lint's HTML
rules, so that they all see the same structure in the same source.
"""

from __future__ import annotations

import logging
from functools import lru_cache

from markdown_it import MarkdownIt

from dpassess.markup.maths import use_maths

# markdown-it logs every rule at DEBUG; the calls alone cost a few percent of an export.
logging.getLogger("markdown_it").setLevel(logging.WARNING)


def new_parser(*, join_text: bool = True) -> MarkdownIt:
    """A new parser in the one configuration (each renderer adds its own render rules to its
    own). `join_text=False` keeps escapes and entities as tokens of their own (`text_special`),
    for the maths scanner, which reports an escaped `\\(` left unclosed."""
    md = use_maths(MarkdownIt("commonmark", {"html": True, "linkify": False,
                                             "typographer": False}).enable("table"))
    if not join_text:
        md.disable("text_join")
    return md


@lru_cache(maxsize=1)
def parser() -> MarkdownIt:
    """The shared parser, for reading tokens (not for rendering)."""
    return new_parser()
