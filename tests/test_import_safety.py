"""Untrusted input: every importer fails with a clear InputError (or skips a question with the
reason), never a traceback; XML entities, zip slips, bombs, links and oversize files are refused.
Every hostile file is built here by the test itself."""

from __future__ import annotations

import importlib
import io
import stat
import zipfile
from functools import cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import SEED_BANK
from dpassess.bank.load import load_banks
from dpassess.export import EXPORTERS, Collection
from dpassess.export.qti.package import zip_bytes
from dpassess.importers import READERS, ImportResult, InputError, import_file
from dpassess.importers import safe as _safe
from dpassess.model import MAX_TEXT


def reader(fmt: str):
    return importlib.import_module(READERS[fmt])


@cache
def seed_export(fmt: str) -> bytes:
    bank = Collection.from_bank(load_banks([SEED_BANK])[0])
    return EXPORTERS[fmt].export(bank, "multi" if fmt not in ("qti21", "canvas") else "en").data


def only_clear_errors(fmt: str, data: bytes) -> None:
    try:
        result = reader(fmt).read(data, "input", "en")
    except InputError as exc:
        assert str(exc).startswith("input"), exc  # names the file
        return
    assert isinstance(result, ImportResult)
    for s in result.skipped:
        assert s.path.startswith("input") and s.message and s.code == fmt


# --- fuzz --------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", list(READERS))
@given(data=st.binary(max_size=2000))
def test_random_bytes(fmt, data):
    only_clear_errors(fmt, data)


@st.composite
def mutated(draw, original: bytes) -> bytes:
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 6))):
        pos = draw(st.integers(0, len(data)))
        match draw(st.sampled_from(["delete", "insert", "flip", "duplicate"])):
            case "delete":
                del data[pos:pos + draw(st.integers(1, 64))]
            case "insert":
                data[pos:pos] = draw(st.sampled_from(
                    [b"{", b"}", b"~", b"=", b"#", b"::", b"\n\n", b"//", b"<", b"</text>",
                     b"<![CDATA[", b"]]>", b"\xff", b"%50%", b"$CATEGORY:", b"\\", b"&", b"\x00",
                     b'<span lang="xx" class="multilang">', b"</span>"]))
            case "flip" if data:
                i = min(pos, len(data) - 1)
                data[i] = draw(st.integers(0, 255))
            case "duplicate":
                data[pos:pos] = data[max(0, pos - 200):pos]
    return bytes(data)


@pytest.mark.parametrize("fmt", list(READERS))
@given(data=st.data())
def test_mutated_exports(fmt, data):
    only_clear_errors(fmt, data.draw(mutated(seed_export(fmt))))


@pytest.mark.parametrize("fmt", ["qti21", "canvas"])
@given(data=st.data())
def test_mutated_qti_items_in_a_valid_zip(fmt, data):
    files = {}
    with zipfile.ZipFile(io.BytesIO(seed_export(fmt))) as zf:
        for name in zf.namelist():
            files[name] = zf.read(name)
    target = data.draw(st.sampled_from(sorted(files)))
    files[target] = data.draw(mutated(files[target]))
    only_clear_errors(fmt, zip_bytes(files))


# --- XML entities --------------------------------------------------------------------------------

XXE = b"""<?xml version="1.0"?>
<!DOCTYPE quiz [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<quiz><question type="multichoice"><name><text>&xxe;</text></name></question></quiz>"""

LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<quiz><question type="category"><category><text>&lol3;</text></category></question></quiz>"""


@pytest.mark.parametrize("doc", [XXE, LAUGHS], ids=["xxe", "billion-laughs"])
def test_entity_declarations_are_refused(doc):
    with pytest.raises(InputError, match="entity declarations are not accepted"):
        reader("moodle-xml").read(doc, "bank.xml", "en")
    with pytest.raises(InputError, match="entity declarations are not accepted"):
        reader("qti21").read(zip_bytes({"items/q.xml": doc.replace(b"quiz", b"assessmentItem")}),
                             "pkg.zip", "en")


def test_entity_text_inside_cdata_is_only_text():
    """`<!ENTITY` in a question about XML is content, not a declaration."""
    doc = (b'<?xml version="1.0"?><quiz><question type="essay"><name><text>'
           b"<![CDATA[What does <!ENTITY x 'y'> declare?]]></text></name></question></quiz>")
    result = reader("moodle-xml").read(doc, "bank.xml", "en")
    assert result.skipped == []
    # Moodle shows a name as plain text (tags stripped): `<!ENTITY x 'y'>` reads as a tag
    assert [i.text["en"].title for i in result.items] == ["What does declare?"]


def test_external_dtd_is_not_loaded():
    """A DOCTYPE naming an external DTD is read without fetching it (no network, no file
    access); an entity it would declare cannot be read, which is an error, not lost text."""
    doc = (b'<?xml version="1.0"?><!DOCTYPE quiz SYSTEM "http://127.0.0.1:9/evil.dtd">'
           b'<quiz><question type="essay"><name><text>before &ext; after</text></name>'
           b'</question></quiz>')
    with pytest.raises(InputError, match=r"bank.xml:1:\d+: Entity 'ext' not defined"):
        reader("moodle-xml").read(doc, "bank.xml", "en")
    plain = doc.replace(b"before &ext; after", b"before &amp; after")
    result = reader("moodle-xml").read(plain, "bank.xml", "en")
    assert [i.text["en"].title for i in result.items] == ["before & after"]


#: 18.3: the internal subset is found by parsing (expat stops at the declaration), so a `>`
#: or `[` inside a quoted system id does not hide it; an entity never reaches an attribute.
@pytest.mark.parametrize("prolog", [
    b'<!DOCTYPE quiz SYSTEM "a>b" [ <!ENTITY f "100"> ]>',
    b"<!DOCTYPE quiz PUBLIC '-//A//EN' 'y>[' [ <!ENTITY f '100'> ]>",
    b'<?xml version="1.0"?>\n<!-- [ > -->\n<!DOCTYPE quiz [ <!ENTITY % p "x"> ]>',
    b'<!DOCTYPE quiz [ ]>',
])
def test_internal_subsets_are_refused_whatever_their_quoting(prolog):
    doc = prolog + (b'<quiz><question type="multichoice"><name><text>n</text></name>'
                    b'<questiontext><text>q</text></questiontext>'
                    b'<answer fraction="&f;"><text>a</text></answer>'
                    b'<answer fraction="0"><text>b</text></answer></question></quiz>')
    with pytest.raises(InputError, match="entity declarations are not accepted"):
        reader("moodle-xml").read(doc, "bank.xml", "en")
    with pytest.raises(InputError, match="entity declarations are not accepted"):
        reader("qti21").read(doc.replace(b"quiz", b"assessmentItem"), "q.xml", "en")


@pytest.mark.parametrize("text", [b"before &x; after", b"&x;"])
def test_text_after_an_unknown_entity_is_never_dropped(text):
    """Without a DTD an undeclared entity is not well-formed; with an external one it is an
    error too (lxml would keep a reference node, and readers of `.text` lose what follows)."""
    for prolog in (b"", b'<!DOCTYPE quiz SYSTEM "quiz.dtd">'):
        doc = prolog + b"<quiz><question type='essay'><name><text>" + text + \
            b"</text></name></question></quiz>"
        with pytest.raises(InputError, match="'x'"):
            reader("moodle-xml").read(doc, "bank.xml", "en")


# --- zips ----------------------------------------------------------------------------------------


def raw_zip(entries: list[tuple[zipfile.ZipInfo | str, bytes]],
            compression: int = zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for info, content in entries:
            zf.writestr(info, content)
    return buf.getvalue()


@pytest.mark.parametrize("member", ["../evil.xml", "items/../../evil.xml", "/etc/evil.xml",
                                    "C:/evil.xml", "items\\..\\evil.xml"])
def test_zip_entries_outside_the_folder_are_refused(member):
    data = raw_zip([("imsmanifest.xml", b"<manifest/>"), (member, b"<x/>")])
    with pytest.raises(InputError, match=r"outside the target folder|backslashes"):
        reader("qti21").read(data, "pkg.zip", "en")


def test_zip_symlink_is_refused():
    link = zipfile.ZipInfo("items/q.xml")
    link.create_system = 3
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    data = raw_zip([("imsmanifest.xml", b"<manifest/>"), (link, b"/etc/passwd")])
    with pytest.raises(InputError, match="symbolic link"):
        reader("qti21").read(data, "pkg.zip", "en")


def test_zip_bomb_ratio_is_refused():
    data = raw_zip([("items/q.xml", b"\0" * (4 << 20))], zipfile.ZIP_DEFLATED)
    assert len(data) < 20_000
    with pytest.raises(InputError, match="compression bomb"):
        reader("qti21").read(data, "pkg.zip", "en")


def test_zip_total_size_is_limited(monkeypatch):
    monkeypatch.setattr(_safe, "MAX_ZIP_TOTAL", 1000)
    data = raw_zip([("a.xml", b"x" * 600), ("b.xml", b"y" * 600)])
    with pytest.raises(InputError, match="more than 1,000 bytes uncompressed"):
        reader("qti21").read(data, "pkg.zip", "en")


def test_manifest_href_outside_the_package_is_refused():
    manifest = (b'<manifest xmlns="http://www.imsglobal.org/xsd/imscp_v1p1"><resources>'
                b'<resource identifier="r" type="imsqti_item_xmlv2p1" href="../q.xml"/>'
                b"</resources></manifest>")
    with pytest.raises(InputError, match="points outside the package"):
        reader("qti21").read(zip_bytes({"imsmanifest.xml": manifest}), "pkg.zip", "en")


def test_not_a_zip():
    with pytest.raises(InputError, match=r"pkg\.zip: not a zip file"):
        reader("qti21").read(b"PK\x03\x04 broken", "pkg.zip", "en")


# --- sizes and encodings -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(READERS))
def test_oversize_file_is_refused_before_reading(tmp_path, fmt):
    big = tmp_path / "big.txt"
    with big.open("wb") as fh:  # sparse: the size is checked before anything is read
        fh.truncate(_safe.MAX_INPUT_BYTES + 1)
    with pytest.raises(InputError, match=r"big\.txt: file is 52,428,801 bytes; the limit is"):
        import_file(big, fmt, lang="en")


def test_oversize_field_is_skipped_with_the_reason():
    stem = "x" * 200_000
    gift = f"::big::{stem}{{=a ~b}}\n\n::ok::fine{{=a ~b}}\n".encode()
    result = reader("gift").read(gift, "q.txt", "en")
    assert [i.title("en") for i in result.items] == ["ok"]
    assert [str(s) for s in result.skipped] == [
        "q.txt:1: gift: big: a text field is 200,000 characters; the limit is 100,000"]


LONG_NAME = "n" * (MAX_TEXT + 1)


@pytest.mark.parametrize(("fmt", "data"), [
    ("gift", f"::{LONG_NAME}::Q{{=a ~b}}\n\n::ok::Q{{=a ~b}}\n".encode()),
    ("moodle-xml", (f'<quiz><question type="truefalse"><name><text>{LONG_NAME}</text></name>'
                    '<questiontext><text>Q</text></questiontext><answer fraction="100"><text>true'
                    '</text></answer><answer fraction="0"><text>false</text></answer></question>'
                    '<question type="truefalse"><name><text>ok</text></name><questiontext><text>'
                    'Q</text></questiontext><answer fraction="100"><text>true</text></answer>'
                    '<answer fraction="0"><text>false</text></answer></question></quiz>'
                    ).encode()),
])
def test_a_name_too_long_for_a_title_skips_the_question(fmt, data):
    """The name becomes the title, which the model holds to MAX_TEXT characters like every
    text: a longer one was written unchecked, and the bank then failed to load."""
    result = reader(fmt).read(data, "q", "en")
    assert [i.text["en"].title for i in result.items] == ["ok"]
    assert [(s.line, s.message) for s in result.skipped] == [
        (1, "not a valid item: title: String should have at most 20000 characters")]


@pytest.mark.parametrize(("fmt", "data", "where"), [
    ("gift", b"::a::b{=c ~d}\n\n::x::\xff{=c ~d}", "q:3:6"),
    ("moodle-xml", b"<quiz>\n  <question type='x'>\xc3</question></quiz>", "q:2:22"),
])
def test_non_utf8_is_reported_with_its_position(fmt, data, where):
    with pytest.raises(InputError, match=f"^{where}: not UTF-8: byte 0x"):
        reader(fmt).read(data, "q", "en")


def test_non_utf8_inside_a_package_names_the_entry():
    data = zip_bytes({"items/q.xml": b"<assessmentItem>\n\xfe</assessmentItem>"})
    with pytest.raises(InputError, match=r"^pkg\.zip:items/q\.xml:2:1: not UTF-8: byte 0xfe"):
        reader("qti21").read(data, "pkg.zip", "en")


def test_moodle_xml_in_another_encoding_is_refused():
    data = b'<?xml version="1.0" encoding="ISO-8859-1"?><quiz/>'
    with pytest.raises(InputError, match="declares encoding 'ISO-8859-1'; Moodle XML is UTF-8"):
        reader("moodle-xml").read(data, "q.xml", "en")


@pytest.mark.parametrize("fmt", ["moodle-xml", "qti21"])
def test_a_declared_encoding_python_does_not_know_is_a_clear_error(fmt):
    """expat looks a declared encoding up in Python's codecs and raises LookupError for one it
    does not know (`TF-8`: one byte of `UTF-8` lost, found by the mutation fuzz above)."""
    xml = b"<?xml version='1.0' encoding='TF-8'?>\n<quiz/>"
    if fmt == "qti21":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("imsmanifest.xml", xml)
        xml = buf.getvalue()
    with pytest.raises(InputError, match=r"^input\S*: .*TF-8"):
        reader(fmt).read(xml, "input", "en")


# --- 18.5: the declared encoding; 18.10: duplicate entries; 18.1: links in the bank ----------

QTI_ITEM = ('<?xml version="1.0" encoding="{enc}"?>'
            '<assessmentItem xmlns="http://www.imsglobal.org/xsd/imsqti_v2p1" identifier="q1" '
            'title="{word}" adaptive="false" timeDependent="false" xml:lang="en">'
            '<responseDeclaration identifier="R" cardinality="single" baseType="identifier">'
            '<correctResponse><value>a</value></correctResponse></responseDeclaration>'
            '<itemBody><p>{word}?</p><choiceInteraction responseIdentifier="R">'
            '<simpleChoice identifier="a">ya</simpleChoice>'
            '<simpleChoice identifier="b">tidak</simpleChoice></choiceInteraction></itemBody>'
            '</assessmentItem>')


@pytest.mark.parametrize("enc", ["ISO-8859-1", "windows-1252", "UTF-8", "UTF-16"])
def test_qti_honours_the_declared_encoding(enc):
    data = QTI_ITEM.format(enc=enc, word="Café").encode(enc)
    [item] = reader("qti21").read(data, "q.xml", None).items
    assert item.text["en"].stem == "Café?" and item.text["en"].title == "Café"
    [item] = reader("qti21").read(zip_bytes({"q.xml": data}), "pkg.zip", None).items
    assert item.text["en"].stem == "Café?"


def test_utf8_errors_still_name_line_and_column():
    data = QTI_ITEM.format(enc="UTF-8", word="Caf\udce9").encode("utf-8", "surrogateescape")
    with pytest.raises(InputError, match=r"q.xml:1:\d+: not UTF-8: byte 0xe9"):
        reader("qti21").read(data, "q.xml", None)


def test_duplicate_zip_entry_names_are_refused():
    data = raw_zip([("imsmanifest.xml", b"<manifest/>"), ("items/q.xml", b"<a/>"),
                    ("items/q.xml", b"<b/>")])
    with pytest.raises(InputError, match=r"'items/q\.xml' appears twice"):
        reader("qti21").read(data, "pkg.zip", "en")


def test_an_href_listed_many_times_is_read_once():
    resource = ('<resource identifier="r{n}" type="imsqti_item_xmlv2p1" href="q.xml">'
                '<file href="q.xml"/></resource>')
    manifest = ('<manifest xmlns="http://www.imsglobal.org/xsd/imscp_v1p1"><resources>'
                + "".join(resource.format(n=n) for n in range(5000)) + "</resources></manifest>")
    data = zip_bytes({"imsmanifest.xml": manifest.encode(),
                      "q.xml": QTI_ITEM.format(enc="UTF-8", word="x").encode()})
    result = reader("qti21").read(data, "pkg.zip", None)
    assert len(result.items) == 1
    assert [w.message for w in result.warnings] == [
        "4999 item resource(s) list a file listed before; each file is read once"]


def test_import_never_writes_through_a_symlinked_folder(tmp_path):
    from dpassess.diagnostics import UsageError
    from dpassess.importers import ImportResult, write_items

    outside = tmp_path / "outside"
    outside.mkdir()
    bank = tmp_path / "bank"
    bank.mkdir()
    (bank / "img").symlink_to(outside, target_is_directory=True)
    result = ImportResult(files={"img/q1/a.png": b"png"})
    with pytest.raises(UsageError, match="is a symbolic link"):
        write_items(result, bank)
    assert list(outside.iterdir()) == []
    (bank / "img").unlink()
    (bank / "q1.yaml").symlink_to(outside / "q1.yaml")
    xml = reader("moodle-xml").read(
        b'<quiz><question type="truefalse"><name><text>n</text></name><idnumber>q1</idnumber>'
        b'<questiontext><text>Q</text></questiontext><answer fraction="100"><text>true'
        b'</text></answer><answer fraction="0"><text>false</text></answer></question></quiz>',
        "b.xml", "en")
    with pytest.raises(UsageError, match="is a symbolic link"):
        write_items(xml, bank, overwrite=True)
    assert list(outside.iterdir()) == []
