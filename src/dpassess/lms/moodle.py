"""Moodle's own rules (4.5) that lint and the exporters both apply: the grade list, question
names, and how Moodle stores a name in several languages.

Taken from Moodle's code: `question_bank::fraction_options_full` (lib/questionlib.php),
`match_grade_options`, `qformat_default::clean_question_name` and `filter_multilang`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal
from functools import lru_cache

from dpassess.markup.markdown import blank_gaps, plain_title, to_plain
from dpassess.model import Cloze, Item

# --- grades -----------------------------------------------------------------------------------

#: `question_bank::fraction_options_full()`: 0, 1, -1 and +/- these, written to 7 decimals.
_RAW = (
    "0.9000000", "0.8333333", "0.8000000", "0.7500000", "0.7000000", "0.6666667", "0.6000000",
    "0.5000000", "0.4000000", "0.3333333", "0.3000000", "0.2500000", "0.2000000", "0.1666667",
    "0.1428571", "0.1250000", "0.1111111", "0.1000000", "0.0500000",
)
GRADES: tuple[Decimal, ...] = tuple(
    sorted({Decimal(0), Decimal(1), Decimal(-1), *(Decimal(s) for s in _RAW),
            *(-Decimal(s) for s in _RAW)}, reverse=True)
)
#: `match_grade_options(..., 'error')`: a grade within this distance of a list entry is accepted.
GRADE_TOLERANCE = 0.00001


def percent(grade: Decimal) -> str:
    """A grade as Moodle writes it: percent, up to 5 decimals, no trailing zeros (`33.33333`)."""
    text = format(grade * 100, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


@lru_cache(maxsize=4096)
def snap(fraction: float) -> tuple[Decimal, bool]:
    """The nearest grade in Moodle's list, and whether Moodle would accept `fraction` as it is.

    Memoised: a bank uses a handful of fractions, and the search walks the whole list."""
    best = min(GRADES, key=lambda g: (abs(float(g) - fraction), -g))
    return best, abs(float(best) - fraction) < GRADE_TOLERANCE


#: The grades Moodle accepts for an answer that earns credit, as floats (lint compares to these).
POSITIVE_FRACTIONS: tuple[float, ...] = tuple(float(g) for g in GRADES if g >= 0)

# --- names ------------------------------------------------------------------------------------

#: `qformat_default::clean_question_name` shortens names past this many characters.
MAX_NAME = 255
#: `create_default_question_name`: a question without a name is named by its text, shortened
#: to this many characters.
DERIVED_NAME = 80
#: The question bank's `idnumber` column holds this many characters (lint's ST008 checks ids).
MAX_IDNUMBER = 100

# An entity counts as one character when `shorten_text` measures text (moodlelib.php).
_ENTITY = re.compile(r"&[0-9a-z]{2,8};|&#[0-9]{1,7};|&#x[0-9a-f]{1,6};", re.I)


def name_html(text: str) -> str:
    """A plain-text name as HTML text: `&`, `<`, `>` escaped (Moodle's PARAM_TEXT strips tags, and
    names are shown through format_string, which reads HTML)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def shorten_text(text: str, ideal: int, ending: str = "...") -> str:
    """HTML text without tags shortened as Moodle's `shorten_text($text, $ideal)` does: kept
    whole when it has at most `ideal` characters (entities counted as written); otherwise cut
    after the last space or full stop before `ideal` characters less the ending (an entity
    counting as one, a character of three or more UTF-8 bytes being a place to cut, a `0` never
    looked at, as PHP reads "0" as false), or at that length when there is none, and `ending`
    added."""
    if len(text) <= ideal:
        return text
    if len(_ENTITY.sub(" ", text)) + len(ending) <= ideal:
        return text + ending
    left = ideal - len(ending)
    entities = 0
    for m in _ENTITY.finditer(text):
        if m.start() + 1 - entities > left:
            break
        left -= 1
        entities += len(m.group())
    limit = left + entities
    pos = limit
    while pos > 0:
        char = text[pos:pos + 1]
        if char and char != "0" and (char in ". " or len(char.encode("utf-8")) > 2):
            pos += 1
            break
        pos -= 1
    if pos == 0 or pos > limit:
        pos = limit
    return text[:pos] + ending


def _shorten_within(text: str, size: int) -> str:
    """`text` cut at a word as `shorten_text` does, so that it has at most `size` characters
    as written (entities in full)."""
    ideal = size
    short = text
    while len(short) > size and ideal > 3:
        short = shorten_text(text, ideal)
        ideal -= max(1, len(short) - size)
    return short if len(short) <= size else text[:size]


