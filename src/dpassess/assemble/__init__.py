"""Randomized exam forms from a blueprint: select (CP-SAT), order, shuffle, key, export.

    from dpassess.assemble import assemble, write_assembly
    result = assemble(Path("blueprints/data-parallelism.yaml"), seed=7)
    written, warnings = write_assembly(result, Path("out"))

Errors: `BlueprintError` (exit 2: a bad field, an unknown name, more forms than the bank can
fill; every problem with its blueprint line) and `Infeasible` (exit 1: why no forms exist).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dpassess.assemble.forms import Form, make_forms
from dpassess.assemble.output import Output, render, stale_forms, summary_data, summary_text, write
from dpassess.assemble.problem import BlueprintError, Problem, load_blueprint, load_problem
from dpassess.assemble.solve import Infeasible, Selection, Status, solve
from dpassess.model.blueprint import Blueprint

__all__ = [
    "Assembly",
    "Blueprint",
    "BlueprintError",
    "Form",
    "Infeasible",
    "Problem",
    "Selection",
    "Status",
    "assemble",
    "build_forms",
    "load_blueprint",
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

    def render(self) -> Output:
        return render(self.problem, self.selection, self.forms, self.seed)


def assemble(
    blueprint_path: str | os.PathLike[str],
    *,
    seed: int | None = None,
    time_limit: float | None = None,
    problem: Problem | None = None,
) -> Assembly:
    """Load the blueprint and its bank, select and arrange the forms.

    `seed` and `time_limit` override the blueprint's. Raises BlueprintError or Infeasible.
    """
    pr = problem if problem is not None else load_problem(blueprint_path)
    s = pr.blueprint.seed if seed is None else seed
    limit = pr.blueprint.time_limit if time_limit is None else time_limit
    sel = solve(pr, s, limit)
    if sel.status not in (Status.optimal, Status.feasible):
        raise Infeasible(sel.status, sel.explanation)
    return Assembly(pr, sel, make_forms(pr, sel.forms, s), s, limit)


def write_assembly(assembly: Assembly, out_dir: str | os.PathLike[str]) -> tuple[list[Path], list[str]]:
    """Write every file of every form, or none (see `output.write`); returns (written paths,
    warning lines). Raises UsageError naming a path that cannot be written.

    Form folders of an earlier run that this one does not write are left in place, with a
    warning (the earlier summary.json names them)."""
    output = assembly.render()
    out = Path(out_dir)
    stale = stale_forms(output, out)
    warnings = [*assembly.problem.warnings, *output.warnings]
    return write(output, out), [*warnings, *stale]


def build_forms(blueprint_path: Path, out_dir: Path) -> tuple[list[Path], list[str]]:
    """`dpassess build`'s forms stage: assemble with the blueprint's own seed and write."""
    return write_assembly(assemble(blueprint_path), out_dir)
