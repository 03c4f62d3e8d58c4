"""Scoring every item type for the analysis, against oracles outside the code: Moodle's own
qtype_ordering unit tests (question/type/ordering/tests/question_test.php: the same orders and the
fractions Moodle asserts), hand-worked numerical, short-answer and matching cases on the
kitchen-sink bank, and a generic CSV holding one answer of every type read end to end."""

from __future__ import annotations

import json
from pathlib import Path

import lxml.html
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import ROOT
from dpassess import load_bank
from dpassess.stats import ResponsesError, analyse, read_responses, render
from dpassess.stats.scoring import (
    Response,
    ordering_fraction,
    score,
    wildcard_match,
)

KS = ROOT / "tests" / "banks" / "kitchen-sink"

# --- ordering: the cases of Moodle's question_test.php ----------------------------------------

RIGHT = ("Modular", "Object", "Oriented", "Dynamic", "Learning", "Environment")
REVERSE = tuple(reversed(RIGHT))
E_O = ("Environment", "Object", "Oriented", "Dynamic", "Learning", "Modular")
OR_O = ("Oriented", "Object", "Dynamic", "Learning", "Environment", "Modular")
O_OR = ("Object", "Oriented", "Dynamic", "Learning", "Environment", "Modular")

MOODLE_CASES = [
    ("all_or_nothing", RIGHT, 1.0), ("all_or_nothing", REVERSE, 0.0),
    ("all_or_nothing", OR_O, 0.0),
    ("absolute_position", REVERSE, 0.0), ("absolute_position", E_O, 4 / 6),
    ("absolute_position", OR_O, 1 / 6),
    ("relative_next_exclude_last", REVERSE, 0.0), ("relative_next_exclude_last", E_O, 0.6),
    ("relative_next_exclude_last", OR_O, 0.4),
    ("relative_next_include_last", REVERSE, 0.0), ("relative_next_include_last", E_O, 0.5),
    ("relative_one_previous_and_next", REVERSE, 0.0),
    ("relative_one_previous_and_next", OR_O, 1 / 3),
    ("relative_all_previous_and_next", REVERSE, 0.0),
    ("relative_all_previous_and_next", OR_O, 0.6),
    ("relative_all_previous_and_next", O_OR, 2 / 3),
    ("longest_ordered_subset", REVERSE, 0.0), ("longest_ordered_subset", O_OR, 5 / 6),
    ("longest_contiguous_subset", REVERSE, 0.0), ("longest_contiguous_subset", O_OR, 5 / 6),
    ("relative_to_correct", REVERSE, 0.4), ("relative_to_correct", O_OR, 2 / 3),
]


@pytest.mark.parametrize(("grading", "order", "expected"), MOODLE_CASES)
def test_ordering_grades_as_moodle_asserts(grading: str, order: tuple[str, ...],
                                           expected: float) -> None:
    assert ordering_fraction(RIGHT, order, grading) == pytest.approx(expected, abs=1e-12)


GRADINGS = sorted({g for g, _, _ in MOODLE_CASES})


@given(st.permutations(list(range(7))), st.sampled_from(GRADINGS))
def test_ordering_fraction_is_a_fraction_and_one_only_for_the_right_order(
        perm: list[int], grading: str) -> None:
    right = tuple(f"o{i}" for i in range(7))
    given_order = tuple(f"o{i}" for i in perm)
    f = ordering_fraction(right, given_order, grading)
    assert 0.0 <= f <= 1.0
    assert (f == 1.0) == (given_order == right)


def _brute_lis(ranks: list[int]) -> int:
    best = [1] * len(ranks)
    for i in range(len(ranks)):
        for j in range(i):
            if ranks[j] < ranks[i]:
                best[i] = max(best[i], best[j] + 1)
    return max(best)


@given(st.permutations(list(range(8))))
def test_longest_ordered_subset_is_the_longest_increasing_run(perm: list[int]) -> None:
    right = tuple(f"o{i}" for i in range(8))
    lis = _brute_lis(perm)
    f = ordering_fraction(right, tuple(f"o{i}" for i in perm), "longest_ordered_subset")
    assert f == (lis / 8 if lis > 1 else 0.0)


# --- short answers: Moodle's wildcard rules ----------------------------------------------------


@pytest.mark.parametrize(("pattern", "text", "expected"), [
    ("list*", "list", True), ("list*", "linked list", False), ("*list", "linked list", True),
    ("a*b*c", "abc", True), ("a*b*c", "aXbYc", True), ("a*b*c", "acb", False),
    ("ab*ba", "aba", False), ("a\\*b", "a*b", True), ("a\\*b", "aXb", False),
    ("**", "", True), ("x", "x", True), ("x", "xx", False),
])
def test_wildcard(pattern: str, text: str, expected: bool) -> None:
    assert wildcard_match(pattern, text) is expected


