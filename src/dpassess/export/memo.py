"""An export file's per-item fragments -> reused by the next export of that file: the bytes each
item contributed (QTI: its zip member and its manifest resource; Moodle XML: its `<question>`;
GIFT: its block) and its warnings, keyed by everything they depend on.

An exporter given a `Fragments` asks it for each item's bytes before building them: `key(item,
*context)` is the hash of the item's model (so an edit to a comment of its YAML file changes
nothing) with what the exporter says the bytes read besides (the format, the languages, the
options, the collection's id, the item's source path and stimulus, ...), compared with `==`;
`get(key)` is the bytes and warnings stored under that key, or None; `put(key, data, warnings)`
records what was built. An item whose bytes depend on other files (an image it embeds or packs)
is never put: those files can change with no change to the item. `dumps()` is what was used or
built this time, to store for the next export: `dpassess.export.runner` keeps it in
`dpassess.runtime.cache` (one cache file per export file, checked by its hash: a damaged file is
a miss, never different bytes); fragments of items no longer exported are dropped.
"""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, Any

from dpassess.diagnostics import Diagnostic
from dpassess.model import Item, Stimulus
from dpassess.runtime.cache import digest

if TYPE_CHECKING:
    from dpassess.export import Collection

#: A fragment's key: the item's digest, then the context its bytes read.
Key = tuple[Any, ...]
#: A fragment: its bytes and its warnings.
Entry = tuple[bytes, list[Diagnostic]]


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


class Fragments:
    """The fragments of one export file: those `stored` by its last export (what `dumps()`
    returned then; bytes that are not count as none; an entry of another shape is a miss) and
    those used or built this time."""

    def __init__(self, stored: bytes | memoryview | None = None,
                 digests: ItemDigests | None = None) -> None:
        self._stored = _loads(stored)
        self._used: dict[Key, Entry] = {}
        self._digest = digests if digests is not None else ItemDigests()
        self._hit: set[Key] = set()
        self._missed: set[Key] = set()

    @property
    def hits(self) -> int:
        """How many fragments were found (each key once)."""
        return len(self._hit)

    @property
    def misses(self) -> int:
        """How many fragments were asked for and not found (each key once)."""
        return len(self._missed)

    def key(self, item: Item, *context: str | bool | bytes | tuple[str, ...] | None) -> Key:
        """The key of `item`'s fragment in a file whose bytes for it also read `context`."""
        return (self._digest(item), *context)

    def item_key(self, collection: Collection, item: Item,
                 *context: str | bool | bytes | tuple[str, ...] | None) -> Key:
        """`key(item, *context)` with what every format's bytes of an item read from the
        collection besides: its id, the item's source path, its stimulus (id and content)."""
        sid = item.stimulus
        stimulus = collection.stimuli.get(sid) if sid is not None else None
        return self.key(item, *context, collection.id, collection.paths.get(item.id), sid,
                        None if stimulus is None else self._digest(stimulus))

    def get(self, key: Key) -> Entry | None:
        """The bytes and warnings stored under `key`, or None."""
        entry = self._used.get(key) or self._stored.get(key)
        if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], bytes)
                and isinstance(entry[1], list)
                and all(isinstance(w, Diagnostic) for w in entry[1])):
            self._missed.add(key)
            return None
        self._used[key] = entry
        self._hit.add(key)
        return entry[0], list(entry[1])

    def put(self, key: Key, data: bytes, warnings: list[Diagnostic]) -> None:
        """Record the bytes and warnings built for `key`."""
        self._used[key] = (data, list(warnings))

    def dumps(self) -> bytes:
        """The fragments used or built since this object was made, as bytes: what to store (and
        give the next export's `Fragments`)."""
        return pickle.dumps(self._used, protocol=pickle.HIGHEST_PROTOCOL)


def _loads(stored: bytes | memoryview | None) -> dict[Any, Any]:
    """The fragments `dumps()` gave, or none when `stored` is not what it gives."""
    if not stored:
        return {}
    try:
        value = pickle.loads(stored)
    except Exception:  # damaged, or another Python: none
        return {}
    return value if isinstance(value, dict) else {}
