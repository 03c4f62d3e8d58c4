"""After the exam, round 2: reproductions of what broke around the (exact) statistics, each
checked against a hand-worked figure or an independent computation: an unreceived question,
ties at the edge of the 27% groups, several forms in one file, a key that does not fit, a
re-download, the wide paper sheet, Moodle's Grades report and Responses report in other
settings."""

from __future__ import annotations

import random
from dataclasses import asdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT
from dpassess import load_bank
from dpassess.stats import analyse, read_responses

FIX = ROOT / "tests" / "fixtures" / "stats"


@pytest.fixture(scope="module")
def bank():
    return load_bank(FIX / "bank")


def write(tmp_path: Path, text: str, name: str = "r.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- 1. a question a student never received is missing, not wrong ------------------------------


def _half_received(n: int = 40) -> str:
    """40 persons; q-sun for all (right for the first 24), q-water for the even ones only (12
    of the 20 right: p 0.6)."""
    rows = ["person,item,response"]
    for i in range(n):
        rows.append(f"s{i:02d},q-sun,{'true' if i < 24 else 'false'}")
        if i % 2 == 0:
            rows.append(f"s{i:02d},q-water,{'c100' if i < 24 else 'c90'}")
    return "\n".join(rows) + "\n"


def test_an_unreceived_question_is_missing_not_wrong(bank, tmp_path: Path) -> None:
    s = analyse(read_responses(write(tmp_path, _half_received()), bank)).item("q-water")
    assert (s.n, s.missing, s.omitted) == (20, 20, 0)
    assert s.p == pytest.approx(0.6, abs=1e-12)
    assert "negative-discrimination" not in s.flags


def test_an_empty_response_is_an_omission(bank, tmp_path: Path) -> None:
    text = "person,item,response\na,q-sun,true\na,q-water,c100\nb,q-sun,true\nb,q-water,\n"
    s = analyse(read_responses(write(tmp_path, text), bank)).item("q-water")
    assert (s.n, s.missing, s.omitted, s.p) == (2, 0, 1, 0.5)


def test_a_canvas_question_from_a_group_not_received_is_missing(bank, tmp_path: Path) -> None:
    head = ("name,id,sis_id,submitted,attempt,101: What is the capital of Indonesia?,1.0,"
            "102: The sun is a star.,1.0,n correct,n incorrect,score")
    rows = [head]
    for i in range(10):
        capital = ("Jakarta,1.0" if i < 3 else "Bandung,0.0") if i % 2 == 0 else ","
        rows.append(f"P{i},{100 + i},S{i},2025-03-01 08:00:00 UTC,1,{capital},True,1.0,1,0,1.0")
    s = analyse(read_responses(write(tmp_path, "\n".join(rows) + "\n"), bank)).item("q-capital")
    assert (s.n, s.missing) == (5, 5)
    assert s.p == pytest.approx(2 / 5)


# --- 4. ties at the edge of the upper and lower groups ------------------------------------------


def test_relabelling_persons_changes_no_statistic(bank, tmp_path: Path) -> None:
    """The issue's case: 40 persons with many tied totals; any relabelling, same figures."""
    rng = random.Random(4)
    items = {"q-capital": ("jakarta", "bandung"), "q-sun": ("true", "false"),
             "q-water": ("c100", "c90")}
    answers = [{i: rng.choice(o) for i, o in items.items()} for _ in range(40)]

    def figures(labels: list[str]) -> list[dict[str, object]]:
        rows = ["person,item,response"]
        for label, a in zip(labels, answers, strict=True):
            rows += [f"{label},{i},{r}" for i, r in a.items()]
        path = write(tmp_path, "\n".join(rows) + "\n", f"{labels[0]}.csv")
        return [asdict(s) for s in analyse(read_responses(path, bank)).items]

    base = figures([f"s{i:02d}" for i in range(40)])
    for seed in range(3):
        labels = [f"x{i:02d}" for i in range(40)]
        random.Random(seed).shuffle(labels)
        assert figures(labels) == base


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_permuting_person_ids_leaves_every_statistic_unchanged(tmp_path_factory, bank,
                                                               data: st.DataObject) -> None:
    n = data.draw(st.integers(4, 30))
    choices = {"q-capital": ["jakarta", "bandung", "medan", ""], "q-sun": ["true", "false", ""],
               "q-water": ["c100", "c90", "c80", ""], "q-prime": ["two;three", "two", "four", ""]}
    answers = [{i: data.draw(st.sampled_from(o)) for i, o in choices.items()} for _ in range(n)]
    perm = data.draw(st.permutations(range(n)))
    folder = tmp_path_factory.mktemp("perm")

    def run(labels: list[str], name: str) -> tuple[object, ...]:
        rows = ["person,item,response"]
        for label, a in zip(labels, answers, strict=True):
            rows += [f"{label},{i},{r}" for i, r in a.items()]
        a = analyse(read_responses(write(folder, "\n".join(rows) + "\n", name), bank))
        test = asdict(a.test)
        return tuple(asdict(s) for s in a.items), test

    assert run([f"p{i:03d}" for i in range(n)], "a.csv") == \
        run([f"p{perm[i]:03d}" for i in range(n)], "b.csv")
