"""Writing exports to disk: file names, atomic writes. Shared by `export`, `build`, `assemble`.

Several (format, language) files of one collection are independent: for a large collection they
are computed in forked worker processes (one file per task, results collected in a fixed order),
then every file is written, atomically, in a fixed order. The bytes do not depend on `jobs`
(tests/test_perf_export.py checks that).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .export import EXPORTERS, Collection, ExportResult, ExportWarning, check_lang
from .io import atomic_write

#: Folder under exports/ for each format.
FORMAT_DIRS = {"qti21": "qti21", "moodle-xml": "moodle", "gift": "gift"}

#: Collections this large (or larger) are exported in worker processes by default.
PARALLEL_MIN_ITEMS = 1000


def file_name(collection: Collection, fmt: str, lang: str) -> str:
    return f"{collection.id}-{lang}{EXPORTERS[fmt].suffix}"


@dataclass(frozen=True, slots=True)
class Target:
    """One format's files: in which languages, into which folder, under which names."""

    fmt: str
    langs: Sequence[str]
    out_dir: Path
    names: Mapping[str, str] | None = None


# The pool's workers are forked with the collection already in memory: they read it from here.
_WORK: tuple[Collection, list[tuple[str, str]]] | None = None


def _export_one(index: int) -> ExportResult:
    assert _WORK is not None
    collection, pairs = _WORK
    fmt, lang = pairs[index]
    return EXPORTERS[fmt].export(collection, lang)


def export_pairs(
    collection: Collection, pairs: Sequence[tuple[str, str]], *, jobs: int | None = None
) -> list[ExportResult]:
    """`EXPORTERS[fmt].export(collection, lang)` for each (fmt, lang), in the order given.

    `jobs`: worker processes (default: one per core, at most one per pair, for collections of
    PARALLEL_MIN_ITEMS items or more; else 1). Workers are forked, so they share the items
    without pickling them; each computes whole files. The first failing pair in the given order
    raises, as in one process.
    """
    import multiprocessing

    pairs = list(pairs)
    if jobs is None:
        many = len(collection.items) >= PARALLEL_MIN_ITEMS
        jobs = min(os.cpu_count() or 1, 8, len(pairs)) if many else 1
    if jobs <= 1 or len(pairs) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [EXPORTERS[fmt].export(collection, lang) for fmt, lang in pairs]
    from concurrent.futures import ProcessPoolExecutor

    for fmt, _ in pairs:
        EXPORTERS[fmt]  # imports every format module once, before forking
    global _WORK
    _WORK = (collection, pairs)
    try:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=min(jobs, len(pairs)), mp_context=ctx) as pool:
            futures = [pool.submit(_export_one, i) for i in range(len(pairs))]
            return [f.result() for f in futures]
    finally:
        _WORK = None


def write_targets(
    collection: Collection, targets: Sequence[Target], *, jobs: int | None = None
) -> list[tuple[list[Path], list[ExportWarning]]]:
    """Export `collection` for every target and write the files; per target, the paths written
    and its warnings (duplicates removed).

    Every export is built in memory first, so a failing exporter writes nothing; then the files
    are written atomically, target by target, language by language.
    """
    pairs: list[tuple[str, str]] = []
    for t in targets:
        exp = EXPORTERS[t.fmt]
        for lang in t.langs:
            check_lang(t.fmt, collection, lang, multi=exp.multi)
            pairs.append((t.fmt, lang))
    results = iter(export_pairs(collection, pairs, jobs=jobs))
    out: list[tuple[list[Path], list[ExportWarning]]] = []
    for t in targets:
        written: list[Path] = []
        warnings: list[ExportWarning] = []
        for lang in t.langs:
            result = next(results)
            name = (t.names[lang] if t.names and lang in t.names
                    else file_name(collection, t.fmt, lang))
            path = t.out_dir / name
            atomic_write(path, result.data)
            written.append(path)
            warnings.extend(result.warnings)
        out.append((written, _dedupe(warnings)))
    return out


def write_collection(
    collection: Collection,
    fmt: str,
    langs: Sequence[str],
    out_dir: Path,
    *,
    names: Mapping[str, str] | None = None,
    jobs: int | None = None,
) -> tuple[list[Path], list[ExportWarning]]:
    """Export `collection` in each language and write the files; every file is written atomically.

    All exports are built in memory first, so a failing exporter writes nothing.
    """
    return write_targets(collection, [Target(fmt, langs, out_dir, names)], jobs=jobs)[0]


def _dedupe(warnings: list[ExportWarning]) -> list[ExportWarning]:
    seen: set[ExportWarning] = set()
    out = []
    for w in warnings:
        if w not in seen:
            seen.add(w)
            out.append(w)
    return out
