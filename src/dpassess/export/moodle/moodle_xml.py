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
from collections.abc import Callable, Mapping
from functools import partial
from typing import BinaryIO, assert_never

from lxml import etree
from lxml.etree import SubElement

from dpassess.diagnostics import Diagnostic
from dpassess.export import MULTI as ALL_LANGUAGES
from dpassess.export import (
    Collection,
    Context,
    Format,
    Fragment,
    Fragments,
    languages_of_items,
    nothing_to_export,
)
from dpassess.export.moodle import cloze
from dpassess.export.moodle.images import Embedder
from dpassess.export.moodle.texts import (
    ItemTexts,
    accepted_wordings,
    answer_grades,
    category_name,
    category_path,
    check_match,
    grades,
    midpoint,
    multilang_glue,
    multilang_maths,
    number,
    premise_html,
    response_template,
    response_text,
)
from dpassess.export.xmlfast import ChildStream, copied
from dpassess.lms.moodle import name_html, reads_unit
from dpassess.markup.xmlchars import has_non_xml, xml_safe
from dpassess.model import (
    ChoiceBase,
    Cloze,
    Description,
    Essay,
    Item,
    Matching,
    MultipleResponse,
    Numerical,
    Ordering,
    ShortAnswer,
    SingleChoice,
    TrueFalse,
)

NAME = "moodle-xml"

#: Moodle's defaults for a new question (qformat_default::defaultquestion; true/false and
#: essay questions set their own).
PENALTY = {"truefalse": 1.0, "essay": 0.0}
DEFAULT_PENALTY = 0.3333333
#: The question types whose answers Moodle numbers (`answernumbering`, `numberingstyle`).
NUMBERED = ("multichoice", "ordering")

_MARKUP = re.compile("[&<>\"']")


def _start(collection: Collection, lang: str, options: Mapping[str, str]) -> _Writer:
    return _Writer(collection, lang)


def _fragment(writer: _Writer, item: Item, context: Context) -> Fragment:
    """The item's `<question>` in languages `context[0]` (`context[1]`: its id was written
    before in its category); not reusable when its text named a local file."""
    langs, duplicate = context
    assert isinstance(langs, tuple) and isinstance(duplicate, bool)
    before, writer.images.touched = len(writer.warnings), False
    data = writer.stream.serialised(writer.question(item, langs, duplicate=duplicate))
    warnings = writer.warnings[before:]
    del writer.warnings[before:]
    return Fragment(data, warnings, reusable=not writer.images.touched)


def _assemble(writer: _Writer, fragments: Fragments, out: BinaryIO) -> list[Diagnostic]:
    """The collection as one Moodle XML file in `lang` (or every language: `multi`), written
    to `out`; category questions are written here, each `<question>` is its fragment."""
    collection, lang = writer.collection, writer.lang
    if lang != ALL_LANGUAGES and not any(lang in item.text for item in collection.items):
        raise nothing_to_export(collection, lang)
    writer.warnings += multilang_maths(NAME, collection, lang, fragments)
    writer.stream = stream = ChildStream(out, etree.Element("quiz"), xml_declaration=True)
    root = category_name(collection, lang)
    stream.write(writer.category(category_path(root), writer.bank_title()))
    write = stream.out.write
    seen: set[tuple[str, str]] = set()
    categories: dict[str, bytes] = {}  # category path -> its question, when it has no warning
    topic = None
    for item, (langs, notes) in zip(collection.items,
                                    languages_of_items(NAME, collection, lang), strict=True):
        writer.warnings += notes
        if not langs:
            continue
        if item.topic != topic:
            topic = item.topic
            stream.write_bytes(_category(stream, writer, category_path(root, topic), categories))
        duplicate = (item.topic, item.id) in seen
        seen.add((item.topic, item.id))
        question = fragments(item, (langs, duplicate))
        writer.warnings += question.warnings
        write(question.data)  # (`stream.write_bytes`: as it is, where the runner notes it)
    stream.close()
    return writer.warnings


def _category(stream: ChildStream, writer: _Writer, path: str, known: dict[str, bytes]
              ) -> bytes:
    """The category question of `path`, built once per file unless it has a warning (a file
    of many short topics opens the same category many times)."""
    data = known.get(path)
    if data is None:
        before = len(writer.warnings)
        data = stream.serialised(writer.category(path))
        if len(writer.warnings) == before:
            known[path] = data
    return data


