"""`dpassess build`: the main job over a folder of banks: check, lint, export, sample forms.

Every stage writes atomically; output is deterministic, so a rebuild of an unchanged bank leaves
`exports/` byte-identical (tests/test_build.py fails when the committed exports are stale).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .export import EXPORTERS, MULTI, Collection
from .exporting import FORMAT_DIRS, write_collection
from .loader import load_banks


@dataclass
class BuildReport:
    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    exit_code: int = 0


def build(items: Path, out: Path) -> BuildReport:
    report = BuildReport()
    banks = load_banks([items])
    for bank in banks:
        report.lines.append(
            f"checked {bank.id}: {len(bank)} items, languages {', '.join(bank.languages)}"
        )
    for bank in banks:
        collection = Collection.from_bank(bank)
        for fmt in EXPORTERS:
            langs = [*bank.languages, *([MULTI] if EXPORTERS[fmt].multi else [])]
            written, warnings = write_collection(collection, fmt, langs, out / FORMAT_DIRS[fmt])
            report.lines += [f"wrote {p}" for p in written]
            report.warnings += [
                f"{collection.paths.get(w.item_id or '', bank.root)}: {w}" for w in warnings
            ]
    return report
