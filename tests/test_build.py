"""`dpassess build`: the main job writes every export, deterministically; exports/ is current."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT, files


def test_build_is_deterministic_and_exports_are_current(tmp_path):
    outs = []
    for n in (1, 2):
        out = tmp_path / f"out{n}"
        r = subprocess.run(
            [sys.executable, "-m", "dpassess", "build", "--items", str(ROOT / "items"),
             "--out", str(out)],
            capture_output=True, text=True, timeout=600, cwd=tmp_path,
        )
        assert r.returncode == 0, r.stderr
        assert "Traceback" not in r.stderr
        outs.append(files(out))
    assert outs[0] == outs[1], "two builds of the same bank differ"
    committed = files(ROOT / "exports")
    stale = sorted(
        name for name in set(outs[0]) | set(committed) if outs[0].get(name) != committed.get(name)
    )
    assert not stale, f"exports/ is stale, run `make run` and commit: {stale[:10]}"


def test_build_assembles_from_the_banks_it_loaded_and_reports_warnings_in_place(
    tmp_path, monkeypatch
):
    """The forms come from the bank as loaded and linted for the exports (the assembler does
    not load it again), and each warning is a diagnostic at the file it concerns: the bank's
    folder or a form's folder for a note about the whole collection."""
    from dpassess.app.build import build
    from dpassess.assemble import problem
    from dpassess.diagnostics import Severity

    def no_second_load(root):
        raise AssertionError(f"the assembler loaded the bank at {root} again")

    monkeypatch.setattr(problem, "load_bank", no_second_load)
    out = tmp_path / "out"
    report = build(ROOT / "items", out, ROOT / "blueprints", use_cache=False)
    assert report.exit_code == 0, report.lines
    assert files(out) == files(ROOT / "exports")
    forms = out / "forms" / "data-parallelism"
    # the bank's items shuffle, so only the forms (their order fixed) get GIFT's warning
    assert {(d.path, d.code, d.field) for d in report.warnings} >= {
        (str(forms / "dp-quiz-a"), "gift", "shuffle"),
        (str(forms / "dp-quiz-b"), "gift", "shuffle"),
    }
    assert all(d.severity is Severity.warning for d in report.warnings)
    assert len(set(report.warnings)) == len(report.warnings), "each warning once"
