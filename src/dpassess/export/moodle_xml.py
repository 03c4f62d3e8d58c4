"""A collection -> Moodle XML (`<quiz>`), the structure Moodle's own `qformat_xml` exporter writes.

A `category` question opens each topic (`$course$/top/<bank>/<topic path>`); single-choice and
multiple-response items become `multichoice`, true/false items `truefalse`. Text fields are HTML in
CDATA with `format="html"`. See docs/export-moodle.md for every field and what is not carried.

`export(collection, lang)` returns the file's bytes; `export(collection, lang, out)` writes the
same bytes to the binary file `out` a few hundred questions at a time (bounded memory) and
returns the warnings with empty data.

The XML is written as text, exactly as libxml2 (lxml) serialises the `<quiz>` tree with
`pretty_print=True` and UTF-8: two spaces per level, a `<text>` on one line, text escaped as
libxml2 escapes it (`&` `<` `>` and CR), CDATA written as is. That is several times faster than
building the tree; tests/test_export_stream.py checks it against the tree on generated items.
"""

from __future__ import annotations

import io
import re
from typing import BinaryIO, assert_never

from ..model import Item, ItemType
from . import MULTI as ALL_LANGUAGES
from . import Collection, ExportResult, ExportWarning
from ._moodle import ItemTexts, category_path, grades, name_html
from ._xmlchars import escape_text, xml_safe

SUFFIX = ".xml"
MULTI = True  # supports lang="multi" (Moodle's multilang filter form)
FORMAT = "moodle-xml"

_MARKUP = re.compile("[&<>\"']")

#: Moodle's defaults for a new question (qformat_default::defaultquestion, qtype_truefalse).
PENALTY = {"multichoice": "0.3333333", "truefalse": "1.0000000"}


#: Questions joined and written to the file at a time.
_CHUNK = 256
_HEAD = b"<?xml version='1.0' encoding='UTF-8'?>\n<quiz>\n"
_CLOSE = b"</quiz>\n"

_EMPTY_FEEDBACK = tuple(  # correct, partially correct, incorrect: Moodle's defaults are empty
    f'    <{tag} format="html">\n      <text></text>\n    </{tag}>\n'
    for tag in ("correctfeedback", "partiallycorrectfeedback", "incorrectfeedback"))


class _Writer:
    def __init__(self, collection: Collection, lang: str, out: BinaryIO) -> None:
        self.collection = collection
        self.lang = lang
        self.warnings: list[ExportWarning] = []
        self.out = out
        self.parts: list[str] = []  # the questions not written yet
        self.pending = 0

    def flush(self) -> None:
        self.out.write("".join(self.parts).encode("utf-8"))
        self.parts.clear()
        self.pending = 0

    def close(self) -> None:
        self.flush()
        self.out.write(_CLOSE)

    def add(self, question: list[str]) -> None:
        self.parts += question
        self.pending += 1
        if self.pending >= _CHUNK:
            self.flush()

    # --- text elements -------------------------------------------------------------------
    def _clean(self, text: str, item_id: str | None, where: str) -> str:
        text, removed = xml_safe(text)
        if removed:
            self.warnings.append(ExportWarning(
                FORMAT, item_id, where, f"removed characters XML cannot carry: {removed}"))
        return text

    def text(self, value: str, item_id: str | None = None, where: str = "") -> str:
        """`<text>` holding `value`, in CDATA when it has markup characters (Moodle's `xml_escape`).

        A value containing `]]>` cannot sit in one CDATA section; it is written as escaped text,
        which every XML parser reads back identically.
        """
        value = self._clean(value, item_id, where)
        if _MARKUP.search(value) is not None and "]]>" not in value:
            return f"<text><![CDATA[{value}]]></text>"
        return f"<text>{escape_text(value)}</text>"

    def formatted(self, indent: str, tag: str, value: str, item_id: str | None,
                  where: str) -> str:
        """`<tag format="html">` holding a `<text>`, at `indent`."""
        text = self.text(value, item_id, where)
        return f'{indent}<{tag} format="html">\n{indent}  {text}\n{indent}</{tag}>\n'

    # --- questions ------------------------------------------------------------------------
    def category(self, path: str, info: str = "") -> None:
        self.add(['  <question type="category">\n    <category>\n      ', self.text(path),
                  "\n    </category>\n", self.formatted("    ", "info", info, None, "title"),
                  "  </question>\n"])

    def bank_title(self) -> str:
        if self.lang != ALL_LANGUAGES:
            return name_html(self.collection.title_in(self.lang))
        titles = [(la, name_html(self.collection.title_in(la))) for la in self.collection.languages]
        if len({t for _, t in titles}) == 1:
            return titles[0][1]
        return "".join(f'<span lang="{la}" class="multilang">{t}</span>' for la, t in titles)

    def question(self, item: Item, duplicate: bool) -> None:
        t = ItemTexts(FORMAT, self.collection, item, self.lang)
        lang = self.lang
        match item.type:
            case ItemType.single_choice | ItemType.multiple_response:
                qtype = "multichoice"
            case ItemType.true_false:
                qtype = "truefalse"
            case _ as unreachable:
                assert_never(unreachable)
        parts = [f'  <question type="{qtype}">\n    <name>\n      ',
                 self.text(t.name(), item.id, "title"), "\n    </name>\n",
                 self.formatted("    ", "questiontext", t.stem(), item.id, f"text.{lang}.stem"),
                 self.formatted("    ", "generalfeedback", t.explanation(), item.id,
                                f"text.{lang}.explanation"),
                 f"    <defaultgrade>{item.points:.7f}</defaultgrade>\n"
                 f"    <penalty>{PENALTY[qtype]}</penalty>\n    <hidden>0</hidden>\n"
                 f"    <idnumber>{escape_text(item.id)}</idnumber>\n"]
        if duplicate:
            t.warn("id", "another question in this category has the same id: Moodle silently "
                         "drops the second idnumber")
        g = grades(item, t.warn)
        if qtype == "multichoice":
            single = item.type is ItemType.single_choice
            parts.append(f"    <single>{'true' if single else 'false'}</single>\n"
                         f"    <shuffleanswers>{'true' if item.shuffle else 'false'}"
                         "</shuffleanswers>\n    <answernumbering>abc</answernumbering>\n"
                         "    <showstandardinstruction>0</showstandardinstruction>\n")
            parts += _EMPTY_FEEDBACK
            t.check_locked()
            fmt = "html"
        else:
            t.check_true_false_words()
            fmt = "moodle_auto_format"
        for oid in item.option_ids:  # true/false: ("true", "false"), the words Moodle matches
            where = f"text.{lang}.options.{oid}"
            text = (self.text(t.option(oid), item.id, where) if qtype == "multichoice"
                    else self.text(oid))
            parts += [f'    <answer fraction="{g.percent(oid)}" format="{fmt}">\n      ', text,
                      "\n", self.formatted("      ", "feedback", t.feedback(oid), item.id,
                                            f"text.{lang}.feedback.{oid}"),
                      "    </answer>\n"]
        if item.tags:
            parts.append("    <tags>\n")
            for tag in item.tags:
                parts += ["      <tag>\n        ", self.text(tag), "\n      </tag>\n"]
            parts.append("    </tags>\n")
        parts.append("  </question>\n")
        self.add(parts)
        self.warnings.extend(t.warnings)


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
