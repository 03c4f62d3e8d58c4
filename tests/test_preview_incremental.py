"""The preview's item pages kept in the cache: after an edit, an addition, a deletion or a
rename, only the pages whose bytes can change are rendered again, and the site is byte for byte
the one a preview without a cache writes (the oracle: a cold preview of the same banks)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import dpassess.preview.pages as pages
from conftest import ROOT, files
from dpassess.app.preview import preview
from dpassess.runtime.cache import Cache

KS = ROOT / "tests" / "banks" / "kitchen-sink"
MATHS = ROOT / "tests" / "banks" / "maths"


@pytest.fixture
def rendered(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The item pages rendered (not taken from the cache), by path, as they are rendered."""
    seen: list[str] = []
    real = pages._item_page

    def counting(site, view, item, here, uses):  # type: ignore[no-untyped-def]
        seen.append(here)
        return real(site, view, item, here, uses)

    monkeypatch.setattr(pages, "_item_page", counting)
    return seen


def test_a_rebuild_renders_only_the_pages_that_change_and_gives_the_cold_bytes(
        tmp_path: Path, rendered: list[str]) -> None:
    banks = tmp_path / "banks"
    shutil.copytree(KS, banks / "kitchen-sink")
    shutil.copytree(MATHS, banks / "maths")
    roots = [banks / "kitchen-sink", banks / "maths"]
    cache = Cache(tmp_path / "cache")
    out, step = tmp_path / "site", 0

    def cold() -> dict[str, bytes]:
        """The oracle: the site as a preview without a cache writes it."""
        nonlocal step
        step += 1
        there = tmp_path / f"cold-{step}"
        preview(roots, there)
        rendered.clear()
        return files(there)

    def rebuild() -> tuple[dict[str, bytes], set[str]]:
        rendered.clear()
        preview(roots, out, cache=Cache(tmp_path / "cache"))
        return files(out), set(rendered)

    before = cold()
    preview(roots, out, cache=cache)
    assert files(out) == before
    # a page that shows an image reads a file outside the item: it is always rendered again
    images = {p for p, data in before.items() if p.startswith("items/") and b"<img" in data}
    assert images
    site, again = rebuild()
    assert site == before
    assert again == images

    def changed(old: dict[str, bytes], new: dict[str, bytes]) -> set[str]:
        return {p for p in new if p.startswith("items/") and old.get(p) != new[p]}

    # one item edited: its page only
    fifo = banks / "kitchen-sink" / "08-fifo-name.yaml"
    fifo.write_text(re.sub(r"(\n\s+stem: *[^\n|>]+)", r"\1 (edited)", fifo.read_text("utf-8"),
                           count=1), encoding="utf-8")
    now = cold()
    site, again = rebuild()
    assert site == now
    assert changed(before, now) == {"items/kitchen-sink/ks-fifo-name.html"}
    assert again == images | {"items/kitchen-sink/ks-fifo-name.html"}

    # a copy of an item under a new id: its page, and the original's (a near-duplicate
    # finding now: its item file is unchanged, its findings are not)
    before = now
    bfs = banks / "kitchen-sink" / "03-bfs.yaml"
    (bfs.parent / "00-bfs-copy.yaml").write_text(
        bfs.read_text("utf-8").replace("id: ks-bfs", "id: ks-bfs-copy", 1), encoding="utf-8")
    now = cold()
    site, again = rebuild()
    assert site == now
    assert "items/kitchen-sink/ks-bfs.html" in changed(before, now)
    assert again == images | changed(before, now)

    # the copy deleted: the original's page changes back, nothing else is rendered
    before = now
    (bfs.parent / "00-bfs-copy.yaml").unlink()
    now = cold()
    site, again = rebuild()
    assert site == now
    assert again == images | changed(before, now)

    # an item's file renamed: its page reads its path (in the warnings), so it is rendered
    # again; the bytes are the cold ones
    before = now
    fifo.rename(fifo.with_name("renamed-08-fifo-name.yaml"))
    now = cold()
    site, again = rebuild()
    assert site == now
    assert again == images | changed(before, now) | {"items/kitchen-sink/ks-fifo-name.html"}


