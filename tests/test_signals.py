"""Interrupts and kills: Ctrl-C and SIGTERM exit 130 at once with one line and no traceback,
leave no temporary file and no worker; after SIGKILL the workers die with their parent and the
next run removes the temporary files left behind. Real signals, real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import SEED_BANK
from dpassess.runtime import files as runtime_files


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _wait_for(proc: subprocess.Popen[str], marker: str) -> list[str]:
    """Lines of the child's stdout up to and including `marker`."""
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line.strip())
        if line.strip().startswith(marker):
            return lines
    raise AssertionError(f"the child ended before {marker!r}: {lines}")


# A build whose export stops, with every temporary file staged, until it is signalled.
STALLED_BUILD = """
import sys, time
import dpassess.export.runner as runner
def stalled(tmp, path):
    print("staged", flush=True)
    time.sleep(120)
runner.replace_from_temp = stalled
from dpassess.cli import main
main(["build", "--items", sys.argv[1], "--out", sys.argv[2], "--no-cache", "--blueprints", sys.argv[2]])
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_build_exits_130_and_leaves_nothing(tmp_path: Path, signum: int):
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-c", STALLED_BUILD, str(SEED_BANK.parent), str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    _wait_for(proc, "staged")
    assert list(out.rglob("*.tmp")), "the export should be staged"
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "interrupted, cleaning up" in stderr
    assert "Traceback" not in stderr
    assert not out.exists() or not any(p.is_file() for p in out.rglob("*")), \
        list(out.rglob("*"))


# Two workers that report their pids, then work for a long time.
POOL = """
import os, sys, time
from dpassess.runtime.parallel import Pool
from dpassess.cli import _interrupted
import signal
signal.signal(signal.SIGINT, _interrupted)
def work(shared, task):
    os.write(1, f"worker {os.getpid()}\\n".encode())  # one write: the two workers' lines never mix
    time.sleep(120)
    return task
try:
    with Pool(work, None, [1, 2], jobs=2) as pool:
        print("parent", os.getpid(), flush=True)
        pool.results()
except KeyboardInterrupt:
    print("unwound", flush=True)
    sys.exit(130)
"""


def _start_pool() -> tuple[subprocess.Popen[str], list[int]]:
    proc = subprocess.Popen([sys.executable, "-c", POOL], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert proc.stdout is not None
    workers: list[int] = []
    for line in proc.stdout:
        if line.startswith("worker"):
            workers.append(int(line.split()[1]))
        if len(workers) == 2:
            break
    return proc, workers


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_to_the_process_group_stops_the_workers_without_tracebacks():
    proc, workers = _start_pool()
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: every process of the group
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "unwound" in stdout, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert stderr.count("interrupted, cleaning up") == 1
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG")
def test_workers_die_with_a_killed_parent():
    proc, workers = _start_pool()
    proc.kill()
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers), "a worker outlived its parent"


def test_a_later_run_removes_the_temporary_files_of_dead_runs(tmp_path: Path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead_pid = int(dead.stdout)
    left = tmp_path / f".quiz.xml.{dead_pid}-abcd1234.tmp"
    left.write_bytes(b"half a file")
    live = tmp_path / f".quiz.xml.{os.getppid()}-abcd1234.tmp"  # a live process's: kept
    live.write_bytes(b"being written")
    other = tmp_path / ".notes.tmp"  # not ours: kept
    other.write_bytes(b"x")
    runtime_files.atomic_write(tmp_path / "quiz.xml", b"<quiz/>")
    assert not left.exists()
    assert live.exists() and other.exists()
    assert (tmp_path / "quiz.xml").read_bytes() == b"<quiz/>"