class _Watched(Embedder):
    """An Embedder that says whether a question's text named a local file (embedded it, or
    warned that it could not): such a question's bytes depend on that file."""

    touched = False

    def embed(self, html: str, source: str | None, warn: Callable[[str], None]
              ) -> tuple[str, dict[str, str]]:
        def told(message: str) -> None:
            self.touched = True
            warn(message)

        html, files = super().embed(html, source, told)
        self.touched = self.touched or bool(files)
        return html, files


class _Writer:
    """Builds one file's questions; collects their warnings."""

    def __init__(self, collection: Collection, lang: str) -> None:
        self.collection, self.lang = collection, lang
        self.warnings: list[Diagnostic] = []
        self.images = _Watched()
        # the stream `_assemble` writes the file to (a question is serialised as that one
        # would: a fragment can be built on a fresh state, `Format.glue`)
        self.stream = ChildStream(io.BytesIO(), etree.Element("quiz"), xml_declaration=True)

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
        t = ItemTexts(NAME, self.collection, item, self.lang, langs)
        q = _Question(self, t)
        match item:
            case SingleChoice():
                question = _multichoice(q, item, single=True, duplicate=duplicate)
            case MultipleResponse():
                question = _multichoice(q, item, single=False, duplicate=duplicate)
            case TrueFalse():
                question = _truefalse(q, item, duplicate=duplicate)
            case Numerical():
                question = _numerical(q, item, duplicate=duplicate)
            case ShortAnswer():
                question = _shortanswer(q, item, duplicate=duplicate)
            case Matching():
                question = _match(q, item, duplicate=duplicate)
            case Essay():
                question = _essay(q, item, duplicate=duplicate)
            case Ordering():
                question = _ordering(q, item, duplicate=duplicate)
            case Cloze():
                if len(langs) > 1:
                    t.warn("text", "Moodle's cloze question holds one text with its gaps: "
                                   f"written in {langs[0]!r} only; export one file per language "
                                   "to give each its own")
                    notes = t.warnings
                    t = ItemTexts(NAME, self.collection, item, self.lang, langs[:1])
                    t.warnings[:0] = notes
                    q = _Question(self, t)
                question = _cloze(q, item, langs[0], duplicate=duplicate)
            case Description():
                question = _description(q, duplicate=duplicate)
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
            NAME, item_id, field, f"removed characters XML cannot carry: {removed}"))
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
        SubElement(question, "penalty").text = f"{self.penalty(qtype):.7f}"
        SubElement(question, "hidden").text = "0"
        SubElement(question, "idnumber").text = item.id
        if duplicate:
            t.warn("id", "another question in this category has the same id: Moodle silently "
                         "drops the second idnumber")
        return question

    def penalty(self, qtype: str) -> float:
        moodle = self.item.lms.moodle if self.item.lms else None
        if moodle is not None and moodle.penalty is not None:
            return moodle.penalty
        return PENALTY.get(qtype, DEFAULT_PENALTY)

    def numbering(self, qtype: str) -> str | None:
        """The item's `lms.moodle.answer_numbering` (None when unset), with a warning when the
        question type has no numbering."""
        moodle = self.item.lms.moodle if self.item.lms else None
        numbering = moodle.answer_numbering if moodle is not None else None
        if numbering is not None and qtype not in NUMBERED:
            self.t.warn("lms.moodle.answer_numbering",
                        f"Moodle numbers the answers of multiple-choice and ordering questions "
                        f"only: not written for a {qtype} question")
            return None
        return numbering

    def empty(self, parent: etree._Element, tag: str, field: str) -> None:
        """`<tag format="html"><text></text></tag>`."""
        self.html(SubElement(parent, tag, format="html"), "", field)

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
    question.extend(list(_multichoice_settings(single, item.shuffle,
                                               q.numbering("multichoice") or "abc")))
    t.check_locked(item)
    for oid in item.option_ids:
        answer = SubElement(question, "answer", fraction=g.percent(oid), format="html")
        q.html(answer, t.option(item, oid), f"text.{lang}.options.{oid}")
        q.html(SubElement(answer, "feedback", format="html"), t.feedback(oid),
               f"text.{lang}.feedback.{oid}")
    q.tags(question)
    return question


