"""A Moodle question (as the Moodle XML and GIFT readers see it) -> an item.

The readers turn their format into `Question`s and hand them, with the categories between them,
to one `Builder` per file. The builder applies Moodle's text formats and multilang filter, turns
categories into topics, idnumbers into ids, fractions into a key and weights, and embedded files
into image files beside the items; it makes each item through the model's class for its type.
A question the model cannot hold is skipped with its line and the reason.
"""

from __future__ import annotations

import html
import posixpath
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Literal, get_args
from urllib.parse import quote, unquote

from pydantic import ValidationError

from dpassess.importers import moodle_cloze
from dpassess.importers.common import (
    DEFAULT_TOPIC,
    MAX_FIELD,
    ImportResult,
    NoLanguage,
    Skip,
    choice_item,
    clean_tag,
    default_weights,
    free_id,
    lang_code,
    moodle_derived_name,
    moodle_lang,
    note,
    option_id,
    option_ids,
    php_trim,
    slugify,
    title_markdown,
    transliterated,
    valid_id,
    validation_reason,
    with_titles,
)
from dpassess.importers.moodle_text import (
    category_topic,
    label,
    languages,
    plain_name,
    select,
    to_markdown,
)
from dpassess.importers.safe import MAX_ANSWERS
from dpassess.lms.moodle import GRADE_TOLERANCE, percent, snap
from dpassess.markup.markdown import blank_gaps, to_plain
from dpassess.markup.xmlchars import has_non_xml, xml_safe
from dpassess.model import (
    TRUE_FALSE_IDS,
    TRUE_FALSE_WORDS,
    AnswerContent,
    Cloze,
    ClozeContent,
    Content,
    ContentBase,
    Description,
    Essay,
    EssayContent,
    Item,
    ItemType,
    Matching,
    MatchingContent,
    MultipleResponse,
    Numerical,
    Option,
    Ordering,
    OrderingContent,
    ShortAnswer,
    ShortAnswerContent,
    SingleChoice,
)
from dpassess.model.items import (
    LmsSettings,
    MoodleSettings,
    NumericAnswer,
    OrderingGrading,
    TextAnswer,
    Unit,
)

Numbering = Literal["abc", "ABCD", "123", "iii", "IIII", "none"]
ResponseFormat = Literal["editor", "plain", "monospaced"]

# --- a Moodle question, as either reader sees it ---------------------------------------------


@dataclass(frozen=True, slots=True)
class Text:
    """One text field as Moodle stores it: the text and its format; from Moodle XML, also the
    element's name for messages (`area`) and the files embedded in it (name -> bytes)."""

    text: str = ""
    format: str = "html"  # "html" | "moodle" | "plain" | "markdown"
    area: str = ""
    files: tuple[tuple[str, bytes], ...] = ()


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer as Moodle stores it. A numerical answer's `text` is its number (or `*`, any
    number), with its `tolerance`; GIFT's `min..max` gives `range` instead."""

    text: Text
    fraction: float
    feedback: Text
    tolerance: str = "0"
    range: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True)
class Pair:
    """A matching question's subquestion: its premise (empty: `response` is a distractor) and
    its answer, plain text."""

    premise: Text
    response: str


@dataclass(frozen=True, slots=True)
class EssaySettings:
    """An essay question's settings, as Moodle's essay type names them."""

    response_format: str = "editor"
    required: bool = True
    lines: int = 15
    attachments: int = 0
    min_words: int | None = None
    max_words: int | None = None
    grader_info: Text = Text()
    template: Text = Text()


@dataclass
class Question:
    """A question of the item type `kind`, found at `line` of the input: multichoice (one
    answer or several), truefalse (whose answers are `true` then `false`), numerical and
    shortanswer (`answers`), match (`pairs`), essay (`essay`) or ordering (`answers` in the
    right order)."""

    line: int
    kind: ItemType
    name: str
    stem: Text
    general: Text = Text()
    answers: list[Answer] = field(default_factory=list)
    idnumber: str = ""
    tags: list[str] = field(default_factory=list)
    shuffle: bool = True
    points: float = 1.0
    pairs: list[Pair] = field(default_factory=list)
    case_sensitive: bool = False
    #: (unit, multiplier as written), the first the one the answers are in.
    units: list[tuple[str, str]] = field(default_factory=list)
    #: None: units are not graded.
    unit_penalty: float | None = None
    essay: EssaySettings = EssaySettings()
    #: An ordering question's grading type (the model's name).
    grading: OrderingGrading = "relative_next_exclude_last"
    #: Moodle's penalty per wrong try (None: not given) and answer numbering.
    penalty: float | None = None
    numbering: str = ""
    #: GIFT's missing-word form: the stem holds `[[g1]]` where the answers were.
    missing_word: bool = False
    #: A cloze question's gaps (the stem names each as `[[g<n>]]`).
    gaps: list[moodle_cloze.Gap] = field(default_factory=list)

    @property
    def label(self) -> str | None:
        """The question as diagnostics name it (its name)."""
        return label(self.name)

    def texts(self) -> Iterable[str]:
        return (text for _, text in self.fields())

    def fields(self) -> Iterable[tuple[str, str]]:
        """Each text of the question, with its name for messages."""
        yield "name", self.name
        yield "question text", self.stem.text
        yield "general feedback", self.general.text
        for n, a in enumerate(self.answers, 1):
            yield f"answer {n}", a.text.text
            yield f"answer {n} feedback", a.feedback.text
        for n, p in enumerate(self.pairs, 1):
            yield f"subquestion {n}", p.premise.text
            yield f"subquestion {n} answer", p.response
        yield "grader information", self.essay.grader_info.text
        yield "response template", self.essay.template.text
        for n, g in enumerate(self.gaps, 1):  # as written in the text, before decoding
            for k, (answer, feedback) in enumerate(zip(g.raw_answers, g.raw_feedback,
                                                       strict=True), 1):
                yield f"gap {n} answer {k}", answer
                yield f"gap {n} answer {k} feedback", feedback

    def xml_safe(self) -> Question:
        """The question with every character XML cannot carry left out of its texts (the
        warning is the caller's)."""
        def clean(t: Text) -> Text:
            return replace(t, text=xml_safe(t.text)[0]) if has_non_xml(t.text) else t

        def plain(s: str) -> str:
            return xml_safe(s)[0]

        for g in self.gaps:  # decoded: a character reference is gone already, a raw one not
            g.answers = [plain(a) for a in g.answers]
            g.feedback = [plain(f) for f in g.feedback]
        return replace(
            self, name=plain(self.name), stem=clean(self.stem), general=clean(self.general),
            answers=[replace(a, text=clean(a.text), feedback=clean(a.feedback))
                     for a in self.answers],
            pairs=[Pair(clean(p.premise), plain(p.response)) for p in self.pairs],
            essay=replace(self.essay, grader_info=clean(self.essay.grader_info),
                          template=clean(self.essay.template)))


