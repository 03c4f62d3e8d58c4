"""`dpassess build` twice: what did not change is neither rebuilt nor rewritten, and every file
is byte-identical to a cold build without the cache (the oracle) after edits, deletions,
renames, a changed dpassess version, a tampered output and a corrupted cache."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import ROOT, files
from dpassess.app.build import build
from dpassess.app.scaffold import init_bank


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
    # the findings and warnings of the build that wrote the files are reported again
    assert second.warnings == first.warnings
    assert [x for x in second.lines if not x.startswith(("wrote", "unchanged", "checked"))] == \
        [x for x in first.lines if not x.startswith(("wrote", "unchanged", "checked"))]


def test_one_edited_item_rebuilds_only_the_files_it_appears_in(project: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    warm(project, cache)
    item = project / "items" / "second" / "01-middle-value.yaml"
    item.write_text(item.read_text().replace("Sort the values", "First sort the values"))
    r = warm(project, cache)
    written = {p.relative_to(project / "exports").as_posix() for p in r.written}
    assert written and all("second-" in w for w in written), written
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


def test_a_corrupted_cache_is_a_miss(project: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    warm(project, cache)
    for f in cache.glob("*.build"):
        f.write_bytes(f.read_bytes()[:40] + b"\x00garbage")
    r = warm(project, cache)
    assert r.written and not r.unchanged
    assert files(project / "exports") == cold(project, tmp_path / "oracle")
