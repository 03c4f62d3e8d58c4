"""The item model: one class per item type, all sharing the metadata of `ItemBase`; `Item` is
their union, told apart by the `type` field.

Imports only pydantic and the standard library. Text fields hold Markdown *source*; nothing here
is escaped or rendered: that is each exporter's job.

Adding an item type: one class here (its own fields and content, `extra="forbid"`, and the
answers to the questions every type answers: `scored`, the text fields its content adds), one
entry in `ITEM_CLASSES` and in `Item` (and in `ScoredItem` if it earns points); mypy then names
every `match` on items that lacks a case for it (each ends in `assert_never`): only the code that
writes, prints or grades an item of the type. See docs/architecture.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, Field, StringConstraints, model_validator

if TYPE_CHECKING:  # typing.TypeIs from Python 3.13; only mypy reads it here
    from typing_extensions import TypeIs

from dpassess.model.common import (
    Bloom,
    Difficulty,
    ItemId,
    ItemValueError,
    LangCode,
    Loc,
    OptionId,
    RuleCode,
    Status,
    Strict,
    Tag,
    Text,
    TopicPath,
)


class ItemType(StrEnum):
    """The `type` of an item file; each names one model class (`ITEM_CLASSES`)."""

    single_choice = "single_choice"
    multiple_response = "multiple_response"
    true_false = "true_false"
    numerical = "numerical"
    short_answer = "short_answer"
    matching = "matching"
    essay = "essay"
    ordering = "ordering"
    cloze = "cloze"
    description = "description"


# --- what every item has -----------------------------------------------------------------------


class Source(Strict):
    """Where the item came from, with its original wording kept verbatim."""

    origin: str
    lang: LangCode | None = None
    text: Text


class Suppression(Strict):
    """A lint rule switched off for this item, or only for one field of it, or only for one
    glossary term; the reason is required."""

    rule: RuleCode
    field: Annotated[str, StringConstraints(min_length=1, max_length=200,
                                            pattern=r"^[A-Za-z0-9_.\[\]-]+$")] | None = Field(
        None, description="Only findings in this field, written as findings name it "
        "(text.en.stem, text.id.options.b)."
    )
    term: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = Field(
        None, description="Only findings about this glossary term."
    )
    reason: Annotated[str, StringConstraints(min_length=3, strip_whitespace=True)]

    def covers(self, rule: str, field: str, term: str | None = None) -> bool:
        """Whether this suppression silences a finding of `rule` in `field` (about `term`)."""
        return (rule == self.rule and (self.field is None or self.field == field)
                and (self.term is None or self.term == term))


class MoodleSettings(Strict):
    """How Moodle delivers the question (kept through import and export)."""

    penalty: Annotated[float, Field(ge=0, le=1)] | None = Field(
        None, description="Fraction of the mark lost per wrong try in interactive mode "
        "(Moodle's default: 1/3; 1 for true/false)."
    )
    answer_numbering: Literal["abc", "ABCD", "123", "iii", "IIII", "none"] | None = Field(
        None, description="How Moodle numbers the options (multiple choice only)."
    )


class LmsSettings(Strict):
    """Settings one LMS needs that the item itself does not say."""

    moodle: MoodleSettings | None = None


class ContentBase(Strict):
    """What an item of any type says in one language (Markdown source)."""

    title: Text | None = Field(None, description="Short name shown in LMS question lists.")
    stem: Text = Field(description="The question (Markdown).")
    explanation: Text | None = Field(None, description="General feedback shown after answering.")

    def own_texts(self) -> Iterator[tuple[Loc, str, bool]]:
        """Each text field the item type adds to the title, the stem and the explanation, in
        file order: (its path under `text.<lang>`, its text, whether it is Markdown). A content
        class with fields of its own says them here (a test checks that each does)."""
        return iter(())


class ItemBase(Strict):
    """The metadata every item has, whatever its type. See docs/authoring.md for the file format.

    Field order here and in the subclasses is the order of an item file (`bank.write`)."""

    type: ItemType
    schema_version: Literal[1] = Field(
        1, alias="schema", description="Item file format version."
    )
    id: ItemId
    topic: TopicPath
    difficulty: Difficulty | None = None
    p_value: Annotated[float, Field(ge=0, le=1)] | None = Field(
        None, description="A priori proportion correct, if known."
    )
    bloom: Bloom | None = None
    points: Annotated[float, Field(gt=0, le=1000)] = 1.0
    tags: tuple[Tag, ...] = ()
    status: Status = Status.draft
    enemies: tuple[ItemId, ...] = Field((), description="Items that must not share a form.")
    symbols: tuple[str, ...] = Field(
        (), description="Symbols that must appear unchanged in every language (B, W, ...)."
    )
    stimulus: ItemId | None = Field(
        None, description="The id of the shared stimulus (a text, table or figure) this item "
        "is read with; the items of one stimulus form a set that forms keep together."
    )
    text: Mapping[LangCode, ContentBase] = Field(description="Text by language code.")
    source: Source | None = None
    lms: LmsSettings | None = Field(None, description="Delivery settings of one LMS.")
    suppress: tuple[Suppression, ...] = Field((), description="Lint rules off for this item.")

    # --- what each type answers (a test checks that every type says `scored` itself) ----------

    #: Whether the item earns points (else it is text only, never graded).
    scored: ClassVar[bool]

    @property
    def choice_ids(self) -> tuple[str, ...]:
        """The ids of the options a response chooses among, in authoring order (empty for the
        types without options to choose: answer sheets, distractor analysis)."""
        return ()

    @property
    def takes_one(self) -> bool:
        """Whether exactly one option is right, so that several marks are no answer."""
        return False

    def is_distractor(self, option_id: str) -> bool:
        """Whether the option earns nothing when chosen alone (a wrong option)."""
        return False

    def option_text(self, lang: str, option_id: str) -> str:
        """The Markdown text in `lang` of one of `choice_ids`."""
        raise ValueError(f"item {self.id!r} ({self.type.value}) has no options to choose")

    def ids(self) -> Iterator[tuple[Loc, str]]:
        """Each id the item names besides its own (options, answers, pairs, gaps), with its
        path in the item file, in file order."""
        return iter(())

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(self.text)

    def title(self, lang: str) -> str:
        """The title in `lang`, else the first line of the stem, shortened."""
        content = self.text[lang]
        if content.title:
            return content.title
        first = content.stem.strip().splitlines()[0] if content.stem.strip() else self.id
        return first if len(first) <= 80 else first[:77].rstrip() + "..."

    @model_validator(mode="after")
    def _check(self) -> ItemBase:
        problems = list(self._problems())
        if problems:
            raise ItemValueError.many(problems)
        return self

    def _problems(self) -> Iterator[tuple[Loc, str]]:
        if not self.text:
            yield ("text",), "an item needs text in at least one language"


# --- choice items: options with stable ids, a key naming some of them ----------------------------


class Option(Strict):
    """The language-neutral part of an option: its stable id and whether shuffling may move it."""

    id: OptionId
    locked: bool = Field(False, description="Keep this option at its position when shuffling.")


class Content(ContentBase):
    """Everything a choice item says in one language (Markdown source)."""

    options: dict[OptionId, Text] = Field(
        default_factory=dict,
        description="Option text by option id (Markdown); required for every option, except in "
        "true_false items, whose options default to built-in words in id and en.",
    )
    feedback: dict[OptionId, Text] = Field(
        default_factory=dict, description="Why this option is right or wrong, by option id."
    )

    def own_texts(self) -> Iterator[tuple[Loc, str, bool]]:
        for oid, text in self.options.items():
            yield ("options", oid), text, True
        for oid, text in self.feedback.items():
            yield ("feedback", oid), text, True


# Fields of a choice item, in file order after the metadata's `symbols`.
class ChoiceBase(ItemBase):
    """Options in authoring order and the key naming the correct ones (by option id)."""

    shuffle: bool = True
    options: tuple[Option, ...] = Field(description="Options in authoring order.")
    key: tuple[OptionId, ...] = Field(description="Id(s) of the correct option(s).")
    text: dict[LangCode, Content] = Field(description="Text by language code.")

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: object) -> object:
        """`key: a` for `key: [a]`, and `options: [a, b]` for `[{id: a}, {id: b}]`."""
        if not isinstance(data, dict):
            return data
        if isinstance(data.get("key"), str):
            data = {**data, "key": [data["key"]]}
        opts = data.get("options")
        if isinstance(opts, list) and any(isinstance(o, str) for o in opts):
            data = {**data, "options": [{"id": o} if isinstance(o, str) else o for o in opts]}
        return data

    # --- derived views (nothing stored twice) ---------------------------------------------

    scored: ClassVar[bool] = True

    @property
    def option_ids(self) -> tuple[str, ...]:
        return tuple(o.id for o in self.options)

    @property
    def choice_ids(self) -> tuple[str, ...]:
        return self.option_ids

    @property
    def takes_one(self) -> bool:
        return self.max_keys == 1

    def is_distractor(self, option_id: str) -> bool:
        return self.fractions()[option_id] <= 0

    def ids(self) -> Iterator[tuple[Loc, str]]:
        for i, o in enumerate(self.options):
            yield ("options", i), o.id

    def is_correct(self, option_id: str) -> bool:
        return option_id in self.key

    def fractions(self) -> dict[str, float]:
        """Fraction of the points each option earns when chosen (1.0 for a single key)."""
        return {oid: (1.0 if oid in self.key else 0.0) for oid in self.option_ids}

    def option_text(self, lang: str, option_id: str) -> str:
        """The option's text in `lang`."""
        return self.text[lang].options[option_id]

    # --- validation -----------------------------------------------------------------------

    #: Most keys an item of the type may have (None: any number).
    max_keys: ClassVar[int | None] = 1

    def _problems(self) -> Iterator[tuple[Loc, str]]:
        ids = [o.id for o in self.options]
        seen: set[str] = set()
        for i, oid in enumerate(ids):
            if oid in seen:
                yield ("options", i, "id"), f"duplicate option id {oid!r}"
            seen.add(oid)
        if len(ids) < 2:
            yield ("options",), "an item needs at least two options"
        yield from self._option_problems(ids)
        if not self.key:
            yield ("key",), "the key names no option"
        for i, k in enumerate(self.key):
            if k not in seen:
                yield ("key", i), f"key {k!r} names no option (options: {', '.join(ids)})"
        if len(set(self.key)) != len(self.key):
            yield ("key",), "the key names an option twice"
        if self.max_keys is not None and len(self.key) > self.max_keys:
            yield ("key",), f"a {self.type.value} item has exactly one key"
        yield from self._key_problems(seen)
        yield from super()._problems()
        for lang, content in self.text.items():
            for oid in content.options:
                if oid not in seen:
                    yield ("text", lang, "options", oid), f"text for unknown option {oid!r}"
            for oid in content.feedback:
                if oid not in seen:
                    yield ("text", lang, "feedback", oid), f"feedback for unknown option {oid!r}"
            missing = [oid for oid in ids if oid not in content.options]
            yield from self._text_problems(lang, missing)

    def _option_problems(self, ids: list[str]) -> Iterator[tuple[Loc, str]]:
        return iter(())

    def _key_problems(self, option_ids: set[str]) -> Iterator[tuple[Loc, str]]:
        return iter(())

    def _text_problems(self, lang: str, missing: list[str]) -> Iterator[tuple[Loc, str]]:
        if missing:
            yield ("text", lang, "options"), f"no text for option(s) {', '.join(missing)}"


