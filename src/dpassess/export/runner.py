"""Export files on disk: their names, and the one writer that streams them, all or none.

`write_exports` takes the files to export (`ExportFile`: a collection, a format, a language, a
path) and any other files that go with them (answer keys, a summary), and writes every one or
none: each export is streamed (`EXPORTERS[fmt].export(..., out=file)`: never held in memory
whole) to a temporary file beside its destination, by forked worker processes
(`dpassess.runtime.parallel`) when there is much to write; once every file is complete, the
temporary files are renamed in the order given. If any export or write fails, every temporary
file is removed and nothing is written. The bytes do not depend on `jobs`.

An export given a `cache` (`dpassess.runtime.cache.Cache`) keeps its per-item fragments there
(`dpassess.export.memo`), one cache file per export file: the next write of that file builds
only the items whose fragment changed and takes the others' bytes from the cache. The bytes are
the same as without it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dpassess.diagnostics import Diagnostic, UsageError, dedupe
from dpassess.export import EXPORTERS, Collection, ExportResult, check_lang
from dpassess.export.memo import Fragments, ItemDigests
from dpassess.runtime import parallel
from dpassess.runtime.cache import Cache, salt
from dpassess.runtime.files import replace_from_temp, staged

#: Folder under exports/ for each format.
FORMAT_DIRS = {"qti21": "qti21", "moodle-xml": "moodle", "gift": "gift", "canvas": "canvas"}

#: Exports are written by worker processes from this many items written in all (summed over the
#: files: the 8 files of a 1,000-item bank).
PARALLEL_MIN_ITEMS = 8000

#: Write buffer of each streamed file.
_BUFFER = 1 << 16


def file_name(collection: Collection, fmt: str, lang: str) -> str:
    return f"{collection.id}-{lang}{EXPORTERS[fmt].suffix}"


@dataclass(frozen=True, slots=True)
class ExportFile:
    """One export to write: `collection` in format `fmt` and language `lang`, to `path`;
    `options` are the format's own keyword options (QTI's `maths="tex"`); `cache` keeps the
    file's per-item fragments for the next write of `path` (None: none are kept)."""

    collection: Collection
    fmt: str
    lang: str
    path: Path
    options: Mapping[str, str] = field(default_factory=dict)
    cache: Cache | None = None


def write_exports(exports: Sequence[ExportFile], files: Sequence[tuple[Path, bytes]] = (), *,
                  jobs: int | None = None) -> list[list[Diagnostic]]:
    """Write every export and every `(path, bytes)` of `files`, or none of them; return each
    export's warnings (each once), in the order given.

    A language a collection does not have raises UsageError before anything is written. `jobs`:
    worker processes (default: one per core for PARALLEL_MIN_ITEMS items or more, else 1).
    The first failing export in the given order raises, as in one process."""
    for e in exports:
        check_lang(e.fmt, e.collection, e.lang, multi=EXPORTERS[e.fmt].multi)  # imports it
    paths = [e.path for e in exports] + [path for path, _ in files]
    with staged(paths) as temps:
        tasks = list(zip(exports, temps[:len(exports)], strict=True))
        size = sum(len(e.collection.items) for e in exports)
        workers = parallel.worker_count(size, PARALLEL_MIN_ITEMS, jobs, len(tasks))
        # each item's model is hashed once per process, for the fragments of every file
        warnings = parallel.run(_write_export, ItemDigests(), tasks, workers)
        for (path, data), tmp in zip(files, temps[len(exports):], strict=True):
            _write(tmp, path, data)
        for tmp, path in zip(temps, paths, strict=True):
            replace_from_temp(tmp, path)
    return warnings


def _write_export(digests: ItemDigests, task: tuple[ExportFile, Path]) -> list[Diagnostic]:
    export, tmp = task
    # a format's own options (QTI's maths) are keywords of its module's export
    options: dict[str, object] = dict(export.options)
    cache, key_salt = export.cache, _fragments_salt(export)
    if cache is not None:
        stored = cache.load_bytes(str(export.path), FRAGMENTS, key_salt)
        options["memo"] = Fragments(stored, digests)
        del stored  # the fragments hold what they need
    try:
        with open(tmp, "wb", buffering=_BUFFER) as out:
            write: Callable[..., ExportResult] = EXPORTERS[export.fmt].export
            result = write(export.collection, export.lang, out, **options)
    except OSError as exc:
        raise UsageError(f"{export.path}: cannot write: {exc.strerror or exc}") from exc
    memo = options.get("memo")
    if cache is not None and isinstance(memo, Fragments):
        cache.store_bytes(str(export.path), FRAGMENTS, key_salt, memo.dumps())
    return dedupe(result.warnings)


#: The kind of cache file that holds an export file's fragments.
FRAGMENTS = "fragments"


def _fragments_salt(export: ExportFile) -> bytes:
    """What every fragment of the file depends on besides its key (the dpassess sources, by
    the cache's salt) and besides what the exporter puts in each key."""
    import dpassess

    return salt(b"", ("fragments", export.fmt, export.lang, sorted(export.options.items()),
                      dpassess.__version__))


def _write(tmp: Path, path: Path, data: bytes) -> None:
    try:
        tmp.write_bytes(data)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc.strerror or exc}") from exc
