"""Streaming exports: the bytes written to a file are the bytes returned in memory, whatever the
batch size, and `write_targets` writes nothing (no file, no temporary file, no new folder) when
one exporter fails."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from pathlib import Path
from typing import assert_never
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from conftest import SEED_BANK
from dpassess.export import (
    EXPORTERS,
    MULTI,
    Collection,
    ExportResult,
    ExportWarning,
    gift,
    moodle_xml,
    qti21,
)
from dpassess.export import MULTI as ALL_LANGUAGES
from dpassess.export._moodle import ItemTexts, category_path, grades, name_html
from dpassess.export._xmlchars import xml_safe
from dpassess.export._zip import zip_bytes
from dpassess.exporting import FORMAT_DIRS, Target, write_collection, write_targets
from dpassess.loader import load_bank
from dpassess.model import Content, Item, ItemType, Option
from strategies import items

PAIRS = [(fmt, lang) for fmt in EXPORTERS
         for lang in ("id", "en", *([MULTI] if EXPORTERS[fmt].multi else []))]


@contextlib.contextmanager
def _batches(size: int):
    """Every exporter serialises `size` questions/resources at a time."""
    saved = (moodle_xml._CHUNK, gift._CHUNK, qti21._BATCH)
    moodle_xml._CHUNK = gift._CHUNK = qti21._BATCH = size
    try:
        yield
    finally:
        moodle_xml._CHUNK, gift._CHUNK, qti21._BATCH = saved


def _collection(its: list[Item]) -> Collection:
    return Collection(id="c", title={"id": "Koleksi", "en": "A & <collection>"},
                      languages=("id", "en"), items=its, category="c", default_language="id")


def _streamed(collection: Collection, fmt: str, lang: str, tmp: Path) -> tuple[bytes, list]:
    path = tmp / f"{fmt}-{lang}"
    with open(path, "wb") as fh:
        result = EXPORTERS[fmt].export(collection, lang, fh)
    assert result.data == b""
    return path.read_bytes(), result.warnings


# --- the QTI item tree, as it was built before the text writer: the oracle of `_ItemBuilder.xml`


def _qti_item_tree(it: Item, lang: str) -> tuple[etree._Element, list[ExportWarning]]:
    """The assessmentItem tree and warnings of commit 1f45f99's `_ItemBuilder.build`."""
    from dpassess.export._xhtml import XML_LANG, append_flow
    from dpassess.render import to_html, to_inline_html, to_plain

    b = qti21._ItemBuilder(it, lang)

    def flow(parent: etree._Element, field: str, html: str) -> None:
        notes: set[str] = set()
        append_flow(parent, html, notes)
        qti21._keep_as_is(parent)
        for note in sorted(notes):
            b.warn(field, note)

    content = it.text[lang]
    multiple = it.type is ItemType.multiple_response
    title = to_plain(b.text(f"text.{lang}.title", it.title(lang))) or it.id
    feedback_ids = tuple(o.id for o in it.options if content.feedback.get(o.id))
    shape = qti21._Shape(
        multiple, it.points, it.shuffle, tuple((o.id, o.locked) for o in it.options),
        tuple(it.key), tuple(it.fractions().items()) if multiple else (),
        bool(content.explanation), feedback_ids)
    root = qti21._skeleton(shape).__deepcopy__(None)
    root.set("identifier", qti21.item_identifier(it, lang))
    root.set("title", title)
    root.set(XML_LANG, lang)
    body = root[4]
    flow(body[0], f"text.{lang}.stem", to_html(b.text(f"text.{lang}.stem", content.stem)))
    for option, choice in zip(it.options, body[1], strict=True):
        field = f"text.{lang}.options.{option.id}"
        flow(choice, field, to_inline_html(b.text(field, it.option_text(lang, option.id))))
    for oid, modal in zip(feedback_ids, root[6:], strict=False):
        field = f"text.{lang}.feedback.{oid}"
        div = modal[0]
        flow(div, field, to_html(b.text(field, content.feedback[oid])))
        if qti21._canvas_keeps_part(div):
            b.warn(field, "Canvas keeps only the first paragraph of option feedback; "
                   "the package carries all of it")
    if content.explanation:
        field = f"text.{lang}.explanation"
        flow(root[-1][0], field, to_html(b.text(field, content.explanation)))
    return root, b.warnings


