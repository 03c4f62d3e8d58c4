"""A selection -> ordered forms: item sets kept together, item order by policy, choice options
shuffled per form (locked options in place, keys spread over A, B, C, ... with no pattern in
the key sequence), matching responses and ordering options in a per-form display order.

All randomness comes from `random.Random` seeded with a string built from the seed (string seeds
are hashed with SHA-512, independent of PYTHONHASHSEED), one stream per purpose and form.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import assert_never

from dpassess.assemble.problem import Problem
from dpassess.model import (
    Cloze,
    Description,
    Essay,
    Item,
    Matching,
    MultipleResponse,
    Numerical,
    Option,
    Ordering,
    ShortAnswer,
    SingleChoice,
    TrueFalse,
    is_choice,
)

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
ChoiceItem = SingleChoice | MultipleResponse | TrueFalse
#: Patterns looked for in a form's key sequence: a run of this many equal keys...
RUN = 3
#: ... this many keys each one position after (or before) the last (A B C D, D C B A) ...
STEPS = 4
#: ... or a block of 2..CYCLE_MAX keys repeated at once (A B A B, A C D A C D).
CYCLE_MAX = 4
#: The longest pattern, in keys.
WINDOW = max(RUN, STEPS, 2 * CYCLE_MAX)
#: Nodes the key-placement search may visit before it places the rest greedily.
SEARCH_BUDGET = 20_000


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
    """One item as it appears on a form. Choice items carry their options in form order and
    `shuffle=False`; `display` is the order the responses (matching) or the options (ordering)
    are printed in; `stimulus` is set on the first item of an item set. `position` is the
    question's number: the scored items are numbered 1, 2, ... in form order, and a
    description (text only) has none (0): it is printed unnumbered, with no key and no row on
    the answer sheet."""

    position: int  # 1-based; 0: not numbered (a description)
    item: Item
    source: Item  # the bank's item (authoring order)
    display: tuple[str, ...] = ()
    stimulus: str | None = None

    @property
    def numbered(self) -> bool:
        """Whether the item is a numbered question (every item but a description)."""
        return self.position > 0

    @property
    def choice(self) -> ChoiceItem | None:
        return self.item if is_choice(self.item) else None

    @property
    def key_positions(self) -> list[int]:
        """Positions (0 = A) of the keyed options; empty for items without options."""
        it = self.choice
        if it is None:
            return []
        return sorted(it.option_ids.index(k) for k in it.key)

    @property
    def key_letters(self) -> list[str]:
        return [letter(p) for p in self.key_positions]

    @property
    def key_ids(self) -> list[str]:
        it = self.choice
        return [] if it is None else [it.option_ids[p] for p in self.key_positions]


@dataclass(frozen=True)
class Form:
    index: int
    label: str  # A, B, ...
    id: str  # <blueprint id>-a
    items: list[FormItem]

    @property
    def questions(self) -> list[FormItem]:
        """The numbered items in form order (no description): the key's and the answer
        sheet's rows."""
        return [fi for fi in self.items if fi.numbered]

    def key_counts(self) -> dict[str, int]:
        """How many keys sit at each letter (choice items only)."""
        counts = Counter(letter(p) for fi in self.items for p in fi.key_positions)
        width = max((len(it.options) for fi in self.items if (it := fi.choice)), default=0)
        return {letter(p): counts.get(letter(p), 0) for p in range(width)}

    def key_sequence(self) -> list[int]:
        """Key positions of the single-choice items in form order (what a test taker sees)."""
        return [fi.key_positions[0] for fi in self.items if isinstance(fi.item, SingleChoice)]

    def key_patterns(self) -> list[str]:
        return key_patterns(self.key_sequence())


# --- key patterns --------------------------------------------------------------------------------


def _tail_pattern(seq: Sequence[int]) -> str | None:
    """The pattern that the last key of `seq` completes, in words, or None."""
    n = len(seq)
    if n >= RUN and len(set(seq[-RUN:])) == 1:
        return f"{RUN} keys in a row at {letter(seq[-1])}"
    if n >= STEPS:
        steps = {seq[i] - seq[i - 1] for i in range(n - STEPS + 1, n)}
        if steps in ({1}, {-1}):
            return "a sequence " + " ".join(letter(p) for p in seq[-STEPS:])
    for per in range(2, CYCLE_MAX + 1):
        block = seq[-per:]
        if n >= 2 * per and list(seq[-2 * per:-per]) == list(block) and len(set(block)) > 1:
            return "a repeated block " + " ".join(letter(p) for p in seq[-2 * per:])
    return None


