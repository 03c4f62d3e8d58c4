"""Streaming exports: the bytes written to a file are the bytes returned in memory, whatever the
batch size, and `write_targets` writes nothing (no file, no temporary file, no new folder) when
one exporter fails."""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from conftest import SEED_BANK
from dpassess.bank.load import load_bank
from dpassess.export import EXPORTERS, MULTI, Collection, ExportWarning
from dpassess.export.moodle import gift, moodle_xml
from dpassess.export.qti import qti21
from dpassess.export.qti.package import zip_bytes
from dpassess.export.runner import FORMAT_DIRS, Target, write_collection, write_targets
from dpassess.markup.media import may_show_images
from dpassess.model import Content, Item, Option, parse_item
from strategies import items

PAIRS = [(fmt, lang) for fmt in EXPORTERS
         for lang in ("id", "en", *([MULTI] if EXPORTERS[fmt].multi else []))]


@contextlib.contextmanager
def _batches(size: int):
    """GIFT writes `size` questions at a time (Moodle XML questions and QTI manifest resources
    are written one by one)."""
    saved = gift._CHUNK
    gift._CHUNK = size
    try:
        yield
    finally:
        gift._CHUNK = saved


def _collection(its: list[Item]) -> Collection:
    return Collection(id="c", title={"id": "Koleksi", "en": "A & <collection>"},
                      languages=("id", "en"), items=its, category="c", default_language="id")


def _streamed(collection: Collection, fmt: str, lang: str, tmp: Path) -> tuple[bytes, list]:
    path = tmp / f"{fmt}-{lang}"
    with open(path, "wb") as fh:
        result = EXPORTERS[fmt].export(collection, lang, fh)
    assert result.data == b""
    return path.read_bytes(), result.warnings


def _reference_qti(collection: Collection, lang: str) -> tuple[bytes, list[ExportWarning]]:
    """The package as it was built before streaming: every file in memory, then zipped in
    sorted order (the manifest serialised as one tree)."""
    files: dict[str, bytes] = {}
    warnings: list[ExportWarning] = []
    exported, media = [], {}
    for it in collection.items:
        if lang not in it.text:
            warnings.append(ExportWarning("qti21", it.id, "text", f"no {lang!r} text; not exported"))
            continue
        builder = qti21._ItemBuilder(it, lang)
        root = builder.build()
        media[it.id] = builder.pack_images(root, collection.paths.get(it.id), files)
        files[qti21.item_path(it)] = qti21._xml(root)
        warnings.extend(builder.warnings)
        exported.append(it)
    files[qti21.test_path(collection)] = qti21._xml(qti21._test(collection, lang, exported))
    files["imsmanifest.xml"] = _reference_manifest(collection, lang, exported, media)
    return zip_bytes(files), warnings


def _reference_manifest(collection: Collection, lang: str, items: list[Item],
                        media: dict[str, list[str]]) -> bytes:
    """The manifest as one tree, each item's resource a copy of its skeleton (as before the
    resources were streamed)."""
    q, c, lom_ns = qti21, f"{{{qti21.CP_NS}}}", f"{{{qti21.LOM_NS}}}"
    base = f"{collection.id}-{lang}"
    root = etree.Element(c + "manifest", nsmap=q._MANIFEST_NSMAP)
    root.set(q._SCHEMA_LOCATION, q._CP_LOCATION)
    root.set("identifier", f"{base}-package")
    meta = q._sub(root, c + "metadata")
    q._sub(meta, c + "schema", text="QTIv2.1 Package")
    q._sub(meta, c + "schemaversion", text="1.0.0")
    q._sub(root, c + "organizations")
    resources = q._sub(root, c + "resources")
    test_href = q.test_path(collection)
    test = q._sub(resources, c + "resource", {
        "identifier": f"{base}-test", "type": "imsqti_test_xmlv2p1", "href": test_href})
    q._lom_general(q._sub(q._sub(test, c + "metadata"), lom_ns + "lom"), collection.category,
                   f"{collection.id}-test", q._plain(collection.title_in(lang)) or collection.id,
                   lang, ())
    q._sub(test, c + "file", {"href": test_href})
    for item in items:
        q._sub(test, c + "dependency", {"identifierref": q.item_identifier(item, lang)})
    for item in items:
        href = q.item_path(item)
        content = item.text[lang]
        keywords = (*item.tags, item.topic)
        res = copy.deepcopy(q._resource_skeleton(
            collection.category, lang,
            bool(content.explanation) or any(content.feedback.values()), len(keywords),
            item.status.value, item.difficulty.value if item.difficulty is not None else None))
        res.set("identifier", q.item_identifier(item, lang))
        res.set("href", href)
        general = res[0][1][0]
        general[0][1].text = item.id
        general[1][0].text = q._plain(item.title(lang)) or item.id
        for word, keyword in zip(keywords, general[3:], strict=True):
            keyword[0].text = word
        res[1].set("href", href)
        resources.append(res)
        for path in media.get(item.id, ()):
            q._sub(res, c + "file", {"href": quote(path)})
    return q._xml(root)


