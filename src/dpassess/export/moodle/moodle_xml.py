"""A collection -> Moodle XML (`<quiz>`), the structure Moodle's own `qformat_xml` exporter writes.

A `category` question opens each topic (`$course$/top/<bank>/<topic path>`); single-choice and
multiple-response items become `multichoice`, true/false items `truefalse`: a builder per item
type, each writing the elements in the order `qformat_xml::writequestion` does. Text fields are
HTML in CDATA with `format="html"`; local images are embedded (`images`). See
docs/export-moodle.md for every field and what is not carried.

`export(collection, lang)` returns the file's bytes; `export(collection, lang, out)` writes the
same bytes to the binary file `out` one question at a time (`ChildStream`: bounded memory) and
returns the warnings with empty data.
"""

from __future__ import annotations

import io
import re
from typing import BinaryIO, assert_never

from lxml import etree
from lxml.etree import SubElement

from dpassess.diagnostics import Diagnostic
from dpassess.export import MULTI as ALL_LANGUAGES
from dpassess.export import (
    Collection,
    ExportResult,
    check_lang,
    exported_languages,
    nothing_to_export,
)
from dpassess.export.moodle.images import Embedder
from dpassess.export.moodle.texts import ItemTexts, category_path, grades
from dpassess.export.xmlfast import ChildStream
from dpassess.lms.moodle import name_html
from dpassess.markup.xmlchars import has_non_xml, xml_safe
from dpassess.model import ChoiceBase, Item, MultipleResponse, SingleChoice, TrueFalse

SUFFIX = ".xml"
MULTI = True  # supports lang="multi" (Moodle's multilang filter form)
FORMAT = "moodle-xml"

#: Moodle's defaults for a new question (qformat_default::defaultquestion, qtype_truefalse).
PENALTY = {"multichoice": "0.3333333", "truefalse": "1.0000000"}

_MARKUP = re.compile("[&<>\"']")


def export(collection: Collection, lang: str, out: BinaryIO | None = None) -> ExportResult:
    """The collection as one Moodle XML file in `lang` (or every language: `multi`): its bytes,
    or written to `out` (then `data` is empty)."""
    check_lang(FORMAT, collection, lang, multi=MULTI)
    if lang != ALL_LANGUAGES and not any(lang in item.text for item in collection.items):
        raise nothing_to_export(collection, lang)
    if out is None:
        buf = io.BytesIO()
        warnings = export(collection, lang, buf).warnings
        return ExportResult(buf.getvalue(), warnings)
    writer = _Writer(collection, lang)
    stream = ChildStream(out, etree.Element("quiz"), xml_declaration=True)
    stream.write(writer.category(category_path(collection), writer.bank_title()))
    seen: set[tuple[str, str]] = set()
    topic = None
    for item in collection.items:
        langs, notes = exported_languages(FORMAT, collection, item, lang)
        writer.warnings += notes
        if not langs:
            continue
        if item.topic != topic:
            topic = item.topic
            stream.write(writer.category(category_path(collection, topic)))
        stream.write(writer.question(item, langs, duplicate=(item.topic, item.id) in seen))
        seen.add((item.topic, item.id))
    stream.close()
    return ExportResult(b"", writer.warnings)


class _Writer:
    """Builds one file's questions; collects their warnings."""

    def __init__(self, collection: Collection, lang: str) -> None:
        self.collection, self.lang = collection, lang
        self.warnings: list[Diagnostic] = []
        self.images = Embedder()

    def category(self, path: str, info: str = "") -> etree._Element:
        question = etree.Element("question", type="category")
        self.text(SubElement(question, "category"), path, None, "")
        self.text(SubElement(question, "info", format="html"), info, None, "title")
        return question

    def bank_title(self) -> str:
        if self.lang != ALL_LANGUAGES:
            return name_html(self.collection.title_in(self.lang))
        titles = [(la, name_html(self.collection.title_in(la))) for la in self.collection.languages]
        if len({t for _, t in titles}) == 1:
            return titles[0][1]
        return "".join(f'<span lang="{la}" class="multilang">{t}</span>' for la, t in titles)

    def question(self, item: Item, langs: tuple[str, ...], *, duplicate: bool) -> etree._Element:
        """The item's `<question>`; its warnings go to `warnings` (those about its texts, as
        ItemTexts renders them, after those about writing them)."""
        t = ItemTexts(FORMAT, self.collection, item, self.lang, langs)
        q = _Question(self, t)
        match item:
            case SingleChoice():
                question = _multichoice(q, item, single=True, duplicate=duplicate)
            case MultipleResponse():
                question = _multichoice(q, item, single=False, duplicate=duplicate)
            case TrueFalse():
                question = _truefalse(q, item, duplicate=duplicate)
            case _:
                assert_never(item)
        self.warnings += t.warnings
        return question

    def text(self, parent: etree._Element, value: str, item_id: str | None, field: str
             ) -> etree._Element:
        """`<text>` holding `value` in `parent` (see `clean`)."""
        text = SubElement(parent, "text")
        _set_text(text, self.clean(value, item_id, field) if has_non_xml(value) else value)
        return text

    def clean(self, value: str, item_id: str | None, field: str) -> str:
        """`value` without the characters XML cannot carry, and a warning naming them."""
        value, removed = xml_safe(value)
        self.warnings.append(self.collection.warning(
            FORMAT, item_id, field, f"removed characters XML cannot carry: {removed}"))
        return value


