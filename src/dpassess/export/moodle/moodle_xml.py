"""A collection -> Moodle XML (`<quiz>`), the structure Moodle's own `qformat_xml` exporter writes.

A `category` question opens each topic (`$course$/top/<bank>/<topic path>`); single-choice and
multiple-response items become `multichoice`, true/false items `truefalse`. Text fields are HTML in
CDATA with `format="html"`. See docs/export-moodle.md for every field and what is not carried.

`export(collection, lang)` returns the file's bytes; `export(collection, lang, out)` writes the
same bytes to the binary file `out` question by question (bounded memory) and returns the
warnings with empty data. Each `<question>` sits under a `<quiz>` of its own and is serialised
without that wrapper's lines, which gives exactly the bytes (indentation included) of the whole
tree serialised at once. Questions of one shape (type, points, grades, number of tags) share a
working tree built once per export and refilled: its `<text>` elements and `<idnumber>`.

Local images (`![d](img/x.png)`, a file beside the item) are embedded as Moodle's own exporter
does (`qformat_xml::write_files`): the text refers to `@@PLUGINFILE@@/<name>` and the element
holding the text gets a `<file name path="/" encoding="base64">` after its `<text>`. Images that
cannot be embedded keep their `src` and are reported.
"""

from __future__ import annotations

import base64
import io
import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, assert_never
from urllib.parse import quote

from lxml import etree

from dpassess.export import MULTI as ALL_LANGUAGES
from dpassess.export import Collection, ExportResult, ExportWarning
from dpassess.export.moodle.texts import ItemTexts, category_path, grades, image_fragment
from dpassess.lms.moodle import name_html
from dpassess.markup.media import is_local_image, locate_image, may_show_images
from dpassess.markup.xmlchars import has_non_xml, xml_safe
from dpassess.model import Item, ItemType

SUFFIX = ".xml"
MULTI = True  # supports lang="multi" (Moodle's multilang filter form)
FORMAT = "moodle-xml"

_MARKUP = re.compile("[&<>\"']")

#: Moodle's defaults for a new question (qformat_default::defaultquestion, qtype_truefalse).
PENALTY = {"multichoice": "0.3333333", "truefalse": "1.0000000"}


_HEAD = b"<?xml version='1.0' encoding='UTF-8'?>\n<quiz>\n"
_OPEN, _CLOSE = b"<quiz>\n", b"</quiz>\n"
#: Working trees kept per export (one per question shape; the oldest is dropped).
_TREES = 256


class _Tree:
    """A question of one shape under a `<quiz>` of its own, refilled for each question of that
    shape: its `<text>` elements in document order, and its `<idnumber>`."""

    __slots__ = ("idnumber", "quiz", "texts")

    def __init__(self, quiz: etree._Element) -> None:
        self.quiz = quiz
        question = quiz[0]
        self.texts = list(question.iter("text"))
        self.idnumber = question.find("idnumber")


def _skeleton(qtype: str, points: str, single: bool, shuffle: bool,
              answers: tuple[tuple[str, str], ...], tags: int) -> _Tree:
    """A `<quiz>` holding one question of this shape without its texts and idnumber; `answers`
    is ((option id, percent), ...). Built element by element as Moodle's exporter orders them."""
    quiz = etree.Element("quiz")
    q = etree.SubElement(quiz, "question", type=qtype)
    etree.SubElement(etree.SubElement(q, "name"), "text")
    for tag in ("questiontext", "generalfeedback"):
        _formatted(q, tag)
    etree.SubElement(q, "defaultgrade").text = points
    etree.SubElement(q, "penalty").text = PENALTY[qtype]
    etree.SubElement(q, "hidden").text = "0"
    etree.SubElement(q, "idnumber")
    if qtype == "multichoice":
        etree.SubElement(q, "single").text = "true" if single else "false"
        etree.SubElement(q, "shuffleanswers").text = "true" if shuffle else "false"
        etree.SubElement(q, "answernumbering").text = "abc"
        etree.SubElement(q, "showstandardinstruction").text = "0"
        for tag in ("correctfeedback", "partiallycorrectfeedback", "incorrectfeedback"):
            _formatted(q, tag)
        for _, fraction in answers:
            _formatted(_formatted(q, "answer", fraction=fraction), "feedback")
    else:
        for _, fraction in answers:
            a = etree.SubElement(q, "answer", fraction=fraction)
            a.set("format", "moodle_auto_format")
            etree.SubElement(a, "text")
            _formatted(a, "feedback")
    if tags:
        group = etree.SubElement(q, "tags")
        for _ in range(tags):
            etree.SubElement(etree.SubElement(group, "tag"), "text")
    return _Tree(quiz)


def _formatted(parent: etree._Element, tag: str, **attrib: str) -> etree._Element:
    """`<tag ... format="html"><text/></tag>`."""
    el = etree.SubElement(parent, tag, attrib)
    el.set("format", "html")
    etree.SubElement(el, "text")
    return el


