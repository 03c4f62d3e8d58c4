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
    from http.server import SimpleHTTPRequestHandler

    from dpassess.lint import LintConfig
    from dpassess.model import Bank
    from dpassess.preview.pages import PageStore
    from dpassess.runtime.records import PagePlace


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
         loaded: Loaded | None = None, store: PageStore | None = None,
         digests: Mapping[str, bytes] | None = None,
         ) -> tuple[dict[str, bytes], list[Diagnostic], int, int]:
    """The files of the preview of the banks at or below `paths` (and of the forms of each
    blueprint in `blueprints` whose bank is one of them), the warnings, the number of items
    and of lint findings. `export_warnings`: each bank's export warnings by its folder, when
    the caller has them (else the preview exports each bank to learn them). `loaded`: the
    bank of the one path, as the caller loaded and linted it, and with which settings (used
    when they lint as the settings at the path do, else the bank is loaded again). `store`:
    what an earlier run left in the site's folder (`dpassess.preview.render_site`: the pages
    it keeps are not among the files); `digests`: the content hash of the banks' files, by
    path, when the caller knows them. Raises BankLoadError when a bank does not load."""
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
    shown = sorted(blueprints.glob("*.yaml")) if blueprints is not None and blueprints.is_dir() else []
    if shown:  # the solver is imported only when there is a blueprint to show
        from dpassess.assemble import assemble_problem, load_blueprint, load_problem
        from dpassess.assemble.problem import bank_path

        by_root = {Path(b.root).resolve(): b for b in banks}
        for bp_path in shown:
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
    files, more = render_site(views, assemblies, store, digests=digests)
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
            loaded: Loaded | None = None,
            digests: Mapping[str, bytes] | None = None) -> PreviewReport:
    """Write the preview site into `out` (every changed file or none; see `site`): a file that
    already holds the bytes is left alone, so a rebuild after one edit rewrites only the pages
    it changed. With `cache`, the pages an earlier run wrote into `out` and that are as it
    wrote them (the same size, mtime, ctime and inode) are kept without being made or read
    again when what they show is unchanged, and so are the rows of the index page.
    `digests`: the content hash of the banks' files by path, when the caller knows them
    (`dpassess build`): they key the pages without hashing each item's model. Raises
    BankLoadError, or UsageError naming a path that cannot be written."""
    from dpassess.runtime.gcpause import gc_paused

    with gc_paused():  # pages and rows make no reference cycles; see dpassess.runtime.gcpause
        return _preview(paths, out, blueprints, cache=cache, export_warnings=export_warnings,
                        loaded=loaded, digests=digests)


def _preview(paths: Sequence[Path], out: Path, blueprints: Path | None, *,
             cache: Cache | None, export_warnings: Mapping[Path, list[Diagnostic]] | None,
             loaded: Loaded | None, digests: Mapping[str, bytes] | None) -> PreviewReport:
    from dpassess.runtime.files import write_all

    store, entries = _load_pages(cache, out)
    files, warnings, n_items, n_findings = site(paths, blueprints, cache=cache,
                                                export_warnings=export_warnings, loaded=loaded,
                                                store=store, digests=digests)
    earlier = _listed(out)
    kept = store.kept if store is not None else []
    names = sorted([*files, *kept]) if kept else list(files)
    files[MANIFEST] = "".join(f"{name}\n" for name in names).encode("utf-8")
    changed = [(out / name, data) for name, data in files.items()
               if _differs(out / name, data)]
    write_all(changed)
    for name in sorted(earlier - set(names) - {MANIFEST}, reverse=True):
        gone = out / name
        with contextlib.suppress(OSError):
            gone.unlink()
            for folder in gone.parents:
                if folder == out:
                    break
                folder.rmdir()  # only when empty (OSError ends the walk up)
    if store is not None:
        _store_pages(cache, out, store, entries)
    return PreviewReport(out, [out / name for name in [*names, MANIFEST]],
                         [p for p, _ in changed], warnings, n_items, n_findings)


