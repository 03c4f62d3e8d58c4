"""The building blocks every model shares: identifiers, language codes, text limits, enums, the
strict frozen base class and the error a model validator raises with field paths.

Imports only pydantic and the standard library.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, StringConstraints

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
#: pydantic copies the set before changing it (`model_copy(update=...)`). This writes pydantic's
#: documented instance attribute `__pydantic_fields_set__` (read back through the public
#: `model_fields_set`; tests/test_model.py checks the meaning is kept), under the `<3` pin: no
#: public API shares it, and dropping it costs 27 MiB of 82 held by a 10,000-item bank
#: (measured with tracemalloc, load_bank(jobs=1) of benchmarks/synth.py's bank: 55 -> 82 MiB).
_FIELDS_SET: dict[frozenset[str], set[str]] = {}


def _shared_fields_set(fields: set[str]) -> set[str]:
    key = frozenset(fields)
    shared = _FIELDS_SET.get(key)
    if shared is None:
        shared = _FIELDS_SET[key] = set(key)
    return shared


class Strict(BaseModel):
    """Base of every model: unknown fields are errors, instances are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    def model_post_init(self, context: Any, /) -> None:
        object.__setattr__(
            self, "__pydantic_fields_set__", _shared_fields_set(self.__pydantic_fields_set__)
        )

    def __setstate__(self, state: dict[Any, Any]) -> None:  # unpickled from a worker or cache
        super().__setstate__(state)
        self.model_post_init(None)


#: A field path inside a file: `("text", "en", "options", "a")`, `("options", 0, "id")`.
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
