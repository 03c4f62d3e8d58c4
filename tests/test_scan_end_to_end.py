"""Paper end to end (benchmarks/scan_end_to_end.py): the bundled forms printed with `dpassess
assemble`, 40 answer sheets filled from planted answers and distorted, read with `dpassess
scan`, analysed with `dpassess stats`, recorded with `stats --write`, and the forms assembled
again.

Oracle: the planted answers written directly as the long CSV `dpassess stats` reads, analysed
the same way; the scans' analysis must be identical to it, and the re-assembly must show the
mean observed p that follows from the planted answers' analysis."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import ROOT

pytest.importorskip("cv2")
pytest.importorskip("pypdfium2")
sys.path.insert(0, str(ROOT / "benchmarks"))
import scan_end_to_end as e2e


def test_print_fill_scan_stats_write_and_assemble_again(tmp_path: Path):
    fig = e2e.run(tmp_path, sheets=40, dpi=200, seed=35, jobs=2)
    planted = e2e._read_long(tmp_path / "planted.csv")
    assert len(planted) == fig["rows"] == 40 * 8
    # every sheet decided: nothing open, the scanned CSV is the planted answers
    assert fig["scan_exit"] == 0
    assert e2e._read_long(tmp_path / "responses.csv") == planted
    assert not (tmp_path / "responses-corrections.csv").read_text().splitlines()[1:]
    # the sheets were printed in both languages: each scanned row says which, so the analysis
    # compares them (DIF), as it does from the planted answers
    assert {r[4] for r in planted} == {"en", "id"}
    assert got_dif(fig["scanned"]) == got_dif(fig["oracle"]) != []
    # the two analyses are the same analysis (only the file read differs) ...
    assert fig["analyses_identical"]
    oracle, got = fig["oracle"], fig["scanned"]
    assert got["administration"]["responses"].endswith("responses.csv")
    assert oracle["administration"]["responses"].endswith("planted.csv")
    assert got["test"]["n"] == 40 and len(got["items"]) == 8
    # ... of real answers: some right, some wrong, some blank
    assert 0 < min(it["p"] for it in got["items"]) < max(it["p"] for it in got["items"]) < 1
    assert sum(it["omitted"] for it in got["items"]) == sum(1 for r in planted if not r[3])
    # `stats --write` recorded one administration in the bank copy
    [record] = fig["records"]
    assert json.loads((tmp_path / record).read_text())
    # the forms assembled again read it: the summary's observed mean p is the planted one's
    labels = sorted(fig["mean_p_planted"])
    assert fig["mean_p_summary"] == [f"{fig['mean_p_planted'][k]:.3f}" for k in labels]
    assert "items with an observed p: A 8/8, B 8/8" in fig["summary"]


def got_dif(report: dict) -> list[tuple[str, str, str, int, int]]:
    return [(d["item"], d["reference"], d["focal"], d["n_reference"], d["n_focal"])
            for d in report.get("dif", [])]
