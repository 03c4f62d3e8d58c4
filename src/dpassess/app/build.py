"""`dpassess build`: a folder of banks -> checked, linted, every export and the sample forms.

The banks are loaded (and linted) once; the exports and the forms of every blueprint are made
from those same banks. Every stage writes all its files or none; output is deterministic, so a
rebuild of an unchanged bank leaves `exports/` byte-identical (tests/test_build.py fails when
the committed exports are stale). Nothing here prints: the report says what happened.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dpassess.app.export import write_bank_exports
from dpassess.diagnostics import Diagnostic
from dpassess.export import EXPORTERS, MULTI, Collection
from dpassess.export.runner import FORMAT_DIRS, ExportFile, file_name
from dpassess.model import Bank


@dataclass
class BuildReport:
    """What a build did: lines to show (in order), warnings, and the exit code (0, or 1 when
    lint failed and nothing was written)."""

    lines: list[str] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    exit_code: int = 0


def build(
    items: Path,
    out: Path,
    blueprints: Path | None = None,
    *,
    cache_dir: Path | None = None,
    use_cache: bool = True,
) -> BuildReport:
    """Check and lint every bank under `items`; if lint passes, write all exports into `out`
    and assemble the forms of each blueprint in `blueprints` (default: `blueprints/` beside
    `items`) into `out/forms/<blueprint name>/`.

    Lint goes through the lint cache (`cache_dir`, default `$DPASSESS_CACHE_DIR` or
    `.dpassess_cache`, as `dpassess lint`), so an unchanged bank is not linted again;
    `use_cache=False` lints without it. The findings are the same either way.

    Raises BankLoadError (a bank cannot be loaded), BlueprintError, Infeasible or UsageError
    (an output path cannot be written)."""
    from dpassess.lint import failing, format_findings, load_config
    from dpassess.lint.incremental import load_and_lint
    from dpassess.runtime.cache import Cache
    from dpassess.runtime.cache import cache_dir as default_cache_dir

    report = BuildReport()
    config = load_config(items)
    cache = Cache(default_cache_dir(cache_dir)) if use_cache else None
    # one parse of each changed file serves lint, the exports and the forms; unchanged items
    # come from the lint cache
    banks, findings = load_and_lint([items], config, cache)
    for bank in banks:
        report.lines.append(
            f"checked {bank.id}: {len(bank)} items, languages {', '.join(bank.languages)}"
        )
    if findings:
        report.lines.append(format_findings(findings, "text").rstrip("\n"))
    if failing(findings, config.fail_on):
        report.lines.append("lint failed: nothing exported (fix the findings above)")
        report.exit_code = 1
        return report
    report.lines.append(f"linted: {len(findings)} finding(s) below the fail level")
    for bank in banks:
        _export_bank(bank, out, report)
    bp_dir = blueprints if blueprints is not None else items.parent / "blueprints"
    for bp in sorted(bp_dir.glob("*.yaml")) if bp_dir.is_dir() else []:
        _assemble_forms(bp, banks, out / "forms" / bp.stem, report)
    return report


def _export_bank(bank: Bank, out: Path, report: BuildReport) -> None:
    """Every (format, language) file of the bank in one write (in worker processes when the
    bank is large); a warning about the whole bank is placed at its folder."""
    collection = Collection.from_bank(bank)
    exports = [
        ExportFile(collection, fmt, lang, out / FORMAT_DIRS[fmt] / file_name(collection, fmt, lang))
        for fmt, exp in EXPORTERS.items()
        for lang in [*bank.languages, *([MULTI] if exp.multi else [])]
    ]
    report.warnings += write_bank_exports(bank, exports)
    report.lines += [f"wrote {e.path}" for e in exports]


def _assemble_forms(blueprint: Path, banks: list[Bank], out: Path, report: BuildReport) -> None:
    """The blueprint's forms with its own seed, from its bank as loaded for lint (when it is
    one of the banks built; else the bank is loaded from the blueprint's `bank:`)."""
    from dpassess.assemble import assemble_problem, load_blueprint, load_problem, write_assembly
    from dpassess.assemble.problem import bank_path

    bp = load_blueprint(blueprint)
    loaded = {Path(b.root).resolve(): b for b in banks}
    problem = load_problem(blueprint, loaded.get(bank_path(bp, blueprint)), blueprint=bp)
    written, warnings = write_assembly(assemble_problem(problem), out)
    report.lines += [f"wrote {p}" for p in written]
    report.warnings += warnings
