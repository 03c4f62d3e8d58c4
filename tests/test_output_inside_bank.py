"""No command writes its output into a bank it reads: `export -o` pointed at one of the bank's
own item files (or its folder) would overwrite the bank; `build --out` and `assemble --out`
inside it would mix outputs with the bank's files. Each is a usage error (exit 2) naming the
path, and the bank's files are byte for byte as before."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, files


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dpassess", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "items", tmp_path / "items")
    shutil.copytree(ROOT / "blueprints", tmp_path / "blueprints")
    return tmp_path


BANK = "items/data-parallelism"


@pytest.mark.parametrize("args", [
    ["export", BANK, "-f", "gift", "-l", "en", "-o", f"{BANK}/01-gpu-holds.yaml"],
    ["export", BANK, "-f", "moodle-xml", "-l", "en", "-o", f"{BANK}/new.xml"],
    ["export", BANK, "-f", "qti21", "-o", BANK],
    ["export", BANK, "-f", "qti21", "-o", f"{BANK}/../data-parallelism/sub"],
    ["build", "--out", f"{BANK}/exports"],
    ["assemble", "blueprints/data-parallelism.yaml", "--out", f"{BANK}/forms"],
])
def test_an_output_inside_a_bank_it_reads_is_refused(project: Path, args: list[str]) -> None:
    before = files(project / "items")
    r = run(*args, cwd=project)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "inside the bank" in r.stderr and "Traceback" not in r.stderr
    assert files(project / "items") == before


def test_an_output_beside_the_bank_is_written(project: Path) -> None:
    r = run("export", BANK, "-f", "gift", "-l", "en", "-o", "out/quiz.txt", cwd=project)
    assert r.returncode == 0, r.stderr
    assert (project / "out" / "quiz.txt").is_file()
