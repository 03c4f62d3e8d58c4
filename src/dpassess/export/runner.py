"""Export files on disk: their names, the one writer that streams them, all or none, and the
cache of their per-item fragments.

`write_exports` takes the files to export (`ExportFile`: a collection, a format, a language, a
path) and any other files that go with them (answer keys, a summary), and writes every one or
none: each export is streamed (`Format.write(..., out=file)`: never held in memory whole) to a
temporary file beside its destination, by forked worker processes (`dpassess.runtime.parallel`)
when there is much to write; once every file is complete, the temporary files are renamed in
the order given. If any export or write fails, every temporary file is removed and nothing is
written. The bytes do not depend on `jobs`.

An export given a `cache` (`dpassess.runtime.cache.Cache`) keeps its per-item fragments there
(`FragmentStore`), one cache file per export file: the next write of that file asks the format
to build only the items whose fragment key changed and takes the others' bytes from the cache.
The bytes are the same as without it. Formats know nothing of this: they ask for fragments.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from dpassess.diagnostics import Diagnostic, Severity, UsageError, dedupe
from dpassess.export import (
    EXPORTERS,
    Collection,
    Context,
    Exporter,
    Fragment,
    Fragments,
    check_lang,
)
from dpassess.runtime import parallel
from dpassess.runtime.cache import Cache, digest, salt
from dpassess.runtime.files import replace_from_temp, staged

if TYPE_CHECKING:
    from dpassess.model import Item, Stimulus

#: Exports are written by worker processes from this many items written in all (summed over the
#: files: the 8 files of a 1,000-item bank).
PARALLEL_MIN_ITEMS = 8000

#: Write buffer of each streamed file.
_BUFFER = 1 << 16


class _Folders(Mapping[str, str]):
    """Folder under exports/ for each format (its `Format.folder`), by name."""

    def __getitem__(self, name: str) -> str:
        return EXPORTERS[name].folder

    def __iter__(self) -> Iterator[str]:
        return iter(EXPORTERS)

    def __len__(self) -> int:
        return len(EXPORTERS)


#: Folder under exports/ for each format.
FORMAT_DIRS: Mapping[str, str] = _Folders()


def file_name(collection: Collection, fmt: str, lang: str) -> str:
    return EXPORTERS[fmt].file_name(collection, lang)


@dataclass(frozen=True, slots=True)
class ExportFile:
    """One export to write: `collection` in format `fmt` and language `lang`, to `path`;
    `options` are the format's own options (QTI's `maths="tex"`); `cache` keeps the
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

    A language a collection does not have, or an option its format does not have, raises
    UsageError before anything is written. `jobs`: worker processes (default: one per core for
    PARALLEL_MIN_ITEMS items or more, else 1). The first failing export in the given order
    raises, as in one process."""
    for e in exports:
        fmt = EXPORTERS[e.fmt]  # imports it
        check_lang(e.fmt, e.collection, e.lang, multi=fmt.multi)
        fmt.settings(e.options)
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
    fmt = EXPORTERS[export.fmt]
    cache, key_salt = export.cache, _fragments_salt(export)
    store: FragmentStore | None = None
    if cache is not None:
        stored = cache.load_bytes(str(export.path), FRAGMENTS, key_salt)
        store = FragmentStore(stored, digests)
        del stored  # the store holds what it needs

    try:
        with open(tmp, "wb", buffering=_BUFFER) as out:
            if store is None:
                warnings = fmt.write(export.collection, export.lang, out, export.options)
            else:
                warnings = store.write(fmt, export.collection, export.lang, out,
                                       export.options)
    except OSError as exc:
        raise UsageError(f"{export.path}: cannot write: {exc.strerror or exc}") from exc
    if cache is not None and store is not None:
        cache.store_bytes(str(export.path), FRAGMENTS, key_salt, store.dumps())
    return dedupe(warnings)


#: The kind of cache file that holds an export file's fragments.
FRAGMENTS = "fragments"


def _fragments_salt(export: ExportFile) -> bytes:
    """What every fragment of the file depends on besides its key (the dpassess sources, by
    the cache's salt)."""
    import dpassess

    return salt(b"", ("fragments", export.fmt, export.lang, sorted(export.options.items()),
                      dpassess.__version__))


def _write(tmp: Path, path: Path, data: bytes) -> None:
    try:
        tmp.write_bytes(data)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc.strerror or exc}") from exc


