"""Numbers as each language writes them; the expected strings are what Babel 2.18 (CLDR 47)
writes with `format_decimal(value, locale=...)` for the same values, checked by hand once."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpassess.markup.numformat import format_number


@pytest.mark.parametrize(("value", "lang", "text"), [
    (4.5, "id", "4,5"),
    (4.5, "en", "4.5"),
    (1000, "id", "1.000"),
    (1000, "en", "1,000"),
    (12500.25, "id", "12.500,25"),
    (12500.25, "en", "12,500.25"),
    (-1234567.5, "id", "-1.234.567,5"),
    (0.75, "id", "0,75"),
    (999, "id", "999"),
    (Decimal("0.10"), "en", "0.10"),
    ("3.14159", "id", "3,14159"),
])
def test_cldr_examples(value: object, lang: str, text: str) -> None:
    assert format_number(value, lang) == text  # type: ignore[arg-type]


def test_options() -> None:
    assert format_number(2.5, "id", decimals=2) == "2,50"
    # rounds the number as written (the float's shortest repr), half to even
    assert format_number(2.675, "en", decimals=2) == "2.68"
    assert format_number(2.665, "en", decimals=2) == "2.66"
    assert format_number(1e-7, "id") == "0,0000001"  # never exponent form
    assert format_number(1e21, "en") == "1,000,000,000,000,000,000,000"
    assert format_number(12500, "id", grouping=False) == "12500"
    assert format_number(-0.0, "en") == "0.0"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "eight"])
def test_refuses_what_is_not_a_finite_number(bad: object) -> None:
    with pytest.raises(ValueError):
        format_number(bad, "en")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="language 'fr'"):
        format_number(1, "fr")


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15))
def test_reading_back_gives_the_value(x: float) -> None:
    """Undoing each language's separators gives the float back (repr round trip)."""
    en, id_ = format_number(x, "en"), format_number(x, "id")
    assert float(en.replace(",", "")) == x
    assert float(id_.replace(".", "").replace(",", ".")) == x
    assert en.replace(",", "#").replace(".", ",").replace("#", ".") == id_