def _qti_manifest_tree(collection: Collection, lang: str, items: Sequence[Item],
                       media: dict[str, list[str]]) -> etree._Element:
    """The manifest tree of commit 1f45f99 (`qti21._manifest`): the oracle of the streamed one."""
    base = f"{collection.id}-{lang}"
    # The imsqti_v2p1 namespace on the root is how Canvas tells QTI 2 from QTI 1.2: without it
    # Canvas runs its 1.2 converter and imports zero questions without an error.
    root = etree.Element(qti21._C + "manifest", nsmap=qti21._MANIFEST_NSMAP)
    root.set(qti21._SCHEMA_LOCATION, qti21._CP_LOCATION)
    root.set("identifier", f"{base}-package")
    meta = qti21._sub(root, qti21._C + "metadata")
    qti21._sub(meta, qti21._C + "schema", text="QTIv2.1 Package")
    qti21._sub(meta, qti21._C + "schemaversion", text="1.0.0")
    qti21._sub(root, qti21._C + "organizations")
    resources = qti21._sub(root, qti21._C + "resources")

    test_href = qti21.test_path(collection)
    test = qti21._sub(resources, qti21._C + "resource", {
        "identifier": f"{base}-test", "type": "imsqti_test_xmlv2p1", "href": test_href})
    lom = qti21._sub(qti21._sub(test, qti21._C + "metadata"), qti21._L + "lom")
    qti21._lom_general(lom, collection.category, f"{collection.id}-test",
                       qti21._plain(collection.title_in(lang)) or collection.id, lang, ())
    qti21._sub(test, qti21._C + "file", {"href": test_href})
    for item in items:
        qti21._sub(test, qti21._C + "dependency",
                   {"identifierref": qti21.item_identifier(item, lang)})

    for item in items:
        href = qti21.item_path(item)
        content = item.text[lang]
        has_feedback = bool(content.explanation) or any(content.feedback.values())
        keywords = (*item.tags, item.topic)
        res = qti21._resource_skeleton(
            collection.category, lang, has_feedback, len(keywords), item.status.value,
            item.difficulty.value if item.difficulty is not None else None,
        ).__deepcopy__(None)
        res.set("identifier", qti21.item_identifier(item, lang))
        res.set("href", href)
        general = res[0][1][0]
        general[0][1].text = item.id
        general[1][0].text = qti21._plain(item.title(lang)) or item.id
        for word, keyword in zip(keywords, general[3:], strict=True):
            keyword[0].text = word
        res[1].set("href", href)
        resources.append(res)
        for path in media.get(item.id, ()):  # Canvas imports every listed <file>, images too
            qti21._sub(res, qti21._C + "file", {"href": quote(path)})
    return root


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
        root, builder.warnings = _qti_item_tree(it, lang)
        media[it.id] = builder.pack_images(root, collection.paths.get(it.id), files)
        files[qti21.item_path(it)] = qti21._xml(root)
        warnings.extend(builder.warnings)
        exported.append(it)
    files[qti21.test_path(collection)] = qti21._xml(qti21._test(collection, lang, exported))
    files["imsmanifest.xml"] = qti21._xml(_qti_manifest_tree(collection, lang, exported, media))
    return zip_bytes(files), warnings


# --- the Moodle XML tree writer, as the oracle of the text writer -----------------------------


