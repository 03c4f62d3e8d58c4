"""`dpassess build` twice: what did not change is neither rebuilt nor rewritten, and every file
is byte-identical to a cold build without the cache (the oracle) after edits, deletions,
renames, a changed dpassess version, a tampered output and a corrupted cache."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, files
from dpassess.app.build import build
from dpassess.app.scaffold import init_bank
from dpassess.diagnostics import UsageError
from dpassess.export import EXPORTERS


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The seed bank with its blueprint, and a second small bank, as a user's repository."""
    shutil.copytree(ROOT / "items", tmp_path / "items")
    shutil.copytree(ROOT / "blueprints", tmp_path / "blueprints")
    init_bank(tmp_path / "items" / "second", ["en"])
    return tmp_path


def cold(project: Path, out: Path) -> dict[str, bytes]:
    """A build from nothing, without the cache: the oracle every warm build must equal."""
    r = build(project / "items", out, project / "blueprints", use_cache=False)
    assert r.exit_code == 0, r.lines
    return files(out)


def warm(project: Path, cache: Path):
    r = build(project / "items", project / "exports", project / "blueprints", cache_dir=cache)
    assert r.exit_code == 0, r.lines
    return r


def stamps(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_mtime_ns
            for p in root.rglob("*") if p.is_file()}


