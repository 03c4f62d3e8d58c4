"""Item-analysis rules (IA): what the administrations recorded in the bank (`dpassess stats
--write`, `stats/*.json`) say about each item: discrimination below zero, a distractor (almost)
nobody chooses, observed difficulty that contradicts the declared one, and records that cannot be
read. The checks are `dpassess.stats.checks`; here they get their codes and documentation.

Bank rules: the bank's records are read once per run (`dpassess.stats.history.observed`: p and
the other figures pooled over administrations, weighted by n).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator

from dpassess.diagnostics import Diagnostic
from dpassess.lint.context import BankContext
from dpassess.lint.registry import Hit, bank_rule
from dpassess.stats import checks
from dpassess.stats.history import Observed, observed

_SEEN: weakref.WeakKeyDictionary[BankContext, tuple[dict[str, Observed], list[Diagnostic]]] = (
    weakref.WeakKeyDictionary()
)


def _observed(bctx: BankContext) -> tuple[dict[str, Observed], list[Diagnostic]]:
    """The bank's recorded figures, read once per lint run."""
    got = _SEEN.get(bctx)
    if got is None:
        got = _SEEN[bctx] = observed(bctx.bank)
    return got


def _hits(found: Iterable[checks.Finding]) -> Iterator[Hit]:
    return (Hit(f.field, f.message, item_id=f.item) for f in found)


@bank_rule(
    "IA001", "negative-discrimination", "warning",
    key_risk="Yes, but the figures only point at it: a wrong key is the usual cause, a trap in the"
             " wording or a topic apart from the rest of the test others; someone must read the "
             "item, so it warns.",
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
    return _hits(checks.negative_discrimination(bctx.bank, _observed(bctx)[0]))


@bank_rule(
    "IA002", "unchosen-distractor", "warning",
    key_risk="No: an option nobody chooses makes guessing easier; the key stays right.",
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
    return _hits(checks.unchosen_distractors(bctx.bank, _observed(bctx)[0]))


@bank_rule(
    "IA003", "difficulty-contradicted", "warning",
    key_risk="No: forms are balanced on a wrong difficulty; every answer is graded as before.",
    fix="Set `difficulty` (or `p_value`) to what the administrations observed, or remove "
        "`p_value` to let the observed p be used.",
)
def difficulty_contradicted(bctx: BankContext) -> Iterator[Hit]:
    """## What it does
    Compares an item's declared difficulty with the proportion of persons who answered it
    right (p, pooled over the recorded administrations, weighted by n; at least 30 persons)
    by the bands of the statistics report (hard below 0.30, medium 0.30 to 0.70, easy above
    0.70): `difficulty: hard` with p of 0.30 or more, `easy` with p of 0.70 or less, `medium`
    outside 0.30 to 0.70; and a `p_value` in the item file more than 0.15 away from the
    observed p.

    ## Why is this bad?
    Forms are balanced on the declared difficulty (and on `p_value`, which an author's value
    fixes): a label the students contradict makes one form easier than another.

    ## Example
    `difficulty: hard` on an item that 88% of 200 persons answered right.

    ## Use instead
    `difficulty: easy`, or no `p_value`, so that the assembler uses the observed p.
    """
    return _hits(checks.difficulty_contradicted(bctx.bank, _observed(bctx)[0]))


@bank_rule(
    "IA004", "unreadable-statistics", "error",
    key_risk="No, but what the record says is lost: the other IA rules and the assembler's "
             "observed p-values go on without it, so it is an error.",
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


@bank_rule(
    "IA005", "translation-dif", "warning",
    key_risk="No: the key stays right, but equally able students score differently by the "
    "language they read; someone must compare the versions, so it warns.",
    fix="Compare the two versions word by word with a bilingual colleague: a term that is "
        "harder, a hint one version gives, a distractor that reads differently. Rewrite the "
        "version that differs, and let the next administrations judge it again.",
)
def translation_dif(bctx: BankContext) -> Iterator[Hit]:
    """## What it does
    Finds items whose versions in two languages behave differently in the data: persons with
    the same total score answer the item right more often in one language than in the other.
    `dpassess stats` measures it when persons read one administration in different languages
    (a `language` column, or Moodle's language of each attempt): the Mantel-Haenszel common
    odds ratio across total-score strata on the ETS delta scale (MH D-DIF), with the ETS
    categories A (negligible), B (moderate) and C (large: |MH D-DIF| at least 1.5 and
    significantly above 1). The rule reports category C in the item's latest record, once at
    least 30 persons read it in each language.

    ## Why is this bad?
    The Indonesian and the English version of the item do not measure the same thing: one
    group of equally able students is penalised by the translation, not by what they know.
    Translation review reads the words; this is the data's side of the check.

    ## Example
    An item whose English version names the key's technical term while the Indonesian
    version paraphrases it: MH D-DIF = -2.1 (harder in Indonesian), 120 persons in each.

    ## Use instead
    Versions that ask the same thing with the same clues, checked by a bilingual reviewer.
    """
    return _hits(checks.translation_dif(bctx.bank))