class _TreeWriter:
    def __init__(self, collection: Collection, lang: str) -> None:
        self.collection = collection
        self.lang = lang
        self.warnings: list[ExportWarning] = []
        self.root = etree.Element("quiz")

    # --- text elements -------------------------------------------------------------------
    def _clean(self, text: str, item_id: str | None, where: str) -> str:
        text, removed = xml_safe(text)
        if removed:
            self.warnings.append(ExportWarning(
                moodle_xml.FORMAT, item_id, where, f"removed characters XML cannot carry: {removed}"))
        return text

    def text(self, parent: etree._Element, value: str, item_id: str | None = None,
             where: str = "") -> None:
        """`<text>` holding `value`, in CDATA when it has markup characters (Moodle's `xml_escape`).

        A value containing `]]>` cannot sit in one CDATA section; it is written as escaped text,
        which every XML parser reads back identically.
        """
        value = self._clean(value, item_id, where)
        el = etree.SubElement(parent, "text")
        cdata = moodle_xml._MARKUP.search(value) is not None and "]]>" not in value
        el.text = etree.CDATA(value) if cdata else value

    def formatted(self, parent: etree._Element, tag: str, value: str, item_id: str | None,
                  where: str, fmt: str = "html", **attrib: str) -> etree._Element:
        el = etree.SubElement(parent, tag, attrib)
        el.set("format", fmt)
        self.text(el, value, item_id, where)
        return el

    # --- questions ------------------------------------------------------------------------
    def category(self, path: str, info: str = "") -> None:
        q = etree.SubElement(self.root, "question", type="category")
        cat = etree.SubElement(q, "category")
        self.text(cat, path)
        self.formatted(q, "info", info, None, "title")

    def bank_title(self) -> str:
        if self.lang != ALL_LANGUAGES:
            return name_html(self.collection.title_in(self.lang))
        titles = [(la, name_html(self.collection.title_in(la))) for la in self.collection.languages]
        if len({t for _, t in titles}) == 1:
            return titles[0][1]
        return "".join(f'<span lang="{la}" class="multilang">{t}</span>' for la, t in titles)

    def question(self, item: Item, duplicate: bool) -> None:
        t = ItemTexts(moodle_xml.FORMAT, self.collection, item, self.lang)
        match item.type:
            case ItemType.single_choice | ItemType.multiple_response:
                qtype = "multichoice"
            case ItemType.true_false:
                qtype = "truefalse"
            case _ as unreachable:
                assert_never(unreachable)
        q = etree.SubElement(self.root, "question", type=qtype)
        name = etree.SubElement(q, "name")
        self.text(name, t.name(), item.id, "title")
        self.formatted(q, "questiontext", t.stem(), item.id, f"text.{self.lang}.stem")
        self.formatted(q, "generalfeedback", t.explanation(), item.id,
                       f"text.{self.lang}.explanation")
        etree.SubElement(q, "defaultgrade").text = f"{item.points:.7f}"
        etree.SubElement(q, "penalty").text = moodle_xml.PENALTY[qtype]
        etree.SubElement(q, "hidden").text = "0"
        etree.SubElement(q, "idnumber").text = item.id
        if duplicate:
            t.warn("id", "another question in this category has the same id: Moodle silently "
                         "drops the second idnumber")
        g = grades(item, t.warn)
        if qtype == "multichoice":
            single = item.type is ItemType.single_choice
            etree.SubElement(q, "single").text = "true" if single else "false"
            etree.SubElement(q, "shuffleanswers").text = "true" if item.shuffle else "false"
            etree.SubElement(q, "answernumbering").text = "abc"
            etree.SubElement(q, "showstandardinstruction").text = "0"
            for tag in ("correctfeedback", "partiallycorrectfeedback", "incorrectfeedback"):
                self.formatted(q, tag, "", item.id, tag)
            t.check_locked()
            for oid in item.option_ids:
                a = self.formatted(q, "answer", t.option(oid), item.id,
                                   f"text.{self.lang}.options.{oid}", fraction=g.percent(oid))
                self.formatted(a, "feedback", t.feedback(oid), item.id,
                               f"text.{self.lang}.feedback.{oid}")
        else:
            t.check_true_false_words()
            for oid in item.option_ids:  # ("true", "false"): Moodle matches these exact words
                a = etree.SubElement(q, "answer", fraction=g.percent(oid))
                a.set("format", "moodle_auto_format")
                self.text(a, oid)
                self.formatted(a, "feedback", t.feedback(oid), item.id,
                               f"text.{self.lang}.feedback.{oid}")
        if item.tags:
            tags = etree.SubElement(q, "tags")
            for tag in item.tags:
                self.text(etree.SubElement(tags, "tag"), tag)
        self.warnings.extend(t.warnings)


