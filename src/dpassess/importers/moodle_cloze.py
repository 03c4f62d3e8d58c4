"""The text of a Moodle cloze (`multianswer`) question -> its gaps, read as
`qtype_multianswer_extract_question` reads them, and Moodle's reasons to refuse it
(`qtype_multianswer_validate_question`).

Moodle finds each `{n:TYPE:alternatives}` with a regular expression; this module scans the text
once instead (linear time on untrusted input): an answer ends at a `~`, `#` or `}` not preceded
by `\\`, `&` or `&amp;`, a feedback at a `~` or `}` not preceded by `\\`, as the expression says.
A gap that the expression would only read by backtracking (an alternative that starts with
`}`, or no closing `}`) is not a gap here, as it is not one in the common case in Moodle.
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

_PERCENT = re.compile(r"%(-?[0-9]+(?:[.,][0-9]*)?)%")
_NUMBER = r"-?(([0-9]+[.,]?[0-9]*|[.,][0-9]+)([eE][-+]?[0-9]+)?)"
_NUMERICAL = re.compile(f"({_NUMBER})(:{_NUMBER})?")
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


def extract(text: str) -> tuple[str, list[Gap]]:
    """The text with each gap replaced by `[[g<n>]]`, and the gaps in order."""
    out: list[str] = []
    gaps: list[Gap] = []
    pos = 0
    i = text.find("{")
    while i != -1:
        found = _gap_at(text, i)
        if found is None:
            i = text.find("{", i + 1)
            continue
        gap, end = found
        gaps.append(gap)
        out.append(text[pos:i])
        out.append(f"[[g{len(gaps)}]]")
        pos = end
        i = text.find("{", end)
    out.append(text[pos:])
    return "".join(out), gaps


def _gap_at(text: str, start: int) -> tuple[Gap, int] | None:
    """The gap whose `{` is at `start`, and the index after its `}`; None if there is none."""
    i = start + 1
    j = i
    while j < len(text) and text[j].isdigit() and text[j].isascii():
        j += 1
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
    p = k + 1
    body_start = p
    while True:  # where the gap ends (the expression's extent)
        if text.startswith("=", p):
            p += 1
        else:
            m = _PERCENT.match(text, p)
            p = m.end() if m is not None else p
        end = _answer_end(text, p)
        if end is None:
            return None
        p = end
        if text[p] == "#":
            fend = _feedback_end(text, p + 1)
            if fend is None:
                return None
            p = fend
        if text[p] == "}":
            break
        p += 1  # the `~`
    _read_alternatives(gap, text[body_start:p])
    return gap, p + 1


def _read_alternatives(gap: Gap, body: str) -> None:
    """The gap's answers, as Moodle's loop over `~?alternative` reads the gap's body."""
    specific = False
    p = 0
    while p < len(body):
        if body[p] == "~" and p + 1 < len(body):
            p += 1
        fraction = 0.0
        if body.startswith("=", p) and p + 1 < len(body):
            fraction, p = 1.0, p + 1
        else:
            m = _PERCENT.match(body, p)
            if m is not None and m.end() < len(body):
                value = m.group(1)
                if value != "0":  # PHP: "0" is false
                    fraction, specific = 0.01 * float(value.replace(",", ".")), True
                p = m.end()
        end = _answer_end(body, p, inner=True)
        assert end is not None
        answer, p = body[p:end], end
        feedback = raw_feedback = ""
        if p < len(body) and body[p] == "#":
            fend = _feedback_end(body, p + 1, inner=True)
            assert fend is not None
            raw_feedback = body[p + 1:fend]
            feedback = _decoded(raw_feedback)
            p = fend
        gap.raw_answers.append(answer)
        gap.raw_feedback.append(raw_feedback)
        number = _NUMERICAL.fullmatch(answer) if gap.kind == "numerical" else None
        if number is not None:
            gap.answers.append(number.group(1))
            gap.tolerances.append(float(number.group(6)) if number.group(6) else 0.0)
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


def _answer_end(text: str, p: int, *, inner: bool = False) -> int | None:
    """Where the answer starting at `p` ends (at a `~`, `#` or `}`; `inner`: also at the end),
    at least one character in; None if it runs to the end or the next alternative would
    start with `}`."""
    q = p + 1
    while q < len(text):
        c = text[q]
        if c in "~#}" and text[q - 1] != "\\" and text[q - 1] != "&" \
                and not text.endswith("&amp;", p, q):
            if c == "~" and text.startswith("}", q + 1) and not inner:
                return None
            return q
        q += 1
    return q if inner else None


def _feedback_end(text: str, p: int, *, inner: bool = False) -> int | None:
    q = p
    while q < len(text):
        c = text[q]
        if c in "~}" and text[q - 1] != "\\":
            if c == "~" and text.startswith("}", q + 1) and not inner:
                return None
            return q
        q += 1
    return q if inner else None


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
