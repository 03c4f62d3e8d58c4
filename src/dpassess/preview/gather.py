"""A bank and its lint findings -> what the preview shows of it: the findings by item, the
statistics history by item, and the warnings each export format gives for each item."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dpassess.diagnostics import Diagnostic
from dpassess.export import EXPORTERS, MULTI, Collection
from dpassess.model import Bank
from dpassess.stats.history import ItemRecord, read_history


@dataclass(frozen=True)
class Loss:
    """One thing an export format does not carry as written, for one item (or the bank)."""

    fmt: str
    lang: str
    diagnostic: Diagnostic


@dataclass
class BankView:
    """What the preview shows of one bank."""

    bank: Bank
    #: lint findings by item id ("" for those about the bank as a whole)
    findings: dict[str, list[Diagnostic]] = field(default_factory=dict)
    #: each item's recorded administrations, oldest first
    history: dict[str, list[ItemRecord]] = field(default_factory=dict)
    #: export warnings by item id ("" for the collection)
    losses: dict[str, list[Loss]] = field(default_factory=dict)
    #: problems reading the statistics records
    problems: list[Diagnostic] = field(default_factory=list)


class _ItemOf:
    """Source file -> item id: as the bank names it, else as resolved (the resolved names are
    made only when a path is not found as given)."""

    def __init__(self, bank: Bank) -> None:
        self.entries = bank.entries
        self.given = {e.path: e.item.id for e in bank.entries}
        self._resolved: dict[str, str] | None = None

    def get(self, path: str) -> str | None:
        found = self.given.get(path)
        if found is None:
            if self._resolved is None:
                self._resolved = {str(Path(e.path).resolve()): e.item.id for e in self.entries}
            found = self._resolved.get(path)
        return found


def gather(bank: Bank, findings: Sequence[Diagnostic],
           export_warnings: Sequence[Diagnostic] | None = None) -> BankView:
    """The bank's view: its own findings (those whose file is in the bank), its history and its
    export warnings: `export_warnings` when the caller just exported the bank (`dpassess
    build`: their format is their code, their language not known), else those of an export in
    every format, every language and `multi`, retired items included."""
    view = BankView(bank)
    files = _ItemOf(bank)
    root = Path(bank.root).resolve()
    for d in sorted(findings, key=lambda d: d.sort_key):
        item = d.item if d.item is not None and d.item in bank else files.get(d.path) or files.get(
            str(Path(d.path).resolve()) if d.path else "")
        if item is None:
            try:
                Path(d.path).resolve().relative_to(root)
            except ValueError:
                continue
            item = ""
        view.findings.setdefault(item, []).append(d)
    view.history, view.problems = read_history(Path(bank.root))
    if export_warnings is not None:
        for d in export_warnings:
            key = d.item if d.item is not None and d.item in bank else files.get(d.path) or ""
            view.losses.setdefault(key, []).append(Loss(d.code, "", d))
        return view
    collection = Collection.from_bank(bank, include_retired=True)
    for fmt, exp in EXPORTERS.items():
        for lang in [*bank.languages, *([MULTI] if exp.multi else [])]:
            result = exp.export(collection, lang)
            for d in result.warnings:
                key = d.item if d.item is not None and d.item in bank else files.get(
                    d.path) or ""
                view.losses.setdefault(key, []).append(Loss(fmt, lang, d))
    return view
