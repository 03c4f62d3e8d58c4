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
from dataclasses import dataclass
from pathlib import Path

from dpassess.assemble.forms import Form, make_forms
from dpassess.assemble.output import Layout, layout, stale_forms, summary_data, summary_text, write
from dpassess.assemble.problem import BlueprintError, Problem, load_blueprint, load_problem
from dpassess.assemble.solve import Infeasible, Selection, Status, solve
from dpassess.diagnostics import Diagnostic
from dpassess.model import Bank
from dpassess.model.blueprint import Blueprint

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
        return summary_text(summary_data(self.problem, self.selection, self.forms, self.seed))

    def layout(self, out_dir: str | os.PathLike[str]) -> Layout:
        """Every file of the forms under `out_dir` (see `output.layout`); nothing is written."""
        return layout(self.problem, self.selection, self.forms, self.seed, Path(out_dir))


def assemble(
    blueprint_path: str | os.PathLike[str],
    *,
    seed: int | None = None,
    time_limit: float | None = None,
    bank: Bank | None = None,
) -> Assembly:
    """Load the blueprint and its bank (unless `bank`, the blueprint's bank already loaded, is
    given: see `load_problem`), select and arrange the forms.

    `seed` and `time_limit` override the blueprint's. Raises BlueprintError or Infeasible.
    """
    return assemble_problem(load_problem(blueprint_path, bank), seed=seed, time_limit=time_limit)


def assemble_problem(
    problem: Problem, *, seed: int | None = None, time_limit: float | None = None
) -> Assembly:
    """Select and arrange the forms of a resolved blueprint (see `assemble`)."""
    s = problem.blueprint.seed if seed is None else seed
    limit = problem.blueprint.time_limit if time_limit is None else time_limit
    sel = solve(problem, s, limit)
    if sel.status not in (Status.optimal, Status.feasible):
        raise Infeasible(sel.status, sel.explanation)
    return Assembly(problem, sel, make_forms(problem, sel.forms, s), s, limit)


def write_assembly(
    assembly: Assembly, out_dir: str | os.PathLike[str]
) -> tuple[list[Path], list[Diagnostic]]:
    """Write every file of every form, or none (see `output.write`); returns the paths written
    and the warnings (the blueprint's, the exports', and one for each form folder of an earlier
    run that this one does not write: such folders are left in place, the earlier summary.json
    names them). Raises UsageError naming a path that cannot be written."""
    out = assembly.layout(out_dir)
    stale = stale_forms(out)
    written, warnings = write(out)
    return written, [*assembly.problem.warnings, *warnings, *stale]
