"""Writing exports to disk: file names, atomic writes. Shared by `export`, `build`, `assemble`.

Several (format, language) files of one collection are independent. `write_targets` streams each
one straight to a temporary file beside its destination (`EXPORTERS[fmt].export(..., out=file)`:
no file is ever held in memory whole); for a large collection the files are written by forked
worker processes, which send back only their warnings. Once every file is complete, the
temporary files are renamed in a fixed order; if any export fails, every temporary file is
removed and nothing is written. The bytes do not depend on `jobs` (tests/test_perf_export.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from dpassess.diagnostics import UsageError
from dpassess.export import EXPORTERS, Collection, ExportResult, ExportWarning, check_lang
from dpassess.runtime.files import replace_from_temp, staged

#: Folder under exports/ for each format.
FORMAT_DIRS = {"qti21": "qti21", "moodle-xml": "moodle", "gift": "gift"}

#: Collections this large (or larger) are exported in worker processes by default.
PARALLEL_MIN_ITEMS = 1000

#: Write buffer of each streamed file.
_BUFFER = 1 << 16


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
# Each task is (format, language, temporary file to write, or None to return the bytes).
_WORK: tuple[Collection, list[tuple[str, str, Path | None, Path | None]]] | None = None


def _run(collection: Collection, task: tuple[str, str, Path | None, Path | None]) -> ExportResult:
    fmt, lang, tmp, target = task
    if tmp is None:
        return EXPORTERS[fmt].export(collection, lang)
    try:
        with open(tmp, "wb", buffering=_BUFFER) as fh:
            warnings = EXPORTERS[fmt].export(collection, lang, fh).warnings
    except OSError as exc:
        raise UsageError(f"{target}: cannot write: {exc.strerror or exc}") from exc
    return ExportResult(b"", warnings)


def _run_one(index: int) -> ExportResult:
    assert _WORK is not None
    collection, tasks = _WORK
    return _run(collection, tasks[index])


def _default_jobs(collection: Collection, tasks: int) -> int:
    if len(collection.items) < PARALLEL_MIN_ITEMS:
        return 1
    return min(os.cpu_count() or 1, 8, tasks)


def _run_all(collection: Collection, tasks: list[tuple[str, str, Path | None, Path | None]],
             jobs: int | None) -> list[ExportResult]:
    """Every task, in worker processes when `jobs` > 1; results in the given order. The first
    failing task in that order raises, as in one process (after every task has ended)."""
    import multiprocessing

    if jobs is None:
        jobs = _default_jobs(collection, len(tasks))
    if jobs <= 1 or len(tasks) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [_run(collection, task) for task in tasks]
    from concurrent.futures import ProcessPoolExecutor, wait

    for fmt, *_ in tasks:
        EXPORTERS[fmt]  # imports every format module once, before forking
    global _WORK
    _WORK = (collection, tasks)
    try:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=ctx) as pool:
            futures = [pool.submit(_run_one, i) for i in range(len(tasks))]
            wait(futures)
            return [f.result() for f in futures]
    finally:
        _WORK = None


def export_pairs(
    collection: Collection, pairs: Sequence[tuple[str, str]], *, jobs: int | None = None
) -> list[ExportResult]:
    """`EXPORTERS[fmt].export(collection, lang)` for each (fmt, lang), in the order given, in
    memory (`write_targets` streams to files instead).

    `jobs`: worker processes (default: one per core, at most one per pair, for collections of
    PARALLEL_MIN_ITEMS items or more; else 1). Workers are forked, so they share the items
    without pickling them; each computes whole files. The first failing pair in the given order
    raises, as in one process.
    """
    return _run_all(collection, [(fmt, lang, None, None) for fmt, lang in pairs], jobs)


def write_targets(
    collection: Collection, targets: Sequence[Target], *, jobs: int | None = None
) -> list[tuple[list[Path], list[ExportWarning]]]:
    """Export `collection` for every target and write the files; per target, the paths written
    and its warnings (duplicates removed).

    Each file is streamed to a temporary file in its destination folder (by worker processes
    for a large collection: see `export_pairs` for `jobs`); when all are complete they are
    renamed, target by target, language by language. A failing exporter writes nothing: every
    temporary file is removed (and every folder this call created, when left empty).
    """
    paths: list[Path] = []
    pairs: list[tuple[str, str]] = []
    for t in targets:
        exp = EXPORTERS[t.fmt]
        for lang in t.langs:
            check_lang(t.fmt, collection, lang, multi=exp.multi)
            pairs.append((t.fmt, lang))
            name = (t.names[lang] if t.names and lang in t.names
                    else file_name(collection, t.fmt, lang))
            paths.append(t.out_dir / name)
    with staged(paths) as temps:
        tasks = [(fmt, lang, tmp, path)
                 for (fmt, lang), tmp, path in zip(pairs, temps, paths, strict=True)]
        results = iter(_run_all(collection, tasks, jobs))
        renames = iter(zip(temps, paths, strict=True))
        out: list[tuple[list[Path], list[ExportWarning]]] = []
        for t in targets:
            written: list[Path] = []
            warnings: list[ExportWarning] = []
            for _ in t.langs:
                tmp, path = next(renames)
                warnings.extend(next(results).warnings)
                replace_from_temp(tmp, path)
                written.append(path)
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
    """Export `collection` in each language and write the files (see `write_targets`): streamed
    to temporary files, renamed when all are complete, so a failing exporter writes nothing."""
    return write_targets(collection, [Target(fmt, langs, out_dir, names)], jobs=jobs)[0]


def _dedupe(warnings: list[ExportWarning]) -> list[ExportWarning]:
    seen: set[ExportWarning] = set()
    out = []
    for w in warnings:
        if w not in seen:
            seen.add(w)
            out.append(w)
    return out
