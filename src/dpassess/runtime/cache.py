"""A content-hash cache for `dpassess lint` and `dpassess build`, in `.dpassess_cache/` (like
ruff's).

Lint keeps three files per bank folder (`dpassess.lint.incremental`):

- `<bank>.items`: a typed record per item file (`dpassess.runtime.records`): its content hash,
  its item-rule findings and what the bank rules read of it. After an edit only the changed
  files are parsed and checked, and the bank rules run on the stored features of the others.
- `<bank>.lint`: the findings of the whole bank, keyed by one hash over every item file's
  content hash, the bank file, the lint settings and dpassess itself. When nothing changed,
  re-linting reads and hashes the files and returns these findings: no parsing, no rules.
- `<bank>.models`: each item file's parsed model as plain data, for the commands that export
  the bank.

Every key includes a salt: a fingerprint of the installed dpassess source files (size and mtime
of each, so an edited rule in a development install invalidates too), the bank file's bytes and
the caller's settings (lint's: the rules, their thresholds and the dpassess version). A cache file that is missing, unreadable, corrupted or
written for another salt is ignored and rewritten: the cache never changes a result and never
crashes a run. Writes go to a temporary file that is then renamed, so a reader never sees half a
file.

A caller that keeps bytes of its own (the export fragments, `dpassess.export.runner`) stores
them with `store_bytes`: the file holds the salt and a SHA-256 of the bytes, and `load_bytes`
returns them only when both match (a damaged file is a miss).

The cache never runs what it did not write. Every file is authenticated with a secret key
(HMAC-SHA256) before a byte of it is read: the key lives outside the project, in the user's
cache folder (`$XDG_CACHE_HOME/dpassess/cache-key`, else `~/.cache/dpassess/cache-key`; 32 random
bytes, made on first use, mode 0600, read only when it is the user's own and private). A file
planted in the cache folder (committed to a repository, restored by CI from another branch) does
not carry a valid tag and is a miss; without a usable key the cache is off. A cache folder that
git tracks is refused outright (`Cache.notice` says why, once): such a folder is written by
whoever can push, and its files would churn in every commit. The tag is one gate that every
layer (lint's records, findings and models, the replayed report, build's keys, the export
fragments) passes before its bytes are read, and it costs little (benchmarks/cache_formats.py:
the HMAC-SHA256 of 5,000 items' pickles, 14 MB, takes about 18 ms). Every layer is moreover
plain data (`store_plain`, `load_plain`) or bytes (`store_bytes`, `load_bytes`): plain data is
read by an unpickler that refuses every class and function, so even an authentic file cannot
make reading it run code.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import pickle
import stat
from functools import lru_cache
from pathlib import Path

from dpassess.diagnostics import UsageError
from dpassess.runtime import records
from dpassess.runtime.files import atomic_write, discard, replace_from_temp, temp_beside

#: Folder used when neither --cache-dir nor DPASSESS_CACHE_DIR says otherwise.
DEFAULT_DIR = ".dpassess_cache"
ENV_VAR = "DPASSESS_CACHE_DIR"
#: Bumped whenever the layout of the cache files changes (2: findings are Diagnostics; 3: content
#: hashes are SHA-256; 4: every file authenticated with the user's key).
FORMAT = 4
#: The file, in the user's cache folder, that holds the key the cache files are authenticated with.
KEY_FILE = "cache-key"
#: Length of the key and of a file's tag (HMAC-SHA256).
_KEY_BYTES = 32
_TAG = 32


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


def salt(bank_file: bytes, settings: object) -> bytes:
    """What every key of a bank depends on besides its item files: the bank file and `settings`
    (whatever else can change the stored values, as its repr)."""
    h = hashlib.blake2b(digest_size=16)
    for part in (str(FORMAT), _source_fingerprint(), repr(settings)):
        h.update(part.encode("utf-8") + b"\0")
    h.update(digest(bank_file))
    return h.digest()


class Cache:
    """The cache of one folder: its loads and stores never raise on bad files or unwritable
    folders.

    Nothing is read or written when the user's key cannot be had or git tracks the folder:
    `notice` then says why (for the command line to show once)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self._secret: bytes | None = None
        self._checked = False
        #: Why the cache is off (a tracked folder, an unusable key), or None.
        self.notice: str | None = None

    def _key(self) -> bytes | None:
        """The user's key, or None when the cache is off (decided once per object)."""
        if not self._checked:
            self._checked = True
            key, self.notice = user_key()
            if key is not None and tracked_by_git(self.root, key):
                self.notice = (f"the cache folder {self.root} holds files tracked by git; it is "
                               "not read or written (delete it from the repository, or choose "
                               "another with --cache-dir); working without a cache")
            else:
                self._secret = key
        return self._secret

    def _path(self, bank_root: str, kind: str) -> Path:
        name = hashlib.blake2b(os.path.abspath(bank_root).encode("utf-8"), digest_size=12).hexdigest()
        return self.root / f"{name}.{kind}"

    def load_plain(self, bank_root: str, kind: str, salt: bytes) -> object | None:
        """The plain data `store_plain` stored for this bank and salt, or None (missing,
        corrupted, stale, or not written with the user's key: nothing is read before its tag is
        checked).
        Read with an unpickler that refuses every class and function: even an authentic file
        cannot make reading it run code (`dpassess.runtime.records`)."""
        body = self.load_bytes(bank_root, kind, salt)
        if body is None:
            return None
        try:
            return records.loads(body)
        except Exception:  # a class named, or another Python's stream: a miss
            return None

    def store_plain(self, bank_root: str, kind: str, salt: bytes, value: object) -> None:
        """Store `value`, plain data only (tuples, lists, dicts, str, bytes, numbers, None),
        for `load_plain`."""
        with contextlib.suppress(pickle.PicklingError, TypeError):
            self.store_bytes(bank_root, kind, salt, records.dumps(value))

    def load_bytes(self, bank_root: str, kind: str, salt: bytes) -> memoryview | None:
        """The bytes `store_bytes` stored for this bank and salt (a view of the file read, not
        a copy), or None (missing, damaged, stale, not written with the user's key)."""
        key = self._key()
        if key is None:
            return None
        path = self._path(bank_root, kind)
        head = _head(b"bytes", path.name, salt)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        body = memoryview(data)[len(head) + _TAG:]
        if not (data.startswith(head) and hmac.compare_digest(
                _tag(key, head, body), data[len(head):len(head) + _TAG])):
            return None
        return body

    def store_bytes(self, bank_root: str, kind: str, salt: bytes, data: bytes) -> None:
        """Store `data` for `load_bytes`, written in pieces (never copied whole)."""
        key = self._key()
        if key is None:
            return
        tmp = None
        with contextlib.suppress(OSError, UsageError):
            path = self._folder() / self._path(bank_root, kind).name
            head = _head(b"bytes", path.name, salt)
            tmp = temp_beside(path)
            with open(tmp, "wb") as fh:
                fh.write(head + _tag(key, head, data))
                fh.write(data)
            replace_from_temp(tmp, path)
            tmp = None
        if tmp is not None:
            discard(tmp)

    def _folder(self) -> Path:
        """The cache folder, made when missing. Raises OSError."""
        if not self.root.exists():
            self.root.mkdir(parents=True, exist_ok=True)
            # like ruff: the cache never shows up in `git status`
            (self.root / ".gitignore").write_text("*\n", encoding="utf-8")
        return self.root


