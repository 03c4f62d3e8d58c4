"""`dpassess assemble` as a whole: 20 forms × 60 items from a bank of N items (10,000), by phase.

    .venv/bin/python benchmarks/assemble_command.py [--items N] [--baseline REV] [--work DIR]

The bank is `benchmarks/synth.py`'s (bilingual, every item lint-clean but a few), the blueprint
20 forms × 60 items in 20 topic cells of 3, at most 6 items shared, seed 1, a solver budget of 10
deterministic seconds. Each row runs in a fresh process, which does what the command does
(`assemble`, then `write_assembly`), and prints:

- the phases, from the stages the command reports: reading the bank and deciding which items
  lint blocks (`load+lint`; the baseline reports `load` and `lint` apart), the search
  (`solve`), and writing every file (`write`: keys, papers in HTML and PDF, exports, summary);
- wall and CPU seconds of each phase, and the process's peak resident memory (MB) when it
  ended (`wall/CPU/peak`); the same for the whole (CPU: the process and every worker it
  waited for; peak: the process, and its largest worker, whose pages are mostly the parent's:
  the workers are forked);
- a hash of every file written, to show that each row writes the same bytes.

Rows: the baseline (`--baseline REV`, default `main`: its library in a temporary git worktree,
put first on PYTHONPATH; skipped with `--baseline ''`); this tree with `--no-cache`; with an
empty lint cache (`cold`); and after `dpassess lint` filled the cache, as a CI job that lints
before it assembles (`warm`; the lint run's own figures are printed too).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FORMS, ITEMS = 20, 60


def blueprint() -> str:
    cells = [{"topic": f"topic-{t}/sub-{s}", "count": 3} for t in range(8) for s in range(3)][:20]
    return json.dumps({"schema": 1, "id": "big", "bank": "../items", "forms": FORMS,
                       "items": ITEMS, "cells": cells, "max_overlap": 6, "time_limit": 10,
                       "seed": 1})


def prepare(work: Path, n: int) -> None:
    """The bank (N items) and the blueprint in `work`, unless there already."""
    sys.path.insert(0, str(HERE))
    from synth import write

    marker = work / "items" / f".made-{n}"
    if not marker.exists():
        shutil.rmtree(work / "items", ignore_errors=True)
        write(work / "items", n)
        marker.touch()
    (work / "blueprints").mkdir(parents=True, exist_ok=True)
    (work / "blueprints" / "big.yaml").write_text(blueprint())  # JSON is YAML


# --- the child: one run of the command, timed by phase ----------------------------------------


def child(mode: str, work: Path, out: Path) -> None:
    import inspect

    from dpassess.assemble import assemble, write_assembly

    os.chdir(work)
    marks: list[tuple[float, float, float, str]] = []
    t0, c0 = time.perf_counter(), cpu()

    def stage(name: str) -> None:
        if not name.startswith("selecting items (sample"):  # the solver's own progress
            marks.append((time.perf_counter(), cpu(), peak(), name))

    kwargs: dict[str, object] = {}
    if "cache" in inspect.signature(assemble).parameters and mode != "no-cache":
        from dpassess.runtime.cache import Cache, cache_dir

        kwargs["cache"] = Cache(cache_dir())
    result = assemble(Path("blueprints/big.yaml"), progress=stage, **kwargs)  # type: ignore[arg-type]
    marks.append((time.perf_counter(), cpu(), peak(), "writing"))
    written, _ = write_assembly(result, out)
    end = time.perf_counter()
    phases: dict[str, list[float]] = {}
    bounds = [(t0, c0, 0.0), *((t, c, m) for t, c, m, _ in marks[1:]), (end, cpu(), peak())]
    for (_, _, _, name), start, stop in zip(marks, bounds, bounds[1:], strict=False):
        key = ("solve" if name.startswith("selecting") else "write" if name == "writing"
               else "load+lint" if "and linting" in name else "load" if name.startswith("loading")
               else "lint" if name.startswith("linting") else name)
        was = phases.setdefault(key, [0.0, 0.0, 0.0])
        was[0] += stop[0] - start[0]
        was[1] += stop[1] - start[1]
        was[2] = stop[2]
    files = sorted(p for p in out.rglob("*") if p.is_file())
    h = hashlib.sha256()
    for p in files:
        h.update(p.relative_to(out).as_posix().encode() + b"\0" + p.read_bytes())
    report(phases, end - t0, {"files": len(written), "bytes": h.hexdigest()[:12],
                              "solver": f"{result.selection.seconds:.1f}"})


def cpu() -> float:
    """CPU seconds of this process and of the workers it has waited for."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def peak() -> float:
    """The process's peak resident memory so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def lint_child(work: Path) -> None:
    """`dpassess lint items` through the cache, as a CI job runs it before assembling."""
    from dpassess.app.lint import lint_report
    from dpassess.runtime.cache import Cache, cache_dir

    os.chdir(work)
    t0 = time.perf_counter()
    lint_report([Path("items")], cache=Cache(cache_dir()))
    wall = time.perf_counter() - t0
    report({"lint": [wall, cpu(), peak()]}, wall, {})


def report(phases: dict[str, list[float]], wall: float, extra: dict[str, object]) -> None:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    print("RESULT " + json.dumps({
        "phases": phases, "wall": wall, "cpu": cpu(),
        "rss": me.ru_maxrss / 1024, "worker_rss": kids.ru_maxrss / 1024, **extra}))


# --- the parent --------------------------------------------------------------------------------


def run(args: list[str], src: Path, cache: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(src), "DPASSESS_CACHE_DIR": str(cache)}
    p = subprocess.run([sys.executable, __file__, *args], env=env, capture_output=True,
                       text=True, check=False)
    line = next((x for x in p.stdout.splitlines() if x.startswith("RESULT ")), None)
    if p.returncode != 0 or line is None:
        sys.exit(f"{args}: exit {p.returncode}\n{p.stderr[-3000:]}")
    result: dict[str, object] = json.loads(line[len("RESULT "):])
    return result


def show(name: str, r: dict[str, object]) -> None:
    phases = r["phases"]
    assert isinstance(phases, dict)
    parts = "  ".join(f"{k} {w:.1f}/{c:.1f}/{m:.0f}" for k, (w, c, m) in phases.items())
    extra = (f"  solver {r['solver']} s, {r['files']} files, bytes {r['bytes']}"
             if "files" in r else "")
    print(f"{name:<34} wall {r['wall']:6.1f} s  CPU {r['cpu']:6.1f} s  peak {r['rss']:5.0f} MB "
          f"(worker {r['worker_rss']:4.0f} MB)  |  {parts}{extra}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--baseline", default="main", help="a git revision to compare with ('': none)")
    ap.add_argument("--work", type=Path, default=None, help="keep the bank here (default: a temp folder)")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--lint-child", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child[0], Path(a.child[1]), Path(a.child[2]))
        return
    if a.lint_child:
        lint_child(a.lint_child)
        return
    with tempfile.TemporaryDirectory(prefix="dpassess-bench-") as tmp_name:
        tmp = Path(tmp_name)
        work = (a.work or tmp / "work").resolve()
        work.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        prepare(work, a.items)
        load = os.getloadavg()[0]
        print(f"bank: {a.items:,} items in {work} ({time.perf_counter() - t:.1f} s); "
              f"{FORMS} forms × {ITEMS}; load average {load:.1f} on {os.cpu_count()} CPUs")
        here = HERE.parent / "src"
        base: Path | None = None
        if a.baseline:
            base = tmp / "baseline"
            subprocess.run(["git", "-C", str(HERE.parent), "worktree", "add", "--detach",
                            str(base), a.baseline], check=True, capture_output=True)
        try:
            if base is not None:
                show(f"baseline ({a.baseline})", run(
                    ["--child", "baseline", str(work), str(tmp / "out-base")], base / "src",
                    tmp / "cache-base"))
            show("this tree, --no-cache", run(
                ["--child", "no-cache", str(work), str(tmp / "out-nocache")], here,
                tmp / "cache-none"))
            show("this tree, cold cache", run(
                ["--child", "cold", str(work), str(tmp / "out-cold")], here, tmp / "cache-cold"))
            show("dpassess lint (cold), for the next", run(
                ["--lint-child", str(work)], here, tmp / "cache-ci"))
            show("this tree, after dpassess lint", run(
                ["--child", "warm", str(work), str(tmp / "out-warm")], here, tmp / "cache-ci"))
        finally:
            if base is not None:
                subprocess.run(["git", "-C", str(HERE.parent), "worktree", "remove", "--force",
                                str(base)], check=False, capture_output=True)
        print(f"load average now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
