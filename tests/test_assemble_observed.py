"""Parallel forms from observed statistics: blueprint cells count an item under the difficulty
its recorded p shows (not only the declared one), and with `balance: {minimize: true}` the
assembler, once the mean p is balanced, balances the forms' predicted score SD (the items'
reliability indices from their recorded p and r_pb); the summary prints each form's predicted
mean, SD and KR-20, checked here against the formulas written out."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import yaml

from dpassess.assemble import assemble_problem
from dpassess.assemble.problem import load_problem

K = 36


def _bank(tmp_path: Path) -> Path:
    """36 single-choice items (all declared medium), each with a record of 200 persons: p and
    r_pb drawn from a seeded generator; item-05 declared medium but observed easy (p 0.92)."""
    root = tmp_path / "bank"
    root.mkdir()
    (root / "bank.yaml").write_text(yaml.safe_dump({
        "schema": 1, "id": "obs", "title": {"en": "Observed"}, "languages": ["en"],
        "default_language": "en"}), encoding="utf-8")
    rng = random.Random(34)
    items = {}
    for n in range(K):
        iid = f"item-{n:02d}"
        (root / f"{iid}.yaml").write_text(yaml.safe_dump({
            "schema": 1, "id": iid, "type": "single_choice", "topic": f"t/{n % 3}",
            "difficulty": "medium", "status": "reviewed", "options": ["a", "b", "c", "d"],
            "key": "a",
            "text": {"en": {"stem": f"Question number {n} about topic {n % 3}?",
                            "options": {o: f"Answer {o} to {n}" for o in "abcd"}}}},
            sort_keys=False), encoding="utf-8")
        p = 0.92 if n == 5 else rng.uniform(0.32, 0.69)
        items[iid] = {"n": 200, "p": p, "d": 0.3, "r_pb": rng.uniform(0.05, 0.6),
                      "options": {}, "flags": []}
    (root / "stats").mkdir()
    (root / "stats" / "2026-11-01-000000000000.json").write_text(json.dumps({
        "schema": 1, "administration": {"id": "2026-11-01-000000000000", "date": "2026-11-01"},
        "items": items}), encoding="utf-8")
    return root


def _blueprint(tmp_path: Path, bank: Path, cells: list[dict]) -> Path:
    path = tmp_path / "bp.yaml"
    path.write_text(yaml.safe_dump({
        "schema": 1, "id": "obs-quiz", "bank": str(bank), "forms": 3, "items": 10,
        "cells": cells, "max_overlap": 0, "balance": {"minimize": True}, "seed": 7,
        "time_limit": 10}), encoding="utf-8")
    return path


def _sd(s: list[float], r: list[float]) -> float:
    """The total's SD whose items, with SDs s and item-rest correlations r, make it up:
    var(X) = sum cov(x_i, X) = sum (s_i^2 + r_i s_i sd(X - x_i)), solved by scipy's brentq (the
    code under test iterates)."""
    from scipy.optimize import brentq

    def gap(sd: float) -> float:
        rest = [math.sqrt(ri * ri * si * si + sd * sd - si * si) - ri * si
                for si, ri in zip(s, r, strict=True)]
        return sd * sd - sum(si * si + ri * si * x for si, ri, x in zip(s, r, rest, strict=True))

    lo = math.sqrt(sum(si * si for si in s))
    return brentq(gap, lo, lo + sum(s), xtol=1e-14)


def _predicted(pr, form: list[int]) -> tuple[float, float, float]:
    items = [pr.items[i] for i in form]
    p = [pr.observed_p[it.id] for it in items]
    r = [pr.observed_r[it.id] for it in items]
    mean = sum(p)
    sd = _sd([math.sqrt(x * (1 - x)) for x in p], r)
    k = len(p)
    kr20 = k / (k - 1) * (1 - sum(x * (1 - x) for x in p) / sd ** 2)
    return mean, sd, kr20


def test_cells_count_the_observed_difficulty(tmp_path: Path) -> None:
    bank = _bank(tmp_path)
    pr = load_problem(_blueprint(tmp_path, bank, [{"difficulty": "easy", "count": 1}]))
    [cell] = pr.cells
    assert [pr.items[i].id for i in cell.members] == ["item-05"]  # declared medium


def test_forms_balance_the_predicted_sd_and_kr20(tmp_path: Path) -> None:
    bank = _bank(tmp_path)
    bp = _blueprint(tmp_path, bank, [{"topic": "t/0", "count": 3}])
    balanced = assemble_problem(load_problem(bp))
    plain_pr = load_problem(bp)
    plain_pr.info = [0] * len(plain_pr.info)  # the mean p alone, as before
    plain = assemble_problem(plain_pr)
    pr = load_problem(bp)

    def spreads(assembly) -> tuple[float, float, float]:
        figs = [_predicted(pr, f) for f in assembly.selection.forms]
        return tuple(max(f[j] for f in figs) - min(f[j] for f in figs) for j in range(3))

    mean_b, sd_b, kr_b = spreads(balanced)
    mean_p, sd_p, kr_p = spreads(plain)
    print(f"before: mean {mean_p:.3f} SD {sd_p:.3f} KR-20 {kr_p:.3f}; "
          f"after: mean {mean_b:.3f} SD {sd_b:.3f} KR-20 {kr_b:.3f}")
    # the mean p stays balanced (to the solver's resolution, 0.001 of mean p on 10 items)
    assert mean_b / 10 <= 0.001 + 1e-9 and mean_p / 10 <= 0.001 + 1e-9
    # the target: the spreads of predicted SD and KR-20 no larger than before
    assert sd_b <= sd_p + 1e-9
    assert kr_b <= kr_p + 0.02

    def indices(assembly) -> float:  # the solver's own target: the summed reliability indices
        sums = [sum(math.sqrt(pr.observed_p[pr.items[i].id] * (1 - pr.observed_p[pr.items[i].id]))
                    * pr.observed_r[pr.items[i].id] for i in f) for f in assembly.selection.forms]
        return max(sums) - min(sums)

    assert indices(balanced) < 0.05 and indices(balanced) <= indices(plain)
    text = balanced.summary()
    lines = {ln.split("  ")[0]: ln for ln in text.splitlines()}
    assert "predicted SD" in lines and "predicted KR-20" in lines
    sds = [f"{_predicted(pr, f)[1]:.3f}" for f in balanced.selection.forms]
    assert lines["predicted SD"].split()[2:5] == sds
