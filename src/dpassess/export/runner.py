"""Export files on disk: their names, the one writer that streams them, all or none, and the
cache of their per-item fragments.

`write_exports` takes the files to export (`ExportFile`: a collection, a format, a language, a
path) and any other files that go with them (answer keys, a summary), and writes every one or
none: each export is streamed (`Format.write(..., out=file)`: never held in memory whole) to a
temporary file beside its destination, by forked worker processes (`dpassess.runtime.parallel`)
when there is much to write; once every file is complete, the temporary files are renamed in
the order given. If any export or write fails, every temporary file is removed and nothing is
written. The bytes do not depend on `jobs`.

An export given a `cache` (`dpassess.runtime.cache.Cache`) uses the file it wrote last time as
the store of its per-item fragments (`FragmentStore`): while a file is written, the runner notes
where each fragment's bytes land in it (a format writes a fragment's bytes as they are, into the
file or into a stored zip member), and keeps that index in the cache (`OutputIndex`: plain
data, beside the file's size, mtime, ctime and inode). The next write of that file asks the
format to build only the items whose fragment key is not in the index and takes the others'
bytes from the previous file, at their offsets; a previous file that is not as indexed (edited,
touched, replaced: another stat) gives nothing, and every fragment is built. The cache holds no
second copy of the exports, and nothing in it runs code when read. The bytes are the same as
without a cache. Formats know nothing of this: they ask for fragments.

A format that says what its own parts read of an item (`Format.glue`) is not assembled at all
when the items that changed since the previous file changed only in their fragments: the runner
keeps each such file's layout by item (`_Layout`: item keys, glue, the contexts each item's
fragments were asked with, the file's warnings) and writes the previous file with those items'
new fragments in place of theirs (`_splice`): the rest copied kernel-side, and in a zip the
changed entries and the central directory written again (`export/qti/package.splice`).
"""

from __future__ import annotations

import marshal
import mmap
import os
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple, cast

from dpassess.diagnostics import Diagnostic, UsageError, dedupe
from dpassess.export import (
    EXPORTERS,
    MULTI,
    Collection,
    Context,
    Exporter,
    Fact,
    Fragment,
    Fragments,
    check_lang,
)
from dpassess.runtime import parallel
from dpassess.runtime.cache import Cache, digest, salt
from dpassess.runtime.files import replace_from_temp, staged
from dpassess.runtime.records import (
    FindingRow,
    FragmentPlace,
    OutputIndex,
    finding,
    finding_row,
    findings,
)

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
        # each item's model is hashed once, for the fragments of every file: before the
        # workers fork when there are several (else each would hash every item again)
        digests = ItemDigests()
        if workers > 1:
            for e in exports:
                if e.cache is not None:
                    digests.keys(e.collection)
        done = parallel.run(_write_export, digests, tasks, workers, cost=_expected_work)
        for (path, data), tmp in zip(files, temps[len(exports):], strict=True):
            _write(tmp, path, data)
        for tmp, path in zip(temps, paths, strict=True):
            replace_from_temp(tmp, path)
    for export, (_, places, facts, layout) in zip(exports, done, strict=True):
        if export.cache is not None and places is not None:
            _store_index(export, places, facts, layout)
    return [warnings for warnings, _, _, _ in done]


def _expected_work(task: tuple[ExportFile, Path]) -> float:
    """How much writing the file of `task` takes, roughly: its items times its languages (a
    file in every language writes each text in each)."""
    export = task[0]
    langs = len(export.collection.languages) if export.lang == MULTI else 1
    return len(export.collection.items) * langs