@given(st.text("ab*", max_size=8), st.text("ab", max_size=10))
def test_wildcard_agrees_with_fnmatch(pattern: str, text: str) -> None:
    import fnmatch  # an independent matcher: `*` is its only special character in "ab*"
    assert wildcard_match(pattern, text) is fnmatch.fnmatchcase(text, pattern)


@pytest.fixture(scope="module")
def ks():
    return load_bank(KS)


@pytest.mark.parametrize(("typed", "points"), [
    ("queue", 1.0), ("  Queue ", 1.0), ("antrean", 1.0), ("FIFO QUEUE", 1.0),
    ("list of things", 0.5), ("daftar antrean", 0.5), ("a list", 0.0), ("stack", 0.0),
])
def test_short_answer(ks, typed: str, points: float) -> None:
    assert score(ks.get("ks-fifo-name"), Response(typed=typed)) == points


# --- numerical: tolerance, ranges, units and their penalty -------------------------------------
# ks-load-factor: 2 points; 0.75 +- 0.005 full marks, 74..76 half; units "1" and "%" (x100);
# an unknown unit costs 0.1 of the points; a missing one nothing, as the first unit is a number
# (a bare number is in it: Moodle cannot even read "1" as a unit).


@pytest.mark.parametrize(("typed", "points"), [
    ("0.75 1", 2.0), ("0,752 1", 2.0), ("75 %", 2.0), ("0.75", 2.0), ("0.75 kg", 1.8),
    ("75 1", 1.0), ("0.8 1", 0.0), ("three quarters", 0.0), ("", 0.0),
])
def test_numerical(ks, typed: str, points: float) -> None:
    assert score(ks.get("ks-load-factor"), Response(typed=typed)) == pytest.approx(points)


def test_matching_earns_a_share_per_right_pair(ks) -> None:
    item = ks.get("ks-traversal-match")  # 3 points, pairs bfs, dfs, dijkstra
    pairs = (("bfs", "bfs"), ("dfs", "bellman"), ("dijkstra", "dijkstra"))
    assert score(item, Response(pairs=pairs)) == pytest.approx(2.0)
    assert score(item, Response(pairs=(("bfs", "dfs"),))) == 0.0


# --- a generic CSV with every type --------------------------------------------------------------

CSV = """person,item,response,score
p1,ks-load-factor,75 %,
p1,ks-fifo-name,antrian,
p1,ks-traversal-match,bfs=bfs;dfs=dfs;dijkstra=bellman,
p1,ks-explain-amortized,Because the capacity doubles...,4
p1,ks-growth-ordering,constant;linear;logarithmic;quadratic,
p1,ks-probe-next,slot-6,
p2,ks-load-factor,0.5,
p2,ks-fifo-name,,
p2,ks-traversal-match,,
p2,ks-explain-amortized,,
p2,ks-growth-ordering,constant;logarithmic;linear;quadratic,
p2,ks-probe-next,slot-3,
p3,ks-load-factor,74 1,
p3,ks-fifo-name,list,
p3,ks-traversal-match,bfs=bfs;dfs=dfs;dijkstra=dijkstra,
p3,ks-explain-amortized,It is constant.,1.5
p3,ks-growth-ordering,quadratic;linear;logarithmic;constant,
p3,ks-probe-next,slot-0,
"""


def test_every_type_read_and_scored(ks, tmp_path: Path) -> None:
    f = tmp_path / "r.csv"
    f.write_text(CSV, encoding="utf-8")
    a = analyse(read_responses(f, ks))
    # hand-worked: load factor p1 2 (75 %), p2 0, p3 1 (74 is the half-credit range, unit "1")
    assert a.item("ks-load-factor").mean == pytest.approx(1.0)
    assert a.item("ks-fifo-name").p == pytest.approx((1 + 0 + 0.5) / 3)
    assert a.item("ks-fifo-name").omitted == 1
    assert a.item("ks-traversal-match").mean == pytest.approx((2 + 0 + 3) / 3)
    assert a.item("ks-explain-amortized").mean == pytest.approx((4 + 0 + 1.5) / 3)
    # relative_to_correct, 4 options: one swap of neighbours earns (3+2+2+3)/12; reversed
    # (0+2+2+0)/12 (distances 3, 1, 1, 3)
    assert a.item("ks-growth-ordering").mean == pytest.approx((10 / 12 + 1 + 4 / 12) / 3)
    # distractor analysis only where there are options
    assert a.item("ks-growth-ordering").options == ()
    assert [o.option for o in a.item("ks-probe-next").options] == ["slot-6", "slot-3", "slot-0"]
    # every report renders them; the HTML has an option table for the choice item only
    doc = lxml.html.fromstring(render(a, "html", "en"))
    tables = {s.get("id"): len(s.findall(".//table")) for s in doc.findall(".//section")}
    assert tables["item-ks-probe-next"] == 2 and tables["item-ks-growth-ordering"] == 1
    # an item without a title is named as every export names it: the stem's first line as
    # text, its maths in MathJax's delimiters (not the Markdown source's `$`)
    [h3] = doc.findall(".//section[@id='item-ks-explain-amortized']//h3")
    assert h3.text_content() == ("ks-explain-amortized: Explain why appending to a dynamic "
                                 "array takes amortized \\(O(1)\\) time.")
    assert json.loads(render(a, "json"))["items"][0]["options"] == {}
    assert "ks-explain-amortized" in render(a, "text").decode("utf-8")