@pytest.fixture(scope="module")
def seed() -> Collection:
    return Collection.from_bank(load_bank(SEED_BANK))


@pytest.mark.parametrize(("fmt", "lang"), PAIRS)
def test_seed_bank_streamed_equals_returned(seed, tmp_path, fmt, lang):
    whole = EXPORTERS[fmt].export(seed, lang)
    assert _streamed(seed, fmt, lang, tmp_path) == (whole.data, whole.warnings)
    with _batches(1):
        assert EXPORTERS[fmt].export(seed, lang) == whole
    if fmt == "qti21":
        assert _reference_qti(seed, lang) == (whole.data, whole.warnings)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.data_too_large])
@given(st.lists(items(), min_size=1, max_size=5))
def test_generated_items_streamed_equals_returned_whatever_the_batch(tmp_path_factory, its):
    # ids may repeat: the package then holds the last item of an id, as it always did
    collection = _collection(its)
    tmp = tmp_path_factory.mktemp("s")
    for fmt, lang in PAIRS:
        with _batches(10**9):  # one tree for the whole file, as before streaming
            whole = EXPORTERS[fmt].export(collection, lang)
        with _batches(2):
            assert _streamed(collection, fmt, lang, tmp) == (whole.data, whole.warnings), fmt
        if fmt == "qti21":
            assert _reference_qti(collection, lang) == (whole.data, whole.warnings)


def _image_item(item_id: str, stem: str, langs=("en",)) -> Item:
    options = {"a": "Alpha", "b": "Beta"}
    return parse_item(dict(id=item_id, type="single_choice", topic="t", options=[Option(id="a"),
                Option(id="b")], key=("a",),
                text={la: Content(stem=stem, options=options, feedback={"b": "See ![g](g.png)"})
                      for la in langs}))


def test_qti_images_missing_languages_and_repeated_ids_as_before(tmp_path):
    """Items that show images are built before the manifest (which lists them); an item whose
    file a later one replaces keeps its warnings; the entries stay in sorted order."""
    (tmp_path / "fig.png").write_bytes(b"PNG-fig")
    (tmp_path / "g.png").write_bytes(b"PNG-g")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "fig.png").write_bytes(b"PNG-other")
    its = [
        _image_item("zz", "Plain"),
        _image_item("aa", "See ![f](fig.png) and <IMG src='missing.png'>"),
        _image_item("only-id", "Teks", langs=("id",)),
        _image_item("aa", "Again, no image\x01"),
        _image_item("mm", "!\x01[f](fig.png) and ![f](../x.xml)"),
        _image_item("nn", "![f](fig.png)"),
    ]
    paths = {"zz": tmp_path / "a.yaml", "aa": tmp_path / "b.yaml", "mm": tmp_path / "c.yaml",
             "nn": tmp_path / "sub" / "d.yaml"}
    collection = Collection(id="c", title={"en": "C"}, languages=("id", "en"), items=its,
                            category="c", paths={k: str(v) for k, v in paths.items()})
    result = EXPORTERS["qti21"].export(collection, "en")
    assert (result.data, result.warnings) == _reference_qti(collection, "en")
    assert any("already packed" in w.message for w in result.warnings)
    assert _streamed(collection, "qti21", "en", tmp_path) == (result.data, result.warnings)


