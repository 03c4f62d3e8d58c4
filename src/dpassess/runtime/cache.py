"""A content-hash cache for `dpassess lint`, in `.dpassess_cache/` (like ruff's).

Two levels, one pair of files per bank folder:

- `<bank>.items`: every item file's parsed `Item` and its item-rule findings, keyed by the file's
  content hash. After an edit only the changed files are parsed and checked again; bank-wide
  rules always run again (they read every item).
- `<bank>.lint`: the findings of the whole bank, keyed by one hash over every item file's
  content hash, the bank file, the lint settings and dpassess itself. When nothing changed,
  re-linting reads and hashes the files and returns these findings: no parsing, no rules.

Every key includes a salt: a fingerprint of the installed dpassess source files (size and mtime
of each, so an edited rule in a development install invalidates too), the bank file's bytes and
the caller's settings (lint's: the rules, their thresholds and the dpassess version). A cache file that is missing, unreadable, corrupted or
written for another salt is ignored and rewritten: the cache never changes a result and never
crashes a run. Writes go through `dpassess.runtime.files.atomic_write`, so a reader never sees half a file.

A caller that keeps bytes of its own (the export fragments, `dpassess.export.memo`) stores
them with `store_bytes`: the file holds the salt and a SHA-256 of the bytes, and `load_bytes`
returns them only when both match (a damaged file is a miss).

The files are pickles: like Python's own `__pycache__`, the cache folder is trusted as much as
the project it sits in (anyone who can write it can write the code that runs).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
from functools import lru_cache
from pathlib import Path
from typing import Any

from dpassess.diagnostics import UsageError
from dpassess.runtime.files import atomic_write, discard, replace_from_temp, temp_beside

#: Folder used when neither --cache-dir nor DPASSESS_CACHE_DIR says otherwise.
DEFAULT_DIR = ".dpassess_cache"
ENV_VAR = "DPASSESS_CACHE_DIR"
#: Bumped whenever the layout of the cache files changes (2: findings are Diagnostics; 3: content
#: hashes are SHA-256).
FORMAT = 3


def cache_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """`explicit`, else $DPASSESS_CACHE_DIR, else `.dpassess_cache` in the working folder."""
    if explicit is not None:
        return Path(explicit)
    env = os.environ.get(ENV_VAR)
    return Path(env) if env else Path(DEFAULT_DIR)


def digest(data: bytes) -> bytes:
    """The 16-byte content hash of `data` (SHA-256, which current x86 and ARM processors compute
    in hardware: two to three times BLAKE2's speed there, on the item files and the outputs)."""
    return hashlib.sha256(data).digest()[:16]


#: The installed dpassess package (this file is dpassess/runtime/cache.py).
PACKAGE = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=1)
def _source_fingerprint() -> str:
    """The fingerprint of the installed dpassess sources (computed once per process)."""
    return fingerprint(PACKAGE)


def fingerprint(root: Path) -> str:
    """Size and mtime of every Python source file below `root`."""
    h = hashlib.blake2b(digest_size=16)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                st = os.stat(os.path.join(dirpath, name))
                h.update(f"{dirpath}/{name}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def seal(value: object) -> tuple[bytes, bytes]:
    """`value` pickled, with the hash of those bytes: what `unseal` verifies."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return digest(data), data


def unseal(sealed: object) -> object | None:
    """The value `seal` stored, or None when the bytes are not the ones hashed (a damaged or
    tampered entry is a miss, never a different result)."""
    if not (isinstance(sealed, tuple) and len(sealed) == 2 and isinstance(sealed[0], bytes)
            and isinstance(sealed[1], bytes) and digest(sealed[1]) == sealed[0]):
        return None
    try:
        value: object = pickle.loads(sealed[1])
        return value
    except Exception:  # hashed but unreadable (another Python): a miss
        return None


def salt(bank_file: bytes, settings: object) -> bytes:
    """What every key of a bank depends on besides its item files: the bank file and `settings`
    (whatever else can change the stored values, as its repr)."""
    h = hashlib.blake2b(digest_size=16)
    for part in (str(FORMAT), _source_fingerprint(), repr(settings)):
        h.update(part.encode("utf-8") + b"\0")
    h.update(digest(bank_file))
    return h.digest()


class Cache:
    """The cache of one folder; `load`/`store` never raise on bad files or unwritable folders."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def _path(self, bank_root: str, kind: str) -> Path:
        name = hashlib.blake2b(os.path.abspath(bank_root).encode("utf-8"), digest_size=12).hexdigest()
        return self.root / f"{name}.{kind}"

    def load(self, bank_root: str, kind: str, salt: bytes) -> Any:
        """The value stored for this bank and salt, or None (missing, corrupted, stale)."""
        path = self._path(bank_root, kind)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            stored = pickle.loads(data)
            if (
                isinstance(stored, tuple) and len(stored) == 3 and stored[0] == FORMAT
                and stored[1] == salt
            ):
                return stored[2]
        except Exception:  # a bad cache file is a miss, never an error
            return None
        return None

    def store(self, bank_root: str, kind: str, salt: bytes, value: Any) -> None:
        with contextlib.suppress(pickle.PicklingError, TypeError):
            self._write(bank_root, kind,
                        pickle.dumps((FORMAT, salt, value), protocol=pickle.HIGHEST_PROTOCOL))

    def load_bytes(self, bank_root: str, kind: str, salt: bytes) -> memoryview | None:
        """The bytes `store_bytes` stored for this bank and salt (a view of the file read, not
        a copy), or None (missing, damaged, stale)."""
        head = _bytes_head(salt)
        try:
            with open(self._path(bank_root, kind), "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        body = memoryview(data)[len(head) + _CHECK:]
        if (not data.startswith(head)
                or hashlib.sha256(body).digest() != data[len(head):len(head) + _CHECK]):
            return None
        return body

    def store_bytes(self, bank_root: str, kind: str, salt: bytes, data: bytes) -> None:
        """Store `data` for `load_bytes`, written in pieces (never copied whole)."""
        tmp = None
        with contextlib.suppress(OSError, UsageError):
            path = self._folder() / self._path(bank_root, kind).name
            tmp = temp_beside(path)
            with open(tmp, "wb") as fh:
                fh.write(_bytes_head(salt) + hashlib.sha256(data).digest())
                fh.write(data)
            replace_from_temp(tmp, path)
            tmp = None
        if tmp is not None:
            discard(tmp)

    def _write(self, bank_root: str, kind: str, data: bytes) -> None:
        with contextlib.suppress(OSError, UsageError):
            self._folder()
            atomic_write(self._path(bank_root, kind), data)

    def _folder(self) -> Path:
        """The cache folder, made when missing. Raises OSError."""
        if not self.root.exists():
            self.root.mkdir(parents=True, exist_ok=True)
            # like ruff: the cache never shows up in `git status`
            (self.root / ".gitignore").write_text("*\n", encoding="utf-8")
        return self.root


#: Length of the SHA-256 of the bytes a `store_bytes` file holds after its head.
_CHECK = 32


def _bytes_head(salt: bytes) -> bytes:
    """What a `store_bytes` file starts with: what it is, the cache format and the salt."""
    return b"dpassess cache bytes %d %d\0" % (FORMAT, len(salt)) + salt