class SingleChoice(ChoiceBase):
    """One option to choose; the key is the correct one. Other options may earn part of the
    points, or all of them (a second right answer), by `weights`."""

    type: Literal[ItemType.single_choice] = ItemType.single_choice
    weights: dict[OptionId, Annotated[float, Field(ge=0, le=1)]] | None = Field(
        None,
        description="Fraction of the points an option other than the key earns when chosen "
        "(default: 0; the key earns all of them).",
    )

    def fractions(self) -> dict[str, float]:
        weights = self.weights or {}
        return {oid: (1.0 if oid in self.key else weights.get(oid, 0.0))
                for oid in self.option_ids}

    def _key_problems(self, option_ids: set[str]) -> Iterator[tuple[Loc, str]]:
        for oid, weight in (self.weights or {}).items():
            if oid not in option_ids:
                yield ("weights", oid), f"weight for unknown option {oid!r}"
            elif oid in self.key and weight != 1:
                yield (("weights", oid),
                       f"the key {oid!r} earns all the points; its weight cannot be {weight:g}")


class MultipleResponse(ChoiceBase):
    """Any number of correct options; each option earns a fraction of the points."""

    type: Literal[ItemType.multiple_response]
    weights: dict[OptionId, Annotated[float, Field(ge=-1, le=1)]] | None = Field(
        None,
        description="Fraction of the points per option (default: correct options share +1, "
        "wrong options share -1, total floored at 0).",
    )

    max_keys: ClassVar[int | None] = None

    def fractions(self) -> dict[str, float]:
        if self.weights is not None:
            return {oid: self.weights.get(oid, 0.0) for oid in self.option_ids}
        n_right = len(self.key)
        n_wrong = len(self.options) - n_right
        return {
            oid: (1.0 / n_right if oid in self.key else (-1.0 / n_wrong if n_wrong else 0.0))
            for oid in self.option_ids
        }

    def _key_problems(self, option_ids: set[str]) -> Iterator[tuple[Loc, str]]:
        for oid in self.weights or ():
            if oid not in option_ids:
                yield ("weights", oid), f"weight for unknown option {oid!r}"


