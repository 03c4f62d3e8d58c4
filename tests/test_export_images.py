"""Local images in the Moodle exports: Moodle XML embeds them as Moodle's own exporter does
(`@@PLUGINFILE@@/<name>` in the text, `<file name path="/" encoding="base64">` after the area's
`<text>`, qformat_xml::write_files); GIFT cannot carry files and says so for each one."""

from __future__ import annotations

import base64
from pathlib import Path

from lxml import etree

from dpassess import load_bank
from dpassess.export import Collection
from dpassess.export.moodle import gift, images, moodle_xml
from dpassess.importers.moodle_xml import read as import_moodle_xml
from dpassess.model import Content, Item, Option, parse_item
from strategies import bank_config, write_bank
from test_export_moodle_oracle import read_xml

PNG = b"\x89PNG\r\n\x1a\n fake image one"
PNG2 = b"\x89PNG\r\n\x1a\n another image"
PLUGINFILE = "@@PLUGINFILE@@/"


def item(stem="Which?", *, id="img-item", kind="single_choice", key=("a",), options=None,
         feedback=None, explanation=None, lang_text=None) -> Item:
    options = options or {"a": "Alpha", "b": "Beta"}
    text = lang_text or {"en": Content(stem=stem, options=options, feedback=feedback or {},
                                       explanation=explanation)}
    return parse_item(dict(id=id, type=kind, topic="t/u", points=1.0,
                options=[Option(id=o) for o in options], key=list(key), text=text))


def bank_of(tmp_path: Path, items: list[Item], langs=("en",), files=None) -> Collection:
    """A bank folder with `items` and the image `files` (relative path -> bytes) beside them."""
    bank = write_bank(tmp_path / "bank", items, bank_config(langs=langs))
    for rel, data in (files if files is not None else {"img/x.png": PNG}).items():
        path = bank / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return Collection.from_bank(load_bank(bank))


def question(data: bytes, n: int = 0) -> etree._Element:
    root = etree.fromstring(data)
    return [q for q in root.findall("question") if q.get("type") != "category"][n]


def area_files(el: etree._Element) -> dict[str, bytes]:
    """The files a text area embeds: name -> decoded bytes, checking Moodle's attributes."""
    out = {}
    for f in el.findall("file"):
        assert f.get("path") == "/" and f.get("encoding") == "base64"
        assert f.getprevious() is not None  # after the area's <text>
        out[f.get("name")] = base64.b64decode(f.text, validate=True)
    return out


def refs(el: etree._Element) -> list[str]:
    """The `src` of each image in the area's HTML text."""
    html = etree.HTML(f"<div>{el.findtext('text')}</div>")
    return [img.get("src") for img in html.iter("img")]


# --- Moodle XML --------------------------------------------------------------------------------


def test_images_in_stem_option_feedback_and_explanation_are_embedded(tmp_path):
    it = item("See ![d](img/x.png)", options={"a": "A ![d](img/x.png)", "b": "B"},
              feedback={"a": "Yes ![d](img/x.png)"}, explanation="Because ![d](img/x.png)")
    result = moodle_xml.export(bank_of(tmp_path, [it]), "en")
    assert result.warnings == []
    q = question(result.data)
    answer = q.find("answer")
    areas = [q.find("questiontext"), q.find("generalfeedback"), answer, answer.find("feedback")]
    for el in areas:
        assert refs(el) == [PLUGINFILE + "x.png"]
        assert area_files(el) == {"x.png": PNG}
        assert [c.tag for c in el] == ["text", "file"] + (["feedback"] if el is answer else [])
    # the other answer and the combined feedback have no files
    assert area_files(q.findall("answer")[1]) == {}
    assert q.find("correctfeedback/file") is None
    # what Moodle's importer (import_files_as_draft) creates, read by the independent oracle
    (read,) = [x for x in read_xml(result.data) if x.qtype != "category"]
    assert read.files == {area: {"/x.png": PNG} for area in
                          ("questiontext", "generalfeedback", "answer.0", "feedback.0")}
    assert read.questiontext == f'<p>See <img src="{PLUGINFILE}x.png" alt="d"></p>'


def test_the_same_image_in_two_fields_is_embedded_in_each_area(tmp_path):
    it = item("![d](img/x.png)", explanation="again ![d](img/x.png)")
    q = question(moodle_xml.export(bank_of(tmp_path, [it]), "en").data)
    assert area_files(q.find("questiontext")) == area_files(q.find("generalfeedback")) == {
        "x.png": PNG}


def test_names_colliding_in_one_area_are_renamed_and_repeats_embedded_once(tmp_path):
    it = item("![a](a/x.png) ![b](b/x.png) ![a again](a/x.png) ![same bytes](c/x.png)")
    files = {"a/x.png": PNG, "b/x.png": PNG2, "c/x.png": PNG}
    result = moodle_xml.export(bank_of(tmp_path, [it], files=files), "en")
    qt = question(result.data).find("questiontext")
    assert refs(qt) == [PLUGINFILE + n for n in ("x.png", "x-2.png", "x.png", "x.png")]
    assert area_files(qt) == {"x.png": PNG, "x-2.png": PNG2}
    assert result.warnings == []