def _set_text(el: etree._Element, value: str) -> None:
    """`value` in `el`, in CDATA when it has markup characters (Moodle's `xml_escape`).

    A value containing `]]>` cannot sit in one CDATA section; it is written as escaped text,
    which every XML parser reads back identically.
    """
    if _MARKUP.search(value) is not None and "]]>" not in value:
        el.text = etree.CDATA(value)
    else:
        el.text = value


#: What Moodle's `clean_param($name, PARAM_FILE)` removes from a file name (lib/moodlelib.php:
#: `[[:cntrl:]]|[&<>"`\|\':\\\\/]`); `create_file_from_string` refuses a name that it changes.
_NOT_IN_FILE_NAME = re.compile("[\x00-\x1f\x7f-\x9f&<>\"`|':\\\\/]")


def _file_name(rel: str) -> str:
    """The name an image file `rel` (a relative path) gets in a Moodle file area."""
    name = _NOT_IN_FILE_NAME.sub("_", posixpath.basename(rel))
    return name if name not in ("", ".", "..") else "image"


class _Area:
    """The files of one text area (questiontext, an answer, a feedback): name -> base64, in
    the order the text first shows them. Moodle keeps one file per name in an area (a second
    one is dropped as a duplicate), so a different file with a name already used is renamed
    `x-2.png`, `x-3.png`, ...; the same file shown twice is embedded once."""

    __slots__ = ("files",)

    def __init__(self) -> None:
        self.files: dict[str, str] = {}

    def add(self, name: str, data: str) -> str:
        stem, ext = posixpath.splitext(name)
        n = 1
        while self.files.get(name, data) != data:
            n += 1
            name = f"{stem}-{n}{ext}"
        self.files[name] = data
        return name


class _Writer:
    def __init__(self, collection: Collection, lang: str, out: BinaryIO) -> None:
        self.collection = collection
        self.lang = lang
        self.warnings: list[ExportWarning] = []
        self.out = out
        self.trees: dict[tuple, _Tree] = {}
        self.category_tree: _Tree | None = None
        self.images: dict[Path, str] = {}  # image file -> its bytes in base64, read once

    def write(self, quiz: etree._Element) -> None:
        """Write the question in `quiz` as it sits in the whole file (indented under <quiz>)."""
        data = etree.tostring(quiz, encoding="UTF-8", xml_declaration=False, pretty_print=True)
        assert data.startswith(_OPEN) and data.endswith(_CLOSE)
        self.out.write(memoryview(data)[len(_OPEN):-len(_CLOSE)])

    def close(self) -> None:
        self.out.write(_CLOSE)

    # --- text elements -------------------------------------------------------------------
    def _clean(self, text: str, item_id: str | None, where: str) -> str:
        text, removed = xml_safe(text)
        if removed:
            self.warnings.append(ExportWarning(
                FORMAT, item_id, where, f"removed characters XML cannot carry: {removed}"))
        return text

    # --- images -------------------------------------------------------------------------
    def _read(self, local: Path) -> str:
        data = self.images.get(local)
        if data is None:
            data = self.images[local] = base64.b64encode(local.read_bytes()).decode("ascii")
        return data

    def embed(self, html: str, warn: Callable[[str, str], None], where: str,
              source: str | None) -> tuple[str, dict[str, str]]:
        """`html` with each local image it shows referred to as `@@PLUGINFILE@@/<name>`, and
        the files to embed (name -> base64). An image that cannot be embedded (outside the
        item's folder, not found, unreadable) keeps its `src`, with a warning."""
        root = image_fragment(html)
        if root is None:
            return html, {}
        area = _Area()
        for img in root.iter("img"):
            src = img.get("src", "")
            if not is_local_image(src):
                continue  # a URL or data: URI travels as written
            found = locate_image(src, source)
            if isinstance(found, str):
                problem: str | None = found
            else:
                path, local = found
                try:
                    data = self._read(local)
                    problem = None
                except OSError as exc:
                    problem = f"cannot be read: {local}: {exc.strerror or exc}"
            if problem is not None:
                warn(where, f"image {src!r} {problem}; not embedded, the link is written as it "
                            "is and shows a broken image in Moodle")
                continue
            name = area.add(_file_name(path), data)
            img.set("src", "@@PLUGINFILE@@/" + quote(name, safe=""))
        if not area.files:
            return html, {}
        return etree.tostring(root, method="html", encoding="unicode")[5:-6], area.files

    # --- questions ------------------------------------------------------------------------
    def category(self, path: str, info: str = "") -> None:
        if self.category_tree is None:
            quiz = etree.Element("quiz")
            q = etree.SubElement(quiz, "question", type="category")
            etree.SubElement(etree.SubElement(q, "category"), "text")
            _formatted(q, "info")
            self.category_tree = _Tree(quiz)
        path_text, info_text = self.category_tree.texts
        _set_text(path_text, self._clean(path, None, ""))
        _set_text(info_text, self._clean(info, None, "title"))
        self.write(self.category_tree.quiz)

    def bank_title(self) -> str:
        if self.lang != ALL_LANGUAGES:
            return name_html(self.collection.title_in(self.lang))
        titles = [(la, name_html(self.collection.title_in(la))) for la in self.collection.languages]
        if len({t for _, t in titles}) == 1:
            return titles[0][1]
        return "".join(f'<span lang="{la}" class="multilang">{t}</span>' for la, t in titles)

    def question(self, item: Item, duplicate: bool) -> None:
        """Write the item's question: its texts (and warnings, in the order Moodle's fields
        come) put into the working tree of its shape, which is serialised alone."""
        t = ItemTexts(FORMAT, self.collection, item, self.lang)
        match item.type:
            case ItemType.single_choice | ItemType.multiple_response:
                qtype = "multichoice"
            case ItemType.true_false:
                qtype = "truefalse"
            case _ as unreachable:
                assert_never(unreachable)
        # the texts in document order (each <text> of the question), as Moodle's fields come
        texts = [t.name(), t.stem(), t.explanation()]
        if duplicate:
            t.warn("id", "another question in this category has the same id: Moodle silently "
                         "drops the second idnumber")
        g = grades(item, t.warn)
        option_ids = item.option_ids
        if qtype == "multichoice":
            texts += ("", "", "")  # correct, partially correct, incorrect feedback
            t.check_locked()
            for oid in option_ids:
                texts.append(t.option(oid))
                texts.append(t.feedback(oid))
        else:
            t.check_true_false_words()
            for oid in option_ids:  # ("true", "false"): Moodle matches these exact words
                texts.append(oid)
                texts.append(t.feedback(oid))
        texts += item.tags
        points = f"{item.points:.7f}"
        shape = (qtype, points, item.type is ItemType.single_choice, item.shuffle,
                 tuple(g.percents.items()), len(item.tags))  # in option order
        tree = self.trees.get(shape)
        if tree is None:
            if len(self.trees) >= _TREES:
                del self.trees[next(iter(self.trees))]
            tree = self.trees[shape] = _skeleton(
                qtype, points, shape[2], item.shuffle, shape[4], shape[5])
        # the texts that are HTML and may show images: not the name, true/false words or tags
        html_k = (range(1, len(texts) - len(item.tags)) if may_show_images(item, t.langs)
                  else range(0))
        added: list[etree._Element] = []
        for k, value in enumerate(texts):
            if has_non_xml(value):
                item_id, where = _where(self.lang, item, qtype, k)
                value = self._clean(value, item_id, where)
            files = None
            if k in html_k and not (qtype == "truefalse" and k > 2 and k % 2):
                value, files = self.embed(value, t.warn, _where(self.lang, item, qtype, k)[1],
                                          self.collection.paths.get(item.id))
            text = tree.texts[k]
            _set_text(text, value)
            if files:
                added += _file_elements(text, files)
        tree.idnumber.text = item.id
        self.warnings.extend(t.warnings)
        self.write(tree.quiz)
        for el in added:  # the working tree is reused by questions without these files
            el.getparent().remove(el)


