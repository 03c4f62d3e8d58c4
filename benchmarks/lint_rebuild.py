"""Lint through the cache after one edited item against a cold lint, on a 10,000-item bank, in
one run: CPU and wall time, and peak memory.

    .venv/bin/python benchmarks/lint_rebuild.py [N] [--repeat R] [--baseline REV]

The bank is `lint.py`'s (`synth.py`'s real-text bilingual bank with the seed glossary). Each
figure is one fresh process running `dpassess.lint.incremental.lint_paths` (what `dpassess lint`
runs when its report is not stored): CPU is the process's and its workers' (user + system),
wall is the call's, peak RSS is the process's own and its largest worker's. Steps:

  cold          no cache (`lint --no-cache`)
  fill          an empty cache, filled by the run
  one edited    one item file changed since the cache was filled (a different file each
                repeat; the previous edit is undone first and linted, so each run sees one
                change)
  unchanged     nothing changed (the bank's stored findings)

`--baseline REV` runs every step with the library of an earlier commit too (a temporary git
worktree put first on PYTHONPATH, its own cache folder), interleaved with the current code, and
prints the ratios. The best of R repeats is shown (R=3).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

STEPS = ("cold", "fill", "one edited", "unchanged")


def child(bank: str, cache: str | None) -> None:
    """One lint in this process; prints its figures as JSON."""
    from dpassess.lint import LintConfig
    from dpassess.lint.incremental import lint_paths
    from dpassess.runtime.cache import Cache

    config = LintConfig()
    c = Cache(cache) if cache else None
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    k0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    found = lint_paths([bank], config, c)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    k1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
           + k1.ru_utime + k1.ru_stime - k0.ru_utime - k0.ru_stime)
    print(json.dumps({"wall": wall, "cpu": cpu, "rss": r1.ru_maxrss / 1024,
                      "workers": k1.ru_maxrss / 1024, "findings": len(found)}))


def run(env: dict[str, str], bank: Path, cache: Path | None) -> dict[str, float]:
    args = [sys.executable, __file__, "--child", str(bank), str(cache) if cache else ""]
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main(argv: list[str]) -> int:
    if "--child" in argv:
        i = argv.index("--child")
        child(argv[i + 1], argv[i + 2] or None)
        return 0
    repeat = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 3
    rev = argv[argv.index("--baseline") + 1] if "--baseline" in argv else None
    skip = {"--repeat", "--baseline"}
    args = [a for i, a in enumerate(argv) if not a.startswith("--")
            and (i == 0 or argv[i - 1] not in skip)]
    n = int(args[0]) if args else 10_000
    import lint as lint_bench

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bank = lint_bench.make(work / "bank", n)
        trees: dict[str, Path | None] = {"now": None}
        base = None
        if rev is not None:
            base = work / "baseline"
            subprocess.run(["git", "-C", str(HERE.parent), "worktree", "add", "--detach",
                            str(base), rev], check=True, capture_output=True)
            trees["baseline"] = base
        envs = {name: {**os.environ, "PYTHONPATH": str((tree or HERE.parent) / "src")}
                for name, tree in trees.items()}
        victims = sorted(bank.glob("item-*.yaml"))
        best: dict[tuple[str, str], dict[str, float]] = {}

        def keep(step: str, name: str, r: dict[str, float]) -> None:
            old = best.get((step, name))
            best[step, name] = r if old is None else {
                "wall": min(old["wall"], r["wall"]), "cpu": min(old["cpu"], r["cpu"]),
                "rss": max(old["rss"], r["rss"]), "workers": max(old["workers"], r["workers"]),
                "findings": r["findings"]}

        try:
            for rep in range(repeat):
                for name, env in envs.items():
                    cache = work / f"cache-{name}"
                    keep("cold", name, run(env, bank, None))
                    for p in cache.glob("*"):
                        p.unlink()
                    keep("fill", name, run(env, bank, cache))
                    victim = victims[(rep * 7919) % len(victims)]
                    old = victim.read_bytes()
                    victim.write_bytes(old.replace(b"stem: ", b"stem: Now, ", 1))
                    try:
                        keep("one edited", name, run(env, bank, cache))
                    finally:
                        victim.write_bytes(old)
                    run(env, bank, cache)  # the undo, linted: the cache holds the bank again
                    keep("unchanged", name, run(env, bank, cache))
        finally:
            if base is not None:
                subprocess.run(["git", "-C", str(HERE.parent), "worktree", "remove", "--force",
                                str(base)], check=False, capture_output=True)

    commit = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()
    print(f"bank: {n:,} bilingual items; commit {commit}"
          + (f"; baseline {rev}" if rev else "") + f"; best of {repeat}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print()
    print("| step | code | wall s | CPU s | wall / cold | CPU / cold | peak RSS MiB "
          "(main / largest worker) | findings |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for step in STEPS:
        for name in trees:
            r, cold = best[step, name], best["cold", name]
            print(f"| {step} | {name} | {r['wall']:.2f} | {r['cpu']:.2f} | "
                  f"{r['wall'] / cold['wall']:.3f} | {r['cpu'] / cold['cpu']:.3f} | "
                  f"{r['rss']:.0f} / {r['workers']:.0f} | {r['findings']:.0f} |")
    if rev is not None:
        print()
        for step in STEPS:
            now, was = best[step, "now"], best[step, "baseline"]
            print(f"{step}: now / baseline: wall {now['wall'] / was['wall']:.2f}, "
                  f"CPU {now['cpu'] / was['cpu']:.2f}, peak RSS {now['rss'] / was['rss']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
