"""Load and lint bank folders through the content-hash cache (`dpassess.runtime.cache`).

Same findings and the same load errors as `lint_banks(load_banks(paths), config)`, which is what
runs when no cache is given; the cache only saves work (see `dpassess.runtime.cache` for the keys).
`load_and_lint` also returns the loaded banks (for `dpassess build`, which exports them), so a
bank is parsed once per run, and not at all when its items are in the cache.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

import dpassess
from dpassess.bank.load import BANK_FILE, find_banks, item_files, load_bank, load_banks
from dpassess.diagnostics import BankLoadError, Diagnostic
from dpassess.lint.config import LintConfig
from dpassess.lint.engine import ItemResult, lint_banks
from dpassess.model import Bank, Item
from dpassess.runtime.cache import Cache, digest, salt
from dpassess.runtime.cache import seal as _seal
from dpassess.runtime.cache import unseal as _unseal
from dpassess.stats.history import record_files

#: The layout of what is stored (3: each value sealed with its hash; item results hold the
#: indices of the suppressions used).
CACHE_FORMAT = 3


def _settings(config: LintConfig, root: Path) -> tuple[object, ...]:
    """Everything in the lint settings that can change a finding, the bank's spelling (findings
    carry paths as given) and the dpassess version."""
    return (
        tuple(r.code for r in config.rules()), config.min_options, config.key_longest_ratio,
        str(root), dpassess.__version__, CACHE_FORMAT,
    )


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def lint_paths(
    paths: Iterable[str | os.PathLike[str]],
    config: LintConfig,
    cache: Cache | None = None,
    *,
    jobs: int | None = None,
) -> list[Diagnostic]:
    """Load every bank at or below `paths` and lint them; raises BankLoadError like load_banks."""
    return _run(paths, config, cache, jobs=jobs, want_banks=False)[1]


def load_and_lint(
    paths: Iterable[str | os.PathLike[str]],
    config: LintConfig,
    cache: Cache | None = None,
    *,
    jobs: int | None = None,
) -> tuple[list[Bank], list[Diagnostic]]:
    """`(load_banks(paths), lint_paths(paths, config, cache))`, parsing each file at most once:
    items whose file is unchanged come from the cache."""
    return _run(paths, config, cache, jobs=jobs, want_banks=True)


def _run(
    paths: Iterable[str | os.PathLike[str]],
    config: LintConfig,
    cache: Cache | None,
    *,
    jobs: int | None,
    want_banks: bool,
) -> tuple[list[Bank], list[Diagnostic]]:
    if cache is None:
        loaded = load_banks(paths)
        return loaded, lint_banks(loaded, config, jobs=jobs)
    roots: list[Path] = []
    seen: set[Path] = set()
    for p in paths:
        for root in find_banks(p):
            if root.resolve() not in seen:
                seen.add(root.resolve())
                roots.append(root)

    out: list[Diagnostic] = []
    diags: list[Diagnostic] = []
    banks: list[Bank] = []
    todo: list[tuple[Bank, str, bytes, bytes, dict[str, ItemResult], dict[str, bytes],
                     dict[str, tuple[object, Item]]]] = []
    for root in roots:
        key_root = str(root)
        bank_bytes = _read(str(root / BANK_FILE))
        files = item_files(root)
        contents = {f: b for f in files if (b := _read(f)) is not None}
        if bank_bytes is None or len(contents) != len(files):
            # unreadable files: no caching, the loader reports them
            try:
                bank = load_bank(root, jobs=jobs)
            except BankLoadError as exc:
                diags += exc.diagnostics
                continue
            banks.append(bank)
            out += lint_banks([bank], config, jobs=jobs)
            continue
        s = salt(bank_bytes, _settings(config, root))
        digests = {f: digest(b) for f, b in contents.items()}
        whole = hashlib.blake2b(digest_size=16)
        for f in files:
            whole.update(f.encode("utf-8", "surrogateescape") + b"\0" + digests[f])
        for stats in record_files(root):  # the IA rules read the recorded statistics
            data = _read(str(stats))
            whole.update(b"stats\0" + str(stats).encode("utf-8", "surrogateescape") + b"\0"
                         + (digest(data) if data is not None else b"unreadable"))
        full = whole.digest()
        hit = cache.load(key_root, "lint", s)
        found_before = (_unseal(hit[1]) if isinstance(hit, tuple) and len(hit) == 2
                        and hit[0] == full else None)
        linted = isinstance(found_before, list)
        if isinstance(found_before, list):
            out += found_before
            if not want_banks:
                continue
        stored = cache.load(key_root, "items", s)
        if not isinstance(stored, dict):
            stored = {}
        preloaded: dict[str, Item] = {}
        known: dict[str, ItemResult] = {}
        valid: dict[str, tuple[object, Item]] = {}  # stored entries that hold, and their item
        for f in files:
            entry = stored.get(f)
            if isinstance(entry, tuple) and len(entry) == 2 and entry[0] == digests[f]:
                value = _unseal(entry[1])
                if isinstance(value, tuple) and len(value) == 3:
                    preloaded[f] = value[0]
                    known[f] = (value[1], value[2])
                    valid[f] = (entry, value[0])
        try:
            bank = load_bank(root, jobs=jobs, preloaded=preloaded)
        except BankLoadError as exc:
            diags += exc.diagnostics
            continue
        banks.append(bank)
        if not linted:
            todo.append((bank, key_root, s, full, known, digests, valid))
    if diags:
        raise BankLoadError(diags)
    for bank, key_root, s, full, known, digests, valid in todo:
        record: dict[str, ItemResult] = {}
        found = lint_banks([bank], config, jobs=jobs, known=known, record=record)
        out += found
        # A file that appeared after the folder was listed has no digest: it is linted, not
        # stored, and the bank's findings are not stored either (`full` does not cover it).
        # An entry read from the cache whose item and findings hold is stored as it was read
        # (pickling 10,000 items again would cost more than linting the one that changed).
        items = {e.path: valid[e.path][0] if e.path in valid and e.item is valid[e.path][1]
                 and record[e.path] == known[e.path]
                 else (digests[e.path], _seal((e.item, *record[e.path])))
                 for e in bank.entries if e.path in digests}
        cache.store(key_root, "items", s, items)
        if len(items) == len(bank.entries):
            cache.store(key_root, "lint", s, (full, _seal(found)))
    out.sort(key=lambda f: f.sort_key)
    return banks, out
