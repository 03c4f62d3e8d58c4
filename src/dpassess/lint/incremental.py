"""Load and lint bank folders through the content-hash cache (`dpassess.runtime.cache`).

Same findings and the same load errors as `lint_banks(load_banks(paths), config)`, which is what
runs when no cache is given; the cache only saves work. Per bank folder it keeps:

- `lint`: the bank's findings, under one hash over every file of the bank (a hit is the whole
  answer);
- `items`: per file a typed record (`dpassess.runtime.records.LintItem`, `LintStimulus`), plain
  data: the file's content hash, its item-rule findings, and what the bank rules read of the
  item (`ItemFeatures`). After an edit, `lint_paths` parses and checks only the files whose
  hash changed (and the items whose stimulus file changed) and runs the bank rules on the
  stored features of the others: an unchanged item is never rebuilt as a model;
- `models`: per item file its parsed model as plain data (`dpassess.runtime.modeldata`), for
  `load_and_lint` (`dpassess build`, the preview), which returns the banks themselves: only
  changed files are parsed, the others are rebuilt from the stored data without validation.

A bank whose statistics records the item-analysis rules read, whose files are not all its own
(a link), or that does not load, is loaded whole (the loader then reports what is wrong), with
the stored item-rule results and features of its unchanged items reused.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, cast

import dpassess
from dpassess.bank.load import (
    BANK_FILE,
    Parsed,
    find_banks,
    item_files,
    load_bank,
    load_banks,
    load_item,
    read_yaml,
)
from dpassess.diagnostics import BankLoadError, Diagnostic
from dpassess.lint.config import LintConfig
from dpassess.lint.context import BankContext
from dpassess.lint.engine import ItemResult, lint_bank, lint_banks
from dpassess.lint.features import item_features
from dpassess.lint.registry import Hit
from dpassess.lint.text import clear_memos
from dpassess.model import Bank, BankConfig, ItemBase, LoadedItem, LoadedStimulus, Stimulus
from dpassess.runtime import modeldata
from dpassess.runtime.cache import Cache, digest, salt
from dpassess.runtime.gcpause import gc_paused
from dpassess.runtime.records import (
    FEATURE_PARTS,
    BankHits,
    FindingRow,
    HitRow,
    ItemFeatures,
    LintItem,
    LintRecord,
    LintStimulus,
    features_digest,
    finding_row,
    findings,
    read_lint_record,
)
from dpassess.stats.history import record_files

#: The layout of what is stored (4: typed records of plain data, `dpassess.runtime.records`;
#: item models apart, for the callers that want the banks; 5: the models as plain data too,
#: `dpassess.runtime.modeldata`).
CACHE_FORMAT = 5

#: Above this share of changed files a bank is loaded whole (the loader's workers parse
#: faster than this process alone).
FAST_MAX_SHARE = 0.25

#: The rules that read the bank's statistics records (and so every item of the bank).
_STATS_FAMILY = "IA"


def _settings(config: LintConfig, root: Path) -> tuple[object, ...]:
    """Everything in the lint settings that can change a finding, the bank's spelling (findings
    carry paths as given) and the dpassess version."""
    return (
        tuple(r.code for r in config.rules()), config.min_options, config.key_longest_ratio,
        str(root), dpassess.__version__, CACHE_FORMAT, modeldata.VERSION,
    )


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _digest(path: str) -> bytes | None:
    data = _read(path)
    return None if data is None else digest(data)


def lint_paths(
    paths: Iterable[str | os.PathLike[str]],
    config: LintConfig,
    cache: Cache | None = None,
    *,
    jobs: int | None = None,
    digests: Mapping[str, bytes] | None = None,
) -> list[Diagnostic]:
    """Load every bank at or below `paths` and lint them; raises BankLoadError like load_banks.
    With a cache, only what changed is parsed and checked (the library's entry point for "lint
    this bank using the cache"). `digests`: the content hash (`dpassess.runtime.cache.digest`)
    of files the caller has just read, by path as listed: those are not read again."""
    return _run(paths, config, cache, jobs=jobs, want_banks=False, digests=digests or {})[1]


def load_and_lint(
    paths: Iterable[str | os.PathLike[str]],
    config: LintConfig,
    cache: Cache | None = None,
    *,
    jobs: int | None = None,
    digests: Mapping[str, bytes] | None = None,
) -> tuple[list[Bank], list[Diagnostic]]:
    """`(load_banks(paths), lint_paths(paths, config, cache))`, parsing each file at most once:
    items whose file is unchanged come from the cache. `digests`: as for `lint_paths`."""
    return _run(paths, config, cache, jobs=jobs, want_banks=True, digests=digests or {})


class _Folder(NamedTuple):
    """One bank folder as read for its keys."""

    root: Path
    key_root: str
    salt: bytes
    #: Its item (and stimulus) files, in authoring order, and each one's content hash.
    files: list[str]
    digests: dict[str, bytes]
    #: One hash over every file the bank's findings depend on.
    full: bytes
    #: The shard of each file (`_shard`), and the files of each shard.
    shard: dict[str, int]
    shards: dict[int, list[str]]


class _Stored(NamedTuple):
    """What the cache holds of a folder's files that still hold: each file's record, the plain
    data it was read from (for the shards written again), and the shards of the `items` layer
    that no longer hold exactly the folder's records (written again at the end)."""

    records: dict[str, LintRecord]
    raw: dict[str, object]
    dirty: set[int]


#: The `items` and `models` layers are each kept in this many files (shards, by a hash of the
#: file path): an edit writes again the shard of the file edited, not the whole layer.
SHARDS = 32


def _shard(path: str) -> int:
    return zlib.crc32(path.encode("utf-8", "surrogateescape")) % SHARDS


def _load_shards(cache: Cache, folder: _Folder, layer: str) -> tuple[dict[str, object], set[int]]:
    """The entries stored in the shards of `layer` that hold one of the folder's files (by
    path), and the shards whose stored paths are not the folder's (missing, damaged, a file
    added or removed)."""
    entries: dict[str, object] = {}
    dirty: set[int] = set()
    for i, files in folder.shards.items():
        value = cache.load_plain(folder.key_root, f"{layer}-{i:02x}", folder.salt)
        if not isinstance(value, dict):
            dirty.add(i)
            continue
        if len(value) != len(files):
            dirty.add(i)
        entries.update(value)
    return entries, dirty


def _store_shards(cache: Cache, folder: _Folder, layer: str, dirty: set[int],
                  values: Mapping[str, object]) -> None:
    """Write again the `dirty` shards of `layer`, with the `values` of their files."""
    for i, files in folder.shards.items():
        if i in dirty:
            cache.store_plain(folder.key_root, f"{layer}-{i:02x}", folder.salt,
                              {f: values[f] for f in files if f in values})


def _run(
    paths: Iterable[str | os.PathLike[str]],
    config: LintConfig,
    cache: Cache | None,
    *,
    jobs: int | None,
    want_banks: bool,
    digests: Mapping[str, bytes],
) -> tuple[list[Bank], list[Diagnostic]]:
    if cache is None:
        loaded = load_banks(paths)
        return loaded, lint_banks(loaded, config, jobs=jobs)
    # Reading the stored records and models allocates a container per field of every item,
    # and makes no reference cycle: the collector's passes would traverse them all for nothing.
    with gc_paused():
        return _run_cached(paths, config, cache, jobs=jobs, want_banks=want_banks,
                           digests=digests)


def _run_cached(
    paths: Iterable[str | os.PathLike[str]],
    config: LintConfig,
    cache: Cache,
    *,
    jobs: int | None,
    want_banks: bool,
    digests: Mapping[str, bytes],
) -> tuple[list[Bank], list[Diagnostic]]:
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
    todo: list[tuple[Bank, _Folder, _Stored]] = []
    for root in roots:
        folder = _folder(root, config, digests)
        if folder is None:
            # unreadable files: no caching, the loader reports them
            try:
                bank = load_bank(root, jobs=jobs)
            except BankLoadError as exc:
                diags += exc.diagnostics
                continue
            banks.append(bank)
            out += lint_banks([bank], config, jobs=jobs)
            continue
        hit = cache.load_plain(folder.key_root, "lint", folder.salt)
        found_before = (findings(hit[1]) if isinstance(hit, tuple) and len(hit) == 2
                        and hit[0] == folder.full else None)
        if found_before is not None:
            out += found_before
            if not want_banks:
                continue
        # (the records are not read when only the models are wanted)
        stored = (_stored(cache, folder) if found_before is None
                  else _Stored({}, {}, set()))
        if not want_banks:
            found = _lint_changed(folder, stored, config, cache, jobs)
            if found is not None:
                out += found
                continue
        models = _models(cache, folder)
        try:
            bank = load_bank(root, jobs=jobs, preloaded=models.models)
        except BankLoadError as exc:
            diags += exc.diagnostics
            continue
        banks.append(bank)
        if found_before is None:
            todo.append((bank, folder, stored))
        _store_models(cache, folder, bank, models)
    if diags:
        raise BankLoadError(diags)
    for bank, folder, stored in todo:
        out += _lint_whole(bank, folder, stored, config, cache, jobs)
    out.sort(key=lambda f: f.sort_key)
    return banks, out


def _folder(root: Path, config: LintConfig, known: Mapping[str, bytes]) -> _Folder | None:
    """The folder's files and keys, or None when one cannot be read (`known`: content hashes
    already read)."""
    bank_bytes = _read(str(root / BANK_FILE))
    files = item_files(root)
    digests = {f: d for f in files if (d := known.get(f) or _digest(f)) is not None}
    if bank_bytes is None or len(digests) != len(files):
        return None
    whole = hashlib.blake2b(digest_size=16)
    for f in files:
        whole.update(f.encode("utf-8", "surrogateescape") + b"\0" + digests[f])
    for stats in record_files(root):  # the IA rules read the recorded statistics
        whole.update(b"stats\0" + str(stats).encode("utf-8", "surrogateescape") + b"\0"
                     + (known.get(str(stats)) or _digest(str(stats)) or b"unreadable"))
    shard = {f: _shard(f) for f in files}
    shards: dict[int, list[str]] = {}
    for f in files:
        shards.setdefault(shard[f], []).append(f)
    return _Folder(root, str(root), salt(bank_bytes, _settings(config, root)), files, digests,
                   whole.digest(), shard, shards)


def _stored(cache: Cache, folder: _Folder) -> _Stored:
    """The stored records of the folder's files whose content hash is unchanged."""
    value, dirty = _load_shards(cache, folder, "items")
    records: dict[str, LintRecord] = {}
    raw: dict[str, object] = {}
    for f in folder.files:
        plain = value.get(f)
        rec = read_lint_record(plain) if plain is not None else None
        if rec is not None and rec.digest == folder.digests[f]:
            records[f] = rec
            raw[f] = plain
        else:
            dirty.add(folder.shard[f])
    return _Stored(records, raw, dirty)


def _result(rec: LintItem) -> ItemResult | None:
    found = findings(rec.findings)
    return None if found is None else (found, set(rec.used))


def _lint_changed(folder: _Folder, stored: _Stored, config: LintConfig, cache: Cache,
                  jobs: int | None) -> list[Diagnostic] | None:
    """The bank's findings from the stored records of its unchanged files, parsing and checking
    only the others; None when the bank must be loaded whole (nothing stored, many changes,
    statistics records, a link, or a file that does not load cleanly)."""
    files, records = folder.files, stored.records
    changed = [f for f in files if f not in records]
    if (not records or len(changed) > FAST_MAX_SHARE * len(files)
            or any(os.path.islink(f) for f in files)
            or (record_files(folder.root)
                and any(r.code.startswith(_STATS_FAMILY) for r in config.rules()))):
        return None
    cfg_path = folder.root / BANK_FILE
    data, problems = read_yaml(str(cfg_path))
    if problems or data is None:
        return None
    try:
        bank_config = BankConfig.model_validate(data)
    except ValueError:
        return None
    parsed: dict[str, Parsed] = {}
    if not _parse(changed, parsed):
        return None
    stimuli = {rec.id: f for f, rec in records.items() if isinstance(rec, LintStimulus)}
    stimuli.update({p.id: f for f, p in parsed.items() if isinstance(p, Stimulus)})
    # an item checked with a stimulus file that changed since is checked again
    stale = [f for f, rec in records.items() if isinstance(rec, LintItem)
             and rec.stimulus is not None and f not in parsed
             and folder.digests.get(stimuli.get(rec.stimulus[0], "")) != rec.stimulus[1]]
    if not _parse(stale, parsed):
        return None
    # the loader's checks across files: otherwise it is loaded whole, and reports them
    ids: list[str] = []
    named: list[str | None] = []
    for f in files:
        p = parsed.get(f)
        if p is not None:
            ids.append(p.id)
            if isinstance(p, Stimulus):
                continue
            named.append(p.stimulus)
            if any(lang not in p.text for lang in bank_config.languages):
                return None
        else:
            rec = records[f]
            if isinstance(rec, LintStimulus):
                ids.append(rec.id)
            else:
                ids.append(rec.features.id)
                named.append(rec.stimulus[0] if rec.stimulus is not None else None)
    if len(set(ids)) != len(ids) or any(s is not None and s not in stimuli for s in named):
        return None

    entries = [LoadedItem(p, f) for f, p in _in_order(files, parsed) if not isinstance(p, Stimulus)]
    wanted = {e.item.stimulus for e in entries if e.item.stimulus is not None}
    loaded_stimuli: list[LoadedStimulus] = []
    for sid in sorted(wanted, key=lambda s: stimuli[s]):
        p = parsed.get(stimuli[sid])
        if p is None:
            got, problems = load_item(stimuli[sid])
            if problems or not isinstance(got, Stimulus):
                return None
            p = got
        assert isinstance(p, Stimulus)
        loaded_stimuli.append(LoadedStimulus(p, stimuli[sid]))
    bank = Bank(config=bank_config, root=folder.root, entries=entries,
                config_path=str(cfg_path), stimuli=loaded_stimuli)
    bctx = BankContext(bank, config)
    known: dict[str, ItemResult] = {}
    features: list[ItemFeatures] = []
    paths: list[str] = []
    with gc_paused():
        try:
            for f in files:
                p = parsed.get(f)
                kept = records.get(f) if p is None else None
                if isinstance(kept, LintItem):
                    result = _result(kept)
                    if result is None:
                        return None
                    known[f] = result
                    features.append(kept.features)
                    paths.append(f)
                elif p is not None and not isinstance(p, Stimulus):
                    features.append(item_features(bctx, p, f))
                    paths.append(f)
            bctx.features = features
            record: dict[str, ItemResult] = {}
            hits = _Hits(cache, folder, stored, paths, features)
            found = lint_bank(bctx, paths, jobs=jobs, known=known, record=record,
                              kept_hits=hits.kept, hits_out=hits.found)
        finally:
            clear_memos()
    _store(cache, folder, stored, bctx, record, {f: p for f, p in parsed.items()},
           stimuli, found, hits)
    return found


def _parse(files: list[str], into: dict[str, Parsed]) -> bool:
    """Parse `files` into `into`; False when one does not load cleanly."""
    for f in files:
        p, problems = load_item(f)
        if problems or p is None:
            return False
        into[f] = p
    return True


def _in_order(files: list[str], parsed: Mapping[str, Parsed]) -> list[tuple[str, Parsed]]:
    return [(f, parsed[f]) for f in files if f in parsed]


def _lint_whole(bank: Bank, folder: _Folder, stored: _Stored, config: LintConfig, cache: Cache,
                jobs: int | None) -> list[Diagnostic]:
    """The findings of a bank loaded whole, reusing the stored results and features of its
    items whose file (and stimulus file) are unchanged."""
    stimuli = {s.stimulus.id: s.path for s in bank.stimuli}
    known: dict[str, ItemResult] = {}
    kept: dict[str, ItemFeatures] = {}
    record: dict[str, ItemResult] = {}
    for e in bank.entries:
        rec = stored.records.get(e.path)
        result = _result(rec) if isinstance(rec, LintItem) else None
        if (isinstance(rec, LintItem) and result is not None
                and rec.features.id == e.item.id
                and (rec.stimulus is None if e.item.stimulus is None
                     else rec.stimulus == (e.item.stimulus, folder.digests.get(
                         stimuli.get(e.item.stimulus, ""))))):
            known[e.path] = result
            kept[e.path] = rec.features
    bctx = BankContext(bank, config, kept=kept)
    paths = [e.path for e in bank.entries]
    with gc_paused():
        try:
            # Few items changed: their features are made now, to tell whether the bank rules'
            # stored hits hold; else while the item rules' workers run (and the rules run).
            few = len(paths) - len(known) <= FAST_MAX_SHARE * len(paths)
            hits = _Hits(cache, folder, stored, paths, bctx.features if few else None)
            found = lint_bank(bctx, paths, jobs=jobs, known=known, record=record,
                              kept_hits=hits.kept, hits_out=hits.found)
        finally:
            clear_memos()
    parsed: dict[str, Parsed] = {e.path: e.item for e in bank.entries if e.path not in known}
    parsed.update({s.path: s.stimulus for s in bank.stimuli})
    _store(cache, folder, stored, bctx, record, parsed, stimuli, found, hits)
    return found


#: The bank rules whose hits are kept (`BankHits`), each with the part of the items' features
#: it reads (`dpassess.runtime.records.FEATURE_PARTS`; `dpassess.lint.rules.bank`). A rule not
#: listed runs every time (the item-analysis rules read the statistics records).
_READS = {"BK001": "answers", "BK002": "words", "BK003": "answers", "BK004": "choice",
          "BK005": "choice", "BK006": "choice", "BK007": "choice", "BK008": "languages"}


class _Hits:
    """The bank rules' hits kept from an earlier run whose items had the same features, or the
    same part of them that the rule reads (by rule code: `kept`, empty when none hold), and
    those found now (`found`, filled by `lint_bank`)."""

    def __init__(self, cache: Cache, folder: _Folder, stored: _Stored, paths: Sequence[str],
                 features: Sequence[ItemFeatures] | None) -> None:
        self.kept: dict[str, list[Hit]] = {}
        self.found: dict[str, list[Hit]] = {}
        self.keys: tuple[bytes, ...] | None = None
        #: Each item's `features_digest`, by path (when `features` were given).
        self.fdigests: dict[str, bytes] = {}
        if features is None:
            return
        self.fdigests = dict(zip(paths, _fdigests(paths, features, stored), strict=True))
        self.keys = _bank_keys(paths, list(self.fdigests.values()))
        value = BankHits.read(cache.load_plain(folder.key_root, "bank-hits", folder.salt))
        if value is None:
            return
        same = {part for part, old, new in zip(FEATURE_PARTS, value.keys, self.keys, strict=True)
                if old == new}
        self.kept = {code: [Hit(*row) for row in rows] for code, rows in value.hits.items()
                     if _READS.get(code) in same}

    def store(self, cache: Cache, folder: _Folder, keys: tuple[bytes, ...]) -> None:
        """Keep the hits found, for the features whose keys are `keys`."""
        if keys == self.keys and set(self.kept) == set(self.found) & set(_READS):
            return  # as stored
        hits = {code: tuple(map(tuple, found)) for code, found in self.found.items()
                if code in _READS}
        cache.store_plain(folder.key_root, "bank-hits", folder.salt,
                          BankHits(keys, cast(dict[str, tuple[HitRow, ...]], hits)).plain())


def _fdigests(paths: Sequence[str], features: Sequence[ItemFeatures], stored: _Stored
              ) -> list[bytes]:
    """`features_digest` of each item's features: the stored one when they are the stored
    record's."""
    out = []
    for path, f in zip(paths, features, strict=True):
        rec = stored.records.get(path)
        out.append(rec.fdigest if isinstance(rec, LintItem) and rec.features is f
                   else features_digest(f))
    return out


def _bank_keys(paths: Sequence[str], fdigests: Sequence[bytes]) -> tuple[bytes, ...]:
    """For each of the `FEATURE_PARTS`, one hash over the items' paths and the hashes of that
    part, in authoring order."""
    names = [p.encode("utf-8", "surrogateescape") + b"\0" for p in paths]
    return tuple(hashlib.blake2b(b"".join(
        n + d[16 * i:16 * i + 16] for n, d in zip(names, fdigests, strict=True)
    ), digest_size=16).digest() for i in range(len(FEATURE_PARTS)))


def _store(cache: Cache, folder: _Folder, stored: _Stored, bctx: BankContext,
           record: Mapping[str, ItemResult], parsed: Mapping[str, Parsed],
           stimuli: Mapping[str, str], found: list[Diagnostic], hits: _Hits) -> None:
    """Store the records of the folder's files: those read and still true as they were read,
    new ones for the files parsed; and the bank's findings when every file has its record.
    A file that appeared after the folder was listed has no content hash: it is linted, not
    stored, and neither are the bank's findings."""
    digests = folder.digests
    features = {path: f for path, f in zip(record, bctx.features, strict=True)}
    fdigests = (hits.fdigests if list(hits.fdigests) == list(record) else
                dict(zip(record, _fdigests(list(record), bctx.features, stored), strict=True)))
    values: dict[str, object] = {}
    dirty = set(stored.dirty)
    for f in folder.files:
        p = parsed.get(f)
        if p is None:
            if f in stored.raw:
                values[f] = stored.raw[f]
            continue
        dirty.add(folder.shard[f])
        if isinstance(p, Stimulus):
            values[f] = LintStimulus(digests[f], p.id).plain()
        elif f in record:
            stim = None
            if p.stimulus is not None:
                sdigest = digests.get(stimuli.get(p.stimulus, ""))
                if sdigest is None:
                    continue
                stim = (p.stimulus, sdigest)
            rows: tuple[FindingRow, ...] = tuple(map(finding_row, record[f][0]))
            values[f] = LintItem(digests[f], stim, rows, tuple(sorted(record[f][1])),
                                 features[f], fdigests[f]).plain()
    _store_shards(cache, folder, "items", dirty, values)
    hits.store(cache, folder, hits.keys if fdigests is hits.fdigests and hits.keys is not None
               else _bank_keys(list(record), list(fdigests.values())))
    if len(values) == len(folder.files) and all(f in digests for f in record):
        cache.store_plain(folder.key_root, "lint", folder.salt,
                          (folder.full, tuple(map(finding_row, found))))


class _Models(NamedTuple):
    """The stored models of a folder's unchanged files; the plain data of those in shards
    written again (`dirty`), as read."""

    models: dict[str, Parsed]
    raw: dict[str, object]
    dirty: set[int]


def _models(cache: Cache, folder: _Folder) -> _Models:
    """The stored models of the folder's unchanged files. Each is plain data
    (`dpassess.runtime.modeldata`), rebuilt without validating it again: a damaged entry is a
    miss."""
    value, dirty = _load_shards(cache, folder, "models")
    out: dict[str, Parsed] = {}
    digests = folder.digests
    with gc_paused():
        for f in folder.files:
            entry = value.get(f)
            model = None
            if type(entry) is tuple and len(entry) == 2 and entry[0] == digests[f]:
                try:
                    model = modeldata.load(entry[1])
                except Exception:  # another layout, a damaged entry: a miss
                    model = None
            if isinstance(model, ItemBase | Stimulus):
                out[f] = cast(Parsed, model)
            else:
                dirty.add(folder.shard[f])
    # (the plain data is kept only for the shards written again)
    raw = {f: value[f] for f in out if folder.shard[f] in dirty}
    return _Models(out, raw, dirty)


def _store_models(cache: Cache, folder: _Folder, bank: Bank, stored: _Models) -> None:
    """Store the models of the bank's files in the shards that changed (each model as plain
    data, with the content hash of its file), for `load_and_lint`; those read from the cache
    are stored as they were read."""
    if not stored.dirty:
        return
    parsed: list[tuple[str, Parsed]] = [(e.path, e.item) for e in bank.entries]
    parsed += [(s.path, s.stimulus) for s in bank.stimuli]
    value: dict[str, object] = {}
    for path, model in parsed:
        if path not in folder.digests or folder.shard[path] not in stored.dirty:
            continue
        if stored.models.get(path) is model and path in stored.raw:
            value[path] = stored.raw[path]
            continue
        try:
            value[path] = (folder.digests[path], modeldata.dump(model))
        except TypeError:  # not a model of the table: parsed again next time
            continue
    _store_shards(cache, folder, "models", stored.dirty, value)
