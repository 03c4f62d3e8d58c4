"""Splicing (`dpassess.export.runner`): when only some items of an export changed, and nothing
the file's own parts read of them (`Format.glue`), the runner writes the previous file with
the changed items' fragments built again in place of theirs (zip entries rewritten with their
new CRC and size, the central directory written again) instead of running the assembly. The
oracle is the same file exported cold: the bytes and warnings are the same; a zip passes
zipfile's own check; a previous file changed since it was written is not trusted."""

from __future__ import annotations

import dataclasses
import io
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from conftest import SEED_BANK
from dpassess import UsageError, load_bank
from dpassess.diagnostics import dedupe
from dpassess.export import EXPORTERS, Collection
from dpassess.export import runner as runner_module
from dpassess.export.runner import ExportFile, write_exports
from dpassess.model import Item
from dpassess.runtime.cache import Cache
from strategies import any_items
from test_export_fragments import FILES, collections


def write(c: Collection, path: Path, cache: Cache | None, fmt: str, lang: str,
          opts: dict[str, str]) -> list[Any]:
    (warnings,) = write_exports([ExportFile(c, fmt, lang, path, opts, cache=cache)], jobs=1)
    return warnings


@pytest.fixture
def spliced(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each write the runner tried to splice was spliced, in order."""
    seen: list[bool] = []
    real = runner_module._splice

    def spy(*args: Any) -> Any:
        done = real(*args)
        seen.append(done is not None)
        return done

    monkeypatch.setattr(runner_module, "_splice", spy)
    return seen


def edited(item: Item, how: str) -> Item:
    """`item` with one thing changed: its text (only its fragments read it), or something
    the file's own parts read too."""
    if how == "stem":
        return item.model_copy(update={"text": {
            la: c.model_copy(update={"stem": c.stem + " (edited)"}) for la, c in item.text.items()}})
    if how == "topic":
        return item.model_copy(update={"topic": item.topic + "-moved"})
    if how == "points":
        return item.model_copy(update={"points": item.points + 1})
    if how == "stimulus":
        return item.model_copy(update={"stimulus": None if item.stimulus else "s1"})
    assert how == "language"  # one language less, when it has two
    first = next(iter(item.text))
    return item.model_copy(update={"text": {first: item.text[first]}})


def check_zip(data: bytes) -> None:
    if data[:2] == b"PK":
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            assert z.testzip() is None


@settings(max_examples=80)
@given(st.data())
def test_an_edited_item_written_through_the_previous_file_gives_the_bytes_of_a_cold_export(
        data):
    pool = data.draw(st.lists(any_items(), min_size=1, max_size=4))
    fmt, lang, opts = data.draw(st.sampled_from(FILES))
    before = data.draw(collections(pool))
    if data.draw(st.booleans()):  # each item once (two items of one key are never spliced)
        unique = list({i.id: i for i in before.items}.values())
        before = dataclasses.replace(before, items=unique)
    at = data.draw(st.integers(0, len(before.items) - 1))
    how = data.draw(st.sampled_from(["stem", "stem", "topic", "points", "stimulus",
                                     "language"]))
    items = list(before.items)
    items[at] = edited(items[at], how)
    after = Collection(before.id, before.title, before.languages, items, before.category,
                       before.default_language, before.paths, before.stimuli)
    try:
        EXPORTERS[fmt].export(before, lang, **opts)
        want = EXPORTERS[fmt].export(after, lang, **opts)
    except UsageError:
        assume(False)
        return
    with tempfile.TemporaryDirectory() as tmp:
        cache = Cache(Path(tmp) / "cache")
        path = Path(tmp) / f"out{EXPORTERS[fmt].suffix}"
        write(before, path, cache, fmt, lang, opts)
        warnings = write(after, path, cache, fmt, lang, opts)
        assert path.read_bytes() == want.data
        assert warnings == dedupe(want.warnings)
        check_zip(want.data)
        # and once more, from the spliced file and its index
        assert write(before, path, cache, fmt, lang, opts) == dedupe(
            EXPORTERS[fmt].export(before, lang, **opts).warnings)
        assert path.read_bytes() == EXPORTERS[fmt].export(before, lang, **opts).data


@pytest.fixture(scope="module")
def seed() -> Collection:
    return Collection.from_bank(load_bank(SEED_BANK))


def _with(c: Collection, at: int, item: Item) -> Collection:
    items = list(c.items)
    items[at] = item
    return Collection(c.id, c.title, c.languages, items, c.category, c.default_language,
                      c.paths, c.stimuli)


@pytest.mark.parametrize(("fmt", "lang", "opts"), FILES)
def test_an_item_whose_text_changed_is_spliced_in_and_one_whose_glue_changed_is_not(
        tmp_path: Path, seed: Collection, spliced: list[bool], fmt, lang, opts):
    # (the text formats' categories read the topic; the packages' tests and quizzes read the
    # points)
    moved = "topic" if fmt in ("gift", "moodle-xml") else "points"
    cache = Cache(tmp_path / "cache")
    path = tmp_path / f"out{EXPORTERS[fmt].suffix}"
    at = len(seed.items) // 2
    write(seed, path, cache, fmt, lang, opts)
    for how, splices in [("stem", True), (moved, False), ("stem", True)]:
        after = _with(seed, at, edited(seed.items[at], how))
        want = EXPORTERS[fmt].export(after, lang, **opts)
        spliced.clear()
        assert write(after, path, cache, fmt, lang, opts) == dedupe(want.warnings)
        assert spliced == [splices], how
        assert path.read_bytes() == want.data
        check_zip(want.data)
        seed = after


@pytest.mark.parametrize("fmt", ["gift", "qti21"])
def test_a_previous_file_changed_since_it_was_written_is_not_spliced(
        tmp_path: Path, seed: Collection, spliced: list[bool], fmt):
    cache = Cache(tmp_path / "cache")
    path = tmp_path / f"out{EXPORTERS[fmt].suffix}"
    write(seed, path, cache, fmt, "en", {})
    # every byte changed but the size and mtime: only the ctime tells
    st = path.stat()
    path.write_bytes(bytes(b ^ 0x20 for b in path.read_bytes()))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    at = len(seed.items) // 2
    after = _with(seed, at, edited(seed.items[at], "stem"))
    write(after, path, cache, fmt, "en", {})
    assert spliced == []  # (no previous file to splice)
    assert path.read_bytes() == EXPORTERS[fmt].export(after, "en").data


@settings(max_examples=60)
@given(st.lists(st.binary(min_size=1, max_size=40), min_size=1, max_size=5), st.data())
def test_a_zip_spliced_has_the_bytes_of_the_zip_of_the_new_entries(contents, data):
    """`package.splice` against `zip_bytes` of the entries with the ranges replaced; a range
    across two entries is refused, with nothing written."""
    import mmap

    from dpassess.export.qti.package import splice, zip_bytes

    entries = {f"e{n}.xml": c for n, c in enumerate(contents)}
    old = zip_bytes(entries)
    with zipfile.ZipFile(io.BytesIO(old)) as z:
        where = {i.filename: i.header_offset + 30 + len(i.filename) for i in z.infolist()}
    name = data.draw(st.sampled_from(sorted(entries)))
    body = entries[name]
    start = data.draw(st.integers(0, len(body) - 1))
    length = data.draw(st.integers(0, len(body) - start))
    new = data.draw(st.binary(max_size=30))
    across = data.draw(st.booleans()) and name != max(entries)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "old.zip"
        source.write_bytes(old)
        with open(source, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            out = io.BytesIO()

            def copy(at: int, count: int) -> None:
                out.write(m[at:at + count])

            offset = where[name] + start
            done = splice(m, [(offset, len(body) - start + 1 if across else length, new)],
                          out, copy)  # type: ignore[arg-type]
    if across:
        assert not done and out.getvalue() == b""
        return
    assert done
    want = zip_bytes({**entries, name: body[:start] + new + body[start + length:]})
    assert out.getvalue() == want
    check_zip(want)
