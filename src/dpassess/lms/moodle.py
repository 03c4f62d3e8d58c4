"""Moodle's own rules (4.5) that lint and the exporters both apply: the grade list, question
names, and how Moodle stores a name in several languages.

Taken from Moodle's code: `question_bank::fraction_options_full` (lib/questionlib.php),
`match_grade_options`, `qformat_default::clean_question_name` and `filter_multilang`.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from functools import lru_cache

from dpassess.markup.markdown import to_plain
from dpassess.model import Item

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


def name_html(text: str) -> str:
    """A plain-text name as HTML text: `&`, `<`, `>` escaped (Moodle's PARAM_TEXT strips tags, and
    names are shown through format_string, which reads HTML)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def moodle_name(item: Item, langs: Sequence[str]) -> str:
    """The question name Moodle stores for `item` in `langs` (as lint's LM005 measures it too):
    each language's title as plain HTML text (see `Item.title`); names that differ between the
    languages as adjacent multilang spans, which PARAM_TEXT keeps."""
    names = [name_html(to_plain(item.title(la)) or item.id) for la in langs]
    if len(set(names)) <= 1:
        return names[0] if names else item.id
    return "".join(f'<span lang="{la}" class="multilang">{v}</span>'
                   for la, v in zip(langs, names, strict=True))


def is_multilang_name(name: str) -> bool:
    """Whether a `moodle_name` holds language spans (a plain name has its `<` escaped)."""
    return name.startswith("<span ")
