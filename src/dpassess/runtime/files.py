"""Writing files: never half-written (temporary file in the same folder, then rename).

Temporary files are named `.<file name>.<pid>-<random>.tmp` beside their target. A run removes
its own on every exception and on every signal the CLI catches (it turns them into
KeyboardInterrupt); those of a run that was killed outright (SIGKILL, a power cut) are removed
by the next run that writes into the same folder, once their process is gone.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from dpassess.diagnostics import UsageError

_UMASK = os.umask(0)
os.umask(_UMASK)


#: What a file's stat says of its content without reading it: size, mtime (ns) and inode (a
#: write changes the mtime; a replacing rename, the inode).
Stamp = tuple[int, int, int]


def stamp(st: os.stat_result) -> Stamp:
    return st.st_size, st.st_mtime_ns, st.st_ino


def unchanged(stamps: Mapping[str, object]) -> bool:
    """Whether every file of `stamps` is still there with the stamp recorded for it."""
    try:
        return all(stamp(os.stat(path)) == known for path, known in stamps.items())
    except (OSError, TypeError, ValueError):
        return False


#: Folders already swept of dead runs' temporary files by this process.
_SWEPT: set[str] = set()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process, or no permission to ask: leave its files alone
        return True
    return True


def sweep(folder: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files left in `folder` by runs whose process is gone (once per
    folder and process); returns what was removed. Never raises."""
    key = os.path.abspath(folder)
    if key in _SWEPT:
        return []
    _SWEPT.add(key)
    removed: list[Path] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        if not (name.startswith(".") and name.endswith(".tmp")):
            continue
        pid_part = name[:-4].rpartition(".")[2].partition("-")[0]
        if pid_part.isdigit() and int(pid_part) != os.getpid() and not _alive(int(pid_part)):
            path = Path(folder) / name
            with contextlib.suppress(OSError):
                if path.is_file() and not path.is_symlink():
                    path.unlink()
                    removed.append(path)
    return removed


def _mkstemp(target: Path) -> tuple[int, str]:
    """A new temporary file beside `target` (named with this process's pid), after sweeping
    the folder of dead runs' temporary files."""
    sweep(target.parent)
    return tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}-", suffix=".tmp",
                            dir=target.parent)


def _cannot_write(target: Path, exc: OSError) -> UsageError:
    """The error for `target`; a file where a folder must be (mkdir says "File exists") is named."""
    if isinstance(exc, FileExistsError | NotADirectoryError):
        for parent in target.parents:
            if parent.exists():
                if not parent.is_dir():
                    return UsageError(f"{target}: cannot write: {parent} is a file, not a folder")
                break
    return UsageError(f"{target}: cannot write: {exc.strerror or exc}")


def atomic_write(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to `path` atomically; a failure leaves any previous file untouched.

    Raises UsageError naming the path when it cannot be written (exit 2 in the CLI).
    """
    target = Path(path)
    tmp = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_dir():
            raise UsageError(f"{target}: is a directory; give a file name to write")
        fd, tmp = _mkstemp(target)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise _cannot_write(target, exc) from exc
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def temp_beside(path: str | os.PathLike[str]) -> Path:
    """An empty temporary file in `path`'s folder (created as needed), for `replace_from_temp`.

    Raises UsageError naming `path` when it is a directory or cannot be written beside."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_dir():
            raise UsageError(f"{target}: is a directory; give a file name to write")
        fd, tmp = _mkstemp(target)
        os.close(fd)
    except OSError as exc:
        raise _cannot_write(target, exc) from exc
    return Path(tmp)


def replace_from_temp(tmp: str | os.PathLike[str], path: str | os.PathLike[str]) -> None:
    """Give `tmp` (from `temp_beside(path)`) the usual file mode and rename it to `path`, atomically.
    Raises UsageError naming `path`; `tmp` is then left for the caller to `discard`."""
    try:
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc.strerror or exc}") from exc


def discard(tmp: str | os.PathLike[str]) -> None:
    """Remove a temporary file if it is still there."""
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def missing_dirs(paths: Sequence[Path]) -> list[Path]:
    """The folders the paths need that do not exist yet, deepest first."""
    missing: set[Path] = set()
    for p in paths:
        folder = p.parent
        while not folder.exists() and folder != folder.parent:
            missing.add(folder)
            folder = folder.parent
    return sorted(missing, key=lambda f: len(f.parts), reverse=True)


@contextlib.contextmanager
def staged(paths: Sequence[Path]) -> Iterator[list[Path]]:
    """Write all of `paths` or none: yields an empty temporary file beside each (same order)
    for the caller to fill and then rename with `replace_from_temp`. If the block raises, every
    temporary file, every path that did not exist before (a rename may have put it there) and
    every folder created for them (when left empty) are removed. A file that replaced an earlier
    one before the failure stays (complete): renames are atomic one by one, not together."""
    created = missing_dirs(paths)
    new = [p for p in paths if not os.path.lexists(p)]
    temps: list[Path] = []
    try:
        for path in paths:
            temps.append(temp_beside(path))
        yield temps
    except BaseException:
        for tmp in [*temps, *new]:
            discard(tmp)
        for folder in created:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty
        raise


def write_all(files: Sequence[tuple[Path, bytes]]) -> None:
    """Write every `(path, data)`, or none of them (through `staged`: a failure leaves no new
    file, no temporary file and no new empty folder; a failing rename, only when the folder
    changes during the call, leaves the files it had already replaced, each complete). Raises
    UsageError naming the path."""
    paths = [p for p, _ in files]
    with staged(paths) as temps:
        for (path, data), tmp in zip(files, temps, strict=True):
            _fill(tmp, data, path)
        for tmp, path in zip(temps, paths, strict=True):
            replace_from_temp(tmp, path)


def _fill(tmp: Path, data: bytes, path: Path) -> None:
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
    except OSError as exc:
        raise _cannot_write(path, exc) from exc


def refuse_inside(target: str | os.PathLike[str], folders: Iterable[str | os.PathLike[str]],
                  option: str) -> None:
    """UsageError when `target` (an output file or folder, given as `option`) is one of
    `folders` (the banks a command reads) or inside one: an export written there would
    overwrite the bank's own files, or be read back as part of it."""
    where = Path(os.path.realpath(target))
    for folder in folders:
        root = Path(os.path.realpath(folder))
        if where == root or root in where.parents:
            raise UsageError(f"{option} {target}: inside the bank {folder}, which this command "
                             "reads; write the output outside the bank's folder")
