"""The seed bank's forms end to end (benchmarks/stats_end_to_end.py): 200 simulated students on
paper forms A and B, answer sheets read through the committed key files, the statistics recorded
in a copy of the bank and the forms assembled again with the observed p-values. Checked against
the simulation's own record of the marks (an independent numpy computation)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import stats_end_to_end as e2e

sys.path.remove(str(ROOT / "benchmarks"))


def test_seed_forms_end_to_end(tmp_path: Path) -> None:
    fig = e2e.run(tmp_path, persons=200, seed=2026)
    assert fig["independent_max_difference"] <= 1e-9
    record = json.loads((tmp_path / fig["record"]).read_text(encoding="utf-8"))
    assert record["administration"]["forms"] == ["dp-quiz-a", "dp-quiz-b"]
    assert {i: round(v["p"], 4) for i, v in record["items"].items()} == fig["observed_p"]
    assert all(v["n"] == 200 for v in record["items"].values())
    # both forms in one file, both languages, and a re-download that replaces its record
    assert fig["forms_in_file"] == ["A", "B"] and fig["languages"] == ["en", "id"]
    assert len(fig["redownload"]["replaced"]) == 1 and fig["redownload"]["records"] == 1
    assert fig["redownload"]["pooled_n"] == 200  # not 399
    # the planted DIF: category C, harder in English, flagged by lint (IA005)
    assert fig["dif"]["category"] == "C" and fig["dif"]["delta"] < -1.5
    assert any(line.startswith("02-sync-operation.yaml: IA005") for line in fig["lint"])
    # the planted distractor nobody marks: flagged by the analysis and by lint (IA002)
    assert "non-functional-distractor" in fig["flags"][e2e.PLANTED_DEAD]
    assert any(line.startswith("06-global-batch.yaml: IA002") and "chosen by 0%" in line
               for line in fig["lint"])
    # re-assembled on the observed p-values: every item has one, the summary shows their mean
    assert "items with an observed p: A 8/8, B 8/8" in fig["summary"]
    mean = sum(fig["observed_p"].values()) / 8
    line = next(x for x in fig["summary"].splitlines() if x.startswith("mean p observed"))
    assert line.split()[3:] == [f"{mean:.3f}", f"{mean:.3f}"]
    # the predicted SD and KR-20 of a form that holds the administration's items are the
    # observed ones (computed by the analysis from the persons' totals)
    for predicted in fig["predicted"]:
        assert abs(predicted["sd"] - fig["observed_test"]["sd"]) <= 1e-4
        assert abs(predicted["kr20"] - fig["observed_test"]["kr20"]) <= 1e-4
