"""The quick paths of `dpassess stats` against the plain ones they replace: the generic reader's
`Responses.put` against `Responses.add` of an Answer per row (the path every other layout
takes), and the analysis's sums over distinct values against `math.fsum` over every value."""

from __future__ import annotations

import csv
import math
import random
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import ROOT
from dpassess import load_bank
from dpassess.model import Bank
from dpassess.stats import ResponsesError, analyse_forms, read_responses, render_many
from dpassess.stats.analysis import _copies, _cov, _mean, _Values, _var
from dpassess.stats.responses import Answer, Responses

sys.path.insert(0, str(ROOT / "benchmarks"))
import stats_sim

# --- sums over distinct values ------------------------------------------------------------------

#: values that repeat, with signs of zero, thirds and magnitudes apart (where rounding shows)
POOL = [0.0, -0.0, 1.0, 2.0, 1 / 3, 2 / 3, 0.1, 0.7, 1e-9, 12.5, 99.99, 1e6 + 0.1, 5e-324]


@given(st.lists(st.tuples(st.floats(allow_nan=False, allow_infinity=False, width=64,
                                    min_value=-1e300, max_value=1e300),
                          st.integers(0, 5000)), max_size=12))
def test_copies_is_fsum_of_the_copies(pairs: list[tuple[float, int]]) -> None:
    assert _copies(pairs) == math.fsum(v for v, c in pairs for _ in range(c))


def _same(a: float, b: float) -> bool:
    return a == b and math.copysign(1, a) == math.copysign(1, b)


@given(st.lists(st.sampled_from(POOL), min_size=1, max_size=400),
       st.lists(st.sampled_from(POOL), min_size=1, max_size=400), st.randoms())
def test_values_give_the_floats_of_the_sums(x: list[float], y: list[float],
                                            rnd: random.Random) -> None:
    y = (y * (len(x) // len(y) + 1))[: len(x)]
    rnd.shuffle(y)
    xs, ys = _Values(x), _Values(y)
    mean_x, mean_y = _mean(x), _mean(y)
    assert _same(xs.mean(), mean_x) and _same(ys.mean(), mean_y)
    assert _same(xs.var(mean_x), _var(x, mean_x))
    assert _same(xs.cov_sorted(mean_x, ys, mean_y), _cov(sorted(x), mean_x, sorted(y), mean_y))


def test_counts_are_not_multiplied_in() -> None:
    """count x value rounded is not the sum of the copies: here the two differ."""
    x = [1e6 + 0.1] * 19 + [0.7] * 2 + [2 / 3] * 27
    assert math.fsum(v * c for v, c in _Values(x).runs) != math.fsum(x)
    assert _Values(x).mean() == _mean(x)


def test_var_and_cov_are_the_written_formulas() -> None:
    x, y = [1.0, 0.0, 1.0, 1 / 3], [3.0, 2.0, 2.5, 0.0]
    mx, my = _mean(x), _mean(y)
    assert _var(x, mx) == math.fsum((v - mx) ** 2 for v in x) / 4
    assert _cov(x, mx, y, my) == math.fsum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))


# --- Responses.put against Responses.add ---------------------------------------------------------


def _via_add(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every row of the generic reader through `add`, as before `put` existed."""
    def put(self: Responses, line: int, person: str, item: object, response: object, form: str,
            score: float | None, language: str, key: object) -> None:
        self.add(Answer(line, person, item, response, form, score,  # type: ignore[arg-type]
                        language=language))
    monkeypatch.setattr(Responses, "put", put)


def _state(path: Path, bank: Bank) -> object:
    try:
        r = read_responses(path, bank)
    except ResponsesError as exc:
        return ("error", [str(d) for d in exc.diagnostics])
    cols = {i: (c.scores.tobytes(), list(c.marks), list(c.lines), list(c.omits), c.chosen_known)
            for i, c in r.columns.items()}
    report = render_many(analyse_forms(r), "json", "en")
    return (r.persons, [r.form_of(i) for i in range(r.n)],
            [r.language_of(i) for i in range(r.n)], r.form_items, cols,
            [str(d) for d in r.problems.diagnostics()], r.source, report)


def _rows(bank: Bank, seed: int, trouble: bool) -> list[list[str]]:
    rng = random.Random(seed)
    rows = []
    for p in range(80):
        form = "B" if trouble and p % 7 == 0 else "A"
        for it in bank:
            item = it.id
            if rng.random() < 0.05:
                continue  # not received
            ids = list(it.choice_ids)
            resp = rng.choice(["", *ids, f"{ids[0]};{ids[1]}", f" {ids[-1]} "]
                              + (["q"] if trouble else []))
            score = rng.choice(["", "", "1", "0", "0,5", "2", "x"] if trouble else ["", "1", "0"])
            lang = rng.choice(["", "id", "en"])
            rows.append([f"p{p:02d}", form, item + (" " if rng.random() < 0.1 else ""), resp,
                         score, lang])
            if trouble and rng.random() < 0.01:
                rows.append(list(rows[-1]))  # given twice
    if trouble:
        rows[10][1] = "A2"  # a person on a second form
        rows.append(["p99", "A", "nope", "a", "", ""])
    return rows


@pytest.mark.parametrize("trouble", [False, True])
@pytest.mark.parametrize("seed", [1, 2])
def test_put_is_add(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trouble: bool,
                    seed: int) -> None:
    stats_sim.write_bank(tmp_path / "bank", stats_sim.make_items(12, seed))
    bank: Bank = load_bank(tmp_path / "bank")
    path = tmp_path / "r.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["person", "form", "item", "response", "score", "language"])
        w.writerows(_rows(bank, seed, trouble))
    fast = _state(path, bank)
    assert (fast[0] == "error") is trouble  # type: ignore[index]
    _via_add(monkeypatch)
    slow = _state(path, bank)
    assert fast == slow
