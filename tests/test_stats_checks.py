"""The item-analysis lint rules (IA, lint/rules/stats.py over stats/checks.py) on a simulated
administration with known item parameters (benchmarks/stats_sim.py): the planted miskeyed and
negatively discriminating items, the distractor nobody chooses and a wrong difficulty label are
found, the ordinary items are not; and the rules run through the lint engine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from dpassess import load_bank
from dpassess.stats import analyse, checks, read_responses
from dpassess.stats.history import observed, write_record

sys.path.insert(0, str(ROOT / "benchmarks"))
import stats_sim

sys.path.remove(str(ROOT / "benchmarks"))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sim")
    items = stats_sim.make_items(20, seed=7)
    bank_dir, responses = stats_sim.write(out, persons=400, k=20, seed=7)
    # the easiest ordinary single-choice item is labelled hard; the hardest is labelled hard
    ordinary = [i for i in items if i.id.startswith("sim-") and i.id[4:].isdigit()]
    easiest, hardest = min(ordinary, key=lambda i: i.b), max(ordinary, key=lambda i: i.b)
    for item, label in ((easiest, "hard"), (hardest, "hard")):
        path = next(bank_dir.glob(f"*-{item.id}.yaml"))
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["difficulty"] = label
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    (out / "labels.json").write_text(json.dumps([easiest.id, hardest.id]), encoding="utf-8")
    bank = load_bank(bank_dir)
    write_record(analyse(read_responses(responses, bank)))
    return bank_dir


def test_planted_items_are_found_and_ordinary_ones_pass(recorded: Path) -> None:
    bank = load_bank(recorded)
    seen, problems = observed(bank)
    assert problems == [] and len(seen) == 20
    negative = {f.item for f in checks.negative_discrimination(bank, seen)}
    assert negative == {"sim-miskeyed", "sim-negative"}
    dead = [(f.item, f.field) for f in checks.unchosen_distractors(bank, seen)]
    assert ("sim-dead", ("options", 3)) in dead  # option d, never chosen
    assert all(item in ("sim-dead", "sim-miskeyed") or seen[item].options for item, _ in dead)
    easiest, hardest = json.loads((recorded.parent / "labels.json").read_text(encoding="utf-8"))
    contradicted = {f.item: f.message for f in checks.difficulty_contradicted(bank, seen)}
    assert easiest in contradicted and contradicted[easiest].startswith("declared hard, observed")
    assert hardest not in contradicted or seen[hardest].p >= checks.TH.hard_below


def test_too_few_persons_are_not_judged(tmp_path: Path) -> None:
    bank_dir, responses = stats_sim.write(tmp_path, persons=checks.MIN_N - 1, k=6, seed=3)
    bank = load_bank(bank_dir)
    write_record(analyse(read_responses(responses, bank)))
    seen, _ = observed(bank)
    assert list(checks.negative_discrimination(bank, seen)) == []
    assert list(checks.unchosen_distractors(bank, seen)) == []


LINT = r"""
import json, sys
from dpassess import load_bank
from dpassess.lint import LintConfig, lint_banks
bank = load_bank(sys.argv[1])
found = lint_banks([bank], LintConfig(select=("IA001", "IA002", "IA003", "IA004")))
print(json.dumps([[f.code, f.path, f.field, f.message] for f in found]))
"""


def test_the_rules_run_through_the_lint_engine(recorded: Path) -> None:
    bad = recorded / "stats" / "2026-01-01-broken.json"
    bad.write_text('{"schema": 1, "administration": {"id": "x", "date": "d"}, "items": '
                   '{"sim-00": {"n": 3, "p": 7}}}', encoding="utf-8")
    try:
        r = subprocess.run([sys.executable, "-c", LINT, str(recorded)], capture_output=True,
                           text=True, timeout=120, cwd=ROOT)
    finally:
        bad.unlink()
    assert r.returncode == 0, r.stderr
    found = json.loads(r.stdout)
    codes = {(c, Path(p).name) for c, p, _, _ in found}
    assert ("IA001", "000-sim-miskeyed.yaml") in codes
    assert ("IA001", "001-sim-negative.yaml") in codes
    assert any(c == "IA002" and f == "options[3]" and p.endswith("002-sim-dead.yaml")
               for c, p, f, _ in found)
    assert any(c == "IA003" and f == "difficulty" for c, _, f, _ in found)
    assert [m for c, _, _, m in found if c == "IA004"] == [
        f"{bad}.items.sim-00: needs n (a whole number from 1 to 1,000,000,000) and p (from 0 to 1): "
        "the record "
        "is not used"]
