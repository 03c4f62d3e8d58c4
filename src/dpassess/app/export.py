"""A bank's export files -> written all together or not at all, with their warnings placed in
the bank (shared by `dpassess export` and `dpassess build`)."""

from __future__ import annotations

from collections.abc import Sequence

from dpassess.diagnostics import Diagnostic, dedupe
from dpassess.export.runner import ExportFile, write_exports
from dpassess.model import Bank


def write_bank_exports(
    bank: Bank, exports: Sequence[ExportFile], *, jobs: int | None = None
) -> list[Diagnostic]:
    """Write `exports` (files of the bank's collection) in one all-or-nothing write; return
    their warnings, each once, in order. A warning about an item names its file; one about the
    whole bank is placed at the bank's folder."""
    found = write_exports(exports, jobs=jobs)
    return dedupe(d if d.path else d.at(str(bank.root)) for ds in found for d in ds)
