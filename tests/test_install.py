"""The release as a user gets it: `python -m build` makes a wheel; the wheel installs into a
clean virtual environment (its dependencies from the package index) and, in a folder outside
this repository, `dpassess init`, `check`, `lint`, `export` and `build` work. The bare package
is what a lint-only CI job installs: without the `assemble` extra, `dpassess assemble` says
which extra to install (exit 2) and has not downloaded ortools or typst.

Slow (a venv and the dependencies' install), so it runs in `make test-install` (which CI runs
too), not in `make test`: set DPASSESS_INSTALL_TEST=1 to run it here.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from dpassess.export import EXPORTERS

pytestmark = pytest.mark.skipif(
    os.environ.get("DPASSESS_INSTALL_TEST") != "1",
    reason="slow: `make test-install` (or DPASSESS_INSTALL_TEST=1) runs it",
)


def sh(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
       ) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True,
                       timeout=1200, env=env)
    assert r.returncode == 0, f"{args}: {r.stdout}\n{r.stderr}"
    return r


def test_the_wheel_installs_into_a_clean_venv_and_runs_outside_the_repository(tmp_path: Path):
    dist = tmp_path / "dist"
    sh(sys.executable, "-m", "build", "--wheel", "--outdir", dist, ROOT)
    (wheel,) = dist.glob("dpassess-*.whl")
    from dpassess import __version__

    assert wheel.name.startswith(f"dpassess-{__version__}-")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    assert "dpassess/py.typed" in names
    assert f"dpassess-{__version__}.dist-info/licenses/LICENSE" in names or any(
        n.endswith("LICENSE") for n in names)
    assert not any(n.startswith(("tests/", "items/", "docs/")) for n in names)

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    sh(bin_dir / "python", "-m", "pip", "install", "--quiet", wheel, env=env)
    work = tmp_path / "my-quizzes"  # a teacher's own repository, far from this one
    work.mkdir()
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache-home")
    dp = bin_dir / "dpassess"
    assert sh(dp, "--version", cwd=work, env=env).stdout.strip() == f"dpassess {__version__}"
    where = sh(bin_dir / "python", "-c", "import dpassess; print(dpassess.__file__)",
               cwd=work, env=env).stdout
    assert str(env_dir) in where, "the installed package, not this checkout"
    sh(dp, "init", "items/statistics", "--languages", "en,id", cwd=work, env=env)
    assert "ok: 1 bank, 1 items" in sh(dp, "check", cwd=work, env=env).stdout
    lint = sh(dp, "lint", cwd=work, env=env)
    assert "All checks passed." in lint.stdout
    # the user's cache folder keeps one thing: the key that authenticates `.dpassess_cache`
    # (docs/security.md); no language model and nothing else
    kept = sorted(p.relative_to(tmp_path / "cache-home").as_posix()
                  for p in (tmp_path / "cache-home").rglob("*") if p.is_file())
    assert kept == ["dpassess/cache-key"], kept
    sh(dp, "export", "-f", "gift", "-l", "en", "-o", "quiz.txt", cwd=work, env=env)
    assert "::" in (work / "quiz.txt").read_text(encoding="utf-8")
    built = sh(dp, "build", cwd=work, env=env)
    assert "lint: clean" in built.stdout
    assert {p.relative_to(work / "exports").as_posix() for p in (work / "exports").rglob("*.*")
            } >= {"qti21/statistics-en.zip", "moodle/statistics-multi.xml", "gift/statistics-id.txt"}
    again = sh(dp, "build", cwd=work, env=env)
    site = [p for p in (work / "exports" / "preview").rglob("*") if p.is_file()]
    assert (work / "exports" / "preview" / "index.html") in site
    exported = [p for p in (work / "exports").rglob("*") if p.is_file() and p not in site]
    # every format in id and en, and multi where it carries several languages
    assert len(exported) == sum(2 + fmt.multi for fmt in EXPORTERS.values())
    assert f"unchanged: {len(exported) + len(site)} files" in again.stdout  # and the preview
    for package in ("ortools", "typst"):  # the extras', not the bare package's
        probe = subprocess.run([str(bin_dir / "python"), "-c", f"import {package}"], env=env,
                               capture_output=True)
        assert probe.returncode != 0, f"{package} came with the bare package"
    (work / "bp.yaml").write_text("bank: items/statistics\nforms: 1\n", encoding="utf-8")
    no_solver = subprocess.run([str(dp), "assemble", "bp.yaml", "-o", "forms"], cwd=work,
                               env=env, capture_output=True, text=True)
    assert no_solver.returncode == 2, no_solver.stdout + no_solver.stderr
    assert "dpassess[assemble] @ " in no_solver.stderr  # never a bare name for a package index


def test_every_install_command_of_the_docs_works_on_the_repository_as_published(tmp_path: Path):
    """The README's and the docs' install commands (read out of them: a new one is covered),
    run as written on a repository like the published one (the default branch `main`, no
    tags), with the placeholders filled in: pip and pipx from git, pinned to a commit, from a
    clone, and the pre-commit hook pinned to a commit. Each installs the version this checkout
    has, and one from git names its commit."""
    import shutil

    import yaml

    from dpassess import __version__
    from test_install_docs import install_commands, pre_commit_configs, published, substitute

    repo, commit = published(tmp_path)
    # file://localhost/...: the pip that `python -m venv` bundles with Python 3.11 (23.2)
    # refuses `git+file:///...` (an empty host) as a requirement; git reads both
    url = f"file://localhost{repo}"
    clone = tmp_path / "clone"
    sh("git", "clone", "--quiet", url, clone)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    tools = tmp_path / "tools"  # pipx and pre-commit, as a user has them
    venv.create(tools, with_pip=True)
    sh(tools / "bin" / "python", "-m", "pip", "install", "--quiet", "pipx", "pre-commit", env=env)
    python_dir = str(Path(sys.executable).parent)  # `python3 -m venv` makes a 3.11 venv
    for n, (command, where) in enumerate(sorted(install_commands().items())):
        work = tmp_path / f"run{n}"
        shutil.copytree(clone, work, symlinks=True)  # `pip install .` runs in a clone
        target = tmp_path / f"venv{n}"
        venv.create(target, with_pip=True)
        run_env = dict(env, PATH=os.pathsep.join(
            [str(target / "bin"), python_dir, str(tools / "bin"), env.get("PATH", "")]),
            PIPX_HOME=str(tmp_path / f"pipx{n}"), PIPX_BIN_DIR=str(tmp_path / f"pipx{n}-bin"))
        line = substitute(command, url, commit)
        r = subprocess.run(["bash", "-c", line], cwd=work, env=run_env, capture_output=True,
                           text=True, timeout=1200)
        assert r.returncode == 0, f"{where}: {line}\n{r.stdout}\n{r.stderr}"
        installed = next(p for p in (work / ".venv" / "bin" / "dpassess",
                                     tmp_path / f"pipx{n}-bin" / "dpassess",
                                     target / "bin" / "dpassess") if p.exists())
        version = sh(installed, "--version", cwd=tmp_path, env=env).stdout.strip()
        if "git+" in line:
            assert version == f"dpassess {__version__} (commit {commit[:12]})", (where, version)
        else:
            assert version.startswith(f"dpassess {__version__}"), (where, version)
    # pre-commit: the hook, pinned as the docs say, in a bank repository of a user's
    bank = tmp_path / "my-quizzes"
    bank.mkdir()
    sh("git", "init", "--quiet", cwd=bank)
    sh(installed, "init", "items/statistics", "--languages", "en,id", cwd=bank, env=env)
    for config, where in pre_commit_configs().items():
        text = substitute(config, url, commit)
        assert yaml.safe_load(text)["repos"][0]["rev"] == commit, where
        (bank / ".pre-commit-config.yaml").write_text(text, encoding="utf-8")
        sh("git", "add", "-A", cwd=bank)
        r = subprocess.run([tools / "bin" / "pre-commit", "run", "--all-files"], cwd=bank,
                           env=dict(env, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home")),
                           capture_output=True, text=True, timeout=1800)
        assert r.returncode == 0 and "dpassess lint" in r.stdout, f"{where}\n{r.stdout}\n{r.stderr}"
