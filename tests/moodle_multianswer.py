"""A port of Moodle 4.5's cloze parser, for tests: `qtype_multianswer_extract_question` and
`qtype_multianswer_validate_question` (question/type/multianswer/questiontype.php), line for line.

PHP's PCRE allows a lookbehind of alternatives of different lengths, `(?<!\\\\|&|&amp;)`;
Python's `re` does not, so it is written as three lookbehinds, which is the same test. PHP's
`html_entity_decode(..., ENT_QUOTES, 'UTF-8')` is `html.unescape` for the references a
well-formed text holds (every one ended by `;`).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

FRACTION = r"=|%(-?[0-9]+(?:[.,][0-9]*)?)%"
ANSWER = r".+?(?<!\\)(?<!&)(?<!&amp;)(?=[~#}]|$)"
FEEDBACK = r".*?(?<!\\)(?=[~}]|$)"
ALTERNATIVE = f"({FRACTION})?({ANSWER})(#({FEEDBACK}))?"
NUMBER = r"-?(([0-9]+[.,]?[0-9]*|[.,][0-9]+)([eE][-+]?[0-9]+)?)"
NUMERICAL_ALTERNATIVE = f"^({NUMBER})(:{NUMBER})?$"
TYPE_DEF = ("(NUMERICAL|NM)|(MULTICHOICE|MC)|(MULTICHOICE_V|MCV)|(MULTICHOICE_H|MCH)|"
            "(SHORTANSWER|SA|MW)|(SHORTANSWER_C|SAC|MWC)|"
            "(MULTICHOICE_S|MCS)|(MULTICHOICE_VS|MCVS)|(MULTICHOICE_HS|MCHS)|"
            "(MULTIRESPONSE|MR)|(MULTIRESPONSE_H|MRH)|(MULTIRESPONSE_S|MRS)|(MULTIRESPONSE_HS|MRHS)")
START = r"\{([0-9]*):(" + TYPE_DEF + "):"
ANSWER_REGEX = START + "(" + ALTERNATIVE + "(~" + ALTERNATIVE + r")*)\}"

# group numbers (ANSWER_REGEX_*)
NORM, NUMERICAL, MC, MC_V, MC_H, SA, SA_C, MC_S, MC_VS, MC_HS, MR, MR_H, MR_S, MR_HS = (
    1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
ALTERNATIVES = 16

_KINDS = {
    NUMERICAL: ("numerical", None, None, None),
    SA: ("shortanswer", None, None, None),
    SA_C: ("shortanswer", None, None, None),
    MC: ("multichoice", 1, 0, "dropdown"), MC_S: ("multichoice", 1, 1, "dropdown"),
    MC_V: ("multichoice", 1, 0, "vertical"), MC_VS: ("multichoice", 1, 1, "vertical"),
    MC_H: ("multichoice", 1, 0, "horizontal"), MC_HS: ("multichoice", 1, 1, "horizontal"),
    MR: ("multichoice", 0, 0, "vertical"), MR_H: ("multichoice", 0, 0, "horizontal"),
    MR_S: ("multichoice", 0, 1, "vertical"), MR_HS: ("multichoice", 0, 1, "horizontal"),
}


@dataclass
class Sub:
    """One subquestion (a gap) as Moodle saves it."""

    qtype: str
    defaultmark: float
    usecase: int | None = None
    single: int | None = None
    shuffle: int | None = None
    layout: str | None = None
    answers: list[str] = field(default_factory=list)
    fractions: list[float] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)
    tolerance: list[float] = field(default_factory=list)


@dataclass
class Extracted:
    questiontext: str
    subs: list[Sub]
    defaultmark: float


def extract(text: str) -> Extracted:
    """qtype_multianswer_extract_question."""
    subs: list[Sub] = []
    total = 0.0
    position = 1
    while True:
        m = re.search(ANSWER_REGEX, text, re.S)
        if m is None:
            break
        norm = m.group(NORM)
        mark = float(norm) if norm not in (None, "") else 1.0
        kind = next((g for g in _KINDS if m.group(g)), None)
        if kind is None:
            raise ValueError(f"unknownquestiontype {m.group(2)}")
        qtype, single, shuffle, layout = _KINDS[kind]
        sub = Sub(qtype, mark, single=single, shuffle=shuffle, layout=layout)
        if qtype == "shortanswer":
            sub.usecase = 1 if kind == SA_C else 0
        has_specific = False
        remaining = m.group(ALTERNATIVES)
        while True:
            alt = re.search("~?" + ALTERNATIVE, remaining, re.S)
            if alt is None:
                break
            if alt.group(1) == "=":
                fraction = 1.0
            elif alt.group(2) not in (None, "", "0"):  # PHP: a non-empty string but "0"
                fraction = 0.01 * float(alt.group(2).replace(",", "."))
                has_specific = True
            else:
                fraction = 0.0
            sub.fractions.append(fraction)
            if alt.group(5) is not None:
                fb = html.unescape(alt.group(5)).replace("\\}", "}").replace("\\#", "#")
                sub.feedback.append(fb)
            else:
                sub.feedback.append("")
            answer = alt.group(3)
            num = re.search(NUMERICAL_ALTERNATIVE, answer, re.S) if qtype == "numerical" else None
            if num is not None:
                sub.answers.append(num.group(1))
                # PHP keeps the string; qtype_numerical reads it later as a number (a decimal
                # comma as the answers' is read here: the site's separators decide in Moodle)
                sub.tolerance.append(float(num.group(6).replace(",", "."))
                                     if num.group(6) is not None else 0.0)
            else:
                sub.answers.append(html.unescape(answer).replace("\\}", "}").replace("\\#", "#"))
                sub.tolerance.append(0.0)
            remaining = remaining.split(alt.group(0), 1)[1]
        if sub.single == 0:
            positive = sum(f for f in sub.fractions if f > 0)
            if positive:
                sub.fractions = [f / positive if f > 0 else (f if has_specific else -1.0 / positive)
                                 for f in sub.fractions]
        total += sub.defaultmark
        subs.append(sub)
        text = text.replace(m.group(0), "{#" + str(position) + "}", 1)
        position += 1
    return Extracted(text, subs, total)


def _is_number(text: str) -> bool:
    """qtype_numerical::is_valid_number (a PHP float, decimal point or comma)."""
    return re.fullmatch(r"\s*[+-]?(\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?\s*", text) is not None


def validate(q: Extracted) -> list[str]:
    """qtype_multianswer_validate_question: Moodle's reasons to refuse the question."""
    if not q.subs:
        return ["The question text must include at least one embedded answer."]
    errors = []
    for sub in q.subs:
        count, maxgrade = 0, False
        for answer, fraction in zip(sub.answers, sub.fractions, strict=True):
            trimmed = answer.strip()
            if trimmed == "":
                continue
            count += 1
            if sub.qtype == "numerical" and not (_is_number(trimmed) or trimmed == "*"):
                errors.append("You must enter a valid number or '*'.")
            if fraction == 1:
                maxgrade = True
            if sub.qtype == "multichoice" and sub.single == 0 and fraction > 0:
                maxgrade = True
        if sub.qtype == "multichoice" and count < 2:
            errors.append("Please fill in at least 2 answers.")
        elif count == 0:
            errors.append("Please fill in at least 1 answer.")
        if not maxgrade:
            errors.append("One of the answers should have a score of 100% so it is possible to "
                          "get full marks for this question.")
    return errors
