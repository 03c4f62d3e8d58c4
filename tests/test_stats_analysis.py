"""Item analysis figures against oracles outside the code under test: a five-person example worked
by hand (exact fractions), and an independent numpy computation (matrix operations on scores the
test derives itself from the raw rows) on simulated 2PL data with planted bad items."""

from __future__ import annotations

import csv
import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import ROOT
from dpassess import load_bank
from dpassess.diagnostics import UsageError
from dpassess.model import Bank, BankConfig, LoadedItem, parse_item
from dpassess.stats import Response, Thresholds, analyse, read_responses, score

FIX = ROOT / "tests" / "fixtures" / "stats"
sys.path.insert(0, str(ROOT / "benchmarks"))
import stats_sim  # noqa: E402

sys.path.remove(str(ROOT / "benchmarks"))


def close(a: float | None, b: float) -> bool:
    return a is not None and abs(a - b) <= 1e-9


# --- the hand-worked example --------------------------------------------------------------------
#
# tests/fixtures/stats/hand.csv, scores (1 = right):
#
#   person  capital  sun  water  prime  total
#   P1         1      1     1      1      4
#   P2         1      1     1      0      3      prime: two;four = 0.5 - 0.5 = 0
#   P3         1      0     1      0      2
#   P4         0      1     0      0      1      capital: bandung, water: c90
#   P5         1      0     0      0      1      water omitted; prime: two;nine = 0
#
# n = 5, groups of ceil(0.27 * 5) = 2: upper P1, P2; lower P4, P5 (P4 and P5 tie at 1; P4 < P5).
# totals mean 11/5, variance (1.8² + 0.8² + 0.2² + 1.2² + 1.2²)/5 = 1.36 = 34/25.
# p: 4/5, 3/5, 3/5, 1/5; sum pq = 0.16 + 0.24 + 0.24 + 0.16 = 0.8.
# KR-20 = 4/3 (1 - 0.8/1.36) = 28/51; SEM = sqrt(34/25 * 23/51) = sqrt(46/75).
# D: capital (2 - 1)/2 = 0.5, sun (2 - 1)/2 = 0.5, water (2 - 0)/2 = 1, prime (1 - 0)/2 = 0.5.
# r_pb capital: x = 1,1,1,0,1, rest = 3,2,1,1,0: cov 0.08, var x 0.16, var rest 1.04: 1/sqrt(26).
# r_pb prime: x = 1,0,0,0,0, rest = 3,3,2,1,1: cov 0.2, var x 0.16, var rest 0.8: sqrt(5)/4.
# alpha without prime: totals 3,3,2,1,1 (var 0.8), sum of item variances 0.64: 3/2 (1 - 0.8) = 0.3.


@pytest.fixture(scope="module")
def hand():
    bank = load_bank(FIX / "bank")
    return analyse(read_responses(FIX / "hand.csv", bank))


def test_hand_worked_test_figures(hand) -> None:
    t = hand.test
    assert (t.n, t.k, t.group) == (5, 4, 2)
    assert close(t.mean, 2.2) and close(t.sd, math.sqrt(1.36))
    assert close(t.kr20, float(Fraction(28, 51))) and close(t.alpha, float(Fraction(28, 51)))
    assert close(t.sem, math.sqrt(46 / 75))
    assert t.histogram == ((1.0, 2), (2.0, 1), (3.0, 1), (4.0, 1))


def test_hand_worked_items(hand) -> None:
    expect = {"q-capital": (0.8, 0.5), "q-sun": (0.6, 0.5), "q-water": (0.6, 1.0),
              "q-prime": (0.2, 0.5)}
    assert [s.item for s in hand.items] == list(expect)  # bank order
    for item, (p, d) in expect.items():
        s = hand.item(item)
        assert close(s.p, p) and close(s.d, d), item
    assert close(hand.item("q-capital").r_pb, 1 / math.sqrt(26))
    assert close(hand.item("q-prime").r_pb, math.sqrt(5) / 4)
    assert close(hand.item("q-prime").alpha_if_deleted, 0.3)
    water = hand.item("q-water")
    assert (water.omitted, water.missing, water.n) == (1, 0, 5)


def test_hand_worked_distractors(hand) -> None:
    capital = {o.option: o for o in hand.item("q-capital").options}
    assert capital["jakarta"].key and capital["jakarta"].works is None
    assert capital["jakarta"].n == 4 and close(capital["jakarta"].mean_total, 10 / 4)
    bandung = capital["bandung"]  # P4 only: 20%, a lower-group person
    assert (bandung.n, bandung.upper, bandung.lower, bandung.works) == (1, 0.0, 0.5, True)
    assert capital["medan"].works is False and capital["medan"].mean_total is None
    assert hand.item("q-capital").flags == ("low-discrimination", "non-functional-distractor")
    # prime's "four" is chosen by P2 (upper) and P3, by no one below: a possible second key
    four = {o.option: o for o in hand.item("q-prime").options}["four"]
    assert four.second_key and not four.key and four.works is False
    assert "possible-second-key" in hand.item("q-prime").flags


