"""Scanning at scale: N synthetic filled answer sheets of the bundled forms, distorted as scans
and phone photos (benchmarks/scan_synth.py), written as JPEG files, then read by `dpassess
scan`'s library call in the runtime pool.

    python benchmarks/scan.py [--sheets 1000] [--dpi 200] [--jobs 2] [--doubtful 0.05]
                              [--seed 2026]

Prints: clear marks read right (and misread without a flag), planted doubtful rows flagged,
clear rows flagged needlessly, QR codes read, student numbers read, sheets per second of the
scan alone, its CPU time per page (this process and the workers), peak memory (the largest
of this process and any worker), and the load average (the machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import tempfile
import time
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import cv2  # noqa: E402

import scan_synth as synth  # noqa: E402
from dpassess.scan import scan  # noqa: E402

FORMS = ROOT / "exports" / "forms" / "data-parallelism"


def _make(job: tuple[int, int, int, float, str]) -> tuple[str, str, dict[int, tuple[str, list[str]]]]:
    i, seed, dpi, doubtful, out = job
    rng = random.Random(seed * 1_000_003 + i)
    form = ("dp-quiz-a", "dp-quiz-b")[i % 2]
    lay = synth.layout(FORMS / form / f"{form}-sheet.json")
    blank = _blank(form, dpi)
    p = synth.fill(blank, lay, dpi, rng, doubtful_rate=doubtful, number=f"{i:010d}")
    path = Path(out) / f"{i:05d}.jpg"
    cv2.imwrite(str(path), synth.distort(p.image, rng, jpeg=False),
                [cv2.IMWRITE_JPEG_QUALITY, 40])
    return form, p.number, p.rows


_BLANKS: dict[tuple[str, int], object] = {}


def _blank(form: str, dpi: int):
    if (form, dpi) not in _BLANKS:
        _BLANKS[(form, dpi)] = synth.render(FORMS / form / f"{form}-en.pdf", -1, dpi)
    return _BLANKS[(form, dpi)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sheets", type=int, default=1000)
    ap.add_argument("--dpi", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--doubtful", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.monotonic()
        with Pool(a.jobs) as pool:
            truth = pool.map(_make, [(i, a.seed, a.dpi, a.doubtful, tmp)
                                     for i in range(a.sheets)], chunksize=8)
            pool.close()
            pool.join()  # the makers' CPU time is counted before the scan's
        made = time.monotonic() - t0
        paths = sorted(Path(tmp).glob("*.jpg"))
        load0 = os.getloadavg()
        cpu0 = _cpu()
        t0 = time.monotonic()
        result = scan(paths, FORMS, jobs=a.jobs)
        took = time.monotonic() - t0
        cpu = [b - a for a, b in zip(cpu0, _cpu(), strict=True)]
        load1 = os.getloadavg()
    got = {(p, int(n)): r for p, _, n, r, _ in result.rows}
    flagged = {(o.sheet, o.item) for o in result.open}
    clear = right = misread = needless = planted_doubt = caught = 0
    for i, (_form, number, rows) in enumerate(truth):
        ref = f"{paths[i]}:1"
        for n, (kind, marked) in rows.items():
            if kind in (*synth.DOUBTFUL, "two"):
                planted_doubt += 1
                caught += (ref, str(n)) in flagged
                continue
            clear += 1
            if (ref, str(n)) in flagged:
                needless += 1
            elif got.get((number, n)) == ";".join(marked):
                right += 1
            else:
                misread += 1
    sheet_problems = sum(1 for o in result.open if o.item == "sheet")
    person_problems = sum(1 for o in result.open if o.item == "person")
    peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    print(f"sheets: {a.sheets} at {a.dpi} dpi (JPEG q40, rotation ±5°, scale 0.9-1.1, "
          f"perspective, blur, noise, uneven light, fold lines); made in {made:.1f} s")
    print(f"clear rows: {clear}; read right {right} ({right / max(clear, 1):.3%}); "
          f"misread without a flag {misread}; flagged needlessly {needless}")
    print(f"planted doubtful rows: {planted_doubt}; flagged {caught}")
    print(f"QR codes / sheets found: {a.sheets - sheet_problems}/{a.sheets}; "
          f"student numbers open: {person_problems}")
    print(f"scan: {took:.1f} s, {a.sheets / took:.1f} sheets/s with {a.jobs} jobs; "
          f"peak memory {peak:.0f} MB")
    print(f"scan CPU: {sum(cpu):.1f} s (this process {cpu[0]:.1f} s, workers {cpu[1]:.1f} s) = "
          f"{sum(cpu) / a.sheets * 1000:.0f} ms per page (JPEG decoding included)")
    print(f"load average (1, 5, 15 min) before the scan {_load(load0)}, after {_load(load1)} "
          f"on {os.cpu_count()} cores")


def _cpu() -> tuple[float, float]:
    """User + system CPU seconds of this process and of its finished (waited-for) children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def _load(avg: tuple[float, float, float]) -> str:
    return "/".join(f"{x:.2f}" for x in avg)


if __name__ == "__main__":
    main()