@copied
def _multichoice_settings(single: bool, shuffle: bool, numbering: str) -> etree._Element:
    """What a multichoice question says after its ID number and before its answers (in a
    wrapper whose children go into the question): one answer or several, shuffled or not,
    the numbering (a, b, c unless the item says), Moodle's standard instruction off, and no
    combined feedback."""
    settings = etree.Element("settings")
    SubElement(settings, "single").text = "true" if single else "false"
    SubElement(settings, "shuffleanswers").text = "true" if shuffle else "false"
    SubElement(settings, "answernumbering").text = numbering
    SubElement(settings, "showstandardinstruction").text = "0"
    for tag in ("correctfeedback", "partiallycorrectfeedback", "incorrectfeedback"):
        SubElement(SubElement(settings, tag, format="html"), "text").text = ""
    return settings


def _truefalse(q: _Question, item: TrueFalse, *, duplicate: bool) -> etree._Element:
    """`truefalse`: the answers are Moodle's words `true` and `false`, in that order (Moodle
    matches these exact words and shows its own text for them), each with its feedback."""
    t, lang = q.t, q.lang
    question = q.head("truefalse", duplicate=duplicate)
    g = grades(item, t.warn)
    q.numbering("truefalse")
    t.check_true_false_words(item)
    for oid in item.option_ids:
        answer = SubElement(question, "answer", fraction=g.percent(oid),
                            format="moodle_auto_format")
        q.text(answer, oid, "")
        q.html(SubElement(answer, "feedback", format="html"), t.feedback(oid),
               f"text.{lang}.feedback.{oid}")
    q.tags(question)
    return question


def _numerical(q: _Question, item: Numerical, *, duplicate: bool) -> etree._Element:
    """`numerical`: each answer a number with its tolerance (a range as its middle and
    half-width; any other number: `*`), grade and feedback, in the item's order (Moodle grades
    by the first answer that accepts the response); the units with their multipliers."""
    t, lang = q.t, q.lang
    question = q.head("numerical", duplicate=duplicate)
    g = answer_grades(tuple((a.id, a.fraction) for a in item.answers), t.warn)
    for a in item.answers:
        if a.any_other:  # Moodle's `*`: any number
            value, tolerance = "*", "0"
        elif a.value is not None:
            value, tolerance = number(a.value), number(a.tolerance)
        else:
            assert a.min is not None and a.max is not None
            value, tolerance, exact = midpoint(a.min, a.max)
            if not exact:
                t.warn(f"answers.{a.id}", f"Moodle holds the range {number(a.min)}..{number(a.max)}"
                                          f" as {value} ± {tolerance}, which floating point "
                                          "rounding narrows: a response at either end may be "
                                          "marked wrong")
        answer = SubElement(question, "answer", fraction=g.percent(a.id),
                            format="moodle_auto_format")
        SubElement(answer, "text").text = value
        q.html(SubElement(answer, "feedback", format="html"), t.feedback(a.id),
               f"text.{lang}.feedback.{a.id}")
        SubElement(answer, "tolerance").text = tolerance
    if item.units:
        units = SubElement(question, "units")
        for u in item.units:
            unit = SubElement(units, "unit")
            SubElement(unit, "multiplier").text = number(u.multiplier)
            name = q.writer.clean(u.unit, item.id, "units") if has_non_xml(u.unit) else u.unit
            _set_text(SubElement(unit, "unit_name"), name)
    # qtype_numerical: units graded (2: the penalty is a fraction of the mark), optional (0,
    # shown as a text box: 0), or not used (0, not shown: 3)
    graded = item.unit_penalty is not None and _units_readable(q, item)
    SubElement(question, "unitgradingtype").text = "2" if graded else "0"
    SubElement(question, "unitpenalty").text = f"{item.unit_penalty or 0.1:.7f}"
    SubElement(question, "showunits").text = "0" if item.units else "3"
    SubElement(question, "unitsleft").text = "0"
    q.empty(question, "instructions", "")
    q.numbering("numerical")
    q.tags(question)
    return question


