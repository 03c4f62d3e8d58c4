"""The benchmark table (`make bench`): dpassess against text2qti and against the parse/serialise
floor, on the same synthetic bank, in the same run.

    .venv/bin/python benchmarks/run.py [--items N] [--repeat R] [--big [--big-items M]]
                                       [--baseline REV] [--quick]

First the two tables of targets, every row measured in one interleaved run (each repeat runs
every row once, in turn, so that a change in the machine's load touches all rows alike), with
wall and CPU seconds (the process and the workers it waited for), the load average and the
git commit:

  1. on N items (bilingual): the full job (b below) and a's job by dpassess against text2qti
     (a) and the floor (c), wall and CPU; assembly of 20 forms × 60 items from 10,000 (case (b)
     of benchmarks/assemble.py, equal points on, seed 1, 60 deterministic seconds); `dpassess
     stats` on 10,000 persons × 100 items (benchmarks/stats_sim.py);
  2. on the bundled 8-item bank: `check`, `export -f qti21` (every language, to a folder),
     `lint --no-cache` and `build` with nothing changed (no blueprints; the lint cache and the
     output filled by a first run), each as a multiple of `python -c pass` (as
     benchmarks/latency.py runs them, the package compiled first).

`--baseline REV` also runs every row of both tables with the library of an earlier commit
(checked out in a temporary git worktree, put first on PYTHONPATH; the steps are this file's),
interleaved with the current code, and prints now / baseline for each. `--quick` prints the two
tables only (not the rows below).

Rows (each step runs in a fresh subprocess, R times; the best time is shown):

  a  text2qti 0.8.0: the bank's N items in English, written in text2qti's text format (single
     choice and true/false as its single-choice questions, multiple response as its
     multiple-answer questions), parsed and written to one QTI zip (its Python API, as its
     command line does: `Quiz(text, config=...)`, `QTI(quiz).save(path)`).
  b  dpassess: load the bank, lint it (no cache), export QTI 2.1, Moodle XML and GIFT in id, en
     and multi (where the format carries several languages), every file written to disk (the
     8 files computed in worker processes, as `dpassess build` does; the Canvas packages that
     `build` also writes are left out, so the row stays comparable with earlier runs).
  c  the floor: bare `yaml.load(CSafeLoader)` of the same files, plus lxml building and
     serialising N bare item trees (one element per text field, one language).

Extra rows: a's job done by dpassess (load, then one QTI 2.1 zip in English, no lint: the
like-for-like figure, not a target), re-lint of the unchanged bank through the cache (`dpassess
lint` path), re-lint after one item changed, lint on a word-salad bank full of findings, and
`dpassess build` (lint through the cache, every export, in-process) with a cold cache and on the
unchanged bank. `--big` adds b at M items (default 100,000) for the memory bound.

Peak memory: `ru_maxrss` of each step's own process (the interpreter and imports included), and
separately the largest of its worker processes (`RUSAGE_CHILDREN`), since workers are forked
copies; both are maxima over the repeats. Load average is printed before and after.
"""

from __future__ import annotations

import compileall
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


# --- steps (run in a child process) -------------------------------------------------------


#: The formats of row b, the full job (8 files of a bilingual bank), as the row was defined
#: before the Canvas format existed.
FULL_JOB_FORMATS = ("qti21", "moodle-xml", "gift")

def _t2q_text(root: Path) -> str:
    """The bank's items in text2qti's format, English."""
    from dpassess import load_bank
    from dpassess.model import ItemType

    bank = load_bank(root)
    out = ["Quiz title: Synthetic bank", "Quiz description: Synthetic bank", ""]
    for n, e in enumerate(bank.entries, 1):
        it, c = e.item, e.item.text["en"]
        out.append(f"Title: {c.title}")
        out.append(f"{n}.  {c.stem}")
        multi = it.type is ItemType.multiple_response
        for oid in it.option_ids:
            mark = ("[*]" if oid in it.key else "[ ]") if multi else ("*" if oid in it.key else "") + "a)"
            out.append(f"{mark} {it.option_text('en', oid)}")
            if oid in c.feedback:
                out.append(f"... {c.feedback[oid]}")
        out.append("")
    return "\n".join(out)