def _write_export(digests: ItemDigests, task: tuple[ExportFile, Path]) -> _Written:
    """Write the file of `task` to its temporary file; its warnings, and (with a cache) where
    its fragments lie in it, the facts its assembly asked and its layout (`_Layout`): by
    splicing the previous file (`_splice`) when only some items changed and the format can
    say that nothing else did, else through the format's assembly."""
    export, tmp = task
    fmt = EXPORTERS[export.fmt]
    cache = export.cache
    previous = None
    facts: dict[Any, Any] = {}
    known: dict[Any, Any] = {}
    if cache is not None:
        index = OutputIndex.read(cache.load_plain(str(export.path), FRAGMENTS,
                                                  _fragments_salt(export)))
        previous = _Previous.open(export.path, index) if index is not None else None
        known = index.facts if index is not None else {}
    places: dict[Key, FragmentPlace] | None = None
    layout: object = None
    try:
        if previous is not None and fmt.glue is not None:
            spliced = _splice(export, fmt, previous, digests, tmp)
            if spliced is not None:
                return spliced
        with open(tmp, "wb", buffering=_BUFFER) as out:
            if cache is None:
                warnings = fmt.write(export.collection, export.lang, out, export.options)
            else:
                sink = _Sink(out)
                sink.previous = previous._map if previous is not None else None
                store = FragmentStore(digests=digests, previous=previous, sink=sink,
                                      known_facts=known)
                warnings = store.write(fmt, export.collection, export.lang, cast(BinaryIO, sink),
                                       export.options)
                facts = store.facts
                # (a write that went round the sink would make every offset doubtful)
                places = sink.places if out.tell() == sink.pos else {}
                if fmt.glue is not None and places:
                    layout = store.layout(fmt.glue, export.collection, warnings)
    except OSError as exc:
        raise UsageError(f"{export.path}: cannot write: {exc.strerror or exc}") from exc
    finally:
        if previous is not None:
            previous.close()
    return dedupe(warnings), places, facts, layout


#: What `_write_export` gives: the file's warnings; with a cache, the places of its fragments,
#: the facts asked and its layout (plain values).
_Written = tuple[list[Diagnostic], "dict[Key, FragmentPlace] | None", dict[Any, Any], object]


def _store_index(export: ExportFile, places: dict[Key, FragmentPlace], facts: dict[Any, Any],
                 layout: object) -> None:
    """Keep where the fragments of `export`'s file (just renamed into place) lie, with its
    stat."""
    assert export.cache is not None
    try:
        st = os.stat(export.path)
    except OSError:
        return
    export.cache.store_plain(str(export.path), FRAGMENTS, _fragments_salt(export),
                             OutputIndex.of(st, places, facts, layout).plain())


class _Previous:
    """The file an export wrote last time, as its index says it is (read through a map of
    it: a fragment's bytes are sliced out where the index puts them)."""

    def __init__(self, index: OutputIndex, data: mmap.mmap, fd: int) -> None:
        self.index, self._map, self.fd = index, data, fd

    @classmethod
    def open(cls, path: Path, index: OutputIndex) -> _Previous | None:
        """The file at `path` when its stat is the index's (else None: written, touched or
        replaced since, by someone else; nothing is taken from it)."""
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return None
        try:
            if index.matches(os.fstat(fd)) and index.size != 0:
                return cls(index, mmap.mmap(fd, 0, access=mmap.ACCESS_READ), fd)
        except (OSError, ValueError):
            pass
        os.close(fd)
        return None

    def get(self, key: Key) -> tuple[bytes, tuple[FindingRow, ...], list[Diagnostic]] | None:
        """The bytes, warning rows and warnings of the fragment of `key`, or None."""
        place = self.index.place(key)
        if place is None:
            return None
        offset, length, rows, warnings = place
        return self._map[offset:offset + length], rows, warnings

    def close(self) -> None:
        self._map.close()
        os.close(self.fd)