def _file_elements(text: etree._Element, files: dict[str, str]) -> list[etree._Element]:
    """`<file name=".." path="/" encoding="base64">` for each file, after `text`, in order (as
    Moodle's `write_files` follows `writetext`)."""
    out = []
    anchor = text
    for name, data in files.items():
        el = etree.Element("file")
        el.set("name", name)
        el.set("path", "/")
        el.set("encoding", "base64")
        el.text = data
        anchor.addnext(el)
        anchor = el
        out.append(el)
    return out


def _where(lang: str, item: Item, qtype: str, k: int) -> tuple[str | None, str]:
    """The item id and field named in a warning about the question's `k`-th text."""
    head = [(item.id, "title"), (item.id, f"text.{lang}.stem"),
            (item.id, f"text.{lang}.explanation")]
    if qtype == "multichoice":
        head += [(item.id, tag) for tag in
                 ("correctfeedback", "partiallycorrectfeedback", "incorrectfeedback")]
        answer = (item.id, f"text.{lang}.options.{{}}")
    else:
        answer = (None, "")  # the option id itself
    for oid in item.option_ids:
        head.append((answer[0], answer[1].format(oid)))
        head.append((item.id, f"text.{lang}.feedback.{oid}"))
    head += [(None, "")] * len(item.tags)
    return head[k]


def export(collection: Collection, lang: str, out: BinaryIO | None = None) -> ExportResult:
    """The collection as one Moodle XML file in `lang` (or every language: `multi`): its bytes,
    or written to `out` (then `data` is empty)."""
    if out is None:
        buf = io.BytesIO()
        warnings = export(collection, lang, buf).warnings
        return ExportResult(buf.getvalue(), warnings)
    out.write(_HEAD)
    w = _Writer(collection, lang, out)
    w.category(category_path(collection), w.bank_title())
    seen: set[tuple[str, str]] = set()
    topic = None
    for item in collection.items:
        if item.topic != topic:
            topic = item.topic
            w.category(category_path(collection, topic))
        w.question(item, (item.topic, item.id) in seen)
        seen.add((item.topic, item.id))
    w.close()
    return ExportResult(b"", w.warnings)
