"""A blueprint file plus its bank -> a `Problem`: eligible items, cells, anchors, enemies as indices.

Every name the blueprint uses (topics, tags, item ids, the bank path) is checked against the bank
here; each problem becomes a `Diagnostic` at the blueprint line that holds the name.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from dpassess.bank.load import BANK_FILE, diagnostics_from, load_bank, read_yaml
from dpassess.bank.positions import locate
from dpassess.diagnostics import (
    BankLoadError,
    DiagnosedError,
    Diagnostic,
    FieldPath,
    Severity,
    format_field,
)
from dpassess.model import Bank, Difficulty, Item, Status
from dpassess.model.blueprint import Blueprint, Cell
from dpassess.stats.checks import MIN_N, band
from dpassess.stats.history import Observed, effective_p, observed

#: Solver arithmetic is integral: p values and points are scaled by this factor.
SCALE = 1000


class BlueprintError(DiagnosedError):
    """The blueprint is unusable (bad field, unknown name, more forms than the bank can fill)."""

    subject = "in the blueprint"


@dataclass
class CellSet:
    """One blueprint cell resolved: which eligible items (by index) it counts."""

    index: int
    cell: Cell
    members: list[int]

    @property
    def label(self) -> str:
        return self.cell.label


@dataclass
class Problem:
    """Everything the solver needs, as plain indices and integers."""

    blueprint: Blueprint
    path: str
    bank: Bank
    items: list[Item]
    p: list[int]  # expected proportion correct x SCALE
    points: list[int]  # points x SCALE
    cells: list[CellSet]
    anchors: list[int]
    enemies: list[tuple[int, int]]
    warnings: list[Diagnostic] = field(default_factory=list)
    #: item sets (the items of one stimulus, authoring order): all on a form or none
    sets: list[list[int]] = field(default_factory=list)
    #: the p observed in the bank's recorded administrations, by item id (pooled, weighted by n)
    observed_p: dict[str, float] = field(default_factory=dict)
    #: the corrected point-biserial observed, by item id (pooled, weighted by n)
    observed_r: dict[str, float] = field(default_factory=dict)
    #: each item's reliability index from the history, points * sqrt(p (1 - p)) * r_pb, x SCALE
    #: (0 without an observed r_pb): their sum over a form is the linear part of its predicted
    #: score SD (`output.predicted_sd`), the balance's target
    info: list[int] = field(default_factory=list)
    #: 1 for an item that counts towards `items`, the cells, the overlap and the mean p; 0 for
    #: a description when the blueprint's `descriptions_count` is false (empty: all count)
    counted: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.counted:
            self.counted = [1] * len(self.items)

    def counts(self, i: int) -> bool:
        """Whether item `i` counts towards the blueprint's numbers (see `counted`)."""
        return self.counted[i] == 1

    @property
    def forms(self) -> int:
        return self.blueprint.forms

    def where(self, loc: FieldPath) -> str:
        """`path:line` of a blueprint field, for messages."""
        line, _ = locate(self.path, loc)
        return f"{self.path}:{line}"


def _diag(path: str, loc: FieldPath, message: str) -> Diagnostic:
    line, col = locate(path, loc)
    return Diagnostic(path, line, col, format_field(loc), message)


