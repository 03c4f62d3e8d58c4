"""The bank: its settings file (languages, glossary) and the items loaded with it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from dpassess.model.common import (
    ItemId,
    ItemValueError,
    LangCode,
    Strict,
    Text,
)
from dpassess.model.items import Item, Stimulus

Term = Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True)]


class GlossaryTerm(Strict):
    """A term and how each language must render it.

    `keep: true` means the term stays exactly as written in every language (all-reduce, GPU).
    Otherwise `render` lists the accepted renderings per language. `wrong` lists renderings that
    are known mistranslations: finding one is an error.
    """

    term: Term
    keep: bool = False
    render: dict[LangCode, tuple[Term, ...]] = Field(default_factory=dict)
    wrong: dict[LangCode, tuple[Term, ...]] = Field(default_factory=dict)
    note: str | None = None

    @model_validator(mode="after")
    def _check(self) -> GlossaryTerm:
        if self.keep and self.render:
            raise ItemValueError(("render",), "a kept term has no renderings (remove `keep`)")
        return self

    def accepted(self, lang: str) -> tuple[str, ...]:
        """Forms of the term accepted in `lang`."""
        if self.keep:
            return (self.term,)
        return self.render.get(lang, ())


class BankConfig(Strict):
    """The bank file `bank.yaml` beside the item files."""

    schema_version: Literal[1] = Field(
        1, alias="schema")
    id: ItemId = Field(description="The bank's slug; exports are named after it.")
    title: dict[LangCode, Text]
    languages: tuple[LangCode, ...] = Field(min_length=1, description="Required languages.")
    default_language: LangCode
    glossary_language: LangCode = Field(
        "en", description="The language glossary terms are written in."
    )
    glossary: tuple[GlossaryTerm, ...] = ()

    @model_validator(mode="after")
    def _check(self) -> BankConfig:
        problems: list[tuple[tuple[str | int, ...], str]] = []
        if self.default_language not in self.languages:
            problems.append((
                ("default_language",),
                f"default language {self.default_language!r} is not one of {list(self.languages)}",
            ))
        for lang in self.languages:
            if lang not in self.title:
                problems.append((("title",), f"the bank title has no {lang!r} text"))
        if problems:
            raise ItemValueError.many(problems)
        return self


@dataclass(frozen=True, slots=True)
class LoadedItem:
    """An item with the file it came from."""

    item: Item
    path: str


@dataclass(frozen=True, slots=True)
class LoadedStimulus:
    """A stimulus with the file it came from."""

    stimulus: Stimulus
    path: str


@dataclass
class Bank:
    """A loaded bank: settings, items in authoring (file name) order, and the stimuli they
    are read with."""

    config: BankConfig
    root: Path
    entries: list[LoadedItem] = field(default_factory=list)
    config_path: str = ""
    stimuli: list[LoadedStimulus] = field(default_factory=list)
    _by_id: dict[str, LoadedItem] = field(init=False, repr=False, compare=False)
    _stimuli: dict[str, LoadedStimulus] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_id = {e.item.id: e for e in self.entries}
        self._stimuli = {s.stimulus.id: s for s in self.stimuli}

    def stimulus(self, stimulus_id: str) -> Stimulus:
        """The stimulus with this id (KeyError if none)."""
        return self._stimuli[stimulus_id].stimulus

    def sets(self) -> dict[str, list[Item]]:
        """The items of each stimulus, in authoring order (an item set is kept together)."""
        out: dict[str, list[Item]] = {s.stimulus.id: [] for s in self.stimuli}
        for item in self:
            if item.stimulus is not None:
                out.setdefault(item.stimulus, []).append(item)
        return out

    # lookups -------------------------------------------------------------------------
    @property
    def items(self) -> list[Item]:
        return [e.item for e in self.entries]

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[Item]:
        return (e.item for e in self.entries)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._by_id

    def get(self, item_id: str) -> Item:
        """The item with this id (KeyError if none)."""
        return self._by_id[item_id].item

    def path_of(self, item_id: str) -> str:
        return self._by_id[item_id].path

    def by_topic(self, topic: str) -> list[Item]:
        """Items whose topic is `topic` or below it (`a/b` matches `a/b` and `a/b/c`)."""
        prefix = topic.rstrip("/") + "/"
        return [i for i in self if i.topic == topic or i.topic.startswith(prefix)]

    def by_tag(self, tag: str) -> list[Item]:
        return [i for i in self if tag in i.tags]

    @property
    def id(self) -> str:
        return self.config.id

    @property
    def languages(self) -> tuple[str, ...]:
        return self.config.languages
