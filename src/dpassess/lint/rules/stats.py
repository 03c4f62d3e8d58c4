"""Item-analysis rules (IA): what the administrations recorded in the bank (`dpassess stats
--write`, `stats/*.json`) say about each item: discrimination below zero, a distractor (almost)
nobody chooses, observed difficulty that contradicts the declared one, and records that cannot be
read.

Bank rules: they read the bank's records once per run (`dpassess.stats.history.observed`, p and
the other figures pooled over administrations, weighted by n), and judge an item only when at
least `MIN_N` persons answered it.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator

from dpassess.diagnostics import Diagnostic
from dpassess.lint.context import BankContext
from dpassess.lint.registry import Hit, bank_rule
from dpassess.model import Difficulty
from dpassess.stats.analysis import Thresholds
from dpassess.stats.history import Observed, observed
from dpassess.stats.scoring import is_distractor, options_of

#: Fewest persons an item's recorded figures must rest on before a rule judges them.
MIN_N = 30
#: Widest gap between an item file's `p_value` and the observed p that is not a contradiction.
P_VALUE_GAP = 0.15
TH = Thresholds()

_SEEN: weakref.WeakKeyDictionary[BankContext, tuple[dict[str, Observed], list[Diagnostic]]] = (
    weakref.WeakKeyDictionary()
)


def _observed(bctx: BankContext) -> tuple[dict[str, Observed], list[Diagnostic]]:
    """The bank's recorded figures, read once per lint run."""
    got = _SEEN.get(bctx)
    if got is None:
        got = _SEEN[bctx] = observed(bctx.bank)
    return got


def _judged(bctx: BankContext) -> Iterator[tuple[str, Observed]]:
    seen, _ = _observed(bctx)
    for item in bctx.bank:
        obs = seen.get(item.id)
        if obs is not None and obs.n >= MIN_N:
            yield item.id, obs


def _basis(obs: Observed) -> str:
    times = "once" if obs.administrations == 1 else f"in {obs.administrations} administrations"
    return f"{obs.n} persons, recorded {times}, last {obs.last}"


@bank_rule(
    "IA001", "negative-discrimination", "warning",
    fix="Check the key and the wording: an item that better students get wrong more often than "
        "weaker ones usually has a wrong key, two defensible answers or a trap in the wording.",
)
def negative_discrimination(bctx: BankContext) -> Iterator[Hit]:
    """## What it does
    Finds items whose recorded discrimination is below zero: the upper-lower index D or the
    corrected item-total point-biserial r_pb, pooled over the recorded administrations
    (weighted by the number of persons), once at least 30 persons answered the item.

    ## Why is this bad?
    Persons with high total scores answered the item worse than persons with low totals: the
    item measures something else than the rest of the test, or its key is wrong. It lowers the
    test's reliability, and every form that draws it is less fair.

    ## Example
    An item whose key names the second-best option: D = -0.18 over 200 persons.

    ## Use instead
    Correct the key, or rewrite the item and let the next administrations judge it again.
    """
    for item_id, obs in _judged(bctx):
        below = [f"{name} = {v:.2f}" for name, v in (("D", obs.d), ("r_pb", obs.r_pb))
                 if v is not None and v < 0]
        if below:
            field = ("key",) if options_of(bctx.bank.get(item_id)) else ()
            yield Hit(field, f"discrimination below zero ({', '.join(below)}; {_basis(obs)})",
                      item_id=item_id)


@bank_rule(
    "IA002", "unchosen-distractor", "warning",
    fix="Rewrite the option into a mistake that students really make (their wrong answers on "
        "an open version of the question are the best source), or remove it.",
)
def unchosen_distractor(bctx: BankContext) -> Iterator[Hit]:
    """## What it does
    Finds wrong options that fewer than 5% of the persons chose, pooled over the recorded
    administrations, once at least 30 persons answered the item.

    ## Why is this bad?
    An option nobody chooses does not distract: the item has one option fewer than it seems,
    so guessing is easier and the item tells less about who knows the answer.

    ## Example
    A four-option item whose option "Tokyo" for the capital of Indonesia was chosen by 0 of
    200 persons.

    ## Use instead
    A distractor built from a common misconception, chosen by some of the weaker students.
    """
    for item_id, obs in _judged(bctx):
        item = bctx.bank.get(item_id)
        for i, oid in enumerate(options_of(item)):
            share = obs.options.get(oid)
            if share is not None and is_distractor(item, oid) and \
                    share < TH.min_distractor_share:
                yield Hit(("options", i), f"option {oid!r} is chosen by {share:.0%} of the "
                          f"persons ({_basis(obs)})", item_id=item_id)


def _band(p: float) -> Difficulty:
    if p < TH.hard_below:
        return Difficulty.hard
    return Difficulty.easy if p > TH.easy_above else Difficulty.medium


@bank_rule(
    "IA003", "difficulty-contradicted", "warning",
    fix="Set `difficulty` (or `p_value`) to what the administrations observed, or remove "
        "`p_value` to let the observed p be used.",
)
def difficulty_contradicted(bctx: BankContext) -> Iterator[Hit]:
    """## What it does
    Compares an item's declared difficulty with the proportion of persons who answered it
    right (p, pooled over the recorded administrations, weighted by n; at least 30 persons):
    `difficulty: hard` with p above 0.70, `easy` with p below 0.30, `medium` outside 0.30 to
    0.70; and a `p_value` in the item file more than 0.15 away from the observed p.

    ## Why is this bad?
    Forms are balanced on the declared difficulty (and on `p_value`, which an author's value
    fixes): a label the students contradict makes one form easier than another.

    ## Example
    `difficulty: hard` on an item that 88% of 200 persons answered right.

    ## Use instead
    `difficulty: easy`, or no `p_value`, so that the assembler uses the observed p.
    """
    for item_id, obs in _judged(bctx):
        item = bctx.bank.get(item_id)
        band = _band(obs.p)
        if item.difficulty is not None and item.difficulty is not band:
            yield Hit(("difficulty",), f"declared {item.difficulty.value}, observed {band.value} "
                      f"(p = {obs.p:.2f}; {_basis(obs)})", item_id=item_id)
        if item.p_value is not None and abs(item.p_value - obs.p) > P_VALUE_GAP:
            yield Hit(("p_value",), f"p_value {item.p_value:g} fixed in the item file, p = "
                      f"{obs.p:.2f} observed ({_basis(obs)})", item_id=item_id)


@bank_rule(
    "IA004", "unreadable-statistics", "error",
    fix="Restore the record from version control, or delete it and record the administration "
        "again with `dpassess stats RESPONSES --bank DIR --write`.",
)
def unreadable_statistics(bctx: BankContext) -> Iterator[Hit]:
    """## What it does
    Reports a record in the bank's `stats/` folder that cannot be read: not JSON, another
    schema, or figures out of range (n below 1, p outside 0 to 1, D or r_pb outside -1 to 1).

    ## Why is this bad?
    The record is not used: the other rules, and the assembler's observed p-values, go on
    without that administration, and nothing else would say so.

    ## Example
    A record edited by hand whose `p` reads `0,75`.

    ## Use instead
    Records as `dpassess stats --write` writes them.
    """
    _, problems = _observed(bctx)
    for d in problems:
        where = f".{d.field}" if d.field else ""
        yield Hit((), f"{d.path}{where}: {d.message}")
