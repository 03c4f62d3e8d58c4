"""Golden files: every export, in every format and language, of the seed bank and of the
kitchen-sink bank (tests/banks/kitchen-sink/, every feature of the item format once) compared
with the files under tests/golden/; a changed output fails with a diff.

After a deliberate change to an export, rewrite the files and review the diff before committing:

    .venv/bin/python -m pytest tests/test_golden.py --update-goldens

QTI packages are kept unzipped (one golden file per zip entry) and compared entry by entry, XML
as canonical XML (C14N 2.0); the goldens themselves must validate against the official XSDs.
Moodle XML and GIFT are compared byte for byte, and read back by the port of Moodle's readers.
The kitchen-sink bank's images are made here (`IMAGES`), so the PNG files are reproducible.
"""

from __future__ import annotations

import difflib
import io
import shutil
import struct
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from lxml import etree

import moodle_multianswer as multianswer
from conftest import ROOT, SEED_BANK, files
from dpassess import load_bank
from dpassess.export import EXPORTERS, Collection
from dpassess.model import (
    ChoiceBase,
    Cloze,
    Item,
    ItemType,
    Matching,
    MultipleResponse,
    Numerical,
    ShortAnswer,
    TrueFalse,
)
from test_export_moodle_oracle import nearest_grade, read_gift, read_xml

GOLDEN = ROOT / "tests" / "golden"
KITCHEN_SINK = ROOT / "tests" / "banks" / "kitchen-sink"
BANKS = {"data-parallelism": SEED_BANK, "kitchen-sink": KITCHEN_SINK}
FORMATS = tuple(EXPORTERS)  # every registered format has its goldens
LANGS = ("id", "en")


# --- the kitchen-sink bank's images -------------------------------------------------------------


def png(width: int, height: int, pixel: Callable[[int, int], tuple[int, int, int]]) -> bytes:
    """An 8-bit RGB PNG; deflate level 0 (stored blocks), so the bytes do not depend on zlib's
    version."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data))
    rows = b"".join(b"\0" + b"".join(bytes(pixel(x, y)) for x in range(width))
                    for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 0))
            + chunk(b"IEND", b""))


IMAGES = {  # path in the bank -> bytes
    "img/hash-table.png": png(16, 8, lambda x, y: (255, 255, 255) if x % 2 else (40, 90, 200)),
    "img/id/stable.png": png(12, 6, lambda x, y: (200, 40, 40) if x < 6 else (250, 220, 200)),
    "img/en/stable.png": png(12, 6, lambda x, y: (40, 160, 60) if x < 6 else (210, 240, 210)),
    "img/growth.png": png(10, 10, lambda x, y: (0, 0, 0) if y == 9 - x else (255, 255, 255)),
}


def test_the_images_are_the_ones_made_here(request):
    if request.config.getoption("--update-goldens"):
        for rel, data in IMAGES.items():
            (KITCHEN_SINK / rel).parent.mkdir(parents=True, exist_ok=True)
            (KITCHEN_SINK / rel).write_bytes(data)
    on_disk = {k: v for k, v in files(KITCHEN_SINK).items() if k.endswith(".png")}
    assert on_disk == IMAGES, "regenerate with --update-goldens (see this module's docstring)"


def test_png_writer_makes_what_a_png_reader_reads():
    """Read back by the PNG format's own rules: signature, chunk CRCs, filter 0 rows."""
    data = png(3, 2, lambda x, y: (x, y, 7))
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        assert struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0] == zlib.crc32(
            kind + body)
        chunks[kind] = body
        pos += 12 + length
    assert list(chunks) == [b"IHDR", b"IDAT", b"IEND"]
    assert struct.unpack(">IIBBBBB", chunks[b"IHDR"]) == (3, 2, 8, 2, 0, 0, 0)
    assert zlib.decompress(chunks[b"IDAT"]) == bytes([0, 0, 0, 7, 1, 0, 7, 2, 0, 7,
                                                      0, 0, 1, 7, 1, 1, 7, 2, 1, 7])


