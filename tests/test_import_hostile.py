"""Hostile input that used to take quadratic time, read correctly at sizes where quadratic
time would not finish (tests/import_hostile.py makes it; benchmarks time it), and the linear
scanners checked against the regular expressions they replace."""

from __future__ import annotations

import random
import re

import pytest

from dpassess.importers import READERS, free_id
from dpassess.importers.gift import _NOT_IN_ID, _NOT_IN_TAG, _bracketed
from dpassess.importers.gift import read as read_gift
from dpassess.importers.moodle_text import languages, select
from import_hostile import INPUTS, OPEN_SPAN

#: Moodle 4.5's patterns (qformat_gift::extract_idnumber_and_tags_from_comment, as ported).
ID = re.compile(r"\[id:((?:\\]|[^\]\x00-\x1f\x7f])+)]")
TAGS = re.compile(r"\[tag:((?:\\]|[^\]<>`\x00-\x1f\x7f])*)]")


def test_comment_scanner_finds_what_the_patterns_find():
    rng = random.Random(18)
    parts = ["[id:", "[tag:", "]", "\\", "\\]", "\\\\", "a", "<", "`", "\n", "\x7f", " ", "["]
    for _ in range(20_000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 14)))
        found = ID.search(text)
        assert _bracketed(text, "[id:", _NOT_IN_ID, nonempty=True) == (
            [found[1]] if found else []), text
        assert _bracketed(text, "[tag:", _NOT_IN_TAG) == TAGS.findall(text), text


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_worst_cases_at_a_megabyte_are_read(name):
    fmt, make = INPUTS[name]
    if name == "gift same names":
        return  # 1 MB is 90,000 questions: see the next test
    import importlib

    result = importlib.import_module(READERS[fmt]).read(make(1_000_000), "x", "en")
    assert len(result.items) + len(result.skipped) == 1


def test_many_questions_of_one_name_get_ids_in_order():
    result = read_gift(INPUTS["gift same names"][1](20_000), "x", "en")
    ids = [i.id for i in result.items]
    assert ids[:3] == ["q-q", "q-q-2", "q-q-3"] and ids[-1] == f"q-q-{len(ids)}"
    assert len(ids) == 1818


def test_free_id_remembers_what_it_tried():
    seen: set[str] = set()
    tried: dict[str, int] = {}
    got = []
    for _ in range(5):
        new = free_id("x", seen, tried)
        seen.add(new)
        got.append(new)
    assert got == ["x", "x-2", "x-3", "x-4", "x-5"]
    seen.add("y-2")
    assert [free_id("y", seen, tried) for _ in range(1)] == ["y"]
    seen.add("y")
    assert free_id("y", seen, tried) == "y-3"


def test_open_multilang_spans_are_text_and_closed_ones_still_select():
    text = OPEN_SPAN * 10_000 + '<span lang="id" class="multilang">a</span>'
    assert languages(text) == []  # as in Moodle: one span (each open one ends at the last)
    pair = '<span lang="en" class="multilang">x</span> <span lang="id" class="multilang">y</span>'
    assert select(f"<p>{pair}</p>", "id") == "<p>y</p>"
    assert select(OPEN_SPAN * 5_000, "id") == OPEN_SPAN * 5_000


def test_long_category_paths_are_refused_naming_the_line():
    result = read_gift(b"$CATEGORY: " + b"<a" * 5_000 + b"\n\n::q::Q{T}\n", "x", "en")
    assert [i.topic for i in result.items] == ["imported"]
    assert [(w.line, w.message) for w in result.warnings] == [
        (1, "a category path of 10,000 characters (the limit is 4,096); the questions after "
            "it go to topic 'imported'")]