class _Sink:
    """The file a format writes, as a binary file (write, tell, seek, flush), noting at which
    offset the bytes of each expected fragment are written (the very object the format was
    given: its bytes are then the fragment's, whatever else is written around them). Bytes
    written again over a noted place (a zip entry's header written again) unnote it."""

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self._write = out.write
        self.pos = out.tell()
        self._end = self.pos
        #: id of the bytes expected -> (those bytes, their key, warning rows, their offset in
        #: the previous file or -1).
        self._expected: dict[int, tuple[bytes, Key, tuple[FindingRow, ...], int]] = {}
        #: fragment key -> its place in the file.
        self.places: dict[Key, FragmentPlace] = {}
        #: The previous file (a fragment found there: `before`).
        self.previous: mmap.mmap | None = None

    def expect(self, data: bytes, key: Key, rows: tuple[FindingRow, ...], at: int = -1
               ) -> None:
        """Note where `data` (the fragment of `key`, warnings `rows`; at offset `at` of the
        previous file when it was found there) is written, if it is (empty bytes are
        anywhere)."""
        if data:
            self._expected[id(data)] = (data, key, rows, at)
        else:
            self.places[key] = (0, 0, rows)

    def before(self, data: bytes, n: int) -> bytes | None:
        """The `n` bytes before `data` in the previous file, when `data` is a fragment expected
        from there (a zip entry's header, which the same name and bytes give again)."""
        expected = self._expected.get(id(data))
        if expected is None or self.previous is None:
            return None
        at = expected[3]
        return self.previous[at - n:at] if at >= n else None

    def write(self, data: bytes | memoryview) -> int:
        n = self._write(data)  # all of it (a buffered file)
        pos = self.pos
        if pos < self._end:
            self._overwritten(pos, n)
        if self._expected:
            expected = self._expected.pop(id(data), None)
            if expected is not None:  # (the very object: it is held while expected)
                self.places[expected[1]] = (pos, n, expected[2])
        self.pos = pos = pos + n
        if pos > self._end:
            self._end = pos
        return n

    def writelines(self, lines: Iterable[bytes | memoryview]) -> None:
        for data in lines:
            self.write(data)

    def __getattr__(self, name: str) -> Any:
        """Anything else a binary file has, of the file itself (a write that goes round the
        sink moves the file's position away from the sink's: `_write_export` then keeps no
        place)."""
        return getattr(self._out, name)

    def _overwritten(self, start: int, n: int) -> None:
        end = start + n
        for key, (offset, length, _) in list(self.places.items()):
            if offset < end and start < offset + length:
                del self.places[key]

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        self.pos = self._out.seek(offset, whence)
        return self.pos

    def seekable(self) -> bool:
        return self._out.seekable()

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        self._out.flush()


#: The kind of cache file that holds an export file's fragments.
FRAGMENTS = "fragments"


def _fragments_salt(export: ExportFile) -> bytes:
    """What every fragment of the file depends on besides its key (the dpassess sources, by
    the cache's salt)."""
    import dpassess

    return salt(b"", ("fragments", _LAYOUT, export.fmt, export.lang,
                      sorted(export.options.items()), dpassess.__version__))


#: The layout of the fragments' cache file (2: the places of the fragments in the file; 3:
#: one hash per item in each key, and the facts; 4: items keyed on their files' hashes).
_LAYOUT = 4


def _write(tmp: Path, path: Path, data: bytes) -> None:
    try:
        tmp.write_bytes(data)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc.strerror or exc}") from exc


class ItemDigests:
    """The hash of each item's (or stimulus's) model, computed once per object, and each
    item's key (`FragmentStore._item_key`), once per item and collection: shared by the
    fragments of every file one write exports (it holds the objects while it lives)."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[Item | Stimulus, bytes]] = {}
        #: `FragmentStore._item_key` of each item, by item (shared by the files of one
        #: collection).
        self.items: dict[int, tuple[Item, Collection, ItemKey]] = {}
        self._lists: dict[int, tuple[Collection, list[ItemKey]]] = {}

    def __call__(self, item: Item | Stimulus) -> bytes:
        known = self._known.get(id(item))
        if known is not None and known[0] is item:
            return known[1]
        value = digest(f"{type(item).__qualname__}\0{item.model_dump_json()}".encode())
        self._known[id(item)] = (item, value)
        return value

    def key(self, collection: Collection, item: Item) -> ItemKey:
        """What a fragment reads of the item, as one hash: its file's (`Collection.sources`) or
        else its model's, its source path, its stimulus's id and file or model hash (once per
        item and collection, for every file of one write)."""
        known = self.items.get(id(item))
        if known is not None and known[0] is item and known[1] is collection:
            return known[2]
        sid = item.stimulus
        stimulus = collection.stimuli.get(sid) if sid is not None else None
        # (what it was read from, when the collection knows it: no model is hashed)
        source = collection.sources.get(item.id)
        own = ("file", source) if source is not None else ("model", self(item))
        read: tuple[str, bytes] | None = None
        if stimulus is not None:
            s_source = collection.stimulus_sources.get(stimulus.id)
            read = ("file", s_source) if s_source is not None else ("model", self(stimulus))
        value = digest(repr((own, collection.paths.get(item.id), sid, read)).encode(
            "utf-8", "surrogatepass"))
        self.items[id(item)] = (item, collection, value)
        return value

    def keys(self, collection: Collection) -> list[ItemKey]:
        """Every item's key in `collection`, in order (once per collection)."""
        known = self._lists.get(id(collection))
        if known is not None and known[0] is collection:
            return known[1]
        keys = [self.key(collection, item) for item in collection.items]
        self._lists[id(collection)] = (collection, keys)
        return keys


