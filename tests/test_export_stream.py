"""Streaming exports and the one writer: the bytes streamed to a file are the bytes returned in
memory; `ChildStream` writes exactly what lxml writes for the whole tree; `copied` elements are
the elements built; `write_exports` writes every file or none (no file, no temporary file, no
new folder when one export fails)."""

from __future__ import annotations

import copy
import io
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from conftest import ROOT, SEED_BANK
from dpassess.bank.load import load_bank
from dpassess.diagnostics import UsageError
from dpassess.export import EXPORTERS, MULTI, Collection
from dpassess.export.moodle import moodle_xml
from dpassess.export.qti.items import assessment_item
from dpassess.export.runner import FORMAT_DIRS, ExportFile, file_name, write_exports
from dpassess.export.xmlfast import ChildStream, copied, hold, spliced
from dpassess.markup.media import may_show_images
from dpassess.model import Content, Item, Option, parse_item
from strategies import items

PAIRS = [(fmt, lang) for fmt in EXPORTERS
         for lang in ("id", "en", *([MULTI] if EXPORTERS[fmt].multi else []))]


def _collection(its: list[Item]) -> Collection:
    return Collection(id="c", title={"id": "Koleksi", "en": "A & <collection>"},
                      languages=("id", "en"), items=its, category="c", default_language="id")


def _streamed(collection: Collection, fmt: str, lang: str, tmp: Path) -> tuple[bytes, list]:
    path = tmp / f"{fmt}-{lang}"
    with open(path, "wb") as fh:
        result = EXPORTERS[fmt].export(collection, lang, fh)
    assert result.data == b""
    return path.read_bytes(), result.warnings


@pytest.fixture(scope="module")
def seed() -> Collection:
    return Collection.from_bank(load_bank(SEED_BANK))


@pytest.mark.parametrize(("fmt", "lang"), PAIRS)
def test_seed_bank_streamed_equals_returned(seed, tmp_path, fmt, lang):
    whole = EXPORTERS[fmt].export(seed, lang)
    assert _streamed(seed, fmt, lang, tmp_path) == (whole.data, whole.warnings)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.data_too_large])
@given(st.lists(items(), min_size=1, max_size=5))
def test_generated_items_streamed_equals_returned(tmp_path_factory, its):
    # ids may repeat: the package then holds the last item of an id
    collection = _collection(its)
    tmp = tmp_path_factory.mktemp("s")
    for fmt, lang in PAIRS:
        whole = EXPORTERS[fmt].export(collection, lang)
        assert _streamed(collection, fmt, lang, tmp) == (whole.data, whole.warnings), fmt


# --- ChildStream and copied against lxml itself ----------------------------------------------

_NAMES = st.sampled_from(["a", "b", "item", "x-y"])
_TEXTS = st.one_of(st.none(), st.sampled_from(["", "t", "two\nlines", " spaced ", "<&>", "é漢"]))


@st.composite
def _subtree(draw, ns: str, depth: int = 0) -> etree._Element:
    el = etree.Element(f"{{{ns}}}{draw(_NAMES)}" if ns else draw(_NAMES))
    for name in draw(st.lists(_NAMES, max_size=2, unique=True)):
        el.set(name, draw(st.sampled_from(["", "v", "a\nb", '"q"'])))
    el.text = draw(_TEXTS)
    if depth < 2:
        for child in draw(st.lists(_subtree(ns, depth + 1), max_size=3)):
            child.tail = draw(_TEXTS)
            el.append(child)
    return el


@given(st.sampled_from(["", "urn:x"]), st.booleans(), st.data())
def test_children_written_one_at_a_time_are_the_whole_tree_serialised(ns, deep, data):
    """What `ChildStream` writes is lxml's own serialisation of the whole tree: the oracle."""
    nsmap = {None: ns, "o": "urn:other"} if ns else {"o": "urn:other"}
    root = etree.Element(f"{{{ns}}}root" if ns else "root", nsmap=nsmap)
    etree.SubElement(root, "{urn:other}head").text = "before"
    parent = etree.SubElement(root, f"{{{ns}}}list" if ns else "list") if deep else root
    children = data.draw(st.lists(_subtree(ns), min_size=1, max_size=4))
    out = io.BytesIO()
    stream = ChildStream(out, parent, xml_declaration=True)
    for child in children:
        stream.write(copy.deepcopy(child))  # a copy of its own
    stream.close()
    for child in children:
        parent.append(child)
    assert out.getvalue() == etree.tostring(root, xml_declaration=True, encoding="UTF-8",
                                            pretty_print=True)


