"""Randomized exam forms from a blueprint: select (CP-SAT), order, shuffle, key, export.

    from dpassess.assemble import assemble, write_assembly
    result = assemble(Path("blueprints/data-parallelism.yaml"), seed=7)
    written, warnings = write_assembly(result, Path("out"))

Errors: `BlueprintError` (exit 2: a bad field, an unknown name, more forms than the bank can
fill; every problem a `Diagnostic` at its blueprint line) and `Infeasible` (exit 1: why no forms
exist).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dpassess.assemble.forms import Form, make_forms
from dpassess.assemble.problem import (
    BlueprintError,
    Problem,
    bank_path,
    load_blueprint,
    load_problem,
)
from dpassess.diagnostics import BankLoadError, Diagnostic
from dpassess.model import Bank
from dpassess.model.blueprint import Blueprint, check_seed, check_time_limit

if TYPE_CHECKING:
    from dpassess.assemble.output import Layout as Layout
    from dpassess.assemble.output import layout as layout
    from dpassess.assemble.output import stale_forms as stale_forms
    from dpassess.assemble.output import summary_data as summary_data
    from dpassess.assemble.output import summary_text as summary_text
    from dpassess.assemble.output import unequal_points as unequal_points
    from dpassess.assemble.output import write as write
    from dpassess.assemble.solve import Infeasible as Infeasible
    from dpassess.assemble.solve import Selection as Selection
    from dpassess.assemble.solve import Status as Status
    from dpassess.runtime.cache import Cache

#: Names this package gives from the modules that import the solver (ortools) and the
#: exporters: loaded when first asked for, so that what only reads forms or items (the
#: preview, the answer keys) does not import the solver.
_LAZY = {
    **dict.fromkeys(("Layout", "layout", "stale_forms", "summary_data", "summary_text",
                     "unequal_points", "write"), "dpassess.assemble.output"),
    **dict.fromkeys(("Infeasible", "Selection", "Status"), "dpassess.assemble.solve"),
}


def __getattr__(name: str) -> object:
    import importlib

    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


__all__ = [
    "Assembly",
    "Blueprint",
    "BlueprintError",
    "Form",
    "Infeasible",
    "Layout",
    "Problem",
    "Selection",
    "Status",
    "assemble",
    "assemble_problem",
    "check_seed",
    "check_time_limit",
    "lint_blocked",
    "load_blueprint",
    "load_problem",
    "write_assembly",
]


@dataclass
class Assembly:
    """Forms that meet a blueprint, and how the solver got there."""

    problem: Problem
    selection: Selection
    forms: list[Form]
    seed: int
    time_limit: float

    def summary(self) -> str:
        from dpassess.assemble.output import summary_data, summary_text

        return summary_text(summary_data(self.problem, self.selection, self.forms, self.seed))

    def layout(self, out_dir: str | os.PathLike[str]) -> Layout:
        """Every file of the forms under `out_dir` (see `output.layout`); nothing is written."""
        from dpassess.assemble.output import layout

        return layout(self.problem, self.selection, self.forms, self.seed, Path(out_dir))


def assemble(
    blueprint_path: str | os.PathLike[str],
    *,
    seed: int | None = None,
    time_limit: float | None = None,
    bank: Bank | None = None,
    lint: bool = True,
    progress: Callable[[str], None] | None = None,
    cache: Cache | None = None,
) -> Assembly:
    """Load the blueprint and its bank (unless `bank`, the blueprint's bank already loaded, is
    given: see `load_problem`), select and arrange the forms. `progress(stage)` is told each
    stage as it starts (a caller's progress display).

    With `lint` the bank is linted first (its own lint configuration) and every item with a
    finding at the fail level is left out, each with a warning (`dpassess build` lints and
    stops before assembling instead). The bank is loaded and linted once, through lint's cache
    when `cache` is given (the one `dpassess lint` and `build` keep: a bank linted before costs
    little more than reading its files). `seed` and `time_limit` override the blueprint's
    (checked as the blueprint's are: ValueError). Raises BlueprintError or Infeasible; Ctrl-C
    during the search raises KeyboardInterrupt.
    """
    from dpassess.runtime.extras import require

    require("ortools", "Assembling forms")  # before reading anything: the extra is missing
    if seed is not None:
        check_seed(seed)
    if time_limit is not None:
        check_time_limit(time_limit)
    say = progress or (lambda stage: None)
    blueprint = load_blueprint(blueprint_path)
    blocked: dict[str, str] = {}
    if lint:
        if bank is None:
            say("loading and linting the bank")
            bank, blocked = _load_and_lint(blueprint_path, blueprint, cache)
        else:
            say("linting")
            blocked = lint_blocked(bank)
    problem = load_problem(blueprint_path, bank, blueprint=blueprint, blocked=blocked)
    limit = time_limit if time_limit is not None else problem.blueprint.time_limit
    say(f"selecting items (solver budget {limit:g} s)")
    return assemble_problem(problem, seed=seed, time_limit=time_limit, progress=progress)


def lint_blocked(bank: Bank) -> dict[str, str]:
    """Items of `bank` with a lint finding at the fail level of the bank's lint configuration,
    each with the first such finding in words. Item-analysis findings (IA: what recorded
    administrations showed) do not block: `dpassess lint` reports them and the teacher decides."""
    from dpassess.lint import lint_banks, load_config

    config = load_config(Path(bank.root))
    return _blocked(bank, lint_banks([bank], config), config.fail_on.rank)


def _blocked(bank: Bank, findings: list[Diagnostic], level: int) -> dict[str, str]:
    """`lint_blocked`'s answer from the bank's findings."""
    ids = {bank.path_of(it.id): it.id for it in bank}
    out: dict[str, str] = {}
    for d in findings:
        item = d.item or ids.get(d.path)
        if (item is not None and d.severity.rank >= level and item not in out
                and not d.code.startswith("IA")):
            out[item] = f"lint {d.severity.value} {d.code} ({d.message})"
    return out


def _load_and_lint(blueprint_path: str | os.PathLike[str], blueprint: Blueprint,
                   cache: Cache | None) -> tuple[Bank | None, dict[str, str]]:
    """The blueprint's bank and its blocked items (`lint_blocked`), loaded and linted in one
    pass as `dpassess lint` does (through `cache` when given). The bank folder is named as
    `dpassess lint` names it when run from the working folder (a path from it, when the bank is
    below it), because lint's cache keys hold that name. A bank that is missing or does not
    load gives (None, {}): `load_problem` then reports it on the blueprint's `bank` line."""
    from dpassess.bank.files import BANK_FILE
    from dpassess.lint import load_config
    from dpassess.lint.incremental import load_and_lint

    root = bank_path(blueprint, blueprint_path)
    if not (root / BANK_FILE).is_file():
        return None, {}
    try:
        below = Path(os.path.relpath(root))
        named = below if below.parts[:1] != ("..",) else root
    except ValueError:  # another drive (Windows)
        named = root
    config = load_config(named)
    try:
        banks, findings = load_and_lint([named], config, cache)
    except BankLoadError:
        return None, {}
    return banks[0], _blocked(banks[0], findings, config.fail_on.rank)


def assemble_problem(
    problem: Problem, *, seed: int | None = None, time_limit: float | None = None,
    progress: Callable[[str], None] | None = None,
) -> Assembly:
    """Select and arrange the forms of a resolved blueprint (see `assemble`); `progress` is
    told how the search stands about every second."""
    from dpassess.assemble.solve import Infeasible, Status, solve

    s = problem.blueprint.seed if seed is None else check_seed(seed)
    limit = problem.blueprint.time_limit if time_limit is None else check_time_limit(time_limit)
    sel = solve(problem, s, limit, progress)
    if sel.status not in (Status.optimal, Status.feasible):
        raise Infeasible(sel.status, sel.explanation)
    return Assembly(problem, sel, make_forms(problem, sel.forms, s), s, limit)


def write_assembly(
    assembly: Assembly, out_dir: str | os.PathLike[str]
) -> tuple[list[Path], list[Diagnostic]]:
    """Write every file of every form, or none (see `output.write`); returns the paths written
    and the warnings (the blueprint's, the exports', and one for each form folder of an earlier
    run that this one does not write: such folders are left in place, the earlier summary.json
    names them). Raises UsageError naming a path that cannot be written, or when `out_dir` is
    inside the bank the forms are drawn from."""
    from dpassess.assemble.output import stale_forms, summary_data, unequal_points, write
    from dpassess.runtime.files import refuse_inside

    refuse_inside(out_dir, [assembly.problem.bank.root], "--out")
    out = assembly.layout(out_dir)
    stale = stale_forms(out)
    written, warnings = write(out)
    data = summary_data(assembly.problem, assembly.selection, assembly.forms, assembly.seed)
    unequal = unequal_points(data, assembly.problem.path)
    return written, [*assembly.problem.warnings, *unequal, *warnings, *stale]