#: What a fragment reads of its item, as one hash (`ItemDigests.key`): its file's or model's
#: hash, its source path, its stimulus's id and file or model hash.
ItemKey = bytes
#: A fragment's key: the hash of what the file's fragments all read, the hash of what this one
#: reads of its item (`ItemKey`), then its context: plain values only.
Key = tuple[bytes, ItemKey, Context]
#: A stored fragment: its bytes and its warnings as plain values (finding rows).
_Entry = tuple[bytes, tuple[tuple[Any, ...], ...]]
#: The types a stored fact may have.
_FACT_TYPES = (bool, int, str, type(None))


class FragmentStore:
    """The fragments of one export file: those of its last write, and those used or built this
    time.

    A fragment's key is everything its bytes read: the content hash of the item's file when
    the collection says it is as read (`Collection.sources`: a bank's items; no model is
    hashed), else the hash of its model (an assembled form's item differs from its file); the
    item's stimulus (id, and file or model hash); its source path (one hash per item,
    `ItemDigests.key`); the format, language and options, the collection's id and category
    (one hash for the file); and the context the assembly gives.

    The runner's store (`previous`, `sink`) finds the last write's fragments in the previous
    file (`_Previous`) and notes where this write puts each reusable one (`_Sink`): the file
    is the store. Without them (a file held in memory) the fragments are kept here, and
    `dumps()` gives them as plain data (`marshal` of bytes, strings, numbers and tuples:
    nothing that runs code when read) for the next store's `stored` (bytes that are not what
    `dumps()` gives count as none; an entry of another shape is a miss).

    The facts the assembly asks (`Fragments.fact`) are kept by the same key (`facts`: the
    runner stores them with the file's index; the previous ones are `known_facts`)."""

    def __init__(self, stored: bytes | memoryview | None = None,
                 digests: ItemDigests | None = None, *, previous: _Previous | None = None,
                 sink: _Sink | None = None, known_facts: dict[Any, Any] | None = None) -> None:
        self._stored = _loads(stored)
        self._previous, self._sink = previous, sink
        self._used: dict[Key, _Entry] = {}
        self._digest = digests if digests is not None else ItemDigests()
        self._known_facts = known_facts if known_facts is not None else {}
        #: (file key, item key, name) -> value: the facts asked this time.
        self.facts: dict[tuple[bytes, ItemKey, str], Any] = {}
        self._hit: set[Key] = set()
        self._missed: set[Key] = set()
        #: (item key, context) of each fragment asked, in order; whether every fragment
        #: built was reusable; the file's state (for `layout`).
        self.asked: list[tuple[ItemKey, Context]] = []
        self.reusable = True
        self._state: Any = None
        self._source: _Source | None = None

    @property
    def hits(self) -> int:
        """How many fragments were found (each key once; the stored ones, not those of a
        previous file)."""
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
        return (self._file_key(fmt, collection, lang, options),
                self._digest.key(collection, item), context)

    def source(self, fmt: Exporter, collection: Collection, lang: str,
               options: Mapping[str, str], state: Any) -> Fragments:
        """What the format's assembly asks for each item's fragment: the stored one when its
        key is there, else built by `fmt.fragment` (and kept when it is reusable)."""
        self._state = state
        self._source = _Source(self, fmt.fragment, state, collection,
                               self._file_key(fmt.name, collection, lang, options))
        return self._source

    def layout(self, glue: Callable[[Any, Item, Fragments], object], collection: Collection,
               warnings: list[Diagnostic]) -> object:
        """The file just written by item (`_Layout`, as plain values), or None when it cannot
        be spliced next time (a fragment not reusable, two items of one key)."""
        keys = self._digest.keys(collection)
        asked: dict[ItemKey, list[Context]] = {key: [] for key in keys}
        if not self.reusable or len(asked) != len(keys):
            return None
        for key, context in self.asked:
            asked[key].append(context)
        state, source = self._state, self._source
        assert source is not None
        return tuple(_Layout(_file_signature(collection), tuple(keys),
                             tuple(glue(state, item, source) for item in collection.items),
                             tuple(tuple(asked[key]) for key in keys),
                             tuple(finding_row(w) for w in warnings)))  # (plain: no class)

    @staticmethod
    def _file_key(fmt: str, collection: Collection, lang: str, options: Mapping[str, str]
                  ) -> bytes:
        """What every fragment of one file reads: the format, language and options, the
        collection's id and category."""
        return digest(repr((fmt, lang, tuple(options.items()), collection.id,
                            collection.category)).encode("utf-8", "surrogatepass"))

    def write(self, fmt: Exporter, collection: Collection, lang: str, out: BinaryIO,
              options: Mapping[str, str]) -> list[Diagnostic]:
        """`fmt.write(collection, lang, out, options)` with the fragments of this store."""
        settings = fmt.settings(options)

        def fragments(state: Any) -> Fragments:
            return self.source(fmt, collection, lang, settings, state)

        return fmt.write(collection, lang, out, options, fragments)

    def _get(self, key: Key) -> Fragment | None:
        if self._previous is not None:
            found = self._previous.get(key)
            if found is not None:
                data, rows, warnings = found
                assert self._sink is not None
                self._sink.expect(data, key, rows)
                self._hit.add(key)
                return Fragment(data, warnings)
        entry = self._used.get(key) or self._stored.get(key)
        if entry is None:
            return None
        try:
            data, plain = entry
            warnings = [finding(w) for w in plain]
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


