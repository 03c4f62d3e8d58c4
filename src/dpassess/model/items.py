"""The item model: one multiple-choice item, language-neutral structure plus text per language.

Imports only pydantic and the standard library. Text fields hold Markdown *source*; nothing here
is escaped or rendered: that is each exporter's job.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

SCHEMA_VERSION = 1

#: Longest text field accepted (characters). A 10 MB field is an authoring accident, not an item.
MAX_TEXT = 20_000

# An item id is a slug that is also a valid QTI identifier (xs:NCName) and Moodle idnumber (<=100).
ItemId = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$", min_length=2, max_length=64),
]
# Option ids are shared by every language; the key names them, never letters or positions.
# (Ids, language codes, topics and tags repeat in every item: one interned string each, not one
# per use, keeps a 100,000-item bank's memory down.)
OptionId = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$", max_length=32),
    AfterValidator(sys.intern),
]
# A language code as Moodle's multilang filter and xml:lang expect it: `id`, `en`, `pt-BR`.
LangCode = Annotated[
    str, StringConstraints(pattern=r"^[a-z]{2,3}(?:-[A-Z]{2})?$"), AfterValidator(sys.intern)
]
TopicPath = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*(?:/[a-z0-9]+(?:-[a-z0-9]+)*)*$"),
    AfterValidator(sys.intern),
]
Tag = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=64),
    AfterValidator(sys.intern),
]
Text = Annotated[str, StringConstraints(max_length=MAX_TEXT)]
RuleCode = Annotated[str, StringConstraints(pattern=r"^[A-Z]{1,4}[0-9]{3}$")]


class ItemType(StrEnum):
    """Item types the model holds. `numerical` and `short_answer` will join as their own models."""

    single_choice = "single_choice"
    multiple_response = "multiple_response"
    true_false = "true_false"


class Difficulty(StrEnum):
    easy = "easy"
    medium = "medium"
    hard = "hard"


class Bloom(StrEnum):
    remember = "remember"
    understand = "understand"
    apply = "apply"
    analyze = "analyze"
    evaluate = "evaluate"
    create = "create"


class Status(StrEnum):
    draft = "draft"
    reviewed = "reviewed"
    retired = "retired"


#: One shared set per distinct combination of fields set: pydantic keeps a set per model
#: instance (about 30% of a loaded item's memory otherwise). Safe because the models are frozen:
#: pydantic copies the set before changing it (`model_copy(update=...)`).
_FIELDS_SET: dict[frozenset[str], set[str]] = {}


def _shared_fields_set(fields: set[str]) -> set[str]:
    key = frozenset(fields)
    shared = _FIELDS_SET.get(key)
    if shared is None:
        shared = _FIELDS_SET[key] = set(key)
    return shared


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    def model_post_init(self, context: Any, /) -> None:
        object.__setattr__(
            self, "__pydantic_fields_set__", _shared_fields_set(self.__pydantic_fields_set__)
        )

    def __setstate__(self, state: dict[Any, Any]) -> None:  # unpickled from a worker or cache
        super().__setstate__(state)
        self.model_post_init(None)


class Option(_Strict):
    """The language-neutral part of an option: its stable id and whether shuffling may move it."""

    id: OptionId
    locked: bool = Field(False, description="Keep this option at its position when shuffling.")


class Content(_Strict):
    """Everything an item says in one language (Markdown source)."""

    title: Text | None = Field(None, description="Short name shown in LMS question lists.")
    stem: Text = Field(description="The question (Markdown).")
    options: dict[OptionId, Text] = Field(
        default_factory=dict,
        description="Option text by option id (Markdown); required for every option, except in "
        "true_false items, whose options default to built-in words in id and en.",
    )
    feedback: dict[OptionId, Text] = Field(
        default_factory=dict, description="Why this option is right or wrong, by option id."
    )
    explanation: Text | None = Field(None, description="General feedback shown after answering.")


class Source(_Strict):
    """Where the item came from, with its original wording kept verbatim."""

    origin: str
    lang: LangCode | None = None
    text: Text


class Suppression(_Strict):
    """A lint rule switched off for this item; the reason is required."""

    rule: RuleCode
    reason: Annotated[str, StringConstraints(min_length=3, strip_whitespace=True)]


TRUE_FALSE_IDS = ("true", "false")


class Item(_Strict):
    """One assessment item. See docs/authoring.md for the file format."""

    schema_version: Literal[1] = Field(
        SCHEMA_VERSION, alias="schema", description="Item file format version."
    )
    id: ItemId
    type: ItemType = ItemType.single_choice
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
    shuffle: bool = True
    options: tuple[Option, ...] = Field(description="Options in authoring order.")
    key: tuple[OptionId, ...] = Field(description="Id(s) of the correct option(s).")
    weights: dict[OptionId, Annotated[float, Field(ge=-1, le=1)]] | None = Field(
        None,
        description="multiple_response only: fraction of the points per option (default: "
        "correct options share +1, wrong options share -1, total floored at 0).",
    )
    text: dict[LangCode, Content] = Field(description="Text by language code.")
    source: Source | None = None
    suppress: tuple[Suppression, ...] = Field((), description="Lint rules off for this item.")

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: object) -> object:
        if not isinstance(data, dict):
            return data
        if isinstance(data.get("key"), str):
            data = {**data, "key": [data["key"]]}
        if data.get("type") == "true_false" and "options" not in data:
            data = {**data, "options": [{"id": i} for i in TRUE_FALSE_IDS]}
        opts = data.get("options")
        if isinstance(opts, list) and any(isinstance(o, str) for o in opts):
            data = {**data, "options": [{"id": o} if isinstance(o, str) else o for o in opts]}
        return data

    @model_validator(mode="after")
    def _check(self) -> Item:
        problems = list(_problems(self))
        if problems:
            raise ItemValueError.many(problems)
        return self

    # --- derived views (nothing stored twice) ---------------------------------------------

    @property
    def option_ids(self) -> tuple[str, ...]:
        return tuple(o.id for o in self.options)

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(self.text)

    def is_correct(self, option_id: str) -> bool:
        return option_id in self.key

    def fractions(self) -> dict[str, float]:
        """Fraction of the points each option earns when chosen (1.0 for a single key)."""
        if self.type is not ItemType.multiple_response:
            return {oid: (1.0 if oid in self.key else 0.0) for oid in self.option_ids}
        if self.weights is not None:
            return {oid: self.weights.get(oid, 0.0) for oid in self.option_ids}
        n_right = len(self.key)
        n_wrong = len(self.options) - n_right
        return {
            oid: (1.0 / n_right if oid in self.key else (-1.0 / n_wrong if n_wrong else 0.0))
            for oid in self.option_ids
        }

    def option_text(self, lang: str, option_id: str) -> str:
        """The option's text in `lang`; true/false items fall back to the language's words."""
        content = self.text[lang]
        if option_id in content.options:
            return content.options[option_id]
        return TRUE_FALSE_WORDS.get(lang, TRUE_FALSE_WORDS["en"])[option_id]

    def title(self, lang: str) -> str:
        """The title in `lang`, else the first line of the stem, shortened."""
        content = self.text[lang]
        if content.title:
            return content.title
        first = content.stem.strip().splitlines()[0] if content.stem.strip() else self.id
        return first if len(first) <= 80 else first[:77].rstrip() + "..."


TRUE_FALSE_WORDS: dict[str, dict[str, str]] = {
    "id": {"true": "Benar", "false": "Salah"},
    "en": {"true": "True", "false": "False"},
}


Loc = tuple[str | int, ...]


class ItemValueError(ValueError):
    """Semantic errors inside an item or bank file, each with the field path it concerns.

    Raised from model validators, which only see the whole model; the loader turns each
    `(loc, message)` of `problems` into a diagnostic with its position.
    """

    def __init__(self, loc: Loc, message: str) -> None:
        self.problems: list[tuple[Loc, str]] = [(loc, message)]
        super().__init__(message)

    @classmethod
    def many(cls, problems: list[tuple[Loc, str]]) -> ItemValueError:
        exc = cls(*problems[0])
        exc.problems = problems
        exc.args = ("; ".join(m for _, m in problems),)
        return exc


def _problems(item: Item):
    ids = [o.id for o in item.options]
    seen: set[str] = set()
    for i, oid in enumerate(ids):
        if oid in seen:
            yield ("options", i, "id"), f"duplicate option id {oid!r}"
        seen.add(oid)
    if len(ids) < 2:
        yield ("options",), "an item needs at least two options"
    if item.type is ItemType.true_false and tuple(ids) != TRUE_FALSE_IDS:
        yield ("options",), "a true_false item has the options [true, false]"
    if not item.key:
        yield ("key",), "the key names no option"
    for i, k in enumerate(item.key):
        if k not in seen:
            yield ("key", i), f"key {k!r} names no option (options: {', '.join(ids)})"
    if len(set(item.key)) != len(item.key):
        yield ("key",), "the key names an option twice"
    if item.type is not ItemType.multiple_response and len(item.key) > 1:
        yield ("key",), f"a {item.type.value} item has exactly one key"
    if item.weights is not None:
        if item.type is not ItemType.multiple_response:
            yield ("weights",), "weights are for multiple_response items only"
        for oid in item.weights:
            if oid not in seen:
                yield ("weights", oid), f"weight for unknown option {oid!r}"
    if not item.text:
        yield ("text",), "an item needs text in at least one language"
    for lang, content in item.text.items():
        for oid in content.options:
            if oid not in seen:
                yield ("text", lang, "options", oid), f"text for unknown option {oid!r}"
        for oid in content.feedback:
            if oid not in seen:
                yield ("text", lang, "feedback", oid), f"feedback for unknown option {oid!r}"
        missing = [oid for oid in ids if oid not in content.options]
        if item.type is not ItemType.true_false:
            if missing:
                yield ("text", lang, "options"), f"no text for option(s) {', '.join(missing)}"
        elif missing and lang not in TRUE_FALSE_WORDS:
            yield (("text", lang, "options"),
                   f"no built-in words for true/false in {lang!r} (only "
                   f"{', '.join(TRUE_FALSE_WORDS)}): give them, e.g. options: "
                   '{"true": ..., "false": ...} (quoted: YAML reads a bare true as a boolean)')
