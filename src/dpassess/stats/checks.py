"""A bank and its recorded figures (`history.observed`) -> the findings of the item-analysis lint
rules (lint/rules/stats.py registers them with their codes and documentation): discrimination
below zero, a distractor (almost) nobody chooses, observed difficulty that contradicts the
declared one. An item is judged once at least `MIN_N` persons answered it."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from dpassess.diagnostics import FieldPath
from dpassess.model import Bank, Difficulty
from dpassess.stats.analysis import Thresholds
from dpassess.stats.dif import language_name
from dpassess.stats.history import MAX_RECORD_BYTES, Observed, record_files

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
            field: FieldPath = ("key",) if bank.get(item_id).choice_ids else ()
            yield Finding(item_id, field, f"discrimination below zero ({', '.join(below)}; "
                          f"{basis(obs)})")


def unchosen_distractors(bank: Bank, seen: Mapping[str, Observed]) -> Iterator[Finding]:
    """Wrong options chosen by fewer than `Thresholds.min_distractor_share` of the persons."""
    for item_id, obs in _judged(bank, seen):
        item = bank.get(item_id)
        for i, oid in enumerate(item.choice_ids):
            share = obs.options.get(oid)
            if share is not None and item.is_distractor(oid) and \
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


def _dif_rows(bank: Bank) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each item's DIF figures of its latest record that has any: item -> (record date, row of
    the largest |D-DIF|). Records that cannot be read are IA004's business: passed over here."""
    latest: dict[str, tuple[str, dict[str, Any]]] = {}
    for path in record_files(bank.root):
        try:
            if path.stat().st_size > MAX_RECORD_BYTES:
                continue
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            continue
        if not isinstance(data, dict) or not isinstance(data.get("items"), dict):
            continue
        admin = data.get("administration")
        when = admin.get("date") if isinstance(admin, dict) else None
        if not isinstance(when, str):
            continue
        for item_id, fig in data["items"].items():
            rows = fig.get("dif") if isinstance(fig, dict) else None
            good = [r for r in rows if _dif_row(r)] if isinstance(rows, list) else []
            if good and (item_id not in latest or latest[item_id][0] <= when):
                latest[item_id] = (when, max(good, key=lambda r: abs(r["delta"])))
    return latest


def _dif_row(row: object) -> bool:
    if not isinstance(row, dict):
        return False
    numbers = ("delta", "n_reference", "n_focal")
    return all(isinstance(row.get(k), int | float) and not isinstance(row.get(k), bool)
               for k in numbers) and all(isinstance(row.get(k), str)
                                         for k in ("reference", "focal", "category"))


def translation_dif(bank: Bank) -> Iterator[Finding]:
    """Items whose latest recorded DIF between two languages is ETS category C, with at least
    MIN_N persons in each language."""
    rows = _dif_rows(bank)
    for item in bank:
        got = rows.get(item.id)
        if got is None:
            continue
        when, row = got
        if row["category"] != "C" or min(row["n_reference"], row["n_focal"]) < MIN_N:
            continue
        ref, foc = language_name(row["reference"]), language_name(row["focal"])
        harder = foc if row["delta"] < 0 else ref
        yield Finding(item.id, ("text", row["focal"]),
                      f"the {ref} and {foc} versions of this item do not measure the same thing: "
                      f"ETS category C DIF, MH D-DIF = {row['delta']:.2f} (harder in {harder} "
                      f"for persons of the same total; {row['n_reference']} persons in "
                      f"{row['reference']}, {row['n_focal']} in {row['focal']}, recorded {when})")
