"""Recording administrations in the bank (`dpassess stats --write`) and reading them back: the
record holds the analysis's own figures, p is pooled over administrations weighted by n (checked
against sums worked by hand), an author's p_value wins, the same responses file is recorded once,
nothing is written after an error, a broken record is reported and not used, and a records folder
that is a link is refused."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import date
from pathlib import Path

import pytest

from conftest import ROOT, dpassess
from dpassess import load_bank
from dpassess.diagnostics import UsageError
from dpassess.stats import analyse, read_responses
from dpassess.stats.history import (
    ItemRecord,
    effective_p,
    observed,
    pooled,
    read_history,
    write_record,
)

FIX = ROOT / "tests" / "fixtures" / "stats"


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """`dpassess stats ARGS` in this process (conftest.dpassess)."""
    return dpassess("stats", *args, cwd=ROOT)


@pytest.fixture
def bank_dir(tmp_path: Path) -> Path:
    dst = tmp_path / "bank"
    shutil.copytree(FIX / "bank", dst)
    return dst


def test_write_records_the_analysis_and_changes_no_item_file(bank_dir: Path) -> None:
    before = {p: p.read_bytes() for p in bank_dir.rglob("*") if p.is_file()}
    r = run(FIX / "hand.csv", "--bank", bank_dir, "--format", "json", "--write")
    assert r.returncode == 0, r.stderr
    records = list((bank_dir / "stats").glob("*.json"))
    assert len(records) == 1 and f"recorded {records[0]}" in r.stderr
    assert {p: p.read_bytes() for p in before} == before  # item files untouched
    report = json.loads(r.stdout)
    record = json.loads(records[0].read_text(encoding="utf-8"))
    assert record["administration"]["sha256"] == report["administration"]["sha256"]
    assert records[0].name.endswith(f"-{report['administration']['sha256'][:12]}.json")
    for it in report["items"]:
        rec = record["items"][it["item"]]
        assert (rec["n"], rec["p"], rec["d"], rec["r_pb"]) == (it["n"], it["p"], it["d"],
                                                               it["r_pb"])
        assert rec["options"] == {o: v["share"] for o, v in it["options"].items()}
    # the same responses file again: refused, nothing new
    again = run(FIX / "hand.csv", "--bank", bank_dir, "--write")
    assert again.returncode == 2 and "already recorded" in again.stderr
    assert len(list((bank_dir / "stats").glob("*"))) == 1


def test_nothing_recorded_after_an_error(bank_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "r.csv"
    bad.write_text("person,item,response\na,q-sun,true\nb,q-water,c42\n", encoding="utf-8")
    r = run(bad, "--bank", bank_dir, "--write")
    assert r.returncode == 1
    assert not (bank_dir / "stats").exists()


def test_a_linked_records_folder_is_refused(bank_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    a = analyse(read_responses(FIX / "hand.csv", load_bank(bank_dir)))
    (bank_dir / "stats").symlink_to(outside)  # after the load (which refuses such a bank)
    with pytest.raises(UsageError, match="not a folder of the bank"):
        write_record(a)
    assert list(outside.iterdir()) == []


def _rec(n: int, p: float, d: float | None, when: str, **options: float) -> ItemRecord:
    return ItemRecord(when, when, n, p, d, None, options)


def test_pooled_figures_are_weighted_by_n() -> None:
    # by hand: (100*0.5 + 300*0.9) / 400 = 0.8; D over the records that have it only
    obs = pooled([_rec(100, 0.5, 0.2, "2026-01-01", a=0.5), _rec(300, 0.9, None, "2026-06-01",
                                                                 a=0.9)])
    assert obs.n == 400 and obs.p == pytest.approx(0.8) and obs.d == pytest.approx(0.2)
    assert obs.options == {"a": pytest.approx(0.8)} and obs.last == "2026-06-01"


def test_two_administrations_pool_and_an_authors_p_value_wins(bank_dir: Path,
                                                              tmp_path: Path) -> None:
    bank = load_bank(bank_dir)
    first = analyse(read_responses(FIX / "hand.csv", bank))
    write_record(first, date(2026, 1, 10))
    second_csv = tmp_path / "second.csv"  # another class, the same answers, and one more
    lines = (FIX / "hand.csv").read_text(encoding="utf-8").splitlines()
    second_csv.write_text("\n".join([lines[0], *("Q" + x for x in lines[1:]), "P99,,q-sun,"])
                          + "\n", encoding="utf-8")
    second = analyse(read_responses(second_csv, bank))
    write_record(second, date(2026, 2, 10))
    seen, problems = observed(bank)
    assert problems == []
    s1, s2 = first.item("q-sun"), second.item("q-sun")
    assert seen["q-sun"].n == s1.n + s2.n
    assert seen["q-sun"].p == pytest.approx((s1.n * s1.p + s2.n * s2.p) / (s1.n + s2.n))
    assert seen["q-sun"].administrations == 2
    item = bank.get("q-sun")
    assert effective_p(item, seen) == seen["q-sun"].p
    fixed = item.model_copy(update={"p_value": 0.42})
    assert effective_p(fixed, seen) == 0.42


@pytest.mark.parametrize("text", [
    "not json", '{"schema": 2}', '{"schema": 1, "administration": {}, "items": {}}',
    '{"schema": 1, "administration": {"id": "x", "date": "d"}, "items": {"q-sun": {"n": 0, "p": 1}}}',
    '{"schema": 1, "administration": {"id": "x", "date": "d"}, "items": {"q-sun": {"n": 3, "p": 1.5}}}',
    '{"schema": 1, "administration": {"id": "x", "date": "d"}, "items": {"q-sun": {"n": 3, "p": 1, "d": "high"}}}',
])
def test_a_broken_record_is_reported_and_not_used(bank_dir: Path, text: str) -> None:
    (bank_dir / "stats").mkdir()
    (bank_dir / "stats" / "2026-01-01-broken.json").write_text(text, encoding="utf-8")
    history, problems = read_history(bank_dir)
    assert history == {}
    assert len(problems) == 1 and problems[0].path.endswith("2026-01-01-broken.json")
    assert "the record is not used" in problems[0].message
