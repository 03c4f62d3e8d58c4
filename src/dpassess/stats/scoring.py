"""A person's response to an item -> the points it earns, by the item's own grading.

One `match` over the scored item classes, ending in `assert_never`, per way of grading (whether
a response can be graded, its score): a new scored item type adds its case here and mypy names
the place. What an item's options are, whether it takes one mark and which options are
distractors, each type says itself (`choice_ids`, `takes_one`, `is_distractor` in the model). Grading follows the LMS the items are exported to
(Moodle's rules for numerical units, short-answer wildcards, matching and ordering partial
credit), so that a paper administration is scored as the LMS would score it.
"""

from __future__ import annotations

import math
import re
import unicodedata
from bisect import bisect_left
from dataclasses import dataclass
from typing import assert_never

from dpassess.model import (
    ChoiceGap,
    Cloze,
    Essay,
    Item,
    Matching,
    MultipleResponse,
    MultipleResponseGap,
    Numerical,
    NumericalGap,
    Ordering,
    ShortAnswer,
    ShortAnswerGap,
    SingleChoice,
    TrueFalse,
    is_scored,
)


@dataclass(frozen=True, slots=True)
class Response:
    """What a person answered: the option ids chosen (choice items), a typed answer (numerical,
    short answer, essay), the option ids in the order given (ordering), or (premise, response)
    pairs (matching); none of them = omitted."""

    chosen: frozenset[str] = frozenset()
    typed: str | None = None
    order: tuple[str, ...] = ()
    pairs: tuple[tuple[str, str], ...] = ()
    #: A cloze item's response: each gap's own response, by gap id.
    parts: tuple[tuple[str, Response], ...] = ()

    @property
    def omitted(self) -> bool:
        return not self.chosen and not (self.typed or "").strip() and not self.order \
            and not self.pairs and all(r.omitted for _, r in self.parts)


OMITTED = Response()

#: A number at the start of a typed answer (decimal point or comma, optional exponent); linear.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:[.,][0-9]*)?|[.,][0-9]+)(?:[eE][+-]?[0-9]{1,4})?")


def gradable(item: Item, response: Response) -> bool:
    """Whether `score` grades `response` by the item's own rules; else only a score given with
    it says what it earns (an essay; an LMS's text of an order or a matching)."""
    if not is_scored(item):  # text only: earns nothing, whatever the response
        return True
    match item:
        case SingleChoice() | MultipleResponse() | TrueFalse() | Numerical() | ShortAnswer():
            return True
        case Matching():
            return response.omitted or bool(response.pairs)
        case Ordering():
            return response.omitted or bool(response.order)
        case Essay():
            return response.omitted
        case Cloze():
            return response.omitted or bool(response.parts)
        case _:
            assert_never(item)


def score(item: Item, response: Response) -> float:
    """Points earned, between 0 and `item.points`. An omitted item earns 0.

    single_choice, true_false: the chosen option's fraction (full points for the key; a
    single_choice item's `weights` give other options theirs); several marks earn nothing (a
    double-marked answer sheet). multiple_response: the chosen options' fractions summed, kept
    between 0 and 1, times the points, as Moodle grades a multiple-answer question. numerical,
    short_answer: the fraction of the first answer that accepts the typed text. matching: an
    equal share per right pair. ordering: as the item's `grading` says (Moodle's rules). essay:
    0 (an essay is scored by a grader: the responses file's score column).
    """
    if response.omitted:
        return 0.0
    if not is_scored(item):  # text only
        return 0.0
    match item:
        case SingleChoice() | TrueFalse():
            if len(response.chosen) != 1:
                return 0.0
            return item.fractions().get(next(iter(response.chosen)), 0.0) * item.points
        case MultipleResponse():
            fractions = item.fractions()
            total = math.fsum(fractions[o] for o in sorted(response.chosen))
            return min(max(total, 0.0), 1.0) * item.points
        case Numerical():
            return numerical_fraction(item, response.typed or "") * item.points
        case ShortAnswer():
            return short_answer_fraction(item, response.typed or "") * item.points
        case Matching():
            given = dict(response.pairs)
            hits = sum(1 for pid in item.pairs if given.get(pid) == pid)
            return hits / len(item.pairs) * item.points
        case Ordering():
            return ordering_fraction(item.options, response.order, item.grading) * item.points
        case Essay():
            return 0.0
        case Cloze():
            parts = dict(response.parts)
            return math.fsum(gap_fraction(item, g.id, parts.get(g.id, OMITTED))
                             * item.gap_share(g.id) for g in item.gaps) * item.points
        case _:
            assert_never(item)