#: Longest category path read (characters): Moodle's names are at most 255 characters, and a
#: path of a few dozen of them is already deep.
MAX_CATEGORY = 4096

# --- embedded files (a Moodle file area per text) -> image files beside the items ------------

#: Folder, relative to the bank folder (and so to each item's file), of the files imported from
#: Moodle XML: `img/<item id>/<file name>`.
IMAGE_DIR = "img"
#: A reference to a file of the text's area, as Moodle writes it: the name URL-escaped.
_REF = re.compile(r"@@PLUGINFILE@@/([^\"'\s<>?#()]*)")
#: Characters left out of a written file name: control characters, folder separators, and
#: what Windows refuses.
_NOT_IN_NAME = re.compile(r'[\x00-\x1f\x7f-\x9f/\\:*?"<>|]')
_MAX_NAME_BYTES = 120


def file_name(name: str) -> str:
    """`name` as a file name safe to write in one folder: no folder separators, no `..`, no
    leading dot, no control characters; the extension is kept."""
    name = _NOT_IN_NAME.sub("_", unicodedata.normalize("NFC", name))
    name = re.sub(r"\.{2,}", ".", name).strip(" ").rstrip(". ")
    if name.startswith("."):
        name = "image" + name
    stem, ext = posixpath.splitext(name)
    if len(ext) > 16:
        stem, ext = name, ""
    while stem and len((stem + ext).encode("utf-8")) > _MAX_NAME_BYTES:
        stem = stem[:-1]
    return (stem.rstrip(". ") or "image") + ext


class _Files:
    """The files one item's texts show, written under `img/<item id>/` in the order the texts
    first show them: a name (compared case-folded, for case-insensitive file systems) holds one
    file; the same bytes under the same name are written once, different bytes are renamed
    `x-2.png`, `x-3.png`, ..."""

    def __init__(self, item_id: str) -> None:
        self.folder = f"{IMAGE_DIR}/{item_id}"
        self.files: dict[str, tuple[str, bytes]] = {}

    def link(self, name: str, data: bytes) -> str:
        """The relative, URL-escaped path the text refers to the file by."""
        name = file_name(name)
        stem, ext = posixpath.splitext(name)
        n = 1
        while (got := self.files.get(name.casefold())) is not None and got[1] != data:
            n += 1
            name = f"{stem}-{n}{ext}"
        self.files[name.casefold()] = (name, data)
        return f"{self.folder}/{quote(name, safe='')}"

    def written(self) -> dict[str, bytes]:
        return {f"{self.folder}/{name}": data for name, data in self.files.values()}


# --- Moodle question -> item --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Choices:
    """What a choice question's answers make: the answers kept (one per option, in order), the
    option ids, the key, the weights (None: the model's default), and whether the answers' texts
    are the options' (not for true/false, where Moodle shows its own words)."""

    answers: list[Answer]
    ids: list[str]
    key: list[str]
    weights: dict[str, float] | None = None
    option_texts: bool = True


@dataclass(frozen=True, slots=True)
class _Draft:
    """What the item of a question gets whatever its type: its id (`wanted`, and a note when an
    idnumber had to be rewritten), its name in each language, the folder of its files."""

    item_id: str
    wanted: str
    id_note: str
    names: dict[str, str]
    files: _Files


def _not_xml(text: str) -> str:
    """The characters XML cannot carry that `text` holds, raw or as HTML character references
    (`&#1;`), named (`U+0001`); empty when none."""
    if "&#" in text:  # html.unescape drops these references: each is read here
        refs = "".join(chr(n) for m in _CHAR_REF.finditer(text)
                       if (n := int(m[1], 10) if m[1] else int(m[2], 16)) < 0x110000)
        text += refs
    return xml_safe(text)[1] if has_non_xml(text) else ""


_CHAR_REF = re.compile(r"&#(?:([0-9]{1,8})|[xX]([0-9a-fA-F]{1,8}))")


def _markdown(t: Text, code: str, *, inline: bool) -> str:
    """`t` in the language `code` (a Moodle code) as Markdown."""
    return to_markdown(select(t.text, code), t.format, inline=inline)


