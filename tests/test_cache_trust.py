"""The cache never runs what it did not write: a cache folder committed to a repository (or
restored from elsewhere) holds files whose names dpassess can predict, and nothing in them runs.

The oracle is a marker file that a planted pickle would write when unpickled, and a cold run
without the cache: the planted runs must give the same output and leave no marker.
"""

from __future__ import annotations

import os
import pickle
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT, files
from dpassess.cli import app
from dpassess.export.runner import FRAGMENTS
from dpassess.lint import incremental
from dpassess.runtime.cache import KEY_FILE, Cache, user_cache_folder, user_key


class Payload:
    """A pickle that writes `marker` when it is loaded."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (exec, (f"open({str(self.marker)!r}, 'w').write('ran')",))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The seed bank and its blueprint as a checkout, the working folder of the commands."""
    work = tmp_path / "work"
    shutil.copytree(ROOT / "items", work / "items")
    shutil.copytree(ROOT / "blueprints", work / "blueprints")
    monkeypatch.chdir(work)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.delenv("DPASSESS_CACHE_DIR", raising=False)
    return work


def plant(folder: Path, marker: Path) -> list[Path]:
    """A malicious file at every path lint and build read from `folder`: the old layout (a bare
    pickle) and the new one with a tag made with another key."""
    cache = Cache(folder)
    bad = pickle.dumps(Payload(marker))
    targets = [cache._path("items", "report"), cache._path("exports", "build")]
    for bank in sorted((Path("items")).iterdir()):
        if bank.is_dir():
            targets.append(cache._path(str(bank), "lint"))
            targets += [cache._path(str(bank), f"{layer}-{i:02x}") for layer in ("items", "models")
                        for i in range(incremental.SHARDS)]
    for rel in ("qti21/data-parallelism-en.zip", "moodle/data-parallelism-en.xml",
                "gift/data-parallelism-en.txt"):
        targets.append(cache._path(str(Path("exports") / rel), FRAGMENTS))
    folder.mkdir(parents=True, exist_ok=True)
    for t in targets:
        t.write_bytes(bad)
    # a file in the new layout whose tag was made with a key the attacker chose
    t = targets[0]
    head = b"dpassess cache value 4 1\0x"
    t.write_bytes(head + b"\0" * 32 + bad)
    targets[0] = t
    return targets


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_a_planted_cache_runs_nothing_in_lint_or_build(project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    cold_lint = run("lint", "items", "--no-cache")
    run("build", "--no-cache", "--out", str(tmp_path / "cold"))
    oracle = files(tmp_path / "cold")

    plant(project / ".dpassess_cache", marker)
    for _ in range(2):  # the planted files, then whatever the first run wrote over them
        assert run("lint", "items")[:2] == cold_lint[:2]
        assert not marker.exists()
        code, out, err = run("build")
        assert code == 0, out + err
        assert not marker.exists()
        assert files(project / "exports") == oracle


def test_a_cache_folder_git_tracks_is_refused(project: Path, tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q", "."], check=True)
    folder = project / ".dpassess_cache"
    marker = tmp_path / "marker"
    plant(folder, marker)
    subprocess.run([*git, "add", "-f", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "a cache"], check=True)
    before = files(folder)

    code, out, err = run("lint", "items")
    assert code == run("lint", "items", "--no-cache")[0]
    assert err.count("warning: the cache folder .dpassess_cache holds files tracked by git") == 1
    code, out, err = run("build")
    assert code == 0, out + err
    assert err.count("tracked by git") == 1
    assert files(folder) == before  # neither read nor written
    assert not marker.exists()


def test_without_git_the_cache_still_works(project: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    (project / ".git").mkdir()  # a repository around it, but no git program to ask
    monkeypatch.setenv("PATH", "")
    first = run("lint", "items")
    assert run("lint", "items") == first
    assert any(p.suffix == ".report" for p in (project / ".dpassess_cache").iterdir())


def test_the_key_is_private_and_made_once(project: Path) -> None:
    key, why = user_key()
    assert key is not None and why is None and len(key) == 32
    path = user_cache_folder() / KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert user_key() == (key, None)


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX modes")
def test_a_key_others_can_read_turns_the_cache_off(project: Path) -> None:
    user_key()
    (user_cache_folder() / KEY_FILE).chmod(0o644)
    err = run("lint", "items")[2]
    assert "is not private to you" in err
    assert not (project / ".dpassess_cache").exists()


def test_entries_written_with_another_key_are_misses(project: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    cache = Cache(tmp_path / "c")
    cache.store_plain("b", "lint", b"salt", {"x": 1})
    cache.store_bytes("b", "frag", b"salt", b"bytes")
    assert Cache(tmp_path / "c").load_plain("b", "lint", b"salt") == {"x": 1}
    assert bytes(Cache(tmp_path / "c").load_bytes("b", "frag", b"salt") or b"") == b"bytes"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "another-user"))
    assert Cache(tmp_path / "c").load_plain("b", "lint", b"salt") is None
    assert Cache(tmp_path / "c").load_bytes("b", "frag", b"salt") is None
    # and a file renamed to another entry's name is a miss too
    monkeypatch.setenv("XDG_CACHE_HOME", str(project.parent / "user-cache"))
    c = Cache(tmp_path / "c")
    c._path("b", "lint").rename(c._path("other", "lint"))
    assert c.load_plain("other", "lint", b"salt") is None


def test_a_folder_added_to_git_after_a_warm_run_is_refused(project: Path) -> None:
    """The answer "git tracks nothing here" is remembered only for one state of git's index."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q", "."], check=True)
    subprocess.run([*git, "add", "items"], check=True)
    subprocess.run([*git, "commit", "-qm", "the bank"], check=True)
    first = run("lint", "items")  # makes the folder
    assert "tracked by git" not in first[2]
    assert run("lint", "items")[:2] == first[:2]  # asks git, remembers its answer
    assert (project / ".dpassess_cache" / "git-check").is_file()
    assert run("lint", "items")[:2] == first[:2]
    subprocess.run([*git, "add", "-f", ".dpassess_cache"], check=True)
    subprocess.run([*git, "commit", "-qm", "the cache"], check=True)
    assert "tracked by git" in run("lint", "items")[2]


def test_plain_records_never_name_a_class_even_when_authentic(project: Path, tmp_path: Path
                                                              ) -> None:
    """Lint's records are read with an unpickler that refuses every global: a file that
    carries a valid tag (written with the user's own key) still cannot run code."""
    marker = tmp_path / "ran"
    cache = Cache(tmp_path / "c")
    cache.store_bytes("b", "items", b"salt", pickle.dumps({"x": Payload(marker)}))
    assert cache.load_bytes("b", "items", b"salt") is not None  # authentic
    assert cache.load_plain("b", "items", b"salt") is None
    assert not marker.exists()
    cache.store_plain("b", "items", b"salt", {"a": (b"d", ("x", 1), None, 1.5, [True])})
    assert cache.load_plain("b", "items", b"salt") == {"a": (b"d", ("x", 1), None, 1.5, [True])}