def key_patterns(seq: Sequence[int]) -> list[str]:
    """Every pattern in a key sequence (positions, 0 = A), each with the item number where it
    ends: runs of RUN equal keys, STEPS keys stepping by one, a block of 2..CYCLE_MAX keys
    repeated at once."""
    found = []
    for j in range(1, len(seq) + 1):
        what = _tail_pattern(seq[:j])
        if what is not None:
            found.append(f"{what} (ending at key {j})")
    return found


# --- forms -----------------------------------------------------------------------------------------


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
        shown = random.Random(f"{seed}:display:{f}")
        form_items = []
        number = 0
        for n, (i, it) in enumerate(zip(ordered, items, strict=True)):
            src = pr.items[i]
            first = src.stimulus is not None and (n == 0 or pr.items[ordered[n - 1]].stimulus
                                                  != src.stimulus)
            scored = src.scored  # a description takes no number
            number += scored
            form_items.append(FormItem(number if scored else 0, it, src, _display(src, shown),
                                       src.stimulus if first else None))
        forms.append(Form(f, label, f"{bp.id}-{label.lower()}", form_items))
    return forms


def _display(item: Item, rng: random.Random) -> tuple[str, ...]:
    """The printed order of a matching item's responses (shuffled where the item says so) and
    of an ordering item's options (always shuffled, never the right order)."""
    match item:
        case Matching():
            ids = list(item.response_ids)
            if item.shuffle:
                rng.shuffle(ids)
            return tuple(ids)
        case Ordering():
            ids = list(item.options)
            while ids == list(item.options):
                rng.shuffle(ids)
            return tuple(ids)
        case (SingleChoice() | MultipleResponse() | TrueFalse() | Numerical() | ShortAnswer()
              | Essay() | Cloze() | Description()):
            return ()
        case _:
            assert_never(item)


def blocks(pr: Problem, chosen: list[int]) -> list[list[int]]:
    """The chosen items (sorted indices) as blocks: each item set in authoring order, each
    other item alone; blocks in the order of their first item."""
    out: list[list[int]] = []
    where: dict[str, list[int]] = {}
    for i in chosen:
        sid = pr.items[i].stimulus
        if sid is None:
            out.append([i])
        elif sid in where:
            where[sid].append(i)
        else:
            where[sid] = [i]
            out.append(where[sid])
    return out


def _order(pr: Problem, chosen: list[int], seed: int, form: int) -> list[int]:
    policy = pr.blueprint.order
    units = blocks(pr, chosen)
    if policy == "fixed":
        return [i for b in units for i in b]  # bank order
    rng = random.Random(f"{seed}:order:{form}")
    rng.shuffle(units)
    if policy == "topic":
        # topics in the order they first appear in the bank, blocks random within a topic
        first: dict[str, int] = {}
        for n, it in enumerate(pr.items):
            first.setdefault(it.topic, n)
        units.sort(key=lambda b: first[pr.items[b[0]].topic])
    return [i for b in units for i in b]


def _movable(item: Item) -> bool:
    if isinstance(item, TrueFalse):
        # True/false items keep True before False: readers expect it, and nothing is gained.
        return False
    return is_choice(item) and item.shuffle and sum(not o.locked for o in item.options) >= 2