def test_an_unchanged_bank_is_neither_rebuilt_nor_rewritten(project: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    first = warm(project, cache)
    assert first.written and not first.unchanged
    assert files(project / "exports") == cold(project, tmp_path / "oracle")
    before = stamps(project / "exports")
    second = warm(project, cache)
    assert second.written == []
    assert sorted(map(str, second.unchanged)) == sorted(map(str, first.written))
    assert stamps(project / "exports") == before, "an unchanged output was rewritten"
    # lint's findings are reported again (they are about the bank); the export warnings of
    # the files left alone are not repeated, but counted in one note
    assert first.warnings and second.warnings == []
    assert second.replayed == first.warnings
    assert second.notes == [f"{len(first.warnings)} export warnings about the unchanged files, "
                            "given when they were written, are not repeated (`dpassess build "
                            "--no-cache` shows them again)"]
    assert [x for x in second.lines if not x.startswith(("wrote", "unchanged", "checked"))] == \
        [x for x in first.lines if not x.startswith(("wrote", "unchanged", "checked"))]


def test_one_edited_item_rebuilds_only_the_files_it_appears_in(project: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    warm(project, cache)
    item = project / "items" / "second" / "01-middle-value.yaml"
    item.write_text(item.read_text().replace("Sort the values", "First sort the values"))
    r = warm(project, cache)
    written = {p.relative_to(project / "exports").as_posix() for p in r.written}
    # the preview is one site over every bank: built again whole (on disk only the pages
    # whose bytes changed are rewritten)
    pages = {w for w in written if w.startswith("preview/")}
    assert written - pages and all("second-" in w for w in written - pages), written
    assert files(project / "exports") == cold(project, tmp_path / "oracle")


@pytest.mark.parametrize("change", ["delete", "rename", "edit-seed", "bank-file"])
def test_after_a_change_the_outputs_equal_a_cold_build(project: Path, tmp_path: Path, change):
    cache = tmp_path / "cache"
    warm(project, cache)
    seed = project / "items" / "data-parallelism"
    if change == "delete":
        (seed / "08-gradient-accumulation.yaml").unlink(missing_ok=False)
        shutil.rmtree(project / "blueprints")  # the blueprint asks for all 8 items
    elif change == "rename":
        (seed / "02-sync-operation.yaml").rename(seed / "09-sync-operation.yaml")
    elif change == "edit-seed":
        f = next(seed.glob("03-*.yaml"))
        f.write_text(f.read_text().replace("tags: [", "tags: [edited, ", 1))
    else:
        f = project / "items" / "second" / "bank.yaml"
        f.write_text(f.read_text().replace("My first bank", "Statistics 101"))
    r = warm(project, cache)
    assert r.written
    got, oracle = files(project / "exports"), cold(project, tmp_path / "oracle")
    if change == "delete":  # the forms of the removed blueprint stay, as after any build
        got = {k: v for k, v in got.items() if not k.startswith("forms/")}
    assert got == oracle


def test_a_changed_dpassess_version_rebuilds_everything(project, tmp_path, monkeypatch):
    import dpassess

    cache = tmp_path / "cache"
    first = warm(project, cache)
    monkeypatch.setattr(dpassess, "__version__", "99.0.0")
    r = warm(project, cache)
    assert sorted(r.written) == sorted(first.written) and not r.unchanged


def test_a_tampered_or_missing_output_is_written_again(project: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    warm(project, cache)
    oracle = cold(project, tmp_path / "oracle")
    gift = next((project / "exports" / "gift").glob("second-en.txt"))
    gift.write_bytes(gift.read_bytes()[:-1] + b"X")
    (project / "exports" / "moodle" / "data-parallelism-id.xml").unlink()
    form = next((project / "exports" / "forms").rglob("*.html"))
    form.write_text("tampered")
    r = warm(project, cache)
    assert r.written
    assert files(project / "exports") == oracle


def test_an_output_touched_since_it_was_written_is_written_again(project: Path, tmp_path: Path):
    """Outputs are known by size, mtime and inode (not read back to hash them): a touched file
    is written again, with the same bytes."""
    cache = tmp_path / "cache"
    warm(project, cache)
    before = files(project / "exports")
    gift = next((project / "exports" / "gift").glob("second-en.txt"))
    st = gift.stat()
    os.utime(gift, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    r = warm(project, cache)
    assert gift in r.written and r.unchanged
    assert files(project / "exports") == before


def test_a_corrupted_cache_is_a_miss(project: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    warm(project, cache)
    for f in cache.glob("*.build"):
        f.write_bytes(f.read_bytes()[:40] + b"\x00garbage")
    r = warm(project, cache)
    assert r.written and not r.unchanged
    assert files(project / "exports") == cold(project, tmp_path / "oracle")


def test_an_edit_builds_that_item_alone_even_a_comment(project, tmp_path, built):
    """An item's fragments are keyed on its file's content hash (what build hashed for the
    bank's key), not on its model: an edit, even to a comment, builds that item alone."""
    cache = tmp_path / "cache"
    warm(project, cache)
    assert {fmt for fmt, _ in built} == set(EXPORTERS)
    item = project / "items" / "second" / "01-middle-value.yaml"
    item.write_text(item.read_text().replace("Sort the values", "First sort the values"))
    built.clear()
    r = warm(project, cache)
    # every file of the bank is written again; in each, only the edited item is built
    assert len([p for p in r.written if "second-" in p.name]) == 6
    assert sorted(set(built)) == [(fmt, "middle-value")
                                  for fmt in ("canvas", "gift", "moodle-xml", "qti21")]
    assert files(project / "exports") == cold(project, tmp_path / "oracle")
    item.write_text(item.read_text() + "# a comment changes no question\n")
    built.clear()
    r = warm(project, cache)
    assert len([p for p in r.written if "second-" in p.name]) == 6
    assert sorted(set(built)) == [(fmt, "middle-value")
                                  for fmt in ("canvas", "gift", "moodle-xml", "qti21")]
    assert files(project / "exports") == cold(project, tmp_path / "oracle")


@pytest.mark.parametrize("damage", ["none", "corrupt", "delete", "version"])
def test_without_intact_fragments_every_item_is_built_as_cold(project, tmp_path, built,
                                                              monkeypatch, damage):
    import dpassess
    from dpassess import load_bank

    cache = tmp_path / "cache"
    warm(project, cache)
    second = {e.item.id for e in load_bank(project / "items" / "second").entries}
    for f in cache.glob("*.fragments"):
        if damage == "corrupt":
            f.write_bytes(f.read_bytes()[:-3] + b"xyz")
        elif damage == "delete":
            f.unlink()
    if damage == "version":
        monkeypatch.setattr(dpassess, "__version__", "99.0.0")
    bank = project / "items" / "second" / "bank.yaml"
    bank.write_text(bank.read_text() + "# the bank is exported again\n")
    # a new version rebuilds every bank; otherwise the second alone is exported again
    everything = sorted({b for b in built if damage == "version" or b[1] in second})
    built.clear()
    warm(project, cache)
    assert sorted(set(built)) == ([] if damage == "none" else everything)
    assert files(project / "exports") == cold(project, tmp_path / "oracle")


def test_a_changed_image_alone_rebuilds_the_exports_that_carry_it(project: Path, tmp_path: Path):
    """An item's image is an input of its exports although no item file changes."""
    shutil.copytree(ROOT / "tests" / "banks" / "kitchen-sink", project / "items" / "ks")
    cache = tmp_path / "cache"
    warm(project, cache)
    image = project / "items" / "ks" / "img" / "hash-table.png"
    image.write_bytes((project / "items" / "ks" / "img" / "en" / "stable.png").read_bytes())
    r = warm(project, cache)
    written = {p.relative_to(project / "exports").as_posix() for p in r.written}
    assert any(w.startswith("qti21/kitchen-sink-") for w in written), written
    assert files(project / "exports") == cold(project, tmp_path / "oracle")


def test_a_new_statistics_record_assembles_the_forms_again(project: Path, tmp_path: Path):
    """The forms balance difficulty by the recorded p of each item (the bank's stats/
    records): a new record is an input of the forms, as the oracle without a cache shows."""
    import json

    from dpassess.stats.history import HISTORY_DIR, SCHEMA

    cache = tmp_path / "cache"
    warm(project, cache)
    seed = project / "items" / "data-parallelism"
    # each item's p inside its label's band (hard below 0.30, easy above 0.70): no finding
    near = {"easy": 0.81, "medium": 0.52, "hard": 0.22}
    figures = {}
    for f in sorted(seed.glob("0*.yaml")):
        fields = dict(line.split(":", 1) for line in f.read_text().splitlines()
                      if line.startswith(("id:", "difficulty:")))
        figures[fields["id"].strip()] = {"n": 40, "p": near[fields["difficulty"].strip()]}
    (seed / HISTORY_DIR).mkdir()
    (seed / HISTORY_DIR / "2026-11-01-quiz.json").write_text(json.dumps({
        "schema": SCHEMA, "administration": {"id": "2026-11-01-quiz", "date": "2026-11-01"},
        "items": figures}))
    r = warm(project, cache)
    assert any("forms/" in p.as_posix() for p in r.written), r.lines
    assert files(project / "exports") == cold(project, tmp_path / "oracle")


def test_changed_lint_settings_lint_and_build_again(project: Path, tmp_path: Path):
    """The build's key holds the settings file as written (a build of unchanged banks does not
    read them through the rules): a changed table lints and writes again, and a table that
    became wrong is refused, as on a cold build."""
    cache = tmp_path / "cache"
    warm(project, cache)
    assert warm(project, cache).written == []
    (project / "dpassess.toml").write_text('[lint]\nignore = ["WR001"]\n')
    again = warm(project, cache)
    assert again.written and not any("data-parallelism" in str(p) for p in again.unchanged)
    assert files(project / "exports") == cold(project, tmp_path / "oracle")
    (project / "dpassess.toml").write_text('[lint]\nignroe = ["WR001"]\n')
    with pytest.raises(UsageError, match="unknown key 'ignroe'"):
        warm(project, cache)


def test_an_unchanged_build_imports_neither_the_model_nor_the_rules(project: Path,
                                                                     tmp_path: Path):
    """What a build of unchanged banks costs is mostly start-up: it decides from the file
    stamps and the settings file, before pydantic, the model or the lint rules are imported."""
    shutil.rmtree(project / "blueprints")  # (the forms' blueprint is read with PyYAML)
    code = ("import sys\nfrom dpassess.cli import main\n"
            "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "print(sorted(m for m in sys.modules if m.startswith(('pydantic', 'dpassess.model',"
            " 'dpassess.lint', 'yaml'))))")
    argv = [sys.executable, "-c", code, "build", "--cache-dir", str(tmp_path / "cache")]
    first = subprocess.run(argv, cwd=project, capture_output=True, text=True, check=True)
    assert "pydantic" in first.stdout.rstrip().splitlines()[-1]  # it loaded and linted
    run = subprocess.run(argv, cwd=project, capture_output=True, text=True, check=True)
    assert "unchanged: " in run.stdout
    assert run.stdout.rstrip().splitlines()[-1] == "[]"


def test_a_build_gives_back_what_it_froze(project: Path, tmp_path: Path):
    """The loaded banks are hidden from the cyclic collector while the build runs (gc.freeze):
    after it, nothing stays frozen; a caller's own freeze is left as it was."""
    import gc

    shutil.rmtree(project / "blueprints")
    assert gc.get_freeze_count() == 0
    warm(project, tmp_path / "cache")
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        (project / "items" / "second" / "01-middle-value.yaml").write_text(
            (project / "items" / "second" / "01-middle-value.yaml").read_text() + "\n# edited\n")
        warm(project, tmp_path / "cache")
        assert gc.get_freeze_count() > 0  # (less than before: some frozen objects were freed)
    finally:
        gc.unfreeze()
