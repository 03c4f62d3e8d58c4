"""`dpassess lint` as a job: bank folders and settings -> the report and whether it fails,
replayed from the cache when none of its inputs changed.

A report's key covers everything it depends on: the paths as given and the working folder (the
report shows paths relative to it), the format, the settings given and the settings file that
applies (its path and bytes), every bank's file, item files and statistics records (path and
content hash), and dpassess itself (its version and a fingerprint of its sources, through
`dpassess.runtime.cache.salt`). On a hit the stored report is returned without importing the
model or the rules: a warm lint of a small bank costs little more than starting Python. On a
miss the banks are loaded and linted through the lint cache (`dpassess.lint.incremental`, which
re-checks only the files that changed) and the report is stored as plain data (a damaged entry
is a miss), unless an input changed while lint ran.

    from dpassess.app.lint import LintOptions, lint_report
    from dpassess.runtime.cache import Cache
    report = lint_report([Path("items")], LintOptions(fmt="sarif"), Cache(".dpassess_cache"))
    print(report.text, end=""); exit(1 if report.failing else 0)
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from dpassess import __version__
from dpassess.bank.files import BANK_FILE, find_banks, item_files, record_files
from dpassess.runtime.cache import Cache, digest, salt
from dpassess.runtime.configfile import find_config
from dpassess.runtime.files import Stamp, stamp, unchanged

#: The layout of a stored report (bumped when it changes; 2: plain data, read without
#: unpickling any class).
REPORT_FORMAT = 2


@dataclass(frozen=True)
class LintOptions:
    """What a command line sets: the report format and the settings over the file's (see
    `dpassess.lint.LintConfig.override`), and the settings file to read instead of the
    nearest one."""

    fmt: str = "text"
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: str | None = None
    config: Path | None = None


@dataclass(frozen=True)
class LintReport:
    """The report as text in the chosen format, and whether a finding is at the fail level."""

    text: str
    failing: bool
    #: True when it came from the cache (nothing was loaded or linted).
    replayed: bool = False


def lint_report(
    paths: Sequence[Path],
    options: LintOptions = LintOptions(),
    cache: Cache | None = None,
    *,
    working: Callable[[], AbstractContextManager[object]] = nullcontext,
    jobs: int | None = None,
) -> LintReport:
    """Lint every bank at or below `paths` (BankLoadError when one does not load, UsageError
    for bad settings, as `dpassess.lint.incremental.lint_paths`). `working()` wraps the part
    that loads and lints (a caller's progress display): it is not entered on a replay."""
    digests: dict[str, bytes] = {}
    key, seen = _key(paths, options, digests) if cache is not None else (None, {})
    where = "\0".join(str(p) for p in paths)
    if cache is not None and key is not None:
        stored = cache.load_plain(where, "report", key)
        if (isinstance(stored, tuple) and len(stored) == 2 and isinstance(stored[0], str)
                and isinstance(stored[1], bool)):
            return LintReport(stored[0], stored[1], replayed=True)

    from dpassess.lint import failing, format_findings, load_config
    from dpassess.lint.incremental import lint_paths

    settings = load_config(paths[0], options.config).override(
        options.select, options.ignore, options.fail_on)
    with working():
        # the files' content hashes, as read for the key: lint does not read them again
        findings = lint_paths(paths, settings, cache, jobs=jobs, digests=digests)
    report = LintReport(format_findings(findings, options.fmt), failing(findings, settings.fail_on))
    if cache is not None and key is not None and unchanged(seen):
        cache.store_plain(where, "report", key, (report.text, report.failing))
    return report


def _key(paths: Sequence[Path], options: LintOptions, digests: dict[str, bytes]
         ) -> tuple[bytes | None, dict[str, Stamp]]:
    """The hash of every input of the report, or None when one cannot be read (no replay:
    the loader reports it); and each file read with its size, mtime and inode then. The
    content hash of each bank's files goes into `digests`."""
    found = find_config(paths[0], options.config)
    h = hashlib.blake2b(digest_size=16)
    files: dict[str, Stamp] = {}

    def add(*parts: str | bytes) -> None:
        for part in parts:
            h.update(part if isinstance(part, bytes) else part.encode("utf-8", "surrogateescape"))
            h.update(b"\0")

    add(str(REPORT_FORMAT), __version__, os.getcwd(), repr(options))
    if found is not None:
        settings_file = _read(found.path, files)
        if settings_file is None:
            return None, files
        add("settings", str(found.path), digest(settings_file))
    seen: set[Path] = set()
    for p in paths:
        add("path", str(p))
        for root in find_banks(p):
            if root.resolve() in seen:
                continue
            seen.add(root.resolve())
            listed = [os.path.join(root, BANK_FILE), *item_files(root),
                      *map(str, record_files(root))]
            add("bank", str(root))
            for f in listed:
                data = _read(f, files)
                if data is None:
                    return None, files
                digests[f] = digest(data)
                add(f, digests[f])
    return salt(b"", h.digest()), files


def _read(path: str | Path, files: dict[str, Stamp]) -> bytes | None:
    """The bytes of `path` (None when it cannot be read), its stamp recorded in `files`: a
    report is stored only if every file read for its key is still as it was when read (a file
    added meanwhile is harmless: the next key lists it)."""
    try:
        with open(path, "rb") as fh:
            files[str(path)] = stamp(os.fstat(fh.fileno()))
            return fh.read()
    except OSError:
        return None