def test_names_are_url_escaped_in_the_text_and_cleaned_as_moodle_does(tmp_path):
    it = item("![s](img/chart%20one.png) ![q](<img/a&b:c's.png>) ![u](img/%C3%A9t%C3%A9.png)")
    files = {"img/chart one.png": PNG, "img/a&b:c's.png": PNG2, "img/été.png": b"utf8"}
    result = moodle_xml.export(bank_of(tmp_path, [it], files=files), "en")
    qt = question(result.data).find("questiontext")
    # Moodle's clean_param(PARAM_FILE) would change `& : '`: they become `_`
    assert area_files(qt) == {"chart one.png": PNG, "a_b_c_s.png": PNG2, "été.png": b"utf8"}
    assert refs(qt) == [PLUGINFILE + "chart%20one.png", PLUGINFILE + "a_b_c_s.png",
                        PLUGINFILE + "%C3%A9t%C3%A9.png"]


def test_multi_puts_the_files_of_every_language_in_the_one_area(tmp_path):
    opts = {"a": "A", "b": "B"}
    it = item(lang_text={
        "id": Content(stem="Lihat ![g](img/id.png) ![s](img/x.png)", options=opts),
        "en": Content(stem="See ![g](img/en.png) ![s](img/x.png)", options=opts)})
    files = {"img/id.png": b"ID", "img/en.png": b"EN", "img/x.png": PNG}
    result = moodle_xml.export(bank_of(tmp_path, [it], langs=("id", "en"), files=files), "multi")
    assert result.warnings == []
    qt = question(result.data).find("questiontext")
    assert area_files(qt) == {"id.png": b"ID", "x.png": PNG, "en.png": b"EN"}
    assert sorted(refs(qt)) == sorted(PLUGINFILE + n for n in
                                      ("id.png", "x.png", "en.png", "x.png"))
    assert 'class="multilang"' in qt.findtext("text")


def test_images_that_cannot_be_embedded_keep_their_src_and_warn(tmp_path, monkeypatch):
    it = item("![m](gone.png) ![o](../up.png) ![u](img/locked.png) ![ok](img/x.png)")
    coll = bank_of(tmp_path, [it], files={"img/x.png": PNG, "img/locked.png": PNG2, "../up.png": PNG})
    real = images.read_media

    def read_media(local):
        if local.name == "locked.png":
            raise PermissionError(13, "Permission denied")
        return real(local)

    monkeypatch.setattr(images, "read_media", read_media)
    result = moodle_xml.export(coll, "en")
    qt = question(result.data).find("questiontext")
    assert refs(qt) == ["gone.png", "../up.png", "img/locked.png", PLUGINFILE + "x.png"]
    assert area_files(qt) == {"x.png": PNG}
    got = [(w.item, w.field, w.message) for w in result.warnings]
    assert [g[:2] for g in got] == [("img-item", "text.en.stem")] * 3
    assert "'gone.png' not found" in got[0][2]
    assert "'../up.png' is outside the item's folder" in got[1][2]
    assert "'img/locked.png' cannot be read" in got[2][2] and "Permission denied" in got[2][2]
    assert all("broken image in Moodle" in g[2] for g in got)


def test_an_image_not_found_leaves_the_text_exactly_as_rendered(tmp_path):
    plain = moodle_xml.export(bank_of(tmp_path / "a", [item("![m](gone.png) <b>x</b>")],
                                      files={}), "en")
    assert b"<img src=\"gone.png\" alt=\"m\" />" in plain.data  # not reserialised
    assert len(plain.warnings) == 1


def test_remote_and_data_images_travel_as_written(tmp_path):
    srcs = ["https://example.org/a.png", "http://example.org/b.png",
            "data:image/png;base64,iVBORw0KGgo=", "/abs/c.png", "#frag"]
    it = item(" ".join(f"![r]({s})" for s in srcs))
    result = moodle_xml.export(bank_of(tmp_path, [it]), "en")
    qt = question(result.data).find("questiontext")
    assert refs(qt) == srcs and area_files(qt) == {}
    assert result.warnings == []
    gift_result = gift.export(bank_of(tmp_path / "g", [it]), "en")
    assert [w for w in gift_result.warnings if w.item] == []