def _name_parts(item: Item, langs: Sequence[str]) -> list[tuple[str, str, bool]]:
    """(language, name as HTML text, whether it was derived from the stem) for each language:
    a title is plain text, kept as written; an item without one is named by the first line of
    its stem as plain text, shortened as Moodle names a question by its text."""
    parts = []
    for la in langs:
        content = item.text[la]
        title = _title_name(content.title) if content.title else ""
        if title:
            parts.append((la, title, False))
        else:
            stem = blank_gaps(content.stem) if isinstance(item, Cloze) else content.stem
            parts.append((la, _derived_name(stem) or item.id, True))
    return parts


@lru_cache(maxsize=65536)
def _title_name(title: str) -> str:
    return name_html(plain_title(title))


@lru_cache(maxsize=65536)
def _derived_name(stem: str) -> str:
    lines = stem.strip().splitlines()
    plain = name_html(to_plain(lines[0])) if lines else ""
    return shorten_text(plain, DERIVED_NAME) if plain else ""


def _joined(parts: list[tuple[str, str, bool]]) -> str:
    if len({v for _, v, _ in parts}) <= 1:
        return parts[0][1] if parts else ""
    return "".join(f'<span lang="{la}" class="multilang">{v}</span>' for la, v, _ in parts)


def _fitted(parts: list[tuple[str, str, bool]], *, titles: bool) -> list[tuple[str, str, bool]]:
    """`parts` with the derived names (and the titles too with `titles`) cut at a word so
    that the joined name has at most MAX_NAME characters."""
    if len(_joined(parts)) <= MAX_NAME:
        return parts
    cut = [i for i, (_, _, derived) in enumerate(parts) if derived or titles]
    if not cut:
        return parts
    if len({v for _, v, _ in parts}) <= 1:
        return [(la, _shorten_within(v, MAX_NAME), d) for la, v, d in parts]
    fixed = len(_joined(parts)) - sum(len(parts[i][1]) for i in cut)
    size = max(4, (MAX_NAME - fixed) // len(cut))
    return [(la, _shorten_within(v, size) if i in cut else v, d)
            for i, (la, v, d) in enumerate(parts)]


def moodle_name(item: Item, langs: Sequence[str]) -> str:
    """The question name as the author wrote it, as Moodle would store it for `item` in `langs`
    (what lint's LM005 measures): each language's title as HTML text (see `_name_parts`);
    names that differ between the languages as adjacent multilang spans, which PARAM_TEXT
    keeps. Names derived from the stem are cut to fit MAX_NAME, so only an author's title can
    be too long."""
    if not langs:
        return item.id
    parts = _name_parts(item, langs)
    if len(parts) == 1 and len(parts[0][1]) <= MAX_NAME:
        return parts[0][1]
    return _joined(_fitted(parts, titles=False))


def exported_name(item: Item, langs: Sequence[str]) -> tuple[str, str]:
    """The name the exporters write (at most MAX_NAME characters: a title too long is cut at
    a word, in each language) and `moodle_name`, to tell whether it was cut."""
    full = moodle_name(item, langs)
    if len(full) <= MAX_NAME:
        return full, full
    return _joined(_fitted(_name_parts(item, langs), titles=True)), full


def is_multilang_name(name: str) -> bool:
    """Whether a `moodle_name` holds language spans (a plain name has its `<` escaped)."""
    return name.startswith("<span ")

# --- numerical units --------------------------------------------------------------------------

#: qtype_numerical_answer_processor::apply_units: e-notations, then the number at the start.
_E_NOTATION = re.compile(r"(?:e|E|(?:x|\*|×)10(?:\^|\*\*))([+-]?\d+)")
_RESPONSE_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?")


def response_unit(response: str) -> str | None:
    """The unit Moodle reads after the number of a numerical response (units after the number,
    Moodle's default separators: `.` decimal, `,` thousands), or None if it reads no number:
    `qtype_numerical_answer_processor::apply_units`, which first removes every space."""
    response = _E_NOTATION.sub(r"e\1", response.replace(" ", ""))
    # with a `.` or several `,` every `,` is a thousands separator; else the thousands
    # separator `,` is removed before the decimal one would be read: a `,` never stays
    response = response.replace(",", "")
    m = _RESPONSE_NUMBER.match(response)
    return None if m is None else response[m.end():]


def reads_unit(unit: str) -> bool:
    """Whether Moodle reads `unit` back after a number a student types (`2.5 m`, `3m`): not a
    unit that is itself a number (`1`), nor one with spaces (Moodle removes them first)."""
    return all(response_unit(f"{n} {unit}") == unit for n in ("3", "2.5"))
