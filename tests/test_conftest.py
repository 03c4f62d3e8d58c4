"""The test set-up itself: the ci profile's seed follows the commit and really changes the
examples, a failed property says how to replay it, and `--update-goldens` is the only way to
rewrite a golden file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from hypothesis import Phase, core, given, settings

from conftest import ROOT, seed_for
from strategies import items

TESTS = ROOT / "tests"


def _git_head() -> str | None:
    if shutil.which("git") is None:
        return None
    run = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"],
                         capture_output=True, text=True)
    return run.stdout.strip() or None


def test_the_seed_is_the_commit_hash():
    head = _git_head()
    if head is None:
        pytest.skip("not a git checkout")
    assert seed_for(ROOT) == (int(head[:8], 16), f"commit {head[:12]}")


def test_without_git_the_seed_is_a_hash_of_the_sources(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    first, origin = seed_for(tmp_path)
    assert origin.startswith("source hash ")
    assert seed_for(tmp_path) == (first, origin)
    (tmp_path / "src" / "a.py").write_text("x = 2\n")
    assert seed_for(tmp_path)[0] != first


def _drawn(seed: int, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The items a property test under the ci profile draws when the run's seed is `seed`."""
    seen: list[str] = []

    @settings(settings.get_profile("ci"), max_examples=6, phases=[Phase.generate])
    @given(items())
    def collect(item):
        seen.append(item.model_dump_json())

    with monkeypatch.context() as m:
        m.setattr(core, "global_force_seed", seed)
        collect()
    return seen


def test_the_seed_decides_the_examples(monkeypatch):
    a = seed_for(ROOT)[0]
    first = _drawn(a, monkeypatch)
    assert len(first) == 6
    assert _drawn(a, monkeypatch) == first  # reproducible
    assert _drawn(a + 1, monkeypatch) != first  # and a new commit draws new ones


FAILING = """
from hypothesis import given, strategies as st

@given(st.integers())
def test_small(n):
    assert n < 10
"""


def _run_pytest(tmp_path, *args: str) -> str:
    (tmp_path / "test_demo.py").write_text(textwrap.dedent(FAILING))
    env = {**os.environ, "PYTHONPATH": str(TESTS), "HYPOTHESIS_PROFILE": "ci"}
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider",
                          str(tmp_path / "test_demo.py"), *args],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stdout + run.stderr
    return run.stdout


def test_a_failed_property_says_how_to_replay_it(tmp_path):
    seed, origin = seed_for(ROOT)
    out = _run_pytest(tmp_path)
    header = f"hypothesis seed {seed} (from {origin}): replay with --hypothesis-seed={seed}"
    assert out.count(header) == 2  # the header and the summary
    replay = "replay: HYPOTHESIS_PROFILE=ci pytest 'test_demo.py::test_small' --hypothesis-seed="
    assert f"{replay}{seed}\n" in out
    given_seed = _run_pytest(tmp_path, "--hypothesis-seed=5")
    assert "hypothesis seed 5 (given): replay with --hypothesis-seed=5" in given_seed
    assert f"{replay}5\n" in given_seed
