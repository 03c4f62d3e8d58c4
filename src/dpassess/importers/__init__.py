"""Importers: GIFT, Moodle XML, QTI 2.1 and Canvas files -> bank items, safely and without silent drops.

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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, cast

from dpassess.diagnostics import UsageError
from dpassess.importers.common import (
    ImportResult,
    NoLanguage,
    free_id,
    note,
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
    "canvas": "dpassess.importers.canvas",
}


class _Reader(Protocol):
    def read(self, data: bytes, name: str, lang: str | None, *,
             true_false_words: Mapping[str, tuple[str, str]] | None = None
             ) -> ImportResult: ...


class WouldOverwrite(UsageError):
    """Files an import would write already exist (`paths`); nothing was written."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        super().__init__(f"{paths[0]}: already exists ({len(paths)} file(s) would be "
                         "overwritten)")


def import_file(path: str | Path, fmt: str, *, lang: str | None = None,
                true_false_words: Mapping[str, tuple[str, str]] | None = None) -> ImportResult:
    """Read one file (a .zip for qti21 and canvas) into items. Raises InputError (a UsageError) on input
    that cannot be read, NoLanguage when text does not say its language and `lang` is None.

    `true_false_words` gives the words true/false items show in languages the bank has no
    words for (`{"ru": ("Верно", "Неверно")}`). A file that looks like another format (a
    Moodle XML file read as GIFT, a QTI package read as Moodle XML) is refused with an
    InputError naming that format; when nothing is imported from a text file read as XML,
    the error or a warning says it looks like GIFT."""
    if fmt not in READERS:
        raise UsageError(f"format {fmt!r}: choose one of {', '.join(READERS)}")
    data = read_input(path)
    reader = cast(_Reader, importlib.import_module(READERS[fmt]))
    guess = guess_format(data)
    if guess is not None and guess != fmt and guess != "gift":
        # An XML document or a zip read as another format gives junk (GIFT reads XML as a
        # question's text) or nothing: refused, naming what the file looks like.
        raise InputError(f"{path}: the file looks like {guess}, not {fmt}; nothing was "
                         f"imported (read it with --from {guess})")
    try:
        result = reader.read(data, str(path), lang, true_false_words=true_false_words)
    except InputError as exc:
        if guess is None or guess == fmt or isinstance(exc, NoLanguage):
            raise
        raise InputError(f"{exc} (the file looks like {guess}, not {fmt}: read it with "
                         f"--from {guess})") from None
    if guess is not None and guess != fmt and (guess != "gift" or not result.items):
        what = "nothing was imported, and " if not result.items else ""
        result.warnings.insert(0, note(fmt, str(path), f"{what}the file looks like {guess}, not "
                                       f"{fmt} (read it with --from {guess})"))
    return result


def guess_format(data: bytes) -> str | None:
    """The format `data` looks like, from its first bytes: a zip is a Canvas export when it holds
    QTI 1.2 (`importers.canvas.is_canvas_zip`), else a QTI 2.1 package (a damaged zip: either,
    so None); XML whose first element
    is `<questestinterop>` a Canvas (QTI 1.2) file, `<quiz>` Moodle XML, `<assessmentItem>` QTI,
    other text GIFT."""
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        from dpassess.importers.canvas import is_canvas_zip

        canvas = is_canvas_zip(data)
        return None if canvas is None else "canvas" if canvas else "qti21"
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"<"):
        if b"<questestinterop" in head:
            return "canvas"
        if b"<quiz" in head:
            return "moodle-xml"
        if b"assessmentItem" in head:
            return "qti21"
        return None
    return "gift" if head else None


def item_paths(root: Path, ids: list[str]) -> list[Path]:
    """The file of each item id in `root`, numbered in input order after the files there
    (`01-first.yaml`, `02-second.yaml`, as the bundled bank names them), so that the bank,
    which loads in file-name order, keeps the source's order. An id that already has a file
    (`NN-id.yaml` or `id.yaml`) keeps it."""
    existing: dict[str, Path] = {}
    top = 0
    if root.is_dir():
        for p in sorted(root.glob("*.yaml")):
            number, dash, rest = p.stem.partition("-")
            if number.isdigit() and dash:
                top = max(top, int(number))
                existing.setdefault(rest, p)
            else:
                existing.setdefault(p.stem, p)
    width = max(2, len(str(top + len(ids))))
    out = []
    for item_id in ids:
        if item_id not in existing:
            top += 1
            existing[item_id] = root / f"{top:0{width}d}-{item_id}.yaml"
        out.append(existing[item_id])
    return out


def write_items(
    result: ImportResult, bank_dir: str | Path, *, overwrite: bool = False,
    header: str | None = None, extra: Sequence[tuple[Path, bytes]] = (),
) -> list[Path]:
    """Write each item as `<bank_dir>/<NN>-<id>.yaml` (`item_paths`), and the files its text
    refers to (`files`, images first, so an item never refers to a file not yet written), and
    `extra` files (a bank.yaml, schemas); `header` is the items' first line. Raises
    WouldOverwrite if any of them exists, unless `overwrite`, and UsageError for a file that
    would be written through a symbolic link.

    All texts are produced before the first write, and every file is written or none is
    (`runtime.files.write_all`).
    """
    from dpassess.bank.write import item_to_yaml

    root = Path(bank_dir)
    planned = [(root / rel, data) for rel, data in result.files.items()]
    names = item_paths(root, [item.id for item in result.items])
    planned += [(path, item_to_yaml(item, **({"header": header} if header else {}))
                 .encode("utf-8")) for path, item in zip(names, result.items, strict=True)]
    planned += list(extra)
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
    "guess_format",
    "import_file",
    "item_paths",
    "slugify",
    "unique_ids",
    "write_items",
]
