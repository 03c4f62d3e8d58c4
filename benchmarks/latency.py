"""What a user waits for, as whole commands (start-up included), in one interleaved run: the
medians of each command, as ratios to `python -c pass`, and the incremental `build` rows on a
large bank as ratios to its cold build.

    .venv/bin/python benchmarks/latency.py [--repeat R] [--items N] [--big-repeat B] [--no-big]
                                           [--no-small]

Small rows (R rounds, default 15; each round runs every command once, in order, so a change in
the machine's load touches every row alike): `python -c pass`, a minimal typer app,
`dpassess --version`, `dpassess check`, `dpassess lint` with a warm cache and with
`--no-cache`, `dpassess export` (QTI 2.1, every language), `dpassess build` (unchanged, and
`--no-cache`) on the bundled 8-item bank, and as peers on the same 8 items text2qti (its
command line, the items in its text format) and yamllint (its command line, default rules).
Peers missing from the environment are left out with a note (`make bench` installs both).

Large rows (B rounds, default 3): `dpassess build` of an N-item synthetic bank (default
10,000, `benchmarks/synth.py`) from cold (no exports, no cache), unchanged, after one edited
item (its English title changed: a new question in every file that holds it) and after a
comment added to that item's file (the bank is loaded again, no question changes); medians and
ratios to cold.

The package is compiled first (`python -m compileall`): machines that set
PYTHONDONTWRITEBYTECODE=1 would otherwise compile every module from source on each run, which
is not what an installed package does. Wall time of each whole process (`time.perf_counter` around `subprocess.run`).
"""

from __future__ import annotations

import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

TYPER_APP = """import typer
app = typer.Typer()
@app.command()
def main(name: str = "x") -> None:
    pass
app()
"""


def _bin(name: str) -> str | None:
    found = Path(sys.executable).parent / name
    return str(found) if found.exists() else shutil.which(name)


def _time(argv: list[str], cwd: Path, env: dict[str, str], ok: tuple[int, ...] = (0, 1)
          ) -> float:
    """Seconds `argv` took; exit codes other than `ok` stop the run (1: findings, for lint)."""
    t = time.perf_counter()
    r = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    secs = time.perf_counter() - t
    if r.returncode not in ok:
        raise SystemExit(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr[-500:]}")
    return secs


def _t2q_text(bank: Path) -> str:
    from run import _t2q_text as convert

    return convert(bank)


def small_rows(work: Path, env: dict[str, str], repeat: int) -> list[tuple[str, float]]:
    py, dp = sys.executable, [sys.executable, "-m", "dpassess"]
    shutil.copytree(ROOT / "items", work / "items")
    (work / "typer_app.py").write_text(TYPER_APP, encoding="utf-8")
    rows: list[tuple[str, list[str]]] = [
        ("python -c pass", [py, "-c", "pass"]),
        ("minimal typer app", [py, str(work / "typer_app.py")]),
        ("dpassess --version", [*dp, "--version"]),
        ("dpassess check", [*dp, "check", "items"]),
        ("dpassess lint (warm cache)", [*dp, "lint", "items"]),
        ("dpassess lint --no-cache", [*dp, "lint", "items", "--no-cache"]),
        ("dpassess export -f qti21", [*dp, "export", "items", "-f", "qti21", "-o", "out"]),
        ("dpassess build (unchanged)", [*dp, "build", "--items", "items", "--out", "ex"]),
        ("dpassess build --no-cache", [*dp, "build", "--items", "items", "--out", "ex2",
                                       "--no-cache"]),
    ]
    text2qti = _bin("text2qti")
    if text2qti:
        (work / "t2q.txt").write_text(_t2q_text(work / "items" / "data-parallelism"),
                                      encoding="utf-8")
        rows.append(("peer: text2qti (8 items, 1 QTI zip)", [text2qti, "t2q.txt"]))
    else:
        print("note: text2qti not installed: its row is left out (make bench installs it)")
    yamllint = _bin("yamllint")
    if yamllint:
        rows.append(("peer: yamllint (8 item files)", [yamllint, "items"]))
    else:
        print("note: yamllint not installed: its row is left out (make bench installs it)")
    for _, argv in rows:  # warm-up: fills the lint cache and the build cache
        _time(argv, work, env)
    times: dict[str, list[float]] = {name: [] for name, _ in rows}
    for _ in range(repeat):
        for name, argv in rows:
            times[name].append(_time(argv, work, env))
    return [(name, statistics.median(ts)) for name, ts in times.items()]


