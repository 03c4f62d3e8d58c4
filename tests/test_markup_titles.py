"""Titles are plain text in every target: the title as written, not Markdown."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dpassess.markup.markdown import derived_title, item_title, plain_title
from dpassess.model import Content, Option, parse_item


def test_markdown_characters_stay() -> None:
    for title in ("Use `dict[k]` with *args and __init__", "2*3*4 and snake_case_name",
                  "a < b & c > d", "[link](x) **bold** $x$ \\(y\\)", "# not a heading"):
        assert plain_title(title) == title


def test_only_what_no_target_carries_changes() -> None:
    assert plain_title("one\ntwo\r\nthree\tfour ") == "one two three four"
    assert plain_title("bell\x07 ring\ufffe") == "bell ring"


@given(st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")),
               max_size=60))
def test_a_one_line_title_is_kept_byte_for_byte(title: str) -> None:
    title = title.strip().replace("\ufffe", "").replace("\uffff", "")
    assert plain_title(title) == title


def test_an_item_without_a_title_is_named_from_its_stem() -> None:
    assert derived_title("Is *this* `x < y` \\(a_1\\)?\n\nMore.") == "Is this x < y \\(a_1\\)?"
    long = "word " * 30
    cut = derived_title(long)
    assert cut == ("word " * 15).rstrip() + "..." and len(cut) <= 80
    item = parse_item(dict(id="t1", type="single_choice", topic="t/u", points=1.0,
                           options=[Option(id="a"), Option(id="b")], key=["a"],
                           text={"en": Content(title="Use *args", stem="**Which** one?",
                                               options={"a": "A", "b": "B"}),
                                 "id": Content(stem="**Yang** mana?",
                                               options={"a": "A", "b": "B"})}))
    assert item_title(item, "en") == "Use *args"
    assert item_title(item, "id") == "Yang mana?"
