"""The optional extras (`dpassess[assemble]`: ortools; `dpassess[pdf]`: typst): without them
the bare package lints and exports, a job that needs one says which extra installs it (exit 2,
before anything is written), and assembly without typst writes its papers as HTML and says
that PDF needs `dpassess[pdf]`. A missing package is simulated the way Python's import system
reports one: a `None` entry in `sys.modules` makes `import ortools` raise ModuleNotFoundError.
"""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT, SEED_BANK, files
from dpassess.cli import main
from dpassess.runtime.extras import install_hint

BLUEPRINT = ROOT / "blueprints" / "data-parallelism.yaml"


@pytest.fixture(autouse=True)
def _forget_what_was_imported_without_an_extra():
    """Modules of ours first imported while an extra was hidden hold that state (the solver
    missing): drop them afterwards, so later tests import them afresh."""
    before = set(sys.modules)
    yield
    for name in [n for n in sys.modules if n not in before and n.startswith("dpassess.")
                 and not n.startswith("dpassess.cli")]:  # the CLI holds no such state, and
        del sys.modules[name]  # its commands register once on the one typer app


def without(monkeypatch: pytest.MonkeyPatch, package: str) -> None:
    """`package` cannot be imported for the rest of the test, and no module of ours that
    imported it stays imported."""
    monkeypatch.setitem(sys.modules, package, None)
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        monkeypatch.setitem(sys.modules, name, None)
    for name in [n for n in sys.modules if n.startswith("dpassess.assemble")]:
        monkeypatch.delitem(sys.modules, name)


def dpassess(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
        sys.exit(0)
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def test_assemble_without_ortools_names_the_extra_and_exits_2(tmp_path, monkeypatch, capsys):
    without(monkeypatch, "ortools")
    code, _, err = dpassess(capsys, "assemble", str(BLUEPRINT), "--out", str(tmp_path / "o"))
    assert code == 2, err
    assert err.strip() == ('error: Assembling forms needs the optional package ortools, which '
                           f'is not installed: {install_hint("ortools")} (the `all` extra has '
                           'every optional part)')
    assert "[assemble]" in install_hint("ortools")
    assert not (tmp_path / "o").exists()


def test_build_with_blueprints_without_ortools_writes_nothing(tmp_path, monkeypatch, capsys):
    without(monkeypatch, "ortools")
    out = tmp_path / "exports"
    code, _, err = dpassess(capsys, "build", "--items", str(SEED_BANK.parent), "--out", str(out),
                            "--blueprints", str(BLUEPRINT.parent), "--no-cache")
    assert code == 2, err
    assert install_hint("ortools") in err
    assert not out.exists()


def test_lint_and_export_need_neither_extra(tmp_path, monkeypatch, capsys):
    without(monkeypatch, "ortools")
    without(monkeypatch, "typst")
    code, out, err = dpassess(capsys, "lint", str(SEED_BANK), "--no-cache")
    assert code == 0, out + err
    code, _, err = dpassess(capsys, "export", str(SEED_BANK), "-f", "gift", "-l", "en",
                            "-o", str(tmp_path / "q.txt"))
    assert code == 0, err
    assert (tmp_path / "q.txt").read_bytes()
    assert "ortools" not in sys.modules or sys.modules["ortools"] is None


def test_assembly_without_typst_writes_html_papers_and_says_pdf_needs_the_extra(
        tmp_path, monkeypatch, capsys):
    without(monkeypatch, "typst")
    out = tmp_path / "o"
    code, _, err = dpassess(capsys, "assemble", str(BLUEPRINT), "--out", str(out))
    assert code == 0, err
    warned = [line for line in err.splitlines() if "[pdf]" in line]
    assert warned == [f"warning: {out}: the printable forms are written as HTML only: PDF "
                      "needs the optional package typst, which is not installed "
                      f"({install_hint('typst')})"]
    written = files(out)
    committed = files(ROOT / "exports" / "forms" / "data-parallelism")
    assert not any(p.endswith(".pdf") for p in written)
    assert written == {p: b for p, b in committed.items() if not p.endswith(".pdf")}


@pytest.mark.parametrize(("record", "hint"), [
    # pip's record of an install from git (PEP 610): the same source, with the extra
    ({"url": "https://example.org/dpassess.git",
      "vcs_info": {"vcs": "git", "commit_id": "0123abc"}},
     'pip install "dpassess[assemble] @ git+https://example.org/dpassess.git@0123abc"'),
    # a clone installed with `pip install -e .`
    ({"url": "file:///home/t/dpassess", "dir_info": {"editable": True}},
     'pip install -e "/home/t/dpassess[assemble]"'),
    # a wheel: nothing says where it came from; never a bare name a package index would answer
    ({"url": "file:///tmp/dpassess-0.2.0-py3-none-any.whl", "archive_info": {}},
     'pip install "dpassess[assemble] @ git+<repository URL>"'),
    (None, 'pip install "dpassess[assemble] @ git+<repository URL>"'),
])
def test_the_install_hint_installs_from_where_dpassess_came_from(monkeypatch, record, hint):
    import json

    import dpassess.runtime.extras as extras

    class Dist:
        def read_text(self, name: str) -> str | None:
            return None if record is None else json.dumps(record)

    monkeypatch.setattr("importlib.metadata.distribution", lambda name: Dist())
    assert extras.install_hint("ortools") == hint


def test_build_without_blueprints_needs_neither_extra(tmp_path, monkeypatch, capsys):
    """A bare install's `dpassess build` of a bank with no blueprints: exports and the preview,
    no solver (the preview reads the forms' code, which imported the solver at load and
    stopped the build with exit 2)."""
    without(monkeypatch, "ortools")
    without(monkeypatch, "typst")
    out = tmp_path / "exports"
    code, _, err = dpassess(capsys, "build", "--items", str(SEED_BANK.parent), "--out", str(out),
                            "--blueprints", str(tmp_path / "none"), "--no-cache")
    assert code == 0, err
    assert (out / "preview" / "index.html").is_file()
    assert (out / "gift" / "data-parallelism-en.txt").is_file()
