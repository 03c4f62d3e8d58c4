"""A collection -> Moodle XML (`<quiz>`), the structure Moodle's own `qformat_xml` exporter writes.

A `category` question opens each topic (`$course$/top/<bank>/<topic path>`); single-choice and
multiple-response items become `multichoice`, true/false items `truefalse`. Text fields are HTML in
CDATA with `format="html"`. See docs/export-moodle.md for every field and what is not carried.

`export(collection, lang)` returns the file's bytes; `export(collection, lang, out)` writes the
same bytes to the binary file `out` a few hundred questions at a time (bounded memory) and
returns the warnings with empty data. Each batch of `<question>` elements is built under a
`<quiz>` of its own and serialised without that wrapper's lines, which gives exactly the bytes
(indentation included) of the whole tree serialised at once.
"""

from __future__ import annotations

import io
import re
from typing import BinaryIO, assert_never

from lxml import etree

from ..model import Item, ItemType
from . import MULTI as ALL_LANGUAGES
from . import Collection, ExportResult, ExportWarning
from ._moodle import ItemTexts, category_path, grades, name_html
from ._xmlchars import xml_safe

SUFFIX = ".xml"
MULTI = True  # supports lang="multi" (Moodle's multilang filter form)
FORMAT = "moodle-xml"

_MARKUP = re.compile("[&<>\"']")

#: Moodle's defaults for a new question (qformat_default::defaultquestion, qtype_truefalse).
PENALTY = {"multichoice": "0.3333333", "truefalse": "1.0000000"}


#: Questions serialised and written to the file at a time.
_CHUNK = 256
_HEAD = b"<?xml version='1.0' encoding='UTF-8'?>\n<quiz>\n"
_OPEN, _CLOSE = b"<quiz>\n", b"</quiz>\n"


class _Writer:
    def __init__(self, collection: Collection, lang: str, out: BinaryIO) -> None:
        self.collection = collection
        self.lang = lang
        self.warnings: list[ExportWarning] = []
        self.out = out
        self.root = etree.Element("quiz")  # the questions not written yet

    def flush(self) -> None:
        """Write the pending questions, as they sit in the whole file (indented under <quiz>)."""
        if len(self.root):
            data = etree.tostring(self.root, encoding="UTF-8", xml_declaration=False,
                                  pretty_print=True)
            assert data.startswith(_OPEN) and data.endswith(_CLOSE)
            self.out.write(data[len(_OPEN):-len(_CLOSE)])
            self.root = etree.Element("quiz")

    def close(self) -> None:
        self.flush()
        self.out.write(_CLOSE)

    # --- text elements -------------------------------------------------------------------
    def _clean(self, text: str, item_id: str | None, where: str) -> str:
        text, removed = xml_safe(text)
        if removed:
            self.warnings.append(ExportWarning(
                FORMAT, item_id, where, f"removed characters XML cannot carry: {removed}"))
        return text

    def text(self, parent: etree._Element, value: str, item_id: str | None = None,
             where: str = "") -> None:
        """`<text>` holding `value`, in CDATA when it has markup characters (Moodle's `xml_escape`).

        A value containing `]]>` cannot sit in one CDATA section; it is written as escaped text,
        which every XML parser reads back identically.
        """
        value = self._clean(value, item_id, where)
        el = etree.SubElement(parent, "text")
        cdata = _MARKUP.search(value) is not None and "]]>" not in value
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
        t = ItemTexts(FORMAT, self.collection, item, self.lang)
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
        etree.SubElement(q, "penalty").text = PENALTY[qtype]
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
        if len(self.root) >= _CHUNK:
            self.flush()


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
