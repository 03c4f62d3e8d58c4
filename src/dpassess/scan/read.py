"""One scanned page -> what is marked on it.

The page is found by its four solid corner marks (the most extreme solid squares of the
image), mapped back onto the layout `<form>-sheet.json` gives (a perspective warp, so rotation,
scale and a phone's slant are undone), turned round if it was scanned upside down (the QR code
is then where it must be), and its QR code read (opencv). Each bubble's fill is measured
inside its printed ring against the sheet's own levels: the ink of the marks and the paper
around the row, so a grey scan or uneven light does not change the verdict. A bubble is
marked, blank or doubtful; a doubtful bubble, or two marks on a single-answer row, leaves the
row open for the teacher.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

Image = NDArray[Any]

#: Pixels per point of the flattened sheet (about 180 dpi).
SCALE = 2.5
#: A bubble at or below this share of ink is blank, at or above MARKED marked; between: doubtful.
BLANK = 0.17
MARKED = 0.5
#: A marked bubble has at least this share of its inside dark (a cross or a ring has less).
SOLID = 0.6


@dataclass(frozen=True)
class SheetRow:
    position: int
    item: str
    letters: tuple[str, ...]
    multiple: bool
    bubbles: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Sheet:
    """A form's answer-sheet layout, as `<form>-sheet.json` gives it."""

    form: str
    layout: int
    key_hash: str
    page_size: tuple[float, float]
    marks: tuple[tuple[float, float], ...]
    mark_size: float
    qr: tuple[float, float, float]
    radius: float
    number: tuple[tuple[tuple[float, float], ...], ...]
    pages: dict[int, tuple[SheetRow, ...]]


def load_sheet(path: Path) -> Sheet:
    """Read a `<form>-sheet.json`; ValueError naming the field when it is not one."""
    data = json.loads(path.read_text(encoding="utf-8"))
    try:
        pages = {int(p["page"]): tuple(
            SheetRow(int(r["position"]), str(r["item"]), tuple(r["letters"]), bool(r["multiple"]),
                     tuple((float(x), float(y)) for x, y in r["bubbles"])) for r in p["rows"])
            for p in data["pages"]}
        return Sheet(
            str(data["form"]), int(data["layout"]), str(data["key_hash"]),
            (float(data["page_size"][0]), float(data["page_size"][1])),
            tuple((float(x), float(y)) for x, y in data["marks"]), float(data["mark_size"]),
            (float(data["qr"][0]), float(data["qr"][1]), float(data["qr"][2])),
            float(data["radius"]),
            tuple(tuple((float(x), float(y)) for x, y in col) for col in data["student_number"]),
            pages)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ValueError(f"{path}: not an answer-sheet layout ({exc!r})") from exc


@dataclass
class Bubble:
    letter: str
    fill: float  # share of ink, 0 (paper) .. 1 (as dark as the marks)
    solid: float  # share of the inside darker than half way
    state: str  # "marked", "blank" or "doubtful"


@dataclass
class RowRead:
    position: int
    item: str
    bubbles: list[Bubble]
    marked: list[str]
    problem: str  # empty: decided
    crop: bytes = b""  # PNG of the row, when it has a problem


@dataclass
class PageRead:
    """What one page says. `problem` non-empty: the page itself could not be read."""

    source: str
    page: int
    qr: str = ""
    form: str = ""
    language: str = ""  # the language the sheet was printed in ("" not known)
    sheet_page: int = 0
    key_hash: str = ""
    problem: str = ""
    number: str = ""  # the student number read ("" none)
    number_problem: str = ""
    rows: list[RowRead] = field(default_factory=list)
    crop: bytes = b""  # PNG: the page (a problem) or the student-number grid (its problem)


def png(img: Image, width: int | None = None) -> bytes:
    if width is not None and img.shape[1] > width:
        h = max(1, round(img.shape[0] * width / img.shape[1]))
        img = cv2.resize(img, (width, h), interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".png", img)
    return bytes(buf) if ok else b""


