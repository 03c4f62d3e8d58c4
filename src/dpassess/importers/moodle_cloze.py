"""The text of a Moodle cloze (`multianswer`) question -> its gaps, read as
`qtype_multianswer_extract_question` reads them, and Moodle's reasons to refuse it
(`qtype_multianswer_validate_question`).

Moodle finds each `{n:TYPE:alternatives}` with a backtracking regular expression (PCRE), then
reads the alternatives with a second one. This module gives the same answers in linear time, by
parsing instead of backtracking:

- The gap. After `{n:TYPE:` comes `ALT(~ALT)*}`; an ALT is an optional fraction (`=` or
  `%50%`), an answer (one character or more, ending before a `~`, `#` or `}` that no `\\`, `&`
  or `&amp;` precedes) and an optional `#feedback` (ending before a `~` or `}` that no `\\`
  precedes). An answer may run over such a `~`, `#` or `}` when the text after it cannot end the
  gap: PCRE backtracks into it (`{1:SA:=a~}` is one answer, `a`, then a second, `~`). Which
  ends can lead to a closing `}` is computed once, right to left (`_Ends`); the gap is then read
  left to right taking, at each choice, the first option PCRE would try that can still succeed
  (a fraction before none, the shortest answer, the shortest feedback before none, one more
  alternative before the closing `}`): the match PCRE finds.
- Which gap. PCRE's match starts at the first `{n:TYPE:` from which a gap can be read; if the
  first `{n:TYPE:` cannot start one, no later one can either (its first answer could run up to
  any later gap's first answer end), so the question has no more gaps.
- The alternatives. Moodle then reads the gap's body (between `{n:TYPE:` and its `}`) again,
  one `~?ALT` after another, as a string of its own: an answer may also end at the body's end
  (or before a last newline), and the shortest answer and feedback are taken.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

#: Moodle's gap types: (kind, single, shuffle, layout), by every name Moodle reads.
_TYPES: dict[str, tuple[str, bool, bool, str]] = {}
for _names, _spec in (
    (("NUMERICAL", "NM"), ("numerical", True, False, "")),
    (("SHORTANSWER", "SA", "MW"), ("shortanswer", True, False, "")),
    (("SHORTANSWER_C", "SAC", "MWC"), ("shortanswer_c", True, False, "")),
    (("MULTICHOICE", "MC"), ("multichoice", True, False, "dropdown")),
    (("MULTICHOICE_V", "MCV"), ("multichoice", True, False, "vertical")),
    (("MULTICHOICE_H", "MCH"), ("multichoice", True, False, "horizontal")),
    (("MULTICHOICE_S", "MCS"), ("multichoice", True, True, "dropdown")),
    (("MULTICHOICE_VS", "MCVS"), ("multichoice", True, True, "vertical")),
    (("MULTICHOICE_HS", "MCHS"), ("multichoice", True, True, "horizontal")),
    (("MULTIRESPONSE", "MR"), ("multichoice", False, False, "vertical")),
    (("MULTIRESPONSE_H", "MRH"), ("multichoice", False, False, "horizontal")),
    (("MULTIRESPONSE_S", "MRS"), ("multichoice", False, True, "vertical")),
    (("MULTIRESPONSE_HS", "MRHS"), ("multichoice", False, True, "horizontal")),
):
    for _name in _names:
        _TYPES[_name] = _spec

_VALID_NUMBER = re.compile(r"\s*[+-]?(\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?\s*")
_MAX_NAME = max(map(len, _TYPES))


@dataclass
class Gap:
    """One gap as Moodle saves it: its answers (text, HTML for a choice), their fractions,
    feedback (HTML) and tolerances."""

    kind: str  # numerical, shortanswer, multichoice
    weight: float
    case_sensitive: bool = False
    single: bool = True
    shuffle: bool = False
    layout: str = ""
    answers: list[str] = field(default_factory=list)
    fractions: list[float] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)
    tolerances: list[float] = field(default_factory=list)
    #: each answer and its feedback as the text has them (before decoding), for messages
    raw_answers: list[str] = field(default_factory=list)
    raw_feedback: list[str] = field(default_factory=list)


_DIGITS = frozenset("0123456789")  # PCRE's [0-9]: ASCII digits only


def _digits_end(text: str, i: int, end: int) -> int:
    """Where the run of ASCII digits at `i` ends (`i` when there is none), before `end`."""
    while i < end and text[i] in _DIGITS:
        i += 1
    return i

#: Never a position of the text (the ends' tables hold it where no end follows).
_NONE = -1


def extract(text: str) -> tuple[str, list[Gap]]:
    """The text with each gap replaced by `[[g<n>]]`, and the gaps in order."""
    out: list[str] = []
    gaps: list[Gap] = []
    pos = 0
    ends: _Ends | None = None
    i = text.find("{")
    while i != -1:
        start = _start(text, i)
        if start is None:
            i = text.find("{", i + 1)
            continue
        gap, body = start
        if ends is None:
            ends = _Ends(text, body)  # from the first gap on: no gap starts before it
        close = ends.gap_end(body)
        if close is None:  # PCRE finds no match here, so none further on
            break
        _read_alternatives(gap, text, body, close)
        gaps.append(gap)
        out.append(text[pos:i])
        out.append(f"[[g{len(gaps)}]]")
        pos = close + 1
        i = text.find("{", pos)
    out.append(text[pos:])
    return "".join(out), gaps


def _start(text: str, start: int) -> tuple[Gap, int] | None:
    """The gap whose `{n:TYPE:` is at `start` (its answers still to read), and where its
    alternatives begin; None if `start` holds no `{n:TYPE:`."""
    i = start + 1
    j = i
    j = _digits_end(text, j, len(text))
    if j >= len(text) or text[j] != ":":
        return None
    norm = text[i:j]
    k = text.find(":", j + 1, j + 2 + _MAX_NAME)
    if k == -1 or text[j + 1:k] not in _TYPES:
        return None
    kind, single, shuffle, layout = _TYPES[text[j + 1:k]]
    gap = Gap("shortanswer" if kind == "shortanswer_c" else kind, float(norm) if norm else 1.0,
              case_sensitive=kind == "shortanswer_c", single=single, shuffle=shuffle,
              layout=layout)
    return gap, k + 1


def _fraction(text: str, p: int, end: int) -> tuple[int, str] | None:
    """The fraction `=` or `%-12.5%` at `p` (before `end`): where it ends, and `=` or the
    number between the `%`; None if there is none (`=|%(-?[0-9]+(?:[.,][0-9]*)?)%`)."""
    if p >= end:
        return None
    if text[p] == "=":
        return p + 1, "="
    if text[p] != "%":
        return None
    q = p + 1
    if q < end and text[q] == "-":
        q += 1
    digits = q
    q = _digits_end(text, q, end)
    if q == digits:
        return None
    if q < end and text[q] in ".,":
        q += 1
        q = _digits_end(text, q, end)
    if q < end and text[q] == "%":
        return q + 1, text[p + 1:q]
    return None


def _answer_end_ok(text: str, q: int, lo: int) -> bool:
    """Whether an answer may end at `q` as far as the characters before it say:
    `(?<!\\\\|&|&amp;)`, looking back no further than `lo` (the subject's start)."""
    before = text[q - 1]
    return before != "\\" and before != "&" and not (q - 5 >= lo and text.startswith("&amp;", q - 5))


class _Ends:
    """Where a gap's parts can end so that the gap still closes: for each position, the first
    answer end (at or after it) and the first feedback end from which the rest of the text
    can finish the gap with its `}`; computed once for the text, right to left.

    An end `q` *finishes* when `text[q]` is `}`, or is `~` and an alternative starting at
    `q + 1` can finish (`starts`). An answer end is a `~`, `#` or `}` that `_answer_end_ok`
    allows and that finishes, or a `#` from which a feedback end finishes; a feedback end is a
    `~` or `}` after no backslash that finishes."""

    def __init__(self, text: str, lo: int) -> None:
        n = len(text)
        self.text = text
        self.lo = lo
        self.answer = [_NONE] * (n - lo + 2)  # first answer end at or after lo + index
        self.feedback = [_NONE] * (n - lo + 2)
        answer, feedback = self.answer, self.feedback
        for q in range(n - 1, lo - 1, -1):
            k = q - lo
            c = text[q]
            finishes = c == "}" or (c == "~" and answer[k + 2] != _NONE)  # starts(q + 1)
            feedback[k] = q if finishes and text[q - 1] != "\\" else feedback[k + 1]
            if c == "#":
                good = feedback[k + 1] != _NONE and _answer_end_ok(text, q, 0)
            else:
                good = finishes and _answer_end_ok(text, q, 0)
            answer[k] = q if good else answer[k + 1]

    def first_answer_end(self, p: int) -> int:
        """The first answer end at or after `p` that lets the gap close (or _NONE)."""
        return self.answer[p - self.lo] if p - self.lo < len(self.answer) else _NONE

    def gap_end(self, p: int) -> int | None:
        """Where the `}` is of the gap whose alternatives start at `p`, read as PCRE reads it:
        None when no gap can be read from `p`."""
        text = self.text
        if self.first_answer_end(p + 1) == _NONE:  # an answer of one character or more
            return None
        while True:
            a = p
            fraction = _fraction(text, p, len(text))
            if fraction is not None and self.first_answer_end(fraction[0] + 1) != _NONE:
                a = fraction[0]  # with its fraction if the gap can still close
            e = self.first_answer_end(a + 1)
            if text[e] == "#":
                e = self.feedback[e + 1 - self.lo]
            if text[e] == "}":
                return e
            p = e + 1  # a `~` from which one more alternative closes the gap


def _read_alternatives(gap: Gap, text: str, start: int, end: int) -> None:
    """The gap's answers, as Moodle's loop over `~?alternative` reads its body
    `text[start:end]` (a string of its own: `$` is its end, or before a last newline)."""
    specific = False
    dollar = {end} | ({end - 1} if end > start and text[end - 1] == "\n" else set())
    answer_ends = _body_ends(text, start, end, dollar)
    p = start
    while True:
        found = _alternative(text, p, end, dollar, answer_ends)
        if found is None:
            break
        value, a, q = found
        fraction = 0.0
        if value == "=":
            fraction = 1.0
        elif value not in ("", "0"):  # PHP: "0" is false
            fraction, specific = 0.01 * float(value.replace(",", ".")), True
        answer = text[a:q]
        feedback = raw_feedback = ""
        p = q
        if q < end and text[q] == "#":
            r = _feedback_end(text, q + 1, end, dollar)
            if r is not None:
                raw_feedback = text[q + 1:r]
                feedback = _decoded(raw_feedback)
                p = r
        gap.raw_answers.append(answer)
        gap.raw_feedback.append(raw_feedback)
        number = _numerical(answer) if gap.kind == "numerical" else None
        if number is not None:
            gap.answers.append(number[0])
            gap.tolerances.append(float(number[1].replace(",", ".")) if number[1] else 0.0)
        else:
            gap.answers.append(_decoded(answer))
            gap.tolerances.append(0.0)
        gap.fractions.append(fraction)
        gap.feedback.append(feedback)
    if not gap.single:  # Moodle: positive fractions add up to 1
        total = sum(f for f in gap.fractions if f > 0)
        if total:
            gap.fractions = [f / total if f > 0 else (f if specific else -1.0 / total)
                             for f in gap.fractions]


def _body_ends(text: str, start: int, end: int, dollar: set[int]) -> list[int]:
    """For each position of the body, the first answer end at or after it (end + 1: none),
    with the look-behind seeing the whole text (`_alternative` corrects the first four
    positions of each remainder, which cannot see before it)."""
    ends = [end + 1] * (end - start + 2)
    for q in range(end, start, -1):
        ahead = q in dollar or text[q] in "~#}"
        ends[q - start] = q if ahead and _answer_end_ok(text, q, 0) else ends[q - start + 1]
    return ends


def _alternative(text: str, p: int, end: int, dollar: set[int],
                 answer_ends: list[int]) -> tuple[str, int, int] | None:
    """The match of `~?ALT` in the body's remainder `text[p:end]` (always at its start, if
    anywhere: the shortest answer start needs the fewest ends): the fraction (`=`, the
    number, or ""), where the answer starts and where it ends."""
    def first_end(a: int) -> int | None:
        """The first end of an answer starting at `a` (one character or more)."""
        for q in range(a + 1, min(p + 5, end + 1)):  # no look-behind before `p`
            if (q in dollar or text[q] in "~#}") and _answer_end_ok(text, q, p):
                return q
        q = answer_ends[max(a + 1, p + 5) - (end - len(answer_ends) + 2)] \
            if max(a + 1, p + 5) <= end else end + 1
        return q if q <= end else None

    starts = [p + 1, p] if p < end and text[p] == "~" else [p]
    for a in starts:
        fraction = _fraction(text, a, end)
        if fraction is not None and (q := first_end(fraction[0])) is not None:
            return fraction[1], fraction[0], q
        if (q := first_end(a)) is not None:
            return "", a, q
    return None


def _feedback_end(text: str, p: int, end: int, dollar: set[int]) -> int | None:
    """The shortest feedback from `p`: it ends before a `~` or `}` or at `$`, after no
    backslash."""
    q = p
    while q <= end:
        if (q in dollar or text[q] in "~}") and text[q - 1] != "\\":
            return q
        q += 1
    return None


def _numerical(answer: str) -> tuple[str, str] | None:
    """`^(NUMBER)(:NUMBER)?$` (a last newline allowed): the number and the tolerance without
    its sign (Moodle's groups 1 and 6), or None."""
    body = answer[:-1] if answer.endswith("\n") else answer
    value, colon, tolerance = body.partition(":")
    if not _is_number(value) or (colon and not _is_number(tolerance)):
        return None
    return value, tolerance.removeprefix("-")


def _is_number(text: str) -> bool:
    """`-?(([0-9]+[.,]?[0-9]*|[.,][0-9]+)([eE][-+]?[0-9]+)?)`, the whole of `text`."""
    i, n = (1 if text.startswith("-") else 0), len(text)
    j = i
    j = _digits_end(text, j, n)
    if j > i:
        if j < n and text[j] in ".,":
            j += 1
            j = _digits_end(text, j, n)
    else:
        if j >= n or text[j] not in ".,":
            return False
        j += 1
        k = j
        j = _digits_end(text, j, n)
        if j == k:
            return False
    if j < n and text[j] in "eE":
        j += 1
        if j < n and text[j] in "+-":
            j += 1
        k = j
        j = _digits_end(text, j, n)
        if j == k:
            return False
    return j == n


def _decoded(text: str) -> str:
    return html.unescape(text).replace("\\}", "}").replace("\\#", "#")


def refusals(gaps: list[Gap]) -> list[str]:
    """Why Moodle refuses the question (qtype_multianswer_validate_question), in its words."""
    if not gaps:
        return ["The question text must include at least one embedded answer."]
    errors = []
    for n, gap in enumerate(gaps, 1):
        count, full = 0, False
        for answer, fraction in zip(gap.answers, gap.fractions, strict=True):
            trimmed = answer.strip()
            if not trimmed:
                continue
            count += 1
            if gap.kind == "numerical" and not (_VALID_NUMBER.fullmatch(trimmed)
                                                or trimmed == "*"):
                errors.append(f"gap {n}: You must enter a valid number or '*'.")
            if fraction == 1 or (gap.kind == "multichoice" and not gap.single and fraction > 0):
                full = True
        if gap.kind == "multichoice" and count < 2:
            errors.append(f"gap {n}: Please fill in at least 2 answers.")
        elif count == 0:
            errors.append(f"gap {n}: Please fill in at least 1 answer.")
        if not full:
            errors.append(f"gap {n}: One of the answers should have a score of 100% so it is "
                          "possible to get full marks for this question.")
    return errors
