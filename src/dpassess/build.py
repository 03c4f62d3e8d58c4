"""`dpassess build`: the main job over a folder of banks. Each stage adds its outputs here."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

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
        report.lines.append(f"checked {bank.id}: {len(bank)} items, languages {', '.join(bank.languages)}")
    return report