TRUE_FALSE_IDS = ("true", "false")

TRUE_FALSE_WORDS: dict[str, dict[str, str]] = {
    "id": {"true": "Benar", "false": "Salah"},
    "en": {"true": "True", "false": "False"},
}


class TrueFalse(ChoiceBase):
    """A statement that is true or false: the options are `true` and `false`, in that order."""

    type: Literal[ItemType.true_false]
    options: tuple[Option, ...] = Field(
        (Option.model_construct(id="true"), Option.model_construct(id="false")),
        description="Always [true, false].",
    )

    def option_text(self, lang: str, option_id: str) -> str:
        """The option's text in `lang`, else the language's word for true or false."""
        content = self.text[lang]
        if option_id in content.options:
            return content.options[option_id]
        return TRUE_FALSE_WORDS.get(lang, TRUE_FALSE_WORDS["en"])[option_id]

    def _option_problems(self, ids: list[str]) -> Iterator[tuple[Loc, str]]:
        if tuple(ids) != TRUE_FALSE_IDS:
            yield ("options",), "a true_false item has the options [true, false]"

    def _text_problems(self, lang: str, missing: list[str]) -> Iterator[tuple[Loc, str]]:
        if missing and lang not in TRUE_FALSE_WORDS:
            yield (("text", lang, "options"),
                   f"no built-in words for true/false in {lang!r} (only "
                   f"{', '.join(TRUE_FALSE_WORDS)}): give them, e.g. options: "
                   '{"true": ..., "false": ...} (quoted: YAML reads a bare true as a boolean)')



# --- numerical: a number within a tolerance or a range --------------------------------------------

#: Largest size of a number in a numerical answer (value, tolerance, min, max): Moodle and QTI
#: players compute value ± tolerance in double precision, which holds every integer only up to
#: 2**53 (about 9e15); 1e15 keeps that sum exact to the unit and far from overflow.
MAX_NUMBER = 1e15
#: Smallest and largest unit multiplier: Moodle stores a multiplier with 19 decimals and 19
#: digits before the point (question_numerical_units.multiplier, number(38,19)).
MIN_MULTIPLIER, MAX_MULTIPLIER = 1e-15, 1e15


def _number(value: float) -> float:
    if not -MAX_NUMBER <= value <= MAX_NUMBER:  # also refuses nan and inf
        raise ValueError(f"a number in an answer is finite and at most {MAX_NUMBER:.0e} in size (got "
                         f"{value:g}): Moodle and QTI players add and subtract tolerances in "
                         "double precision, which is exact only that far")
    return value


def _multiplier(value: float) -> float:
    if not MIN_MULTIPLIER <= value <= MAX_MULTIPLIER:  # also refuses nan and inf
        raise ValueError(f"a unit multiplier is between {MIN_MULTIPLIER:.0e} and "
                         f"{MAX_MULTIPLIER:.0e} (got {value:g}): what Moodle stores (19 digits "
                         "before the point and 19 after)")
    return value


_NUMBER_RANGE = {"minimum": -MAX_NUMBER, "maximum": MAX_NUMBER}
Finite = Annotated[float, AfterValidator(_number), Field(json_schema_extra=_NUMBER_RANGE)]