def find_marks(img: Image) -> NDArray[np.float32] | None:
    """Centres of the four corner marks (top-left, top-right, bottom-right, bottom-left) in
    image pixels, or None."""
    small = cv2.GaussianBlur(img, (3, 3), 0)
    # ink: much darker than the paper around it (the brightest nearby, from a max filter on a
    # quarter-size copy), so a dark backdrop or uneven light is not taken for ink
    h, w = img.shape
    quarter = cv2.resize(small, (max(1, w // 4), max(1, h // 4)), interpolation=cv2.INTER_AREA)
    k = max(5, min(h, w) // 48) | 1
    bg = cv2.dilate(quarter, np.ones((k, k), np.uint8))
    bg = cv2.resize(cv2.blur(bg, (k, k)), (w, h), interpolation=cv2.INTER_LINEAR)
    ink = cv2.compare(small, cv2.convertScaleAbs(bg, alpha=0.55), cv2.CMP_LT)
    contours, _ = cv2.findContours(ink, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    least = (min(h, w) / 120) ** 2
    found: list[tuple[float, float, float]] = []
    for c in contours:
        area = cv2.contourArea(c)
        if area < least:
            continue
        (_, _), (rw, rh), _ = cv2.minAreaRect(c)
        if rw <= 0 or rh <= 0 or not 0.7 < rw / rh < 1.43:
            continue
        if area / (rw * rh) < 0.85:  # a solid square: not a ring, a circle or a QR finder
            continue
        x, y, bw, bh = cv2.boundingRect(c)
        box = ink[y:y + bh, x:x + bw]
        mask = np.zeros_like(box)
        cv2.drawContours(mask, [c - np.array([x, y])], -1, 255, -1)
        inside = cv2.countNonZero(mask)
        if inside == 0 or cv2.countNonZero(cv2.bitwise_and(box, mask)) / inside < 0.9:
            continue
        m = cv2.moments(c)
        found.append((m["m10"] / m["m00"], m["m01"] / m["m00"], area))
    if len(found) < 4:
        return None
    big = max(a for _, _, a in found)
    pts = np.array([(x, y) for x, y, a in found if a > big * 0.35], dtype=np.float32)
    if len(pts) < 4:
        return None
    s, d = pts[:, 0] + pts[:, 1], pts[:, 0] - pts[:, 1]
    quad = np.array([pts[np.argmin(s)], pts[np.argmax(d)], pts[np.argmax(s)], pts[np.argmin(d)]],
                    dtype=np.float32)
    if len({tuple(p) for p in quad.tolist()}) < 4:
        return None
    return quad


def _flat(img: Image, quad: NDArray[np.float32], sheet_marks: Any, size: tuple[float, float]
          ) -> Image:
    dst = np.array(sheet_marks, dtype=np.float32) * SCALE
    m = cv2.getPerspectiveTransform(quad, dst)
    out: Image = cv2.warpPerspective(img, m, (round(size[0] * SCALE), round(size[1] * SCALE)),
                                     flags=cv2.INTER_LINEAR, borderValue=255)
    return out


def read_qr(flat: Image, qr: tuple[float, float, float]) -> str:
    x, y, side = qr
    pad = 12
    x0, y0 = max(0, round((x - pad) * SCALE)), max(0, round((y - pad) * SCALE))
    x1, y1 = round((x + side + pad) * SCALE), round((y + side + pad) * SCALE)
    crop = flat[y0:y1, x0:x1]
    det = cv2.QRCodeDetector()
    for im in (crop, cv2.resize(crop, None, fx=2, fy=2, interpolation=cv2.INTER_CUBIC)):
        text, _, _ = det.detectAndDecode(im)
        if text:
            return str(text)
    return ""


def parse_qr(text: str) -> tuple[int, int, str, str, str] | None:
    """`dpassess:sheet:<layout>:<page>:<hash>:<form>:<language>` -> (layout, page, hash, form,
    language); a sheet printed without its language (`...:<form>`) has language ''."""
    parts = text.split(":")
    if len(parts) not in (6, 7) or parts[:2] != ["dpassess", "sheet"]:
        return None
    try:
        return int(parts[2]), int(parts[3]), parts[4], parts[5], "".join(parts[6:])
    except ValueError:
        return None


class Levels:
    """The sheet's ink (the marks) and, per place, its paper (the brightest part nearby)."""

    def __init__(self, flat: Image, sheet: Sheet) -> None:
        self.flat = flat
        half = sheet.mark_size / 2 * 0.6
        inks = [np.median(flat[round((y - half) * SCALE):round((y + half) * SCALE),
                               round((x - half) * SCALE):round((x + half) * SCALE)])
                for x, y in sheet.marks]
        self.ink = float(np.median(inks))
        self.r = sheet.radius * SCALE
        yy, xx = np.mgrid[-int(self.r):int(self.r) + 1, -int(self.r):int(self.r) + 1]
        self.disc = (xx ** 2 + yy ** 2) <= (0.78 * self.r) ** 2

    def paper(self, xs: list[float], y: float) -> float:
        x0 = round(min(xs) * SCALE - 2 * self.r)
        x1 = round(max(xs) * SCALE + 2 * self.r)
        strip = self.flat[max(0, round(y * SCALE - 1.6 * self.r)):round(y * SCALE + 1.6 * self.r),
                          max(0, x0):x1]
        return float(np.percentile(strip, 90)) if strip.size else 255.0

    def bubble(self, x: float, y: float, paper: float) -> tuple[float, float]:
        cx, cy, k = round(x * SCALE), round(y * SCALE), int(self.r)
        patch = self.flat[cy - k:cy + k + 1, cx - k:cx + k + 1]
        if patch.shape != self.disc.shape:
            return 0.0, 0.0
        span = max(paper - self.ink, 40.0)
        dark = np.clip((paper - patch[self.disc].astype(np.float32)) / span, 0, 1)
        return float(dark.mean()), float((dark > 0.5).mean())


def state(fill: float, solid: float) -> str:
    if fill <= BLANK:
        return "blank"
    if fill >= MARKED and solid >= SOLID:
        return "marked"
    return "doubtful"


def read_page(img: Image, sheets: dict[str, Sheet], source: str, page: int,
              form_hint: str | None = None) -> PageRead:
    """Read one page image (greyscale). `form_hint`: read it as this form when its QR code
    cannot be read (a teacher's correction)."""
    out = PageRead(source, page)
    quad = find_marks(img)
    if quad is None:
        out.problem = "no answer sheet found (the four corner marks are not all visible)"
        out.crop = png(img, 500)
        return out
    any_sheet = next(iter(sheets.values()), None)
    if any_sheet is None:
        out.problem = "no answer-sheet layouts in --forms"
        return out
    size, marks = any_sheet.page_size, any_sheet.marks
    flat = _flat(img, quad, marks, size)
    text = read_qr(flat, any_sheet.qr)
    if not text:
        turned = cv2.rotate(flat, cv2.ROTATE_180)
        text = read_qr(turned, any_sheet.qr)
        if text:
            flat = turned
    out.qr = text
    parsed = parse_qr(text) if text else None
    if parsed is None:
        if form_hint is None or form_hint not in sheets:
            out.problem = ("QR code unreadable" if not text else f"QR code {text!r} is not an "
                           "answer sheet's")
            out.crop = png(flat, 500)
            return out
        layout, sheet_page, khash, form, lang = sheets[form_hint].layout, 1, "", form_hint, ""
    else:
        layout, sheet_page, khash, form, lang = parsed
    out.form, out.sheet_page, out.key_hash, out.language = form, sheet_page, khash, lang
    sheet = sheets.get(form)
    if sheet is None:
        out.problem = f"unknown form {form!r}: no {form}-sheet.json in --forms"
        out.crop = png(flat, 500)
        return out
    if layout != sheet.layout or sheet_page not in sheet.pages:
        out.problem = f"sheet layout {layout} page {sheet_page} is not in {form}-sheet.json"
        out.crop = png(flat, 500)
        return out
    if khash and khash != sheet.key_hash:
        out.problem = (f"printed for another key of form {form} (key hash {khash}, the key "
                       f"file's is {sheet.key_hash})")
        out.crop = png(flat, 500)
    lv = Levels(flat, sheet)
    _number(out, lv, sheet)
    for row in sheet.pages[sheet_page]:
        paper = lv.paper([x for x, _ in row.bubbles], row.bubbles[0][1])
        bubbles = [Bubble(ltr, *(f := lv.bubble(x, y, paper)), state(*f))
                   for ltr, (x, y) in zip(row.letters, row.bubbles, strict=True)]
        marked = [b.letter for b in bubbles if b.state == "marked"]
        doubtful = [b for b in bubbles if b.state == "doubtful"]
        problem = ""
        if doubtful:
            problem = "; ".join(f"{b.letter}: unclear mark ({b.fill:.0%} filled)"
                                for b in doubtful)
        elif len(marked) > 1 and not row.multiple:
            problem = f"{len(marked)} marks ({', '.join(marked)}) on a single-answer item"
        rr = RowRead(row.position, row.item, bubbles, marked, problem)
        if problem:
            rr.crop = _crop(flat, row.bubbles, sheet.radius, left=30)
        out.rows.append(rr)
    return out


def _crop(flat: Image, points: Any, radius: float, left: float = 4) -> bytes:
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    x0, x1 = round((min(xs) - radius - left) * SCALE), round((max(xs) + radius + 4) * SCALE)
    y0, y1 = round((min(ys) - radius - 4) * SCALE), round((max(ys) + radius + 4) * SCALE)
    return png(flat[max(0, y0):y1, max(0, x0):x1])


def _number(out: PageRead, lv: Levels, sheet: Sheet) -> None:
    digits: list[str] = []
    why: list[str] = []
    for n, col in enumerate(sheet.number):
        states = [state(*lv.bubble(x, y, lv.paper([x], y))) for x, y in col]
        marked = [str(d) for d, s in enumerate(states) if s == "marked"]
        if "doubtful" in states or len(marked) > 1:
            why.append(f"digit {n + 1} unclear")
            digits.append("?")
        else:
            digits.append(marked[0] if marked else " ")
    text = "".join(digits)
    if why:
        out.number_problem = "student number unreadable: " + ", ".join(why)
    elif not text.strip():
        out.number_problem = "student number left blank"
    elif " " in text.strip():
        out.number_problem = "student number has a gap"
    out.number = text.strip()
    if out.number_problem:
        out.crop = _crop(lv.flat, [p for col in sheet.number for p in col], sheet.radius)
