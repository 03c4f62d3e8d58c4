"""`make bench` must keep running from a clean clone: its steps, on a tiny synthetic bank (the
figures themselves are measured by `benchmarks/run.py`, never asserted here). Step a needs
text2qti, a benchmark-only dependency, and is left out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

BENCH = ROOT / "benchmarks"


def _step(name: str, work: Path) -> dict:
    p = subprocess.run([sys.executable, str(BENCH / "run.py"), "--step", name, str(work)],
                       capture_output=True, text=True, check=False, timeout=300)
    assert p.returncode == 0, p.stderr
    line = next(x for x in p.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(BENCH))
    try:
        import synth
    finally:
        sys.path.remove(str(BENCH))
    work = tmp_path_factory.mktemp("bench")
    synth.write(work / "bank", 40)
    synth.write(work / "salad", 40, style="salad")
    (work / "out").mkdir()
    return work


@pytest.mark.parametrize("name", ["dpassess", "same-as-a", "floor", "relint", "salad", "build"])
def test_bench_step_runs(work: Path, name: str) -> None:
    r = _step(name, work)
    assert r["secs"] > 0 and r["rss"] > 0
    if name in ("dpassess", "floor", "same-as-a"):
        assert r["items"] == 40
    if name == "dpassess":
        assert set(r["parts"]) == {"load", "lint", "export (8 files)"}
        assert sorted(p.name for p in (work / "out" / "dpassess").iterdir()) == ["gift", "moodle-xml", "qti21"]


def test_serialise_bound_runs() -> None:
    """benchmarks/serialise_bound.py (quoted in docs/performance.md) on a tiny bank."""
    p = subprocess.run([sys.executable, str(BENCH / "serialise_bound.py"), "40"],
                       capture_output=True, text=True, check=False, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "synthetic-en.zip: 42 files" in p.stdout  # 40 items, the assessment test, the manifest
    assert "serialisation alone:" in p.stdout


def test_the_start_up_rows_of_the_targets_table_run(tmp_path: Path) -> None:
    """The commands `benchmarks/run.py` times on the bundled bank all run (figures not asserted)."""
    import os

    sys.path.insert(0, str(BENCH))
    try:
        import run
    finally:
        sys.path.remove(str(BENCH))
    (tmp_path / "out").mkdir()
    rows = run.target_rows(tmp_path, BENCH.parent / "items" / "data-parallelism")
    env = {**os.environ, "DPASSESS_CACHE_DIR": str(tmp_path / "cache")}
    for name in ("python -c pass", "check", "export -f qti21", "lint --no-cache",
                 "build, nothing changed", "build, nothing changed"):
        r = run.timed(rows[name], env)
        assert r["wall"] > 0 and r["cpu"] >= 0
    assert sorted(p.name for p in (tmp_path / "out" / "startup-qti").iterdir()) == [
        "data-parallelism-en.zip", "data-parallelism-id.zip"]