class Builder:
    """Questions of one file -> items: languages, texts, key and weights, ids, topics, tags.

    `code` is the format (the diagnostics' code), `path` the input. `lang` is the language of
    text without multilang spans; without it, such text is taken to be in every language the
    file's spans use (as Moodle shows it), else it is an error.
    """

    def __init__(self, code: str, path: str, lang: str | None,
                 true_false_words: Mapping[str, tuple[str, str]] | None = None) -> None:
        self.code = code
        self.path = path
        self.lang = lang
        self.words = dict(true_false_words or {})
        self._wordless: dict[str, None] = {}  # languages given English true/false words
        self.result = ImportResult()
        self._pending: list[tuple[Question, str]] = []  # (question, topic)
        self._file_langs: dict[str, None] = {}
        self._tag_notes: dict[str, str] = {}
        self._topic = ""  # the category path in force
        self._ids: set[str] = set()  # ids of the items built so far
        self._tried: dict[str, int] = {}  # the last suffix tried for each id wanted
        self._transliterated: list[tuple[str, str]] = []  # (name, id) of ids transliterated
        self._renamed: list[tuple[Question, str, str]] = []  # (question, id, id given)

    def warn(self, message: str, *, line: int = 0, field: str = "",
             item: str | None = None) -> None:
        self.result.warnings.append(note(self.code, self.path, message, line=line, field=field,
                                         item=item))

    def skip(self, reason: str, *, line: int, item: str | None = None) -> None:
        self.result.skipped.append(note(self.code, self.path, reason, line=line, item=item))

    # questions arrive in file order; categories set the topic of those that follow
    def category(self, path: str, *, line: int = 0) -> None:
        if len(path) > MAX_CATEGORY:
            self.warn(f"a category path of {len(path):,} characters (the limit is "
                      f"{MAX_CATEGORY:,}); the questions after it go to topic "
                      f"{DEFAULT_TOPIC!r}", line=line)
            path = ""
        self._topic = path

    def question(self, q: Question) -> None:
        if (count := max(len(q.answers), len(q.pairs))) > MAX_ANSWERS:
            self.skip(f"{count:,} {'subquestions' if q.pairs else 'answers'}; the limit is "
                      f"{MAX_ANSWERS:,} per question", line=q.line, item=q.label)
            return
        if (count := max((len(g.answers) for g in q.gaps), default=0)) > MAX_ANSWERS:
            self.skip(f"a gap of {count:,} answers; the limit is {MAX_ANSWERS:,} per gap",
                      line=q.line, item=q.label)
            return
        for text in q.texts():
            if len(text) > MAX_FIELD:
                self.skip(f"a text field is {len(text):,} characters; the limit is "
                          f"{MAX_FIELD:,}", line=q.line, item=q.label)
                return
        dirty = False
        for name, text in q.fields():
            if bad := _not_xml(text):
                self.warn(f"holds characters that XML cannot carry ({bad}): they "
                          "are left out", line=q.line, field=name, item=q.label)
                dirty = True
        self._pending.append((q.xml_safe() if dirty else q, self._topic))

    def note_languages(self, text: str) -> None:
        """Languages used by text outside questions (a category's info) count for the file."""
        if len(text) <= MAX_FIELD:
            for code in languages(text):
                self._file_langs.setdefault(code, None)

    def finish(self) -> ImportResult:
        langs_by_q = []
        for q, _ in self._pending:
            langs: dict[str, None] = {}
            for text in q.texts():
                for code in languages(text):
                    langs.setdefault(code, None)
            langs_by_q.append(list(langs))
            for code in langs:
                self._file_langs.setdefault(code, None)
        topics: dict[str, str] = {}
        sources: dict[str, str] = {}  # topic -> the first category path giving it
        first = next(iter(self._file_langs), "")
        for (q, path), found in zip(self._pending, langs_by_q, strict=True):
            if path not in topics:
                shown = select(path, first)
                topic = topics[path] = category_topic(shown)
                if sources.setdefault(topic, path) != path:
                    self.warn(f"categories {sources[topic]!r} and {path!r} both become topic "
                              f"{topic!r}: their questions share it", line=q.line)
                elif transliterated(shown):
                    self.warn(f"category {shown!r} is topic {topic!r} (transliterated)",
                              line=q.line)
            try:
                self.result.items.append(self._item(q, topics[path], found))
            except Skip as exc:
                self.skip(str(exc), line=q.line, item=q.label)
        for original, tag in sorted(self._tag_notes.items()):
            self.warn(f"tag {original!r} written as {tag!r}" if tag
                      else f"tag {original!r} has no letters or digits; left out")
        for lang in self._wordless:
            self.warn(f"true/false items in {lang!r} show the English words True and False "
                      f"(the bank has no words for {lang!r}): give them (for example "
                      f"{lang}=yes,no), or edit the items' options")
        if self._transliterated:
            name, new = self._transliterated[0]
            self.warn(f"{len(self._transliterated)} id(s) transliterated from names in other "
                      f"scripts (the first: {name!r} is {new!r}); the names are kept as titles")
        for q, old, new in self._renamed:
            self.warn(f"id {old!r} is used by an earlier question; this one is {new!r}",
                      line=q.line, item=q.label)
        return self.result

    # -- one question -----------------------------------------------------------------------
    def _languages(self, q: Question, langs: list[str]) -> list[tuple[str, str]]:
        """(model code, Moodle code) of each language the question is written in."""
        if not langs:
            if self.lang is not None:
                return [(self.lang, moodle_lang(self.lang))]
            langs = list(self._file_langs)
        if not langs:
            raise NoLanguage(f"{self.path}:{q.line}: the text has no language spans, so its "
                             "language must be given")
        out = []
        for code in langs:
            model = lang_code(code)
            if model is None:
                raise Skip(f"language {code!r} is not a language code the bank accepts "
                           "(like en, id or pt_br)")
            out.append((model, code))
        return out

    def _graded(self, q: Question) -> tuple[list[Answer], list[float]]:
        """A multichoice question's answers that are not blank, and their fractions within
        -1..1 (Skip if fewer than two, or a grade is outside -100%..100%)."""
        answers = [a for a in q.answers if php_trim(a.text.text)]
        if len(answers) < len(q.answers):
            self.warn(f"{len(q.answers) - len(answers)} blank answer(s) left out (Moodle drops "
                      "blank answers too)", line=q.line, item=q.label)
        if len(answers) < 2:
            raise Skip("a multiple-choice question needs at least two answers")
        for a in answers:
            if not -1 - GRADE_TOLERANCE <= a.fraction <= 1 + GRADE_TOLERANCE:
                raise Skip(f"answer grade {a.fraction * 100:g}% is outside -100%..100%")
        return answers, [self.grade(max(-1.0, min(1.0, a.fraction)), f"answer {n}", q)
                         for n, a in enumerate(answers, 1)]

    def _choices(self, q: Question) -> _Choices:
        """The options, key and weights of the question's item type."""
        match q.kind:
            case ItemType.true_false:
                right = "true" if q.answers[0].fraction == 1 else "false"
                return _Choices(q.answers, list(TRUE_FALSE_IDS), [right], option_texts=False)
            case ItemType.single_choice:
                answers, fractions = self._graded(q)
                ids = option_ids(len(answers))
                full = [i for i, f in enumerate(fractions) if abs(f - 1) < GRADE_TOLERANCE]
                if not full:
                    raise Skip("no answer is worth 100%: nobody could get this question fully "
                               "right")
                if any(f <= -GRADE_TOLERANCE for f in fractions):
                    raise Skip("negative credit in a single-answer question (the model holds "
                               "negative credit for multiple-answer questions)")
                # the first answer worth 100% is the key; the others earn their grades
                partial = {oid: f for i, (oid, f) in enumerate(zip(ids, fractions, strict=True))
                           if i != full[0] and f >= GRADE_TOLERANCE}
                return _Choices(answers, ids, [ids[full[0]]], partial or None)
            case ItemType.multiple_response:
                answers, fractions = self._graded(q)
                ids = option_ids(len(answers))
                key = [oid for oid, f in zip(ids, fractions, strict=True) if f > 0]
                if not key:
                    raise Skip("no answer earns credit")
                weights: dict[str, float] | None = dict(zip(ids, fractions, strict=True))
                default = default_weights(ids, key)
                if all(abs(f - default[o]) < GRADE_TOLERANCE
                       for o, f in zip(ids, fractions, strict=True)):
                    weights = None
                return _Choices(answers, ids, key, weights)
            case _:
                raise ValueError(f"{q.kind.value} has no choices")

    def _item(self, q: Question, topic: str, langs_found: list[str]) -> Item:
        """The question as an item of its type (Skip if the model cannot hold the question); a
        question with its answers inside the text (GIFT's missing-word form) as a cloze item of
        one gap."""
        item = self._typed_item(q, topic, langs_found)
        if not q.missing_word:
            return item
        gap = one_gap_cloze(item)
        if gap is not None:
            return gap
        self.warn(f"a {item.type.value} question in the missing-word form cannot be a cloze gap "
                  "(units, weights or its type): kept as a question, its blank as _____",
                  line=q.line, item=q.label)
        text = {la: c.model_copy(update={"stem": c.stem.replace(f"[[{MISSING_WORD_GAP}]]",
                                                                  "_____")})
                for la, c in item.text.items()}
        return item.model_copy(update={"text": text})

    def _typed_item(self, q: Question, topic: str, langs_found: list[str]) -> Item:
        """The question as an item of its type: one builder per type."""
        langs = self._languages(q, langs_found)
        match q.kind:
            case ItemType.single_choice | ItemType.multiple_response | ItemType.true_false:
                return self._choice_item(q, topic, langs)
            case ItemType.numerical:
                return self._numerical_item(q, topic, langs)
            case ItemType.short_answer:
                return self._short_answer_item(q, topic, langs)
            case ItemType.matching:
                return self._matching_item(q, topic, langs)
            case ItemType.essay:
                return self._essay_item(q, topic, langs)
            case ItemType.ordering:
                return self._ordering_item(q, topic, langs)
            case ItemType.description:
                return self._description_item(q, topic, langs)
            case ItemType.cloze:
                return self._cloze_item(q, topic, langs)
            case _:  # a type no reader makes (none of the formats read carries it)
                raise Skip(f"{q.kind.value} questions cannot be imported")

    def _choice_item(self, q: Question, topic: str, langs: list[tuple[str, str]]) -> Item:
        choices = self._choices(q)
        draft = self._draft(q, langs)
        stem, general = self._link(q, q.stem, draft.files), self._link(q, q.general, draft.files)
        answers = [Answer(self._link(q, a.text, draft.files), a.fraction,
                          self._link(q, a.feedback, draft.files)) for a in choices.answers]
        text: dict[str, Content] = {}
        for model, code in langs:
            options = {oid: _markdown(a.text, code, inline=True)
                       for oid, a in zip(choices.ids, answers, strict=True)
                       } if choices.option_texts else self._true_false_words(model)
            feedback = {oid: fb for oid, a in zip(choices.ids, answers, strict=True)
                        if (fb := _markdown(a.feedback, code, inline=False))}
            try:
                text[model] = Content(stem=_markdown(stem, code, inline=False), options=options,
                                      feedback=feedback,
                                      explanation=_markdown(general, code, inline=False) or None)
            except ValidationError as exc:
                raise Skip(validation_reason(exc)) from None
        make = partial(choice_item, q.kind, choices.weights, shuffle=q.shuffle,
                       options=tuple(Option(id=o) for o in choices.ids), key=tuple(choices.key))
        return self._built(q, topic, draft, text, make)

    def _numerical_item(self, q: Question, topic: str, langs: list[tuple[str, str]]) -> Item:
        draft = self._draft(q, langs)
        answers: list[NumericAnswer] = []
        feedback: list[Text] = []
        seen: dict[tuple[float, float], int] = {}  # bounds -> the answer giving them
        for n, a in enumerate(q.answers, 1):
            raw = php_trim(a.text.text)
            fraction = self._typed_fraction(q, a.fraction, n)
            if a.range is None and raw in ("*", ""):
                if fraction > 0:
                    raise Skip(f"answer {n} ('*') gives {fraction * 100:g}% for any number: "
                               "the model's answer for any other number earns nothing")
                if n < len(q.answers):
                    self.warn(f"answer {n} ('*') accepts any number: the {len(q.answers) - n} "
                              "answer(s) after it are never reached; left out", line=q.line,
                              item=q.label)
                if php_trim(a.feedback.text):  # without feedback it changes nothing
                    answers.append(NumericAnswer(id=option_ids(len(answers) + 1)[-1],
                                                 any_other=True))
                    feedback.append(self._link(q, a.feedback, draft.files))
                break
            if a.range is not None:
                low, high = (_number(r, f"answer {n}", self.code) for r in a.range)
                if low > high:
                    raise Skip(f"answer {n}: the range {a.range[0]}..{a.range[1]} is empty")
                spec: dict[str, float] = {"min": low, "max": high}
            else:
                tolerance = _number(a.tolerance or "0", f"answer {n} tolerance", self.code)
                if tolerance < 0:
                    raise Skip(f"answer {n}: tolerance {a.tolerance} is below 0")
                spec = {"value": _number(raw, f"answer {n}", self.code), "tolerance": tolerance}
            try:
                answer = NumericAnswer.model_validate(
                    {"id": option_id(len(answers)), "fraction": fraction, **spec})
            except ValidationError as exc:
                raise Skip(validation_reason(exc)) from None
            if (first := seen.setdefault(answer.bounds, n)) != n:
                self.warn(f"answer {n} accepts the same numbers as answer {first}; left out "
                          "(Moodle grades a response by the first answer it matches)",
                          line=q.line, item=q.label)
                continue
            answers.append(answer)
            feedback.append(self._link(q, a.feedback, draft.files))
        if not answers:
            raise Skip("a numerical question needs at least one answer")
        if not any(a.fraction == 1 for a in answers):
            raise Skip("no answer is worth 100%: nobody could get this question fully right")
        units = []
        for n, (unit, multiplier) in enumerate(q.units, 1):
            try:
                units.append(Unit(unit=unit, multiplier=_number(multiplier, f"unit {n} "
                                                                "multiplier", self.code)))
            except ValidationError as exc:
                raise Skip(validation_reason(exc)) from None
        general = self._link(q, q.general, draft.files)
        text = {}
        for model, code in langs:
            try:
                text[model] = AnswerContent(
                    stem=self._stem(q, draft, code),
                    feedback={a.id: md for a, fb in zip(answers, feedback, strict=True)
                              if (md := _markdown(fb, code, inline=False))},
                    explanation=_markdown(general, code, inline=False) or None)
            except ValidationError as exc:
                raise Skip(validation_reason(exc)) from None
        make = partial(Numerical, type=ItemType.numerical, answers=tuple(answers),
                       units=tuple(units), unit_penalty=q.unit_penalty if units else None)
        return self._built(q, topic, draft, text, make)

    def _short_answer_item(self, q: Question, topic: str, langs: list[tuple[str, str]]
                           ) -> Item:
        """Answers in a row with the same grade and feedback are one answer's wordings."""
        draft = self._draft(q, langs)
        groups: list[tuple[float, Text, list[str]]] = []
        seen: dict[str, int] = {}
        blank = 0
        for n, a in enumerate(q.answers, 1):
            word = php_trim(a.text.text)
            if not word:
                blank += 1
                continue
            fraction = self._typed_fraction(q, a.fraction, n)
            norm = " ".join(word.split())
            norm = norm if q.case_sensitive else norm.casefold()
            if norm in seen:
                self.warn(f"answer {n} ({word!r}) repeats answer {seen[norm]}; left out (Moodle "
                          "grades a response by the first answer it matches)", line=q.line,
                          item=q.label)
                continue
            seen[norm] = n
            if groups and groups[-1][0] == fraction and (groups[-1][1].text, groups[-1][1].format
                                                          ) == (a.feedback.text, a.feedback.format):
                groups[-1][2].append(word)
            else:
                groups.append((fraction, a.feedback, [word]))
        if blank:
            self.warn(f"{blank} blank answer(s) left out (Moodle drops blank answers too)",
                      line=q.line, item=q.label)
        if not groups:
            raise Skip("a short-answer question needs at least one answer")
        if not any(f == 1 for f, _, _ in groups):
            raise Skip("no answer is worth 100%: nobody could get this question fully right "
                       "(Moodle refuses such a question and stops the import there)")
        ids = option_ids(len(groups))
        feedback = [self._link(q, fb, draft.files) for _, fb, _ in groups]
        general = self._link(q, q.general, draft.files)
        text = {}
        for model, code in langs:
            try:
                text[model] = ShortAnswerContent(
                    stem=self._stem(q, draft, code),
                    answers={aid: _unique(select(w, code) for w in words)
                             for aid, (_, _, words) in zip(ids, groups, strict=True)},
                    feedback={aid: md for aid, fb in zip(ids, feedback, strict=True)
                              if (md := _markdown(fb, code, inline=False))},
                    explanation=_markdown(general, code, inline=False) or None)
            except ValidationError as exc:
                raise Skip(validation_reason(exc)) from None
        make = partial(ShortAnswer, type=ItemType.short_answer, case_sensitive=q.case_sensitive,
                       answers=tuple(TextAnswer(id=aid, fraction=f)
                                     for aid, (f, _, _) in zip(ids, groups, strict=True)))
        return self._built(q, topic, draft, text, make)

    def _matching_item(self, q: Question, topic: str, langs: list[tuple[str, str]]) -> Item:
        """Subquestions with a text are pairs; those without are distractor responses."""
        draft = self._draft(q, langs)
        pairs = [p for p in q.pairs if php_trim(p.premise.text)]
        extra = [p for p in q.pairs if not php_trim(p.premise.text) and php_trim(p.response)]
        for n, p in enumerate(pairs, 1):
            if not php_trim(p.response):
                raise Skip(f"subquestion {n} has no answer to match")
        if len(pairs) < 2:
            raise Skip(f"a matching question needs at least two pairs (this one has "
                       f"{len(pairs)})")
        ids = option_ids(len(pairs) + len(extra))
        premises = [self._link(q, p.premise, draft.files) for p in pairs]
        general = self._link(q, q.general, draft.files)
        text = {}
        for model, code in langs:
            try:
                text[model] = MatchingContent(
                    stem=self._stem(q, draft, code),
                    premises={pid: _markdown(t, code, inline=True)
                              for pid, t in zip(ids, premises, strict=False)},
                    responses={pid: _plain_markdown(p.response, code)
                               for pid, p in zip(ids, [*pairs, *extra], strict=True)},
                    explanation=_markdown(general, code, inline=False) or None)
            except ValidationError as exc:
                raise Skip(validation_reason(exc)) from None
        make = partial(Matching, type=ItemType.matching, pairs=tuple(ids[:len(pairs)]),
                       distractors=tuple(ids[len(pairs):]), shuffle=q.shuffle)
        return self._built(q, topic, draft, text, make)

    def _essay_item(self, q: Question, topic: str, langs: list[tuple[str, str]]) -> Item:
        e = q.essay
        response_format = _RESPONSE_FORMATS.get(e.response_format)
        if response_format is None:
            raise Skip(f"essay response format {e.response_format!r} (attachments only) is "
                       "not one the model holds (editor, plain, monospaced)")
        if e.attachments:
            self.warn(f"{e.attachments} attachment(s) allowed in Moodle: attachments are not "
                      "carried", line=q.line, item=q.label)
        lines = min(100, max(1, e.lines))
        if lines != e.lines:
            self.warn(f"a response box of {e.lines} lines is written as {lines}", line=q.line,
                      item=q.label)
        draft = self._draft(q, langs)
        general = self._link(q, q.general, draft.files)
        info = self._link(q, e.grader_info, draft.files)
        text = {}
        # a plain or monospaced box shows the template as written, whatever its format
        # (qtype_essay_format_plain_renderer::textarea: `s($response)`)
        as_written = response_format != "editor" or e.template.format != "html"
        for model, code in langs:
            template = select(e.template.text, code) if as_written \
                else to_plain(_markdown(e.template, code, inline=False))
            try:
                text[model] = EssayContent(
                    stem=self._stem(q, draft, code),
                    grader_info=_markdown(info, code, inline=False) or None,
                    response_template=php_trim(template) or None,
                    explanation=_markdown(general, code, inline=False) or None)
            except ValidationError as exc:
                raise Skip(validation_reason(exc)) from None
        make = partial(Essay, type=ItemType.essay, response_format=response_format,
                       response_required=e.required, lines=lines, min_words=e.min_words,
                       max_words=e.max_words)
        return self._built(q, topic, draft, text, make)

    def _cloze_item(self, q: Question, topic: str, langs: list[tuple[str, str]]) -> Item:
        """Each gap as the model's gap of its kind: answer ids a, b, ... in Moodle's order,
        wordings (short answer) and option texts (choices) per language."""
        draft = self._draft(q, langs)
        stem, general = self._link(q, q.stem, draft.files), self._link(q, q.general, draft.files)
        gaps: list[dict[str, object]] = []
        texts: dict[str, dict[str, dict[str, object]]] = {model: {} for model, _ in langs}
        for n, g in enumerate(q.gaps, 1):
            gid = f"g{n}"
            ids = option_ids(len(g.answers))
            answers = list(zip(ids, g.answers, g.fractions, g.feedback, g.tolerances,
                               strict=True))
            spec: dict[str, object] = {"id": gid, "points": g.weight}
            for model, code in langs:
                feedback = {aid: fb for aid, _, _, html, _ in answers
                            if (fb := _markdown(Text(html, "html"), code, inline=True))}
                entry: dict[str, object] = {"feedback": feedback}
                if g.kind == "shortanswer":
                    entry["answers"] = {aid: (select(text, code),) for aid, text, _, _, _ in answers
                                        if php_trim(text)}
                elif g.kind == "multichoice":
                    entry["options"] = {aid: _markdown(Text(text, "html"), code, inline=True)
                                        for aid, text, _, _, _ in answers}
                texts[model][gid] = entry
            if g.kind == "shortanswer":
                spec |= {"type": "short_answer", "case_sensitive": g.case_sensitive,
                         "answers": [{"id": aid, "fraction": f} for aid, t, f, _, _ in answers
                                     if php_trim(t)]}
            elif g.kind == "numerical":
                spec |= {"type": "numerical", "answers": [
                    {"id": aid, "any_other": True} if t.strip() == "*" else
                    {"id": aid, "value": float(t.replace(",", ".")), "tolerance": tol,
                     "fraction": f} for aid, t, f, _, tol in answers]}
            elif g.single:
                key = next(aid for aid, _, f, _, _ in answers if f == 1)
                weights = {aid: f for aid, _, f, _, _ in answers if aid != key and f}
                spec |= {"type": "choice", "options": list(ids), "key": key,
                         "weights": weights or None, "shuffle": g.shuffle,
                         "display": g.layout or "dropdown"}
            else:
                fractions = {aid: f for aid, _, f, _, _ in answers}
                keys = [aid for aid, f in fractions.items() if f > 0]
                spec |= {"type": "multiple_response", "options": list(ids), "key": keys,
                         "weights": fractions, "shuffle": g.shuffle,
                         "display": "horizontal" if g.layout == "horizontal" else "vertical"}
            gaps.append(spec)
        text = {}
        for model, code in langs:
            try:
                text[model] = ClozeContent.model_validate({
                    "stem": _markdown(stem, code, inline=False), "gaps": texts[model],
                    "explanation": _markdown(general, code, inline=False) or None})
            except ValidationError as exc:
                raise Skip(validation_reason(exc)) from None
        make = partial(_cloze_of, gaps)
        return self._built(q, topic, draft, text, make)

    def _description_item(self, q: Question, topic: str, langs: list[tuple[str, str]]
                          ) -> Item:
        """Text only: the question text (and its general feedback); never scored."""
        draft = self._draft(q, langs)
        general = self._link(q, q.general, draft.files)
        text = {}
        for model, code in langs:
            try:
                text[model] = ContentBase(
                    stem=self._stem(q, draft, code),
                    explanation=_markdown(general, code, inline=False) or None)
            except ValidationError as exc:
                raise Skip(validation_reason(exc)) from None
        make = partial(Description, type=ItemType.description)
        return self._built(q, topic, draft, text, make)

    def _ordering_item(self, q: Question, topic: str, langs: list[tuple[str, str]]) -> Item:
        """The answers are the options in the right order."""
        answers = [a for a in q.answers if php_trim(a.text.text)]
        if len(answers) < 2:
            raise Skip("an ordering question needs at least two items to order")
        draft = self._draft(q, langs)
        ids = option_ids(len(answers))
        texts = [self._link(q, a.text, draft.files) for a in answers]
        for n, a in enumerate(answers, 1):
            if php_trim(a.feedback.text):
                self.warn(f"feedback of item {n} is not carried (ordering items have none)",
                          line=q.line, item=q.label)
        general = self._link(q, q.general, draft.files)
        text = {}
        for model, code in langs:
            try:
                text[model] = OrderingContent(
                    stem=self._stem(q, draft, code),
                    options={oid: _markdown(t, code, inline=True)
                             for oid, t in zip(ids, texts, strict=True)},
                    explanation=_markdown(general, code, inline=False) or None)
            except ValidationError as exc:
                raise Skip(validation_reason(exc)) from None
        make = partial(Ordering, type=ItemType.ordering, options=tuple(ids), grading=q.grading)
        return self._built(q, topic, draft, text, make)

    def _true_false_words(self, lang: str) -> dict[str, str]:
        """The words a true/false item shows in `lang`: none in a language with built-in words
        (Moodle shows its own anyway), else those given for it, else English ones (warned)."""
        if lang in TRUE_FALSE_WORDS:
            return {}
        if lang in self.words:
            return dict(zip(TRUE_FALSE_IDS, self.words[lang], strict=True))
        self._wordless.setdefault(lang, None)
        return dict(TRUE_FALSE_WORDS["en"])

    def _stem(self, q: Question, draft: _Draft, code: str) -> str:
        return _markdown(self._link(q, q.stem, draft.files), code, inline=False)

    def _typed_fraction(self, q: Question, fraction: float, n: int) -> float:
        """A numerical or short answer's grade, within 0..1 (Skip if not)."""
        if not -GRADE_TOLERANCE <= fraction <= 1 + GRADE_TOLERANCE:
            raise Skip(f"answer {n} is worth {fraction * 100:g}%; a typed answer is worth 0% "
                       "to 100%")
        return self.grade(fraction, f"answer {n}", q)

    def grade(self, fraction: float, what: str, q: Question) -> float:
        """A grade as Moodle's list writes it (`0.3333333`); one off the list is warned about
        (Moodle refuses the whole file) and kept, to 7 decimals."""
        grade, ok = snap(fraction)
        if ok:
            return float(grade)
        self.warn(f"{what}: grade {fraction * 100:g}% is not one Moodle accepts (Moodle refuses "
                  f"the whole file; the nearest is {percent(grade)}%); kept as it is",
                  line=q.line, item=q.label)
        return round(fraction, 7)

    def _lms(self, q: Question) -> LmsSettings | None:
        """Moodle's penalty and answer numbering where they differ from Moodle's defaults."""
        penalty = None
        if q.penalty is not None:
            # Moodle's defaults: 1 for true/false, none for essays (one try), else 1/3
            default = {ItemType.true_false: 1.0, ItemType.essay: 0.0}.get(q.kind, 1 / 3)
            if not 0 <= q.penalty <= 1:
                self.warn(f"penalty {q.penalty:g} is outside 0..1; not carried", line=q.line,
                          item=q.label)
            elif abs(q.penalty - default) >= 0.005:  # Moodle's own rounding fix for 1/3
                penalty = round(q.penalty, 7)
        numbering = _NUMBERING.get(q.numbering)
        if q.numbering and numbering is None:
            self.warn(f"answer numbering {q.numbering!r} is not one Moodle offers; not carried",
                      line=q.line, item=q.label)
        if penalty is None and numbering is None:
            return None
        return LmsSettings(moodle=MoodleSettings(penalty=penalty, answer_numbering=numbering))

    # -- what the builders share --------------------------------------------------------------
    def _draft(self, q: Question, langs: list[tuple[str, str]]) -> _Draft:
        """The id the question's item gets (taken once the item is built), its names by
        language, and the folder for the files its texts show."""
        names = {model: plain_name(select(q.name, code)) for model, code in langs}
        plain_first = next(iter(names.values()))
        if not plain_first:  # images do not show in plain text: the links do not matter here
            plain_first = to_plain(_markdown(q.stem, langs[0][1], inline=False))
        wanted, id_note = self._id(q, plain_first)
        item_id = free_id(wanted, self._ids, self._tried)
        return _Draft(item_id, wanted, id_note, names, _Files(item_id))

    def _built(self, q: Question, topic: str, draft: _Draft, text: Mapping[str, ContentBase],
               make: Callable[..., Item]) -> Item:
        """The item `make` builds from the fields every item has and its `text` (titled by the
        question's names): its id is then taken and its files are written."""
        if draft.id_note:
            self.warn(draft.id_note, line=q.line, item=q.label)
        fields = dict(id=draft.item_id, topic=topic, points=q.points, tags=self._tags(q.tags),
                      lms=self._lms(q))
        try:
            item = make(**fields, text=text)
            titled = with_titles(item, draft.names)
            if titled != item.text:
                item = make(**fields, text=titled)
        except ValidationError as exc:
            raise Skip(validation_reason(exc)) from None
        self._ids.add(draft.item_id)
        if draft.item_id != draft.wanted:
            self._renamed.append((q, draft.wanted, draft.item_id))
        self.result.files.update(draft.files.written())
        return item

    def _id(self, q: Question, fallback: str) -> tuple[str, str]:
        """The question's id, and a note when its idnumber had to be rewritten."""
        idnumber = php_trim(q.idnumber)
        if idnumber:
            if valid_id(idnumber):
                return idnumber, ""
            new = slugify(idnumber)
            return new, f"idnumber {idnumber!r} is not an item id; using {new!r}"
        new = slugify(fallback)
        if transliterated(fallback):
            self._transliterated.append((fallback, new))
        return new, ""

    def _link(self, q: Question, t: Text, files: _Files) -> Text:
        """`t` with each `@@PLUGINFILE@@/<name>` that names a file of its area pointing at
        that file, written under `files`. A reference to a file the area does not hold keeps
        its link, and a file no reference shows is not written; both are warned about."""
        if not t.area or (not t.files and "@@PLUGINFILE@@" not in t.text):
            return t
        embedded = dict(t.files)
        shown: dict[str, None] = {}
        missing: dict[str, None] = {}

        def link(m: re.Match[str]) -> str:
            name = unquote(html.unescape(m[1]))
            data = embedded.get(name)
            if data is None:
                missing.setdefault(name, None)
                return m[0]
            shown.setdefault(name, None)
            return files.link(name, data)

        text = _REF.sub(link, t.text)
        for name in missing:
            self.warn(f"the text shows file {name!r}, which the area does not hold (or which "
                      "could not be read); the link is kept (a broken image)", line=q.line,
                      field=t.area, item=q.label)
        for name in embedded:
            if name not in shown:
                self.warn(f"embedded file {name!r} is not shown by the text; not imported",
                          line=q.line, field=t.area, item=q.label)
        return replace(t, text=text)

    def _tags(self, raw: list[str]) -> tuple[str, ...]:
        out: dict[str, None] = {}
        for tag in raw:
            tag = php_trim(tag)
            if not tag:
                continue
            clean = clean_tag(tag)
            if clean != tag:
                self._tag_notes[tag] = clean
            if clean:
                out.setdefault(clean, None)
        return tuple(out)