def _units_readable(q: _Question, item: Numerical) -> bool:
    """Whether Moodle can grade the item's units as the bank does, with a warning for each unit
    Moodle cannot read after a number (`1`: `0.75 1` is the number 0.751). When it cannot read
    the first unit, a bare number is a number in that unit (a ratio, a count), which graded
    units would penalise as a missing unit: the units are then optional."""
    readable = True
    for n, u in enumerate(item.units):
        if reads_unit(u.unit):
            continue
        if n == 0:
            if item.unit_penalty is not None:
                readable = False
                q.t.warn("unit_penalty",
                         f"Moodle cannot read {u.unit!r} as a unit after a number, so a bare "
                         "number is the answer in it, which graded units would penalise as a "
                         "missing unit (never full marks): the units are written optional, "
                         "and unit_penalty is not applied")
        else:
            q.t.warn(f"units.{n}.unit",
                     f"Moodle cannot read {u.unit!r} as a unit after a number (it removes "
                     "spaces and reads the digits as the number's): a response in it is "
                     "marked as another number")
    return readable


def _shortanswer(q: _Question, item: ShortAnswer, *, duplicate: bool) -> etree._Element:
    """`shortanswer`: one answer per accepted wording (`*` is Moodle's wildcard too), with its
    answer's grade and feedback, in the item's order; in a file of several languages every
    language's wordings are accepted, each once."""
    t, lang = q.t, q.lang
    question = q.head("shortanswer", duplicate=duplicate)
    SubElement(question, "usecase").text = "1" if item.case_sensitive else "0"
    g = answer_grades(tuple((a.id, a.fraction) for a in item.answers), t.warn)
    for aid, wording in accepted_wordings(t, item):
        answer = SubElement(question, "answer", fraction=g.percent(aid),
                            format="moodle_auto_format")
        q.text(answer, wording, f"text.{lang}.answers.{aid}")
        q.html(SubElement(answer, "feedback", format="html"), t.feedback(aid),
               f"text.{lang}.feedback.{aid}")
    q.numbering("shortanswer")
    q.tags(question)
    return question


def _match(q: _Question, item: Matching, *, duplicate: bool) -> etree._Element:
    """`match`: a subquestion per pair (its premise as HTML, its response as plain text, which
    Moodle shows in a menu), then each extra response as a subquestion with an empty text, as
    Moodle stores distractors."""
    t, lang = q.t, q.lang
    question = q.head("matching", duplicate=duplicate)  # Moodle's export name for `match`
    SubElement(question, "shuffleanswers").text = "true" if item.shuffle else "false"
    for tag in ("correctfeedback", "partiallycorrectfeedback", "incorrectfeedback"):
        q.empty(question, tag, "")
    check_match(t, item)
    for rid in item.response_ids:
        sub = SubElement(question, "subquestion", format="html")
        premise = premise_html(t, item, rid) if rid in item.pairs else ""
        q.html(sub, premise, f"text.{lang}.premises.{rid}")
        q.text(SubElement(sub, "answer"), response_text(t, item, rid),
               f"text.{lang}.responses.{rid}")
    q.numbering("match")
    q.tags(question)
    return question


def _essay(q: _Question, item: Essay, *, duplicate: bool) -> etree._Element:
    """`essay`: the response box (format, required, lines, word limits, no attachments), the
    grader's guide and the response template."""
    t, lang = q.t, q.lang
    question = q.head("essay", duplicate=duplicate)
    SubElement(question, "responseformat").text = item.response_format
    SubElement(question, "responserequired").text = "1" if item.response_required else "0"
    SubElement(question, "responsefieldlines").text = str(item.lines)
    SubElement(question, "minwordlimit").text = str(item.min_words or "")
    SubElement(question, "maxwordlimit").text = str(item.max_words or "")
    for tag in ("attachments", "attachmentsrequired", "maxbytes"):
        SubElement(question, tag).text = "0"
    SubElement(question, "filetypeslist").text = ""
    q.html(SubElement(question, "graderinfo", format="html"),
           t.block(f"text.{lang}.grader_info",
                   lambda la: item.text[la].grader_info or ""), f"text.{lang}.grader_info")
    template, fmt = response_template(t, item)
    q.text(SubElement(question, "responsetemplate", format=fmt), template,
           f"text.{lang}.response_template")
    q.numbering("essay")
    q.tags(question)
    return question