def step_text2qti(work: Path) -> dict:
    from text2qti.config import Config
    from text2qti.qti import QTI
    from text2qti.quiz import Quiz

    src = work / "t2q.txt"
    t = time.perf_counter()
    text = src.read_text(encoding="utf-8")
    quiz = Quiz(text, config=Config(), source_name=src.as_posix())
    QTI(quiz).save(work / "out" / "t2q.zip")
    return {"secs": time.perf_counter() - t, "items": len(quiz.questions_and_delims)}


def step_dpassess(work: Path, root: Path | None = None) -> dict:
    from dpassess import load_bank
    from dpassess.export import EXPORTERS, MULTI, Collection
    from dpassess.export.runner import ExportFile, file_name, write_exports
    from dpassess.lint import LintConfig, lint_banks

    root = root or work / "bank"
    out = work / "out" / "dpassess"
    parts: dict[str, float] = {}
    t0 = t = time.perf_counter()
    bank = load_bank(root)
    parts["load"] = time.perf_counter() - t
    t = time.perf_counter()
    findings = lint_banks([bank], LintConfig())
    parts["lint"] = time.perf_counter() - t
    collection = Collection.from_bank(bank)
    # every file at once, as `dpassess build` writes them (in worker processes, then in order)
    exports = [ExportFile(collection, fmt, lang, out / fmt / file_name(collection, fmt, lang))
               for fmt, exp in EXPORTERS.items() if fmt in FULL_JOB_FORMATS
               for lang in [*bank.config.languages, *([MULTI] if exp.multi else [])]]
    t = time.perf_counter()
    write_exports(exports)
    parts["export (8 files)"] = time.perf_counter() - t
    return {"secs": time.perf_counter() - t0, "parts": parts, "findings": len(findings),
            "items": len(bank.entries)}


def step_same_as_a(work: Path) -> dict:
    """a's job done by dpassess: load the bank (both languages, validated) and write one QTI 2.1
    zip in English; no lint. The like-for-like figure."""
    from dpassess import load_bank
    from dpassess.export import Collection
    from dpassess.export.runner import ExportFile, file_name, write_exports

    parts: dict[str, float] = {}
    t0 = t = time.perf_counter()
    bank = load_bank(work / "bank")
    parts["load"] = time.perf_counter() - t
    t = time.perf_counter()
    collection = Collection.from_bank(bank)
    path = work / "out" / "same-as-a" / file_name(collection, "qti21", "en")
    write_exports([ExportFile(collection, "qti21", "en", path)])
    parts["export"] = time.perf_counter() - t
    return {"secs": time.perf_counter() - t0, "parts": parts, "items": len(bank.entries)}


def _build_items(work: Path) -> Path:
    """A folder holding a copy of the bench bank and a dpassess.toml with fail-on = error (the bank's
    23 warnings would stop the build)."""
    items = work / "items"
    if not items.exists():
        items.mkdir()
        shutil.copytree(work / "bank", items / "synthetic")  # find_banks follows no symlink
        (items / "dpassess.toml").write_text('[lint]\nfail-on = "error"\n', encoding="utf-8")
    return items


def step_build(work: Path, cold: bool = True) -> dict:
    """`dpassess build` (the library call the command makes): cold lint cache, or the unchanged
    bank again (the cache filled by the cold runs)."""
    from dpassess.app.build import build

    cdir = work / "build-cache"
    if cold:
        shutil.rmtree(cdir, ignore_errors=True)
    t = time.perf_counter()
    report = build(_build_items(work), work / "out" / "build", work / "no-blueprints",
                   cache_dir=cdir)
    secs = time.perf_counter() - t
    assert report.exit_code == 0, report.lines
    return {"secs": secs, "parts": {}}


def step_build_warm(work: Path) -> dict:
    return step_build(work, cold=False)


def step_floor(work: Path) -> dict:
    import yaml
    from lxml import etree

    files = sorted(p for p in (work / "bank").glob("*.yaml") if p.name != "bank.yaml")
    t = time.perf_counter()
    datas = []
    for p in files:
        with open(p, encoding="utf-8") as fh:
            datas.append(yaml.load(fh.read(), Loader=yaml.CSafeLoader))
    t_yaml = time.perf_counter() - t
    size = 0
    for d in datas:
        c = d["text"]["en"]
        root = etree.Element("item", id=d["id"])
        etree.SubElement(root, "stem").text = c["stem"]
        for oid, txt in c["options"].items():
            etree.SubElement(root, "option", id=oid).text = txt
        for oid, fb in c["feedback"].items():
            etree.SubElement(root, "feedback", id=oid).text = fb
        etree.SubElement(root, "explanation").text = c["explanation"]
        size += len(etree.tostring(root, encoding="UTF-8"))
    secs = time.perf_counter() - t
    return {"secs": secs, "parts": {"yaml": t_yaml, "lxml": secs - t_yaml}, "items": len(datas)}