#: Moodle's answer numbering styles (qtype_multichoice).
_NUMBERING: dict[str, Numbering] = {n: n for n in get_args(Numbering)}
#: Moodle's essay response formats the model holds.
_RESPONSE_FORMATS: dict[str, ResponseFormat] = {
    "editor": "editor", "editorfilepicker": "editor", "plain": "plain",
    "monospaced": "monospaced"}
#: A number as PHP's is_numeric reads it (after trimming), without hexadecimal: what Moodle's
#: readers accept as a numerical answer.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _number(text: str, what: str, code: str) -> float:
    """A numerical answer's number, or Skip naming it."""
    raw = php_trim(text)
    if not _NUMBER.fullmatch(raw) or abs(value := float(raw)) == float("inf"):
        extra = (" (Moodle 4.5 would import it as 'any answer is right')"
                 if code == "gift" and "tolerance" not in what else "")
        raise Skip(f"{what}: {raw!r} is not a number{extra}")
    return value


def _unique(words: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(w for w in (php_trim(w) for w in words) if w))


def _plain_markdown(text: str, code: str) -> str:
    """A matching response in language `code` as Markdown of the text Moodle's menu shows:
    qtype_match_renderer::format_choices passes it through format_string, which reads it as
    HTML (tags stripped, entities decoded; `&lt;` shows as `<`), with or without multilang
    spans."""
    return title_markdown(plain_name(select(text, code)))


