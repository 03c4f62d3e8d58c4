"""`dpassess preview`: banks (and the blueprints that draw on them) -> the preview site in a
folder, written whole; `serve` shows it on 127.0.0.1 and writes it again when a file changes.

The banks are loaded and linted (through the lint cache, as `dpassess lint`), every blueprint
in the blueprints folder whose bank is one of them is assembled with its own seed, and
`dpassess.preview.render_site` makes the pages. Nothing here prints: the report says what
happened, and `serve` tells its caller each rebuild.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpassess.diagnostics import BankLoadError, Diagnostic, DpassessError, Severity
from dpassess.runtime.cache import Cache

if TYPE_CHECKING:
    from dpassess.lint import LintConfig
    from dpassess.model import Bank
    from dpassess.preview.pages import PageStore


@dataclass
class PreviewReport:
    """What a preview run wrote, and the warnings on the way."""

    out: Path
    #: every file of the site, and those this run wrote (the others held these bytes already)
    files: list[Path] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    items: int = 0
    findings: int = 0


def site(paths: Sequence[Path], blueprints: Path | None = None, *, cache: Cache | None = None,
         export_warnings: Mapping[Path, list[Diagnostic]] | None = None,
         loaded: Loaded | None = None,
         ) -> tuple[dict[str, bytes], list[Diagnostic], int, int]:
    """The files of the preview of the banks at or below `paths` (and of the forms of each
    blueprint in `blueprints` whose bank is one of them), the warnings, the number of items
    and of lint findings. `export_warnings`: each bank's export warnings by its folder, when
    the caller has them (else the preview exports each bank to learn them). `loaded`: the
    bank of the one path, as the caller loaded and linted it, and with which settings (used
    when they lint as the settings at the path do, else the bank is loaded again). Raises
    BankLoadError when a bank does not load."""
    from dpassess.assemble import assemble_problem, load_blueprint, load_problem
    from dpassess.assemble.problem import bank_path
    from dpassess.lint import load_config
    from dpassess.lint.incremental import load_and_lint
    from dpassess.preview import gather, render_site

    if not paths:
        paths = [Path("items")]
    config = load_config(Path(paths[0]))
    if loaded is not None and len(paths) == 1 and _lints_as(loaded[0], config):
        banks, findings = [loaded[1]], list(loaded[2])
    else:
        banks, findings = load_and_lint(list(paths), config, cache)
    known = {Path(r).resolve(): w for r, w in (export_warnings or {}).items()}
    views = [gather(bank, findings, known.get(Path(bank.root).resolve())
                    if export_warnings is not None else None) for bank in banks]
    warnings: list[Diagnostic] = []
    assemblies = []
    if blueprints is not None and blueprints.is_dir():
        by_root = {Path(b.root).resolve(): b for b in banks}
        for bp_path in sorted(blueprints.glob("*.yaml")):
            try:
                bp = load_blueprint(bp_path)
                bank = by_root.get(bank_path(bp, bp_path))
                if bank is None:
                    continue
                assemblies.append(assemble_problem(load_problem(bp_path, bank, blueprint=bp)))
            except DpassessError as exc:
                warnings.append(Diagnostic(str(bp_path), 0, 0, "", f"its forms are "
                                           f"not shown: {exc}", code="preview",
                                           severity=Severity.warning))
    store = _load_pages(cache, banks)
    files, more = render_site(views, assemblies, store)
    _store_pages(cache, banks, store)
    n_items = sum(len(b) for b in banks)
    return files, [*warnings, *more], n_items, len(findings)


#: A bank as its caller loaded and linted it: the lint settings, the bank, its findings.
Loaded = tuple["LintConfig", "Bank", Sequence[Diagnostic]]


def _lints_as(one: LintConfig, other: LintConfig) -> bool:
    """Whether two lint settings give the same findings (they may differ in when lint fails
    and in the name of the file they were read from)."""
    from dataclasses import replace

    return (replace(one, fail_on=Severity.error, source=None)
            == replace(other, fail_on=Severity.error, source=None))


def preview(paths: Sequence[Path], out: Path, blueprints: Path | None = None, *,
            cache: Cache | None = None,
            export_warnings: Mapping[Path, list[Diagnostic]] | None = None,
            loaded: Loaded | None = None) -> PreviewReport:
    """Write the preview site into `out` (every changed file or none; see `site`): a file that
    already holds the bytes is left alone, so a rebuild after one edit rewrites only the pages
    it changed. Raises BankLoadError, or UsageError naming a path that cannot be written."""
    from dpassess.runtime.files import write_all

    files, warnings, n_items, n_findings = site(paths, blueprints, cache=cache,
                                                export_warnings=export_warnings, loaded=loaded)
    earlier = _listed(out)
    files[MANIFEST] = "".join(f"{name}\n" for name in files).encode("utf-8")
    targets = [(out / name, data) for name, data in files.items()]
    changed = [(p, data) for p, data in targets if _differs(p, data)]
    write_all(changed)
    for name in sorted(earlier - set(files), reverse=True):
        gone = out / name
        with contextlib.suppress(OSError):
            gone.unlink()
            for folder in gone.parents:
                if folder == out:
                    break
                folder.rmdir()  # only when empty (OSError ends the walk up)
    return PreviewReport(out, [p for p, _ in targets], [p for p, _ in changed], warnings,
                         n_items, n_findings)


#: The cache's kind for the item pages of a preview, and the layout of what it holds.
PAGES = "preview-pages"
_PAGES_LAYOUT = 1


def _pages_at(banks: Sequence[Bank]) -> tuple[str, bytes]:
    """Where the item pages of a preview of these banks are kept, and their salt: dpassess
    (in every salt) and the libraries that make a page's bytes (lxml and libxml2 write it;
    Markdown and TeX are read by the others), so that an upgrade of one renders them again."""
    from importlib import metadata

    from lxml import etree

    from dpassess.runtime.cache import salt

    versions: list[object] = [etree.LXML_VERSION, etree.LIBXML_VERSION]
    for name in ("markdown-it-py", "mdit-py-plugins", "latex2mathml"):
        try:
            versions.append(metadata.version(name))
        except metadata.PackageNotFoundError:
            versions.append(None)
    where = os.pathsep.join(sorted(str(Path(b.root).resolve()) for b in banks))
    return where, salt(b"", (PAGES, _PAGES_LAYOUT, versions))


def _load_pages(cache: Cache | None, banks: Sequence[Bank]) -> PageStore | None:
    """The item pages an earlier preview of these banks kept (none when that value is not
    of the expected shape), or None without a cache."""
    from dpassess.preview.pages import PageStore
    from dpassess.runtime.records import findings

    if cache is None or not banks:
        return None
    where, key = _pages_at(banks)
    stored = cache.load_plain(where, PAGES, key)
    store = PageStore()
    if isinstance(stored, dict):
        for k, v in stored.items():
            if not (isinstance(k, bytes) and isinstance(v, tuple) and len(v) == 2
                    and isinstance(v[0], bytes)):
                return PageStore()
            warned = findings(v[1])
            if warned is None:
                return PageStore()
            store.earlier[k] = (v[0], tuple(warned))
    return store


def _store_pages(cache: Cache | None, banks: Sequence[Bank], store: PageStore | None) -> None:
    """Keep this run's item pages (plain data: bytes and the warnings as rows) for the next."""
    from dpassess.runtime.records import finding_row

    if cache is None or store is None or store.now.keys() == store.earlier.keys():
        return
    where, key = _pages_at(banks)
    cache.store_plain(where, PAGES, key, {
        k: (data, tuple(finding_row(d) for d in warned))
        for k, (data, warned) in store.now.items()})


