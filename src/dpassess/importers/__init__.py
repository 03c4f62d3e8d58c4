"""Importers: GIFT, Moodle XML and QTI 2.1 files -> bank items, safely and without silent drops.

Each format is one module with one entry point `read(data: bytes, name: str, lang: str | None)
-> ImportResult`; what the readers share is in `common` (all three) and `questions` (the Moodle
question that GIFT and Moodle XML both read into). Nothing is written until the whole input has
been read and every item built; then every file is written, or none.

    from dpassess.importers import import_file, write_items
    result = import_file("questions.gift.txt", "gift", lang="en")
    write_items(result, "items/my-bank")
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Protocol, cast

from dpassess.diagnostics import UsageError
from dpassess.importers.common import (
    ImportResult,
    NoLanguage,
    free_id,
    slugify,
    unique_ids,
)
from dpassess.importers.safe import InputError, read_input
from dpassess.runtime.files import write_all

#: The module that reads each format (imported when first used).
READERS = {
    "gift": "dpassess.importers.gift",
    "moodle-xml": "dpassess.importers.moodle_xml",
    "qti21": "dpassess.importers.qti21",
}


class _Reader(Protocol):
    def read(self, data: bytes, name: str, lang: str | None) -> ImportResult: ...


class WouldOverwrite(UsageError):
    """Files an import would write already exist (`paths`); nothing was written."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        super().__init__(f"{paths[0]}: already exists ({len(paths)} file(s) would be "
                         "overwritten)")


def import_file(path: str | Path, fmt: str, *, lang: str | None = None) -> ImportResult:
    """Read one file (a .zip for qti21) into items. Raises InputError (a UsageError) on input
    that cannot be read, NoLanguage when text does not say its language and `lang` is None."""
    if fmt not in READERS:
        raise UsageError(f"format {fmt!r}: choose one of {', '.join(READERS)}")
    data = read_input(path)
    reader = cast(_Reader, importlib.import_module(READERS[fmt]))
    return reader.read(data, str(path), lang)


def write_items(
    result: ImportResult, bank_dir: str | Path, *, overwrite: bool = False
) -> list[Path]:
    """Write each item as `<bank_dir>/<id>.yaml`, and the files its text refers to (`files`,
    images first, so an item never refers to a file not yet written). Raises WouldOverwrite if
    any of them exists, unless `overwrite`.

    All texts are produced before the first write, and every file is written or none is
    (`runtime.files.write_all`).
    """
    from dpassess.bank.write import item_to_yaml

    root = Path(bank_dir)
    planned = [(root / rel, data) for rel, data in result.files.items()]
    planned += [(root / f"{item.id}.yaml", item_to_yaml(item).encode("utf-8"))
                for item in result.items]
    for path, _ in planned:
        _inside(root, path)
    if not overwrite:
        clash = [p for p, _ in planned if p.exists()]
        if clash:
            raise WouldOverwrite(clash)
    write_all(planned)
    return [p for p, _ in planned]


def _inside(root: Path, path: Path) -> None:
    """Refuse to write `path` if a folder on the way from `root` to it (or the file itself) is a
    symbolic link, or it leaves `root`: the file would land wherever the link points."""
    rel = path.relative_to(root)
    if rel.is_absolute() or ".." in rel.parts:
        raise UsageError(f"{path}: outside the bank folder {root}; not written")
    at = root
    for part in rel.parts:
        at = at / part
        if at.is_symlink():
            raise UsageError(f"{at}: is a symbolic link; nothing is written through links in "
                             f"the bank folder (remove the link, or import into another folder)")


__all__ = [
    "READERS",
    "ImportResult",
    "InputError",
    "NoLanguage",
    "WouldOverwrite",
    "free_id",
    "import_file",
    "slugify",
    "unique_ids",
    "write_items",
]