# --- scoring ------------------------------------------------------------------------------------


def test_multiple_response_fractions_as_moodle() -> None:
    item = load_bank(FIX / "bank").get("q-prime")  # key two, three: +1/2 each; others -1/2
    def sc(*chosen: str) -> float:
        return score(item, Response(frozenset(chosen)))
    assert sc("two", "three") == 1.0
    assert sc("two") == 0.5
    assert sc("two", "four") == 0.0
    assert sc("four", "nine") == 0.0  # floored at 0
    assert sc() == 0.0


def test_several_marks_on_a_single_key_item_earn_nothing() -> None:
    item = load_bank(FIX / "bank").get("q-capital")
    assert score(item, Response(frozenset({"jakarta"}))) == 1.0
    assert score(item, Response(frozenset({"jakarta", "medan"}))) == 0.0


# --- simulated data against numpy -----------------------------------------------------------------


def oracle(items: list[stats_sim.SimItem], responses: Path) -> dict[str, object]:
    """p, D, r_pb, KR-20 and alpha from the raw rows, by numpy matrix operations."""
    ids = [i.id for i in items]
    col = {i: j for j, i in enumerate(ids)}
    with open(responses, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    persons = sorted({r["person"] for r in rows})
    row_of = {p: i for i, p in enumerate(persons)}
    x = np.zeros((len(persons), len(ids)))
    for r in rows:
        item = items[col[r["item"]]]
        chosen = {c for c in r["response"].split(";") if c}
        if item.type == "multiple_response":
            right, wrong = set(item.key), set(item.options) - set(item.key)
            f = len(chosen & right) / len(right) - len(chosen & wrong) / len(wrong)
            value = min(max(f, 0.0), 1.0)
        else:
            value = 1.0 if chosen == set(item.key) else 0.0
        x[row_of[r["person"]], col[r["item"]]] = value
    n, k = x.shape
    total = x.sum(axis=1)
    p = x.mean(axis=0)
    rest = total[:, None] - x
    xc, rc = x - x.mean(axis=0), rest - rest.mean(axis=0)
    r_pb = (xc * rc).sum(axis=0) / np.sqrt((xc ** 2).sum(axis=0) * (rc ** 2).sum(axis=0))
    d = tie_averaged_d(x, total)
    var_t = total.var()
    alpha = k / (k - 1) * (1 - x.var(axis=0).sum() / var_t)
    dichotomous = np.isin(x, (0.0, 1.0)).all()
    kr20 = k / (k - 1) * (1 - (p * (1 - p)).sum() / var_t) if dichotomous else None
    return {"ids": ids, "p": p, "d": d, "r_pb": r_pb, "alpha": alpha, "kr20": kr20, "n": n}


def tie_averaged_d(x: np.ndarray, total: np.ndarray) -> np.ndarray:
    """D with the upper and lower 27% groups averaged over every way of breaking ties at their
    edges: a person with `above` persons strictly above and `eq` persons at their total (them
    included) belongs to the upper group by clip(g - above, 0, eq) / eq (lower: alike)."""
    n = len(total)
    g = math.ceil(27 * n / 100)
    above = (total[None, :] > total[:, None]).sum(axis=1)
    below = (total[None, :] < total[:, None]).sum(axis=1)
    eq = (total[None, :] == total[:, None]).sum(axis=1)
    w_up = np.clip(g - above, 0, eq) / eq
    w_low = np.clip(g - below, 0, eq) / eq
    return (w_up @ x - w_low @ x) / g


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("sim")
    bank_dir, responses = stats_sim.write(out, persons=400, k=30, seed=11)
    items = stats_sim.make_items(30, 11)
    analysis = analyse(read_responses(responses, load_bank(bank_dir)))
    return analysis, oracle(items, responses), items


def test_simulated_figures_match_numpy(simulated) -> None:
    analysis, ref, _ = simulated
    assert [s.item for s in analysis.items] == ref["ids"]
    assert analysis.test.n == ref["n"]
    for j, s in enumerate(analysis.items):
        assert abs(s.p - ref["p"][j]) <= 1e-9, s.item
        assert abs(s.d - ref["d"][j]) <= 1e-9, s.item
        assert abs(s.r_pb - ref["r_pb"][j]) <= 1e-9, s.item
    assert abs(analysis.test.alpha - ref["alpha"]) <= 1e-9
    # multiple-response items give partial credit: KR-20 is for right/wrong items only
    assert ref["kr20"] is None and analysis.test.kr20 is None


def test_kr20_equals_alpha_and_numpy_on_right_wrong_items(tmp_path: Path) -> None:
    items = [i for i in stats_sim.make_items(24, 5) if i.type != "multiple_response"]
    stats_sim.write_bank(tmp_path / "bank", items)
    stats_sim.write_responses(tmp_path / "r.csv", items, 300, 5)
    analysis = analyse(read_responses(tmp_path / "r.csv", load_bank(tmp_path / "bank")))
    ref = oracle(items, tmp_path / "r.csv")
    assert abs(analysis.test.kr20 - ref["kr20"]) <= 1e-9
    assert abs(analysis.test.kr20 - analysis.test.alpha) <= 1e-12


def test_flags_find_the_planted_items(simulated) -> None:
    analysis, _, _ = simulated
    miskeyed = analysis.item("sim-miskeyed")
    assert "negative-discrimination" in miskeyed.flags
    assert "possible-second-key" in miskeyed.flags
    assert [o.option for o in miskeyed.options if o.second_key] == ["a"]  # the true answer
    assert "negative-discrimination" in analysis.item("sim-negative").flags
    dead = analysis.item("sim-dead")
    assert "non-functional-distractor" in dead.flags
    assert {o.option: o.n for o in dead.options}["d"] == 0
    # the ordinary items (a >= 0.8) discriminate positively
    planted = {"sim-miskeyed", "sim-negative", "sim-dead"}
    for s in analysis.items:
        if s.item not in planted:
            assert "negative-discrimination" not in s.flags, s.item
            assert s.r_pb is not None and s.r_pb > 0.1, s.item


# --- properties ---------------------------------------------------------------------------------


def _bank(k: int, mr: bool) -> Bank:
    items = []
    for j in range(k):
        raw = {"id": f"it-{j}", "topic": "t", "options": ["a", "b", "c"], "key": ["a"],
               "text": {"en": {"stem": f"Q{j}", "options": {"a": "A", "b": "B", "c": "C"}}}}
        if mr and j % 2:
            raw |= {"type": "multiple_response", "key": ["a", "b"]}
        items.append(LoadedItem(parse_item(raw), f"it-{j}.yaml"))
    config = BankConfig.model_validate({"id": "prop", "title": {"en": "P"}, "languages": ["en"],
                                        "default_language": "en"})
    return Bank(config=config, root=Path("."), entries=items)


@given(st.data())
def test_any_matrix_matches_numpy(tmp_path_factory: pytest.TempPathFactory,
                                  data: st.DataObject) -> None:
    k = data.draw(st.integers(3, 6))
    n = data.draw(st.integers(2, 40))
    mr = data.draw(st.booleans())
    bank = _bank(k, mr)
    subsets = ["", "a", "b", "c", "a;b", "a;c", "b;c", "a;b;c"]
    cells = data.draw(st.lists(st.lists(st.sampled_from(subsets), min_size=k, max_size=k),
                               min_size=n, max_size=n))
    path = tmp_path_factory.mktemp("prop") / "r.csv"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("person,item,response\n")
        for i, row in enumerate(cells):
            for j, resp in enumerate(row):
                fh.write(f"p{i:03d},it-{j},{resp}\n")
    analysis = analyse(read_responses(path, bank))
    x = np.array([[score(bank.get(f"it-{j}"), Response(frozenset(filter(None, r.split(";")))))
                   for j, r in enumerate(row)] for row in cells])
    total = x.sum(axis=1)
    d = tie_averaged_d(x, total)
    for j, s in enumerate(analysis.items):
        assert abs(s.p - x[:, j].mean()) <= 1e-9
        assert abs(s.d - d[j]) <= 1e-9
        rest = total - x[:, j]
        if x[:, j].std() > 1e-9 and rest.std() > 1e-9:
            assert abs(s.r_pb - np.corrcoef(x[:, j], rest)[0, 1]) <= 1e-9
        else:
            assert s.r_pb is None
    if total.var() > 1e-9:
        alpha = k / (k - 1) * (1 - x.var(axis=0).sum() / total.var())
        assert abs(analysis.test.alpha - alpha) <= 1e-9
    else:
        assert analysis.test.alpha is None


# --- thresholds ---------------------------------------------------------------------------------


def test_thresholds_move_the_flags(hand) -> None:
    bank = load_bank(FIX / "bank")
    strict = analyse(read_responses(FIX / "hand.csv", bank), Thresholds(too_easy=0.7))
    assert "too-easy" in strict.item("q-capital").flags
    assert "too-easy" not in hand.item("q-capital").flags


@pytest.mark.parametrize("kwargs", [{"too_hard": 1.5}, {"too_hard": 0.8, "too_easy": 0.5},
                                    {"min_distractor_share": -0.1}])
def test_bad_thresholds_are_usage_errors(kwargs: dict[str, float]) -> None:
    with pytest.raises(UsageError, match="threshold"):
        Thresholds(**kwargs)
