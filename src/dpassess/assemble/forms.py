"""A selection -> ordered forms: item order by policy, options shuffled per item per form with
locked options in place and each form's key positions spread evenly over A, B, C, ...

All randomness comes from `random.Random` seeded with a string built from the seed (string seeds
are hashed with SHA-512, independent of PYTHONHASHSEED), one stream per purpose and form.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from dpassess.assemble.problem import Problem
from dpassess.model import Item, ItemType, Option

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def letter(position: int) -> str:
    """0 -> A, 25 -> Z, 26 -> AA (spreadsheet style)."""
    out = ""
    n = position + 1
    while n:
        n, r = divmod(n - 1, 26)
        out = LETTERS[r] + out
    return out


@dataclass(frozen=True)
class FormItem:
    """One item as it appears on a form: options in form order, `shuffle=False`."""

    position: int  # 1-based
    item: Item
    source: Item  # the bank's item (authoring order)

    @property
    def key_positions(self) -> list[int]:
        ids = self.item.option_ids
        return sorted(ids.index(k) for k in self.item.key)

    @property
    def key_letters(self) -> list[str]:
        return [letter(p) for p in self.key_positions]

    @property
    def key_ids(self) -> list[str]:
        ids = self.item.option_ids
        return [ids[p] for p in self.key_positions]


@dataclass(frozen=True)
class Form:
    index: int
    label: str  # A, B, ...
    id: str  # <blueprint id>-a
    items: list[FormItem]

    def key_counts(self) -> dict[str, int]:
        counts = Counter(letter(p) for fi in self.items for p in fi.key_positions)
        width = max((len(fi.item.options) for fi in self.items), default=0)
        return {letter(p): counts.get(letter(p), 0) for p in range(width)}


def make_forms(pr: Problem, selection: list[list[int]], seed: int) -> list[Form]:
    bp = pr.blueprint
    forms = []
    for f, chosen in enumerate(selection):
        label = letter(f)
        ordered = _order(pr, sorted(chosen), seed, f)
        rng = random.Random(f"{seed}:options:{f}")
        items = _arrange(
            [pr.items[i] for i in ordered], rng, shuffle=bp.shuffle_options, balance=bp.balance_keys
        )
        form_items = [
            FormItem(n + 1, it, pr.items[i]) for n, (i, it) in enumerate(zip(ordered, items, strict=True))
        ]
        forms.append(Form(f, label, f"{bp.id}-{label.lower()}", form_items))
    return forms


def _order(pr: Problem, chosen: list[int], seed: int, form: int) -> list[int]:
    policy = pr.blueprint.order
    if policy == "fixed":
        return chosen  # bank order
    rng = random.Random(f"{seed}:order:{form}")
    shuffled = list(chosen)
    rng.shuffle(shuffled)
    if policy == "random":
        return shuffled
    # topic: topics in the order they first appear in the bank, items random within a topic
    first: dict[str, int] = {}
    for n, it in enumerate(pr.items):
        first.setdefault(it.topic, n)
    return sorted(shuffled, key=lambda i: first[pr.items[i].topic])


def _movable(item: Item) -> bool:
    # True/false items keep True before False: readers expect it, and nothing is gained.
    return item.shuffle and item.type is not ItemType.true_false and (
        sum(not o.locked for o in item.options) >= 2
    )


def _arrange(items: list[Item], rng: random.Random, *, shuffle: bool, balance: bool) -> list[Item]:
    """Each item with its options in form order. Items that cannot move are counted first; the
    others are placed most constrained first, each key going to the free position that holds
    the fewest keys so far (ties broken by the seed)."""
    counts: Counter[int] = Counter()
    out: list[Item | None] = [None] * len(items)
    movable: list[int] = []
    for n, it in enumerate(items):
        if shuffle and _movable(it):
            movable.append(n)
        else:
            out[n] = it.model_copy(update={"shuffle": False})
            counts.update(it.option_ids.index(k) for k in it.key)
    rng.shuffle(movable)
    movable.sort(key=lambda n: sum(not o.locked for o in items[n].options))
    for n in movable:
        it = items[n]
        slots = [p for p, o in enumerate(it.options) if not o.locked]
        placed: dict[int, Option] = {p: o for p, o in enumerate(it.options) if o.locked}
        keys = [o for o in it.options if not o.locked and o.id in it.key]
        others = [o for o in it.options if not o.locked and o.id not in it.key]
        counts.update(p for p, o in placed.items() if o.id in it.key)
        for o in keys:
            if balance:
                least = min(counts[p] for p in slots)
                p = rng.choice([p for p in slots if counts[p] == least])
            else:
                p = rng.choice(slots)
            slots.remove(p)
            placed[p] = o
            counts[p] += 1
        rng.shuffle(others)
        placed.update(zip(slots, others, strict=True))
        options = tuple(placed[p] for p in range(len(it.options)))
        out[n] = it.model_copy(update={"options": options, "shuffle": False})
    return [it for it in out if it is not None]