def big_rows(work: Path, env: dict[str, str], n: int, repeat: int) -> list[tuple[str, float]]:
    import synth

    items = work / "big" / "items"
    synth.write(items / "synthetic", n)
    (work / "big" / "dpassess.toml").write_text('[lint]\nfail-on = "error"\n', encoding="utf-8")
    argv = [sys.executable, "-m", "dpassess", "build", "--items", "items", "--out", "exports",
            "--cache-dir", "cache"]
    cwd = work / "big"
    edited = sorted((items / "synthetic").glob("item-*.yaml"))[n // 2]
    original = edited.read_text(encoding="utf-8")
    times: dict[str, list[float]] = {"cold": [], "unchanged": [], "one item edited": [],
                                     "one comment edited": []}
    for r in range(repeat):
        shutil.rmtree(cwd / "exports", ignore_errors=True)
        shutil.rmtree(cwd / "cache", ignore_errors=True)
        edited.write_text(original, encoding="utf-8")
        # a build that exits 1 has exported nothing (lint failed): not a row to time
        times["cold"].append(_time(argv, cwd, env, ok=(0,)))
        times["unchanged"].append(_time(argv, cwd, env, ok=(0,)))
        # no digits: the translation rules check that numbers agree between languages
        retitled = _retitled(original, " (edited)")
        edited.write_text(retitled, encoding="utf-8")
        times["one item edited"].append(_time(argv, cwd, env, ok=(0,)))
        edited.write_text(retitled + f"# comment {r}\n", encoding="utf-8")
        times["one comment edited"].append(_time(argv, cwd, env, ok=(0,)))
    edited.write_text(original, encoding="utf-8")
    return [(name, statistics.median(ts)) for name, ts in times.items()]


def _retitled(text: str, suffix: str) -> str:
    """An item file's text with `suffix` added to its English title (the `title:` line under
    `en:`)."""
    lines = text.splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if line.strip() == "en:")
    title = next(n for n in range(at + 1, len(lines)) if lines[n].lstrip().startswith("title:"))
    lines[title] = lines[title].rstrip("\n") + suffix + "\n"
    return "".join(lines)


def table(title: str, header: tuple[str, str, str], rows: list[tuple[str, float]],
          cells: Callable[[float, float], tuple[str, str]]) -> None:
    """A Markdown table of `rows` (name, seconds): each row's cells from its seconds and the
    first row's (the baseline of the ratios)."""
    print(f"\n## {title}\n")
    print(f"| {' | '.join(header)} |")
    print("|---|---:|---:|")
    for name, secs in rows:
        print(f"| {name} | {' | '.join(cells(secs, rows[0][1]))} |")


def main(argv: list[str]) -> int:
    def opt(name: str, default: int) -> int:
        return int(argv[argv.index(name) + 1]) if name in argv else default

    repeat, n, big_repeat = opt("--repeat", 15), opt("--items", 10_000), opt("--big-repeat", 3)
    ok = compileall.compile_dir(str(ROOT / "src"), quiet=1)
    print(f"compiled the package first (python -m compileall src: {'ok' if ok else 'FAILED'}); "
          f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}")
    print(f"load average before: {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores; "
          f"Python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="dpassess-latency-") as tmp:
        work = Path(tmp)
        env = dict(os.environ, DPASSESS_CACHE_DIR=str(work / "cache"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if "--no-small" not in argv:
            table(f"Commands on the bundled bank (median of {repeat} interleaved rounds)",
                  ("command", "median (ms)", "× python -c pass"),
                  small_rows(work, env, repeat), lambda secs, base: (
                      f"{secs * 1000:.0f}", f"{secs / base:.1f}"))
        if "--no-big" not in argv:
            table(f"`dpassess build` of {n:,} items (median of {big_repeat} rounds)",
                  ("build", "median (s)", "× cold"), big_rows(work, env, n, big_repeat),
                  lambda secs, cold: (f"{secs:.2f}", f"{secs / cold:.3f}"))
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