#: The cache's kind for what a preview left in its folder, and the layout of what it holds.
PAGES = "preview-pages"
_PAGES_LAYOUT = 2


def _pages_at(out: Path) -> tuple[str, bytes]:
    """Where the record of the preview in `out` is kept, and its salt: dpassess (in every
    salt) and the libraries that make a page's bytes (lxml and libxml2 write it; Markdown and
    TeX are read by the others), so that an upgrade of one makes them again."""
    from importlib import metadata

    from lxml import etree

    from dpassess.runtime.cache import salt

    versions: list[object] = [etree.LXML_VERSION, etree.LIBXML_VERSION]
    for name in ("markdown-it-py", "mdit-py-plugins", "latex2mathml"):
        try:
            versions.append(metadata.version(name))
        except metadata.PackageNotFoundError:
            versions.append(None)
    return str(out.resolve()), salt(b"", (PAGES, _PAGES_LAYOUT, versions))


#: A file's stat as the record keeps it: size, mtime and ctime (ns), inode.
_Stat = tuple[int, int, int, int]


def _stat(path: str) -> _Stat | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def _load_pages(cache: Cache | None, out: Path
                ) -> tuple[PageStore | None, dict[str, PagePlace]]:
    """What the record of the last preview in `out` says is still there as written: its
    pages (by path: key and warnings) whose files have the stat they had, and the rows of its
    index page if that file has; and the record's entry of each such page. (None, {})
    without a cache."""
    from dpassess.preview.pages import PageStore
    from dpassess.runtime.records import PreviewPages

    if cache is None:
        return None, {}
    store = PageStore()
    where, key = _pages_at(out)
    record = PreviewPages.read(cache.load_plain(where, PAGES, key))
    if record is None:
        return store, {}
    root = f"{out}/"
    entries: dict[str, PagePlace] = {}
    for path, entry in record.pages.items():
        if not (type(entry) is tuple and len(entry) == 6 and isinstance(path, str)
                and _stat(root + path) == entry[1:5]):
            continue  # (the stat equal to the file's: they are ints)
        page = PreviewPages.page(entry)
        if page is not None:
            store.earlier[path] = (page[0], tuple(page[2]))
            entries[path] = entry
    index = f"{root}index.html"
    if record.rows and _stat(index) == record.index_stat:
        try:
            with open(index, "rb") as fh:
                data = fh.read()
        except OSError:
            data = b""
        if len(data) == record.index_stat[0]:
            for k, place in record.rows.items():
                row = PreviewPages.row(place, len(data))
                if row is not None and isinstance(k, bytes):
                    store.rows[k] = (data[row[0]:row[0] + row[1]], tuple(row[2]))
    return store, entries


def _store_pages(cache: Cache | None, out: Path, store: PageStore,
                 entries: Mapping[str, PagePlace]) -> None:
    """Keep what this run left in `out` for the next: each page's key, stat and warnings (a
    page kept keeps its record's entry), and where each row lies in the index page."""
    from dpassess.runtime.records import PreviewPages, finding_row

    if cache is None:
        return
    root = f"{out}/"
    pages: dict[str, PagePlace] = {}
    kept = set(store.kept)
    for path, (key, warned) in store.now.items():
        if path in kept and path in entries:
            pages[path] = entries[path]
        elif (st := _stat(root + path)) is not None:
            pages[path] = (key, *st, tuple(finding_row(d) for d in warned))
    index = _stat(f"{root}index.html")
    rows = {k: (offset, length, tuple(finding_row(d) for d in warned) if warned else ())
            for k, (offset, length, warned) in store.places.items()}
    where, salt_ = _pages_at(out)
    cache.store_plain(where, PAGES, salt_, PreviewPages(
        pages, index if index is not None else (0, 0, 0, 0), rows).plain())


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


def _quiet() -> type[SimpleHTTPRequestHandler]:
    """The file handler that logs nothing (http.server is imported only to serve)."""
    import http.server

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Quiet


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
    import http.server

    handler = functools.partial(_quiet(), directory=str(out))
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
