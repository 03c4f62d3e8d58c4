"""The export runner keeps no copy of the exports: the file it wrote last time is the store of
its items' fragments (`dpassess.export.runner`: an index of where each fragment lies, kept in
the cache beside the file's stat). The oracle is the same file written without a cache: after
any sequence of edits, additions, deletions and renames the bytes and warnings are the same; a
previous file someone changed since is not trusted; a planted index is refused."""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT, files
from dpassess import UsageError
from dpassess.app.build import build
from dpassess.diagnostics import dedupe
from dpassess.export import EXPORTERS, MULTI, Collection
from dpassess.export.runner import FRAGMENTS, ExportFile, _fragments_salt, write_exports
from dpassess.runtime.cache import Cache
from dpassess.runtime.records import OutputIndex
from strategies import any_items
from test_export_fragments import collections

#: Every file a two-language collection exports: (format, language, options).
FILES = [(fmt, lang, opts)
         for fmt in EXPORTERS
         for lang in ["id", "en", *([MULTI] if EXPORTERS[fmt].multi else [])]
         for opts in ([{}, {"maths": "tex"}] if fmt == "qti21" else [{}])]


def write(c: Collection, path: Path, cache: Cache | None, fmt: str, lang: str,
          opts: dict[str, str]) -> list[Any]:
    (warnings,) = write_exports([ExportFile(c, fmt, lang, path, opts, cache=cache)], jobs=1)
    return warnings


@settings(max_examples=60)
@given(st.data())
def test_any_sequence_of_writes_through_the_previous_file_gives_the_bytes_of_a_cold_export(
        data):
    pool = data.draw(st.lists(any_items(), min_size=1, max_size=4))
    fmt, lang, opts = data.draw(st.sampled_from(FILES))
    with tempfile.TemporaryDirectory() as tmp:
        cache = Cache(Path(tmp) / "cache")
        path = Path(tmp) / f"out{EXPORTERS[fmt].suffix}"
        for _ in range(3):
            c = data.draw(collections(pool))
            try:
                want = EXPORTERS[fmt].export(c, lang, **opts)
            except UsageError as exc:
                with pytest.raises(UsageError) as got:
                    write(c, path, cache, fmt, lang, opts)
                assert str(got.value) == str(exc)
                continue
            warnings = write(c, path, cache, fmt, lang, opts)
            assert path.read_bytes() == want.data
            assert warnings == dedupe(want.warnings)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The kitchen-sink bank (every item type, images, a stimulus) as a user's repository."""
    shutil.copytree(ROOT / "tests" / "banks" / "kitchen-sink", tmp_path / "items" / "ks")
    return tmp_path


def warm(project: Path):
    r = build(project / "items", project / "exports", project / "nothing",
              cache_dir=project / "cache", fail_on="error")
    assert r.exit_code == 0, r.lines
    return r


def cold(project: Path) -> dict[str, bytes]:
    out = project / "oracle"
    shutil.rmtree(out, ignore_errors=True)
    r = build(project / "items", out, project / "nothing", use_cache=False, fail_on="error")
    assert r.exit_code == 0, r.lines
    return files(out)


def exports(folder: Path) -> dict[str, bytes]:
    return {k: v for k, v in files(folder).items() if not k.startswith("preview/")}


def _items(project: Path) -> list[Path]:
    """The item files (not the stimuli)."""
    return sorted(p for p in (project / "items" / "ks").glob("*.yaml")
                  if p.name != "bank.yaml" and "type: stimulus" not in p.read_text())


def _edit(project: Path) -> set[str]:
    """Add a word to the first stem written on one line (plain or quoted)."""
    for item in _items(project):
        lines = item.read_text().splitlines(keepends=True)
        for n, line in enumerate(lines):
            value = line.strip()[len("stem:"):].strip()
            if line.strip().startswith("stem:") and value[:1] not in ("", "|", ">"):
                end = len(line.rstrip("\n")) - (1 if value[-1] in "'\"" else 0)
                lines[n] = line[:end] + " (edited)" + line[end:]
                item.write_text("".join(lines))
                return {_id(item)}
    raise AssertionError("no stem on one line")