def _head(what: bytes, name: str, salt: bytes) -> bytes:
    """What a cache file starts with: what it holds, the cache format, its own name (a file
    copied to another name is a miss) and the salt."""
    tail = name.encode("utf-8", "surrogateescape") + b"\0" + salt
    return b"dpassess cache %s %d %d\0" % (what, FORMAT, len(tail)) + tail


def _tag(key: bytes, head: bytes, body: bytes | memoryview) -> bytes:
    """The HMAC-SHA256 of a file's head and body under the user's key."""
    mac = hmac.new(key, head, hashlib.sha256)
    mac.update(body)
    return mac.digest()


def user_cache_folder() -> Path:
    """`$XDG_CACHE_HOME/dpassess` (when set to an absolute path), else `~/.cache/dpassess`."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "dpassess"


def user_key() -> tuple[bytes | None, str | None]:
    """The key the cache files are authenticated with (made on first use), or None and why not
    (a folder that cannot be written is no reason to say anything: the cache is just off)."""
    path = user_cache_folder() / KEY_FILE
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    except OSError:
        return None, None
    import secrets

    tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(_KEY_BYTES))
        try:
            os.link(tmp, path)  # never replaces a key another process made meanwhile
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not path.exists():
                os.replace(tmp, path)
        return _read_key(path)
    except OSError:
        return None, None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _read_key(path: Path) -> tuple[bytes | None, str | None]:
    """The key in `path` when it is a private file of the right size owned by this user.
    Raises OSError (FileNotFoundError when there is none)."""
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        key = fh.read(_KEY_BYTES + 1)
    getuid = getattr(os, "getuid", None)
    if not stat.S_ISREG(st.st_mode) or len(key) != _KEY_BYTES:
        return None, f"the cache key {path} is damaged; delete it to get a new one; working without a cache"
    if getuid is not None and (st.st_uid != getuid() or st.st_mode & 0o077):
        return None, (f"the cache key {path} is not private to you (it must be yours, mode "
                      "0600); delete it to get a new one; working without a cache")
    return key, None


#: The file in the cache folder that remembers, for one state of git's index, that git tracks
#: nothing in the folder (authenticated like every cache file): a warm run need not ask git.
_GIT_CHECK = "git-check"


def tracked_by_git(folder: Path, key: bytes) -> bool:
    """Whether git tracks a file in `folder` (False when there is no such folder, no repository
    around it, or no git). An answer of no is remembered in the folder for as long as the
    repository's index is unchanged (its size, mtime and inode; `git add` changes it)."""
    if not folder.is_dir():
        return False
    here = folder.resolve()
    dot_git = next((p / ".git" for p in (here, *here.parents) if (p / ".git").exists()), None)
    if dot_git is None:
        return False
    index = _index_stamp(dot_git)
    memo = folder / _GIT_CHECK
    expected = None
    if index is not None:
        expected = hmac.new(key, f"{_GIT_CHECK}\0{here}\0{index}".encode("utf-8", "surrogateescape"),
                            hashlib.sha256).digest()
        with contextlib.suppress(OSError):
            if hmac.compare_digest(memo.read_bytes(), expected):
                return False
    import subprocess

    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "ls-files", "-z", "--", "."], stdin=subprocess.DEVNULL,
            capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):  # no git: nothing to ask
        return False
    tracked = done.returncode == 0 and bool(done.stdout)
    if not tracked and done.returncode == 0 and expected is not None:
        with contextlib.suppress(OSError, UsageError):
            atomic_write(memo, expected)
    return tracked


def _index_stamp(dot_git: Path) -> str | None:
    """Size, mtime and inode of the index of the repository whose `.git` is `dot_git` (a folder,
    or a worktree's file naming its git folder), or None when it cannot be found."""
    try:
        if dot_git.is_file():
            line = dot_git.read_text(encoding="utf-8").strip()
            if not line.startswith("gitdir:"):
                return None
            git_dir = Path(line[len("gitdir:"):].strip())
            if not git_dir.is_absolute():
                git_dir = dot_git.parent / git_dir
        else:
            git_dir = dot_git
        st = os.stat(git_dir / "index")
    except (OSError, UnicodeDecodeError):
        return None
    return f"{git_dir / 'index'}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