class NumericAnswer(Strict):
    """An accepted number: `value` within `tolerance` (absolute), or the range `min`..`max`; it
    earns `fraction` of the points (0 for a common wrong answer that deserves feedback). Or,
    last, `any_other`: every number no earlier answer accepts, earning nothing, for the
    feedback it gives them."""

    id: OptionId
    value: Finite | None = None
    tolerance: Annotated[float, Field(ge=0, json_schema_extra={"maximum": MAX_NUMBER}),
                         AfterValidator(_number)] = 0.0
    min: Finite | None = None
    max: Finite | None = None
    fraction: Annotated[float, Field(ge=0, le=1)] = 1.0
    any_other: bool = Field(
        False, description="Accepts every number no earlier answer accepts (last; fraction 0): "
        "its feedback is for them.")

    @model_validator(mode="before")
    @classmethod
    def _any_other_earns_nothing(cls, data: object) -> object:
        """`fraction` defaults to 0 for an `any_other` answer."""
        if isinstance(data, dict) and data.get("any_other") is True and "fraction" not in data:
            return {**data, "fraction": 0.0}
        return data

    @model_validator(mode="after")
    def _check(self) -> NumericAnswer:
        ranged = self.min is not None or self.max is not None
        if self.any_other:
            if self.value is not None or ranged or self.tolerance:
                raise ItemValueError(("any_other",), "an answer for any other number has no "
                                                     "value, tolerance or range")
            if self.fraction != 0:
                raise ItemValueError(("fraction",), "an answer for any other number earns "
                                                    "nothing (fraction: 0): it gives feedback")
            return self
        if self.value is None and not ranged:
            raise ItemValueError(("value",), "give a value (with a tolerance) or a range "
                                             "(min and max)")
        if self.value is not None and ranged:
            raise ItemValueError(("value",), "give either a value or a range (min, max), not both")
        if ranged and (self.min is None or self.max is None):
            raise ItemValueError(("min" if self.min is None else "max",),
                                 "a range needs both min and max")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ItemValueError(("min",), f"min {self.min:g} is above max {self.max:g}")
        if ranged and self.tolerance:
            raise ItemValueError(("tolerance",), "a range has no tolerance (widen min and max)")
        return self

    @property
    def bounds(self) -> tuple[float, float]:
        """The accepted interval, ends included (every number for `any_other`)."""
        if self.any_other:
            return (-math.inf, math.inf)
        if self.value is not None:
            return (self.value - self.tolerance, self.value + self.tolerance)
        assert self.min is not None and self.max is not None
        return (self.min, self.max)

    def accepts(self, number: float) -> bool:
        lo, hi = self.bounds
        return lo <= number <= hi


class Unit(Strict):
    """A unit the answer may be given in: the number is divided by `multiplier` first (the first
    unit, the one the answers are written in, has multiplier 1)."""

    unit: Annotated[str, StringConstraints(min_length=1, max_length=50, strip_whitespace=True)]
    multiplier: Annotated[float, AfterValidator(_multiplier), Field(json_schema_extra={
        "minimum": MIN_MULTIPLIER, "maximum": MAX_MULTIPLIER})] = 1.0


class AnswerContent(ContentBase):
    """What an item with typed answers says in one language: feedback by answer id."""

    feedback: dict[OptionId, Text] = Field(
        default_factory=dict, description="Feedback shown for each answer, by answer id."
    )

    def own_texts(self) -> Iterator[tuple[Loc, str, bool]]:
        for aid, text in self.feedback.items():
            yield ("feedback", aid), text, True


def _answer_problems(feedback: Mapping[str, Mapping[str, str]], ids: list[str],
                     fractions: list[float]) -> Iterator[tuple[Loc, str]]:
    """Problems of a list of answers shared by the typed-answer types (`feedback`: each
    language's feedback by answer id)."""
    seen: set[str] = set()
    for i, aid in enumerate(ids):
        if aid in seen:
            yield ("answers", i, "id"), f"duplicate answer id {aid!r}"
        seen.add(aid)
    if not ids:
        yield ("answers",), "an item needs at least one accepted answer"
    elif not any(f == 1 for f in fractions):
        yield ("answers",), ("no answer earns full marks (fraction: 1): nobody could get "
                             "this item fully right")
    for lang, by_answer in feedback.items():
        for aid in by_answer:
            if aid not in seen:
                yield ("text", lang, "feedback", aid), f"feedback for unknown answer {aid!r}"


class Numerical(ItemBase):
    """The answer is a number; optional units, each with a multiplier."""

    type: Literal[ItemType.numerical]
    answers: tuple[NumericAnswer, ...] = Field(description="Accepted numbers, best first.")
    units: tuple[Unit, ...] = Field((), description="Units the answer may carry; the first is "
                                                     "the one the answers are written in.")
    unit_penalty: Annotated[float, Field(ge=0, le=1)] | None = Field(
        None, description="Fraction of the points lost for a missing or wrong unit (none: "
        "units are optional and not graded). When the first unit is a number (1, for a "
        "ratio), a bare number is in that unit and loses nothing."
    )
    text: dict[LangCode, AnswerContent] = Field(description="Text by language code.")

    scored: ClassVar[bool] = True

    def ids(self) -> Iterator[tuple[Loc, str]]:
        for i, a in enumerate(self.answers):
            yield ("answers", i, "id"), a.id

    @property
    def bare_number_unit(self) -> bool:
        """Whether a number without a unit is in the first unit: that unit is itself a number
        (`1`: a ratio or a count, with no unit to type)."""
        if not self.units:
            return False
        try:
            float(self.units[0].unit)
        except ValueError:
            return False
        return True

    def fraction_for(self, number: float) -> float:
        """The fraction of the points `number` earns (the first answer that accepts it)."""
        return next((a.fraction for a in self.answers if a.accepts(number)), 0.0)

    def _problems(self) -> Iterator[tuple[Loc, str]]:
        yield from _answer_problems({la: c.feedback for la, c in self.text.items()},
                                    [a.id for a in self.answers], [a.fraction for a in self.answers])
        for i, a in enumerate(self.answers[:-1]):
            if a.any_other:
                yield (("answers", i, "any_other"),
                       "the answer for any other number comes last: no answer after it is "
                       "ever reached")
        seen: dict[tuple[float, float], int] = {}
        for i, a in enumerate(self.answers):
            if a.bounds in seen:
                yield (("answers", i),
                       f"the same answer as answers[{seen[a.bounds]}] ({_interval(a.bounds)})")
            seen.setdefault(a.bounds, i)
        names: set[str] = set()
        for i, u in enumerate(self.units):
            if u.unit in names:
                yield ("units", i, "unit"), f"duplicate unit {u.unit!r}"
            names.add(u.unit)
        if self.units and self.units[0].multiplier != 1:
            yield (("units", 0, "multiplier"),
                   "the first unit is the one the answers are written in: its multiplier is 1")
        if self.unit_penalty is not None and not self.units:
            yield ("unit_penalty",), "a unit penalty needs units"
        yield from super()._problems()


