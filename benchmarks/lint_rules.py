"""CPU of a cold `dpassess lint --no-cache` on a 10,000-item bilingual bank, and where it goes.

    .venv/bin/python benchmarks/lint_rules.py [N] [--salad] [--repeat K] [--baseline REV]

The bank is `lint.py`'s (synth.py's items with the seed bank's glossary). Two figures per run,
each the best of K, interleaved with the baseline's when `--baseline REV` is given (a detached
worktree of REV, run from the same interpreter, so the ratio compares the code alone):
- the CPU (user + system, worker processes included) of the command as a user runs it;
- in one process (`jobs=1`), the CPU of `lint_banks`, the share of the item rules in it, and
  the rules that take the most, each timed around its own work.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent


def child(bank_dir: str) -> None:
    """In one process: load, then lint with every item rule timed (prints JSON)."""
    from dpassess import load_bank
    from dpassess.lint import LintConfig, engine, lint_banks

    bank = load_bank(bank_dir)
    spent: dict[str, float] = defaultdict(float)
    apply = engine._apply

    def timed(rule, ctx, off, used, locate):  # type: ignore[no-untyped-def]
        t = time.process_time()
        try:
            return apply(rule, ctx, off, used, locate)
        finally:
            spent[rule.code] += time.process_time() - t

    engine._apply = timed  # type: ignore[assignment]
    t = time.process_time()
    lint_banks([bank], LintConfig(), jobs=1)
    total = time.process_time() - t
    print(json.dumps({"total": total, "rules": spent}))


def cli_cpu(env: dict[str, str], bank: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "dpassess", "lint", "--no-cache", "--format", "json",
                    "-o", os.devnull, str(bank)], env=env, check=False, cwd=bank.parent)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def in_process(env: dict[str, str], bank: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", str(bank)], env=env, check=True,
                         capture_output=True, text=True, cwd=bank.parent).stdout
    return json.loads(out.splitlines()[-1])


def main(argv: list[str]) -> None:
    if argv[:1] == ["--child"]:
        child(argv[1])
        return
    sys.path.insert(0, str(HERE))
    import lint

    args = [a for a in argv if not a.startswith("--")]
    repeat = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 3
    rev = argv[argv.index("--baseline") + 1] if "--baseline" in argv else None
    if rev is not None:
        args = [a for a in args if a != rev]
    if "--repeat" in argv:
        args = [a for a in args if a != argv[argv.index("--repeat") + 1]]
    n = int(args[0]) if args else 10_000
    style = "salad" if "--salad" in argv else "real"
    with tempfile.TemporaryDirectory(prefix="dpassess-lint-rules-") as tmp:
        work = Path(tmp)
        bank = lint.make(work / "bank", n, style)
        trees = {"now": HERE.parent}
        if rev is not None:
            subprocess.run(["git", "-C", str(HERE.parent), "worktree", "add", "--detach",
                            str(work / "baseline"), rev], check=True, capture_output=True)
            trees["baseline"] = work / "baseline"
        try:
            envs = {k: {**os.environ, "PYTHONPATH": str(t / "src")} for k, t in trees.items()}
            cli: dict[str, float] = {}
            one: dict[str, dict] = {}
            for _ in range(repeat):
                for k, env in envs.items():
                    cli[k] = min(cli.get(k, float("inf")), cli_cpu(env, bank))
                    got = in_process(env, bank)
                    if k not in one or got["total"] < one[k]["total"]:
                        one[k] = got
        finally:
            if rev is not None:
                subprocess.run(["git", "-C", str(HERE.parent), "worktree", "remove", "--force",
                                str(work / "baseline")], check=False, capture_output=True)
    print(f"bank: {n:,} bilingual items (id, en), {style} text; best of {repeat}; "
          f"load average {os.getloadavg()[0]:.2f}")
    for k in envs:
        rules = one[k]["rules"]
        items = sum(rules.values())
        top = sorted(rules.items(), key=lambda r: -r[1])[:6]
        print(f"{k:>8}: lint --no-cache {cli[k]:6.2f} CPU-s; one process: lint_banks "
              f"{one[k]['total']:6.2f} CPU-s, item rules {items:6.2f} "
              f"({items / one[k]['total']:.0%}); "
              + ", ".join(f"{c} {s:.2f}" for c, s in top))
    if "baseline" in envs:
        print(f"   ratio: lint --no-cache {cli['now'] / cli['baseline']:.2f}; item rules "
              f"{sum(one['now']['rules'].values()) / sum(one['baseline']['rules'].values()):.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