@pytest.mark.parametrize(("row", "says"), [
    ("p9,ks-explain-amortized,An essay without a score,", "scored by a grader"),
    ("p9,ks-growth-ordering,constant;linear,", "give every option once"),
    ("p9,ks-traversal-match,bfs=stack,", "premise=response pairs"),
    ("p9,ks-traversal-match,bfs=bfs;bfs=dfs,", "matched twice"),
])
def test_bad_answers_of_new_types_are_errors_with_their_line(ks, tmp_path: Path, row: str,
                                                             says: str) -> None:
    f = tmp_path / "r.csv"
    f.write_text(CSV + row + "\n", encoding="utf-8")
    with pytest.raises(ResponsesError) as exc:
        read_responses(f, ks)
    hits = [d for d in exc.value.diagnostics if says in d.message]
    assert hits and hits[0].line == CSV.count("\n") + 1


def test_a_typed_answers_file_score_is_used_and_a_difference_said(ks, tmp_path: Path) -> None:
    f = tmp_path / "r.csv"
    f.write_text("person,item,response,score\np1,ks-fifo-name,stack,1\np2,ks-fifo-name,queue,1\n",
                 encoding="utf-8")
    a = analyse(read_responses(f, ks))
    assert a.item("ks-fifo-name").p == 1.0
    assert any("the file's score is used" in d.message for d in a.warnings)


# --- LMS reports: the types without options ----------------------------------------------------

FIFO = "What is the data structure that removes elements in the order they arrived (FIFO)?"
MATCH = "Match each algorithm with the data structure it takes its next node from."


def test_canvas_points_score_the_types_without_options(ks, tmp_path: Path) -> None:
    # Canvas's Student Analysis (layout of the fixture canvas-student-analysis.csv): the typed
    # answer, then its points; a matching answer's text is not parsed, its points are the score
    f = tmp_path / "canvas.csv"
    f.write_text(
        "name,id,sis_id,section,section_id,section_sis_id,submitted,attempt,"
        f'201: {FIFO},1.0,"202: {MATCH}",3.0,n correct,n incorrect,score\n'
        'A,1,P1,K,1,,2025-03-01,1,queue,1.0,"BFS: Queue, DFS: Stack",2.0,1,1,3.0\n'
        "B,2,P2,K,1,,2025-03-01,1,stack,0.0,,0.0,0,2,0.0\n", encoding="utf-8")
    a = analyse(read_responses(f, ks))
    assert a.item("ks-fifo-name").p == 0.5
    assert a.item("ks-traversal-match").mean == pytest.approx(1.0)
    assert a.item("ks-traversal-match").options == ()


def test_moodle_typed_answers_read_and_matching_left_out_with_a_warning(ks,
                                                                        tmp_path: Path) -> None:
    # Moodle's Responses report: a short answer's summary is its question text; a matching
    # question's is "text {premises} -> {responses}" and its response has no marks
    f = tmp_path / "moodle.csv"
    summary = f"{MATCH} {{BFS; DFS; Dijkstra}} -> {{Queue; Stack; Priority queue; Hash table}}"
    f.write_text(
        '"Last name","First name","Email address","State","Question 1","Response 1",'
        '"Question 2","Response 2"\n'
        f'"A","B","a@x","Finished","{FIFO}","antrean","{summary}","BFS -> Queue"\n'
        f'"C","D","c@x","Finished","{FIFO}","list of x","{summary}","BFS -> Stack"\n',
        encoding="utf-8")
    a = analyse(read_responses(f, ks))
    assert a.item("ks-fifo-name").p == pytest.approx(0.75)
    assert [s.item for s in a.items] == ["ks-fifo-name"]
    assert any("ks-traversal-match" in d.message and "left out" in d.message and d.line == 2
               for d in a.warnings)
