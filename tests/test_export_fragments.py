"""Per-item fragments (`dpassess.export.runner.FragmentStore`): an export given the fragments of any earlier
export writes the same bytes and warnings as one without them (the oracle: the exporter run
cold), whatever changed in between; unchanged items are taken from the fragments; an item whose
bytes read another file (an image) is built every time; a damaged entry is a miss."""

from __future__ import annotations

import io
import marshal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import SEED_BANK
from dpassess import UsageError, load_bank
from dpassess.export import EXPORTERS, MULTI, Collection, ExportResult
from dpassess.export.runner import FragmentStore as Fragments
from dpassess.model import Content, Item, Option, Stimulus, parse_item
from dpassess.runtime.cache import Cache
from strategies import any_items, bank_config, write_bank

#: Every file a two-language bank exports: (format, language, options).
FILES = [(fmt, lang, opts)
         for fmt in EXPORTERS
         for lang in ["id", "en", *([MULTI] if EXPORTERS[fmt].multi else [])]
         for opts in ([{}, {"maths": "tex"}] if fmt == "qti21" else [{}])]


def export(c: Collection, fmt: str, lang: str, opts: dict[str, Any], memo: Fragments | None = None):
    if memo is None:
        return EXPORTERS[fmt].export(c, lang, **opts)
    buf = io.BytesIO()
    warnings = memo.write(EXPORTERS[fmt], c, lang, buf, opts)
    return ExportResult(buf.getvalue(), warnings)


def stored(memo: Fragments) -> bytes:
    """What the cache gives the next export: what `dumps()` gave."""
    return memo.dumps()


def count(memo: Fragments) -> int:
    """How many fragments `memo` would store."""
    return len(marshal.loads(memo.dumps()))


def per_item(fmt: str) -> int:
    """Fragments per item: QTI keeps an item's file and its manifest resource."""
    return 2 if fmt == "qti21" else 1


def stimulus(sid: str, words: str) -> Stimulus:
    return Stimulus.model_validate({"type": "stimulus", "id": sid, "text": {
        "en": {"text": f"Read this: {words}."}, "id": {"text": f"Baca ini: {words}."}}})


@st.composite
def collections(draw, pool: list[Item]) -> Collection:
    """A collection of items drawn from `pool` (repeats: the same id twice), in any order, with
    any of the variable context an item's bytes read: the collection's id and titles, each
    item's source path and stimulus (present, changed or missing)."""
    chosen = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=6))
    chosen = [i.model_copy(update={"stimulus": draw(st.sampled_from([None, "s1", "s2"]))})
              for i in chosen]
    return Collection(
        id=draw(st.sampled_from(["bank", "other"])),
        title={"en": draw(st.sampled_from(["Bank", "Other"])), "id": "Bank"},
        languages=("id", "en"), items=chosen, category="bank",
        default_language=draw(st.sampled_from(["id", "en"])),
        paths={i.id: draw(st.sampled_from(["a/x.yaml", "b/x.yaml"])) for i in chosen},
        stimuli={"s1": stimulus("s1", draw(st.sampled_from(["one", "two"])))},
    )


@given(st.data())
def test_fragments_of_any_earlier_export_give_the_bytes_of_a_cold_export(data):
    pool = data.draw(st.lists(any_items(), min_size=1, max_size=4))
    # the same id with other content: an edited item
    pool += [other.model_copy(update={"id": pool[0].id}) for other in pool[1:2]]
    before, after = data.draw(collections(pool)), data.draw(collections(pool))
    fmt, lang, opts = data.draw(st.sampled_from(FILES))
    memo = Fragments()
    outcome(lambda: export(before, fmt, lang, opts, memo))
    # the options of the earlier export may differ too (QTI's maths)
    _, _, opts = data.draw(st.sampled_from([f for f in FILES if f[:2] == (fmt, lang)]))
    want = outcome(lambda: export(after, fmt, lang, opts))
    warm = Fragments(stored(memo))
    assert outcome(lambda: export(after, fmt, lang, opts, warm)) == want
    assert outcome(lambda: export(after, fmt, lang, opts, Fragments(stored(warm)))) == want


