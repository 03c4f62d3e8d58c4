"""Moodle XML (`<quiz>`) -> items, read the way Moodle's own `qformat_xml` reads it (Moodle 4.5).

Each `<question>` becomes a `questions.Question` (multichoice and truefalse; other types are
skipped with their line), with its texts' formats and embedded files; `questions.Builder` makes
the items.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import replace
from urllib.parse import quote

from lxml import etree

from dpassess.importers import moodle_cloze
from dpassess.importers.common import (
    ImportResult,
    Skip,
    check_size,
    number,
    php_trim,
)
from dpassess.importers.moodle_text import label
from dpassess.importers.questions import (
    Answer,
    Builder,
    EssaySettings,
    Pair,
    Question,
    Text,
)
from dpassess.importers.safe import InputError, is_utf8, line_of, parse_xml, prolog
from dpassess.model import ItemType
from dpassess.model.items import OrderingGrading

CODE = "moodle-xml"

# --- the Moodle XML reader ----------------------------------------------------------------------

#: qformat_xml::trans_format
_FORMATS = {"moodle_auto_format": "moodle", "html": "html", "plain_text": "plain",
            "wiki_like": "moodle", "markdown": "markdown"}
#: The Moodle question types read, and the item type each becomes.
_TYPES = {"multichoice": ItemType.single_choice, "truefalse": ItemType.true_false,
          "numerical": ItemType.numerical, "shortanswer": ItemType.short_answer,
          "matching": ItemType.matching, "match": ItemType.matching, "essay": ItemType.essay,
          "ordering": ItemType.ordering, "description": ItemType.description,
          "cloze": ItemType.cloze, "multianswer": ItemType.cloze}
_SKIPPED_TYPES = {
    "calculated": "calculated",
    "calculatedsimple": "calculated", "calculatedmulti": "calculated multichoice",
    "ddwtos": "drag and drop", "gapselect": "select missing words", "ddimageortext": "drag and drop",
    "ddmarker": "drag and drop", "randomsamatch": "random short-answer matching",
}
#: qtype_ordering's grading types (and its short names) -> the model's.
_ORDERING_GRADING: dict[str, OrderingGrading] = {
    "ALL_OR_NOTHING": "all_or_nothing", "ABSOLUTE_POSITION": "absolute_position",
    "ABSOLUTE": "absolute_position", "ABS": "absolute_position",
    "RELATIVE_NEXT_EXCLUDE_LAST": "relative_next_exclude_last",
    "RELATIVE": "relative_next_exclude_last", "REL": "relative_next_exclude_last",
    "": "relative_next_exclude_last",
    "RELATIVE_NEXT_INCLUDE_LAST": "relative_next_include_last",
    "RELATIVE_ONE_PREVIOUS_AND_NEXT": "relative_one_previous_and_next",
    "RELATIVE_ALL_PREVIOUS_AND_NEXT": "relative_all_previous_and_next",
    "LONGEST_ORDERED_SUBSET": "longest_ordered_subset",
    "LONGEST_CONTIGUOUS_SUBSET": "longest_contiguous_subset",
    "RELATIVE_TO_CORRECT": "relative_to_correct",
}


class _Reader:
    """Reads the `<question>`s of a `<quiz>` in order; `line` and `item` are where the question
    being read is and its name, for its diagnostics."""

    def __init__(self, builder: Builder) -> None:
        self.b = builder
        self.line = 0
        self.item: str | None = None

    def warn(self, message: str, field: str = "") -> None:
        self.b.warn(message, line=self.line, field=field, item=self.item)

    def text_of(self, el: etree._Element | None) -> str:
        """The `<text>` child's content, trimmed (qformat_xml::getpath with istext)."""
        if el is None:
            return ""
        t = el.find("text")
        if t is None:
            return ""
        if len(t):
            self.warn(f"<{el.tag}><text> holds XML elements; read as HTML (Moodle expects HTML "
                      "escaped or in CDATA)")
            inner = (t.text or "") + "".join(
                etree.tostring(c, encoding="unicode", with_tail=True) for c in t
                if isinstance(c.tag, str))
            return php_trim(inner)
        return php_trim(t.text or "")

    def field(self, el: etree._Element | None, default: str, area: str) -> Text:
        """A text with its format and files (qformat_xml::import_text_with_files)."""
        if el is None:
            return Text("", default, area)
        raw = el.get("format")
        fmt = default if raw is None else _FORMATS.get(php_trim(raw))
        if fmt is None:
            self.warn(f"unknown text format {raw!r}; read as HTML (as Moodle does)")
            fmt = "html"
        return Text(self.text_of(el), fmt, area, self.files(el, area))

    def files(self, el: etree._Element, area: str) -> tuple[tuple[str, bytes], ...]:
        """The `<file>`s of a text area (qformat_xml::import_files_as_draft): name -> bytes.
        A file that cannot be read is left out with a warning naming it."""
        out: dict[str, bytes] = {}
        for f in el.findall("file"):
            name = f.get("name", "")
            path, encoding = f.get("path", "/"), f.get("encoding", "base64")
            problem = None
            data = b""
            if not name:
                problem = "has no name"
            elif path != "/":
                problem = f"is in folder {path!r} (only files at '/' are imported)"
            elif encoding != "base64":
                problem = f"is encoded as {encoding!r}, not base64"
            else:
                try:
                    data = base64.b64decode("".join((f.text or "").split()), validate=True)
                except (binascii.Error, ValueError):
                    problem = "is not valid base64"
            if problem is None and out.get(name, data) != data:
                problem = "has the name of an earlier file of the area (Moodle keeps the first)"
            if problem is not None:
                self.warn(f"embedded file {name!r} {problem}; not imported", field=area)
                continue
            out[name] = data
        return tuple(out.items())

    def unused_files(self, el: etree._Element | None, area: str) -> None:
        """Warn about the files of an element whose text is not carried."""
        for f in [] if el is None else el.findall("file"):
            self.warn(f"embedded file {f.get('name', '')!r} is not imported (this text is not "
                      "carried)", field=area)

    def value(self, q: etree._Element, tag: str, default: str) -> str:
        el = q.find(tag)
        return default if el is None else php_trim(el.text or "")

    def read(self, root: etree._Element) -> None:
        for q in root:
            if not isinstance(q.tag, str):
                continue
            self.line, self.item = line_of(q), None
            if q.tag != "question":
                self.warn(f"<{q.tag}> is not a <question>; left out")
                continue
            qtype = q.get("type", "")
            if qtype == "category":
                self.b.category(self.text_of(q.find("category")), line=self.line)
                self.b.note_languages(self.text_of(q.find("info")))
                continue
            self.item = label(php_trim(q.findtext("name/text") or ""))
            if qtype in _TYPES:
                try:
                    self.b.question(self.question(q, qtype))
                except Skip as exc:
                    self.b.skip(str(exc), line=self.line, item=self.item)
            else:
                what = _SKIPPED_TYPES.get(qtype, repr(qtype))
                self.b.skip(f"{what} questions are not supported yet", line=self.line,
                            item=self.item)

    def question(self, q: etree._Element, qtype: str) -> Question:
        name_el = q.find("name")
        if name_el is None or name_el.find("text") is None:
            raise Skip("the question has no <name><text> (Moodle refuses it too)")
        stem = self.field(q.find("questiontext"), "html", "questiontext")
        fmt = stem.format
        general = self.field(q.find("generalfeedback"), fmt, "generalfeedback")
        points = number(self.value(q, "defaultgrade", "1"), "defaultgrade")
        if _TYPES[qtype] is ItemType.description:
            points = 1.0  # never scored (Moodle writes 0)
        elif not 0 < points <= 1000:
            raise Skip(f"defaultgrade {points:g}: an item is worth more than 0 and at most "
                       "1000 points")
        tags = [self.text_of(t) for t in q.findall("tags/tag")]
        tags += [self.text_of(t) for t in q.findall("coursetags/tag")]
        for tag in ("correctfeedback", "partiallycorrectfeedback", "incorrectfeedback"):
            if self.text_of(q.find(tag)):
                self.warn(f"<{tag}> is not carried (the model has per-option feedback and an "
                          "explanation)")
            self.unused_files(q.find(tag), tag)
        if q.findall("hint"):
            self.warn(f"{len(q.findall('hint'))} hint(s) not carried")
        name = self.text_of(name_el)
        idnumber = self.value(q, "idnumber", "")
        stem = self._old_image(q, stem)
        question = Question(self.line, _TYPES[qtype], name, stem, general, [], idnumber, tags,
                            points=points, penalty=self._penalty(q))
        answers_el = q.findall("answer")
        match question.kind:
            case ItemType.matching:
                return self._matching(q, question, fmt)
            case ItemType.essay:
                return self._essay(q, question, fmt)
            case ItemType.description:
                return question
            case ItemType.cloze:
                return self._cloze(question)
            case _:  # the types with <answer> elements (read below)
                pass
        if not answers_el:
            raise Skip("the question has no <answer>")
        match question.kind:
            case ItemType.true_false:
                question.answers = self._truefalse(answers_el, fmt)
            case ItemType.numerical:
                question.answers = self._answers(answers_el, fmt, plain=True, numeric=True)
                self._units(q, question)
            case ItemType.short_answer:
                question.answers = self._answers(answers_el, fmt, plain=True)
                question.case_sensitive = self.value(q, "usecase", "0") not in ("0", "", "false")
            case ItemType.ordering:
                question.answers = self._answers(answers_el, fmt, ordering=True)
                self._ordering(q, question)
            case ItemType.single_choice | ItemType.multiple_response:
                question.answers = self._answers(answers_el, fmt)
                single = self.value(q, "single", "true") not in ("false", "", "0")
                question.kind = ItemType.single_choice if single else ItemType.multiple_response
                question.shuffle = self.value(q, "shuffleanswers", "false") not in (
                    "false", "", "0")
                numbering = self.value(q, "answernumbering", "abc") or "abc"
                question.numbering = "" if numbering == "abc" else numbering  # the default
            case _:  # read above
                pass
        return question

    def _answers(self, answers: list[etree._Element], fmt: str, *, plain: bool = False,
                 numeric: bool = False, ordering: bool = False) -> list[Answer]:
        """qformat_xml::import_answer: the answers (plain text for numerical and short
        answers, as Moodle reads them), with their grade (a position in ordering questions,
        which Moodle ignores: their order is the answers' order) and feedback."""
        out = []
        for n, a in enumerate(answers, 1):
            fraction = 0.0 if ordering else number(a.get("fraction", "0"), "fraction") / 100
            text = Text(self.text_of(a), "plain") if plain else self.field(a, fmt,
                                                                           f"answer {n}")
            if plain:
                self.unused_files(a, f"answer {n}")
            tolerance = self.value(a, "tolerance", "0") if numeric else "0"
            out.append(Answer(text, fraction,
                              self.field(a.find("feedback"), fmt, f"answer {n} feedback"),
                              tolerance=tolerance or "0"))
        return out

    def _units(self, q: etree._Element, question: Question) -> None:
        """qformat_xml::import_numerical's units: graded (a penalty) or not."""
        for u in q.findall("units/unit"):
            question.units.append((self.value(u, "unit_name", ""),
                                   self.value(u, "multiplier", "1") or "1"))
        grading = self.value(q, "unitgradingtype", "0")
        if question.units and grading in ("1", "2"):
            question.unit_penalty = number(self.value(q, "unitpenalty", "0.1") or "0.1",
                                           "unitpenalty")
            if grading == "1":
                self.warn("the unit penalty is a fraction of the response's grade in Moodle; "
                          "read as a fraction of the question's mark (what the item says)")
        if self.value(q, "unitsleft", "0") not in ("0", ""):
            self.warn("units written left of the number are not carried")

    def _ordering(self, q: etree._Element, question: Question) -> None:
        """qtype_ordering::import_from_xml: the grading type; a subset shown is warned about."""
        raw = self.value(q, "gradingtype", "").upper()
        grading = _ORDERING_GRADING.get(raw)
        if grading is None:
            self.warn(f"ordering grading type {raw!r} is unknown; read as Moodle's default "
                      "(relative to the next item, last excluded)")
            grading = "relative_next_exclude_last"
        question.grading = grading
        numbering = self.value(q, "numberingstyle", "none") or "none"
        question.numbering = "" if numbering == "none" else numbering  # the default
        select = self.value(q, "selecttype", "").upper() or "RANDOM"
        try:
            count = int(self.value(q, "selectcount", "0") or "0")
        except ValueError:
            count = 0
        if select != "ALL" and 0 < count < len(question.answers):
            self.warn(f"Moodle shows {count} of the {len(question.answers)} items "
                      f"({select.lower()}); the item shows them all")

    def _matching(self, q: etree._Element, question: Question, fmt: str) -> Question:
        """qformat_xml::import_match: subquestions (an empty one holds a distractor)."""
        for n, sub in enumerate(q.findall("subquestion"), 1):
            question.pairs.append(Pair(self.field(sub, fmt, f"subquestion {n}"),
                                       self.text_of(sub.find("answer"))))
        question.shuffle = self.value(q, "shuffleanswers", "true") not in ("false", "", "0")
        return question

    def _essay(self, q: etree._Element, question: Question, fmt: str) -> Question:
        """qformat_xml::import_essay."""
        def whole(tag: str, default: int) -> int:
            raw = self.value(q, tag, str(default))
            try:
                return int(raw or default)
            except ValueError:
                raise Skip(f"<{tag}> {raw!r} is not a whole number") from None

        question.essay = EssaySettings(
            response_format=self.value(q, "responseformat", "editor") or "editor",
            required=whole("responserequired", 1) != 0,
            lines=whole("responsefieldlines", 15),
            attachments=whole("attachments", 0),
            min_words=whole("minwordlimit", 0) or None,
            max_words=whole("maxwordlimit", 0) or None,
            grader_info=self.field(q.find("graderinfo"), fmt, "graderinfo"),
            template=self.field(q.find("responsetemplate"), fmt, "responsetemplate"),
        )
        return question

    def _cloze(self, question: Question) -> Question:
        """qformat_xml::import_multianswer: the gaps as qtype_multianswer reads the question
        text, refused for Moodle's reasons; the mark is the sum of the gaps' weights."""
        text, gaps = moodle_cloze.extract(question.stem.text)
        refused = moodle_cloze.refusals(gaps)
        if refused:
            raise Skip(f"Invalid embedded answers (Cloze) question ({' '.join(refused)}) "
                       "(Moodle refuses it too)")
        question.stem = replace(question.stem, text=text)
        question.gaps = gaps
        question.points = sum(g.weight for g in gaps)
        return question

    def _penalty(self, q: etree._Element) -> float | None:
        raw = self.value(q, "penalty", "")
        return number(raw, "penalty") if raw else None

    def _old_image(self, q: etree._Element, stem: Text) -> Text:
        """Moodle 1.9's `<image>` with `<image_base64>`: Moodle stores the file in the question
        text's area and appends it to the text (qformat_xml::import_headers)."""
        name, data = self.value(q, "image", ""), self.value(q, "image_base64", "")
        if not name:
            return stem
        if not data:
            self.warn(f"<image> {name!r} without <image_base64> is not imported")
            return stem
        try:
            content = base64.b64decode("".join(data.split()), validate=True)
        except (binascii.Error, ValueError):
            self.warn(f"<image_base64> of {name!r} is not valid base64; not imported")
            return stem
        name = name.replace("/", "_")
        ref = f' <img src="@@PLUGINFILE@@/{quote(name)}" />'
        files = stem.files if any(n == name for n, _ in stem.files) else (
            *stem.files, (name, content))
        return Text(stem.text + ref, stem.format, stem.area or "questiontext", files)

    def _truefalse(self, answers: list[etree._Element], fmt: str) -> list[Answer]:
        """qformat_xml::import_truefalse: answers named `true`/`false` (else true, then false)."""
        correct_true: bool | None = None
        feedback = {"true": Text("", fmt), "false": Text("", fmt)}
        for n, a in enumerate(answers):
            word = self.text_of(a)
            if word not in ("true", "false"):
                word = "true" if n == 0 else "false"
                self.warn(f"true/false answer {self.text_of(a)!r} is taken to be {word!r} by its "
                          "position (old Moodle export)")
            try:
                full = float(a.get("fraction", "0")) == 100
            except ValueError:
                full = False
            correct_true = full if word == "true" else not full
            self.unused_files(a, f"answer {n + 1}")
            feedback[word] = self.field(a.find("feedback"), fmt, f"answer {n + 1} feedback")
        assert correct_true is not None
        return [Answer(Text("true"), 1.0 if correct_true else 0.0, feedback["true"]),
                Answer(Text("false"), 0.0 if correct_true else 1.0, feedback["false"])]


def read(data: bytes, name: str, lang: str | None, *,
         true_false_words: Mapping[str, tuple[str, str]] | None = None) -> ImportResult:
    """A Moodle XML file -> items (multichoice and truefalse); other questions are skipped."""
    check_size(data, name)
    encoding = prolog(data).encoding
    if not is_utf8(encoding):
        raise InputError(f"{name}:1: the file declares encoding {encoding!r}; Moodle XML is "
                         "UTF-8")
    root = parse_xml(data, name)
    if root.tag != "quiz":
        raise InputError(f"{name}:{line_of(root) or 1}: not Moodle XML: the root element is "
                         f"<{root.tag}>, not <quiz>")
    builder = Builder(CODE, name, lang, true_false_words)
    _Reader(builder).read(root)
    return builder.finish()


__all__ = ["CODE", "read"]