def _id(path: Path) -> str:
    for line in path.read_text().splitlines():
        if line.startswith("id:"):
            return line.split(":", 1)[1].strip().strip("'\"")
    raise AssertionError(path)


def _add(project: Path) -> set[str]:
    source = next(p for p in _items(project) if "stimulus:" not in p.read_text()
                  and "](" not in p.read_text())
    old = _id(source)
    (source.parent / "zz-copy.yaml").write_text(
        source.read_text().replace(f"id: {old}", "id: zz-copy", 1))
    return {"zz-copy"}


def _delete(project: Path) -> set[str]:
    _items(project)[0].unlink()
    return set()


def _rename(project: Path) -> set[str]:
    item = next(p for p in _items(project) if "stimulus:" not in p.read_text())
    item.rename(item.with_name("renamed-" + item.name))
    return {_id(item.with_name("renamed-" + item.name))}


def _stimulus(project: Path) -> set[str]:
    """Edit the stimulus: the items that read it change, their own files do not."""
    f = project / "items" / "ks" / "12-probe-table.yaml"
    f.write_text(f.read_text().replace("title: Linear probing results",
                                       "title: Linear probing, results", 1))
    return {"ks-probe-count", "ks-probe-next"}


@pytest.mark.parametrize("change", [_edit, _add, _delete, _rename, _stimulus])
def test_after_a_change_the_files_equal_a_cold_build_and_unchanged_items_are_copied(
        project: Path, built, change):
    warm(project)
    assert exports(project / "exports") == exports_of(cold(project))
    built.clear()
    changed = change(project)
    warm(project)
    # only the changed items, and those whose bytes read a file (an image: never stored), are
    # built again
    rebuilt = {item for _, item in built}
    assert changed <= rebuilt
    assert rebuilt - changed <= _always_built(project), sorted(built)
    assert exports(project / "exports") == exports_of(cold(project))


def exports_of(found: dict[str, bytes]) -> dict[str, bytes]:
    return {k: v for k, v in found.items() if not k.startswith("preview/")}


def _always_built(project: Path) -> set[str]:
    """Items whose fragment is never stored: those that pack or embed a file."""
    return {_id(p) for p in _items(project) if "](" in p.read_text() or "<img" in p.read_text()
            or "src=" in p.read_text()}


def index_of(project: Path, path: Path, fmt: str) -> OutputIndex:
    """The runner's index of the English file `path` of the bank in `fmt`."""
    cache = Cache(project / "cache")
    coll = Collection(id="kitchen-sink", title={}, languages=("en", "id"), items=[],
                      category="kitchen-sink")
    export = ExportFile(coll, fmt, "en", path, cache=cache)
    index = OutputIndex.read(cache.load_plain(str(path), FRAGMENTS, _fragments_salt(export)))
    assert index is not None and index.places
    return index


FORMAT_OF = {"moodle": "moodle-xml", "qti21": "qti21", "gift": "gift"}


@pytest.mark.parametrize(("rel", "how"), [("moodle/kitchen-sink-en.xml", "edited"),
                                          ("qti21/kitchen-sink-en.zip", "edited"),
                                          ("gift/kitchen-sink-en.txt", "replaced")])
