"""Files embedded in Moodle XML (`<file name path="/" encoding="base64">` in a text's element,
`@@PLUGINFILE@@/<name>` in the text) are imported as image files beside the items:
`img/<item id>/<name>`, the text pointing at them by that relative path (docs/import.md)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from lxml import etree

from conftest import files
from dpassess import load_bank
from dpassess.diagnostics import UsageError
from dpassess.export import Collection
from dpassess.export.moodle import moodle_xml
from dpassess.importers import WouldOverwrite, write_items
from dpassess.importers.moodle_xml import read as import_moodle_xml
from dpassess.importers.questions import file_name
from dpassess.model import Content
from strategies import bank_config, write_bank
from test_export_images import PNG, PNG2, area_files, bank_of, item

PNG3 = b"\x89PNG\r\n\x1a\n a third image"


def files_by_area(data: bytes) -> list[list[dict[str, bytes]]]:
    """For each question, the files of each text area that has some, in document order."""
    root = etree.fromstring(data)
    return [[area_files(el) for el in q.iter() if el.find("file") is not None]
            for q in root.findall("question") if q.get("type") != "category"]


def imported_bank(tmp_path: Path, data: bytes, lang: str | None, langs=("en",)) -> Path:
    result = import_moodle_xml(data, "bank.xml", lang)
    bank = write_bank(tmp_path / "imported", [], bank_config(langs=langs))
    write_items(result, bank)
    return bank




def everywhere(lang_image: dict[str, str]) -> dict[str, Content]:
    """Texts showing the image `lang_image[lang]` in the stem, option a, feedback a and the
    explanation, in each language."""
    return {la: Content(stem=f"{la} see ![d]({src})",
                        options={"a": f"{la} A ![d]({src})", "b": f"{la} B"},
                        feedback={"a": f"{la} yes ![d]({src})"},
                        explanation=f"{la} because ![d]({src})")
            for la, src in lang_image.items()}


# --- the round trip ----------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "multi"])
def test_export_import_export_keeps_every_image(tmp_path, lang):
    langs = ("en",) if lang == "en" else ("en", "id")
    images = {"en": "img/x.png", "id": "img/id/x.png"}  # the same name, other bytes
    it = item(lang_text=everywhere({la: images[la] for la in langs}))
    coll = bank_of(tmp_path, [it], langs=langs, files={"img/x.png": PNG, "img/id/x.png": PNG2})
    first = moodle_xml.export(coll, lang)
    assert first.warnings == []
    bank = imported_bank(tmp_path, first.data, "en" if lang == "en" else None, langs)

    (back,) = load_bank(bank).items
    assert back.text["en"].stem == "en see ![d](img/img-item/x.png)"
    assert back.text["en"].options["a"] == "en A ![d](img/img-item/x.png)"
    assert back.text["en"].feedback["a"] == "en yes ![d](img/img-item/x.png)"
    assert back.text["en"].explanation == "en because ![d](img/img-item/x.png)"
    assert (bank / "img/img-item/x.png").read_bytes() == PNG
    if lang == "multi":  # both languages' files were in one area: the second one is renamed
        assert back.text["id"].stem == "id see ![d](img/img-item/x-2.png)"
        assert (bank / "img/img-item/x-2.png").read_bytes() == PNG2
    assert sorted(p for p in files(bank) if p.startswith("img/")) == (
        ["img/img-item/x.png"] if lang == "en" else ["img/img-item/x-2.png", "img/img-item/x.png"])

    again = moodle_xml.export(Collection.from_bank(load_bank(bank)), lang)
    assert again.warnings == []
    assert files_by_area(again.data) == files_by_area(first.data)
    assert len(files_by_area(first.data)[0]) == 4


def test_two_imports_give_the_same_tree_byte_for_byte(tmp_path):
    it = item(lang_text=everywhere({"en": "img/x.png"}))
    data = moodle_xml.export(bank_of(tmp_path, [it]), "en").data
    trees = []
    for n in (1, 2):
        result = import_moodle_xml(data, "bank.xml", "en")
        write_items(result, tmp_path / f"out{n}")
        trees.append(files(tmp_path / f"out{n}"))
    assert trees[0] == trees[1] and "img/img-item/x.png" in trees[0]


# --- hand-written Moodle XML -------------------------------------------------------------------


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def quiz(*questions: str) -> bytes:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<quiz>\n' + "".join(questions)
            + "</quiz>\n").encode()


def question(idnumber: str, stem: str, stem_files: str = "", general: str = "",
             general_files: str = "", answer_files: str = "") -> str:
    return f"""<question type="multichoice">
  <name><text>{idnumber}</text></name>
  <questiontext format="html"><text><![CDATA[{stem}]]></text>{stem_files}</questiontext>
  <generalfeedback format="html"><text><![CDATA[{general}]]></text>{general_files}
  </generalfeedback>
  <idnumber>{idnumber}</idnumber>
  <single>true</single>
  <answer fraction="100"><text><![CDATA[<img src="@@PLUGINFILE@@/x.png" alt="a">]]></text>
    {answer_files}</answer>
  <answer fraction="0"><text>B</text></answer>