def outcome(run: Any) -> tuple[Any, ...]:
    """An export's bytes and warnings, or its usage error (a file that would hold no item:
    every item left out, as Canvas leaves out a cloze it cannot take, or none in the language)."""
    try:
        result = run()
    except UsageError as exc:
        return ("refused", str(exc))
    return (result.data, result.warnings)


@pytest.fixture(scope="module")
def seed() -> Collection:
    return Collection.from_bank(load_bank(SEED_BANK))


@pytest.mark.parametrize(("fmt", "lang", "opts"), FILES)
def test_an_unchanged_item_is_taken_from_the_fragments_and_an_edited_one_built(
        seed: Collection, fmt, lang, opts):
    memo = Fragments()
    first = export(seed, fmt, lang, opts, memo)
    n = len(seed.items) * per_item(fmt)
    assert (memo.hits, count(memo)) == (0, n)
    warm = Fragments(stored(memo))
    assert export(seed, fmt, lang, opts, warm) == first
    assert (warm.hits, warm.misses) == (n, 0)
    # an edited title: that item alone is built again
    edited = seed.items[3]
    text = {la: c.model_copy(update={"title": (c.title or "") + " (edited)"})
            for la, c in edited.text.items()}
    changed = Collection(seed.id, seed.title, seed.languages,
                         [*seed.items[:3], edited.model_copy(update={"text": text}),
                          *seed.items[4:]],
                         seed.category, seed.default_language, seed.paths, seed.stimuli)
    again = Fragments(stored(warm))
    assert export(changed, fmt, lang, opts, again) == export(changed, fmt, lang, opts)
    assert (again.hits, again.misses) == (n - per_item(fmt), per_item(fmt))
    # the fragments kept are those of this export: the edited item's old ones are dropped
    assert count(again) == n


