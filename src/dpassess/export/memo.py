"""An export file's per-item fragments -> reused by the next export of that file: the bytes each
item contributed (QTI: its zip member; Moodle XML: its `<question>`; GIFT: its block) and its
warnings, keyed by everything they depend on.

An exporter given a `Fragments` asks it for each item's bytes before building them: `key(item,
*context)` hashes the item's model (so an edit to a comment of its YAML file changes nothing)
with what the exporter says the bytes read besides (the format, the languages, the options, the
collection's id, the item's source path and stimulus, ...); `get(key)` is the bytes and warnings
stored under that key, or None; `put(key, data, warnings)` records what was built. An item whose
bytes depend on other files (an image it embeds or packs) is never put: those files can change
with no change to the item. `entries()` is what was used or built this time, to store for the
next export (`dpassess.export.runner` keeps it in `dpassess.runtime.cache`, one cache file per
export file); entries of items no longer exported are dropped.

Each entry is sealed with a hash over its key and its bytes: an entry that is damaged, tampered
with or moved to another key is a miss, never different bytes.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from typing import Any

from dpassess.diagnostics import Diagnostic
from dpassess.model import Item, Stimulus
from dpassess.runtime.cache import digest

#: A stored fragment: its seal, its bytes, its warnings pickled (b"" for none).
Entry = tuple[bytes, bytes, bytes]


class ItemDigests:
    """The hash of each item's model, computed once per item object (shared by the fragments
    of every file one write exports; it holds the items while it lives)."""

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
    """The fragments of one export file: those `stored` by its last export (what `entries()`
    returned then; anything else is taken as empty) and those used or built this time."""

    def __init__(self, stored: object = None, digests: ItemDigests | None = None) -> None:
        self._stored: Mapping[bytes, Any] = stored if isinstance(stored, dict) else {}
        self._used: dict[bytes, Entry] = {}
        self._digest = digests if digests is not None else ItemDigests()
        self._hit: set[bytes] = set()
        self._missed: set[bytes] = set()

    @property
    def hits(self) -> int:
        """How many fragments were found (each key once)."""
        return len(self._hit)

    @property
    def misses(self) -> int:
        """How many fragments were asked for and not found (each key once)."""
        return len(self._missed)

    def key(self, item: Item, *context: object) -> bytes:
        """The key of `item`'s fragment in a file whose bytes for it also read `context`
        (values whose repr says all they hold: strings, numbers, flags, tuples of them)."""
        return digest(self._digest(item) + repr(context).encode("utf-8", "surrogateescape"))

    def stimulus(self, stimulus: Stimulus | None) -> bytes | None:
        """A stimulus as part of a key's context (None: the item has none or it is missing)."""
        return None if stimulus is None else self._digest(stimulus)

    def get(self, key: bytes) -> tuple[bytes, list[Diagnostic]] | None:
        """The bytes and warnings stored under `key`, or None (not stored, or not intact)."""
        entry = self._used.get(key) or self._stored.get(key)
        if not (isinstance(entry, tuple) and len(entry) == 3
                and all(isinstance(part, bytes) for part in entry)
                and entry[0] == _seal(key, entry[1], entry[2])):
            self._missed.add(key)
            return None
        try:
            warnings = pickle.loads(entry[2]) if entry[2] else []
        except Exception:  # sealed but unreadable (another Python): a miss
            self._missed.add(key)
            return None
        if not (isinstance(warnings, list) and all(isinstance(w, Diagnostic) for w in warnings)):
            self._missed.add(key)
            return None
        self._used[key] = entry
        self._hit.add(key)
        return entry[1], warnings

    def put(self, key: bytes, data: bytes, warnings: list[Diagnostic]) -> None:
        """Record the bytes and warnings built for `key`."""
        blob = pickle.dumps(warnings, protocol=pickle.HIGHEST_PROTOCOL) if warnings else b""
        self._used[key] = (_seal(key, data, blob), data, blob)

    def entries(self) -> dict[bytes, Entry]:
        """The fragments used or built since this object was made: what to store."""
        return self._used


def _seal(key: bytes, data: bytes, blob: bytes) -> bytes:
    return digest(b"%d\0%d\0" % (len(key), len(data)) + key + data + blob)
