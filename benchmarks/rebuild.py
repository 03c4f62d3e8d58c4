"""`dpassess build` of a large synthetic bank: cold, unchanged, and after one edited item, wall
and CPU seconds and peak memory, with this checkout and (interleaved, in the same run) another
commit's library.

    .venv/bin/python benchmarks/rebuild.py [--items N] [--repeat R] [--baseline REV]

The bank comes from benchmarks/synth.py (N items, default 10,000); there are no blueprints. Each
repeat runs, for each version in turn: a cold build (no exports, no cache), a build of the
unchanged bank, and a build after one item's English title was edited (a new question in every
file that holds it; benchmarks/latency.py's edit). Each build is `python -m dpassess build` in a
fresh process, in the same folders for both versions (so the paths in the files are the same);
`--baseline REV` puts a git worktree of REV first on PYTHONPATH for its rows. Wall: the
process's elapsed time; CPU: user + system of the process and the workers it waited for; peak:
the largest `ru_maxrss` of the process or one of its workers (the largest over the repeats).
Wall and CPU are medians over the repeats, each also as a multiple of that version's cold build.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

ROWS = ("cold", "unchanged", "one item edited")


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak MiB of `argv` (a build that must exit 0): the
    process's own resource use and that of the workers it waited for (`wait4`)."""
    with tempfile.TemporaryFile() as log:
        t = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
        _, status, use = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            log.seek(0)
            sys.exit(f"{argv} failed ({proc.returncode}):\n{log.read().decode()[-3000:]}")
    return wall, use.ru_utime + use.ru_stime, use.ru_maxrss / 1024


def main(argv: list[str]) -> int:
    def opt(name: str, default: str | None) -> str | None:
        return argv[argv.index(name) + 1] if name in argv else default

    n, repeat = int(opt("--items", "10000") or 0), int(opt("--repeat", "2") or 0)
    baseline = opt("--baseline", None)
    import synth
    from latency import _retitled

    with tempfile.TemporaryDirectory(prefix="dpassess-rebuild-") as tmp:
        work = Path(tmp)
        versions: dict[str, dict[str, str]] = {"now": dict(os.environ)}
        if baseline is not None:
            old = work / "baseline"
            subprocess.run(["git", "worktree", "add", "--detach", str(old), baseline], cwd=ROOT,
                           check=True, capture_output=True)
            versions[baseline] = dict(os.environ, PYTHONPATH=str(old / "src"))
        items = work / "bank" / "items"
        synth.write(items / "synthetic", n)
        (work / "bank" / "dpassess.toml").write_text('[lint]\nfail-on = "error"\n')
        (work / "bank" / "blueprints").mkdir()
        edited = sorted((items / "synthetic").glob("item-*.yaml"))[n // 2]
        original = edited.read_text(encoding="utf-8")
        build = [sys.executable, "-m", "dpassess", "build", "--items", "items", "--out",
                 "exports", "--cache-dir", "cache", "--blueprints", "blueprints"]
        got: dict[str, dict[str, list[tuple[float, float, float]]]] = {
            v: {row: [] for row in ROWS} for v in versions}
        try:
            for r in range(repeat):
                for version, env in versions.items():
                    cwd = work / "bank"
                    shutil.rmtree(cwd / "exports", ignore_errors=True)
                    shutil.rmtree(cwd / "cache", ignore_errors=True)
                    edited.write_text(original, encoding="utf-8")
                    got[version]["cold"].append(_run(build, cwd, env))
                    got[version]["unchanged"].append(_run(build, cwd, env))
                    # no digits: the translation rules check that numbers agree
                    edited.write_text(_retitled(original, " (edited)"), encoding="utf-8")
                    got[version]["one item edited"].append(_run(build, cwd, env))
                    print(f"repeat {r + 1}/{repeat} {version}: done", file=sys.stderr)
        finally:
            if baseline is not None:
                subprocess.run(["git", "worktree", "remove", "--force", str(work / "baseline")],
                               cwd=ROOT, capture_output=True)
    print(f"\n## `dpassess build` of {n:,} items (median of {repeat}; load average "
          f"{os.getloadavg()[0]:.2f}, {os.cpu_count()} cores)\n")
    print("| version | build | wall (s) | × cold | CPU (s) | × cold | peak (MiB) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for version in versions:
        med = {row: (statistics.median(x[0] for x in got[version][row]),
                     statistics.median(x[1] for x in got[version][row]),
                     max(x[2] for x in got[version][row])) for row in ROWS}
        for row in ROWS:
            wall, cpu, peak = med[row]
            print(f"| {version} | {row} | {wall:.2f} | {wall / med['cold'][0]:.3f} | {cpu:.2f} "
                  f"| {cpu / med['cold'][1]:.3f} | {peak:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