def _ordering(q: _Question, item: Ordering, *, duplicate: bool) -> etree._Element:
    """`ordering` (Moodle 4.4+ core): every option shown, vertically, in the right order
    (`fraction` 1, 2, ...: Moodle shuffles them for each attempt), graded as the item says."""
    t, lang = q.t, q.lang
    question = q.head("ordering", duplicate=duplicate)
    SubElement(question, "layouttype").text = "VERTICAL"
    SubElement(question, "selecttype").text = "ALL"
    SubElement(question, "selectcount").text = str(len(item.options))
    SubElement(question, "gradingtype").text = item.grading.upper()
    SubElement(question, "showgrading").text = "SHOW"
    SubElement(question, "numberingstyle").text = q.numbering("ordering") or "none"
    for tag in ("correctfeedback", "partiallycorrectfeedback", "incorrectfeedback"):
        q.empty(question, tag, "")
    # Moodle's own export writes it; without it, qtype_ordering's import asks for hints that
    # have no text, and saving them fails ("Error writing to database")
    SubElement(question, "shownumcorrect").text = "0"
    for n, oid in enumerate(item.options, 1):
        answer = SubElement(question, "answer", fraction=f"{n:.7f}", format="html")
        html = t.inline(f"text.{{lang}}.options.{oid}", partial(_ordering_option, item, oid))
        q.html(answer, html, f"text.{lang}.options.{oid}")
    q.tags(question)
    return question


def _cloze(q: _Question, item: Cloze, lang: str, *, duplicate: bool) -> etree._Element:
    """`cloze` (qtype_multianswer): the question text with each gap as an embedded answer
    (`dpassess.export.moodle.cloze`); Moodle's mark is the sum of the gaps' weights."""
    question = q.head("cloze", duplicate=duplicate)
    text_el = question.find("questiontext/text")
    assert text_el is not None
    stem = cloze.question_text(q.t, item, text_el.text or "", lang, q.t.warn)
    if has_non_xml(stem):  # a gap's answers, feedback or options
        stem = q.writer.clean(stem, item.id, f"text.{lang}.gaps")
    _set_text(text_el, stem)
    weights = sum(max(round(g.points), 1) for g in item.gaps)
    if weights != item.points:
        q.t.warn("points", f"Moodle's mark for a cloze question is the sum of its gaps' weights "
                           f"({weights}), not {item.points:g}")
    grade = question.find("defaultgrade")  # Moodle writes none: the mark is the weights' sum
    assert grade is not None
    question.remove(grade)
    q.numbering("cloze")
    q.tags(question)
    return question


def _description(q: _Question, *, duplicate: bool) -> etree._Element:
    """`description`: text only, no mark (as Moodle writes it: grade and penalty 0)."""
    question = q.head("description", duplicate=duplicate)
    for tag in ("defaultgrade", "penalty"):
        el = question.find(tag)
        assert el is not None
        el.text = "0.0000000"
    q.numbering("description")
    q.tags(question)
    return question


def _ordering_option(item: Ordering, oid: str, lang: str) -> str:
    return item.text[lang].options[oid]


def _set_text(el: etree._Element, value: str) -> None:
    """`value` in `el`, in CDATA when it has markup characters (Moodle's `xml_escape`).

    A value containing `]]>` cannot sit in one CDATA section; it is written as escaped text,
    which every XML parser reads back identically.
    """
    if _MARKUP.search(value) is not None and "]]>" not in value:
        el.text = etree.CDATA(value)
    else:
        el.text = value


#: The format: one Moodle XML file per language, and one of every language (`multi`).
def _glue(writer: _Writer, item: Item, fragments: Fragments) -> object:
    """What the file's own parts read of `item` (`Format.glue`, `multilang_glue`)."""
    return multilang_glue(writer.collection, item, writer.lang, fragments)


FORMAT = Format(NAME, folder="moodle", suffix=".xml", multi=True, start=_start,
                fragment=_fragment, assemble=_assemble, glue=_glue)
export = FORMAT.export