_FRAGMENTS = ["!", "[", "]", "(f.png)", "<", "img", "IMG", " src='f.png'>", "\x01", "x", "\n",
              "`", "\\", " "]


@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=10).map("".join),
       st.sampled_from(["stem", "option", "feedback", "explanation"]))
def test_qti_image_screen_never_misses_an_image(text, where):
    text = text or "x"
    stem = text if where == "stem" else "Q"
    options = {"a": text if where == "option" else "A", "b": "B"}
    it = parse_item(dict(id="it", type="single_choice", topic="t", options=[Option(id="a"), Option(id="b")],
              key=("a",), text={"en": Content(
                  stem=stem, options=options,
                  feedback={"b": text} if where == "feedback" else {},
                  explanation=text if where == "explanation" else None)}))
    root = qti21._ItemBuilder(it, "en").build()
    if next(root.iter(qti21._Q + "img"), None) is not None:
        assert may_show_images(it, ("en",), non_xml=True)  # as qti21 asks


# --- write_targets: all or nothing ---------------------------------------------------------


def _targets(collection: Collection, out: Path) -> list[Target]:
    return [Target(fmt, [*collection.languages, *([MULTI] if EXPORTERS[fmt].multi else [])],
                   out / FORMAT_DIRS[fmt]) for fmt in EXPORTERS]


def _all_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failing_exporter_writes_nothing(seed, tmp_path, monkeypatch, jobs):
    def broken(collection, lang, out=None):
        if out is not None:
            out.write(b"half a file")
        raise RuntimeError("boom")

    monkeypatch.setattr(moodle_xml, "export", broken)
    (tmp_path / "out" / "gift").mkdir(parents=True)
    (tmp_path / "out" / "gift" / "data-parallelism-en.txt").write_bytes(b"previous")
    before = _all_files(tmp_path)
    with pytest.raises(RuntimeError, match="boom"):
        write_targets(seed, _targets(seed, tmp_path / "out"), jobs=jobs)
    # the earlier file is untouched; no temporary file, no new folder (qti21/, moodle/) is left
    assert _all_files(tmp_path) == before
    assert (tmp_path / "out" / "gift" / "data-parallelism-en.txt").read_bytes() == b"previous"


@pytest.mark.parametrize("jobs", [1, 2])
def test_written_files_equal_the_exports_in_memory(seed, tmp_path, jobs):
    result = write_targets(seed, _targets(seed, tmp_path), jobs=jobs)
    written = [p for paths, _ in result for p in paths]
    assert [p.read_bytes() for p in written] == [EXPORTERS[f].export(seed, la).data
                                                 for f, la in PAIRS]
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


def test_a_directory_in_the_way_writes_nothing(seed, tmp_path):
    from dpassess.diagnostics import UsageError

    (tmp_path / "data-parallelism-id.txt").mkdir()
    with pytest.raises(UsageError, match="is a directory"):
        write_collection(seed, "gift", ["en", "id"], tmp_path)
    assert _all_files(tmp_path) == ["data-parallelism-id.txt"]


def test_a_file_where_a_folder_must_be_is_named(seed, tmp_path):
    """mkdir's "File exists" would not say which part of the path is the problem."""
    from dpassess.diagnostics import UsageError

    (tmp_path / "afile").write_text("x", encoding="utf-8")
    with pytest.raises(UsageError, match=r"cannot write: .*afile is a file, not a folder"):
        write_collection(seed, "gift", ["en"], tmp_path / "afile" / "sub")
    assert _all_files(tmp_path) == ["afile"]