#: The list of the site's files (one relative path a line), so that the next run removes the
#: pages of items that are gone, and nothing it did not write.
MANIFEST = ".dpassess-preview"


def _listed(out: Path) -> set[str]:
    """The files an earlier run listed in `out` (only plain relative paths inside it)."""
    try:
        text = (out / MANIFEST).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return set()
    names = set()
    for line in text.splitlines():
        parts = line.split("/")
        if line and not line.startswith("/") and ".." not in parts and "" not in parts:
            names.add(line)
    return names


def _differs(path: Path, data: bytes) -> bool:
    try:
        if os.path.getsize(path) != len(data):
            return True
        return path.read_bytes() != data
    except OSError:
        return True


def _signature(paths: Sequence[Path], blueprints: Path | None) -> tuple[Any, ...]:
    """What a change to any input file changes: each file's path, size and mtime."""
    from dpassess.bank.files import bank_files, find_banks

    seen: list[tuple[str, int, int]] = []
    roots: list[Path] = []
    for p in paths:
        with contextlib.suppress(OSError, ValueError, DpassessError):
            roots += find_banks(p)
    names: list[str] = []
    for r in roots:
        with contextlib.suppress(OSError, ValueError):
            names += bank_files(r)
    if blueprints is not None and blueprints.is_dir():
        names += [str(p) for p in blueprints.glob("*.yaml")]
    for name in sorted(set(names)):
        try:
            st = os.stat(name)
        except OSError:
            continue
        seen.append((name, st.st_size, st.st_mtime_ns))
    return tuple(seen)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve(paths: Sequence[Path], out: Path, blueprints: Path | None = None, *, port: int = 8000,
          cache: Cache | None = None, poll: float = 1.0,
          on_build: Callable[[PreviewReport | DpassessError], None] | None = None,
          on_ready: Callable[[str], None] | None = None,
          stop: threading.Event | None = None) -> None:
    """Write the preview into `out`, serve `out` on http://127.0.0.1:`port`/ (0: any free port)
    and write it again whenever an input file changes (checked every `poll` seconds), until
    `stop` is set or Ctrl-C. `on_ready(url)` is told the address; `on_build` each build's report,
    or the error that stopped it (the last good pages stay served)."""
    tell = on_build or (lambda r: None)

    def build() -> None:
        try:
            tell(preview(paths, out, blueprints, cache=cache))
        except (BankLoadError, DpassessError) as exc:
            tell(exc)

    out.mkdir(parents=True, exist_ok=True)
    before = _signature(paths, blueprints)
    build()
    handler = functools.partial(_Quiet, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        if on_ready is not None:
            on_ready(f"http://127.0.0.1:{server.server_address[1]}/")
        while True:
            if stop is None:
                time.sleep(poll)
            elif stop.wait(poll):
                break
            now = _signature(paths, blueprints)
            if now != before:
                before = now
                build()
    finally:
        server.shutdown()
        server.server_close()
