"""A person's response to an item -> the points it earns, by the item's own key.

One `match` over the item classes, ending in `assert_never`: a new item type (numerical, short
answer: a typed answer in `Response.typed`) adds its case here and mypy names the place.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import assert_never

from dpassess.model import Item, MultipleResponse, SingleChoice, TrueFalse


@dataclass(frozen=True, slots=True)
class Response:
    """What a person answered: the option ids chosen, or a typed answer; neither = omitted."""

    chosen: frozenset[str] = frozenset()
    typed: str | None = None

    @property
    def omitted(self) -> bool:
        return not self.chosen and not self.typed


OMITTED = Response()


def score(item: Item, response: Response) -> float:
    """Points earned, between 0 and `item.points`. An omitted item earns 0.

    single_choice, true_false: full points for the key alone; several marks earn nothing (a
    double-marked answer sheet). multiple_response: the chosen options' fractions summed, kept
    between 0 and 1, times the points, as Moodle grades a multiple-answer question.
    """
    match item:
        case SingleChoice() | TrueFalse():
            right = len(response.chosen) == 1 and next(iter(response.chosen)) in item.key
            return item.points if right else 0.0
        case MultipleResponse():
            fractions = item.fractions()
            total = math.fsum(fractions[o] for o in sorted(response.chosen))
            return min(max(total, 0.0), 1.0) * item.points
        case _:
            assert_never(item)


def options_of(item: Item) -> tuple[str, ...]:
    """The option ids a response may choose, in authoring order (empty for typed answers)."""
    match item:
        case SingleChoice() | MultipleResponse() | TrueFalse():
            return item.option_ids
        case _:
            assert_never(item)


def takes_one(item: Item) -> bool:
    """Whether the item has exactly one right option, so that several marks are no answer."""
    match item:
        case SingleChoice() | TrueFalse():
            return True
        case MultipleResponse():
            return False
        case _:
            assert_never(item)


def is_distractor(item: Item, option_id: str) -> bool:
    """An option that earns nothing when chosen alone (a wrong option)."""
    match item:
        case SingleChoice() | TrueFalse():
            return option_id not in item.key
        case MultipleResponse():
            return item.fractions()[option_id] <= 0
        case _:
            assert_never(item)