def _arrange(items: list[Item], rng: random.Random, *, shuffle: bool, balance: bool) -> list[Item]:
    """Each item as it goes on the form: choice options in form order (`shuffle=False`).

    Keys are placed in form order by a depth-first search: each key goes to a free position
    that holds the fewest keys so far (with `balance`; ties in a seeded order) and completes
    no pattern in the single-choice key sequence (`key_patterns`), backtracking when none
    does. Past SEARCH_BUDGET nodes the rest is placed without the pattern test."""
    choice: list[ChoiceItem | None] = [_as_choice(it) for it in items]
    moving = [shuffle and c is not None and _movable(c) for c in choice]
    # the seeded preference order of free positions, drawn once per item
    prefs: list[list[int]] = []
    for c, m in zip(choice, moving, strict=True):
        slots = [p for p, o in enumerate(c.options) if not o.locked] if c is not None and m else []
        rng.shuffle(slots)
        prefs.append(slots)
    target = _balanced_counts(choice, moving, prefs)
    counts: Counter[int] = Counter()
    seq: list[int] = []
    placed: list[list[int]] = [[] for _ in items]  # key positions per item
    single = [isinstance(c, SingleChoice) for c in choice]

    def candidates(n: int, strict: bool) -> list[list[int]]:
        """The key positions item `n` may take, best first (given the keys placed before)."""
        c = choice[n]
        if c is None:
            return [[]]
        if not moving[n]:
            return [sorted(c.option_ids.index(k) for k in c.key)]
        locked_keys = [p for p, o in enumerate(c.options) if o.locked and o.id in c.key]
        free_keys = sum(1 for o in c.options if not o.locked and o.id in c.key)
        if free_keys != 1:  # no or several free keys: placed greedily, least used first
            chosen = list(locked_keys)
            local = Counter(counts)
            for _ in range(free_keys):
                pool = [p for p in prefs[n] if p not in chosen]
                least = min(local[p] for p in pool) if balance else 0
                p = next(p for p in pool if not balance or local[p] == least)
                chosen.append(p)
                local[p] += 1
            return [sorted(chosen)]
        pool = sorted(prefs[n], key=lambda p: counts[p]) if balance else prefs[n]
        if balance and strict:  # never past the balanced count of a position
            pool = [p for p in pool if counts[p] < target[p]]
        return [sorted([*locked_keys, p]) for p in pool]

    def search(strict: bool, budget: int) -> bool:
        """Depth-first, iterative. Once the budget is spent the pattern test stops (each item
        takes its first candidate); False if it had to backtrack past the first item or after
        the budget ran out."""
        counts.clear()
        seq.clear()
        cands: list[list[list[int]] | None] = [None] * len(items)
        tried = [0] * len(items)
        n = 0
        while n < len(items):
            if cands[n] is None:
                cands[n], tried[n] = candidates(n, strict), 0
            options = cands[n]
            assert options is not None
            while tried[n] < len(options):
                keys = options[tried[n]]
                tried[n] += 1
                budget -= 1
                if single[n] and budget > 0 and _tail_pattern([*seq[-WINDOW:], keys[0]]) is not None:
                    continue
                break
            else:
                if n == 0 or budget <= 0:
                    return False
                cands[n] = None
                n -= 1
                counts.subtract(placed[n])
                if single[n]:
                    seq.pop()
                continue
            placed[n] = keys
            counts.update(keys)
            if single[n]:
                seq.append(keys[0])
            n += 1
        return True

    if not search(True, SEARCH_BUDGET) and not search(False, SEARCH_BUDGET):
        search(True, 0)
    return [_placed(it, c, m, keys, rng) for it, c, m, keys in
            zip(items, choice, moving, placed, strict=True)]


def _balanced_counts(choice: list[ChoiceItem | None], moving: list[bool],
                     prefs: list[list[int]]) -> Counter[int]:
    """Keys per position when the keys are spread as evenly as greedy placement can, the most
    constrained items (fewest free positions) first: the counts the search may not exceed."""
    counts: Counter[int] = Counter()
    free: list[tuple[int, int]] = []
    for n, (c, m) in enumerate(zip(choice, moving, strict=True)):
        if c is None:
            continue
        if not m:
            counts.update(c.option_ids.index(k) for k in c.key)
            continue
        counts.update(p for p, o in enumerate(c.options) if o.locked and o.id in c.key)
        free += [(len(prefs[n]), n)] * sum(1 for o in c.options if not o.locked and o.id in c.key)
    for _, n in sorted(free):
        least = min(counts[p] for p in prefs[n])
        counts[next(p for p in prefs[n] if counts[p] == least)] += 1
    return counts


def _as_choice(item: Item) -> ChoiceItem | None:
    return item if is_choice(item) else None


def _placed(item: Item, c: ChoiceItem | None, moving: bool, keys: list[int],
            rng: random.Random) -> Item:
    """`item` with its keys at `keys` and the other free options shuffled into the rest."""
    if c is None:
        return item
    if not moving:
        return c.model_copy(update={"shuffle": False})
    slots = [p for p, o in enumerate(c.options) if not o.locked]
    placed: dict[int, Option] = {p: o for p, o in enumerate(c.options) if o.locked}
    free_keys = [o for o in c.options if not o.locked and o.id in c.key]
    for p, o in zip([p for p in keys if p in slots], free_keys, strict=True):
        placed[p] = o
    rest = [p for p in slots if p not in placed]
    others = [o for o in c.options if not o.locked and o.id not in c.key]
    rng.shuffle(others)
    placed.update(zip(rest, others, strict=True))
    options = tuple(placed[p] for p in range(len(c.options)))
    return c.model_copy(update={"options": options, "shuffle": False})