class _Source:
    """The fragments and facts of one file (`Fragments`), from `store`.

    A fragment of the previous file is found here, at the place its index gives (checked: a
    place of another shape, or outside the file, is a miss), with no call per layer: this runs
    once per item and file."""

    def __init__(self, store: FragmentStore, build: Callable[[Any, Item, Context], Fragment],
                 state: Any, collection: Collection, file_key: bytes) -> None:
        self._store, self._build, self._state = store, build, state
        self._collection, self._file_key = collection, file_key
        self._item_key = store._digest.key
        self._keys = store._digest.items
        previous = store._previous
        self._places = previous.index.places if previous is not None else None
        self._map = previous._map if previous is not None else None
        self._size = previous.index.size if previous is not None else 0
        self._sink = store._sink
        self._asked = store.asked.append

    def __call__(self, item: Item, context: Context = ()) -> Fragment:
        store = self._store
        known = self._keys.get(id(item))
        if known is not None and known[0] is item and known[1] is self._collection:
            key = (self._file_key, known[2], context)
        else:
            key = (self._file_key, self._item_key(self._collection, item), context)
        self._asked((key[1], context))
        places = self._places
        if places is not None:
            entry = places.get(key)
            if type(entry) is tuple and len(entry) == 3:
                offset, length, rows = entry
                if (type(offset) is int and type(length) is int and offset >= 0
                        and 0 <= length <= self._size - offset):
                    warnings = [] if rows == () else findings(rows)
                    if warnings is not None:
                        assert self._map is not None and self._sink is not None
                        data = self._map[offset:offset + length]
                        self._sink.expect(data, key, rows, offset)
                        return Fragment(data, warnings)
        hit = store._get(key) if self._places is None else None
        if hit is not None:
            return hit
        store._missed.add(key)
        made = self._build(self._state, item, context)
        if made.reusable:
            rows = tuple(finding_row(w) for w in made.warnings)
            sink = self._sink
            if sink is not None:
                sink.expect(made.data, key, rows)
            else:
                store._used[key] = (made.data, rows)
        else:
            store.reusable = False
        return made

    def fact(self, item: Item, name: str, compute: Callable[[], Fact]) -> Fact:
        store = self._store
        key = (self._file_key, self._item_key(self._collection, item), name)
        value = store.facts.get(key, store)  # (the store: not known)
        if value is store:
            value = store._known_facts.get(key, store)
            if value is store or type(value) not in _FACT_TYPES:
                value = compute()
            store.facts[key] = value
        return cast(Fact, value)


