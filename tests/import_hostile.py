"""Worst-case inputs for the importers, by size: what made GIFT and Moodle XML reading
quadratic (comment patterns, many questions of one name, long category paths, open multilang
spans, tags without an end). `INPUTS` maps a name to (format, maker); `maker(n)` gives about
`n` bytes. Used by tests/test_import_hostile.py and by benchmarks that time the importers."""

from __future__ import annotations

from collections.abc import Callable

OPEN_SPAN = '<span lang="en" class="multilang">'


def _fill(unit: str, n: int) -> str:
    return unit * max(1, n // len(unit))


def gift_id_comments(n: int) -> bytes:
    """`// [id:[id:[id:…` with no `]`: the `[id:` pattern rescanned the rest from each one."""
    return f"// {_fill('[id:', n)}\n::q::Q{{T}}\n".encode()


def gift_tag_comments(n: int) -> bytes:
    return f"// {_fill('[tag:', n)}\n::q::Q{{T}}\n".encode()


def gift_escaped_comments(n: int) -> bytes:
    """`[id:\\]\\]\\]…` ending in a banned character: the regex backtracked over each `\\]`."""
    return f"// [id:{_fill(chr(92) + ']', n)}\x01\n::q::Q{{T}}\n".encode()


def gift_same_names(n: int) -> bytes:
    """Many questions of one name: each id was found by counting up from `q`, `q-2`, …"""
    return _fill("::q::Q{T}\n\n", n).encode()


def gift_long_category(n: int) -> bytes:
    """A category path of `<a<a<a…`: tags were stripped by a pattern rescanning each."""
    return f"$CATEGORY: {_fill('<a', n)}\n\n::q::Q{{T}}\n".encode()


def gift_open_multilang(n: int) -> bytes:
    """Multilang spans that never close: the filter pattern rescanned from each one."""
    return f"::q::{_fill(OPEN_SPAN, n)} Q{{T}}\n".encode()


def moodle_xml_open_multilang(n: int) -> bytes:
    body = _fill(OPEN_SPAN.replace("<", "&lt;").replace(">", "&gt;"), n)
    return ("<quiz><question type=\"truefalse\"><name><text>q</text></name>"
            f"<questiontext format=\"html\"><text>{body}</text></questiontext>"
            "<answer fraction=\"100\"><text>true</text></answer>"
            "<answer fraction=\"0\"><text>false</text></answer></question></quiz>").encode()


def moodle_xml_cloze(text: str) -> bytes:
    return ("<quiz><question type=\"cloze\"><name><text>q</text></name>"
            f"<questiontext format=\"html\"><text>{text}</text></questiontext>"
            "</question></quiz>").encode()


def moodle_xml_cloze_open(n: int) -> bytes:
    """Gap starts that never close: Moodle's pattern backtracks over each, and a scan from
    each start to the end of the text is quadratic."""
    return moodle_xml_cloze(_fill("{1:SA:=a~", n))


def moodle_xml_cloze_tildes(n: int) -> bytes:
    """One gap of n/2 alternatives, each read after the one before."""
    return moodle_xml_cloze("{1:SA:=a" + _fill("~b", n) + "}")


INPUTS: dict[str, tuple[str, Callable[[int], bytes]]] = {
    "gift [id: comments": ("gift", gift_id_comments),
    "gift [tag: comments": ("gift", gift_tag_comments),
    "gift [id:\\] escapes": ("gift", gift_escaped_comments),
    "gift same names": ("gift", gift_same_names),
    "gift long category": ("gift", gift_long_category),
    "gift open multilang": ("gift", gift_open_multilang),
    "moodle-xml open multilang": ("moodle-xml", moodle_xml_open_multilang),
    "moodle-xml cloze open gaps": ("moodle-xml", moodle_xml_cloze_open),
    "moodle-xml cloze many alternatives": ("moodle-xml", moodle_xml_cloze_tildes),
}