def step_relint(work: Path) -> dict:
    """Cold lint through the CLI path with an empty cache, then the unchanged bank again, then
    after one item changed."""
    from dpassess.lint import LintConfig
    from dpassess.lint.incremental import lint_paths
    from dpassess.runtime.cache import Cache

    bank = work / "bank"
    cdir = work / "cache"
    shutil.rmtree(cdir, ignore_errors=True)
    cfg = LintConfig()
    t = time.perf_counter()
    cold = lint_paths([bank], cfg, None)
    t_nocache = time.perf_counter() - t
    t = time.perf_counter()
    lint_paths([bank], cfg, Cache(cdir))
    t_fill = time.perf_counter() - t
    t = time.perf_counter()
    warm = lint_paths([bank], cfg, Cache(cdir))
    t_warm = time.perf_counter() - t
    assert warm == cold
    victim = sorted(bank.glob("item-*.yaml"))[len(cold) % 7]
    old = victim.read_bytes()
    try:
        victim.write_bytes(old.replace(b"stem: ", b"stem: Now, ", 1))
        t = time.perf_counter()
        lint_paths([bank], cfg, Cache(cdir))
        t_one = time.perf_counter() - t
    finally:
        victim.write_bytes(old)
    return {"secs": t_warm, "parts": {"cold (no cache)": t_nocache, "cold (filling cache)": t_fill,
                                       "unchanged": t_warm, "one item changed": t_one}}


def step_salad(work: Path) -> dict:
    from dpassess import load_bank
    from dpassess.lint import LintConfig, lint_banks

    t = time.perf_counter()
    bank = load_bank(work / "salad")
    t_load = time.perf_counter() - t
    t = time.perf_counter()
    findings = lint_banks([bank], LintConfig())
    t_lint = time.perf_counter() - t
    return {"secs": t_lint, "parts": {"load": t_load, "lint": t_lint}, "findings": len(findings)}


def step_big(work: Path) -> dict:
    return step_dpassess(work, work / "big")


STEPS = {"text2qti": step_text2qti, "dpassess": step_dpassess,
         "same-as-a": step_same_as_a, "floor": step_floor,
         "relint": step_relint, "salad": step_salad, "big": step_big, "build": step_build,
         "build-warm": step_build_warm}


def step_assemble(work: Path) -> dict:
    """Case (b) of benchmarks/assemble.py: 20 forms × 60 items from 10,000, equal points on."""
    from assemble import case_b, make_bank
    from dpassess.assemble.solve import solve

    pr = case_b(make_bank(10_000, 20, enemies=2000))
    t = time.perf_counter()
    sel = solve(pr, 1, 60)
    return {"secs": time.perf_counter() - t, "status": sel.status.value,
            "first": sel.first_solution, "parts": {}}


STEPS["assemble"] = step_assemble


def child(name: str, work: Path) -> None:
    result = STEPS[name](work)
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    result.update(rss=me, workers=kids)
    print("RESULT " + json.dumps(result))


# --- the table (parent) --------------------------------------------------------------------


def run_step(name: str, work: Path, repeat: int) -> dict:
    best: dict | None = None
    rss = workers = 0.0
    for _ in range(repeat):
        p = subprocess.run([sys.executable, __file__, "--step", name, str(work)],
                           capture_output=True, text=True, check=False)
        line = next((x for x in p.stdout.splitlines() if x.startswith("RESULT ")), None)
        if p.returncode != 0 or line is None:
            raise SystemExit(f"step {name} failed:\n{p.stdout}\n{p.stderr}")
        r = json.loads(line[7:])
        rss, workers = max(rss, r["rss"]), max(workers, r["workers"])
        if best is None or r["secs"] < best["secs"]:
            best = r
    assert best is not None
    best.update(rss=rss, workers=workers)
    return best


def _cpu_of_children() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def timed(cmd: list[str], env: dict[str, str] | None = None) -> dict:
    """Run `cmd` once: wall and CPU seconds (its own and its workers'), its RESULT line if any."""
    cpu = _cpu_of_children()
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    wall = time.perf_counter() - t
    cpu = _cpu_of_children() - cpu
    if p.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    line = next((x for x in p.stdout.splitlines() if x.startswith("RESULT ")), None)
    out = json.loads(line[7:]) if line is not None else {}
    out.update(wall=wall, cpu=cpu)
    return out