class _Layout(NamedTuple):
    """An export file by item, as the runner wrote it (kept with its index, as plain values):
    what the file's own parts read of the collection (`_file_signature`), each item's key, its
    `glue` (`Format.glue`) and the contexts of the fragments the assembly asked of it, in
    order, and the file's warnings."""

    signature: object
    items: tuple[ItemKey, ...]
    glue: tuple[object, ...]
    asked: tuple[tuple[Context, ...], ...]
    warnings: tuple[FindingRow, ...]

    @staticmethod
    def read(value: object) -> _Layout | None:
        """The layout of `plain` values, or None (not of its shape)."""
        if not (type(value) is tuple and len(value) == 5):
            return None
        layout = _Layout(*value)
        n = len(layout.items) if type(layout.items) is tuple else -1
        if not (n >= 0 and type(layout.glue) is tuple and type(layout.asked) is tuple
                and len(layout.glue) == n and len(layout.asked) == n
                and all(type(a) is tuple for a in layout.asked)):
            return None
        return layout


def _file_signature(collection: Collection) -> object:
    """What a file's own parts may read of its collection besides its items: its id,
    category, title, languages and default language."""
    return (collection.id, collection.category, tuple(sorted(collection.title.items())),
            collection.languages, collection.default_language)


#: A fragment spliced in: its offset and length in the previous file, its new bytes, its old
#: and new keys, its warnings (the same as before).
_Spliced = tuple[int, int, bytes, Key, Key, tuple[FindingRow, ...]]

#: Splice a file only when at most this many of its items changed (else the assembly writes
#: it: as fast then).
SPLICE_MAX = 64


def _splice(export: ExportFile, fmt: Exporter, previous: _Previous, digests: ItemDigests,
            tmp: Path) -> _Written | None:
    """Write `export`'s file to `tmp` as the previous file with the fragments of the items
    that changed built again (with the contexts they had) in place of theirs, when that gives
    the bytes its assembly would: the same number of items in the same places, the file's
    signature the same, each changed item's glue the same, and neither its old fragments nor
    its new ones with a warning or reading another file. Else None (nothing written)."""
    index = previous.index
    layout = _Layout.read(index.layout)
    collection = export.collection
    if layout is None or layout.signature != _file_signature(collection):
        return None
    keys = digests.keys(collection)
    old = layout.items
    if len(keys) != len(old):
        return None
    changed = [i for i, (a, b) in enumerate(zip(keys, old, strict=True)) if a != b]
    if len(changed) > SPLICE_MAX:
        return None
    settings = fmt.settings(export.options)
    file_key = FragmentStore._file_key(fmt.name, collection, export.lang, settings)
    glue = fmt.glue
    assert glue is not None
    state = fmt.start(collection, export.lang, settings) if changed else None
    # (the facts the glue asks: those of the previous file, and those of the changed items)
    asked = FragmentStore(digests=digests, known_facts=index.facts)
    source = _Source(asked, fmt.fragment, state, collection, file_key)
    places = index.places
    # (offset, length, new bytes, old key, new key, warning rows) of each fragment replaced
    spliced: list[_Spliced] = []
    for i in changed:
        item = collection.items[i]
        if glue(state, item, source) != layout.glue[i]:
            return None
        for context in layout.asked[i]:
            old_key = (file_key, old[i], context)
            entry = places.get(old_key)
            if not (type(entry) is tuple and len(entry) == 3):
                return None
            offset, length, rows = entry
            if not (type(offset) is int and type(length) is int
                    and offset >= 0 and 0 <= length <= index.size - offset):
                return None
            made = fmt.fragment(state, item, context)
            if not made.reusable or not made.data or not length:
                return None  # (an empty fragment has no place in the file)
            new_rows = tuple(finding_row(w) for w in made.warnings)
            if new_rows != rows:
                return None  # (the file's warnings would change)
            spliced.append((offset, length, made.data, old_key, (file_key, keys[i], context),
                            rows))
    warnings = findings(layout.warnings)
    if warnings is None:
        return None
    spliced.sort(key=lambda s: s[0])
    if any(a[0] + a[1] > b[0] for a, b in pairwise(spliced)):
        return None  # (places that overlap: not a file the runner wrote)
    if not _copy_around(previous, spliced, tmp, zipped=fmt.zipped):
        return None
    new_places = _shifted(places, spliced)
    new_layout = tuple(layout._replace(items=tuple(keys)))  # (plain: no class)
    return dedupe(warnings), new_places, {**index.facts, **asked.facts}, new_layout


