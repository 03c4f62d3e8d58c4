"""The item model: one class per item type, all sharing the metadata of `ItemBase`; `Item` is
their union, told apart by the `type` field.

Imports only pydantic and the standard library. Text fields hold Markdown *source*; nothing here
is escaped or rendered: that is each exporter's job.

Adding an item type: one class here (its own fields and content, `extra="forbid"`), one entry in
`ITEM_CLASSES` and in `Item`; mypy then names every `match` on items that lacks a case for it
(each ends in `assert_never`). See docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, StringConstraints, model_validator

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


# --- what every item has -----------------------------------------------------------------------


class Source(Strict):
    """Where the item came from, with its original wording kept verbatim."""

    origin: str
    lang: LangCode | None = None
    text: Text


class Suppression(Strict):
    """A lint rule switched off for this item; the reason is required."""

    rule: RuleCode
    reason: Annotated[str, StringConstraints(min_length=3, strip_whitespace=True)]


class ContentBase(Strict):
    """What an item of any type says in one language (Markdown source)."""

    title: Text | None = Field(None, description="Short name shown in LMS question lists.")
    stem: Text = Field(description="The question (Markdown).")
    explanation: Text | None = Field(None, description="General feedback shown after answering.")


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
    text: Mapping[LangCode, ContentBase] = Field(description="Text by language code.")
    source: Source | None = None
    suppress: tuple[Suppression, ...] = Field((), description="Lint rules off for this item.")

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

    @property
    def option_ids(self) -> tuple[str, ...]:
        return tuple(o.id for o in self.options)

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
    """One correct option among several."""

    type: Literal[ItemType.single_choice] = ItemType.single_choice


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
        (Option(id="true"), Option(id="false")), description="Always [true, false]."
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


# --- the union ---------------------------------------------------------------------------------

#: Every item type; `match item:` over these ends in `assert_never(item)`.
Item = Annotated[SingleChoice | MultipleResponse | TrueFalse, Field(discriminator="type")]

#: The choice types (options and a key), as a tuple for `isinstance`.
ChoiceItem = SingleChoice | MultipleResponse | TrueFalse

#: The class of each `type`; an item file without `type` is single_choice.
ITEM_CLASSES: dict[ItemType, type[ItemBase]] = {
    ItemType.single_choice: SingleChoice,
    ItemType.multiple_response: MultipleResponse,
    ItemType.true_false: TrueFalse,
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
