"""`dpassess assemble` as a whole: the bank is loaded and linted once, through lint's cache, and
the printed papers are typeset in worker processes with the same bytes as in one process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, SEED_BANK, dpassess, files
from dpassess.assemble import assemble, write_assembly
from dpassess.runtime.cache import Cache

BLUEPRINT = ROOT / "blueprints" / "data-parallelism.yaml"


def _project(tmp_path: Path) -> tuple[Path, str]:
    """A copy of the seed bank in `tmp_path/items` with one item whose key is by far its longest
    option in English (WR001 and TR009, warnings: at the default fail level), a blueprint of one form
    of 6 items beside it; returns the blueprint (relative to `tmp_path`) and the flawed item."""
    bank = tmp_path / "items" / "data-parallelism"
    shutil.copytree(SEED_BANK, bank)
    path = bank / "01-gpu-holds.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    key = data["key"]
    data["text"]["en"]["options"][key] += (" and the optimizer state, and a great deal more "
                                           "besides, which makes it the longest option by far")
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    (tmp_path / "blueprints").mkdir()
    (tmp_path / "blueprints" / "bp.yaml").write_text(
        "schema: 1\nid: bp\nbank: ../items/data-parallelism\nforms: 1\nitems: 6\nseed: 3\n",
        encoding="utf-8")
    return "blueprints/bp.yaml", data["id"]


def _left_out(a: object, item: str) -> bool:
    from dpassess.assemble import Assembly

    assert isinstance(a, Assembly)
    return (item not in {fi.item.id for f in a.forms for fi in f.items}
            and any(f"item {item!r} left out: lint warning" in w.message
                    for w in a.problem.warnings))


def test_a_bank_that_dpassess_lint_checked_is_not_linted_again(tmp_path, monkeypatch):
    bp, flawed = _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    uncached = assemble(bp)
    assert _left_out(uncached, flawed)
    # CI lints first (the cache in the working folder, the bank named as a user names it) ...
    r = dpassess("lint", "items", cwd=tmp_path)
    assert r.returncode == 1 and "WR001" in r.stdout, r.stdout + r.stderr

    # ... then the assembly finds every finding in the cache: no rule runs again
    def no_lint(*args: object, **kwargs: object) -> None:
        raise AssertionError("the bank was linted again")

    from dpassess.lint import engine, incremental

    monkeypatch.setattr(engine, "lint_banks", no_lint)
    monkeypatch.setattr(incremental, "lint_banks", no_lint, raising=False)
    cached = assemble(bp, cache=Cache(tmp_path / ".dpassess_cache"))
    assert _left_out(cached, flawed)
    assert cached.selection.forms == uncached.selection.forms
    assert ([str(w) for w in cached.problem.warnings]
            == [str(w) for w in uncached.problem.warnings])


def test_assemble_on_the_command_line_reuses_lint_s_cache_and_writes_the_same_files(tmp_path):
    bp, flawed = _project(tmp_path)
    cold = dpassess("assemble", bp, "--out", "cold", "--no-cache", cwd=tmp_path)
    assert cold.returncode == 0, cold.stderr
    assert not (tmp_path / ".dpassess_cache").exists()  # --no-cache writes none
    warm = dpassess("assemble", bp, "--out", "warm", cwd=tmp_path)
    assert warm.returncode == 0, warm.stderr
    assert (tmp_path / ".dpassess_cache").is_dir()
    again = dpassess("assemble", bp, "--out", "again", cwd=tmp_path)
    assert files(tmp_path / "cold") == files(tmp_path / "warm") == files(tmp_path / "again")
    assert f"item {flawed!r} left out: lint warning" in again.stderr
    assert (cold.stderr.replace("cold/", "out/") == warm.stderr.replace("warm/", "out/")
            == again.stderr.replace("again/", "out/"))


_PAPERS = """
import sys
import dpassess.assemble.output as output
from dpassess.assemble import assemble, write_assembly
from dpassess.assemble.paper import typst_started
output.PAPERS_PARALLEL_MIN = int(sys.argv[1])
write_assembly(assemble(sys.argv[2], lint=False), sys.argv[3])
print("typst in this process:", typst_started())
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one CPU: the papers are typeset here")
def test_papers_typeset_in_workers_are_the_same_bytes(tmp_path):
    pytest.importorskip("typst")
    outs = {}
    for name, threshold in (("workers", 0), ("here", 10**9)):
        r = subprocess.run([sys.executable, "-c", _PAPERS, str(threshold), str(BLUEPRINT),
                            str(tmp_path / name)], capture_output=True, text=True, timeout=600,
                           cwd=ROOT, check=False)
        assert r.returncode == 0, r.stderr
        # typeset in workers, this process never starts Typst (its threads would not survive
        # the fork of a later pool)
        assert f"typst in this process: {name == 'here'}" in r.stdout
        outs[name] = files(tmp_path / name)
    assert any(p.endswith(".pdf") for p in outs["here"])
    assert outs["workers"] == outs["here"]


def test_no_worker_is_forked_for_papers_once_this_process_ran_typst(tmp_path, monkeypatch):
    from dpassess.assemble import output, paper
    from dpassess.runtime import parallel

    a = assemble(BLUEPRINT, lint=False)
    seen: list[int] = []

    def record(fn: object, shared: object, tasks: object, jobs: int) -> list[object]:
        seen.append(jobs)
        return []

    monkeypatch.setattr(parallel, "run", record)
    monkeypatch.setattr(output, "PAPERS_PARALLEL_MIN", 0)
    monkeypatch.setattr(parallel, "worker_count", lambda *a, **k: 2)
    colls = [output.collection(a.problem, f) for f in a.forms]
    monkeypatch.setattr(paper, "_COMPILER", None)
    output._all_papers(a.problem, a.forms, colls, ["0"] * len(colls), tmp_path, True)
    monkeypatch.setattr(paper, "_COMPILER", (os.getpid(), object()))
    output._all_papers(a.problem, a.forms, colls, ["0"] * len(colls), tmp_path, True)
    assert seen == [2, 1]


def test_write_assembly_of_the_seed_blueprint_is_unchanged_by_a_warm_cache(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    cache = Cache(tmp_path / "cache")
    outs = []
    for n in range(2):  # cold, then warm
        write_assembly(assemble(BLUEPRINT, cache=cache), tmp_path / f"out{n}")
        outs.append(files(tmp_path / f"out{n}"))
    write_assembly(assemble(BLUEPRINT), tmp_path / "plain")
    assert outs[0] == outs[1] == files(tmp_path / "plain")