def _moodle_tree(collection: Collection, lang: str) -> ExportResult:
    """The Moodle XML file as it was written before the text writer (commit 1f45f99): an lxml
    `<quiz>` tree serialised at once. The oracle of the text writer."""
    w = _TreeWriter(collection, lang)
    w.category(category_path(collection), w.bank_title())
    seen: set[tuple[str, str]] = set()
    topic = None
    for item in collection.items:
        if item.topic != topic:
            topic = item.topic
            w.category(category_path(collection, topic))
        w.question(item, (item.topic, item.id) in seen)
        seen.add((item.topic, item.id))
    data = etree.tostring(w.root, xml_declaration=True, encoding="UTF-8", pretty_print=True)
    return ExportResult(data, w.warnings)


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
    if fmt == "moodle-xml":
        assert _moodle_tree(seed, lang) == whole


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
        if fmt == "moodle-xml":
            assert _moodle_tree(collection, lang) == whole


def _image_item(item_id: str, stem: str, langs=("en",)) -> Item:
    options = {"a": "Alpha", "b": "Beta"}
    return Item(id=item_id, type="single_choice", topic="t", options=[Option(id="a"),
                Option(id="b")], key=("a",),
                text={la: Content(stem=stem, options=options, feedback={"b": "See ![g](g.png)"})
                      for la in langs})


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
    it = Item(id="it", type="single_choice", topic="t", options=[Option(id="a"), Option(id="b")],
              key=("a",), text={"en": Content(
                  stem=stem, options=options,
                  feedback={"b": text} if where == "feedback" else {},
                  explanation=text if where == "explanation" else None)})
    root, _ = _qti_item_tree(it, "en")
    if next(root.iter(qti21._Q + "img"), None) is not None:
        assert qti21._may_show_images(it, "en")


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
    from dpassess.errors import UsageError

    (tmp_path / "data-parallelism-id.txt").mkdir()
    with pytest.raises(UsageError, match="is a directory"):
        write_collection(seed, "gift", ["en", "id"], tmp_path)
    assert _all_files(tmp_path) == ["data-parallelism-id.txt"]


@given(st.text(alphabet=st.sampled_from(list("ab <>&\"'\r\n\t]]>é漢😀\x01\ufffe\ud800")), max_size=12))
def test_moodle_text_element_as_lxml_writes_it(value):
    writer = moodle_xml._Writer(_collection([]), "en", io.BytesIO())
    tree = _TreeWriter(_collection([]), "en")
    parent = etree.SubElement(tree.root, "x")
    tree.text(parent, value, "it", "f")
    expected = etree.tostring(parent[0], encoding="UTF-8").decode()
    assert (writer.text(value, "it", "f"), writer.warnings) == (expected, tree.warnings)


_HTML = ["<p>", "</p>", "<br>", "<b>", "</b>", "<table><tr><td>", "&nbsp;", "&amp;", "x", " ",
         "\n", "<!-- c -->", "<span lang='en'>", "<span lang='1'>", "</span>", "<img src='a b.png'>",
         "\r", "é", '"', "<div>", "<ul><li>", "<foo>", "]]>", "*e*", "`c`", "\t", "\x01", "&",
         "<", ">", "1. ", "- "]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_HTML), max_size=12).map("".join),
       st.sampled_from(["stem", "option", "feedback", "explanation", "title"]),
       st.sampled_from(["single_choice", "multiple_response"]))
def test_qti_item_text_equals_the_tree(text, where, kind):
    text = text if text.strip() else "x"
    options = {"a": text if where == "option" else "A", "b": "B"}
    it = Item(id="it", type=kind, topic="t", options=[Option(id="a"), Option(id="b")],
              key=("a",), text={"en": Content(
                  title=text if where == "title" else None,
                  stem=text if where == "stem" else "Q", options=options,
                  feedback={"a": text, "b": "fb"} if where == "feedback" else {},
                  explanation=text if where == "explanation" else None)})
    builder = qti21._ItemBuilder(it, "en")
    data = builder.xml()
    root, warnings = _qti_item_tree(it, "en")
    assert (data, builder.warnings) == (qti21._xml(root), warnings)


@given(st.text(alphabet=st.sampled_from(list("ab <>&\"'\r\n\t]é漢😀")), max_size=12))
def test_escapes_as_libxml2(value):
    from dpassess.export._xmlchars import escape_attr, escape_text

    el = etree.Element("x", a=value)
    el.text = value
    expected = f'<x a="{escape_attr(value)}">{escape_text(value)}</x>'
    assert etree.tostring(el, encoding="UTF-8").decode() == expected