def test_copied_gives_an_element_of_its_own_each_time():
    calls = []

    @copied
    def build(name: str) -> etree._Element:
        calls.append(name)
        el = etree.Element("{urn:x}e", nsmap={None: "urn:x"})
        etree.SubElement(el, "{urn:x}c").text = name
        return el

    first = build("a")
    first[0].text = "changed"
    parent = etree.Element("{urn:x}p", nsmap={None: "urn:x"})
    parent.append(build("a"))
    assert calls == ["a"]  # built once
    assert etree.tostring(parent) == b'<p xmlns="urn:x"><e><c>a</c></e></p>'  # no xmlns again


@given(st.sampled_from(["", "urn:x"]), st.booleans(), st.data())
def test_held_children_are_written_as_the_whole_tree_serialised(ns, deep, data):
    """`spliced` writes each placeholder `hold` put in a tree as the bytes it holds, which are
    the child's `copied.serialised`: lxml's serialisation of the tree holding the children
    themselves is the oracle (held children next to each other, first, last, or all)."""
    nsmap = {None: ns, "o": "urn:other"} if ns else {"o": "urn:other"}
    children = data.draw(st.lists(_subtree(ns), min_size=1, max_size=5))
    flags = data.draw(st.lists(st.booleans(), min_size=len(children), max_size=len(children)))

    def tree() -> tuple[etree._Element, etree._Element]:
        root = etree.Element(f"{{{ns}}}root" if ns else "root", nsmap=nsmap)
        etree.SubElement(root, "{urn:other}head").text = "before"
        parent = etree.SubElement(root, f"{{{ns}}}list" if ns else "list") if deep else root
        return root, parent

    whole, parent = tree()
    for child in children:
        child.tail = None  # (a parent of element children only, as `hold` asks)
        parent.append(copy.deepcopy(child))
    expected = etree.tostring(whole, xml_declaration=True, encoding="UTF-8", pretty_print=True)

    @copied
    def build(n: int) -> etree._Element:
        return copy.deepcopy(children[n])

    stream = ChildStream(io.BytesIO(), tree()[1])  # (a parent like `parent`, of a tree alike)
    root, parent = tree()
    held: list[bytes] = []
    for n, (child, flag) in enumerate(zip(children, flags, strict=True)):
        if flag:
            hold(parent, build.serialised(stream, n), held)
        else:
            parent.append(copy.deepcopy(child))
    assert spliced(root, held, xml_declaration=True) == expected


def test_spliced_writes_each_placeholder_as_its_own_bytes():
    root = etree.Element("r")
    hold(root, b"  <a/>\n", held := [])
    etree.SubElement(root, "b")
    hold(root, b"  <c/>\n", held)
    assert spliced(root, held) == b"<r>\n  <a/>\n  <b/>\n  <c/>\n</r>\n"
    with pytest.raises(ValueError, match="placeholders written"):
        spliced(root, held[:1])
    # placeholders in other parents, held out of document order: each gets its own bytes
    root = etree.Element("r")
    first, second = etree.SubElement(root, "a"), etree.SubElement(root, "b")
    hold(second, b"    <y/>\n", held := [])
    hold(first, b"    <x/>\n", held)
    hold(second, b"    <z/>\n", held)
    assert spliced(root, held) == (b"<r>\n  <a>\n    <x/>\n  </a>\n  <b>\n    <y/>\n"
                                   b"    <z/>\n  </b>\n</r>\n")


@pytest.mark.parametrize("bank", [SEED_BANK, *sorted((ROOT / "tests" / "banks").iterdir())],
                         ids=lambda p: p.name)
def test_qti_items_written_from_held_bytes_are_their_trees_serialised(bank):
    """The package writes an item with its constant children held as bytes (`assessment_item`
    with `held`); the item's whole tree, as `assessment_item` builds it without, is the
    oracle: every item of the banks, in each language, both kinds of maths."""
    collection = Collection.from_bank(load_bank(bank))
    count = 0
    for item in collection.items:
        for lang in item.text:
            for maths in ("mathml", "tex"):
                tree, notes = assessment_item(item, lang, maths=maths)
                root, held_notes = assessment_item(item, lang, maths=maths, held=(held := []))
                assert spliced(root, held, xml_declaration=True) == etree.tostring(
                    tree, xml_declaration=True, encoding="UTF-8", pretty_print=True), item.id
                assert held_notes == notes
                count += bool(held)
    assert count  # (items with constant children were written from bytes)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.data_too_large])
