"""Responses -> classical item analysis: difficulty, discrimination (upper/lower 27% index and
corrected point-biserial), distractor analysis, reliability (KR-20, Cronbach's alpha, SEM,
alpha if item deleted) and the flags that follow from them.

Every formula is written out in docs/stats.md. Variances are population variances (divided by
n), so KR-20 and alpha agree on right/wrong items. Sums are `math.fsum` (exactly rounded), so the
figures do not depend on the order of the persons or on the machine.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from dpassess.diagnostics import Diagnostic, UsageError
from dpassess.model import Bank
from dpassess.stats.responses import Column, Responses, Source
from dpassess.stats.scoring import is_distractor

#: Share of persons in each of the upper and lower groups (rounded up).
GROUP_PERCENT = 27

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
    #: persons who had the item (omitted and missing answers included, scored 0)
    n: int
    omitted: int
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

    def item(self, item_id: str) -> ItemStats:
        return next(s for s in self.items if s.item == item_id)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (see docs/stats.md): items, test, and where the data came from."""
        items = []
        for s in self.items:
            d = asdict(s)
            d["options"] = {o["option"]: {k: v for k, v in o.items() if k != "option"}
                            for o in d["options"]}
            d["flags"] = list(s.flags)
            items.append(d)
        test = asdict(self.test)
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
            },
            "thresholds": asdict(self.thresholds),
        }


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _var(values: Sequence[float], mean: float) -> float:
    return math.fsum((v - mean) ** 2 for v in values) / len(values)


def _zero(var: float, scale: float) -> bool:
    """A variance that is rounding noise (rest totals of fractional scores)."""
    return var <= 1e-24 * max(1.0, scale)


def analyse(responses: Responses, thresholds: Thresholds | None = None) -> Analysis:
    """The classical item analysis of `responses` (items in bank order).

    Raises UsageError when the forms in the file hold different items (analyse one at a
    time): the total scores of persons on different forms do not measure the same thing.
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
    scores = [array("d", (0.0 if math.isnan(s) else s for s in c.scores)) for c in cols]
    totals = [math.fsum(t) for t in zip(*scores, strict=True)]
    persons = responses.persons
    ranked = sorted(range(n), key=lambda i: (-totals[i], persons[i]))
    g = (GROUP_PERCENT * n + 99) // 100
    upper, lower = ranked[:g], ranked[n - g:]

    mean_t = _mean(totals)
    var_t = _var(totals, mean_t)
    variances = [_var(x, _mean(x)) for x in scores]
    sum_var = math.fsum(variances)
    dichotomous = all(v in (0.0, c.item.points) for c, x in zip(cols, scores, strict=True)
                      for v in x)
    items = []
    for c, x, var_x in zip(cols, scores, variances, strict=True):
        items.append(_item(c, x, var_x, totals, upper, lower, k, sum_var, th))

    alpha = kr20 = None
    if k > 1 and not _zero(var_t, mean_t ** 2):
        alpha = k / (k - 1) * (1 - sum_var / var_t)
        if dichotomous:
            pq = math.fsum(s.points ** 2 * s.p * (1 - s.p) for s in items)
            kr20 = k / (k - 1) * (1 - pq / var_t)
    sd = math.sqrt(var_t)
    histogram = Counter(round(t, 9) for t in totals)
    test = TestStats(
        n=n, k=k, points=math.fsum(c.item.points for c in cols), mean=mean_t, sd=sd,
        min=min(totals), max=max(totals), kr20=kr20, alpha=alpha,
        sem=sd * math.sqrt(1 - alpha) if alpha is not None else None, group=g,
        histogram=tuple(sorted(histogram.items())),
    )
    warnings = tuple(responses.problems.diagnostics())
    return Analysis(responses.source, tuple(items), test, th, warnings, responses.bank)


def _item(c: Column, x: Sequence[float], var_x: float, totals: list[float], upper: list[int],
          lower: list[int], k: int, sum_var: float, th: Thresholds) -> ItemStats:
    item = c.item
    n, g, pts = len(x), len(upper), item.points
    mean = _mean(x)
    p = mean / pts
    rest = [t - v for t, v in zip(totals, x, strict=True)]
    mean_r = _mean(rest)
    var_r = _var(rest, mean_r)
    r_pb = None
    if var_x > 0 and not _zero(var_r, mean_r ** 2):
        cov = math.fsum((v - mean) * (r - mean_r) for v, r in zip(x, rest, strict=True)) / n
        r_pb = cov / math.sqrt(var_x * var_r)
    d = (math.fsum(x[i] for i in upper) - math.fsum(x[i] for i in lower)) / g / pts
    alpha_del = None
    if k > 2 and not _zero(var_r, mean_r ** 2):
        alpha_del = (k - 1) / (k - 2) * (1 - (sum_var - var_x) / var_r)

    options = []
    for oid in c.options:
        bit = c.bits[oid]
        chose = [i for i, m in enumerate(c.marks) if m & bit]
        up = sum(1 for i in upper if c.marks[i] & bit)
        low = sum(1 for i in lower if c.marks[i] & bit)
        share = len(chose) / n
        wrong = is_distractor(item, oid)
        enough = share >= th.min_distractor_share
        options.append(OptionStats(
            option=oid, key=not wrong, n=len(chose), share=share,
            mean_total=math.fsum(totals[i] for i in chose) / len(chose) if chose else None,
            upper=up / g, lower=low / g,
            works=(enough and low > up) if wrong else None,
            second_key=wrong and enough and up > low,
        ))
    missing = sum(1 for line in c.lines if not line)
    omitted = sum(1 for line, o in zip(c.lines, c.omits, strict=True) if line and o)
    return ItemStats(
        item=item.id, type=item.type.value, points=pts, n=n, omitted=omitted, missing=missing,
        mean=mean, p=p, d=d, r_pb=r_pb, alpha_if_deleted=alpha_del,
        difficulty_band=("hard" if p < th.hard_below else "easy" if p > th.easy_above
                         else "medium"),
        discrimination_band=("negative" if d < 0 else "poor" if d < th.fair else "fair"
                             if d < th.good else "good" if d < th.excellent else "excellent"),
        options=tuple(options),
        flags=_flags(p, d, r_pb, options, th),
    )


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