def _hint(name: str, known: list[str]) -> str:
    """' (did you mean ...?)': the known name sharing the longest start (3+ characters) with
    `name` in its last path segment, else difflib's closest match."""
    def shared(k: str) -> int:
        a, b = k.rsplit("/", 1)[-1], name.rsplit("/", 1)[-1]
        same_parent = k.rpartition("/")[0] == name.rpartition("/")[0]
        n = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        return n if same_parent else 0

    best = max(known, key=shared, default=None)
    if best is not None and shared(best) >= 3:
        return f" (did you mean {best!r}?)"
    close = difflib.get_close_matches(name, known, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def load_blueprint(path: str | os.PathLike[str]) -> Blueprint:
    """Read and validate a blueprint file; BlueprintError lists every problem with its line."""
    p = str(path)
    data, diags = read_yaml(p)
    if data is None:
        raise BlueprintError(diags)
    try:
        return Blueprint.model_validate(data)
    except ValidationError as exc:
        raise BlueprintError(diagnostics_from(exc, p, Blueprint)) from None


def bank_path(blueprint: Blueprint, path: str | os.PathLike[str]) -> Path:
    return (Path(path).parent / blueprint.bank).resolve()


def load_problem(
    path: str | os.PathLike[str], bank: Bank | None = None, *, blueprint: Blueprint | None = None,
    blocked: Mapping[str, str] | None = None,
) -> Problem:
    """Load the blueprint at `path` (unless given) and resolve every name against its bank.

    `bank`: the blueprint's bank, already loaded (`dpassess build` holds it); it must be the
    folder the blueprint's `bank:` names (ValueError otherwise). Without it the bank is loaded
    here; a missing or broken bank is a BlueprintError on the `bank` line. `blocked`: items
    never to use, with the reason (see `resolve`)."""
    p = str(path)
    bp = blueprint if blueprint is not None else load_blueprint(p)
    root = bank_path(bp, p)
    if bank is not None:
        if Path(bank.root).resolve() != root:
            raise ValueError(f"{p}: the blueprint's bank is {root}, not {bank.root}")
        return resolve(bp, p, bank, blocked)
    if not (root / BANK_FILE).is_file():
        why = "no such folder" if not root.exists() else f"no {BANK_FILE} in it"
        raise BlueprintError([_diag(p, ("bank",), f"bank {bp.bank!r} not found ({root}: {why})")])
    try:
        loaded = load_bank(root)
    except BankLoadError as exc:
        lead = _diag(p, ("bank",), f"bank {bp.bank!r} has {len(exc.diagnostics)} error(s)")
        raise BlueprintError([lead, *exc.diagnostics]) from None
    return resolve(bp, p, loaded, blocked)


def _warning(path: str, message: str, loc: FieldPath = ()) -> Diagnostic:
    line, col = locate(path, loc) if loc else (0, 0)
    return Diagnostic(path, line, col, format_field(loc) if loc else "", message,
                      severity=Severity.warning)


def _names(ids: list[str]) -> str:
    return ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")


def resolve(bp: Blueprint, path: str, bank: Bank,
            blocked: Mapping[str, str] | None = None) -> Problem:
    """The blueprint's names resolved against `bank`. Eligible items: a status the blueprint
    allows, not excluded, not `blocked` (item id -> why, e.g. a lint error at the fail level:
    a warning names each), and, for an item set, every item of the set eligible (else the set
    is left out whole, with a warning)."""
    diags: list[Diagnostic] = []
    warnings: list[Diagnostic] = []
    blocked = blocked or {}
    _check_names(bp, path, bank, blocked, diags)
    items = _eligible(bp, path, bank, blocked, diags, warnings)
    index = {it.id: n for n, it in enumerate(items)}
    # a description is text only: by default it is not one of the form's `items`
    counted = [0 if not it.scored and not bp.descriptions_count else 1
               for it in items]
    seen, record_problems = observed(bank)
    cells = _cells(bp, path, bank, items, counted, seen, diags)
    if diags:
        raise BlueprintError(diags)
    sets = [[index[m.id] for m in set_items] for set_items in bank.sets().values()
            if set_items and set_items[0].id in index]
    # an unusable record is left out of the balance: a warning here (lint reports it as IA004)
    warnings.extend(dataclasses.replace(d, severity=Severity.warning) for d in record_problems)
    p = _p_values(bp, path, items, counted, seen, warnings)
    return Problem(
        blueprint=bp,
        path=path,
        bank=bank,
        items=items,
        p=p,
        points=[round(it.points * SCALE) if it.scored else 0
                for it in items],  # a description is never scored
        cells=cells,
        anchors=[index[a] for a in bp.anchors],
        enemies=_enemy_pairs(bp, items, index),
        warnings=warnings,
        sets=sets,
        observed_p={i: o.p for i, o in seen.items() if o.p is not None},
        observed_r={i: o.r_pb for i, o in seen.items() if o.r_pb is not None},
        info=[_info(it, p[n] / SCALE, seen.get(it.id)) for n, it in enumerate(items)],
        counted=counted,
    )


def _check_names(bp: Blueprint, path: str, bank: Bank, blocked: Mapping[str, str],
                 diags: list[Diagnostic]) -> None:
    """Every item id the blueprint names (anchors, exclude, enemies) is in the bank; anchors
    have a status the blueprint allows and are not blocked."""
    all_ids = [i.id for i in bank]

    def known_item(loc: FieldPath, item_id: str) -> bool:
        if item_id in bank:
            return True
        diags.append(_diag(path, loc, f"unknown item {item_id!r}{_hint(item_id, all_ids)}"))
        return False

    for i, a in enumerate(bp.anchors):
        if known_item(("anchors", i), a) and bank.get(a).status not in bp.statuses:
            diags.append(_diag(
                path, ("anchors", i),
                f"anchor {a!r} has status {bank.get(a).status.value}, which `statuses` excludes",
            ))
    for i, x in enumerate(bp.exclude):
        known_item(("exclude", i), x)
    for i, pair in enumerate(bp.enemies):
        for j, x in enumerate(pair):
            known_item(("enemies", i, j), x)

    for i, a in enumerate(bp.anchors):
        if a in blocked:
            diags.append(_diag(path, ("anchors", i), f"anchor {a!r} cannot be used: {blocked[a]}"))


def _eligible(bp: Blueprint, path: str, bank: Bank, blocked: Mapping[str, str],
              diags: list[Diagnostic], warnings: list[Diagnostic]) -> list[Item]:
    """The items forms may hold (bank order): allowed status, not excluded or blocked, and
    their item set usable whole; each item or set left out is warned about."""
    others = [s for s in bp.statuses if s is not Status.reviewed]
    if others:
        warnings.append(_warning(
            path, f"forms may hold {' and '.join(s.value for s in others)} items, not only "
            "reviewed ones", ("statuses",)))
    excluded = set(bp.exclude)
    for item_id, why in sorted(blocked.items()):
        if item_id in bank and bank.get(item_id).status in bp.statuses:
            warnings.append(_warning(path, f"item {item_id!r} left out: {why}"))
    excluded |= set(blocked)
    # a description (text only) goes on a form as an anchor or with its item set, never drawn
    excluded |= {it.id for it in bank if not it.scored
                 and it.id not in bp.anchors and it.stimulus is None}
    usable = {it.id for it in bank if it.status in bp.statuses and it.id not in excluded}
    for sid, set_items in bank.sets().items():
        ids = [m.id for m in set_items]
        missing = [i for i in ids if i not in usable]
        if missing and len(missing) < len(ids):
            warnings.append(_warning(
                path, f"item set {sid!r} left out whole: {_names(missing)} cannot be used "
                "(status, exclude or a lint error), and a set goes on a form complete or not "
                "at all"))
            for k, a in enumerate(bp.anchors):
                if a in ids:
                    diags.append(_diag(path, ("anchors", k),
                                       f"anchor {a!r} is in item set {sid!r}, which cannot be "
                                       f"used whole ({_names(missing)} cannot be used)"))
            excluded |= set(ids)
    return [it for it in bank if it.status in bp.statuses and it.id not in excluded]


def _cells(bp: Blueprint, path: str, bank: Bank, items: list[Item], counted: list[int],
           seen: Mapping[str, Observed], diags: list[Diagnostic]) -> list[CellSet]:
    """Each blueprint cell with the eligible items it counts (never an item `counted` leaves
    out); a topic or tag no item has is an error at its line."""
    topics = sorted({it.topic for it in bank})
    tags = sorted({t for it in bank for t in it.tags})
    cells: list[CellSet] = []
    for k, cell in enumerate(bp.cells):
        if cell.topic is not None and not bank.by_topic(cell.topic):
            diags.append(_diag(
                path, ("cells", k, "topic"),
                f"no item has topic {cell.topic!r} or a topic below it{_hint(cell.topic, topics)}",
            ))
        for t, tag in enumerate(cell.tags):
            if tag not in tags:
                diags.append(_diag(
                    path, ("cells", k, "tags", t), f"no item has tag {tag!r}{_hint(tag, tags)}"
                ))
        members = [n for n, it in enumerate(items) if counted[n] and _matches(cell, it, seen)]
        cells.append(CellSet(k, cell, members))
    return cells


def _p_values(bp: Blueprint, path: str, items: list[Item], counted: list[int],
              seen: Mapping[str, Observed], warnings: list[Diagnostic]) -> list[int]:
    """Each item's expected p x SCALE: fixed or observed, else its difficulty's on the
    blueprint's scale, else medium (warned about when the blueprint balances); 0 for an item
    that does not count (a form's mean p is over the items that count)."""
    scale = bp.difficulty_scale
    p: list[int] = []
    unrated: list[str] = []
    for it, c in zip(items, counted, strict=True):
        if not c:
            p.append(0)
            continue
        fixed_or_seen = effective_p(it, seen)
        if fixed_or_seen is not None:
            value = fixed_or_seen
        elif it.difficulty is not None:
            value = getattr(scale, it.difficulty.value)
        else:
            value = scale.medium
            unrated.append(it.id)
        p.append(round(value * SCALE))
    if unrated and bp.balance is not None:
        shown = ", ".join(unrated[:5]) + (", ..." if len(unrated) > 5 else "")
        warnings.append(Diagnostic(
            path, 0, 0, "",
            f"{len(unrated)} item(s) have neither p_value nor difficulty and count as "
            f"medium (p = {scale.medium:g}) for the balance: {shown}",
            severity=Severity.warning,
        ))
    return p


def _enemy_pairs(bp: Blueprint, items: list[Item], index: Mapping[str, int]) -> list[tuple[int, int]]:
    """The pairs of eligible items that must not share a form (items' and blueprint's)."""
    pairs: set[tuple[int, int]] = set()
    for it in items:
        for e in it.enemies:
            if e in index and e != it.id:
                pairs.add(_pair(index[it.id], index[e]))
    for a_id, b_id in bp.enemies:
        if a_id in index and b_id in index:
            pairs.add(_pair(index[a_id], index[b_id]))
    return sorted(pairs)


def _info(item: Item, p: float, obs: Observed | None) -> int:
    """The item's reliability index (points * sqrt(p (1 - p)) * r_pb) x SCALE from its observed
    r_pb, 0 without one: the sum over a form's items is the linear part of its predicted score
    SD (`output.predicted_sd`), which the assembler balances."""
    if obs is None or obs.r_pb is None:
        return 0
    return round(item.points * math.sqrt(max(p * (1 - p), 0.0)) * max(obs.r_pb, 0.0) * SCALE)


def difficulty_of(item: Item, seen: Mapping[str, Observed]) -> Difficulty | None:
    """The difficulty a blueprint cell counts an item under: the band of its observed p once
    enough persons answered it (as lint judges: at least MIN_N), else the declared one."""
    obs = seen.get(item.id)
    if obs is not None and obs.n >= MIN_N and item.p_value is None:
        return band(obs.p)
    return item.difficulty


def _pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a <= b else (b, a)


def _matches(cell: Cell, item: Item, seen: Mapping[str, Observed] | None = None) -> bool:
    if cell.topic is not None and not (
        item.topic == cell.topic or item.topic.startswith(cell.topic + "/")
    ):
        return False
    if cell.difficulty is not None and difficulty_of(item, seen or {}) != cell.difficulty:
        return False
    if cell.bloom is not None and item.bloom != cell.bloom:
        return False
    return all(t in item.tags for t in cell.tags)


def restrict(pr: Problem, keep: list[int]) -> Problem:
    """The same problem over a subset of the eligible items (indices into `pr.items`, sorted)."""
    new = {old: k for k, old in enumerate(keep)}
    return Problem(
        blueprint=pr.blueprint,
        path=pr.path,
        bank=pr.bank,
        items=[pr.items[i] for i in keep],
        p=[pr.p[i] for i in keep],
        points=[pr.points[i] for i in keep],
        cells=[CellSet(c.index, c.cell, [new[i] for i in c.members if i in new]) for c in pr.cells],
        anchors=[new[a] for a in pr.anchors],
        enemies=[(new[a], new[b]) for a, b in pr.enemies if a in new and b in new],
        warnings=pr.warnings,
        sets=[[new[i] for i in s] for s in pr.sets if all(i in new for i in s)],
        observed_p=pr.observed_p,
        observed_r=pr.observed_r,
        info=[pr.info[i] for i in keep] if pr.info else [],
        counted=[pr.counted[i] for i in keep],
    )
