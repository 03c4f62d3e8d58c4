"""Writing exports to disk: file names, atomic writes. Shared by `export`, `build`, `assemble`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from .export import EXPORTERS, Collection, ExportWarning, check_lang
from .io import atomic_write

#: Folder under exports/ for each format.
FORMAT_DIRS = {"qti21": "qti21", "moodle-xml": "moodle", "gift": "gift"}


def file_name(collection: Collection, fmt: str, lang: str) -> str:
    return f"{collection.id}-{lang}{EXPORTERS[fmt].suffix}"


def write_collection(
    collection: Collection,
    fmt: str,
    langs: Sequence[str],
    out_dir: Path,
    *,
    names: Mapping[str, str] | None = None,
) -> tuple[list[Path], list[ExportWarning]]:
    """Export `collection` in each language and write the files; every file is written atomically.

    All exports are built in memory first, so a failing exporter writes nothing.
    """
    exp = EXPORTERS[fmt]
    for lang in langs:
        check_lang(fmt, collection, lang, multi=exp.multi)
    results = {lang: exp.export(collection, lang) for lang in langs}
    written: list[Path] = []
    warnings: list[ExportWarning] = []
    for lang, result in results.items():
        name = names[lang] if names and lang in names else file_name(collection, fmt, lang)
        path = out_dir / name
        atomic_write(path, result.data)
        written.append(path)
        warnings.extend(result.warnings)
    return written, _dedupe(warnings)


def _dedupe(warnings: list[ExportWarning]) -> list[ExportWarning]:
    seen: set[ExportWarning] = set()
    out = []
    for w in warnings:
        if w not in seen:
            seen.add(w)
            out.append(w)
    return out
