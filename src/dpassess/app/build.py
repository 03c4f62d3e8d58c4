"""`dpassess build`: a folder of banks -> checked, linted, every export and the sample forms.

The banks are loaded (and linted) once; the exports and the forms of every blueprint are made
from those same banks. Every stage writes all its files or none; output is deterministic, so a
rebuild of an unchanged bank leaves `exports/` byte-identical (tests/test_build.py fails when
the committed exports are stale). Nothing here prints: the report says what happened.

Rebuilds do only what changed, through the same cache as lint (`dpassess.runtime.cache`): each
bank has a content key (its bank file, the path and content hash of every file in its folder:
items, images, linked files, statistics records; the lint
settings, the dpassess sources), each export file the key of its bank with its format and
language, and each blueprint's forms the key of the blueprint file and its bank. An output
whose key is unchanged and whose file is as last written (the same size, mtime and inode: the
outputs are not read back to hash them) is left alone, with the findings and warnings of the
run that wrote it; a bank none of whose outputs is stale is not even loaded. Anything else (no
cache, a changed or missing file, an unreadable item) is built as from cold, so the files are
the same bytes either way (tests/test_build.py).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpassess.diagnostics import BankLoadError, Diagnostic
from dpassess.runtime.cache import Cache, digest, salt
from dpassess.runtime.files import Stamp, refuse_inside, stamp, sweep, unchanged
from dpassess.runtime.records import (
    BuildState,
    BuiltBank,
    BuiltOutputs,
    FileStamp,
    finding_row,
)
from dpassess.runtime.records import findings as read_findings

if TYPE_CHECKING:
    from dpassess.app.preview import Loaded
    from dpassess.lint import LintConfig
    from dpassess.model import Bank

#: Reports the stage a long build is in ("linting", "exporting data-parallelism" ...).
Progress = Callable[[str], None]


@dataclass
class BuildReport:
    """What a build did: lines to show (in order), warnings, notes, and the exit code (0, or 1
    when lint failed and nothing was written)."""

    lines: list[str] = field(default_factory=list)
    #: Warnings of the outputs this run wrote.
    warnings: list[Diagnostic] = field(default_factory=list)
    #: Warnings of the outputs left as they were, said when they were written: not repeated
    #: (lint's findings are: they are about the bank; these are about files not written now).
    replayed: list[Diagnostic] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    exit_code: int = 0
    #: Why the cache was not used (a folder git tracks, an unusable key), or None.
    cache_warning: str | None = None
    #: Outputs written by this run, and outputs left as they were (their key unchanged).
    written: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)


@dataclass
class _Outputs:
    """What the cache holds about one group of outputs (a bank's exports, a blueprint's
    forms): their key, each file's stamp (size, mtime, inode: outputs are not read back to
    hash them), and the warnings of the run that wrote them."""

    key: bytes
    files: dict[str, Stamp]
    warnings: list[Diagnostic]


def build(
    items: Path,
    out: Path,
    blueprints: Path | None = None,
    *,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    fail_on: str | None = None,
    progress: Progress | None = None,
) -> BuildReport:
    """Check and lint every bank under `items`; if lint passes (nothing at or above `fail_on`,
    default the configured fail-on), write all exports into `out` and assemble the forms of
    each blueprint in `blueprints` (default: `blueprints/` beside `items`) into
    `out/forms/<blueprint name>/`.

    Lint and the outputs go through the cache (`cache_dir`, default `$DPASSESS_CACHE_DIR` or
    `.dpassess_cache`, as `dpassess lint`): what did not change is neither linted nor written
    again (see the module docstring); `use_cache=False` does everything. The files and the
    findings are the same either way.

    Raises BankLoadError (a bank cannot be loaded), BlueprintError, Infeasible or UsageError
    (an output path cannot be written)."""
    import gc

    # The banks loaded live until the end of the build, and make no reference cycles: once
    # loaded they are moved out of the cyclic collector's sight (`gc.freeze`), which otherwise
    # walks all of them at each full collection that exporting and the preview set off (on a
    # 10,000-item bank, about nine). Given back at the end, unless the caller froze first.
    ours = gc.get_freeze_count() == 0
    try:
        return _build(items, out, blueprints, cache_dir=cache_dir, use_cache=use_cache,
                      fail_on=fail_on, progress=progress, freeze=gc.freeze if ours else None)
    finally:
        if ours:
            gc.unfreeze()


def _build(
    items: Path,
    out: Path,
    blueprints: Path | None = None,
    *,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    fail_on: str | None = None,
    progress: Progress | None = None,
    freeze: Callable[[], None] | None = None,
) -> BuildReport:
    """`build`; `freeze` is called once the banks are loaded."""
    import dpassess
    from dpassess.bank.files import find_banks
    from dpassess.runtime.cache import cache_dir as default_cache_dir
    from dpassess.runtime.configfile import find_config

    say = progress or (lambda stage: None)
    items, out = Path(items), Path(out)
    bp_dir = blueprints if blueprints is not None else items.parent / "blueprints"
    forms = sorted(bp_dir.glob("*.yaml")) if bp_dir.is_dir() else []
    if forms:  # before anything is written
        from dpassess.runtime.extras import require

        require("ortools", f"Assembling the forms of {bp_dir}")
    report = BuildReport()
    cache = Cache(default_cache_dir(cache_dir)) if use_cache else None
    roots = _unique(find_banks(items))
    refuse_inside(out, roots, "--out")  # the exports would overwrite or join a bank's files
    # the settings as written (the lint settings are read, and checked, only when a bank is
    # loaded: a build of unchanged banks imports neither the model nor the rules)
    found = find_config(items)
    settings = repr((None if found is None else (str(found.path), found.table), fail_on,
                     dpassess.__version__))
    lint_config: list[LintConfig] = []

    def config() -> LintConfig:
        if not lint_config:
            from dpassess.lint import load_config

            lint_config.append(load_config(items).override(None, None, fail_on))
        return lint_config[0]

    build_salt = salt(b"", ("build", str(items), str(out), settings))
    stored = BuildState({}, {}, {}, None)
    if cache is not None:
        stored = BuildState.read(cache.load_plain(str(out), "build", build_salt))
    index = stored.files
    seen: dict[str, FileStamp] = {}
    keys = {root: _content_key(root, settings, index, seen) for root in roots}
    # the content hash of every file of the banks, for the caches keyed on them (lint's models,
    # the export fragments, the preview's pages): no file is read or hashed twice
    hashes = {path: known.digest for path, known in seen.items()}

    # a bank is loaded (and linted, through the lint cache) when it or one of its exports changed
    say("linting")
    findings: list[Diagnostic] = []
    own: dict[Path, tuple[str, list[Diagnostic]]] = {}
    fresh: dict[Path, _Outputs] = {}
    by_root: dict[Path, Bank] = {}
    errors: list[Diagnostic] = []
    for root in roots:
        entry = stored.banks.get(str(root))
        kept = _outputs_of(entry.outputs) if entry is not None else None
        if (keys[root] is not None and entry is not None and kept is not None
                and entry.key == keys[root] and _intact(kept)):
            own[root] = (entry.summary, read_findings(entry.findings) or [])
            fresh[root] = kept
            continue
        try:
            loaded, bank_findings = _load_and_lint(root, config(), cache, hashes)
        except BankLoadError as exc:
            errors += exc.diagnostics
            continue
        by_root[root] = loaded
        langs = ", ".join(loaded.languages)
        own[root] = (f"checked {loaded.id}: {len(loaded)} items, languages {langs}",
                     bank_findings)
    if errors:
        raise BankLoadError(errors)
    if by_root and freeze is not None:
        freeze()
    for root in roots:
        report.lines.append(own[root][0])
        findings += own[root][1]
    findings.sort(key=lambda f: f.sort_key)
    if findings:
        from dpassess.lint import format_findings

        report.lines.append(format_findings(findings, "text").rstrip("\n"))
    # (every bank unchanged: its findings did not fail with these settings when it was built)
    if by_root and _failing(findings, config()):
        report.lines.append("lint failed: nothing exported (fix the findings above)")
        report.exit_code = 1
        report.cache_warning = cache.notice if cache is not None else None
        return report
    report.lines.append(_lint_summary(findings))

    new_store = BuildState(seen, {}, {}, None)
    exported: dict[Path, list[Diagnostic]] = {}
    for root in roots:
        if root in fresh:
            outputs = fresh[root]
            report.replayed += outputs.warnings
            report.unchanged += [Path(p) for p in outputs.files]
            _sweep(outputs.files, report)
        else:
            say(f"exporting {root.name}")
            outputs = _export_bank(by_root[root], out, report, cache, hashes)
        exported[root] = outputs.warnings
        key = keys[root]
        if key is not None:
            new_store.banks[str(root)] = BuiltBank(
                key, own[root][0], tuple(map(finding_row, own[root][1])), _record(outputs))

    for bp in forms:
        form_key = _forms_key(bp, keys, index, seen)
        kept = _outputs_of(stored.forms.get(str(bp)))
        if (form_key is not None and kept is not None and kept.key == form_key
                and _intact(kept)):
            report.replayed += kept.warnings
            report.unchanged += [Path(p) for p in kept.files]
            _sweep(kept.files, report)
            new_store.forms[str(bp)] = _record(kept)
            continue
        say(f"assembling {bp.stem}")
        outputs = _assemble_forms(bp, list(by_root.values()), out / "forms" / bp.stem, report)
        if form_key is not None:
            outputs.key = form_key
            new_store.forms[str(bp)] = _record(outputs)
    report.lines += [f"wrote {p}" for p in report.written]
    preview_key = _preview_key(keys, bp_dir, index, seen)
    shown = _outputs_of(stored.preview)
    if (preview_key is not None and shown is not None and shown.key == preview_key
            and _intact(shown)):
        report.warnings += shown.warnings
        report.unchanged += [Path(p) for p in shown.files]
        _sweep(shown.files, report)
        new_store = new_store._replace(preview=_record(shown))
    else:
        say("writing the preview")
        # the one bank, when this run loaded it: the preview does not load it again
        reuse = ((config(), by_root[roots[0]], own[roots[0]][1])
                 if len(roots) == 1 and roots[0] in by_root else None)
        outputs = _write_preview(roots, out / "preview", bp_dir, cache, report, exported,
                                 reuse, hashes)
        if preview_key is not None:
            outputs.key = preview_key
            new_store = new_store._replace(preview=_record(outputs))
    if report.unchanged:
        report.lines.append(f"unchanged: {len(report.unchanged)} files (inputs as last built)")
    if report.replayed:
        n = len(report.replayed)
        report.notes.append(
            f"{n} export warning{'s' if n != 1 else ''} about the unchanged files, given when "
            f"they were written, {'are' if n != 1 else 'is'} not repeated "
            "(`dpassess build --no-cache` shows them again)")
    if cache is not None:
        cache.store_plain(str(out), "build", build_salt, new_store.plain())
        report.cache_warning = cache.notice
    return report


def _failing(findings: list[Diagnostic], config: LintConfig) -> bool:
    from dpassess.lint import failing

    return failing(findings, config.fail_on)


def _lint_summary(findings: list[Diagnostic]) -> str:
    if not findings:
        return "lint: clean"
    n = len(findings)
    return f"lint: {n} finding{'s' if n != 1 else ''}, none at the fail level"


def _unique(roots: list[Path]) -> list[Path]:
    seen: set[Path] = set()
    out = []
    for root in roots:
        if root.resolve() not in seen:
            seen.add(root.resolve())
            out.append(root)
    return out


def _load_and_lint(root: Path, config: Any, cache: Cache | None, hashes: Mapping[str, bytes]
                   ) -> tuple[Bank, list[Diagnostic]]:
    """The bank at `root`, loaded and linted (through the lint cache when given; the content
    hashes of the files just hashed for its key, `hashes`, are not computed again)."""
    from dpassess.lint.incremental import load_and_lint

    banks, findings = load_and_lint([root], config, cache,
                                    digests=hashes)
    return banks[0], findings


#: What is known of a file: its size, mtime (ns), inode and content hash.
Stat = FileStamp


def _file_digest(path: str, index: dict[str, Stat], seen: dict[str, Stat]) -> bytes:
    """The content hash of `path`; read again only when its size, mtime or inode differ from
    what `index` recorded (as git's index does). Records it in `seen`. Raises OSError."""
    st = os.stat(path)
    known = index.get(path)
    if known is not None and known[:3] == stamp(st):
        seen[path] = known
        return known.digest
    with open(path, "rb") as fh:
        value = digest(fh.read())
    seen[path] = FileStamp(*stamp(st), value)
    return value


def _record(outputs: _Outputs) -> BuiltOutputs:
    """`outputs` as the cache keeps them (plain data)."""
    return BuiltOutputs(outputs.key, dict(outputs.files), tuple(map(finding_row, outputs.warnings)))


def _outputs_of(record: BuiltOutputs | None) -> _Outputs | None:
    """The outputs the cache kept (`_record`), or None."""
    if record is None:
        return None
    return _Outputs(record.key, dict(record.files), read_findings(record.warnings) or [])


def _content_key(root: Path, settings: str, index: dict[str, Stat], seen: dict[str, Stat]
                 ) -> bytes | None:
    """One hash over the bank file, the path and content hash of every file in the bank's folder
    (items, their images and linked files, statistics records), `settings` and the dpassess
    sources; None when a file cannot be read (the bank is then always rebuilt)."""
    from dpassess.bank.files import BANK_FILE, bank_files

    try:
        bank_bytes = (root / BANK_FILE).read_bytes()
        h = hashlib.blake2b(salt(bank_bytes, (str(root), settings)), digest_size=16)
        for f in bank_files(root):
            h.update(f.encode("utf-8", "surrogateescape") + b"\0" + _file_digest(f, index, seen))
    except (OSError, ValueError):
        return None
    return h.digest()


def _forms_key(blueprint: Path, keys: dict[Path, bytes | None], index: dict[str, Stat],
               seen: dict[str, Stat]) -> bytes | None:
    """The blueprint file's bytes and the content key of the bank it names; None when either
    cannot be read (the forms are then assembled again)."""
    import yaml

    try:
        data = blueprint.read_bytes()
        bank = yaml.load(data, Loader=yaml.CSafeLoader).get("bank")
        if not isinstance(bank, str) or "\0" in bank:
            return None
        root = (blueprint.parent / bank).resolve()
    except (OSError, ValueError, AttributeError, yaml.YAMLError):
        return None
    bank_key = next((k for r, k in keys.items() if r.resolve() == root), None)
    if bank_key is None:
        bank_key = _content_key(root, "", index, seen)
    return None if bank_key is None else digest(data + b"\0" + bank_key)


def _preview_key(keys: dict[Path, bytes | None], bp_dir: Path, index: dict[str, Stat],
                 seen: dict[str, Stat]) -> bytes | None:
    """The content keys of every bank and the bytes of every blueprint (the preview shows them
    all); None when one cannot be read."""
    if any(k is None for k in keys.values()):
        return None
    parts = [k for _, k in sorted((str(r), k) for r, k in keys.items() if k is not None)]
    try:
        for bp in sorted(bp_dir.glob("*.yaml")) if bp_dir.is_dir() else []:
            parts.append(str(bp).encode("utf-8", "surrogateescape") + b"\0"
                         + _file_digest(str(bp), index, seen))
    except OSError:
        return None
    return digest(b"preview\0" + b"\0".join(parts))


def _write_preview(roots: list[Path], out: Path, bp_dir: Path, cache: Cache | None,
                   report: BuildReport, exported: dict[Path, list[Diagnostic]],
                   loaded: Loaded | None = None, hashes: Mapping[str, bytes] | None = None
                   ) -> _Outputs:
    """The preview site of every bank (and of the forms of every blueprint) in `out`, with
    the warnings of the bank's exports (`exported`, by bank folder); `loaded`: the one bank
    as this run loaded and linted it (`dpassess.app.preview.site`); `hashes`: the content
    hash of each file read, which key the preview's pages."""
    from dpassess.app.preview import preview

    done = preview(roots, out, bp_dir, cache=cache, export_warnings=exported, loaded=loaded,
                   digests=hashes or {})
    report.warnings += done.warnings
    # rebuilt, all of it (files already holding their bytes are not touched on disk); one line
    # for them all, the lines above list the rest
    report.written += done.files
    report.lines.append(f"wrote {out / 'index.html'} (the preview: {len(done.written)} of "
                        f"{len(done.files)} files changed)")
    return _Outputs(b"", _stamps(done.files), list(done.warnings))


def _intact(outputs: object) -> bool:
    """Every file of `outputs` is there as last written: the same size, mtime and inode as then
    (a file touched or copied since is written again: its content was not hashed)."""
    return isinstance(outputs, _Outputs) and bool(outputs.files) and unchanged(outputs.files)


def _sweep(files: Mapping[str, Stamp], report: BuildReport) -> None:
    """Remove what runs that were killed (SIGKILL, a power cut) left in the folders of outputs
    that are not written again: a writing run sweeps the folders it writes into, this one
    writes nothing there. Only this program's temporary files of dead processes
    (`runtime.files.sweep`)."""
    for folder in sorted({os.path.dirname(p) for p in files}):
        for path in sweep(folder):
            report.lines.append(f"removed {path} (left by a run that was stopped)")


def _stamps(paths: list[Path]) -> dict[str, Stamp]:
    """Each file just written, with its stamp."""
    return {str(p): stamp(os.stat(p)) for p in paths}


def _export_bank(bank: Bank, out: Path, report: BuildReport, cache: Cache | None,
                 hashes: Mapping[str, bytes]) -> _Outputs:
    """Every (format, language) file of the bank in one write (in worker processes when the
    bank is large); a warning about the whole bank is placed at its folder. With `cache`, each
    file keeps its items' fragments there, and only the items that changed are built again:
    an item's fragments are keyed on the content hash of its file, as hashed for the bank's key
    (`hashes`), not on its model."""
    from dataclasses import replace

    from dpassess.app.export import write_bank_exports
    from dpassess.export import EXPORTERS, MULTI, Collection
    from dpassess.export.runner import ExportFile

    collection = Collection.from_bank(bank)
    if cache is not None:  # (an item's model is read from its file alone)
        collection = replace(
            collection,
            sources={i.id: hashes[path] for i in collection.items
                     if (path := collection.paths.get(i.id, "")) in hashes},
            stimulus_sources={s.stimulus.id: hashes[s.path] for s in bank.stimuli
                              if s.path in hashes})
    exports = [
        ExportFile(collection, name, lang, out / fmt.folder / fmt.file_name(collection, lang),
                   cache=cache)
        for name, fmt in EXPORTERS.items()
        for lang in [*bank.languages, *([MULTI] if fmt.multi else [])]
    ]
    warnings = write_bank_exports(bank, exports)
    report.warnings += warnings
    paths = [e.path for e in exports]
    report.written += paths
    return _Outputs(b"", _stamps(paths), warnings)


def _assemble_forms(blueprint: Path, banks: list[Bank], out: Path, report: BuildReport
                    ) -> _Outputs:
    """The blueprint's forms with its own seed, from its bank as loaded for lint (when it is
    one of the banks built; else the bank is loaded from the blueprint's `bank:`)."""
    from dpassess.assemble import assemble_problem, load_blueprint, load_problem, write_assembly
    from dpassess.assemble.problem import bank_path

    bp = load_blueprint(blueprint)
    root = bank_path(bp, blueprint)
    bank = next((b for b in banks if Path(b.root).resolve() == root), None)
    if bank is None:
        from dpassess.bank.load import load_bank

        bank = load_bank(root) if root.is_dir() else None
    problem = load_problem(blueprint, bank, blueprint=bp)
    written, warnings = write_assembly(assemble_problem(problem), out)
    report.written += written
    report.warnings += warnings
    return _Outputs(b"", _stamps(list(written)), list(warnings))