class _Question:
    """What the builders of one item's question share: the writer, the item's texts, and the
    elements every question type has."""

    def __init__(self, writer: _Writer, texts: ItemTexts) -> None:
        self.writer, self.t = writer, texts
        self.item = texts.item
        self.lang = writer.lang
        self.source = writer.collection.paths.get(self.item.id)

    def text(self, parent: etree._Element, value: str, field: str) -> etree._Element:
        return self.writer.text(parent, value, self.item.id, field)

    def html(self, el: etree._Element, html: str, field: str) -> etree._Element:
        """`<text>html</text>` in `el` (an element with `format="html"`), the local images the
        text shows embedded after it."""
        if has_non_xml(html):  # before looking for images: lxml's HTML parser cannot hold them
            html = self.writer.clean(html, self.item.id, field)
        files: dict[str, str] = {}
        if self.t.may_show_images:
            html, files = self.writer.images.embed(html, self.source,
                                                   lambda message: self.t.warn(field, message))
        _set_text(SubElement(el, "text"), html)
        for name, data in files.items():  # after the text, as Moodle's write_files follows it
            SubElement(el, "file", name=name, path="/", encoding="base64").text = data
        return el

    def head(self, qtype: str, *, duplicate: bool) -> etree._Element:
        """`<question>` with what every type starts with: name, question text, general
        feedback, mark, penalty, hidden, ID number."""
        item, t, lang = self.item, self.t, self.lang
        question = etree.Element("question", type=qtype)
        self.text(SubElement(question, "name"), t.name(), "title")
        self.html(SubElement(question, "questiontext", format="html"), t.stem(),
                  f"text.{lang}.stem")
        self.html(SubElement(question, "generalfeedback", format="html"), t.explanation(),
                  f"text.{lang}.explanation")
        SubElement(question, "defaultgrade").text = f"{item.points:.7f}"
        SubElement(question, "penalty").text = PENALTY[qtype]
        SubElement(question, "hidden").text = "0"
        SubElement(question, "idnumber").text = item.id
        if duplicate:
            t.warn("id", "another question in this category has the same id: Moodle silently "
                         "drops the second idnumber")
        return question

    def tags(self, question: etree._Element) -> None:
        if self.item.tags:
            tags = SubElement(question, "tags")
            for tag in self.item.tags:
                self.text(SubElement(tags, "tag"), tag, "tags")


def _multichoice(q: _Question, item: ChoiceBase, *, single: bool, duplicate: bool
                 ) -> etree._Element:
    """`multichoice`: `single` for one answer (SingleChoice), else any number of answers
    (MultipleResponse); each option an answer with its grade and feedback."""
    t, lang = q.t, q.lang
    question = q.head("multichoice", duplicate=duplicate)
    g = grades(item, t.warn)
    SubElement(question, "single").text = "true" if single else "false"
    SubElement(question, "shuffleanswers").text = "true" if item.shuffle else "false"
    t.check_locked()
    SubElement(question, "answernumbering").text = "abc"
    SubElement(question, "showstandardinstruction").text = "0"
    for tag in ("correctfeedback", "partiallycorrectfeedback", "incorrectfeedback"):
        SubElement(SubElement(question, tag, format="html"), "text").text = ""
    for oid in item.option_ids:
        answer = SubElement(question, "answer", fraction=g.percent(oid), format="html")
        q.html(answer, t.option(oid), f"text.{lang}.options.{oid}")
        q.html(SubElement(answer, "feedback", format="html"), t.feedback(oid),
               f"text.{lang}.feedback.{oid}")
    q.tags(question)
    return question


def _truefalse(q: _Question, item: TrueFalse, *, duplicate: bool) -> etree._Element:
    """`truefalse`: the answers are Moodle's words `true` and `false`, in that order (Moodle
    matches these exact words and shows its own text for them), each with its feedback."""
    t, lang = q.t, q.lang
    question = q.head("truefalse", duplicate=duplicate)
    g = grades(item, t.warn)
    t.check_true_false_words()
    for oid in item.option_ids:
        answer = SubElement(question, "answer", fraction=g.percent(oid),
                            format="moodle_auto_format")
        q.text(answer, oid, "")
        q.html(SubElement(answer, "feedback", format="html"), t.feedback(oid),
               f"text.{lang}.feedback.{oid}")
    q.tags(question)
    return question


def _set_text(el: etree._Element, value: str) -> None:
    """`value` in `el`, in CDATA when it has markup characters (Moodle's `xml_escape`).

    A value containing `]]>` cannot sit in one CDATA section; it is written as escaped text,
    which every XML parser reads back identically.
    """
    if _MARKUP.search(value) is not None and "]]>" not in value:
        el.text = etree.CDATA(value)
    else:
        el.text = value
