"""Importers: GIFT, Moodle XML and QTI 2.1 into bank items, safely and without silent drops.

Each format is one module with one entry point `read(data: bytes, name: str, lang: str | None)
-> ImportResult`. Nothing is written until the whole input has been read and every item built;
then each file is written atomically.

    from dpassess.importers import import_file, write_items
    result = import_file("questions.gift.txt", "gift", lang="en")
    write_items(result, "items/my-bank")
"""

from __future__ import annotations

import importlib
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from dpassess.diagnostics import UsageError
from dpassess.importers.safe import InputError, read_input
from dpassess.model import Item
from dpassess.runtime.files import write_all

READERS = {
    "gift": "dpassess.importers.gift",
    "moodle-xml": "dpassess.importers.moodle_xml",
    "qti21": "dpassess.importers.qti21",
}


@dataclass(frozen=True, slots=True)
class Skipped:
    """A question the model cannot hold (yet): where it is and why."""

    location: str  # "file:line" or "file:entry"
    reason: str

    def __str__(self) -> str:
        return f"{self.location}: skipped: {self.reason}"


@dataclass
class ImportResult:
    items: list[Item] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: Files the items refer to (images embedded in Moodle XML): path relative to the bank
    #: folder (POSIX, as the items' text writes it) -> bytes.
    files: dict[str, bytes] = field(default_factory=dict)

    def summary(self) -> str:
        s = f"{len(self.items)} imported, {len(self.skipped)} skipped"
        if self.skipped:
            reasons: dict[str, int] = {}
            for sk in self.skipped:
                reasons[sk.reason] = reasons.get(sk.reason, 0) + 1
            s += " (" + "; ".join(f"{n} {r}" for r, n in sorted(reasons.items())) + ")"
        return s


def import_file(path: str | Path, fmt: str, *, lang: str | None = None) -> ImportResult:
    """Read one file (a .zip for qti21) into items. Raises UsageError on unreadable input."""
    if fmt not in READERS:
        raise UsageError(f"--from {fmt}: choose one of {', '.join(READERS)}")
    data = read_input(path)
    module = importlib.import_module(READERS[fmt])
    return module.read(data, str(path), lang)


def slugify(text: str, *, prefix: str = "q", max_len: int = 48) -> str:
    """A stable id slug from text (ASCII, lower case, hyphens); `prefix` when nothing is left."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:max_len].strip("-")
    if not slug or not slug[0].isalpha():
        slug = f"{prefix}-{slug}" if slug else prefix
    return slug if len(slug) >= 2 else f"{prefix}-{slug}"


def free_id(item_id: str, seen: set[str]) -> str:
    """`item_id`, or `item_id-2`, `-3`... when `seen` has it (`seen` is not changed)."""
    new, n = item_id, 1
    while new in seen:
        n += 1
        new = f"{item_id[:60]}-{n}"
    return new


def unique_ids(items: list[Item]) -> list[Item]:
    """Make ids unique in input order (`x`, `x-2`, `x-3`), deterministically."""
    seen: set[str] = set()
    out = []
    for item in items:
        new = free_id(item.id, seen)
        seen.add(new)
        out.append(item if new == item.id else item.model_copy(update={"id": new}))
    return out


def write_items(
    result: ImportResult, bank_dir: str | Path, *, overwrite: bool = False
) -> list[Path]:
    """Write each item as `<bank_dir>/<id>.yaml`, and the files its text refers to (`files`,
    images first, so an item never refers to a file not yet written). Refuses to overwrite any
    existing file unless `overwrite`.

    All texts are produced before the first write, and every file is written or none is
    (`io.write_all`).
    """
    from dpassess.bank.write import item_to_yaml

    root = Path(bank_dir)
    planned = [(root / rel, data) for rel, data in result.files.items()]
    planned += [(root / f"{item.id}.yaml", item_to_yaml(item).encode("utf-8"))
                for item in result.items]
    if not overwrite:
        clash = [str(p) for p, _ in planned if p.exists()]
        if clash:
            raise UsageError(
                f"{clash[0]}: already exists ({len(clash)} file(s) would be overwritten; "
                "use --force)"
            )
    write_all(planned)
    return [p for p, _ in planned]


__all__ = [
    "READERS",
    "ImportResult",
    "InputError",
    "Skipped",
    "free_id",
    "import_file",
    "slugify",
    "unique_ids",
    "write_items",
]
