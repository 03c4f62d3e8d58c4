"""`dpassess build`: the main job over a folder of banks: check, lint, export, sample forms.

Every stage writes atomically; output is deterministic, so a rebuild of an unchanged bank leaves
`exports/` byte-identical (tests/test_build.py fails when the committed exports are stale).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dpassess.export import EXPORTERS, MULTI, Collection
from dpassess.export.runner import FORMAT_DIRS, Target, write_targets


@dataclass
class BuildReport:
    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
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
    `use_cache=False` lints without it. The findings are the same either way."""
    from dpassess.assemble import build_forms
    from dpassess.lint import failing, format_findings, load_config
    from dpassess.lint.incremental import load_and_lint
    from dpassess.runtime.cache import Cache
    from dpassess.runtime.cache import cache_dir as default_cache_dir

    report = BuildReport()
    config = load_config(items)
    cache = Cache(default_cache_dir(cache_dir)) if use_cache else None
    # one parse of each changed file serves lint and the exports; unchanged items come from
    # the lint cache
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
        collection = Collection.from_bank(bank)
        # every (format, language) file of the bank at once: in worker processes when the bank
        # is large, written in this fixed order afterwards
        targets = [
            Target(fmt, [*bank.languages, *([MULTI] if EXPORTERS[fmt].multi else [])],
                   out / FORMAT_DIRS[fmt])
            for fmt in EXPORTERS
        ]
        for written, warnings in write_targets(collection, targets):
            report.lines += [f"wrote {p}" for p in written]
            report.warnings += [
                f"{collection.paths.get(w.item_id or '', bank.root)}: {w}" for w in warnings
            ]
    bp_dir = blueprints if blueprints is not None else items.parent / "blueprints"
    for bp in sorted(bp_dir.glob("*.yaml")) if bp_dir.is_dir() else []:
        written, warns = build_forms(bp, out / "forms" / bp.stem)
        report.lines += [f"wrote {p}" for p in written]
        report.warnings += warns
    return report