@given(items())
def test_generated_qti_items_written_from_held_bytes_are_their_trees_serialised(item):
    for lang in item.text:
        tree, _ = assessment_item(item, lang)
        root, _ = assessment_item(item, lang, held=(held := []))
        assert spliced(root, held) == etree.tostring(tree, encoding="UTF-8", pretty_print=True)


# --- QTI: images, missing languages and repeated ids -------------------------------------------


def _image_item(item_id: str, stem: str, langs=("en",)) -> Item:
    options = {"a": "Alpha", "b": "Beta"}
    return parse_item(dict(id=item_id, type="single_choice", topic="t",
                           options=[Option(id="a"), Option(id="b")], key=("a",),
                           text={la: Content(stem=stem, options=options,
                                             feedback={"b": "See ![g](g.png)"})
                                 for la in langs}))


def test_qti_images_missing_languages_and_repeated_ids(tmp_path):
    """Items that show images are built before the manifest (which lists them); an item whose
    file a later one of the same id replaces keeps its warnings; the entries stay in sorted
    order. Worked out by hand from the items below."""
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
    z = zipfile.ZipFile(io.BytesIO(result.data))
    assert z.namelist() == ["imsmanifest.xml", "items/aa.xml", "items/fig.png", "items/g.png",
                            "items/mm.xml", "items/nn.xml", "items/zz.xml", "tests/c.xml"]
    assert b"Again, no image" in z.read("items/aa.xml")  # the last item of the id
    assert z.read("items/fig.png") == b"PNG-fig"  # the first file packed under that path
    cp = "{http://www.imsglobal.org/xsd/imscp_v1p1}"
    listed = [(r.get("identifier"), [f.get("href") for f in r.iter(cp + "file")])
              for r in etree.fromstring(z.read("imsmanifest.xml")).iter(cp + "resource")][1:]
    assert listed == [
        ("c__zz-en", ["items/zz.xml", "items/g.png"]),
        ("c__aa-en", ["items/aa.xml", "items/g.png"]),  # both: what the last item of the id shows
        ("c__aa-en", ["items/aa.xml", "items/g.png"]),
        ("c__mm-en", ["items/mm.xml", "items/fig.png", "items/g.png"]),
        ("c__nn-en", ["items/nn.xml"]),  # its folder has no g.png; its fig.png is not packed
    ]
    assert [(w.item, w.field, w.path) for w in result.warnings] == [
        ("aa", "text.en", str(paths["aa"])),  # missing.png
        ("only-id", "text", ""),
        ("aa", "text.en.stem", str(paths["aa"])),
        ("mm", "text.en.stem", str(paths["mm"])),
        ("mm", "text.en", str(paths["mm"])),  # ../x.xml
        ("nn", "text.en", str(paths["nn"])),  # sub/fig.png
        ("nn", "text.en", str(paths["nn"])),  # sub/g.png
    ]
    messages = [w.message for w in result.warnings]
    assert "'missing.png' not found" in messages[0]
    assert messages[1] == "no 'en' text; not exported"
    assert "outside the item's folder" in messages[4] and "already packed" in messages[5]
    assert "'g.png' not found" in messages[6]
    assert _streamed(collection, "qti21", "en", tmp_path) == (result.data, result.warnings)


_FRAGMENTS = ["!", "[", "]", "(f.png)", "<", "img", "IMG", " src='f.png'>", "\x01", "x", "\n",
              "`", "\\", " "]


@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=10).map("".join),
       st.sampled_from(["stem", "option", "feedback", "explanation"]))