def test_true_false_feedback_images_are_embedded_and_the_answer_words_kept(tmp_path):
    it = item("True?", kind="true_false", key=("true",),
              options={"true": "True", "false": "False"}, feedback={"false": "![n](img/x.png)"})
    q = question(moodle_xml.export(bank_of(tmp_path, [it]), "en").data)
    true_a, false_a = q.findall("answer")
    assert [true_a.findtext("text"), false_a.findtext("text")] == ["true", "false"]
    assert area_files(true_a) == area_files(false_a) == {}
    assert area_files(false_a.find("feedback")) == {"x.png": PNG}
    (read,) = [x for x in read_xml(etree.tostring(q.getparent())) if x.qtype != "category"]
    assert read.files == {"feedback.1": {"/x.png": PNG}}


def test_no_files_are_carried_to_the_next_question(tmp_path):
    with_image = item("![d](img/x.png)", id="first")
    without = item("No image", id="second")  # the same shape; the image file is read once
    again = item("![d](img/x.png)", id="third")
    data = moodle_xml.export(bank_of(tmp_path, [with_image, without, again]), "en").data
    assert [len(question(data, n).findall(".//file")) for n in range(3)] == [1, 0, 1]


# --- GIFT --------------------------------------------------------------------------------------


def test_gift_warns_for_every_local_image_and_keeps_the_text(tmp_path):
    it = item("See ![d](img/x.png)", options={"a": "A ![d](img/x.png)", "b": "B"},
              feedback={"b": "![m](gone.png)"}, explanation="![r](https://e.org/r.png)")
    coll = bank_of(tmp_path, [it])
    result = gift.export(coll, "en")
    got = [(w.item, w.field, w.message) for w in result.warnings if w.item]
    assert got == [
        ("img-item", field, f"GIFT cannot embed image files: upload {src} to Moodle and fix "
                            "the link, or use Moodle XML")
        for field, src in [("text.en.stem", "img/x.png"), ("text.en.options.a", "img/x.png"),
                           ("text.en.feedback.b", "gone.png")]]
    text = result.data.decode()
    assert 'src\\="img/x.png"' in text and "PLUGINFILE" not in text


def test_gift_multi_warns_for_the_images_of_every_language(tmp_path):
    opts = {"a": "A", "b": "B"}
    it = item(lang_text={"id": Content(stem="![g](img/id.png)", options=opts),
                         "en": Content(stem="![g](img/en.png)", options=opts)})
    coll = bank_of(tmp_path, [it], langs=("id", "en"), files={})
    got = [(w.field, w.message.split(": upload ")[1].split(" ")[0])
           for w in gift.export(coll, "multi").warnings if w.item]
    assert got == [("text.multi.stem", "img/id.png"), ("text.multi.stem", "img/en.png")]


# --- items without images: unchanged --------------------------------------------------------------


# --- round trip through dpassess's own Moodle XML importer -----------------------------------


def test_import_brings_embedded_files_back_beside_the_items(tmp_path):
    """The importer (src/dpassess/importing/moodle_xml.py) writes each `<file>` as
    `img/<item id>/<name>` and points the text there (tests/test_import_images.py has the rest)."""
    it = item("See ![d](img/x.png)", explanation="![d](img/x.png)")
    data = moodle_xml.export(bank_of(tmp_path, [it]), "en").data
    result = import_moodle_xml(data, "bank.xml", "en")
    assert not result.warnings
    (back,) = result.items
    assert back.text["en"].stem == f"See ![d](img/{back.id}/x.png)"
    assert result.files == {f"img/{back.id}/x.png": PNG}


PDF = b"%PDF-1.4 fake"
MP3 = b"ID3 fake audio"


def test_linked_local_files_are_embedded_as_moodle_does_and_missing_ones_warned(tmp_path):
    it = item("Read [the notes](docs/notes.pdf), hear <a href=\"a.mp3\">this</a>, see "
              "[gone](gone.pdf) and [the site](https://example.org/x.pdf).",
              feedback={"a": "Again: [notes](docs/notes.pdf)."})
    coll = bank_of(tmp_path, [it], files={"docs/notes.pdf": PDF, "a.mp3": MP3})
    result = moodle_xml.export(coll, "en")
    [q] = [q for q in read_xml(result.data) if q.qtype != "category"]
    assert 'href="@@PLUGINFILE@@/notes.pdf"' in q.questiontext
    assert 'href="@@PLUGINFILE@@/a.mp3"' in q.questiontext
    assert 'href="gone.pdf"' in q.questiontext and 'href="https://example.org/x.pdf"' in (
        q.questiontext)
    assert q.files["questiontext"] == {"/notes.pdf": PDF, "/a.mp3": MP3}
    assert q.files["feedback.0"] == {"/notes.pdf": PDF}  # each text area has its own files
    [missing] = [w.message for w in result.warnings if "linked file" in w.message]
    assert missing.startswith("linked file 'gone.pdf' not found")
    assert missing.endswith("shows a broken link in Moodle")
    messages = [w.message for w in gift.export(coll, "en").warnings]
    assert sum("cannot embed linked files: upload docs/notes.pdf" in m for m in messages) == 2
    assert any("upload a.mp3" in m for m in messages)
    assert not any("example.org" in m for m in messages)