def test_the_kitchen_sink_has_every_feature():
    """So that the goldens cover them all (a new item type fails here until the bank has one)."""
    items = collection("kitchen-sink").items
    texts = [c for it in items for c in it.text.values()]
    assert {it.type for it in items} == set(ItemType)
    assert {it.languages for it in items} == {("id", "en")}
    choice = [it for it in items if isinstance(it, ChoiceBase)]
    mr = [it for it in items if isinstance(it, MultipleResponse)]
    assert {it.weights is None for it in mr} == {True, False}
    tf = [it for it in items if isinstance(it, TrueFalse)]
    assert {any(it.text[la].options for la in it.languages) for it in tf} == {True, False}
    assert {it.key for it in tf} == {("true",), ("false",)}
    assert any(o.locked for it in choice for o in it.options)
    assert {it.shuffle for it in choice} == {True, False}
    assert {it.points for it in items} > {1.0}
    assert all(it.tags for it in choice) and all(it.difficulty for it in items)
    assert any(it.suppress for it in items) and any(it.source for it in items)
    assert all(c.feedback for it in choice for c in it.text.values())
    assert any(c.explanation for c in texts)
    assert any(c.title is None for c in texts) and any(c.title for c in texts)
    num = [it for it in items if isinstance(it, Numerical)]
    assert any(a.min is not None for it in num for a in it.answers)  # a range
    assert any(a.fraction < 1 for it in num for a in it.answers)  # partial credit
    assert any(it.units and it.unit_penalty for it in num)
    short = [it for it in items if isinstance(it, ShortAnswer)]
    assert any("*" in w for it in short for c in it.text.values() for ws in c.answers.values()
               for w in ws)
    assert any(it.distractors for it in items if isinstance(it, Matching))
    gaps = {g.type for it in items if isinstance(it, Cloze) for g in it.gaps}
    assert gaps == {"short_answer", "numerical", "choice", "multiple_response"}
    sets = [s for s in collection("kitchen-sink").stimuli]
    assert sets and sum(it.stimulus is not None for it in items) >= 2
    markdown = "\n".join(c.stem + (c.explanation or "") for c in texts)
    for feature in ("\n\n", "```", "**", "*", "`", "](http", "\n- ", "\n  - ", "1. ", "\n> ",
                    "<sup>", "<img ", "![", "]]>", "&", "<"):
        assert feature in markdown, feature
    shown = {p for p in IMAGES if any(p in m for m in markdown.split("\n"))}
    assert shown == set(IMAGES)


# --- the goldens ----------------------------------------------------------------------------------


def golden_path(bank: str, fmt: str, lang: str) -> Path:
    """Where the golden of one export lives: a folder (a zip's entries) or a file."""
    exporter = EXPORTERS[fmt]
    name = lang if exporter.suffix == ".zip" else f"{bank}-{lang}{exporter.suffix}"
    if bank == "data-parallelism":  # the seed bank's goldens keep the layout they had
        return GOLDEN / exporter.folder / name
    return GOLDEN / bank / fmt / name


def cases() -> list[tuple[str, str, str]]:
    return [(bank, fmt, lang) for bank in BANKS for fmt in FORMATS
            for lang in (*LANGS, *(("multi",) if EXPORTERS[fmt].multi else ()))]


_collections: dict[str, Collection] = {}


def collection(bank: str) -> Collection:
    if bank not in _collections:
        _collections[bank] = Collection.from_bank(load_bank(BANKS[bank]))
    return _collections[bank]


def _parser() -> etree.XMLParser:
    return etree.XMLParser(no_network=True, resolve_entities=False)


def _canonical(data: bytes) -> bytes:
    return etree.tostring(etree.fromstring(data, _parser()), method="c14n2")