def git_commit(where: Path) -> str:
    p = subprocess.run(["git", "-C", str(where), "describe", "--always", "--dirty"],
                       capture_output=True, text=True, check=False)
    return p.stdout.strip() or "?"


def target_rows(work: Path, bank_root: Path) -> dict[str, list[str]]:
    """Each row of the two tables as a command (steps of this file, or dpassess itself)."""
    py = [sys.executable]
    step = [*py, __file__, "--step"]
    dp = [*py, "-m", "dpassess"]
    sim = work / "sim"
    return {
        "text2qti": [*step, "text2qti", str(work)],
        "full job": [*step, "dpassess", str(work)],
        "like for like": [*step, "same-as-a", str(work)],
        "floor": [*step, "floor", str(work)],
        "assembly": [*step, "assemble", str(work)],
        "stats": [*dp, "stats", str(sim / "responses.csv"), "--bank", str(sim / "bank")],
        "python -c pass": [*py, "-c", "pass"],
        "check": [*dp, "check", str(bank_root)],
        "export -f qti21": [*dp, "export", "-f", "qti21", str(bank_root), "-o",
                            str(work / "out" / "startup-qti")],
        "lint --no-cache": [*dp, "lint", "--no-cache", str(bank_root)],
        "build, nothing changed": [*dp, "build", "--items", str(bank_root.parent), "--out",
                                   str(work / "out" / "startup-build"), "--blueprints",
                                   str(work / "no-blueprints")],
    }


def baseline_tree(rev: str, tmp: Path) -> Path:
    """A detached git worktree of `rev` (removed by the caller)."""
    where = tmp / "baseline"
    subprocess.run(["git", "-C", str(HERE.parent), "worktree", "add", "--detach", str(where), rev],
                   check=True, capture_output=True)
    return where