class ItemDigests:
    """The hash of each item's (or stimulus's) model, computed once per object (shared by the
    fragments of every file one write exports; it holds the objects while it lives)."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[Item | Stimulus, bytes]] = {}

    def __call__(self, item: Item | Stimulus) -> bytes:
        known = self._known.get(id(item))
        if known is not None and known[0] is item:
            return known[1]
        value = digest(f"{type(item).__qualname__}\0{item.model_dump_json()}".encode())
        self._known[id(item)] = (item, value)
        return value


#: A fragment's key: the hash of what the file's fragments all read, then what this one reads
#: of its item (`FragmentStore._item_key`), then its context: plain values only.
Key = tuple[Any, ...]
#: A stored fragment: its bytes and its warnings as plain values (`_plain`).
_Entry = tuple[bytes, tuple[tuple[Any, ...], ...]]


class FragmentStore:
    """The fragments of one export file: those stored by its last write (what `dumps()` gave
    then; bytes that are not count as none; an entry of another shape is a miss) and those used
    or built this time.

    A fragment's key is everything its bytes read: the hash of the item's model (so an edit to
    a comment of its YAML file changes nothing; an assembled form's item differs from its
    file), the item's stimulus (id and model hash), its source path, the format, language and
    options, the collection's id and category (one hash for the file), and the context the
    assembly gives. What is stored is plain data
    (`marshal` of bytes, strings, numbers and tuples: nothing that runs code when read), in a
    cache file checked by its HMAC (`dpassess.runtime.cache`)."""

    def __init__(self, stored: bytes | memoryview | None = None,
                 digests: ItemDigests | None = None) -> None:
        self._stored = _loads(stored)
        self._used: dict[Key, _Entry] = {}
        self._digest = digests if digests is not None else ItemDigests()
        self._items: dict[int, tuple[Item, Collection, tuple[bytes, str | None, str | None,
                                                             bytes | None]]] = {}
        self._hit: set[Key] = set()
        self._missed: set[Key] = set()

    @property
    def hits(self) -> int:
        """How many fragments were found (each key once)."""
        return len(self._hit)

    @property
    def misses(self) -> int:
        """How many fragments were built (each key once)."""
        return len(self._missed)

    def __len__(self) -> int:
        """How many fragments `dumps()` stores."""
        return len(self._used)

    def key(self, fmt: str, collection: Collection, lang: str, options: Mapping[str, str],
            item: Item, context: Context) -> Key:
        """The key of `item`'s fragment in the file of `collection` in `fmt`, `lang` and
        `options`, read with `context`."""
        return (self._file_key(fmt, collection, lang, options), *self._item_key(collection, item),
                context)

    def source(self, fmt: Exporter, collection: Collection, lang: str,
               options: Mapping[str, str], state: Any) -> Fragments:
        """What the format's assembly asks for each item's fragment: the stored one when its
        key is there, else built by `fmt.fragment` (and kept when it is reusable)."""
        build = fmt.fragment
        file_key = self._file_key(fmt.name, collection, lang, options)
        item_key = self._item_key

        def fragment(item: Item, context: Context = ()) -> Fragment:
            key = (file_key, *item_key(collection, item), context)
            hit = self._get(key)
            if hit is not None:
                return hit
            self._missed.add(key)
            made = build(state, item, context)
            if made.reusable:
                self._used[key] = (made.data, tuple(_plain(w) for w in made.warnings))
            return made

        return fragment

    @staticmethod
    def _file_key(fmt: str, collection: Collection, lang: str, options: Mapping[str, str]
                  ) -> bytes:
        """What every fragment of one file reads: the format, language and options, the
        collection's id and category."""
        return digest(repr((fmt, lang, tuple(options.items()), collection.id,
                            collection.category)).encode("utf-8", "surrogatepass"))

    def _item_key(self, collection: Collection, item: Item
                  ) -> tuple[bytes, str | None, str | None, bytes | None]:
        """What a fragment reads of the item: its model's hash, its source path, its stimulus's
        id and model hash (once per item and collection)."""
        known = self._items.get(id(item))
        if known is not None and known[0] is item and known[1] is collection:
            return known[2]
        sid = item.stimulus
        stimulus = collection.stimuli.get(sid) if sid is not None else None
        value = (self._digest(item), collection.paths.get(item.id), sid,
                 None if stimulus is None else self._digest(stimulus))
        self._items[id(item)] = (item, collection, value)
        return value

    def write(self, fmt: Exporter, collection: Collection, lang: str, out: BinaryIO,
              options: Mapping[str, str]) -> list[Diagnostic]:
        """`fmt.write(collection, lang, out, options)` with the fragments of this store."""
        settings = fmt.settings(options)

        def fragments(state: Any) -> Fragments:
            return self.source(fmt, collection, lang, settings, state)

        return fmt.write(collection, lang, out, options, fragments)

    def _get(self, key: Key) -> Fragment | None:
        entry = self._used.get(key) or self._stored.get(key)
        if entry is None:
            return None
        try:
            data, plain = entry
            warnings = [_diagnostic(w) for w in plain]
            if not isinstance(data, bytes):
                return None
        except (TypeError, ValueError):  # another shape: a miss
            return None
        self._used[key] = entry
        self._hit.add(key)
        return Fragment(data, warnings)

    def dumps(self) -> bytes:
        """The fragments used or built since this object was made, as bytes: what to store (and
        give the next export's `FragmentStore`)."""
        return marshal.dumps(self._used)


def _loads(stored: bytes | memoryview | None) -> dict[Any, Any]:
    """The fragments `dumps()` gave, or none when `stored` is not what it gives."""
    if not stored:
        return {}
    try:
        value = marshal.loads(stored)
    except (EOFError, ValueError, TypeError):  # damaged: none
        return {}
    return value if isinstance(value, dict) else {}


_FIELDS = ("path", "line", "col", "field", "message", "code", "severity", "help", "name", "item")


def _plain(d: Diagnostic) -> tuple[Any, ...]:
    """`d` as plain values (what `_diagnostic` reads back)."""
    return (d.path, d.line, d.col, d.field, d.message, d.code, d.severity.value, d.help, d.name,
            d.item)


def _diagnostic(plain: object) -> Diagnostic:
    """The Diagnostic `_plain` gave; TypeError or ValueError when `plain` is not one."""
    if not isinstance(plain, tuple) or len(plain) != len(_FIELDS):
        raise TypeError("not a warning")
    path, line, col, fld, message, code, severity, help_, name, item = plain
    if not (all(isinstance(v, str) for v in (path, fld, message, code, help_, name))
            and isinstance(line, int) and isinstance(col, int)
            and (item is None or isinstance(item, str))):
        raise TypeError("not a warning")
    return Diagnostic(path, line, col, fld, message, code, Severity(severity), help_, name, item)