def _copy_around(previous: _Previous, spliced: list[_Spliced],
                 tmp: Path, *, zipped: bool) -> bool:
    """Write to `tmp` the previous file with each spliced range replaced by its new bytes:
    the unchanged ranges copied by the kernel (`os.copy_file_range`) where it can; in a zip
    (`zipped`) through `package.splice` (False: not a zip it can splice; `tmp` is left
    empty)."""
    source = previous.fd
    with open(tmp, "wb", buffering=0) as raw:
        out = _Whole(raw)
        if zipped:
            from dpassess.export.qti import package

            def copy(start: int, count: int) -> None:
                _copy(source, out, start, count, previous)

            return package.splice(previous._map, [s[:3] for s in spliced],
                                  cast(BinaryIO, out), copy)
        pos = 0
        for offset, length, data in [*(r[:3] for r in spliced), (previous.index.size, 0, b"")]:
            _copy(source, out, pos, offset - pos, previous)
            out.write(data)
            pos = offset + length
    return True


class _Whole:
    """An unbuffered file whose `write` writes all it is given (a raw write may write less)."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def write(self, data: bytes | memoryview) -> int:
        view = memoryview(data)
        while view:
            view = view[self.raw.write(view):]
        return len(data)

    def fileno(self) -> int:
        return int(self.raw.fileno())


def _copy(source: int, out: _Whole, start: int, count: int, previous: _Previous) -> None:
    """Copy `count` bytes of the file `source` from `start` to `out` (at its end)."""
    fd = out.fileno()
    while count > 0:
        try:
            n = os.copy_file_range(source, fd, count, start)
        except (AttributeError, OSError):
            n = 0
        if n <= 0:  # (not on this system or between these files: through memory)
            out.write(previous._map[start:start + count])
            return
        start, count = start + n, count - n


def _shifted(places: dict[Key, FragmentPlace], spliced: list[_Spliced]
             ) -> dict[Key, FragmentPlace]:
    """`places` after `spliced`: each place after a replaced range moved by the change of its
    length, each replaced fragment under its new key at its new place."""
    starts = [s[0] for s in spliced]
    shifts = list(accumulate(len(s[2]) - s[1] for s in spliced))
    gone = {s[3] for s in spliced}
    new: dict[Key, FragmentPlace] = {}
    for key, entry in places.items():
        if key in gone or type(entry) is not tuple or len(entry) != 3 or type(entry[0]) is not int:
            continue  # (not a place: a miss next time)
        offset, length, rows = entry
        n = bisect_right(starts, offset)
        new[key] = (offset + shifts[n - 1], length, rows) if n else (offset, length, rows)
    for n, (offset, _, data, _, key, rows) in enumerate(spliced):
        new[key] = (offset + (shifts[n - 1] if n else 0), len(data), rows)
    return new


def _loads(stored: bytes | memoryview | None) -> dict[Any, Any]:
    """The fragments `dumps()` gave, or none when `stored` is not what it gives."""
    if not stored:
        return {}
    try:
        value = marshal.loads(stored)
    except (EOFError, ValueError, TypeError):  # damaged: none
        return {}
    return value if isinstance(value, dict) else {}
