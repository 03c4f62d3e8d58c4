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