def damaged(data: bytes, how: str) -> bytes:
    if how == "cut":
        return data[:len(data) // 2]
    if how == "entries":  # plain data, but not fragments
        return marshal.dumps({k: ("not", "a fragment") for k in marshal.loads(data)})
    if how == "warnings":
        return marshal.dumps({k: (d, ("not a warning",))
                              for k, (d, _) in marshal.loads(data).items()})
    if how == "code":  # something that could run: never read as a fragment
        return marshal.dumps({k: (d, w, compile("1", "x", "eval"))
                              for k, (d, w) in marshal.loads(data).items()})
    return marshal.dumps(["not", "fragments"])


@pytest.mark.parametrize("how", ["cut", "entries", "warnings", "code", "shape"])
@pytest.mark.parametrize(("fmt", "lang", "opts"), [f for f in FILES if f[1] != "id"])
def test_stored_bytes_that_are_not_fragments_are_a_miss(seed: Collection, fmt, lang, opts, how):
    memo = Fragments()
    want = export(seed, fmt, lang, opts, memo)
    bad = Fragments(damaged(memo.dumps(), how))
    assert export(seed, fmt, lang, opts, bad) == want
    assert bad.hits == 0


@given(st.binary(max_size=300), st.integers(0, 10**6), st.integers(0, 255))
def test_the_cache_gives_back_stored_bytes_only_intact_and_for_the_same_salt(tmp_path_factory,
                                                                             data, at, bit):
    cache = Cache(tmp_path_factory.mktemp("cache"))
    cache.store_bytes("/out/x.zip", "fragments", b"salt" * 4, data)
    assert cache.load_bytes("/out/x.zip", "fragments", b"salt" * 4) == data
    assert cache.load_bytes("/out/x.zip", "fragments", b"tlas" * 4) is None
    assert cache.load_bytes("/out/y.zip", "fragments", b"salt" * 4) is None
    path = next(cache.root.glob("*.fragments"))
    raw = bytearray(path.read_bytes())
    raw[at % len(raw)] ^= bit or 1  # any byte changed: the salt, the hash or the data
    path.write_bytes(bytes(raw))
    assert cache.load_bytes("/out/x.zip", "fragments", b"salt" * 4) is None
    path.write_bytes(bytes(raw[:at % len(raw)]))  # cut short
    assert cache.load_bytes("/out/x.zip", "fragments", b"salt" * 4) is None


PNG, PNG2 = b"\x89PNG\r\n\x1a\n one", b"\x89PNG\r\n\x1a\n two"


@pytest.mark.parametrize(("fmt", "lang"), [("qti21", "en"), ("moodle-xml", "en"),
                                           ("moodle-xml", MULTI), ("gift", "en")])
def test_an_item_showing_an_image_is_built_again_when_only_the_image_changed(
        tmp_path: Path, fmt, lang):
    shows = parse_item(dict(id="shows", type="single_choice", topic="t", options=[
        Option(id="a"), Option(id="b")], key=["a"], text={"en": Content(
            stem="Which? ![chart](img/x.png)", options={"a": "A", "b": "B"})}))
    plain = shows.model_copy(update={"id": "plain", "text": {"en": Content(
        stem="Which, without a picture?", options={"a": "A", "b": "B"})}})
    bank = write_bank(tmp_path / "bank", [shows, plain], bank_config(langs=("en",)))
    (bank / "img").mkdir()
    (bank / "img" / "x.png").write_bytes(PNG)
    c = Collection.from_bank(load_bank(bank))
    memo = Fragments()
    first = export(c, fmt, lang, {}, memo)
    (bank / "img" / "x.png").write_bytes(PNG2)
    warm = Fragments(stored(memo))
    got = export(c, fmt, lang, {}, warm)
    assert got == export(c, fmt, lang, {})
    if fmt != "gift":  # GIFT cannot carry the image: its bytes do not read it
        assert got.data != first.data
        assert (warm.hits, warm.misses) == ((3, 1) if fmt == "qti21" else (1, 1))
    (bank / "img" / "x.png").unlink()  # now a warning says it is missing
    gone = Fragments(stored(warm))
    assert export(c, fmt, lang, {}, gone) == export(c, fmt, lang, {})


@given(st.lists(st.tuples(st.text(st.characters(blacklist_characters="\x00",
                                                # a zip entry's name is UTF-8
                                                blacklist_categories=("Cs",)), min_size=1,
                                  max_size=30).filter(lambda n: not n.endswith("/") and n != "streamed.xml"),
                          st.binary(max_size=2000)),
                unique_by=lambda e: e[0], max_size=12),
       st.integers(0, 12), st.booleans())
def test_a_package_entry_has_the_bytes_zipfile_writes(entries, streamed_at, seekable):
    """ZipStream.add writes an entry's header once: the zip is the one the standard library
    writes (`writestr` after any streamed entry, to a seekable file or not)."""
    import io
    import zipfile

    from dpassess.export.qti.package import ZipStream, _info

    class Unseekable(io.BytesIO):
        def seekable(self) -> bool:
            return False

    def write(ours: bool) -> bytes:
        out = io.BytesIO() if seekable else Unseekable()
        z = ZipStream(out)
        for n, (name, data) in enumerate(entries):
            if n == streamed_at:
                with z.open("streamed.xml") as fh:
                    fh.write(b"<streamed/>")
            if ours:
                z.add(name, data)
            else:
                z.zf.writestr(_info(name), data)
        z.close()
        return out.getvalue()

    got = write(True)
    assert got == write(False)
    with zipfile.ZipFile(io.BytesIO(got)) as z:
        assert z.testzip() is None
        assert [(i.filename, z.read(i)) for i in z.infolist()
                if i.filename != "streamed.xml"] == entries


def test_a_cache_that_cannot_be_written_keeps_nothing_and_raises_nothing(tmp_path: Path):
    (tmp_path / "file").write_text("a file where the cache folder would be")
    cache = Cache(tmp_path / "file" / "cache")
    cache.store_bytes("/out/x.zip", "fragments", b"s" * 16, b"data")
    assert cache.load_bytes("/out/x.zip", "fragments", b"s" * 16) is None
    assert [p.name for p in tmp_path.iterdir()] == ["file"]