def _diff(name: str, want: bytes, got: bytes, limit: int = 60) -> str:
    if b"\0" in want + got:
        return f"{name}: binary contents differ ({len(want)} bytes golden, {len(got)} now)"
    lines = list(difflib.unified_diff(want.decode("utf-8", "replace").splitlines(),
                                      got.decode("utf-8", "replace").splitlines(),
                                      f"golden/{name}", f"export/{name}", lineterm="", n=2))
    more = f"\n... {len(lines) - limit} more diff lines" if len(lines) > limit else ""
    return "\n".join(lines[:limit]) + more


def _entries(fmt: str, data: bytes) -> dict[str, bytes]:
    """An export as named parts: a zip's entries, or the one file ('' names it)."""
    if EXPORTERS[fmt].suffix == ".zip":
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            return {name: z.read(name) for name in z.namelist()}
    return {"": data}


def _golden_entries(path: Path) -> dict[str, bytes]:
    if path.is_dir():
        return files(path)
    return {"": path.read_bytes()} if path.exists() else {}


def _write(path: Path, entries: dict[str, bytes]) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    if list(entries) == [""]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(entries[""])
        return
    for name, data in entries.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(data)


def compare(got: dict[str, bytes], want: dict[str, bytes], label: str) -> list[str]:
    """Every difference between an export's parts and its golden's, as readable text."""
    problems = []
    if sorted(got) != sorted(want):
        problems.append(f"{label}: entries differ: only in the golden {sorted(set(want) - set(got))}"
                        f", only in the export {sorted(set(got) - set(want))}")
    for name in sorted(set(got) & set(want)):
        a, b = want[name], got[name]
        same = _canonical(a) == _canonical(b) if name.endswith(".xml") else a == b
        if not same:
            problems.append(_diff(f"{label}/{name}".rstrip("/"), a, b))
    return problems


@pytest.mark.parametrize("bank, fmt, lang", cases())
def test_export_matches_golden(request, bank, fmt, lang):
    path = golden_path(bank, fmt, lang)
    got = _entries(fmt, EXPORTERS[fmt].export(collection(bank), lang).data)
    if request.config.getoption("--update-goldens"):
        _write(path, got)
    want = _golden_entries(path)
    assert want, f"{path.relative_to(ROOT)} is missing: run pytest with --update-goldens"
    problems = compare(got, want, str(path.relative_to(GOLDEN)))
    assert not problems, ("the export differs from its golden file (after a deliberate change: "
                          "pytest --update-goldens, then review the diff):\n" + "\n".join(problems))


def test_compare_reports_a_changed_entry_a_missing_one_and_ignores_xml_spelling():
    want = {"a.xml": b'<r x="1"><b/></r>', "img.png": b"\x89PNG\0\1", "gone.xml": b"<r/>"}
    same_xml = {"a.xml": b"<?xml version='1.0'?>\n<r  x='1'><b></b></r>", "img.png": b"\x89PNG\0\1",
                "gone.xml": b"<r/>"}
    assert compare(same_xml, want, "t") == []
    changed = {"a.xml": b'<r x="2"><b/></r>', "img.png": b"\x89PNG\0\2", "new.xml": b"<r/>"}
    problems = compare(changed, want, "t")
    assert "only in the golden ['gone.xml'], only in the export ['new.xml']" in problems[0]
    assert '-<r x="1"><b/></r>' in problems[1] and '+<r x="2"><b/></r>' in problems[1]
    assert problems[2] == "t/img.png: binary contents differ (6 bytes golden, 6 now)"


def test_every_golden_file_has_its_test():
    """A golden left behind by a renamed bank or format would never be compared."""
    expected: set[Path] = set()
    for case in cases():
        path = golden_path(*case)
        expected |= ({path / n for n in files(path)} if path.is_dir() else {path})
    on_disk = {p for p in GOLDEN.rglob("*") if p.is_file()}
    assert sorted(on_disk - expected) == []


# --- the goldens are what the LMS readers accept ----------------------------------------------------


