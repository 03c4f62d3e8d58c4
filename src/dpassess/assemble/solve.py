"""A `Problem` -> which items go on which form, with OR-Tools CP-SAT; infeasibility explained.

Three steps: (1) a supply/demand check per cell that names shortages in plain words before any
search; (2) one CP-SAT model (a boolean per form and item); (3) when the solver proves there is no
solution, a deletion filter over the constraint groups (drop one group at a time; keep it only
if the rest becomes feasible) that leaves a small set of groups which cannot hold together.

Reproducible by construction: one worker, a fixed `random_seed`, and a *deterministic* time
limit (CP-SAT's work units, roughly seconds on a current CPU), so a slow or busy machine still
gets byte-identical forms. Wall time and memory are bounded too (WALL_FACTOR, MEMORY_MB): a
search stopped by either says so in the notes. The search runs in a thread, so that Ctrl-C
stops it at once and surfaces as KeyboardInterrupt, never as "no forms found".
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from itertools import combinations

from dpassess.assemble.problem import SCALE, BlueprintError, Problem, restrict
from dpassess.bank.positions import locate
from dpassess.diagnostics import Diagnostic, DpassessError
from dpassess.model import Description
from dpassess.runtime.extras import missing

try:
    from ortools.sat.python import cp_model
except ModuleNotFoundError as exc:  # the `assemble` extra: `solve` says it is missing, so
    if exc.name is None or exc.name.split(".")[0] != "ortools":  # what only reads forms
        raise  # (the preview, the output helpers) works without it
    cp_model = None  # type: ignore[assignment]

#: Above this many (non-anchor item x form pair) products, overlap is enforced through a compact
#: rule (at most `max_overlap` items reused across all forms), which implies the exact one.
EXACT_OVERLAP_LIMIT = 250_000
#: Above this many form x item booleans, the solver first tries seeded samples of the bank
#: (`POOL_FACTORS` times what the forms need), and the whole bank only if those fail.
POOL_LIMIT = 30_000
POOL_FACTORS = (2, 4)
#: Mean difficulties are balanced to this resolution of p: the solver stops once the spread is
#: proven within it of the best possible (finer differences are noise in any p estimate).
BALANCE_RESOLUTION = 0.001
#: A search may take at most this many times its deterministic budget in wall-clock seconds
#: (plus WALL_GRACE); a busy or slow machine then stops early instead of running on.
WALL_FACTOR = 3.0
WALL_GRACE = 5.0
#: Memory CP-SAT may use for one search, in MB.
MEMORY_MB = 1024
#: A long search tells the caller's progress display how it stands this often (seconds).
PROGRESS_EVERY = 1.0

#: A caller's progress display: one line of text at a time.
Progress = Callable[[str], None]


class Status(StrEnum):
    optimal = "optimal"  # every constraint met and the balance objective proven best
    feasible = "feasible"  # every constraint met (objective not proven best, or none asked)
    infeasible = "infeasible"  # proven: no forms meet the blueprint
    unknown = "unknown"  # no forms found within the time limit, none proven impossible


class Infeasible(DpassessError):
    """No forms meet the blueprint; `lines` say why in plain words (exit 1)."""

    exit_code = 1

    def __init__(self, status: Status, lines: list[str]) -> None:
        self.status = status
        self.lines = lines
        super().__init__("\n".join(lines))


@dataclass
class Selection:
    """The solver's answer: item indices per form (sorted), with an honest status."""

    status: Status
    forms: list[list[int]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    explanation: list[str] = field(default_factory=list)
    seconds: float = 0.0
    first_solution: float | None = None
    spread_bound: float | None = None  # proven lower bound on the mean-difficulty spread
    overlap_rule: str = "none"  # none | exact | disjoint | compact


# --- constraint groups ----------------------------------------------------------------------


@dataclass(frozen=True)
class Group:
    key: str
    label: str


def groups(pr: Problem) -> list[Group]:
    """The blueprint's constraint groups that apply, each named with its blueprint line."""
    bp = pr.blueprint
    out = [Group("items", f"{bp.items} items per form ({pr.where(('items',))})")]
    for c in pr.cells:
        out.append(Group(
            f"cell:{c.index}",
            f"cell {c.label}: {c.cell.count} per form ({pr.where(('cells', c.index, 'count'))})",
        ))
    if bp.points is not None:
        out.append(Group("points", f"{bp.points} points per form ({pr.where(('points',))})"))
    if pr.anchors:
        out.append(Group(
            "anchors", f"anchors {', '.join(bp.anchors)} on every form ({pr.where(('anchors',))})"
        ))
    if bp.max_overlap is not None and bp.forms > 1:
        out.append(Group(
            "overlap",
            f"at most {bp.max_overlap} shared items between two forms "
            f"({pr.where(('max_overlap',))})",
        ))
    if pr.enemies and bp.forms >= 1:
        ids = {it.id for it in pr.items}
        sources = ["the items' `enemies`"] if any(
            e in ids for it in pr.items for e in it.enemies) else []
        if bp.enemies:
            sources.append("the blueprint's" if sources else "the blueprint's `enemies`")
        where = f"; {pr.where(('enemies',))}" if bp.enemies else ""
        n = len(pr.enemies)
        names = "; ".join(f"{pr.items[a].id} × {pr.items[b].id}" for a, b in pr.enemies[:5])
        names += "; ..." if n > 5 else ""
        what = "this pair" if n == 1 else f"these {n} pairs"
        out.append(Group("enemies", f"{what} never on one form: {names} "
                                    f"({' and '.join(sources)}{where})"))
    if pr.sets:
        names = ", ".join(f"{pr.items[s[0]].stimulus} ({len(s)} items)" for s in pr.sets[:5])
        names += ", ..." if len(pr.sets) > 5 else ""
        out.append(Group("sets", f"item sets on a form whole or not at all: {names}"))
    if _equal_points(pr):
        out.append(Group("equal_points", "the same total points on every form (items' points "
                                         f"differ; {pr.where(('equal_points',))} allows "
                                         "unequal totals)"))
    if bp.balance is not None and bp.balance.tolerance is not None and bp.forms > 1:
        out.append(Group(
            "balance",
            f"mean difficulty within {bp.balance.tolerance:g} across forms "
            f"({pr.where(('balance', 'tolerance'))})",
        ))
    if bp.balance is not None and bp.balance.target is not None:
        out.append(Group(
            "target",
            f"mean difficulty {bp.balance.target:g} ± {bp.balance.target_tolerance:g} on every "
            f"form ({pr.where(('balance', 'target'))})",
        ))
    return out


def _equal_points(pr: Problem) -> bool:
    """Whether forms need an equal-points constraint: asked, several forms, the points of the
    items differ, and the blueprint does not fix the total already."""
    bp = pr.blueprint
    fixed = bp.points is not None and bp.points.min == bp.points.max
    scored = {p for p, it in zip(pr.points, pr.items, strict=True)
              if not isinstance(it, Description)}  # a description's 0 is no score
    return bp.equal_points and bp.forms > 1 and len(scored) > 1 and not fixed


# --- supply and demand, before any search ---------------------------------------------------


def _distinct_needed(per_form: int, forms: int, overlap: int | None) -> int:
    """Fewest distinct items that give `forms` sets of `per_form` items, any two sharing at most
    `overlap` (a necessary condition: the first j forms need j*d - C(j,2)*overlap items)."""
    if per_form <= 0:
        return 0
    if overlap is None or forms == 1:
        return per_form
    k = min(overlap, per_form)
    return max(j * per_form - j * (j - 1) // 2 * k for j in range(1, forms + 1))


def _overlap_words(pr: Problem) -> str:
    k = pr.blueprint.max_overlap
    if k is None or pr.forms == 1:
        return ""
    return " with no item shared" if k == 0 else f" with at most {k} shared between two forms"


def _held_by_status(pr: Problem) -> str:
    """Why the bank's other items are not usable when their status is the reason (a new bank's
    items are drafts, and a blueprint takes reviewed items unless told otherwise)."""
    held = Counter(it.status.value for it in pr.bank if it.status not in pr.blueprint.statuses)
    if not held:
        return ""
    kinds = ", ".join(f"{n} {status}" for status, n in sorted(held.items()))
    takes = " and ".join(s.value for s in pr.blueprint.statuses)
    return (f" ({kinds} item(s) left out: the blueprint's `statuses` takes {takes} items; "
            "set an item's `status: reviewed` once it is reviewed, or add its status to "
            "`statuses`)")


def precheck(pr: Problem) -> list[str]:
    """Shortages visible without search, in plain words. Raises BlueprintError when the whole
    bank cannot fill the forms (a usage error on the `forms` line)."""
    bp = pr.blueprint
    n_anchor = sum(pr.counted[a] for a in pr.anchors)  # descriptions count only if asked
    n_items = sum(pr.counted)
    supply = n_items - n_anchor
    per_form = bp.items.min - n_anchor
    need = _distinct_needed(per_form, pr.forms, bp.max_overlap)
    if need > supply:
        line, col = locate(pr.path, ("forms",))
        anchors = f" besides {n_anchor} anchor(s)" if n_anchor else ""
        raise BlueprintError([Diagnostic(
            pr.path, line, col, "forms",
            f"more forms than the bank can fill: it has {supply} usable items{anchors}; "
            f"{pr.forms} form(s) × {per_form} items{_overlap_words(pr)} need at least {need}"
            f"{_held_by_status(pr)}",
        )])
    out: list[str] = []
    anchor_set = set(pr.anchors)
    if n_anchor > (bp.items.max or 0):
        out.append(f"{n_anchor} anchors are on every form, but a form has at most {bp.items.max} "
                   f"items ({pr.where(('items',))})")
    for a, b in pr.enemies:
        if a in anchor_set and b in anchor_set:
            out.append(f"anchors {pr.items[a].id} and {pr.items[b].id} are enemies, so they "
                       f"cannot share a form ({pr.where(('anchors',))})")
    for c in pr.cells:
        lo, hi = c.cell.count.min, c.cell.count.max
        where = pr.where(("cells", c.index, "count"))
        anchors_in = [pr.items[i].id for i in c.members if i in anchor_set]
        if hi is not None and len(anchors_in) > hi:
            out.append(f"cell {c.label} allows at most {hi} per form, but the anchors "
                       f"{', '.join(anchors_in)} fall in it ({where})")
            continue
        d = lo - len(anchors_in)
        free = len(c.members) - len(anchors_in)
        need = _distinct_needed(d, pr.forms, bp.max_overlap)
        if need > free:
            has = f"{len(c.members)} item{'s' if len(c.members) != 1 else ''}"
            if anchors_in:
                has += f" ({len(anchors_in)} of them anchors)"
            asks = f"{lo} per form × {pr.forms} form{'s' if pr.forms != 1 else ''}"
            out.append(f"cell {c.label}: the bank has {has}, the blueprint asks {asks}"
                       f"{_overlap_words(pr)}, which needs at least "
                       f"{need + len(anchors_in)} ({where})")
    sets = [set(c.members) for c in pr.cells]
    if sets and all(not (s & t) for s, t in combinations(sets, 2)):
        lo_sum = sum(c.cell.count.min for c in pr.cells)
        if bp.items.max is not None and lo_sum > bp.items.max:
            out.append(f"the cells ask at least {lo_sum} items per form together, but a form has "
                       f"at most {bp.items.max} ({pr.where(('items',))})")
        if all(c.cell.count.max is not None for c in pr.cells):
            outside = n_items - len(set().union(*sets))
            cap = sum(c.cell.count.max or 0 for c in pr.cells) + outside
            if cap < bp.items.min:
                out.append(f"a form needs {bp.items.min} items, but the cells allow at most "
                           f"{cap - outside} and only {outside} usable items fall in no cell "
                           f"({pr.where(('items',))})")
    if bp.points is not None:
        out += _points_check(pr)
    return out


def _points_check(pr: Problem) -> list[str]:
    bp = pr.blueprint
    assert bp.points is not None and bp.items.max is not None
    anchor_set = set(pr.anchors)
    base = sum(pr.points[a] for a in pr.anchors)
    rest = sorted(pr.points[i] for i in range(len(pr.items))
                  if i not in anchor_set and pr.counts(i))
    n_anchor = sum(pr.counted[a] for a in pr.anchors)
    k_most = max(0, bp.items.max - n_anchor)
    most = base + sum(rest[max(0, len(rest) - k_most):]) if k_most else base
    least = base + sum(rest[: max(0, bp.items.min - n_anchor)])
    where = pr.where(("points",))
    out = []
    if most < round(bp.points.min * SCALE):
        out.append(f"a form needs at least {bp.points.min:g} points, but its {bp.items.max} "
                   f"highest-scoring possible items give only {most / SCALE:g} ({where})")
    if bp.points.max is not None and least > round(bp.points.max * SCALE):
        out.append(f"a form may have at most {bp.points.max:g} points, but its {bp.items.min} "
                   f"lowest-scoring possible items already give {least / SCALE:g} ({where})")
    return out


# --- the CP-SAT model ------------------------------------------------------------------------


@dataclass
class _Model:
    model: cp_model.CpModel
    x: list[list[cp_model.IntVar]]
    objective: bool
    spread_scale: float  # objective units per unit of mean p
    overlap_rule: str
    #: the span of the forms' summed reliability indices (predicted score SD), to balance once
    #: the mean p is balanced (None: no observed r_pb, or forms of varying size)
    info_span: cp_model.LinearExpr | None = None
    p_span: cp_model.LinearExpr | None = None
    #: the forms of the second search (balancing the predicted SD), if it found any
    values: list[list[bool]] | None = None


def _build(pr: Problem, enabled: set[str], seed: int, *, objective: bool) -> _Model:
    """The CP-SAT model of the `enabled` constraint groups (one boolean per form and item)."""
    m = cp_model.CpModel()
    x = _variables(m, pr, seed)
    # a form's size: the items that count (a description only when the blueprint says so)
    counts = [cp_model.LinearExpr.WeightedSum(row, pr.counted) for row in x]
    _per_form(m, x, pr, enabled, counts)
    if "equal_points" in enabled and pr.forms > 1:
        _equal_totals(m, x, pr)
    if "target" in enabled:
        _target(m, x, pr, counts)
    rule = "none"
    if "overlap" in enabled and pr.blueprint.max_overlap is not None and pr.forms > 1:
        free = [i for i in range(len(pr.items)) if pr.counts(i)
                and ("anchors" not in enabled or i not in set(pr.anchors))]
        rule = _overlap(m, x, pr, free)
    return _balance(m, x, pr, enabled, counts, rule, objective=objective)


def _variables(m: cp_model.CpModel, pr: Problem, seed: int) -> list[list[cp_model.IntVar]]:
    """One boolean per form and item, created in a seeded order: CP-SAT's search follows it,
    so another seed explores other forms first."""
    n = len(pr.items)
    order = list(range(n))
    random.Random(f"{seed}:variables").shuffle(order)
    x: list[list[cp_model.IntVar]] = []
    for _ in range(pr.forms):
        made = {i: m.new_bool_var("") for i in order}
        x.append([made[i] for i in range(n)])
    return x


def _per_form(m: cp_model.CpModel, x: list[list[cp_model.IntVar]], pr: Problem,
              enabled: set[str], counts: list[cp_model.LinearExpr]) -> None:
    """The groups each form meets on its own: size, cells, points, anchors, enemies, sets."""
    bp = pr.blueprint
    n_forms, n = pr.forms, len(pr.items)
    Sum = cp_model.LinearExpr.Sum
    WSum = cp_model.LinearExpr.WeightedSum
    if "items" in enabled:
        for f in range(n_forms):
            m.add_linear_constraint(counts[f], bp.items.min, bp.items.max or n)
    for c in pr.cells:
        key = f"cell:{c.index}"
        if key in enabled:
            hi = c.cell.count.max if c.cell.count.max is not None else len(c.members)
            for f in range(n_forms):
                m.add_linear_constraint(Sum([x[f][i] for i in c.members]), c.cell.count.min, hi)
    if "points" in enabled and bp.points is not None:
        lo = round(bp.points.min * SCALE)
        hi = round(bp.points.max * SCALE) if bp.points.max is not None else sum(pr.points)
        for f in range(n_forms):
            m.add_linear_constraint(WSum(x[f], pr.points), lo, hi)
    if "anchors" in enabled:
        for f in range(n_forms):
            for a in pr.anchors:
                m.add(x[f][a] == 1)
    if "enemies" in enabled:
        for f in range(n_forms):
            for a, b in pr.enemies:
                m.add_at_most_one(x[f][a], x[f][b])
    if "sets" in enabled:
        for f in range(n_forms):
            for members in pr.sets:
                for i in members[1:]:
                    m.add(x[f][i] == x[f][members[0]])


def _target(m: cp_model.CpModel, x: list[list[cp_model.IntVar]], pr: Problem,
            counts: list[cp_model.LinearExpr]) -> None:
    """Each form's mean difficulty within the blueprint's target ± tolerance."""
    balance = pr.blueprint.balance
    if balance is None or balance.target is None:
        return
    # lo * count <= sum of p <= hi * count, in p units of 1/SCALE
    lo = max(0, math.ceil((balance.target - balance.target_tolerance) * SCALE - 1e-9))
    hi = min(SCALE, math.floor((balance.target + balance.target_tolerance) * SCALE + 1e-9))
    for f in range(pr.forms):
        total = cp_model.LinearExpr.WeightedSum(x[f], pr.p)
        m.add(total >= lo * counts[f])
        m.add(total <= hi * counts[f])


def _balance(m: cp_model.CpModel, x: list[list[cp_model.IntVar]], pr: Problem,
             enabled: set[str], counts: list[cp_model.LinearExpr], rule: str, *,
             objective: bool) -> _Model:
    """The mean-difficulty spread across forms: bounded by the tolerance, minimised when the
    blueprint asks (then the predicted score SD's span is kept for a second search)."""
    bp = pr.blueprint
    n_forms, n = pr.forms, len(pr.items)
    WSum = cp_model.LinearExpr.WeightedSum
    has_objective = False
    scale = float(SCALE)
    tol = bp.balance.tolerance if bp.balance is not None else None
    want_tol = "balance" in enabled and tol is not None
    want_obj = objective and bp.balance is not None and bp.balance.minimize
    if n_forms > 1 and (want_tol or want_obj):
        fixed = bp.items.min if ("items" in enabled and bp.items.exact) else None
        sums = [WSum(x[f], pr.p) for f in range(n_forms)]
        if fixed is not None:
            # Same size everywhere: compare sums of p (exact at the p resolution).
            top = SCALE * fixed
            p_lo, p_hi = m.new_int_var(0, top, "lo"), m.new_int_var(0, top, "hi")
            for total in sums:
                m.add(total >= p_lo)
                m.add(total <= p_hi)
            scale = float(SCALE * fixed)
        else:
            # Sizes vary: bound each mean by lo <= sum/count <= hi with products.
            p_lo, p_hi = m.new_int_var(0, SCALE, "lo"), m.new_int_var(0, SCALE, "hi")
            for f, total in enumerate(sums):
                t_lo = m.new_int_var(0, SCALE * n, "")
                t_hi = m.new_int_var(0, SCALE * n, "")
                cnt = m.new_int_var(0, n, "")
                m.add(cnt == counts[f])
                m.add_multiplication_equality(t_lo, [p_lo, cnt])
                m.add_multiplication_equality(t_hi, [p_hi, cnt])
                m.add(total >= t_lo)
                m.add(total <= t_hi)
        if want_tol:
            assert tol is not None
            m.add(p_hi - p_lo <= math.floor(tol * scale + 1e-9))
        info_span = p_span = None
        if want_obj:
            m.minimize(p_hi - p_lo)
            has_objective = True
            if fixed is not None and any(pr.info):
                top_i = sum(sorted(pr.info, reverse=True)[:fixed])
                i_lo, i_hi = m.new_int_var(0, top_i, "ilo"), m.new_int_var(0, top_i, "ihi")
                for f in range(n_forms):
                    total_i = WSum(x[f], pr.info)
                    m.add(total_i >= i_lo)
                    m.add(total_i <= i_hi)
                info_span, p_span = i_hi - i_lo, p_hi - p_lo
        return _Model(m, x, has_objective, scale, rule, info_span, p_span)
    return _Model(m, x, has_objective, scale, rule)


def _equal_totals(m: cp_model.CpModel, x: list[list[cp_model.IntVar]], pr: Problem) -> None:
    """Every form's total points equal to the first form's."""
    totals = [cp_model.LinearExpr.WeightedSum(row, pr.points) for row in x]
    for f in range(1, pr.forms):
        m.add(totals[f] == totals[0])


def _overlap(m: cp_model.CpModel, x: list[list[cp_model.IntVar]], pr: Problem,
             free: list[int]) -> str:
    k = pr.blueprint.max_overlap
    assert k is not None
    n_forms = pr.forms
    Sum = cp_model.LinearExpr.Sum
    if k == 0:
        for i in free:
            m.add(Sum([x[f][i] for f in range(n_forms)]) <= 1)
        return "disjoint"
    pairs = list(combinations(range(n_forms), 2))
    if len(pairs) * len(free) <= EXACT_OVERLAP_LIMIT:
        for f, g in pairs:
            shared = []
            for i in free:
                y = m.new_bool_var("")
                m.add_bool_or([x[f][i].Not(), x[g][i].Not(), y])
                shared.append(y)
            m.add(Sum(shared) <= k)
        return "exact"
    # Compact: an item on two or more forms is "reused"; at most k items are reused in all,
    # so any two forms share at most k. Stronger than asked, linear in the bank size.
    reused = []
    for i in free:
        r = m.new_bool_var("")
        m.add(Sum([x[f][i] for f in range(n_forms)]) <= 1 + (n_forms - 1) * r)
        reused.append(r)
    m.add(Sum(reused) <= k)
    return "compact"


_Callback: type = object if cp_model is None else cp_model.CpSolverSolutionCallback


class _FirstSolution(_Callback):  # type: ignore[misc]
    """Records when the first solution came, and the search's progress: solutions found, the
    best objective value and the proven bound (read by `_Reporter` from the caller's thread)."""

    def __init__(self, start: float, objective: bool = False) -> None:
        super().__init__()
        self.start = start
        self.objective = objective
        self.first: float | None = None
        self.solutions = 0
        self.best: float | None = None
        self.bound: float | None = None

    def on_solution_callback(self) -> None:
        if self.first is None:
            self.first = time.perf_counter() - self.start
        self.solutions += 1
        if self.objective:
            self.best = self.objective_value
            self.bound = self.best_objective_bound

    def on_bound(self, bound: float) -> None:
        self.bound = bound


@dataclass
class _Reporter:
    """Tells a caller's progress display how a long search stands, at most every
    PROGRESS_EVERY seconds: time spent, solutions found, the mean-p spread and its bound."""

    show: Progress
    stage: str
    spread_scale: float = 1.0
    last: float = 0.0

    def __call__(self, cb: _FirstSolution, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and now - self.last < PROGRESS_EVERY:
            return
        self.last = now
        spent = now - cb.start
        if not cb.solutions:
            what = "no forms yet"
        else:
            what = f"forms found ({cb.solutions} solution{'s' if cb.solutions != 1 else ''})"
            if cb.best is not None:
                what += f", mean-p spread {cb.best / self.spread_scale:.4f}"
        if cb.bound is not None and cb.objective:
            what += f", best bound {max(0.0, cb.bound) / self.spread_scale:.4f}"
        self.show(f"{self.stage}: {spent:.0f} s, {what}")


def _solver(seed: int, time_limit: float) -> cp_model.CpSolver:
    solver = cp_model.CpSolver()
    p = solver.parameters
    # One worker, a fixed seed and a deterministic time limit: the same answer on every machine
    # and under any load. (A 2-worker interleaved portfolio proved case (a) of
    # benchmarks/assemble.py no faster in wall time on 2 cores, and its answer depends on the
    # worker count.)
    p.num_workers = 1
    p.random_seed = seed % (2**31)
    p.max_deterministic_time = time_limit
    p.max_time_in_seconds = time_limit * WALL_FACTOR + WALL_GRACE
    p.max_memory_in_mb = MEMORY_MB
    # Ctrl-C is the caller's: `_solve` stops the search and raises KeyboardInterrupt.
    p.catch_sigint_signal = False
    # Symmetry detection cost more than it saved (forms are interchangeable, yet the search
    # finds a selection in a fraction of a second without it).
    p.symmetry_level = 0
    return solver


def _run(
    pr: Problem, enabled: set[str], seed: int, time_limit: float, *, objective: bool,
    progress: Progress | None = None, stage: str = "selecting items",
) -> tuple[_Model, cp_model.CpSolver, cp_model.CpSolverStatus, float | None, float]:
    """Build and solve: (model, solver, status code, seconds to the first solution, seconds).
    `progress` is told how the search stands while it runs (see `_Reporter`)."""
    start = time.perf_counter()
    built = _build(pr, enabled, seed, objective=objective)
    solver = _solver(seed, time_limit)
    if built.objective:
        gap = round(BALANCE_RESOLUTION * built.spread_scale) - 1
        solver.parameters.absolute_gap_limit = max(0, gap)
    cb = _FirstSolution(start, built.objective)
    report = _Reporter(progress, stage, built.spread_scale) if progress is not None else None
    if report is not None and built.objective:
        solver.best_bound_callback = cb.on_bound
    code = _solve(solver, built.model, cb, report)
    if built.info_span is not None and built.p_span is not None and code in (
            cp_model.OPTIMAL, cp_model.FEASIBLE):
        if progress is not None:
            progress(f"{stage}: balancing the forms' predicted score SD")
        _balance_sd(built, solver, seed, time_limit)
    return built, solver, code, cb.first, time.perf_counter() - start


def _balance_sd(built: _Model, first: cp_model.CpSolver, seed: int, time_limit: float) -> None:
    """A second search: the mean-p spread held at what the first found, the spread of the
    forms' predicted score SD (summed reliability indices) made as small as the solver can in
    the same budget, starting from the first forms. Its forms replace the first ones if found."""
    assert built.info_span is not None and built.p_span is not None
    m = built.model
    m.add(built.p_span <= round(first.objective_value))
    for row in built.x:
        for v in row:
            m.add_hint(v, first.boolean_value(v))
    m.minimize(built.info_span)
    second = _solver(seed, time_limit)
    code = _solve(second, m, _FirstSolution(time.perf_counter()))
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        built.values = [[second.boolean_value(v) for v in row] for row in built.x]


def _solve(solver: cp_model.CpSolver, model: cp_model.CpModel, cb: _FirstSolution,
           report: _Reporter | None = None) -> cp_model.CpSolverStatus:
    """`solver.solve` in a thread (CP-SAT releases the GIL), so that the main thread takes
    Ctrl-C at once: the search is stopped and KeyboardInterrupt raised. `report` is called
    from the main thread while the search runs."""
    out: list[cp_model.CpSolverStatus] = []
    failed: list[BaseException] = []

    def work() -> None:
        try:
            out.append(solver.solve(model, cb))
        except BaseException as exc:  # handed to the caller's thread
            failed.append(exc)

    thread = threading.Thread(target=work, name="dpassess-cp-sat", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.05)
            if report is not None:
                report(cb)
        if report is not None:
            report(cb, force=True)  # how the search ended
    except KeyboardInterrupt:
        solver.stop_search()
        thread.join()
        raise
    if failed:
        raise failed[0]
    return out[0]


def _stopped_early(solver: cp_model.CpSolver) -> str | None:
    """Why a search ended before its deterministic budget (wall clock, memory), or None."""
    p = solver.parameters
    if solver.wall_time >= p.max_time_in_seconds * 0.99:
        return f"the wall-clock bound ({p.max_time_in_seconds:g} s)"
    return None


def pools(pr: Problem, seed: int) -> list[list[int]]:
    """Seeded samples of the eligible items to try before the whole bank (large banks only).

    Walking the items in a seeded order, a sample takes anchors, then every item until it holds
    `factor` times the items all forms need, and keeps taking items of any cell still short of
    `factor` times that cell's demand. A sample's solution is a solution; a sample's failure
    proves nothing, so the next (larger) sample, and finally the whole bank, is tried.
    """
    n = len(pr.items)
    if pr.forms * n <= POOL_LIMIT:
        return []
    bp = pr.blueprint
    cells_of: list[list[int]] = [[] for _ in range(n)]
    for k, c in enumerate(pr.cells):
        for i in c.members:
            cells_of[i].append(k)
    set_of = {i: members for members in pr.sets for i in members}
    order = list(range(n))
    random.Random(f"{seed}:pool").shuffle(order)
    out = []
    for factor in POOL_FACTORS:
        want = factor * pr.forms * (bp.items.max or n)
        quota = [min(len(c.members), factor * pr.forms * c.cell.count.min) for c in pr.cells]
        have = [0] * len(pr.cells)
        chosen = {j for a in pr.anchors for j in set_of.get(a, [a])}
        for i in order:
            if i in chosen:
                continue
            if len(chosen) < want or any(have[k] < quota[k] for k in cells_of[i]):
                for j in set_of.get(i, [i]):  # an item set comes whole
                    if j not in chosen:
                        chosen.add(j)
                        for k in cells_of[j]:
                            have[k] += 1
        if 2 * len(chosen) > n:
            break
        out.append(sorted(chosen))
    return out


def solve(pr: Problem, seed: int, time_limit: float,
          progress: Progress | None = None) -> Selection:
    """Select the items of every form; never raises for an infeasible blueprint (see status).
    `progress(line)` is told how a search stands about every second (a caller's display)."""
    if cp_model is None:
        raise missing("ortools", "Assembling forms")
    start = time.perf_counter()
    shortages = precheck(pr)
    if shortages:
        return Selection(
            Status.infeasible,
            explanation=["the bank cannot supply what the blueprint asks:", *shortages],
            seconds=time.perf_counter() - start,
        )
    all_groups = groups(pr)
    enabled = {g.key for g in all_groups}
    samples = pools(pr, seed)
    for k, keep in enumerate(samples, 1):
        sub = restrict(pr, keep)
        stage = f"selecting items (sample {k} of {len(samples)}: {len(keep)} items)"
        built, solver, code, first, _ = _run(sub, enabled, seed, time_limit, objective=True,
                                             progress=progress, stage=stage)
        if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            sel = _selection(sub, built, solver, code, first, start)
            sel.forms = [[keep[i] for i in form] for form in sel.forms]
            if sel.status is Status.optimal and (sel.spread_bound or 0.0) > 0:
                sel.status = Status.feasible
                sel.notes.append(f"the balance is the best among a seeded sample of {len(keep)} "
                                 "items, not proven best for the whole bank")
            sel.notes.append(f"selected from a seeded sample of {len(keep)} of the "
                             f"{len(pr.items)} usable items")
            return sel
    built, solver, code, first, _ = _run(pr, enabled, seed, time_limit, objective=True,
                                         progress=progress,
                                         stage=f"selecting items ({len(pr.items)} items)")
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return _selection(pr, built, solver, code, first, start)
    if code == cp_model.INFEASIBLE and built.overlap_rule != "compact":
        core, unsure = _deletion_filter(pr, all_groups, seed, time_limit)
        lines = ["no set of forms meets all of these together"
                 + (" (dropping any one of them makes the blueprint feasible):" if not unsure
                    else ":")]
        lines += [f"  - {g.label}" for g in core]
        if unsure:
            lines.append("  (some checks hit the time limit; the list may hold more than needed)")
        return Selection(Status.infeasible, explanation=lines,
                         seconds=time.perf_counter() - start)
    early = _stopped_early(solver)
    lines = ["no forms found within the time limit "
             f"({time_limit:g} deterministic s); none was proven impossible either",
             "give the solver more time (a larger time_limit) or relax the blueprint"]
    if early:
        lines.insert(1, f"the search stopped at {early}, before its deterministic budget")
    if built.overlap_rule == "compact":
        lines.insert(1, "overlap was enforced by the stronger compact rule (at most "
                        f"{pr.blueprint.max_overlap} items reused across all forms)")
    return Selection(Status.unknown, explanation=lines, seconds=time.perf_counter() - start)


def _selection(pr: Problem, built: _Model, solver: cp_model.CpSolver,
               code: cp_model.CpSolverStatus, first: float | None, start: float) -> Selection:
    if built.values is not None:
        forms = [[i for i, on in enumerate(row) if on] for row in built.values]
    else:
        forms = [[i for i in range(len(pr.items)) if solver.boolean_value(row[i])]
                 for row in built.x]
    sel = Selection(Status.feasible, forms, seconds=time.perf_counter() - start,
                    first_solution=first, overlap_rule=built.overlap_rule)
    if built.objective:
        sel.spread_bound = max(0.0, solver.best_objective_bound) / built.spread_scale
        if code == cp_model.OPTIMAL and built.overlap_rule != "compact":
            sel.status = Status.optimal
        elif code == cp_model.OPTIMAL and solver.objective_value == 0:
            sel.status = Status.optimal  # a spread of 0 is best whatever the overlap rule
        elif code == cp_model.OPTIMAL:
            sel.notes.append("the balance is the best possible among forms that reuse at most "
                             "max_overlap items in all (the exact overlap model is too large)")
        else:
            sel.notes.append("time limit reached before the balance was proven best")
    early = _stopped_early(solver)
    if early:
        sel.notes.append(f"the search stopped at {early} before its deterministic budget: "
                         "another machine may find other forms with the same seed")
    if built.overlap_rule == "compact":
        sel.notes.append(f"overlap enforced by the stronger rule: at most "
                         f"{pr.blueprint.max_overlap} items reused across all forms")
    return sel


def _deletion_filter(
    pr: Problem, all_groups: list[Group], seed: int, time_limit: float
) -> tuple[list[Group], bool]:
    """A small set of groups that cannot hold together: drop each group in turn and keep it
    only if the rest becomes feasible without it.

    Most conflicts already show on a single form (cells, points, anchors, enemies): they are
    searched on a one-form model, five to twenty times smaller; a set that no single form can
    meet cannot be met by several, and dropping any of its groups lets copies of one form
    meet the rest. Only conflicts that need several forms (overlap, balance, shared supply)
    are searched on the full model.
    """
    budget = max(0.5, min(time_limit, 5.0))
    per_form = [g for g in all_groups if g.key not in ("overlap", "balance", "equal_points")]
    one = replace(pr, blueprint=pr.blueprint.model_copy(update={"forms": 1}))
    _, _, code, _, _ = _run(one, {g.key for g in per_form}, seed, budget, objective=False)
    target, keep = (one, per_form) if code == cp_model.INFEASIBLE else (pr, list(all_groups))
    unsure = False
    # Try the groups most likely to be innocent first: balance, points, enemies, overlap...
    rank = {"balance": 0, "target": 0, "equal_points": 1, "points": 1, "enemies": 2,
            "overlap": 3, "anchors": 4, "sets": 5, "items": 6}
    for g in sorted(keep, key=lambda g: rank.get(g.key, 5)):
        trial = [h for h in keep if h is not g]
        built, _, code, _, _ = _run(target, {h.key for h in trial}, seed, budget, objective=False)
        if code == cp_model.INFEASIBLE and built.overlap_rule != "compact":
            keep = trial
        elif code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            unsure = True
    return keep, unsure