def gap_fraction(item: Cloze, gap_id: str, response: Response) -> float:
    """The fraction of its own points a cloze gap's response earns, by the gap's grading (as
    the item of the same kind grades: short-answer wordings in any language, a number within
    a tolerance or range, the chosen option's fraction, several options summed and kept
    between 0 and 1)."""
    if response.omitted:
        return 0.0
    gap = item.gap(gap_id)
    match gap:
        case ShortAnswerGap():
            def norm(s: str) -> str:
                s = unicodedata.normalize("NFC", s)
                return s if gap.case_sensitive else s.casefold()

            text = norm((response.typed or "").strip())
            for answer in gap.answers:
                for content in item.text.values():
                    wordings = content.gaps[gap.id].answers.get(answer.id, ()) \
                        if gap.id in content.gaps else ()
                    if any(wildcard_match(norm(w), text) for w in wordings):
                        return answer.fraction
            return 0.0
        case NumericalGap():
            parsed = parse_number(response.typed or "")
            if parsed is None or parsed[1]:
                return 0.0
            return next((a.fraction for a in gap.answers if a.accepts(parsed[0])), 0.0)
        case ChoiceGap():
            if len(response.chosen) != 1:
                return 0.0
            return gap.fractions().get(next(iter(response.chosen)), 0.0)
        case MultipleResponseGap():
            fractions = gap.fractions()
            total = math.fsum(fractions.get(o, 0.0) for o in sorted(response.chosen))
            return min(max(total, 0.0), 1.0)
        case _:
            assert_never(gap)


# --- numerical --------------------------------------------------------------------------------


def parse_number(text: str) -> tuple[float, str] | None:
    """The number a typed answer starts with and the rest (its unit), or None."""
    text = text.strip()
    m = _NUMBER.match(text)
    if m is None:
        return None
    digits = m.group(0)
    if "." not in digits:
        digits = digits.replace(",", ".")
    try:
        value = float(digits)
    except ValueError:
        return None
    return (value, text[m.end():].strip()) if math.isfinite(value) else None


def numerical_fraction(item: Numerical, typed: str) -> float:
    """The fraction a typed number earns: the number is divided by its unit's multiplier, then
    the first answer accepting it counts; a missing or unknown unit costs `unit_penalty` of the
    points when the item grades units (none: units are optional), except a missing one when the
    first unit is a number (`1`: a bare number is in it)."""
    parsed = parse_number(typed)
    if parsed is None:
        return 0.0
    number, unit = parsed
    multipliers = {u.unit: u.multiplier for u in item.units}
    multiplier = multipliers.get(unit)
    penalty = 0.0
    if multiplier is None:
        multiplier = 1.0
        if item.unit_penalty is not None and not (unit == "" and item.bare_number_unit):
            penalty = item.unit_penalty
    fraction = item.fraction_for(number / multiplier)
    return max(fraction - penalty, 0.0) if fraction else 0.0


# --- short answer -----------------------------------------------------------------------------


def wildcard_match(pattern: str, text: str) -> bool:
    """Whether `text` matches `pattern`, where `*` stands for any characters (`\\*` for a star):
    the pieces between stars are found left to right, each as early as it can be (linear in the
    text for each piece; the greedy choice is right because `*` matches anything)."""
    pieces = [p.replace("\x00", "*") for p in pattern.replace("\\*", "\x00").split("*")]
    if len(pieces) == 1:
        return text == pieces[0]
    first, *middle, last = pieces
    if not text.startswith(first) or len(text) < len(first) + len(last):
        return False
    pos, end = len(first), len(text) - len(last)
    for piece in middle:
        found = text.find(piece, pos, end)
        if found < 0:
            return False
        pos = found + len(piece)
    return text.endswith(last)


