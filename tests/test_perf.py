"""Behaviour of the speed-ups (never their speed): parallel lint and cached loading give exactly the
results of the plain sequential path."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from conftest import ROOT, SEED_BANK
from dpassess.bank.load import load_bank
from dpassess.lint import LintConfig, lint_banks

sys.path.insert(0, str(ROOT / "benchmarks"))
import synth

ORIGINAL = ROOT / "tests" / "fixtures" / "seed-original"


def test_parallel_lint_equals_sequential(tmp_path: Path) -> None:
    root = shutil.copytree(ORIGINAL, tmp_path / "orig")
    # a few synthetic items beside the seed items, some with findings
    synth.write(tmp_path / "synth", 40)
    for p in sorted((tmp_path / "synth").glob("item-*.yaml")):
        shutil.copy(p, root / p.name)
    text = (tmp_path / "synth" / "bank.yaml").read_text(encoding="utf-8")
    assert "languages" in text
    bank = load_bank(root)
    seq = lint_banks([bank], LintConfig(), jobs=1)
    par = lint_banks([bank], LintConfig(), jobs=2)
    assert seq == par
    assert len({f.path for f in seq}) > 5


def test_preloaded_items_give_the_same_bank() -> None:
    plain = load_bank(SEED_BANK)
    some = {e.path: e.item for e in plain.entries[::2]}
    again = load_bank(SEED_BANK, preloaded=some)
    assert [(e.path, e.item) for e in again.entries] == [(e.path, e.item) for e in plain.entries]


def test_known_item_results_are_reused() -> None:
    bank = load_bank(ORIGINAL)
    record: dict = {}
    full = lint_banks([bank], LintConfig(), record=record)
    assert set(record) == {e.path for e in bank.entries}
    assert lint_banks([bank], LintConfig(), known=record) == full