#: The id of the gap of a question in GIFT's missing-word form.
MISSING_WORD_GAP = "g1"


def one_gap_cloze(item: Item) -> Cloze | None:
    """The cloze item of one gap (`MISSING_WORD_GAP`, named in the stem) that asks what `item`
    asks, or None when a gap cannot hold it (units, weights of a multiple-response item, a
    type without gaps)."""
    gid = MISSING_WORD_GAP

    def text(gaps: Callable[[str], dict[str, object]]) -> dict[str, object]:
        # a title that is only the name Moodle makes from the cloze's stem (its gap a blank)
        # is no title of its own
        return {la: {"title": None if c.title == moodle_derived_name(blank_gaps(c.stem))
                     else c.title, "stem": c.stem, "explanation": c.explanation,
                     "gaps": {gid: gaps(la)}} for la, c in item.text.items()}

    base = {"id": item.id, "topic": item.topic, "points": item.points, "tags": item.tags,
            "lms": item.lms, "type": "cloze"}
    gap: dict[str, object]
    match item:
        case SingleChoice():
            gap = {"id": gid, "type": "choice", "options": list(item.option_ids),
                   "key": item.key[0], "weights": item.weights, "shuffle": item.shuffle}
            content = text(lambda la: {"options": item.text[la].options,
                                       "feedback": item.text[la].feedback})
        case MultipleResponse() if item.weights is None:
            gap = {"id": gid, "type": "multiple_response", "options": list(item.option_ids),
                   "key": list(item.key), "shuffle": item.shuffle}
            content = text(lambda la: {"options": item.text[la].options,
                                       "feedback": item.text[la].feedback})
        case ShortAnswer():
            gap = {"id": gid, "type": "short_answer", "answers": list(item.answers),
                   "case_sensitive": item.case_sensitive}
            content = text(lambda la: {"answers": item.text[la].answers,
                                       "feedback": item.text[la].feedback})
        case Numerical() if not item.units:
            gap = {"id": gid, "type": "numerical", "answers": list(item.answers)}
            content = text(lambda la: {"feedback": item.text[la].feedback})
        case _:
            return None
    try:
        return Cloze.model_validate({**base, "gaps": [gap], "text": content})
    except ValidationError:
        return None


def _cloze_of(gaps: list[dict[str, object]], **fields: object) -> Item:
    return Cloze.model_validate({"type": "cloze", "gaps": gaps, **fields})
