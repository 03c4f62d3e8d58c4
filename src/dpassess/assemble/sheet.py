"""The answer sheet's layout: where every mark, the QR code and each bubble is on the page, in
points from the page's top-left corner (A4). The printed sheet and the key's grid page are drawn
from it, and `<form>-sheet.json` gives it to `dpassess scan`, so the three never disagree.

A page has four solid square registration marks near the corners (the scanner finds them and
maps the photo back onto this layout), a QR code at the top right carrying
`dpassess:sheet:<layout>:<page>:<key hash>:<form id>:<language>` (the language the form is printed
in, so that scanned sheets tell the languages apart), a student-number grid (one column of
bubbles 0-9 per digit) and the item rows in columns. A form with more rows than a page holds
gets further pages, each with its own marks, QR code and student-number grid.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from dpassess.assemble.forms import Form, FormItem, letter
from dpassess.model import MultipleResponse, SingleChoice, TrueFalse

#: The version of the layout below (in the QR code and the JSON); a change of any number
#: below that moves a bubble must change it.
LAYOUT = 1
PAGE_W, PAGE_H = 595.276, 841.89  # A4 in points
MARGIN = 56.693  # 2 cm: where Typst's page content starts (the paper's margins)
MARK = 20.0  # side of a registration mark
MARK_AT = 38.0  # distance of a mark's centre from the page's edges
QR_SIZE = 72.0  # the QR code's side, quiet zone excluded
QR_X, QR_Y = PAGE_W - MARGIN - QR_SIZE, MARGIN
RADIUS = 6.5  # a bubble's radius (as on the former sheet)
PITCH_X = 17.0  # bubble centre to centre in a row
NUMBER_TOP = 150.0  # top of the student-number grid's label
NUMBER_ROW = 16.0  # digit rows of the student-number grid
ROWS_TOP = 356.0  # first item row's centre
ROWS_BOTTOM = 770.0  # no item row's centre below this
ROW = 19.0  # item row pitch
LABEL_W = 24.0  # room for the question number left of the first bubble
COLUMN_GAP = 16.0


def choice(fi: FormItem) -> bool:
    """Whether the item is answered by bubbles on the sheet."""
    return isinstance(fi.item, SingleChoice | MultipleResponse | TrueFalse)


def key_hash(key_file: bytes) -> str:
    """The short hash of a form's key file (`<form>-key.csv`) in the QR code."""
    return hashlib.sha256(key_file).hexdigest()[:8]


def qr_text(form_id: str, page: int, khash: str, lang: str) -> str:
    return f"dpassess:sheet:{LAYOUT}:{page}:{khash}:{form_id}:{lang}"


@dataclass(frozen=True)
class Row:
    position: int
    item: str
    letters: tuple[str, ...]  # empty: answered on the form
    multiple: bool
    x: float  # the question number's right edge
    y: float  # the row's centre line
    bubbles: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Page:
    number: int
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class Layout:
    form: str
    digits: int
    pages: tuple[Page, ...]

    @staticmethod
    def marks() -> list[tuple[float, float]]:
        """Centres of the marks: top-left, top-right, bottom-right, bottom-left."""
        return [(MARK_AT, MARK_AT), (PAGE_W - MARK_AT, MARK_AT),
                (PAGE_W - MARK_AT, PAGE_H - MARK_AT), (MARK_AT, PAGE_H - MARK_AT)]

    def number_bubbles(self) -> list[list[tuple[float, float]]]:
        """Per digit column, the centres of its bubbles 0..9."""
        x0 = MARGIN + RADIUS + 1
        y0 = NUMBER_TOP + 38.0
        return [[(x0 + c * PITCH_X, y0 + d * NUMBER_ROW) for d in range(10)]
                for c in range(self.digits)]

    def data(self, khash: str) -> dict[str, Any]:
        """The layout as the scanner reads it."""
        return {
            "layout": LAYOUT, "form": self.form, "key_hash": khash,
            "page_size": [PAGE_W, PAGE_H], "marks": [list(m) for m in self.marks()],
            "mark_size": MARK, "qr": [QR_X, QR_Y, QR_SIZE], "radius": RADIUS,
            "student_number": [[list(c) for c in col] for col in self.number_bubbles()],
            "pages": [{"page": p.number, "rows": [
                {"position": r.position, "item": r.item, "letters": list(r.letters),
                 "multiple": r.multiple, "bubbles": [list(b) for b in r.bubbles]}
                for r in p.rows if r.letters]} for p in self.pages],
        }

    def json(self, khash: str) -> bytes:
        return (json.dumps(self.data(khash), indent=1) + "\n").encode()


def layout(form: Form, digits: int = 10, letters: dict[int, list[str]] | None = None) -> Layout:
    """The sheet of `form`. `letters` (position -> the row's bubble letters) defaults to each
    choice item's options."""
    rows_per_column = int((ROWS_BOTTOM - ROWS_TOP) // ROW) + 1
    widest = max((len(fi.item.options) for fi in form.items if choice(fi)  # type: ignore[union-attr]
                  ), default=4)
    col_w = LABEL_W + widest * PITCH_X + COLUMN_GAP
    columns = max(1, int((PAGE_W - 2 * MARGIN + COLUMN_GAP) // col_w))
    per_page = rows_per_column * columns
    pages: list[Page] = []
    rows: list[Row] = []
    questions = form.questions  # a description has no row
    for n, fi in enumerate(questions):
        k = n % per_page
        col, r = divmod(k, rows_per_column)
        x = MARGIN + col * col_w + LABEL_W
        y = ROWS_TOP + r * ROW
        if letters is not None:
            ls = letters.get(fi.position, [])
        elif choice(fi):
            ls = [letter(i) for i in range(len(fi.item.options))]  # type: ignore[union-attr]
        else:
            ls = []
        bubbles = tuple((x + RADIUS + 4 + i * PITCH_X, y) for i in range(len(ls)))
        rows.append(Row(fi.position, fi.item.id, tuple(ls),
                        isinstance(fi.item, MultipleResponse), x, y, bubbles))
        if k == per_page - 1 or n == len(questions) - 1:
            pages.append(Page(len(pages) + 1, tuple(rows)))
            rows = []
    return Layout(form.id, digits, tuple(pages) or (Page(1, ()),))


def qr_svg(text: str) -> str:
    """The QR code of `text` as SVG (segno: error correction M, no quiet zone; the sheet
    keeps white around it)."""
    import io

    import segno

    buf = io.BytesIO()
    segno.make_qr(text, error="m", boost_error=False).save(
        buf, kind="svg", border=0, xmldecl=False, svgclass=None, lineclass=None)
    return buf.getvalue().decode("ascii")