def test_build_hands_the_bank_it_linted_to_the_preview(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """After an edit `dpassess build` loads and lints the one bank once (not again for the
    preview), and its preview is the one a build without a cache writes."""
    import dpassess.lint.incremental as incremental
    from dpassess.app.build import build

    items = tmp_path / "items"
    shutil.copytree(KS, items / "kitchen-sink")
    (tmp_path / "blueprints").mkdir()
    cache = tmp_path / "cache"
    assert build(items, tmp_path / "out", tmp_path / "blueprints", cache_dir=cache).exit_code == 0
    fifo = items / "kitchen-sink" / "08-fifo-name.yaml"
    fifo.write_text(fifo.read_text("utf-8").replace("(FIFO)?", "(FIFO), edited?"),
                    encoding="utf-8")
    calls: list[object] = []
    real = incremental.load_and_lint

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(incremental, "load_and_lint", counting)
    assert build(items, tmp_path / "out", tmp_path / "blueprints", cache_dir=cache).exit_code == 0
    assert len(calls) == 1
    monkeypatch.undo()
    assert build(items, tmp_path / "cold", tmp_path / "blueprints",
                 use_cache=False).exit_code == 0
    edited = files(tmp_path / "out" / "preview")
    assert b"(FIFO), edited?" in edited["items/kitchen-sink/ks-fifo-name.html"]
    assert edited == files(tmp_path / "cold" / "preview")


@pytest.fixture
def rows(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The index rows made (not taken from the earlier index page), by item id."""
    seen: list[str] = []
    real = pages._index_row

    def counting(site, view, item, here):  # type: ignore[no-untyped-def]
        seen.append(item.id)
        return real(site, view, item, here)

    monkeypatch.setattr(pages, "_index_row", counting)
    return seen


def test_build_after_an_edit_an_addition_a_deletion_and_a_rename_writes_the_cold_preview(
        tmp_path: Path, rows: list[str]) -> None:
    """`dpassess build` through its cache (the item files' content hashes key the pages and
    rows) gives, after each kind of change, the preview a build without a cache writes, byte
    for byte; and makes again only the index rows of the items whose row reads something that
    changed (the oracle: a cold build; which rows change: the cold sites compared)."""
    from dpassess.app.build import build

    items = tmp_path / "items"
    shutil.copytree(KS, items / "kitchen-sink")
    (tmp_path / "blueprints").mkdir()
    cache = tmp_path / "cache"
    out = tmp_path / "out"
    step = 0

    def cold() -> dict[str, bytes]:
        nonlocal step
        step += 1
        there = tmp_path / f"cold-{step}"
        assert build(items, there, tmp_path / "blueprints", use_cache=False,
                     fail_on="error").exit_code == 0
        return files(there / "preview")

    def rebuild() -> tuple[dict[str, bytes], set[str]]:
        rows.clear()
        assert build(items, out, tmp_path / "blueprints", cache_dir=cache,
                     fail_on="error").exit_code == 0
        return files(out / "preview"), set(rows)

    def index_rows(site: dict[str, bytes]) -> dict[str, bytes]:
        """Each item's row of the index page (read with lxml: the oracle of what changed)."""
        import lxml.html

        doc = lxml.html.fromstring(site["index.html"])
        return {tr.find("td/a").text: lxml.html.tostring(tr) for tr in doc.iter("tr")
                if tr.find("td/a") is not None}

    def changed(old: dict[str, bytes], new: dict[str, bytes]) -> set[str]:
        before, after = index_rows(old), index_rows(new)
        return {k for k in after if before.get(k) != after[k]}

    # images: their rows read a file outside the item, so they are made every time
    with_images = {k for k, row in index_rows(cold()).items() if b"<img" in row}
    before = cold()
    assert rebuild()[0] == before
    site, again = rebuild()
    assert site == before
    assert again == with_images

    fifo = items / "kitchen-sink" / "08-fifo-name.yaml"
    fifo.write_text(fifo.read_text("utf-8").replace("(FIFO)?", "(FIFO), edited?"),
                    encoding="utf-8")
    now = cold()
    site, again = rebuild()
    assert site == now
    assert changed(before, now) == {"ks-fifo-name"}
    assert again == with_images | {"ks-fifo-name"}

    before = now
    bfs = items / "kitchen-sink" / "03-bfs.yaml"
    (bfs.parent / "00-bfs-copy.yaml").write_text(
        bfs.read_text("utf-8").replace("id: ks-bfs", "id: ks-bfs-copy", 1), encoding="utf-8")
    now = cold()
    site, again = rebuild()
    assert site == now
    assert {"ks-bfs", "ks-bfs-copy"} <= changed(before, now)  # a near-duplicate finding
    assert again == with_images | changed(before, now)

    before = now
    (bfs.parent / "00-bfs-copy.yaml").unlink()
    now = cold()
    site, again = rebuild()
    assert site == now
    assert again == with_images | changed(before, now)

    # a renamed file: the item's page and row read its path (the key holds it)
    before = now
    fifo.rename(fifo.with_name("renamed-08-fifo-name.yaml"))
    now = cold()
    site, again = rebuild()
    assert site == now
    assert again == with_images | changed(before, now) | {"ks-fifo-name"}


def test_a_page_changed_on_disk_is_written_again(tmp_path: Path) -> None:
    """The pages are trusted by their stat: a page or an index page someone edited (or
    touched) since is made and written again, and the site is the cold one."""
    banks = tmp_path / "banks"
    shutil.copytree(KS, banks / "kitchen-sink")
    roots = [banks / "kitchen-sink"]
    preview(roots, tmp_path / "cold")
    expected = files(tmp_path / "cold")
    out = tmp_path / "site"
    preview(roots, out, cache=Cache(tmp_path / "cache"))
    page = out / "items" / "kitchen-sink" / "ks-fifo-name.html"
    page.write_bytes(page.read_bytes().replace(b"FIFO", b"LIFO"))
    index = out / "index.html"
    index.write_bytes(index.read_bytes().replace(b"ks-bfs", b"ks-xyz"))
    report = preview(roots, out, cache=Cache(tmp_path / "cache"))
    assert files(out) == expected
    assert {page, index} <= set(report.written)


def test_the_index_written_whole_is_the_spliced_one(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """When the placeholder rows' bytes cannot be found once (here: forced), the index page is
    written whole from its rows: the same bytes as spliced; a bank of one item too."""
    banks = tmp_path / "banks"
    shutil.copytree(KS, banks / "kitchen-sink")
    one = banks / "one"
    one.mkdir()
    shutil.copy(KS / "bank.yaml", one / "bank.yaml")
    shutil.copy(KS / "08-fifo-name.yaml", one / "08-fifo-name.yaml")
    preview([banks / "kitchen-sink"], tmp_path / "spliced")
    preview([one], tmp_path / "one")
    monkeypatch.setattr(pages, "_split", lambda page: None)
    preview([banks / "kitchen-sink"], tmp_path / "whole", cache=Cache(tmp_path / "cache"))
    assert files(tmp_path / "whole") == files(tmp_path / "spliced")
    monkeypatch.undo()
    assert b"ks-fifo-name" in (tmp_path / "one" / "index.html").read_bytes()
    # and a rebuild after the whole page took no row from it
    preview([banks / "kitchen-sink"], tmp_path / "whole", cache=Cache(tmp_path / "cache"))
    assert files(tmp_path / "whole") == files(tmp_path / "spliced")
