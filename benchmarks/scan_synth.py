"""Synthetic filled answer sheets: a printed sheet rendered by pdfium, marks drawn at the
bubbles `<form>-sheet.json` gives (pen, pencil, light pencil, a cross, an erasure, blank), then
the paper distorted as a scanner or a phone does (rotation, scale, perspective, blur, noise,
uneven light, a fold line, JPEG). Used by tests/test_scan.py and benchmarks/scan.py; the truth
of every planted mark is returned with the image.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import pypdfium2 as pdfium

#: Mark kinds: clear ones are read, doubtful ones must be flagged.
CLEAR = ("pen", "pencil", "blank")
DOUBTFUL = ("light", "cross", "erased")
INK = {"pen": 25, "pencil": 85, "light": 175, "erased": 205}


def render(pdf: Path, page: int, dpi: int) -> np.ndarray:
    """Page `page` (1-based; -1 the last) of `pdf` as a greyscale image."""
    doc = pdfium.PdfDocument(str(pdf))
    try:
        index = len(doc) - 1 if page == -1 else page - 1
        arr = doc[index].render(scale=dpi / 72, grayscale=True).to_numpy()
    finally:
        doc.close()
    return np.ascontiguousarray(arr[:, :, 0] if arr.ndim == 3 else arr)


def layout(sheet_json: Path) -> dict:
    return json.loads(sheet_json.read_text())


def mark(img: np.ndarray, x: float, y: float, r: float, kind: str, rng: random.Random) -> None:
    """Draw one mark of `kind` over the bubble centred at (x, y) px, radius r px."""
    if kind == "blank":
        return
    if kind == "cross":
        t = max(1, round(r / 5))
        d = r * 0.8
        cv2.line(img, (round(x - d), round(y - d)), (round(x + d), round(y + d)), 30, t,
                 cv2.LINE_AA)
        cv2.line(img, (round(x - d), round(y + d)), (round(x + d), round(y - d)), 30, t,
                 cv2.LINE_AA)
        return
    layer = np.full_like(img, 255)
    rr = r * rng.uniform(0.85, 1.05)
    cv2.circle(layer, (round(x + rng.uniform(-0.1, 0.1) * r), round(y + rng.uniform(-0.1, 0.1) * r)),
               round(rr), INK[kind] + rng.randint(-10, 10), -1, cv2.LINE_AA)
    np.minimum(img, layer, out=img)


@dataclass
class Planted:
    image: np.ndarray
    rows: dict[int, tuple[str, list[str]]]  # position -> (kind of the row, letters marked)
    number: str


def fill(blank: np.ndarray, lay: dict, dpi: int, rng: random.Random, *,
         doubtful_rate: float = 0.1, number: str | None = None) -> Planted:
    """Marks on a copy of `blank` (a rendered sheet page): each row gets a clear answer (pen or
    pencil), is left blank, or gets a doubtful mark (light, cross, erased, or two marks on a
    single-answer row) with probability `doubtful_rate`."""
    img = blank.copy()
    s = dpi / 72
    r = lay["radius"] * s
    planted: dict[int, tuple[str, list[str]]] = {}
    for row in lay["pages"][0]["rows"]:
        letters, bubbles = row["letters"], row["bubbles"]
        if rng.random() < doubtful_rate:
            kind = rng.choice([*DOUBTFUL, "two"])
        else:
            kind = rng.choice(("pen", "pencil", "pen", "blank"))
        chosen = rng.sample(range(len(letters)), 2 if kind == "two" else 1)
        for i in chosen:
            k = rng.choice(("pen", "pencil")) if kind == "two" else kind
            mark(img, bubbles[i][0] * s, bubbles[i][1] * s, r, k, rng)
        marked = [] if kind in ("blank", *DOUBTFUL) else sorted(letters[i] for i in chosen)
        if kind == "two" and row["multiple"]:
            kind = "pen"
        planted[row["position"]] = (kind, marked)
    digits = number if number is not None else "".join(
        str(rng.randrange(10)) for _ in lay["student_number"])
    for col, d in zip(lay["student_number"], digits, strict=False):
        x, y = col[int(d)]
        mark(img, x * s, y * s, r, "pen", rng)
    return Planted(img, planted, digits)


def distort(img: np.ndarray, rng: random.Random, *, angle: float = 5, jpeg: bool = True
            ) -> np.ndarray:
    """The page as a scan or photo: on a larger backdrop, rotated (up to `angle` degrees),
    scaled 0.9-1.1, slanted in perspective, blurred, noisy, unevenly lit, with a fold line,
    and saved as JPEG quality 40 (when `jpeg`)."""
    h, w = img.shape
    pad = round(0.06 * max(h, w))
    canvas = np.full((h + 2 * pad, w + 2 * pad), rng.randint(200, 250), np.uint8)
    canvas[pad:pad + h, pad:pad + w] = img
    # a fold line across the page
    if rng.random() < 0.5:
        y = pad + rng.randint(h // 3, 2 * h // 3)
        cv2.line(canvas, (pad, y), (pad + w, y + rng.randint(-20, 20)), rng.randint(150, 210), 1)
    H, W = canvas.shape
    src = np.float32([[0, 0], [W, 0], [W, H], [0, H]])
    j = 0.02 * W
    dst = np.float32([[x + rng.uniform(-j, j), y + rng.uniform(-j, j)] for x, y in src])
    persp = cv2.getPerspectiveTransform(src, dst)
    rot = cv2.getRotationMatrix2D((W / 2, H / 2), rng.uniform(-angle, angle),
                                  rng.uniform(0.9, 1.1))
    rot3 = np.vstack([rot, [0, 0, 1]])
    out = cv2.warpPerspective(canvas, rot3 @ persp, (W, H), borderValue=230)
    k = rng.choice((1, 3, 5))
    if k > 1:
        out = cv2.GaussianBlur(out, (k, k), 0)
    light = np.linspace(rng.uniform(0.7, 1.0), rng.uniform(0.9, 1.0), W, dtype=np.float32)
    f = out.astype(np.float32) * light[None, :]
    f += np.random.default_rng(rng.randrange(2**32)).normal(0, rng.uniform(0, 8), f.shape)
    out = np.clip(f, 0, 255).astype(np.uint8)
    if jpeg:
        _, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, 40])
        out = cv2.imdecode(buf, cv2.IMREAD_GRAYSCALE)
    return out