def _interval(bounds: tuple[float, float]) -> str:
    lo, hi = bounds
    return f"{lo:g}" if lo == hi else f"{lo:g}..{hi:g}"


# --- short answer: typed words --------------------------------------------------------------------


class TextAnswer(Strict):
    """An accepted typed answer (its wording is per language) and the points it earns."""

    id: OptionId
    fraction: Annotated[float, Field(ge=0, le=1)] = 1.0


AcceptedText = Annotated[str, StringConstraints(min_length=1, max_length=1000)]


class ShortAnswerContent(AnswerContent):
    """A short-answer item in one language: the accepted wordings of each answer."""

    answers: dict[OptionId, tuple[AcceptedText, ...]] = Field(
        description="Accepted wordings by answer id (`*` matches any characters)."
    )

    def own_texts(self) -> Iterator[tuple[Loc, str, bool]]:
        for aid, wordings in self.answers.items():  # typed by students: plain text
            for k, wording in enumerate(wordings):
                yield ("answers", aid, k), wording, False
        yield from super().own_texts()


class ShortAnswer(ItemBase):
    """The answer is a word or phrase, accepted in the wordings each language lists."""

    type: Literal[ItemType.short_answer]
    answers: tuple[TextAnswer, ...] = Field(description="Answers, best first.")
    case_sensitive: bool = False
    text: dict[LangCode, ShortAnswerContent] = Field(description="Text by language code.")

    scored: ClassVar[bool] = True

    def ids(self) -> Iterator[tuple[Loc, str]]:
        for i, a in enumerate(self.answers):
            yield ("answers", i, "id"), a.id

    def _problems(self) -> Iterator[tuple[Loc, str]]:
        ids = [a.id for a in self.answers]
        known = set(ids)
        yield from _answer_problems({la: c.feedback for la, c in self.text.items()}, ids,
                                    [a.fraction for a in self.answers])
        for lang, content in self.text.items():
            missing = [aid for aid in ids if not content.answers.get(aid)]
            if missing:
                yield (("text", lang, "answers"),
                       f"no accepted wording in {lang!r} for answer(s) {', '.join(missing)}")
            seen: dict[str, str] = {}
            for aid, wordings in content.answers.items():
                if aid not in known:
                    yield ("text", lang, "answers", aid), f"wordings for unknown answer {aid!r}"
                for k, wording in enumerate(wordings):
                    norm = " ".join(wording.split())
                    norm = norm if self.case_sensitive else norm.casefold()
                    if norm in seen:
                        yield (("text", lang, "answers", aid, k),
                               f"{wording!r} is accepted twice (also under {seen[norm]!r})")
                    seen.setdefault(norm, aid)
        yield from super()._problems()


# --- matching: premises to responses --------------------------------------------------------------


class MatchingContent(ContentBase):
    """A matching item in one language: each premise, each response."""

    premises: dict[OptionId, Text] = Field(description="The premise of each pair, by pair id.")
    responses: dict[OptionId, Text] = Field(
        description="The response of each pair (by pair id) and of each extra distractor."
    )

    def own_texts(self) -> Iterator[tuple[Loc, str, bool]]:
        for pid, text in self.premises.items():
            yield ("premises", pid), text, True
        for rid, text in self.responses.items():
            yield ("responses", rid), text, True


class Matching(ItemBase):
    """Premises to match with responses; each pair (one id for both sides) earns an equal share."""

    type: Literal[ItemType.matching]
    pairs: tuple[OptionId, ...] = Field(description="Pair ids in authoring order.")
    distractors: tuple[OptionId, ...] = Field(
        (), description="Responses that match no premise."
    )
    shuffle: bool = Field(True, description="Let the LMS shuffle the responses.")
    text: dict[LangCode, MatchingContent] = Field(description="Text by language code.")

    scored: ClassVar[bool] = True

    def ids(self) -> Iterator[tuple[Loc, str]]:
        for i, p in enumerate(self.pairs):
            yield ("pairs", i), p
        for i, p in enumerate(self.distractors):
            yield ("distractors", i), p

    @property
    def response_ids(self) -> tuple[str, ...]:
        return (*self.pairs, *self.distractors)

    def _problems(self) -> Iterator[tuple[Loc, str]]:
        seen: set[str] = set()
        for field, ids in (("pairs", self.pairs), ("distractors", self.distractors)):
            for i, pid in enumerate(ids):
                if pid in seen:
                    yield (field, i), f"duplicate id {pid!r}"
                seen.add(pid)
        if len(self.pairs) < 2:
            yield ("pairs",), "a matching item needs at least two pairs"
        yield from super()._problems()
        for lang, content in self.text.items():
            for where, wanted, have in (("premises", self.pairs, content.premises),
                                        ("responses", self.response_ids, content.responses)):
                missing = [pid for pid in wanted if pid not in have]
                if missing:
                    yield (("text", lang, where),
                           f"no text for {where[:-1]}(s) {', '.join(missing)}")
                known = set(wanted)  # a set: a long list of pairs stays linear
                for pid in have:
                    if pid not in known:
                        yield (("text", lang, where, pid),
                               f"text for unknown {where[:-1]} {pid!r}")


# --- essay: a written response, graded by a person -----------------------------------------------


