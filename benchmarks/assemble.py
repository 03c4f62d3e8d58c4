"""Form assembly speed: CP-SAT on three cases (and HiGHS on case a, if installed).

    .venv/bin/python benchmarks/assemble.py [--highs]

(a) 600 items, 5 forms × 40, 8 topics × 3 difficulties, 150 enemy pairs, no overlap:
    time to the first feasible selection and to the proven-best mean-difficulty balance;
(b) 10,000 items, 20 forms × 60, 20 cells, enemies, overlap ≤ 10 % (6 items);
(c) infeasible variants: a cell shortage (found before search) and a points/cell conflict
    (found by the solver, then named by the deletion filter): time to the explanation;
(d) case (b) with `balance: {minimize: true}` and a 30 deterministic-second budget: wall time
    and the process's peak memory (the solver is bounded by WALL_FACTOR and MEMORY_MB).
Banks are generated in memory from a fixed seed (loading YAML is measured by benchmarks/load.py).
"""

from __future__ import annotations

import random
import resource
import sys
import time
from pathlib import Path

from dpassess.assemble.problem import Problem, resolve
from dpassess.assemble.solve import solve
from dpassess.model import Bank, BankConfig, Item, LoadedItem, parse_item
from dpassess.model.blueprint import Blueprint

DIFFS = ("easy", "medium", "hard")


