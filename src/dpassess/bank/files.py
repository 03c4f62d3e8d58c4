"""A bank folder on disk -> the paths of its files (bank file, item files, statistics records),
without reading them: what the loader parses and what a cache key covers.

Light on purpose (the standard library only), so a command can tell whether anything changed
before it imports the model.
"""

from __future__ import annotations

import os
from pathlib import Path

from dpassess.diagnostics import UsageError

BANK_FILE = "bank.yaml"
ITEM_SUFFIXES = (".yaml", ".yml")
#: The folder of a bank that holds its recorded item statistics (`dpassess stats --write`).
HISTORY_DIR = "stats"


def find_banks(path: str | os.PathLike[str]) -> list[Path]:
    """Bank folders at or below `path` (folders holding a bank.yaml), sorted."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{p}: no such file or directory")
    if p.is_file():
        if p.name == BANK_FILE:
            return [p.parent]
        raise UsageError(f"{p}: expected a bank folder (one that holds {BANK_FILE})")
    if (p / BANK_FILE).is_file():
        return [p]
    found = sorted(b.parent for b in p.rglob(BANK_FILE) if b.is_file())
    if not found:
        raise UsageError(f"{p}: no {BANK_FILE} found at or below this folder")
    return found


def item_files(root: Path) -> list[str]:
    """The item (and stimulus) files of the bank at `root`, in authoring order: every `*.yaml`
    and `*.yml` below it but `bank.yaml` and hidden files and folders, sorted by path."""
    files: list[str] = []
    for dirpath, dirnames, filenames in os.walk(str(root)):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            if name.endswith(ITEM_SUFFIXES) and not name.startswith("."):
                if name == BANK_FILE and dirpath == str(root):
                    continue
                files.append(os.path.join(dirpath, name))
        # a directory whose name looks like an item file, and a link to a folder (which the
        # walk does not follow), are reported, not skipped
        for d in dirnames:
            if d.endswith(ITEM_SUFFIXES) or os.path.islink(os.path.join(dirpath, d)):
                files.append(os.path.join(dirpath, d))
    start = len(str(root)) + 1
    return sorted(files, key=lambda p: p[start:].split(os.sep))


def record_files(root: Path) -> list[Path]:
    """The statistics record files of the bank at `root`, by name (date first), regular files
    only."""
    folder = root / HISTORY_DIR
    if folder.is_symlink() or not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.json")
                  if not p.name.startswith(".") and p.is_file() and not p.is_symlink())


def bank_files(root: Path) -> list[str]:
    """Every file below the bank folder `root` but hidden ones (and those in hidden folders),
    sorted: all that an export or an assembled form can depend on (the bank file, the items,
    their images and linked files, the statistics records)."""
    files: list[str] = []
    for dirpath, dirnames, filenames in os.walk(str(root)):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        files += (os.path.join(dirpath, n) for n in filenames if not n.startswith("."))
    return sorted(files)
