"""Responses -> classical item analysis: difficulty, discrimination (upper/lower 27% index and
corrected point-biserial), distractor analysis, reliability (KR-20, Cronbach's alpha, SEM,
alpha if item deleted) and the flags that follow from them.

Every formula is written out in docs/stats.md. Variances are population variances (divided by
n), so KR-20 and alpha agree on right/wrong items. Sums are `math.fsum` (exactly rounded), so the
figures do not depend on the order of the persons or on the machine.
"""

from __future__ import annotations

import hashlib
import math
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from itertools import compress, repeat
from operator import and_, mul, sub
from typing import Any, cast

from dpassess.diagnostics import Diagnostic, Severity, UsageError
from dpassess.model import Bank
from dpassess.stats.dif import Dif, dif
from dpassess.stats.responses import Column, Responses, Source

#: Share of persons in each of the upper and lower groups (rounded up).
GROUP_PERCENT = 27

#: An item whose corrected point-biserial is at or below this contradicts its key strongly ...
MISFIT_R_PB = -0.20
#: ... and a key contradicted on at least this many items (and this share of them), with at
#: least MISFIT_N persons, does not fit the answers.
MISFIT_ITEMS = 2
MISFIT_SHARE = 0.10
MISFIT_N = 20

#: Every flag, in the order they are listed.
FLAGS = (
    "negative-discrimination",
    "low-discrimination",
    "too-hard",
    "too-easy",
    "possible-second-key",
    "non-functional-distractor",
)


@dataclass(frozen=True)
class Thresholds:
    """Where the flags and bands start (see docs/stats.md for the conventions behind them)."""

    #: too-hard below this p
    too_hard: float = 0.20
    #: too-easy above this p
    too_easy: float = 0.90
    #: low-discrimination below this D ...
    min_d: float = 0.20
    #: ... or below this corrected point-biserial
    min_r_pb: float = 0.20
    #: a distractor works when chosen by at least this share (and by more low than high scorers)
    min_distractor_share: float = 0.05
    #: difficulty bands (tingkat kesukaran): hard below, easy above, medium between
    hard_below: float = 0.30
    easy_above: float = 0.70
    #: discrimination bands (daya pembeda) by D: poor below fair, fair, good, excellent from
    fair: float = 0.20
    good: float = 0.40
    excellent: float = 0.70

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int | float) or not 0 <= value <= 1:
                raise UsageError(f"threshold {f.name} = {value!r}: expected a number from 0 to 1")
        for low, high in (("too_hard", "too_easy"), ("hard_below", "easy_above"),
                          ("fair", "good"), ("good", "excellent")):
            if getattr(self, low) > getattr(self, high):
                raise UsageError(f"threshold {low} ({getattr(self, low)}) is above {high} "
                                 f"({getattr(self, high)})")


@dataclass(frozen=True, slots=True)
class OptionStats:
    """Who chose one option: count, share of all persons, their mean total score, and the
    share of the upper and of the lower group that chose it."""

    option: str
    key: bool
    n: int
    share: float
    mean_total: float | None
    upper: float
    lower: float
    #: a distractor chosen by enough persons, more of them low than high scorers (None: a key)
    works: bool | None
    #: a distractor chosen by enough persons, more of them high than low scorers
    second_key: bool


@dataclass(frozen=True, slots=True)
class ItemStats:
    item: str
    type: str
    points: float
    #: persons who received the item (omitted answers included, scored 0)
    n: int
    #: persons who left it empty
    omitted: int
    #: persons who did not receive it (no row, a slot never reached): not in n
    missing: int
    mean: float
    p: float
    d: float
    r_pb: float | None
    alpha_if_deleted: float | None
    difficulty_band: str
    discrimination_band: str
    options: tuple[OptionStats, ...]
    flags: tuple[str, ...]
    #: Moodle's Statistics report, under its names (docs/stats.md): facility index = 100 p;
    #: discrimination index = 100 r_pb; discriminative efficiency = 100 cov(x, rest) / the
    #: largest cov the two score lists allow (each sorted)
    facility_index: float = 0.0
    discrimination_index: float | None = None
    discriminative_efficiency: float | None = None
    #: a cloze item's gaps: (gap id, p: the mean fraction of the gap's points earned)
    gaps: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class TestStats:
    n: int
    k: int
    points: float
    mean: float
    sd: float
    min: float
    max: float
    kr20: float | None
    alpha: float | None
    sem: float | None
    #: persons in each of the upper and lower groups
    group: int
    #: (total score, persons with it), by score
    histogram: tuple[tuple[float, int], ...]