def make_bank(n: int, topics: int, *, enemies: int, seed: int = 7) -> Bank:
    rng = random.Random(seed)
    items: list[Item] = []
    for k in range(n):
        topic = f"t{k % topics:02d}"
        diff = DIFFS[(k // topics) % 3]
        items.append(parse_item({
            "id": f"q{k:05d}",
            "topic": f"course/{topic}",
            "difficulty": diff,
            "p_value": round(rng.uniform(0.25, 0.95), 3),
            "points": 2 if diff == "hard" else 1,
            "options": ["a", "b", "c", "d"],
            "key": rng.choice("abcd"),
            "text": {"en": {"stem": f"Q{k}", "options": {o: o for o in "abcd"}}},
        }))
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < enemies:
        a, b = sorted(rng.sample(range(n), 2))
        pairs.add((a, b))
    enemy_of: dict[int, list[str]] = {}
    for a, b in sorted(pairs):
        enemy_of.setdefault(a, []).append(items[b].id)
    items = [it.model_copy(update={"enemies": tuple(enemy_of.get(k, ()))}) for k, it in enumerate(items)]
    config = BankConfig(id="bench", title={"en": "Bench"}, languages=("en",), default_language="en")
    return Bank(config=config, root=Path("<memory>"), entries=[LoadedItem(it, f"q{k}.yaml") for k, it in enumerate(items)])


def problem(bank: Bank, data: dict[str, object]) -> Problem:
    data = {"statuses": ["draft", "reviewed"], **data}  # the generated items are drafts
    return resolve(Blueprint.model_validate({"id": "bench", "bank": ".", **data}), "<bench>", bank)


def case_a(bank: Bank, minimize: bool) -> Problem:
    cells = [{"topic": f"course/t{t:02d}", "difficulty": d, "count": c}
             for t in range(8) for d, c in zip(DIFFS, (2, 2, 1), strict=True)]
    data = {"forms": 5, "items": 40, "cells": cells, "max_overlap": 0}
    if minimize:
        data["balance"] = {"minimize": True}
    return problem(bank, data)


def case_b(bank: Bank) -> Problem:
    cells = [{"topic": f"course/t{t:02d}", "count": 3} for t in range(20)]
    return problem(bank, {"forms": 20, "items": 60, "cells": cells, "max_overlap": 6,
                          "balance": {"tolerance": 0.02}})


def report(name: str, pr: Problem, limit: float, seed: int = 1) -> None:
    t = time.perf_counter()
    sel = solve(pr, seed, limit)
    wall = time.perf_counter() - t
    first = f"{sel.first_solution:.2f} s" if sel.first_solution is not None else "-"
    bound = f", spread bound {sel.spread_bound:.4f}" if sel.spread_bound is not None else ""
    print(f"{name:<44} {sel.status.value:<10} first {first:>8}  total {wall:6.2f} s"
          f"  [{sel.overlap_rule} overlap{bound}]")
    for line in sel.explanation:
        print(f"    {line}")
    for line in sel.notes:
        print(f"    note: {line}")


def main() -> None:
    t = time.perf_counter()
    bank_a = make_bank(600, 8, enemies=150)
    print(f"bank a: 600 items built in {time.perf_counter() - t:.2f} s")
    report("(a) feasible (no objective)", case_a(bank_a, False), 10)
    report("(a) proven balance (minimize spread)", case_a(bank_a, True), 30)
    t = time.perf_counter()
    bank_b = make_bank(10_000, 20, enemies=2000)
    print(f"bank b: 10,000 items built in {time.perf_counter() - t:.2f} s")
    report("(b) 20 forms × 60, overlap ≤ 6, tol 0.02", case_b(bank_b), 60)
    short = case_a(bank_a, False)
    cells = [c.cell.model_dump() for c in short.cells]
    cells[0]["count"] = 6  # 6 per form × 5 forms, no overlap: 30 > the 25 items of the cell
    report("(c1) infeasible: cell shortage", problem(bank_a, {
        "forms": 5, "items": 40, "cells": cells, "max_overlap": 0}), 10)
    cells = [c.cell.model_dump() for c in short.cells]
    report("(c2) infeasible: points vs hard cells", problem(bank_a, {
        "forms": 5, "items": 40, "cells": cells, "max_overlap": 0, "points": 41}), 10)
    heavy = case_b(bank_b)
    heavy.blueprint = heavy.blueprint.model_copy(update={"balance": Blueprint.model_validate({
        "id": "bench", "bank": ".", "forms": 1, "items": 1,
        "balance": {"tolerance": 0.02, "minimize": True}}).balance})
    report("(d) (b) + minimize spread, budget 30 det. s", heavy, 30)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"    peak memory of this process so far: {peak:.0f} MB")
    if "--highs" in sys.argv:
        highs(case_a(bank_a, True), 30)


def highs(pr: Problem, limit: float) -> None:
    """Case (a) as a MIP in HiGHS (pip install highspy): the same constraints and objective."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", limit)
    h.setOptionValue("threads", 1)
    n, forms = len(pr.items), pr.forms
    bp = pr.blueprint
    t = time.perf_counter()
    x = [[h.addBinary() for _ in range(n)] for _ in range(forms)]
    lo, hi = h.addVariable(0, 1e9), h.addVariable(0, 1e9)
    for f in range(forms):
        h.addConstr(h.qsum(x[f]) == bp.items.min)
        for c in pr.cells:
            h.addConstr(h.qsum(x[f][i] for i in c.members) == c.cell.count.min)
        for a, b in pr.enemies:
            h.addConstr(x[f][a] + x[f][b] <= 1)
        total = h.qsum(pr.p[i] * x[f][i] for i in range(n))
        h.addConstr(total - lo >= 0)
        h.addConstr(total - hi <= 0)
    for i in range(n):
        h.addConstr(h.qsum(x[f][i] for f in range(forms)) <= 1)
    h.setOptionValue("mip_abs_gap", round(0.001 * 1000 * bp.items.min) - 1)
    h.minimize(hi - lo)
    wall = time.perf_counter() - t
    info = h.getInfo()
    status = h.modelStatusToString(h.getModelStatus())
    print(f"{'(a) HiGHS, minimize spread (1 thread)':<44} {status:<10} total {wall:6.2f} s"
          f"  [spread {info.objective_function_value / (1000 * bp.items.min):.4f}, "
          f"bound {info.mip_dual_bound / (1000 * bp.items.min):.4f}]")


if __name__ == "__main__":
    main()
