"""The cloze importer's parser (importers/moodle_cloze.py, linear time) against the port of
Moodle's own (tests/moodle_multianswer.py: qtype_multianswer_extract_question, the backtracking
regular expressions line for line): the same gaps, answers, fractions, feedback and tolerances,
on hand-picked texts where the backtracking decides and on any text of the characters that
matter."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import moodle_multianswer as oracle
from dpassess.importers import READERS
from dpassess.importers.moodle_cloze import extract, refusals

#: The pieces a cloze text is made of, and the characters Moodle's patterns look at.
PIECES = ["{1:SA:", "{:MC:", "{2:NM:", "{1:MR:", "{1:MULTICHOICE_V:", "{1:SAC:", "{x:SA:",
          "{1:XX:", "{", "}", "~", "#", "=", "%", "%50%", "%-25,5%", "%0%", ":", "1", "a", "b",
          " ", "\n", "\\", "\\}", "\\#", "&", "&amp;", "&amp", ";", "3", ".5", "e2", "-", ",",
          "&lt;", "{#1}"]


def ours(text: str) -> tuple[str, list[tuple[object, ...]]]:
    out, gaps = extract(text)
    for n in range(len(gaps), 0, -1):
        out = out.replace(f"[[g{n}]]", "{#" + str(n) + "}")
    return out, [(g.kind, g.weight, g.answers, g.fractions, g.feedback, g.tolerances,
                  g.single if g.kind == "multichoice" else None,
                  g.shuffle if g.kind == "multichoice" else None,
                  g.layout if g.kind == "multichoice" else None,
                  g.case_sensitive if g.kind == "shortanswer" else None) for g in gaps]


def moodles(text: str) -> tuple[str, list[tuple[object, ...]]]:
    q = oracle.extract(text)
    return q.questiontext, [(s.qtype, s.defaultmark, s.answers, s.fractions, s.feedback,
                             s.tolerance,
                             bool(s.single) if s.qtype == "multichoice" else None,
                             bool(s.shuffle) if s.qtype == "multichoice" else None,
                             s.layout if s.qtype == "multichoice" else None,
                             bool(s.usecase) if s.qtype == "shortanswer" else None)
                            for s in q.subs]


@pytest.mark.parametrize(("text", "answers"), [
    # an answer runs over a `~` when no alternative could follow it: `~` is then an answer
    ("{1:SA:=a~}", [["a", "~"]]),
    # ... and over a `}` up to the next gap's end, which is then no gap of its own
    ("{1:SA:=a~} {1:SA:=b}", [["a", "} {1:SA:=b"]]),
    # a `}` after `&` ends no answer: the answer runs on to the next one that does
    ("x {1:SA:=a&} y {1:SA:=b}", [["a&} y {1:SA:=b"]]),
    # a feedback may end after `&`, an answer not
    ("{1:SA:=a#b&}", [["a"]]),
    # an escaped `}` in a feedback, and an answer of the fraction sign alone
    ("{2:MC:=a#f\\}~b} {1:SA:=}", [["a", "b"], ["="]]),
    # a last newline: the body's `$` comes before it, so it is an answer of its own
    ("{1:NM:=3\n}", [["3", "\n"]]),
    # a decimal comma in a tolerance
    ("{1:NM:=3:0,5}", [["3"]]),
    # the first `{n:TYPE:` that cannot start a gap: none after it can either
    ("{1:SA:=a\\} {1:SA:=b\\}", []),
    # an unknown type or a non-digit weight is no gap start: the next one is read
    ("{1:XX:=a} {x:SA:=b} {1:SA:=c}", [["c"]]),
])
def test_where_moodles_backtracking_decides(text: str, answers: list[list[str]]):
    assert [a for _, _, a, *_ in ours(text)[1]] == answers
    assert ours(text) == moodles(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14).map("".join))
@example("{1:SA:=a~%50%b#c~}")
@example("{1:MR:~%50%a~%50%b~c#&amp;}")
@example("{1:SA:~=a}")
@example("{1:SA:&amp;~=a}")
@example("{1:NM:=-3:-1e2~%50%.5:1,}")
def test_the_parser_reads_what_moodles_reads(text: str):
    assert ours(text) == moodles(text)
    q = oracle.extract(text)
    _, gaps = extract(text)
    assert bool(refusals(gaps)) == bool(oracle.validate(q))


def test_a_gap_read_only_by_backtracking_is_imported_as_moodle_saves_it():
    data = b"""<?xml version="1.0" encoding="UTF-8"?><quiz>
<question type="cloze"><name><text>q</text></name>
<questiontext format="html"><text>Say {1:SHORTANSWER:=yes~} now.</text></questiontext>
</question></quiz>"""
    import importlib

    result = importlib.import_module(READERS["moodle-xml"]).read(data, "c.xml", "en")
    (item,) = result.items
    assert item.text["en"].stem == "Say [[g1]] now."
    assert item.text["en"].gaps["g1"].answers == {"a": ("yes",), "b": ("~",)}
    assert [a.fraction for a in item.gaps[0].answers] == [1.0, 0.0]