class EssayContent(ContentBase):
    """An essay item in one language: the grader's guide and the response template."""

    grader_info: Text | None = Field(
        None, description="Guidance for graders: a rubric, a model answer (never shown to "
        "students)."
    )
    response_template: Text | None = Field(
        None, description="Text the response box starts with."
    )

    def own_texts(self) -> Iterator[tuple[Loc, str, bool]]:
        if self.grader_info is not None:
            yield ("grader_info",), self.grader_info, True
        if self.response_template is not None:
            yield ("response_template",), self.response_template, True


class Essay(ItemBase):
    """A written response; not scored automatically."""

    type: Literal[ItemType.essay]
    response_format: Literal["editor", "plain", "monospaced"] = Field(
        "editor", description="A rich-text editor, or plain text (monospaced for code)."
    )
    response_required: bool = True
    lines: Annotated[int, Field(ge=1, le=100)] = Field(
        15, description="Height of the response box, in lines."
    )
    min_words: Annotated[int, Field(ge=1)] | None = None
    max_words: Annotated[int, Field(ge=1)] | None = None
    text: dict[LangCode, EssayContent] = Field(description="Text by language code.")

    #: Graded by a person: it earns points, none of them automatically.
    scored: ClassVar[bool] = True

    def _problems(self) -> Iterator[tuple[Loc, str]]:
        if (self.min_words is not None and self.max_words is not None
                and self.min_words > self.max_words):
            yield ("min_words",), f"min_words {self.min_words} is above max_words {self.max_words}"
        yield from super()._problems()


# --- ordering: put options in order --------------------------------------------------------------

#: How a partly right order is graded (Moodle's qtype_ordering grading types).
OrderingGrading = Literal[
    "all_or_nothing", "absolute_position", "relative_next_exclude_last",
    "relative_next_include_last", "relative_one_previous_and_next",
    "relative_all_previous_and_next", "longest_ordered_subset", "longest_contiguous_subset",
    "relative_to_correct",
]


class OrderingContent(ContentBase):
    """An ordering item in one language: the text of each option."""

    options: dict[OptionId, Text] = Field(description="Option text by option id.")

    def own_texts(self) -> Iterator[tuple[Loc, str, bool]]:
        for oid, text in self.options.items():
            yield ("options", oid), text, True


class Ordering(ItemBase):
    """Options to put in order; `options` lists them in the right order (always shuffled)."""

    type: Literal[ItemType.ordering]
    options: tuple[OptionId, ...] = Field(description="Option ids in the right order.")
    grading: OrderingGrading = Field(
        "all_or_nothing", description="How a partly right order earns points."
    )
    text: dict[LangCode, OrderingContent] = Field(description="Text by language code.")

    scored: ClassVar[bool] = True

    def ids(self) -> Iterator[tuple[Loc, str]]:
        for i, o in enumerate(self.options):
            yield ("options", i), o

    def _problems(self) -> Iterator[tuple[Loc, str]]:
        seen: set[str] = set()
        for i, oid in enumerate(self.options):
            if oid in seen:
                yield ("options", i), f"duplicate option id {oid!r}"
            seen.add(oid)
        if len(self.options) < 2:
            yield ("options",), "an ordering item needs at least two options"
        yield from super()._problems()
        for lang, content in self.text.items():
            missing = [oid for oid in self.options if oid not in content.options]
            if missing:
                yield ("text", lang, "options"), f"no text for option(s) {', '.join(missing)}"
            for oid in content.options:
                if oid not in seen:
                    yield ("text", lang, "options", oid), f"text for unknown option {oid!r}"


# --- cloze: a text with numbered gaps, each graded on its own ------------------------------------

#: A gap's place in the stem: `[[` its id `]]` (letters, digits, `_` and `-`).
GAP_REF = r"\[\[([A-Za-z][A-Za-z0-9_-]{0,39})\]\]"


class GapBase(Strict):
    """What every gap has: its stable id (named in the stem as `[[id]]`) and its points."""

    id: OptionId
    points: Annotated[float, Field(gt=0, le=1000)] = Field(
        1.0, description="The gap's weight: the item's points are shared among its gaps in "
        "proportion to these."
    )


class ShortAnswerGap(GapBase):
    """A typed word or phrase; the wordings of each answer are per language (`text.<lang>.gaps`)."""

    type: Literal["short_answer"]
    answers: tuple[TextAnswer, ...] = Field(description="Answers, best first.")
    case_sensitive: bool = False


class NumericalGap(GapBase):
    """A typed number: a value within a tolerance, or a range."""

    type: Literal["numerical"]
    answers: tuple[NumericAnswer, ...] = Field(description="Accepted numbers, best first.")


class ChoiceGap(GapBase):
    """One option to choose, shown as a drop-down (the default) or as buttons."""

    type: Literal["choice"]
    display: Literal["dropdown", "vertical", "horizontal"] = "dropdown"
    options: tuple[OptionId, ...] = Field(description="Option ids in authoring order.")
    key: OptionId = Field(description="The id of the right option.")
    weights: dict[OptionId, Annotated[float, Field(ge=0, le=1)]] | None = Field(
        None, description="Fraction of the gap's points another option earns (default: 0)."
    )
    shuffle: bool = False

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: object) -> object:
        """`options: [{id: a}]` as well as `options: [a]`."""
        if isinstance(data, dict) and isinstance(data.get("options"), list):
            data = {**data, "options": [o.get("id") if isinstance(o, dict) else o
                                        for o in data["options"]]}
        return data

    def fractions(self) -> dict[str, float]:
        weights = self.weights or {}
        return {o: (1.0 if o == self.key else weights.get(o, 0.0)) for o in self.options}