def test_qti_image_screen_never_misses_an_image(text, where):
    text = text or "x"
    stem = text if where == "stem" else "Q"
    options = {"a": text if where == "option" else "A", "b": "B"}
    it = parse_item(dict(id="it", type="single_choice", topic="t",
                         options=[Option(id="a"), Option(id="b")], key=("a",),
                         text={"en": Content(
                             stem=stem, options=options,
                             feedback={"b": text} if where == "feedback" else {},
                             explanation=text if where == "explanation" else None)}))
    root, _ = assessment_item(it, "en")
    if next(root.iter("{http://www.imsglobal.org/xsd/imsqti_v2p1}img"), None) is not None:
        assert may_show_images(it, ("en",), non_xml=True)  # as qti21 asks


# --- write_exports: all or nothing --------------------------------------------------------------


def _exports(collection: Collection, out: Path) -> list[ExportFile]:
    return [ExportFile(collection, fmt, lang, out / FORMAT_DIRS[fmt] / file_name(collection, fmt, lang))
            for fmt, lang in PAIRS]


def _all_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failing_exporter_writes_nothing(seed, tmp_path, monkeypatch, jobs):
    def broken(state, fragments, out):
        out.write(b"half a file")
        raise RuntimeError("boom")

    monkeypatch.setattr(moodle_xml, "FORMAT", replace(moodle_xml.FORMAT, assemble=broken))
    (tmp_path / "out" / "gift").mkdir(parents=True)
    (tmp_path / "out" / "gift" / "data-parallelism-en.txt").write_bytes(b"previous")
    before = _all_files(tmp_path)
    with pytest.raises(RuntimeError, match="boom"):
        write_exports(_exports(seed, tmp_path / "out"),
                      [(tmp_path / "out" / "keys" / "key.csv", b"a,b\n")], jobs=jobs)
    # the earlier file is untouched; no temporary file, no new folder (qti21/, keys/) is left
    assert _all_files(tmp_path) == before
    assert (tmp_path / "out" / "gift" / "data-parallelism-en.txt").read_bytes() == b"previous"


@pytest.mark.parametrize("jobs", [1, 2])
def test_written_files_equal_the_exports_in_memory(seed, tmp_path, jobs):
    exports = _exports(seed, tmp_path)
    key = tmp_path / "forms" / "key.csv"
    warnings = write_exports(exports, [(key, b"a,b\n")], jobs=jobs)
    assert [e.path.read_bytes() for e in exports] == [EXPORTERS[f].export(seed, la).data
                                                      for f, la in PAIRS]
    assert warnings == [EXPORTERS[f].export(seed, la).warnings for f, la in PAIRS]
    assert key.read_bytes() == b"a,b\n"
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


def test_warnings_are_each_once_per_export(tmp_path):
    it = parse_item(dict(id="q1", type="single_choice", topic="t", points=2,
                         options=[Option(id="a"), Option(id="b")], key=("a",),
                         text={"en": Content(stem="S", options={"a": "A", "b": "B"})}))
    collection = Collection(id="c", title={"en": "C"}, languages=("en",), items=[it, it],
                            category="c", paths={"q1": "items/q1.yaml"})
    [warnings] = write_exports([ExportFile(collection, "gift", "en", tmp_path / "c.txt")])
    points = [w for w in warnings if w.field == "points"]
    assert len(points) == 1 and points[0].path == "items/q1.yaml" and points[0].code == "gift"


def test_a_language_the_collection_lacks_writes_nothing(seed, tmp_path):
    with pytest.raises(UsageError, match=r"^language 'fr': the collection has id, en or multi$"):
        write_exports([ExportFile(seed, "gift", "en", tmp_path / "a" / "x.txt"),
                       ExportFile(seed, "gift", "fr", tmp_path / "a" / "y.txt")])
    assert _all_files(tmp_path) == []


def test_a_directory_in_the_way_writes_nothing(seed, tmp_path):
    (tmp_path / "data-parallelism-id.txt").mkdir()
    with pytest.raises(UsageError, match="is a directory"):
        write_exports([ExportFile(seed, "gift", la, tmp_path / file_name(seed, "gift", la))
                       for la in ("en", "id")])
    assert _all_files(tmp_path) == ["data-parallelism-id.txt"]


def test_a_file_where_a_folder_must_be_is_named(seed, tmp_path):
    """mkdir's "File exists" would not say which part of the path is the problem."""
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    with pytest.raises(UsageError, match=r"cannot write: .*afile is a file, not a folder"):
        write_exports([ExportFile(seed, "gift", "en", tmp_path / "afile" / "sub" / "x.txt")])
    assert _all_files(tmp_path) == ["afile"]