def test_a_previous_file_changed_since_it_was_written_is_not_trusted(project: Path, built,
                                                                     rel, how):
    warm(project)
    path = project / "exports" / rel
    fmt = FORMAT_OF[rel.split("/")[0]]
    if how == "edited":
        # one byte inside every fragment changed; size and mtime as they were
        st = path.stat()
        raw = bytearray(path.read_bytes())
        for offset, length, _ in index_of(project, path, fmt).places.values():
            if length:
                raw[offset + length // 2] ^= 0x01
        path.write_bytes(bytes(raw))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    else:  # replaced by another file of the same bytes (another inode)
        copy = path.with_name("copy")
        shutil.copy2(path, copy)
        os.replace(copy, path)
    _edit(project)  # the bank is exported again
    built.clear()
    warm(project)
    # every item of that file was built again
    assert {i for f, i in built if f == fmt} == {_id(p) for p in _items(project)
                                                if fmt != "gift" or _id(p) in _in_gift(path)}
    assert exports(project / "exports") == exports_of(cold(project))


def _in_gift(path: Path) -> set[str]:
    return {line.split("[id:", 1)[1].split("]", 1)[0] for line in path.read_text().splitlines()
            if line.startswith("// [id:")}


class Payload:
    """Runs code when unpickled (a planted record's attempt)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


@pytest.mark.parametrize("plant", ["garbage", "another key", "a class", "bad places"])
def test_a_planted_index_is_refused(project: Path, built, tmp_path: Path, plant: str):
    warm(project)
    cache = Cache(project / "cache")
    path = project / "exports" / "moodle" / "kitchen-sink-en.xml"
    real = index_of(project, path, "moodle-xml")
    export = ExportFile(Collection(id="", title={}, languages=("en",), items=[], category=""),
                        "moodle-xml", "en", path, cache=cache)
    target = cache._path(str(path), FRAGMENTS)
    marker = tmp_path / "marker"
    if plant == "garbage":
        target.write_bytes(b"not an index")
    elif plant == "another key":  # the layout of a real file, tagged with another key
        raw = target.read_bytes()
        target.write_bytes(raw[:-len(raw) // 2] + b"\0" * (len(raw) // 2))
    elif plant == "a class":  # authentic (the user's key), but naming a class
        cache.store_bytes(str(path), FRAGMENTS, _fragments_salt(export),
                          pickle.dumps(Payload(marker)))
    else:  # authentic, of the record's shape, every place outside the file or not a place
        places: dict[Any, Any] = {key: ((real.size, 5, ()) if n % 2 else ("x", 0, ()))
                                  for n, key in enumerate(real.places)}
        cache.store_plain(str(path), FRAGMENTS, _fragments_salt(export),
                          real._replace(places=places).plain())
    _edit(project)
    built.clear()
    warm(project)
    assert not marker.exists()
    assert {i for f, i in built if f == "moodle-xml"} == {_id(p) for p in _items(project)}
    assert exports(project / "exports") == exports_of(cold(project))


def test_builds_own_records_are_plain_data_and_a_planted_one_runs_nothing(project: Path,
                                                                          tmp_path: Path):
    """`dpassess build`'s own entry (file stamps, banks, outputs) is plain data: an authentic
    entry naming a class is refused without running it, and one of another shape is a miss;
    either way the build writes the bytes of a cold build."""
    from dpassess.runtime.records import BuildState

    warm(project)
    cache = Cache(project / "cache")
    (target,) = cache.root.glob("*.build")
    marker = tmp_path / "ran"
    raw = target.read_bytes()
    assert b"dpassess.app" not in raw and b"c__builtin__" not in raw  # names no class
    assert BuildState.read(("build", "wrong")) == BuildState({}, {}, {}, None)
    assert warm(project).written == []  # the entry is read: nothing to write
    for plant in ("a class", "another shape"):
        bad = pickle.dumps(Payload(marker)) if plant == "a class" else pickle.dumps(("x", 1))
        cache.store_bytes(str(project / "exports"), "build", _build_salt(project), bad)
        assert target.read_bytes().endswith(bad)  # in its place, with a valid tag
        r = warm(project)
        assert r.written and r.unchanged == []  # refused: everything written again
        assert not marker.exists()
        assert exports(project / "exports") == exports_of(cold(project))


def _build_salt(project: Path) -> bytes:
    """The salt `build` gives its own entry (as `dpassess.app.build.build` computes it)."""
    import dpassess
    from dpassess.lint import load_config
    from dpassess.runtime.cache import salt

    config = load_config(project / "items").override(None, None, "error")
    settings = repr((config, dpassess.__version__))
    return salt(b"", ("build", str(project / "items"), str(project / "exports"), settings))
