"""A number -> the text a reader of one language expects (`4,5` in Indonesian, `4.5` in English).

The separators are CLDR's for each language the bank can be written in (Indonesian: decimal
comma, `.` between thousands; English: decimal point, `,` between thousands; groups of three
from four digits, as CLDR's minimum grouping of 1 says). A small table: two languages do not
earn the weight of a locale library at every CLI start.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

#: language -> (decimal separator, group separator), from CLDR (`id`, `en` number symbols)
SEPARATORS: dict[str, tuple[str, str]] = {"id": (",", "."), "en": (".", ",")}
#: CLDR's minus sign for both languages is the ASCII hyphen-minus.
MINUS = "-"


def format_number(value: int | float | Decimal | str, lang: str, *, grouping: bool = True,
                  decimals: int | None = None) -> str:
    """`value` written as `lang` writes numbers: `format_number(4.5, "id") == "4,5"`,
    `format_number(12500, "id") == "12.500"`, `format_number(12500.25, "en") == "12,500.25"`.

    Floats are written by their shortest repr (`0.1` stays `0.1`), never in exponent form;
    `decimals` rounds half-even to that many places (and keeps trailing zeros). Raises
    `ValueError` for a language without a table entry or a value that is not a finite number."""
    if lang not in SEPARATORS:
        raise ValueError(f"no number format for language {lang!r}")
    try:
        number = Decimal(repr(value) if isinstance(value, float) else str(value))
    except InvalidOperation:
        raise ValueError(f"{value!r} is not a number") from None
    if not number.is_finite():
        raise ValueError(f"{value!r} is not a finite number")
    if decimals is not None:
        number = number.quantize(Decimal(1).scaleb(-decimals))
    text = f"{abs(number):f}"
    whole, _, fraction = text.partition(".")
    point, group = SEPARATORS[lang]
    if grouping and len(whole) > 3:
        head = len(whole) % 3 or 3
        whole = whole[:head] + "".join(group + whole[i:i + 3] for i in range(head, len(whole), 3))
    sign = MINUS if number.is_signed() and number != 0 else ""
    return sign + whole + (point + fraction if fraction else "")