def _zip(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in sorted(entries.items()):
            z.writestr(name, data)
    return buf.getvalue()


@pytest.mark.parametrize("bank, lang", [(b, la) for b in BANKS for la in LANGS])
def test_qti_goldens_validate_against_the_official_schemas(bank, lang):
    from test_export_qti21 import check_package  # the XSDs of tests/schemas, and IMS CP's rules

    entries = files(golden_path(bank, "qti21", lang))
    docs = check_package(_zip(entries))
    items = collection(bank).items
    assert sorted(n for n in docs if n.startswith("items/")) == sorted(
        f"items/{it.id}.xml" for it in items)
    if bank == "kitchen-sink":  # every image of the texts in `lang` travels in the package
        assert {n for n in entries if n.endswith(".png")} == {
            f"items/{p}" for p in IMAGES if "/" not in p[4:] or p.startswith(f"img/{lang}/")}


#: The Moodle question type of each item type (the new types are read back field by field in
#: tests/test_export_moodle_types.py).
MOODLE_TYPES = {
    ItemType.single_choice: "multichoice", ItemType.multiple_response: "multichoice",
    ItemType.true_false: "truefalse", ItemType.numerical: "numerical",
    ItemType.short_answer: "shortanswer", ItemType.matching: "match", ItemType.essay: "essay",
    ItemType.ordering: "ordering", ItemType.cloze: "cloze", ItemType.description: "description",
}


def _kitchen_sink_items() -> dict[str, Item]:
    return {it.id: it for it in collection("kitchen-sink").items}


def expected_fractions(item: Item) -> list[float]:
    """The fractions Moodle stores for the item's options (its grade list's nearest)."""
    return [nearest_grade(f) for f in item.fractions().values()]


@pytest.mark.parametrize("lang", [*LANGS, "multi"])
def test_moodle_goldens_read_back_as_moodle_reads_them(lang):
    questions = [q for q in read_xml(golden_path("kitchen-sink", "moodle-xml", lang).read_bytes())
                 if q.qtype != "category"]
    items = _kitchen_sink_items()
    assert [q.idnumber for q in questions] == list(items)
    for q in questions:
        it = items[q.idnumber]
        if not isinstance(it, Cloze):  # a cloze's mark is its gaps' (below)
            assert q.defaultmark == (0 if it.type is ItemType.description else it.points)
        assert q.qtype == MOODLE_TYPES[it.type]
        if isinstance(it, Cloze):  # qtype_multianswer's own parser: every gap, none refused
            cloze = multianswer.extract(q.questiontext)
            assert multianswer.validate(cloze) == []
            assert len(cloze.subs) == len(it.gaps)
            assert cloze.defaultmark == it.points
        if q.qtype == "truefalse":
            assert q.correctanswer == (it.key == ("true",))
        elif q.qtype == "multichoice":
            assert q.fractions == pytest.approx(expected_fractions(it), abs=1e-9)
            assert q.shuffleanswers == int(it.shuffle)
    embedded = {name: data for q in questions for area in q.files.values()
                for name, data in area.items()}
    shown = {"/hash-table.png", "/growth.png"} | (
        {"/stable.png"} if lang != "multi" else {"/stable.png", "/stable-2.png"})
    assert set(embedded) == shown
    assert set(embedded.values()) <= set(IMAGES.values())


@pytest.mark.parametrize("lang", [*LANGS, "multi"])
def test_gift_goldens_read_back_as_moodle_reads_them(lang):
    questions = [q for q in read_gift(golden_path("kitchen-sink", "gift", lang).read_text(
        encoding="utf-8")) if q.qtype != "category"]
    items = _kitchen_sink_items()
    # GIFT has no ordering questions, nor cloze questions of several gaps: they are left out
    assert [q.idnumber for q in questions] == [
        i for i, it in items.items() if it.type is not ItemType.ordering
        and not (isinstance(it, Cloze) and len(it.gaps) > 1)]
    for q in questions:
        it = items[q.idnumber]
        assert q.qtype == MOODLE_TYPES[it.type]
        if q.qtype == "truefalse":
            assert q.correctanswer == (it.key == ("true",))
        elif q.qtype == "multichoice":
            assert q.fractions == pytest.approx(expected_fractions(it), abs=1e-9)
