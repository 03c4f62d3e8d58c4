"""A bank and its recorded figures (`history.observed`) -> the findings of the item-analysis lint
rules (lint/rules/stats.py registers them with their codes and documentation): discrimination
below zero, a distractor (almost) nobody chooses, observed difficulty that contradicts the
declared one. An item is judged once at least `MIN_N` persons answered it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import NamedTuple

from dpassess.diagnostics import FieldPath
from dpassess.model import Bank, Difficulty
from dpassess.stats.analysis import Thresholds
from dpassess.stats.history import Observed
from dpassess.stats.scoring import is_distractor, options_of

#: Fewest persons an item's recorded figures must rest on before a rule judges them.
MIN_N = 30
#: Widest gap between an item file's `p_value` and the observed p that is no contradiction.
P_VALUE_GAP = 0.15
TH = Thresholds()


class Finding(NamedTuple):
    item: str
    field: FieldPath
    message: str


def _judged(bank: Bank, seen: Mapping[str, Observed]) -> Iterator[tuple[str, Observed]]:
    for item in bank:
        obs = seen.get(item.id)
        if obs is not None and obs.n >= MIN_N:
            yield item.id, obs


def basis(obs: Observed) -> str:
    """What the figures rest on, for a message."""
    times = "once" if obs.administrations == 1 else f"in {obs.administrations} administrations"
    return f"{obs.n} persons, recorded {times}, last {obs.last}"


def negative_discrimination(bank: Bank, seen: Mapping[str, Observed]) -> Iterator[Finding]:
    """D or r_pb below zero."""
    for item_id, obs in _judged(bank, seen):
        below = [f"{name} = {v:.2f}" for name, v in (("D", obs.d), ("r_pb", obs.r_pb))
                 if v is not None and v < 0]
        if below:
            field: FieldPath = ("key",) if options_of(bank.get(item_id)) else ()
            yield Finding(item_id, field, f"discrimination below zero ({', '.join(below)}; "
                          f"{basis(obs)})")


def unchosen_distractors(bank: Bank, seen: Mapping[str, Observed]) -> Iterator[Finding]:
    """Wrong options chosen by fewer than `Thresholds.min_distractor_share` of the persons."""
    for item_id, obs in _judged(bank, seen):
        item = bank.get(item_id)
        for i, oid in enumerate(options_of(item)):
            share = obs.options.get(oid)
            if share is not None and is_distractor(item, oid) and \
                    share < TH.min_distractor_share:
                yield Finding(item_id, ("options", i), f"option {oid!r} is chosen by "
                              f"{share:.0%} of the persons ({basis(obs)})")


def band(p: float) -> Difficulty:
    """The difficulty a p stands for (the report's bands: hard below 0.30, easy above 0.70)."""
    if p < TH.hard_below:
        return Difficulty.hard
    return Difficulty.easy if p > TH.easy_above else Difficulty.medium


def difficulty_contradicted(bank: Bank, seen: Mapping[str, Observed]) -> Iterator[Finding]:
    """A declared difficulty outside the observed p's band; a fixed p_value far from it."""
    for item_id, obs in _judged(bank, seen):
        item = bank.get(item_id)
        observed_band = band(obs.p)
        if item.difficulty is not None and item.difficulty is not observed_band:
            yield Finding(item_id, ("difficulty",), f"declared {item.difficulty.value}, observed "
                          f"{observed_band.value} (p = {obs.p:.2f}; {basis(obs)})")
        if item.p_value is not None and abs(item.p_value - obs.p) > P_VALUE_GAP:
            yield Finding(item_id, ("p_value",), f"p_value {item.p_value:g} fixed in the item "
                          f"file, p = {obs.p:.2f} observed ({basis(obs)})")