def targets(work: Path, repeat: int, baseline: Path | None) -> None:
    """The two tables of targets, interleaved; with a baseline, now / baseline per row."""
    import stats_sim

    stats_sim.write(work / "sim", 10_000, 100, 7)
    root = HERE.parent / "items" / "data-parallelism"
    rows = target_rows(work, root)
    envs: dict[str, dict[str, str]] = {"now": {**os.environ, "PYTHONPATH": str(HERE.parent / "src"),
                                             "DPASSESS_CACHE_DIR": str(work / "cache-now")}}
    if baseline is not None:
        envs["baseline"] = {**os.environ, "PYTHONPATH": str(baseline / "src"),
                            "DPASSESS_CACHE_DIR": str(work / "cache-baseline")}
    # compiled first, as an installed package is (with PYTHONDONTWRITEBYTECODE set, every run
    # would compile the package's sources again: start-up rows measured the compiler)
    for tree in [HERE.parent] + ([baseline] if baseline is not None else []):
        compileall.compile_dir(str(tree / "src"), quiet=1)
    def command(name: str, which: str) -> list[str]:
        """The row's command for `which` tree: each tree builds into its own folder (a build
        into the other tree's would find another's outputs and write them again)."""
        cmd = rows[name]
        if name == "build, nothing changed":
            cmd = [f"{a}-{which}" if a.endswith("startup-build") else a for a in cmd]
        return cmd

    for which, env in envs.items():  # fill the lint cache and the output folder
        timed(command("build, nothing changed", which), env)
    best: dict[tuple[str, str], dict] = {}
    print(f"load average before: {loadavg()}")
    for _ in range(repeat):
        for name in rows:
            for which, env in envs.items():
                r = timed(command(name, which), env)
                old = best.get((name, which))
                if old is None:
                    best[name, which] = r
                else:
                    old["cpu"] = min(old["cpu"], r["cpu"])
                    if r["wall"] < old["wall"]:
                        r["cpu"] = old["cpu"]
                        best[name, which] = r
    print(f"load average after:  {loadavg()}")

    def ratio(a: str, b: str, key: str, which: str) -> float:
        return float(best[a, which][key] / best[b, which][key])

    first = [
        ("full job / text2qti, wall", lambda w: ratio("full job", "text2qti", "wall", w), "<= 0.5"),
        ("full job / text2qti, CPU", lambda w: ratio("full job", "text2qti", "cpu", w), "<= 1.0"),
        ("like for like / text2qti, wall", lambda w: ratio("like for like", "text2qti", "wall", w),
         "<= 0.25"),
        ("full job / floor, wall", lambda w: ratio("full job", "floor", "wall", w), "<= 2.5"),
    ]
    cols = list(envs)
    head = " | ".join(cols) + (" | now / baseline" if baseline is not None else "")
    print()
    print(f"| {n_items_label(work)} | {head} | target |")
    print("|---|" + "---:|" * (len(cols) + (baseline is not None)) + "---|")
    for label, fn, target in first:
        vals = [fn(w) for w in cols]
        extra = [f"{vals[0] / vals[1]:.2f}"] if baseline is not None else []
        print(f"| {label} | " + " | ".join(f"{v:.2f}" for v in vals)
              + "".join(f" | {e}" for e in extra) + f" | {target} |")
    for name, label, target in (("assembly", "assembly, 20 forms × 60 from 10,000, s (wall / CPU)",
                                 "<= 30 s"),
                                ("stats", "`dpassess stats`, 10,000 persons × 100 items, s (wall / "
                                 "CPU)", "<= 2 s")):
        vals = [f"{best[name, w]['wall']:.1f} / {best[name, w]['cpu']:.1f}"
                + (f" ({best[name, w]['status']})" if "status" in best[name, w] else "")
                for w in cols]
        extra = [f"{best[name, 'now']['cpu'] / best[name, 'baseline']['cpu']:.2f} CPU"] \
            if baseline is not None else []
        print(f"| {label} | " + " | ".join(vals) + "".join(f" | {e}" for e in extra)
              + f" | {target} |")
    print()
    print(f"| bundled 8-item bank, × `python -c pass` (wall; CPU) | {head} | target |")
    print("|---|" + "---:|" * (len(cols) + (baseline is not None)) + "---|")
    floor = {w: best["python -c pass", w] for w in cols}
    print("| `python -c pass`, ms (wall; CPU) | " + " | ".join(
        f"{floor[w]['wall'] * 1000:.0f}; {floor[w]['cpu'] * 1000:.0f}" for w in cols)
        + (" | " if baseline is not None else "") + " | |")
    for name, target in (("check", "<= 12×"), ("export -f qti21", "<= 12×"),
                         ("lint --no-cache", "<= 25×"), ("build, nothing changed", "<= 15×")):
        x = {w: best[name, w]["wall"] / floor[w]["wall"] for w in cols}
        c = {w: best[name, w]["cpu"] / max(floor[w]["cpu"], 1e-3) for w in cols}
        extra = [f"{best[name, 'now']['wall'] / best[name, 'baseline']['wall']:.2f}"] \
            if baseline is not None else []
        print(f"| `{name}` | " + " | ".join(f"{x[w]:.1f}×; {c[w]:.1f}×" for w in cols)
              + "".join(f" | {e}" for e in extra) + f" | {target} |")


def n_items_label(work: Path) -> str:
    n = sum(1 for p in (work / "bank").glob("*.yaml") if p.name != "bank.yaml")
    return f"{n:,} items, bilingual (ratios of best times)"


def machine() -> str:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{os.cpu_count()} cores ({model}), Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}")


def loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--step"]:
        child(argv[1], Path(argv[2]))
        return 0
    if {"-h", "--help"} & set(argv):
        print(__doc__)
        return 0
    known = {"--items": 1, "--repeat": 1, "--big-items": 1, "--baseline": 1, "--big": 0,
             "--quick": 0}
    i = 0
    while i < len(argv):
        if argv[i] not in known or i + known[argv[i]] >= len(argv):
            print(f"benchmarks/run.py: {argv[i]!r}: unknown or incomplete option (see --help)",
                  file=sys.stderr)
            return 2
        i += 1 + known[argv[i]]
    from importlib.util import find_spec

    if find_spec("text2qti") is None:
        print("benchmarks/run.py: text2qti, the baseline, is not installed: "
              "`make bench` installs it", file=sys.stderr)
        return 2
    n = int(argv[argv.index("--items") + 1]) if "--items" in argv else 10_000
    repeat = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 3
    big = int(argv[argv.index("--big-items") + 1]) if "--big-items" in argv else 100_000
    rev = argv[argv.index("--baseline") + 1] if "--baseline" in argv else None
    import dpassess
    import synth

    with tempfile.TemporaryDirectory(prefix="dpassess-bench-") as tmp:
        work = Path(tmp)
        t = time.perf_counter()
        synth.write(work / "bank", n)
        synth.write(work / "salad", n, style="salad")
        (work / "t2q.txt").write_text(_t2q_text(work / "bank"), encoding="utf-8")
        (work / "out").mkdir()
        if "--big" in argv:
            synth.write(work / "big", big)
        print(f"dpassess {dpassess.__version__} benchmark: {n:,} bilingual items (id, en); "
              f"best of {repeat}; generated in {time.perf_counter() - t:.1f} s")
        print(f"machine: {machine()}")
        print(f"commit: {git_commit(HERE.parent)}" + (f"; baseline: {rev}" if rev else ""))
        base = baseline_tree(rev, work) if rev is not None else None
        try:
            targets(work, repeat, base)
        finally:
            if base is not None:
                subprocess.run(["git", "-C", str(HERE.parent), "worktree", "remove", "--force",
                                str(base)], check=False, capture_output=True)
        if "--quick" in argv:
            return 0
        print()
        print(f"load average before: {loadavg()}")
        rows = [(k, run_step(k, work, repeat)) for k in ("text2qti", "dpassess", "floor")]
        res = dict(rows)
        same = run_step("same-as-a", work, repeat)
        relint = run_step("relint", work, repeat)
        salad = run_step("salad", work, repeat)
        build_cold = run_step("build", work, repeat)
        build_warm = run_step("build-warm", work, repeat)
        big_r = run_step("big", work, 1) if "--big" in argv else None
        print(f"load average after:  {loadavg()}")

    a, b, c = res["text2qti"]["secs"], res["dpassess"]["secs"], res["floor"]["secs"]
    print()
    print("| step | time (s) | items/s | peak RSS MiB (main / largest worker) | notes |")
    print("|---|---:|---:|---:|---|")

    def row(label: str, r: dict, items: int, note: str = "") -> None:
        w = f" / {r['workers']:.0f}" if r["workers"] else ""
        print(f"| {label} | {r['secs']:.2f} | {items / r['secs']:,.0f} | {r['rss']:.0f}{w} | {note} |")

    row("a: text2qti, en, 1 QTI zip", res["text2qti"], n)
    parts = res["dpassess"]["parts"]
    row("b: dpassess lint + 3 formats × (id, en, multi)", res["dpassess"], n,
        ", ".join(f"{k} {v:.2f}" for k, v in parts.items())
        + f"; {res['dpassess']['findings']} findings")
    row("a's job by dpassess: load + QTI 2.1, en, 1 zip (no lint)", same, n,
        ", ".join(f"{k} {v:.2f}" for k, v in same["parts"].items()))
    fp = res["floor"]["parts"]
    row("c: floor (CSafeLoader + lxml trees)", res["floor"], n,
        f"yaml {fp['yaml']:.2f}, lxml {fp['lxml']:.2f}")
    rp = relint["parts"]
    row("re-lint, unchanged bank (cache)", relint, n,
        ", ".join(f"{k} {v:.2f}" for k, v in rp.items()))
    row("lint, word-salad bank (findings)", salad, n,
        f"load {salad['parts']['load']:.2f}; {salad['findings']:,} findings")
    row("dpassess build, cold lint cache", build_cold, n, "fail-on error; no blueprints")
    row("dpassess build, unchanged bank (lint cache)", build_warm, n,
        f"{build_warm['secs'] / build_cold['secs']:.2f} × cold")
    if big_r is not None:
        row(f"b at {big:,} items", big_r, big,
            ", ".join(f"{k} {v:.2f}" for k, v in big_r["parts"].items()))
    print()
    print(f"b/a = {b / a:.2f}  (target <= 0.64)")
    print(f"b/c = {b / c:.2f}")
    print(f"a's job by dpassess / a = {same['secs'] / a:.2f}  (like for like; target <= 0.30)")
    print(f"re-lint unchanged / cold lint = {rp['unchanged'] / rp['cold (no cache)']:.3f}  "
          "(target <= 0.1)")
    lint_load = parts["lint"] / parts["load"]
    print(f"lint / load (real text) = {lint_load:.2f}; (word salad) = "
          f"{salad['parts']['lint'] / salad['parts']['load']:.2f}")
    print(f"peak RSS b / a = {res['dpassess']['rss'] / res['text2qti']['rss']:.2f}  (target <= 1)")
    if big_r is not None:
        print(f"peak RSS at {big:,} items: {big_r['rss']:.0f} MiB main, {big_r['workers']:.0f} MiB "
              "largest worker  (target <= 1536 MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
