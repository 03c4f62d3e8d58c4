"""Hostile input -> time per size: for each importer (GIFT, Moodle XML, QTI 2.1) and the bank
loader, the worst inputs known for it at 1k, 10k, 100k and 1M characters, and the growth per x10
(linear time is 10x; the target is at most 12x up to the documented caps). Growth is taken
between sizes whose smaller run took at least 5 ms (timer and scheduling noise below that).

    python benchmarks/hostile.py [--sizes 1000,10000,100000,1000000] [--timeout 20]
                                 [--only CASE[,CASE...]] [--json FILE]

Each (case, size) runs in a fresh process that builds the input, then times only the import (or
the load) with perf_counter; a run past `--timeout` seconds is killed and printed as ">T s", so a
quadratic case shows instead of hanging. The outcome column says what the reader did with the
largest input: "ok N" (items read; "M skipped": questions not imported, each with its reason),
or "refused" (an input error: a documented limit).

The cases (n is the size in characters of the hostile part):
- gift-id-comment / gift-tag-comment: a comment line of n characters of "[id:" or "[tag:" with
  no closing bracket, before a question;
- gift-escaped-comment: "[id:" then n characters of escaped brackets "\\]", ending in a control
  character (backtracking over the escapes);
- gift-same-name: n/24 questions all named "Q" (id allocation);
- gift-long-category: a $CATEGORY: path of n characters; gift-tag-category: one of "<a" repeated
  (tag stripping);
- gift-open-multilang: a question text of n characters of open multilang spans;
- mxml-same-name, mxml-long-category, mxml-open-multilang: the same in Moodle XML;
- mxml-deep-nesting: n/6 nested elements inside a question's text;
- mxml-cloze-open: a cloze text of n characters of gap starts that never close,
  `{1:SA:=a~{1:SA:=a~…` (Moodle's pattern backtracks over each); mxml-cloze-tildes: one gap of
  n/2 alternatives `~b` (its answers are read one after another);
- mxml-long-line: a question text of n characters on one line;
- qti-deep-nesting: n/11 nested divs in an item body; qti-long-line: a prompt of n characters;
- qti-many-choices: n/40 choices in one interaction;
- yaml-long-line: an item stem of n characters on one line;
- yaml-deep-nesting: n/2 nested flow sequences as a field's value;
- yaml-many-options: n/30 options in one item;
- yaml-many-files: n/200 item files in one bank (the loader's per-file work).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZES = (1_000, 10_000, 100_000, 1_000_000)
#: Growth is computed from runs of at least this many seconds (below, timer noise dominates).
MIN_TIMED = 0.005
CASES = (
    "gift-id-comment", "gift-tag-comment", "gift-escaped-comment", "gift-same-name",
    "gift-long-category", "gift-tag-category",
    "gift-open-multilang", "mxml-same-name", "mxml-long-category", "mxml-open-multilang",
    "mxml-deep-nesting", "mxml-long-line", "mxml-cloze-open", "mxml-cloze-tildes", "qti-deep-nesting", "qti-long-line",
    "qti-many-choices", "yaml-long-line", "yaml-deep-nesting", "yaml-many-options",
    "yaml-many-files",
)

# The child: builds the input for (case, n) in a temporary folder, then times the reader.
CHILD = r'''
import io, json, sys, tempfile, time, zipfile
from pathlib import Path

case, n = sys.argv[1], int(sys.argv[2])
base = Path(tempfile.mkdtemp(prefix="hostile-"))
tmp = base

def rep(unit, n):
    return unit * max(1, n // len(unit))

def mxml(questions):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<quiz>\n' + questions + "</quiz>\n").encode()

def mc(name="Q", text="What is 2+2?"):
    return ('<question type="multichoice"><name><text>' + name + '</text></name>'
            '<questiontext format="html"><text>' + text + '</text></questiontext>'
            '<single>true</single><answer fraction="100"><text>4</text></answer>'
            '<answer fraction="0"><text>5</text></answer></question>\n')

def qti(body="<p>What is 2+2?</p>", prompt="Pick one", choices=None, right="A"):
    choices = choices or '<simpleChoice identifier="A">4</simpleChoice><simpleChoice identifier="B">5</simpleChoice>'
    xml = ('<?xml version="1.0" encoding="UTF-8"?>\n'
           '<assessmentItem xmlns="http://www.imsglobal.org/xsd/imsqti_v2p1" identifier="q1" '
           'title="Q" adaptive="false" timeDependent="false" xml:lang="en">'
           '<responseDeclaration identifier="RESPONSE" cardinality="single" baseType="identifier">'
           '<correctResponse><value>' + right + '</value></correctResponse></responseDeclaration>'
           '<outcomeDeclaration identifier="SCORE" cardinality="single" baseType="float"/>'
           '<itemBody>' + body + '<choiceInteraction responseIdentifier="RESPONSE" shuffle="false" '
           'maxChoices="1"><prompt>' + prompt + '</prompt>' + choices + '</choiceInteraction>'
           '</itemBody><responseProcessing template="http://www.imsglobal.org/question/qti_v2p1/'
           'rptemplates/match_correct"/></assessmentItem>\n')
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("item.xml", xml)
    return buf.getvalue()

BANK = "schema: 1\nid: hostile\ntitle: {en: Hostile}\nlanguages: [en]\ndefault_language: en\n"

def item(i, stem="What is 2+2?", extra="", options=("a", "b")):
    opts = ", ".join(options)
    texts = ", ".join(f"{o}: Option {o}" for o in options)
    return (f"schema: 1\nid: h-{i}\ntype: single_choice\ntopic: t\n{extra}options: [{opts}]\n"
            f"key: {options[0]}\ntext:\n  en:\n    stem: {json.dumps(stem)}\n"
            f"    options: {{{texts}}}\n")

def bank(files):
    root = tmp / "bank"
    root.mkdir()
    (root / "bank.yaml").write_text(BANK, encoding="utf-8")
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root

def build(n, sub):
    """(format, bytes, bank folder) of the input for (case, n)."""
    global tmp
    tmp = base / sub
    tmp.mkdir()
    fmt, data, root = None, None, None
    if case == "gift-id-comment":
        fmt, data = "gift", ("// " + rep("[id:", n) + "\n::Q::What is 2+2?{=4 ~5}\n").encode()
    elif case == "gift-tag-comment":
        fmt, data = "gift", ("// " + rep("[tag:", n) + "\n::Q::What is 2+2?{=4 ~5}\n").encode()
    elif case == "gift-escaped-comment":
        fmt, data = "gift", ("// [id:" + rep("\\]", n) + "\x01\n::Q::What is 2+2?{=4 ~5}\n").encode()
    elif case == "gift-tag-category":
        fmt, data = "gift", ("$CATEGORY: " + rep("<a", n) + "\n\n::Q::What is 2+2?{=4 ~5}\n").encode()
    elif case == "gift-same-name":
        fmt, data = "gift", rep("::Q::What is 2+2?{=4 ~5}\n\n", n).encode()
    elif case == "gift-long-category":
        fmt, data = "gift", ("$CATEGORY: " + rep("a/", n) + "\n\n::Q::What is 2+2?{=4 ~5}\n").encode()
    elif case == "gift-open-multilang":
        fmt, data = "gift", ("::Q::" + rep('<span lang="en" class="multilang">', n) + "{=4 ~5}\n").encode()
    elif case == "mxml-same-name":
        fmt, data = "moodle-xml", mxml(rep(mc(), n))
    elif case == "mxml-long-category":
        fmt, data = "moodle-xml", mxml('<question type="category"><category><text>$course$/'
                                       + rep("a/", n) + "</text></category></question>\n" + mc())
    elif case == "mxml-open-multilang":
        fmt, data = "moodle-xml", mxml(mc(text=rep('&lt;span lang="en" class="multilang"&gt;', n)))
    elif case == "mxml-deep-nesting":
        d = max(1, n // 6)
        fmt, data = "moodle-xml", mxml(mc(text="<b>" * d + "x" + "</b>" * d))
    elif case in ("mxml-cloze-open", "mxml-cloze-tildes"):
        text = rep("{1:SA:=a~", n) if case == "mxml-cloze-open" else "{1:SA:=a" + rep("~b", n) + "}"
        fmt, data = "moodle-xml", mxml('<question type="cloze"><name><text>Q</text></name>'
                                       '<questiontext format="html"><text>' + text
                                       + "</text></questiontext></question>\n")
    elif case == "mxml-long-line":
        fmt, data = "moodle-xml", mxml(mc(text=rep("word ", n)))
    elif case == "qti-deep-nesting":
        d = max(1, n // 11)
        fmt, data = "qti21", qti(body="<div>" * d + "<p>x</p>" + "</div>" * d)
    elif case == "qti-long-line":
        fmt, data = "qti21", qti(prompt=rep("word ", n))
    elif case == "qti-many-choices":
        k = max(2, n // 40)
        fmt, data = "qti21", qti(choices="".join(
            f'<simpleChoice identifier="C{i}">choice {i}</simpleChoice>' for i in range(k)),
            right="C0")
    elif case == "yaml-long-line":
        root = bank({"h.yaml": item(0, stem=rep("word ", n))})
    elif case == "yaml-deep-nesting":
        d = max(1, n // 2)
        root = bank({"h.yaml": item(0, extra="symbols: " + "[" * d + "]" * d + "\n")})
    elif case == "yaml-many-options":
        k = max(2, n // 30)
        root = bank({"h.yaml": item(0, options=tuple(f"o{i}" for i in range(k)))})
    elif case == "yaml-many-files":
        root = bank({f"{i:06d}.yaml": item(i) for i in range(max(1, n // 200))})
    else:
        raise SystemExit(f"no case {case}")

    return fmt, data, root


def run(fmt, data, root):
    """(seconds, outcome) of one import or load."""
    if fmt is not None:
        from dpassess.importers import READERS
        import importlib
        reader = importlib.import_module(READERS[fmt])
        t0 = time.perf_counter()
        try:
            result = reader.read(data, "hostile", "en")
            outcome = f"ok {len(result.items)}" + (
                f", {len(result.skipped)} skipped" if result.skipped else "")
        except Exception as exc:  # what a user would see: a refusal, or a crash
            outcome = ("refused" if type(exc).__name__ in ("InputError", "UsageError", "NoLanguage")
                       else f"crash {type(exc).__name__}")
        return time.perf_counter() - t0, outcome
    from dpassess.bank.load import load_bank
    t0 = time.perf_counter()
    try:
        b = load_bank(root, jobs=1)
        outcome = f"ok {len(b.entries)}"
    except Exception as exc:
        outcome = ("refused" if type(exc).__name__ in ("BankLoadError", "UsageError")
                   else f"crash {type(exc).__name__}")
    return time.perf_counter() - t0, outcome


run(*build(100, "warm"))  # imports and first-use costs out of the timing
dt, outcome = run(*build(n, "timed"))
print(json.dumps({"seconds": dt, "outcome": outcome}))
'''


def measure(case: str, n: int, timeout: float, src: Path) -> tuple[float | None, str]:
    """(seconds, outcome) of one run; (None, "timeout") past `timeout`."""
    env = {"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0"}
    try:
        r = subprocess.run([sys.executable, "-c", CHILD, case, str(n)], capture_output=True,
                           text=True, timeout=timeout + 30, env=env)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    if r.returncode != 0:
        return None, f"error: {r.stderr.strip().splitlines()[-1][:60] if r.stderr.strip() else r.returncode}"
    out = json.loads(r.stdout.strip().splitlines()[-1])
    seconds = float(out["seconds"])
    return (seconds if seconds <= timeout else None), str(out["outcome"])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--only", default="")
    ap.add_argument("--src", type=Path, default=ROOT / "src",
                    help="the source tree to measure (e.g. an older checkout's src)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    cases = [c for c in CASES if not args.only or c in args.only.split(",")]
    head = f"{'case':22}" + "".join(f"{f'{s:,}':>10}" for s in sizes) + "  growth/x10  outcome"
    print(head)
    print("-" * len(head))
    table = {}
    for case in cases:
        times: list[float | None] = []
        outcome = ""
        for n in sizes:
            if times and times[-1] is None:
                times.append(None)  # a size that timed out: the larger ones would too
                continue
            t, said = measure(case, n, args.timeout, args.src)
            times.append(t)
            if t is not None or not outcome:
                outcome = said  # the outcome of the largest input that finished
        cells = "".join(f"{f'{t:.4f}' if t is not None else f'>{args.timeout:g} s':>10}"
                        for t in times)
        growth = [b / a for a, b in pairwise(times)
                  if a is not None and b is not None and a >= MIN_TIMED]
        worst = max((g for g in growth if g is not None), default=None)
        if any(t is None for t in times):
            gtext = "unbounded"
        else:
            gtext = f"{worst:.1f}x" if worst is not None else "-"
        print(f"{case:22}{cells}  {gtext:>10}  {outcome}", flush=True)
        table[case] = {"seconds": dict(zip(map(str, sizes), times, strict=True)),
                       "worst_growth": worst, "outcome": outcome}
    if args.json:
        args.json.write_text(json.dumps(table, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
