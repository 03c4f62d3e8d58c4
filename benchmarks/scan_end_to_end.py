"""Paper end to end: the bundled forms printed (`dpassess assemble`), N answer sheets filled
from planted answers and distorted as scans (benchmarks/scan_synth.py), read back with
`dpassess scan`, analysed with `dpassess stats`, recorded with `dpassess stats --write`, and the
forms assembled again from the bank with the recorded statistics.

    python benchmarks/scan_end_to_end.py [OUT_DIR] [--sheets 40] [--dpi 200] [--seed 2026]
                                         [--jobs 2]

The oracle: the planted answers written directly as the long CSV `dpassess stats` reads
(person, form, question number, letters, the sheet's language), analysed the same way. The two analyses (JSON
reports) must be identical, and the re-assembled forms' summary must show the mean observed p
of the recorded statistics. Every student has an ability theta ~ N(0, 1) and answers question
q right with probability 1 / (1 + exp(-A (theta - b))), b by the item's declared
difficulty (`B`); a wrong answer marks another letter;
4 % of the answers are left blank; marks are pen or pencil (clear marks only: the doubtful ones
are the review loop's business, tests/test_scan.py).

Prints the figures: sheets, rows, how many scanned answers equal the planted ones, the open
questions of the scan, whether the analyses are identical, the record written, the mean
observed p per form (from the planted answers and from the summary of the re-assembly), and the
time of each step.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import math
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import cv2  # noqa: E402
import yaml  # noqa: E402

import scan_synth as synth  # noqa: E402

BANK = ROOT / "items" / "data-parallelism"
BLUEPRINT = ROOT / "blueprints" / "data-parallelism.yaml"
#: The languages the forms are printed in: the sheets alternate between them (the scan reads
#: each sheet's language from its QR code, so stats compares the languages).
LANGS = ("en", "id")
OMIT = 0.04
#: Discrimination and difficulty (by the item's declared difficulty) of the planted answers: far
#: enough apart that 40 students keep the hard item hard (observed p < 0.30), which the
#: blueprint's `{difficulty: hard, count: {min: 1}}` cell needs when the forms are assembled
#: again from the recorded statistics.
A = 1.7
B = {"easy": -1.8, "medium": 0.0, "hard": 2.2}


def cli(*args: str) -> tuple[int, str]:
    """`dpassess ARGS` in this process: (exit code, what it printed)."""
    from dpassess.cli import main

    out = io.StringIO()
    code: Any = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            main(list(args))
        except SystemExit as e:
            code = e.code
    return (int(code) if isinstance(code, int) else (0 if code is None else 1)), out.getvalue()


def _keys(forms: Path) -> dict[str, dict[int, list[str]]]:
    out: dict[str, dict[int, list[str]]] = {}
    for path in sorted(forms.glob("*/*-key.csv")):
        with path.open(newline="", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                out.setdefault(r["form"], {})[int(r["position"])] = r["key"].split(";")
    return out


def plant(bank: Path, forms: Path, tmp: Path, sheets: int, dpi: int, seed: int
          ) -> list[tuple[str, str, int, str, str]]:
    """Fill `sheets` answer sheets (alternating forms, each printed in both languages) into
    `tmp` as JPEG scans; returns the planted long CSV rows (person, form, question number,
    letters joined by ';', the language the sheet was printed in)."""
    rng = random.Random(seed)
    difficulty = {d["id"]: d["difficulty"] for d in (
        yaml.safe_load(p.read_text(encoding="utf-8")) for p in bank.glob("*.yaml")
        if p.name != "bank.yaml")}
    keys = _keys(forms)
    labels = sorted(keys)
    blanks = {(f, lang): synth.render(forms / f / f"{f}-{lang}.pdf", -1, dpi)
              for f in labels for lang in LANGS}
    lays = {f: synth.layout(forms / f / f"{f}-sheet.json") for f in labels}
    s = dpi / 72
    rows: list[tuple[str, str, int, str, str]] = []
    for i in range(sheets):
        form = labels[i % len(labels)]
        lang = LANGS[i // len(labels) % len(LANGS)]
        lay = lays[form]
        img = blanks[(form, lang)].copy()
        r = lay["radius"] * s
        theta = rng.gauss(0.0, 1.0)
        number = f"{2026_000_000 + 7 * i:010d}"
        for page in lay["pages"]:
            for row in page["rows"]:
                q, letters = row["position"], row["letters"]
                key = keys[form][q]
                b = B[difficulty[row["item"]]]
                if rng.random() < OMIT:
                    chosen: list[str] = []
                elif rng.random() < 1 / (1 + math.exp(-A * (theta - b))):
                    chosen = key
                else:
                    chosen = [rng.choice([x for x in letters if x not in key])]
                kind = rng.choice(("pen", "pencil"))
                for letter in chosen:
                    x, y = row["bubbles"][letters.index(letter)]
                    synth.mark(img, x * s, y * s, r, kind, rng)
                rows.append((number, form, q, ";".join(sorted(chosen)), lang))
        for col, d in zip(lay["student_number"], number, strict=True):
            x, y = col[int(d)]
            synth.mark(img, x * s, y * s, r, "pen", rng)
        cv2.imwrite(str(tmp / f"sheet-{i:03d}.jpg"), synth.distort(img, rng, jpeg=False),
                    [cv2.IMWRITE_JPEG_QUALITY, 60])
    return rows


def _write_long(path: Path, rows: list[tuple[str, str, int, str, str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["person", "form", "item", "response", "language"])
        w.writerows(rows)


def _read_long(path: Path) -> set[tuple[str, str, int, str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return {(r["person"], r["form"], int(r["item"]), r["response"], r["language"])
                for r in csv.DictReader(f)}


def _summary_observed(summary: str) -> list[str]:
    """The 'mean p observed' row of the assembly summary (one cell per form)."""
    for line in summary.splitlines():
        if line.strip().startswith("mean p observed"):
            return line.split("mean p observed", 1)[1].split()
    return []


def run(out: Path, sheets: int = 40, dpi: int = 200, seed: int = 2026, jobs: int = 2
        ) -> dict[str, Any]:
    """Everything in `out` (a copy of the seed bank and blueprint, the printed forms, the scans,
    both analyses, the record, the forms assembled again); returns the figures."""
    times: dict[str, float] = {}
    codes: dict[str, int] = {}
    bank = out / "items" / BANK.name
    shutil.copytree(BANK, bank)
    blueprint = out / "blueprints" / BLUEPRINT.name
    blueprint.parent.mkdir(parents=True)
    shutil.copy(BLUEPRINT, blueprint)
    forms = out / "forms"

    def step(name: str, *args: str, ok: tuple[int, ...] = (0,)) -> str:
        t0 = time.monotonic()
        code, said = cli(*args)
        times[name] = time.monotonic() - t0
        codes[name] = code
        if code not in ok:
            raise RuntimeError(f"dpassess {' '.join(args)} exited {code}:\n{said}")
        return said

    step("assemble (print)", "assemble", str(blueprint), "--out", str(forms))
    scans = out / "scans"
    scans.mkdir()
    t0 = time.monotonic()
    planted = plant(bank, forms, scans, sheets, dpi, seed)
    times["fill"] = time.monotonic() - t0
    _write_long(out / "planted.csv", planted)
    responses = out / "responses.csv"
    scan_said = step("scan", "scan", *map(str, sorted(scans.glob("*.jpg"))), "--forms",
                     str(forms), "--out", str(responses), "--jobs", str(jobs), ok=(0, 1))
    scanned = _read_long(responses)
    stats = ("--bank", str(bank), "--form", str(forms), "--format", "json")
    step("stats (planted)", "stats", str(out / "planted.csv"), *stats,
         "--out", str(out / "planted-stats.json"))
    step("stats (scanned)", "stats", str(responses), *stats,
         "--out", str(out / "scanned-stats.json"))
    oracle = json.loads((out / "planted-stats.json").read_text(encoding="utf-8"))
    got = json.loads((out / "scanned-stats.json").read_text(encoding="utf-8"))
    records_before = set((bank / "stats").glob("*.json")) if (bank / "stats").exists() else set()
    step("stats --write", "stats", str(responses), "--bank", str(bank), "--form", str(forms),
         "--write", "--out", str(out / "stats.txt"))
    records = sorted(set((bank / "stats").glob("*.json")) - records_before)
    again = out / "forms-again"
    step("assemble (again)", "assemble", str(blueprint), "--out", str(again))
    summary = (again / "summary.txt").read_text(encoding="utf-8")
    # the mean p each form should show: its items' p in the planted answers' analysis
    p = {it["item"]: it["p"] for it in _items(oracle)}
    with (again / "summary.json").open(encoding="utf-8") as f:
        data = json.load(f)
    want = {f["label"]: sum(p[i] for i in _form_items(again, f["label"])) /
            len(_form_items(again, f["label"])) for f in data["forms"]}
    return {
        "sheets": sheets, "dpi": dpi, "rows": len(planted),
        "scanned_equal_planted": len(scanned & set(planted)),
        "scanned_rows": len(scanned),
        "scan_exit": codes["scan"],
        "scan_said": scan_said.strip().splitlines()[-1] if scan_said.strip() else "",
        "analyses_identical": _without_file(oracle) == _without_file(got),
        "records": [str(r.relative_to(out)) for r in records],
        "mean_p_planted": want,
        "mean_p_summary": _summary_observed(summary),
        "summary": summary,
        "times": times,
        "oracle": oracle, "scanned": got,
    }


def _without_file(report: dict[str, Any]) -> dict[str, Any]:
    """The report less the responses file's own name and SHA-256 (the administration's record
    of which file was read): everything else must be equal."""
    adm = {k: v for k, v in report["administration"].items() if k not in ("responses", "sha256")}
    return {**report, "administration": adm}


def _items(report: Any) -> list[dict[str, Any]]:
    """The per-item entries of a `dpassess stats --format json` report (one administration)."""
    analyses = report["analyses"] if isinstance(report, dict) and "analyses" in report else [report]
    return [it for a in analyses for it in a["items"]]


def _form_items(forms: Path, label: str) -> list[str]:
    for path in forms.glob("*/*-key.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data["label"] == label:
            return [q["item"] for q in data["items"]]
    raise KeyError(label)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", type=Path)
    ap.add_argument("--sheets", type=int, default=40)
    ap.add_argument("--dpi", type=int, default=200)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    out = a.out or Path(tempfile.mkdtemp(prefix="dpassess-scan-e2e-"))
    fig = run(out, a.sheets, a.dpi, a.seed, a.jobs)
    print(f"sheets: {fig['sheets']} at {fig['dpi']} dpi ({fig['rows']} answers planted, "
          f"pen and pencil, 4% blank; rotation, scale, perspective, blur, noise, uneven light, "
          f"JPEG q60)")
    print(f"scanned answers equal to the planted ones: {fig['scanned_equal_planted']}/"
          f"{fig['rows']} (rows written {fig['scanned_rows']}); scan exit {fig['scan_exit']}, said: {fig['scan_said']}")
    print(f"analysis of the scans identical to the analysis of the planted answers (every "
          f"field of the JSON report but the file's name and hash): {fig['analyses_identical']}")
    print(f"recorded in the bank: {', '.join(fig['records']) or 'nothing'}")
    print("mean p observed per form, from the planted answers: " + ", ".join(
        f"{k} {v:.3f}" for k, v in sorted(fig["mean_p_planted"].items())))
    print("mean p observed per form, in the re-assembly's summary: "
          + " ".join(fig["mean_p_summary"]))
    print("times: " + ", ".join(f"{k} {v:.1f} s" for k, v in fig["times"].items()))
    print(f"files: {out}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    main()