</question>
"""


def file(name: str, data: bytes | str, path: str = "/") -> str:
    text = data if isinstance(data, str) else b64(data)
    return f'<file name="{name}" path="{path}" encoding="base64">{text}</file>'


def img(name: str) -> str:
    return f'<img src="@@PLUGINFILE@@/{name}" alt="i">'


def test_same_names_in_two_items_do_not_collide_and_one_item_writes_a_file_once(tmp_path):
    data = quiz(
        question("one", f"<p>{img('x.png')}</p>", file("x.png", PNG),
                 f"<p>{img('x.png')}</p>", file("x.png", PNG), file("x.png", PNG2)),
        question("two", f"<p>{img('x.png')}</p>", file("x.png", PNG3),
                 answer_files=file("x.png", PNG3)))
    result = import_moodle_xml(data, "q.xml", "en")
    assert result.warnings == []
    assert result.files == {"img/one/x.png": PNG, "img/one/x-2.png": PNG2,
                            "img/two/x.png": PNG3}
    one, two = result.items
    assert one.text["en"].stem == one.text["en"].explanation == "![i](img/one/x.png)"
    assert one.text["en"].options["a"] == "![a](img/one/x-2.png)"
    assert two.text["en"].options["a"] == "![a](img/two/x.png)"
    written = write_items(result, tmp_path / "bank")
    assert files(tmp_path / "bank") == {**result.files, "01-one.yaml": written[-2].read_bytes(),
                                       "02-two.yaml": written[-1].read_bytes()}


def test_an_id_given_twice_gets_its_own_image_folder():
    data = quiz(question("same", f"<p>{img('x.png')}</p>", file("x.png", PNG)),
                question("same", f"<p>{img('x.png')}</p>", file("x.png", PNG2)))
    result = import_moodle_xml(data, "q.xml", "en")
    assert [i.id for i in result.items] == ["same", "same-2"]
    assert result.files == {"img/same/x.png": PNG, "img/same-2/x.png": PNG2}
    assert result.items[1].text["en"].stem == "![i](img/same-2/x.png)"


def test_bad_base64_a_missing_file_an_unreferenced_file_and_a_folder_warn():
    data = quiz(question(
        "q1", img("bad.png") + img("gone.png") + img("ok%20one.png"),
        file("bad.png", "not base64!!") + file("unused.png", PNG) + file("ok one.png", PNG)
        + file("deep.png", PNG, path="/sub/")))
    result = import_moodle_xml(data, "q.xml", "en")
    broken = "which the area does not hold (or which could not be read); the link is kept (a " \
             "broken image)"
    at = "q.xml:3: moodle-xml: q1"
    assert [str(w) for w in result.warnings] == [
        f"{at}: questiontext: embedded file 'bad.png' is not valid base64; not imported",
        f"{at}: questiontext: embedded file 'deep.png' is in folder '/sub/' (only files at "
        "'/' are imported); not imported",
        f"{at}: questiontext: the text shows file 'bad.png', {broken}",
        f"{at}: questiontext: the text shows file 'gone.png', {broken}",
        f"{at}: questiontext: embedded file 'unused.png' is not shown by the text; not "
        "imported",
        f"{at}: answer 1: the text shows file 'x.png', {broken}",
    ]
    assert [w.field for w in result.warnings] == ["questiontext"] * 5 + ["answer 1"]
    assert result.files == {"img/q1/ok one.png": PNG}
    (q,) = result.items
    assert q.text["en"].stem == ('<img src="@@PLUGINFILE@@/bad.png" alt="i">'
                                 '<img src="@@PLUGINFILE@@/gone.png" alt="i">'
                                 '<img src="img/q1/ok%20one.png" alt="i">')


@pytest.mark.parametrize("name, safe", [
    ("x.png", "x.png"), ("../evil.png", "image._evil.png"), (".hidden.png", "image.hidden.png"),
    ("a/b\\c.png", "a_b_c.png"), ("..", "image"), ("", "image"), ("a..b.PNG", "a.b.PNG"),
    ("tab\there.png", "tab_here.png"), ("x" * 300 + ".png", "x" * 116 + ".png"),
])
def test_names_are_made_safe_to_write(name, safe):
    assert file_name(name) == safe


def test_a_hostile_name_stays_inside_the_items_folder(tmp_path):
    data = quiz(question("q1", img("..%2F..%2Fevil.png"), file("../../evil.png", PNG)))
    result = import_moodle_xml(data, "q.xml", "en")
    assert list(result.files) == ["img/q1/image._._evil.png"]
    write_items(result, tmp_path / "bank")
    assert (tmp_path / "bank/img/q1/image._._evil.png").read_bytes() == PNG
    assert not (tmp_path / "evil.png").exists()


def test_images_are_not_overwritten_without_force(tmp_path):
    data = quiz(question("q1", img("x.png"), file("x.png", PNG)))
    result = import_moodle_xml(data, "q.xml", "en")
    bank = tmp_path / "bank"
    (bank / "img/q1").mkdir(parents=True)
    (bank / "img/q1/x.png").write_bytes(b"mine")
    with pytest.raises(WouldOverwrite, match=r"x\.png: already exists \(1 file\(s\) would be "
                                             r"overwritten\)$") as exc:
        write_items(result, bank)
    assert exc.value.paths == [bank / "img/q1/x.png"]
    assert isinstance(exc.value, UsageError) and "--force" not in str(exc.value)
    assert files(bank) == {"img/q1/x.png": b"mine"}  # nothing written, not even the item
    write_items(result, bank, overwrite=True)
    assert files(bank)["img/q1/x.png"] == PNG and "01-q1.yaml" in files(bank)


def test_a_path_in_the_way_writes_nothing(tmp_path):
    """Items and their images are written all together or not at all (io.write_all)."""
    data = quiz(question("q1", img("x.png"), file("x.png", PNG)))
    result = import_moodle_xml(data, "q.xml", "en")
    bank = tmp_path / "bank"
    (bank / "q1.yaml").mkdir(parents=True)  # a folder where the item file goes
    with pytest.raises(UsageError, match="is a directory"):
        write_items(result, bank, overwrite=True)
    assert sorted(p.relative_to(bank).as_posix() for p in bank.rglob("*")) == ["q1.yaml"]