class MultipleResponseGap(GapBase):
    """Any number of right options (checkboxes); right ones share +1, wrong ones -1."""

    type: Literal["multiple_response"]
    display: Literal["vertical", "horizontal"] = "vertical"
    options: tuple[OptionId, ...] = Field(description="Option ids in authoring order.")
    key: tuple[OptionId, ...] = Field(description="Ids of the right options.")
    weights: dict[OptionId, Annotated[float, Field(ge=-1, le=1)]] | None = Field(
        None, description="Fraction of the gap's points per option (default: right options "
        "share +1, wrong ones -1, the total kept between 0 and 1)."
    )
    shuffle: bool = False

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: object) -> object:
        if not isinstance(data, dict):
            return data
        if isinstance(data.get("key"), str):
            data = {**data, "key": [data["key"]]}
        if isinstance(data.get("options"), list):
            data = {**data, "options": [o.get("id") if isinstance(o, dict) else o
                                        for o in data["options"]]}
        return data

    def fractions(self) -> dict[str, float]:
        if self.weights is not None:
            return {o: self.weights.get(o, 0.0) for o in self.options}
        n_right = len(self.key)
        n_wrong = len(self.options) - n_right
        return {o: (1.0 / n_right if o in self.key else (-1.0 / n_wrong if n_wrong else 0.0))
                for o in self.options}


Gap = Annotated[ShortAnswerGap | NumericalGap | ChoiceGap | MultipleResponseGap,
                Field(discriminator="type")]


class GapContent(Strict):
    """What a gap says in one language: wordings (short answer), option text (choice),
    feedback by answer or option id."""

    answers: dict[OptionId, tuple[AcceptedText, ...]] = Field(
        default_factory=dict,
        description="Short-answer gaps: accepted wordings by answer id (`*` matches any "
        "characters).",
    )
    options: dict[OptionId, Text] = Field(
        default_factory=dict, description="Choice gaps: option text by option id."
    )
    feedback: dict[OptionId, Text] = Field(
        default_factory=dict, description="Feedback by answer or option id."
    )


class ClozeContent(ContentBase):
    """A cloze item in one language: the stem names each gap as `[[id]]`; `gaps` holds what
    each gap says in this language."""

    gaps: dict[OptionId, GapContent] = Field(
        default_factory=dict, description="What each gap says in this language, by gap id."
    )

    def own_texts(self) -> Iterator[tuple[Loc, str, bool]]:
        for gid, g in self.gaps.items():
            for aid, wordings in g.answers.items():  # typed by students: plain text
                for k, wording in enumerate(wordings):
                    yield ("gaps", gid, "answers", aid, k), wording, False
            for oid, text in g.options.items():
                yield ("gaps", gid, "options", oid), text, True
            for fid, text in g.feedback.items():
                yield ("gaps", gid, "feedback", fid), text, True


def gap_refs(stem: str) -> list[str]:
    """The gap ids the stem names, in order (`[[g1]]`)."""
    return re.findall(GAP_REF, stem)


class Cloze(ItemBase):
    """A text with gaps (embedded answers); each gap is graded on its own and the item's score is
    the sum of the gaps'. The stem of every language names every gap once, as `[[id]]`."""

    type: Literal[ItemType.cloze]
    gaps: tuple[Gap, ...] = Field(description="The gaps, in the order the stem names them.")
    text: dict[LangCode, ClozeContent] = Field(description="Text by language code.")

    scored: ClassVar[bool] = True

    def ids(self) -> Iterator[tuple[Loc, str]]:
        for i, g in enumerate(self.gaps):
            yield ("gaps", i, "id"), g.id
            if isinstance(g, ChoiceGap | MultipleResponseGap):
                for k, o in enumerate(g.options):
                    yield ("gaps", i, "options", k), o
            else:
                answers: tuple[TextAnswer | NumericAnswer, ...] = g.answers
                for k, a in enumerate(answers):
                    yield ("gaps", i, "answers", k, "id"), a.id

    def gap(self, gap_id: str) -> ShortAnswerGap | NumericalGap | ChoiceGap | MultipleResponseGap:
        return next(g for g in self.gaps if g.id == gap_id)

    def gap_share(self, gap_id: str) -> float:
        """The part of the item's points the gap carries (its points over all the gaps')."""
        total = sum(g.points for g in self.gaps)
        return self.gap(gap_id).points / total

    def _problems(self) -> Iterator[tuple[Loc, str]]:
        ids = [g.id for g in self.gaps]
        seen: set[str] = set()
        for i, gid in enumerate(ids):
            if gid in seen:
                yield ("gaps", i, "id"), f"duplicate gap id {gid!r}"
            seen.add(gid)
        if not ids:
            yield ("gaps",), "a cloze item needs at least one gap"
        for i, gap in enumerate(self.gaps):
            yield from _gap_problems(i, gap)
        yield from super()._problems()
        for lang, content in self.text.items():
            refs = gap_refs(content.stem)
            if refs != ids:
                yield (("text", lang, "stem"),
                       f"the stem names the gaps {', '.join(refs) or '(none)'}; it must name each "
                       f"gap once, in order: {', '.join(ids)} (as [[{ids[0] if ids else 'g1'}]])")
            for gid in content.gaps:
                if gid not in seen:
                    yield ("text", lang, "gaps", gid), f"text for unknown gap {gid!r}"
            for gap in self.gaps:
                yield from _gap_text_problems(lang, gap, content.gaps.get(gap.id))


def _gap_problems(i: int, gap: ShortAnswerGap | NumericalGap | ChoiceGap | MultipleResponseGap,
                  ) -> Iterator[tuple[Loc, str]]:
    match gap:
        case ShortAnswerGap() | NumericalGap():
            aids = [a.id for a in gap.answers]
            for loc, msg in _answer_problems({}, aids, [a.fraction for a in gap.answers]):
                yield ("gaps", i, *loc), msg
        case ChoiceGap() | MultipleResponseGap():
            if len(set(gap.options)) != len(gap.options):
                yield ("gaps", i, "options"), "an option id is listed twice"
            keys = (gap.key,) if isinstance(gap, ChoiceGap) else gap.key
            if not keys:
                yield ("gaps", i, "key"), "the key names no option"
            for k in keys:
                if k not in gap.options:
                    yield (("gaps", i, "key"),
                           f"key {k!r} names no option (options: {', '.join(gap.options)})")
            for oid in gap.weights or ():
                if oid not in gap.options:
                    yield ("gaps", i, "weights", oid), f"weight for unknown option {oid!r}"