def short_answer_fraction(item: ShortAnswer, typed: str) -> float:
    """The fraction of the first answer (best first) one of whose wordings, in any language of
    the item, matches the typed text: trimmed, Unicode-normalised (NFC), case-folded unless the
    item is case-sensitive, `*` a wildcard, as Moodle compares them."""
    def norm(s: str) -> str:
        s = unicodedata.normalize("NFC", s)
        return s if item.case_sensitive else s.casefold()

    text = norm(typed.strip())
    for answer in item.answers:
        for content in item.text.values():
            if any(wildcard_match(norm(w), text) for w in content.answers.get(answer.id, ())):
                return answer.fraction
    return 0.0


# --- ordering (Moodle's qtype_ordering grading types) -----------------------------------------


def ordering_fraction(right: tuple[str, ...], given: tuple[str, ...], grading: str) -> float:
    """The fraction an order earns; `given` holds every option id once (a reader checks that).

    all_or_nothing: 1 for the right order only; absolute_position: the share of options at their
    own position; relative_next_exclude_last / _include_last: the share of options followed by
    the right one (the last option's "nothing after it" counted by include_last);
    relative_one_previous_and_next: the share of right neighbours (the edges' "nothing" counts);
    relative_all_previous_and_next: the share of right (before, after) relations over all pairs;
    longest_ordered_subset / longest_contiguous_subset: the longest run of options in the right
    relative order (contiguous: consecutive in the right order), over the number of options, 0
    for a run of one; relative_to_correct: each option earns n-1 less its distance from its
    position, over n(n-1).
    """
    n = len(right)
    if tuple(given) == tuple(right):
        return 1.0
    if grading == "all_or_nothing" or n < 2 or sorted(given) != sorted(right):
        return 0.0
    pos = {oid: i for i, oid in enumerate(given)}
    rank = [right.index(oid) for oid in given]  # the right position of each given option
    if grading == "absolute_position":
        return sum(1 for i, oid in enumerate(right) if given[i] == oid) / n
    if grading in ("relative_next_exclude_last", "relative_next_include_last"):
        nxt = {given[i]: given[i + 1] if i + 1 < n else None for i in range(n)}
        pairs = [(right[i], right[i + 1] if i + 1 < n else None) for i in range(n)]
        if grading == "relative_next_exclude_last":
            pairs = pairs[:-1]
        return sum(1 for a, b in pairs if nxt[a] == b) / len(pairs)
    if grading == "relative_one_previous_and_next":
        def around(order: tuple[str, ...], i: int) -> tuple[str | None, str | None]:
            return (order[i - 1] if i else None, order[i + 1] if i + 1 < n else None)
        hits = 0
        for i, oid in enumerate(right):
            prev_r, next_r = around(right, i)
            prev_g, next_g = around(given, pos[oid])
            hits += int(prev_r == prev_g) + int(next_r == next_g)
        return hits / (2 * n)
    if grading == "relative_all_previous_and_next":
        # each ordered pair (a before b) that is right counts twice (b's "before", a's "after")
        agree = sum(1 for i in range(n) for j in range(i + 1, n) if rank[i] < rank[j])
        return 2 * agree / (n * (n - 1))
    if grading == "longest_ordered_subset":
        tails: list[int] = []  # patience sorting: the longest increasing run of right positions
        for r in rank:
            k = bisect_left(tails, r)
            tails[k:k + 1] = [r]
        best = len(tails)
        return best / n if best > 1 else 0.0
    if grading == "longest_contiguous_subset":
        run: dict[int, int] = {}
        for r in rank:
            run[r] = run.get(r - 1, 0) + 1
        best = max(run.values())
        return best / n if best > 1 else 0.0
    if grading == "relative_to_correct":
        earned = sum(max(n - 1 - abs(i - pos[oid]), 0) for i, oid in enumerate(right))
        return earned / (n * (n - 1))
    raise ValueError(f"no ordering grading {grading!r}")