@dataclass(frozen=True)
class Analysis:
    """The item analysis of one administration."""

    source: Source
    items: tuple[ItemStats, ...]
    test: TestStats
    thresholds: Thresholds
    #: warnings found while reading (errors stop the reading)
    warnings: tuple[Diagnostic, ...]
    bank: Bank = field(repr=False, compare=False)
    #: the form analysed when a file's forms hold different items ("" for the whole file)
    form: str = ""
    #: what identifies each attempt (hashed: no student id is stored), sorted
    attempts: tuple[str, ...] = field(default=(), repr=False, compare=False)
    #: items whose answers contradict the key strongly, when several do (`key_misfit`)
    misfit: tuple[str, ...] = ()
    #: DIF between the languages persons read the test in (`stats.dif`), items in bank order
    dif: tuple[Dif, ...] = ()

    def item(self, item_id: str) -> ItemStats:
        return next(s for s in self.items if s.item == item_id)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (see docs/stats.md): items, test, and where the data came from."""
        items = []
        for s in self.items:
            d = asdict(s)
            d["options"] = {o["option"]: {k: v for k, v in o.items() if k != "option"}
                            for o in d["options"]}
            if d["gaps"]:  # a cloze item's p of each gap, by gap id
                d["gaps"] = dict(d["gaps"])
            else:
                del d["gaps"]
            d["flags"] = list(s.flags)
            items.append(d)
        test = asdict(self.test)
        dif_rows = [asdict(d) for d in self.dif]
        test["histogram"] = [{"score": score, "n": n} for score, n in self.test.histogram]
        return {
            "items": items,
            "test": test,
            "administration": {
                "responses": self.source.path,
                "format": self.source.format,
                "sha256": self.source.sha256,
                "bank": self.source.bank,
                "forms": list(self.source.forms),
                "rows": self.source.rows,
                **({"form": self.form} if self.form else {}),
            },
            "thresholds": asdict(self.thresholds),
            **({"dif": dif_rows} if dif_rows else {}),
        }


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _var(values: Sequence[float], mean: float) -> float:
    # (v - mean) ** 2 for each v, summed; map() over C functions: the same operations, faster
    return math.fsum(map(pow, map(sub, values, repeat(mean)), repeat(2))) / len(values)


def _cov(x: Sequence[float], mean_x: float, y: Sequence[float], mean_y: float) -> float:
    """The sum of (x - mean_x) (y - mean_y) over the pairs (not divided)."""
    return math.fsum(map(mul, map(sub, x, repeat(mean_x)), map(sub, y, repeat(mean_y))))


def _has_nan(values: Sequence[float]) -> bool:
    return any(map(math.isnan, values))


def _copies(pairs: Iterable[tuple[float, int]]) -> float:
    """`math.fsum` of `count` copies of each `value` of the (value, count) pairs, without the
    copies. It is the same float as the sum of the copies, because fsum rounds the exact sum
    once and count x value is exactly the sum of value x 2**k over the bits k of count (a
    power of two scales a float exactly)."""
    parts: list[float] = []
    for value, count in pairs:
        k = 0
        while count:
            if count & 1:
                parts.append(math.ldexp(value, k))
            count >>= 1
            k += 1
    return math.fsum(parts)


class _Values:
    """A list of numbers as its distinct values with their counts, in increasing order: its
    mean, variance and sorted order at the cost of a count (scores and totals repeat a few
    values over many persons). Every figure is the float the sums over the list give."""

    __slots__ = ("n", "runs", "values")

    def __init__(self, values: Sequence[float]) -> None:
        self.values = values
        self.n = len(values)
        self.runs = sorted(Counter(values).items())

    def mean(self) -> float:
        if len(self.runs) == 1 and self.runs[0][0] == 0:  # 0.0 and -0.0 count as one value
            return _mean(self.values)
        return _copies(self.runs) / self.n

    def var(self, mean: float) -> float:
        """As `_var(values, mean)`."""
        return _copies(((v - mean) ** 2, c) for v, c in self.runs) / self.n

    def cov_sorted(self, mean: float, other: _Values, other_mean: float) -> float:
        """As `_cov(sorted(values), mean, sorted(other.values), other_mean)` (same length)."""
        return _copies(((v - mean) * (w - other_mean), c) for v, w, c in _paired(self.runs,
                                                                               other.runs))


def _paired(a: list[tuple[float, int]], b: list[tuple[float, int]]
            ) -> Iterator[tuple[float, float, int]]:
    """The runs of (a's value, b's value) when two sorted lists of equal length, given as runs
    of (value, count), are zipped."""
    i = j = 0
    left_a, left_b = a[0][1], b[0][1]
    while True:
        take = min(left_a, left_b)
        yield a[i][0], b[j][0], take
        left_a -= take
        left_b -= take
        if not left_a:
            i += 1
            if i == len(a):
                return
            left_a = a[i][1]
        if not left_b:
            j += 1
            left_b = b[j][1]


def _zero(var: float, scale: float) -> bool:
    """A variance that is rounding noise (rest totals of fractional scores)."""
    return var <= 1e-24 * max(1.0, scale)


def group_weights(ranked: Sequence[int], totals: Sequence[float], g: int) -> dict[int, float]:
    """Each person's share of membership in a group of `g` taken from the front of `ranked`
    (persons in order, best first for the upper group). A tied group that straddles the group's
    edge is shared equally: each of its m members counts (places left)/m, so the group's figures
    are the average over every way of breaking the tie, and relabelling persons changes
    nothing."""
    weights: dict[int, float] = {}
    left = g
    i = 0
    while left > 0 and i < len(ranked):
        j = i
        while j < len(ranked) and totals[ranked[j]] == totals[ranked[i]]:
            j += 1
        size = j - i
        share = 1.0 if size <= left else left / size
        for person in ranked[i:j]:
            weights[person] = share
        left -= min(size, left)
        i = j
    return weights


def analyse(responses: Responses, thresholds: Thresholds | None = None, *,
            form: str = "") -> Analysis:
    """The classical item analysis of `responses` (items in bank order).

    An item a person did not receive (no row, an unreached slot) is left out of that item's
    figures: its n counts the persons who received it. Reliability (KR-20, alpha, alpha if
    deleted) rests on the persons who received every item.

    Raises UsageError when the forms in the file hold different items (`analyse_forms` analyses
    each form apart): the total scores of persons on different forms do not measure the same
    thing.
    """
    th = thresholds or Thresholds()
    forms = {form: frozenset(items) for form, items in responses.form_items.items()}
    if len(set(forms.values())) > 1:
        names = ", ".join(f"{f or '(none)'} ({len(i)} items)" for f, i in sorted(forms.items()))
        raise UsageError(f"the forms of {responses.source.path} hold different items ({names}): "
                         "analyse one form at a time")
    order = {item.id: i for i, item in enumerate(responses.bank)}
    cols = sorted(responses.columns.values(), key=lambda c: order[c.item.id])
    n, k = responses.n, len(cols)
    raw = [c.scores for c in cols]
    gaps = any(_has_nan(s) for s in raw)  # some persons did not receive some items
    totals = [math.fsum(s for s in t if not math.isnan(s)) for t in zip(*raw, strict=True)] \
        if gaps else list(map(math.fsum, zip(*raw, strict=True)))
    groups: dict[str, object] = {}
    done = [_item(c, totals, th, groups) for c in cols]
    items = [s for s, _ in done]

    complete = [i for i in range(n) if all(not math.isnan(s[i]) for s in raw)] if gaps \
        else list(range(n))
    alpha = kr20 = None
    alpha_del: list[float | None] = [None] * k
    if len(complete) > 1:
        every = len(complete) == n
        kept = raw if every else [array("d", (s[i] for i in complete)) for s in raw]
        sub_totals = totals if every else [totals[i] for i in complete]
        mean_c = _mean(sub_totals)
        var_c = _var(sub_totals, mean_c)
        # an item's variance and its rest scores' mean and variance: as `_item` found them
        # when every person received every item
        variances = [v for _, (v, _, _) in done] if every else [_var(x, _mean(x)) for x in kept]
        sum_var = math.fsum(variances)
        if k > 1 and not _zero(var_c, mean_c ** 2):
            alpha = k / (k - 1) * (1 - sum_var / var_c)
            if all(set(x) <= {0.0, c.item.points} for c, x in zip(cols, kept, strict=True)):
                pq = math.fsum(c.item.points ** 2 * (_mean(x) / c.item.points)
                               * (1 - _mean(x) / c.item.points) for c, x in zip(cols, kept, strict=True))
                kr20 = k / (k - 1) * (1 - pq / var_c)
        if k > 2:
            for j, (x, var_x) in enumerate(zip(kept, variances, strict=True)):
                if every:
                    _, mean_r, var_r = done[j][1]
                else:
                    rest = list(map(sub, sub_totals, x))
                    mean_r = _mean(rest)
                    var_r = _var(rest, mean_r)
                if not _zero(var_r, mean_r ** 2):
                    alpha_del[j] = (k - 1) / (k - 2) * (1 - (sum_var - var_x) / var_r)
    items = [replace(s, alpha_if_deleted=a) for s, a in zip(items, alpha_del, strict=True)]

    mean_t = _mean(totals)
    sd = math.sqrt(_var(totals, mean_t))
    g = (GROUP_PERCENT * n + 99) // 100
    histogram = Counter(round(t, 9) for t in totals)
    test = TestStats(
        n=n, k=k, points=math.fsum(c.item.points for c in cols), mean=mean_t, sd=sd,
        min=min(totals), max=max(totals), kr20=kr20, alpha=alpha,
        sem=sd * math.sqrt(1 - alpha) if alpha is not None else None, group=g,
        histogram=tuple(sorted(histogram.items())),
    )
    warnings = tuple(responses.problems.diagnostics())
    misfit = key_misfit(items, n)
    if misfit:
        shown = ", ".join(misfit[:8]) + (", ..." if len(misfit) > 8 else "")
        warnings += (Diagnostic(
            responses.source.path, 0, 0, "key",
            f"THE ANSWER KEY DOES NOT FIT THESE ANSWERS: {len(misfit)} of {k} items have a "
            f"strongly negative discrimination (r_pb <= {MISFIT_R_PB:.2f}: {shown}). Most "
            "likely the key of another form (a sheet of form B read with form A's key file, or "
            "a sheet without its form letter), or answers shifted by one question; check the "
            "sheet's form letter against the key file before trusting or recording these "
            "figures", "stats", Severity.warning),)
    bank_id = responses.bank.config.id
    attempts = tuple(sorted({attempt_hash(bank_id, responses.attempt_of(i)) for i in range(n)}))
    return Analysis(responses.source, tuple(items), test, th, warnings, responses.bank,
                    form, attempts, misfit, _dif(responses, cols, totals))


def _dif(responses: Responses, cols: list[Column], totals: list[float]) -> tuple[Dif, ...]:
    """Each item's DIF between the bank's default language (else the most read one) and each
    other language persons read the test in; () when they all read one language."""
    langs = [responses.language_of(i) for i in range(responses.n)]
    counts = Counter(la for la in langs if la)
    if len(counts) < 2:
        return ()
    default = responses.bank.config.default_language
    reference = default if default in counts else min(counts, key=lambda la: (-counts[la], la))
    out = []
    for c in cols:
        got = [i for i, v in enumerate(c.scores) if not math.isnan(v) and langs[i]]
        right = [c.scores[i] >= c.item.points - 1e-9 for i in got]
        strata = [round(totals[i], 9) for i in got]
        for focal in sorted(counts):
            if focal != reference:
                out.append(dif(c.item.id, right, [langs[i] for i in got], strata, reference,
                               focal))
    return tuple(out)


def key_misfit(items: Sequence[ItemStats], n: int) -> tuple[str, ...]:
    """The items whose r_pb is at or below MISFIT_R_PB, when they are at least MISFIT_ITEMS and
    MISFIT_SHARE of the items, with at least MISFIT_N persons: a key that contradicts the data
    (one such item is a miskeyed item; several, a wrong key file). Else ()."""
    bad = tuple(s.item for s in items if s.r_pb is not None and s.r_pb <= MISFIT_R_PB)
    if n >= MISFIT_N and len(bad) >= MISFIT_ITEMS and len(bad) >= MISFIT_SHARE * len(items):
        return bad
    return ()


def attempt_hash(bank: str, key: str) -> str:
    """An attempt's key, hashed with the bank's id: records name no student."""
    return hashlib.sha256(f"{bank}\x1f{key}".encode()).hexdigest()[:16]


def analyse_forms(responses: Responses, thresholds: Thresholds | None = None) -> list[Analysis]:
    """The analysis of each administration in `responses`: one for the whole file when its forms
    hold the same items (forms that only shuffle), else one per form (persons on forms with
    different items have totals that measure different things)."""
    forms = {form: frozenset(items) for form, items in responses.form_items.items()}
    if len(set(forms.values())) <= 1:  # one administration (one form of several: named)
        return [analyse(responses, thresholds, form=responses.source.only)]
    return [analyse(responses.only_form(f), thresholds, form=f) for f in responses.forms()]


def _item(c: Column, all_totals: list[float], th: Thresholds,
          groups: dict[str, object] | None = None
          ) -> tuple[ItemStats, tuple[float, float, float]]:
    """One item's figures over the persons who received it, and the variance of its scores
    and the mean and variance of the rest scores (the total without the item). `groups`: a
    memo of the upper and lower groups of `all_totals`, shared by the items every person
    received."""
    item = c.item
    every = not _has_nan(c.scores)
    got = range(len(c.scores)) if every else [i for i, s in enumerate(c.scores) if not math.isnan(s)]
    x: Sequence[float] = c.scores if every else array("d", (c.scores[i] for i in got))
    totals: Sequence[float] = all_totals if every else array("d", (all_totals[i] for i in got))
    marks: Sequence[int] = c.marks if every else array("Q", (c.marks[i] for i in got))
    n, pts = len(x), item.points
    xs = _Values(x)
    mean = xs.mean()
    var_x = xs.var(mean)
    p = mean / pts
    rest = list(map(sub, totals, x))
    rs = _Values(rest)
    mean_r = rs.mean()
    var_r = rs.var(mean_r)
    r_pb = efficiency = None
    if var_x > 0 and not _zero(var_r, mean_r ** 2):
        cov = _cov(x, mean, rest, mean_r) / n
        r_pb = cov / math.sqrt(var_x * var_r)
        cov_max = xs.cov_sorted(mean, rs, mean_r) / n
        efficiency = 100 * cov / cov_max if cov_max > 0 else None
    g = (GROUP_PERCENT * n + 99) // 100
    memo = groups if every and groups is not None else {}
    if "upper" not in memo:
        # best first; ties keep the persons' order (a stable sort, reversed stably)
        by_total = sorted(range(n), key=totals.__getitem__, reverse=True)
        memo["upper"] = group_weights(by_total, totals, g)
        memo["lower"] = group_weights(by_total[::-1], totals, g)
    upper = cast(dict[int, float], memo["upper"])
    lower = cast(dict[int, float], memo["lower"])
    up_who, up_w = list(upper), list(upper.values())
    low_who, low_w = list(lower), list(lower.values())
    d = (math.fsum(map(mul, up_w, map(x.__getitem__, up_who)))
         - math.fsum(map(mul, low_w, map(x.__getitem__, low_who)))) / g / pts

    options = []
    up_marks = list(map(marks.__getitem__, up_who))
    low_marks = list(map(marks.__getitem__, low_who))
    for oid in c.options if c.chosen_known else ():
        bit = c.bits[oid]
        chose = list(map(and_, marks, repeat(bit)))  # nonzero: the person chose the option
        count = n - chose.count(0)
        up = math.fsum(compress(up_w, map(and_, up_marks, repeat(bit))))
        low = math.fsum(compress(low_w, map(and_, low_marks, repeat(bit))))
        share = count / n
        wrong = item.is_distractor(oid)
        enough = share >= th.min_distractor_share
        options.append(OptionStats(
            option=oid, key=not wrong, n=count, share=share,
            mean_total=math.fsum(compress(totals, chose)) / count if count else None,
            upper=up / g, lower=low / g,
            works=(enough and low > up) if wrong else None,
            second_key=wrong and enough and up > low,
        ))
    missing = len(c.scores) - n
    omitted = sum(c.omits) if every else sum(1 for i in got if c.omits[i])
    gaps = []
    for gid, fractions in c.gaps.items():
        known = [f for f in fractions if not math.isnan(f)]
        if known:
            gaps.append((gid, _mean(known)))
    stats = ItemStats(
        item=item.id, type=item.type.value, points=pts, n=n, omitted=omitted, missing=missing,
        mean=mean, p=p, d=d, r_pb=r_pb, alpha_if_deleted=None,
        difficulty_band=("hard" if p < th.hard_below else "easy" if p > th.easy_above
                         else "medium"),
        discrimination_band=("negative" if d < 0 else "poor" if d < th.fair else "fair"
                             if d < th.good else "good" if d < th.excellent else "excellent"),
        options=tuple(options),
        flags=_flags(p, d, r_pb, options, th),
        facility_index=100 * p,
        discrimination_index=100 * r_pb if r_pb is not None else None,
        discriminative_efficiency=efficiency,
        gaps=tuple(gaps),
    )
    return stats, (var_x, mean_r, var_r)


def _flags(p: float, d: float, r_pb: float | None, options: list[OptionStats],
           th: Thresholds) -> tuple[str, ...]:
    on = set()
    if d < 0 or (r_pb is not None and r_pb < 0):
        on.add("negative-discrimination")
    elif d < th.min_d or (r_pb is not None and r_pb < th.min_r_pb):
        on.add("low-discrimination")
    if p < th.too_hard:
        on.add("too-hard")
    if p > th.too_easy:
        on.add("too-easy")
    if any(o.second_key for o in options):
        on.add("possible-second-key")
    if any(o.works is False and not o.second_key for o in options):
        on.add("non-functional-distractor")
    return tuple(f for f in FLAGS if f in on)