def _gap_text_problems(lang: str,
                       gap: ShortAnswerGap | NumericalGap | ChoiceGap | MultipleResponseGap,
                       content: GapContent | None) -> Iterator[tuple[Loc, str]]:
    where: Loc = ("text", lang, "gaps", gap.id)
    content = content or GapContent()
    match gap:
        case ShortAnswerGap():
            ids = [a.id for a in gap.answers]
            missing = [aid for aid in ids if not content.answers.get(aid)]
            if missing:
                yield ((*where, "answers"),
                       f"no accepted wording in {lang!r} for answer(s) {', '.join(missing)} "
                       f"of gap {gap.id!r}")
        case NumericalGap():
            ids = [a.id for a in gap.answers]
        case ChoiceGap() | MultipleResponseGap():
            ids = list(gap.options)
            missing = [oid for oid in ids if oid not in content.options]
            if missing:
                yield ((*where, "options"),
                       f"no text for option(s) {', '.join(missing)} of gap {gap.id!r}")
    for aid in content.answers:
        if not isinstance(gap, ShortAnswerGap) or aid not in ids:
            yield (*where, "answers", aid), f"wordings for unknown answer {aid!r}"
    for oid in content.options:
        if isinstance(gap, ShortAnswerGap | NumericalGap) or oid not in ids:
            yield (*where, "options", oid), f"text for unknown option {oid!r}"
    for fid in content.feedback:
        if fid not in ids:
            yield (*where, "feedback", fid), f"feedback for unknown answer or option {fid!r}"


# --- description: text only ----------------------------------------------------------------------


class Description(ItemBase):
    """Text only (instructions, a passage): never scored; forms keep it in its place."""

    type: Literal[ItemType.description]
    text: dict[LangCode, ContentBase] = Field(description="Text by language code.")

    scored: ClassVar[bool] = False


# --- shared stimuli ---------------------------------------------------------------------------------


class StimulusContent(Strict):
    """A stimulus in one language (Markdown: paragraphs, tables, images)."""

    title: Text | None = None
    text: Text = Field(description="The text, table or figure (Markdown).")


class Stimulus(Strict):
    """A text, table or figure that several items are read with (`stimulus: <id>` in each)."""

    type: Literal["stimulus"]
    schema_version: Literal[1] = Field(
        1, alias="schema", description="Item file format version."
    )
    id: ItemId
    topic: TopicPath | None = None
    tags: tuple[Tag, ...] = ()
    text: dict[LangCode, StimulusContent] = Field(description="Text by language code.")
    source: Source | None = None

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(self.text)

    @model_validator(mode="after")
    def _check(self) -> Stimulus:
        if not self.text:
            raise ItemValueError(("text",), "a stimulus needs text in at least one language")
        return self


# --- the union ---------------------------------------------------------------------------------

#: Every item type; `match item:` over these ends in `assert_never(item)`.
Item = Annotated[
    SingleChoice | MultipleResponse | TrueFalse | Numerical | ShortAnswer | Matching | Essay
    | Ordering | Cloze | Description,
    Field(discriminator="type"),
]

#: The choice types (options and a key), as a tuple for `isinstance`.
ChoiceItem = SingleChoice | MultipleResponse | TrueFalse

#: The types that earn points (`scored`); `match` over these, after `is_scored`, ends in
#: `assert_never`, so that a type that is never graded is named only where it is shown.
ScoredItem = (SingleChoice | MultipleResponse | TrueFalse | Numerical | ShortAnswer | Matching
              | Essay | Ordering | Cloze)


def is_scored(item: ItemBase) -> TypeIs[ScoredItem]:
    """Whether the item earns points (its type's `scored`); narrows `Item` to `ScoredItem`."""
    return item.scored


def is_choice(item: ItemBase) -> TypeIs[ChoiceItem]:
    """Whether the item has options and a key (a choice type); narrows `Item` to `ChoiceItem`."""
    return isinstance(item, ChoiceBase)

#: The class of each `type`; an item file without `type` is single_choice.
ITEM_CLASSES: dict[ItemType, type[ItemBase]] = {
    ItemType.single_choice: SingleChoice,
    ItemType.multiple_response: MultipleResponse,
    ItemType.true_false: TrueFalse,
    ItemType.numerical: Numerical,
    ItemType.short_answer: ShortAnswer,
    ItemType.matching: Matching,
    ItemType.essay: Essay,
    ItemType.ordering: Ordering,
    ItemType.cloze: Cloze,
    ItemType.description: Description,
}
DEFAULT_TYPE = ItemType.single_choice


class UnknownItemType(ValueError):
    """`type` names no item type."""

    def __init__(self, value: object) -> None:
        self.value = value
        super().__init__(
            f"{value!r} is not one of {', '.join(t.value for t in ITEM_CLASSES)}"
        )


def item_class(data: Mapping[str, Any]) -> type[ItemBase]:
    """The class that validates the raw item `data` (by its `type`; UnknownItemType if none)."""
    value = data.get("type", DEFAULT_TYPE.value)
    try:
        return ITEM_CLASSES[ItemType(value)]
    except (ValueError, TypeError):
        raise UnknownItemType(value) from None


def parse_item(data: Mapping[str, Any]) -> Item:
    """Validate raw item data (a mapping, as read from a file) into the model of its type.

    Raises UnknownItemType or pydantic's ValidationError (whose field paths are the file's)."""
    return item_class(data).model_validate(data)  # type: ignore[return-value]
