"""The lint cache is verified, never trusted: a damaged entry is a miss (the findings equal an
uncached run's), and a file that appears while lint runs is linted, not a crash."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import ROOT
from dpassess.bank.load import load_banks
from dpassess.lint import LintConfig, incremental, lint_banks
from dpassess.runtime.cache import Cache

ORIGINAL = ROOT / "tests" / "fixtures" / "seed-original"


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    dst = tmp_path / "bank"
    shutil.copytree(ORIGINAL, dst)
    return dst


def _uncached(bank: Path) -> list[object]:
    return list(lint_banks(load_banks([bank]), LintConfig()))


def test_a_flipped_byte_anywhere_changes_no_finding(bank: Path, tmp_path: Path) -> None:
    """Flip one byte at a time, spread over both cache files: every run gives the findings of
    a run without a cache (the damaged part is read again) and does not crash."""
    expected = _uncached(bank)
    assert expected  # the fixture has findings, so a changed one would show
    folder = tmp_path / "cache"
    incremental.lint_paths([bank], LintConfig(), Cache(folder))
    files = sorted(p for p in folder.iterdir()
                   if p.suffix == ".lint" or p.suffix.startswith((".items-", ".models-")))
    assert {p.suffix.split("-")[0] for p in files} == {".items", ".lint", ".models"}
    pristine = {p: p.read_bytes() for p in files}
    for path, data in pristine.items():
        step = max(1, len(data) * len(files) // 300)  # about 300 flips in all
        for at in range(0, len(data), step):
            for p, d in pristine.items():
                p.write_bytes(d)
            damaged = bytearray(data)
            damaged[at] ^= 0x01
            path.write_bytes(bytes(damaged))
            got = incremental.lint_paths([bank], LintConfig(), Cache(folder))
            assert got == expected, (path.suffix, at)


def test_a_file_that_appears_mid_run(bank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                     ) -> None:
    """An item file created after lint listed the folder, before it loaded it: linted with the
    others, not stored (no KeyError), and stored on the next run."""
    extra = bank / "99-late.yaml"
    late = (bank / "01-gpu-holds.yaml").read_text(encoding="utf-8")
    real = incremental.load_bank

    def load_and_add(*args: object, **kwargs: object) -> object:
        if not extra.exists():
            extra.write_text(late.replace("id: dp-gpu-holds", "id: dp-late"),
                             encoding="utf-8")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(incremental, "load_bank", load_and_add)
    folder = tmp_path / "cache"
    got = incremental.lint_paths([bank], LintConfig(), Cache(folder))
    assert any(f.path.endswith("99-late.yaml") for f in got)
    monkeypatch.setattr(incremental, "load_bank", real)
    assert incremental.lint_paths([bank], LintConfig(), Cache(folder)) == _uncached(bank) == got


def test_a_new_statistics_record_is_not_hidden_by_the_cache(bank: Path, tmp_path: Path) -> None:
    """The item-analysis rules read `stats/`: a record written after a cached run gives its
    findings (the cached bank result covers the records), as an uncached run does."""
    folder = tmp_path / "cache"
    before = incremental.lint_paths([bank], LintConfig(), Cache(folder))
    assert not any(f.code.startswith("IA") for f in before)
    (bank / "stats").mkdir()
    record = bank / "stats" / "2026-05-01-a.json"
    record.write_text('{"schema": 1, "administration": {"id": "m", "date": "2026-05-01"}, '
                      '"items": {"dp-gpu-holds": {"n": 200, "p": 0.4, "d": -0.2}}}',
                      encoding="utf-8")
    after = incremental.lint_paths([bank], LintConfig(), Cache(folder))
    assert "IA001" in {f.code for f in after}
    assert after == _uncached(bank)
    record.write_text("{", encoding="utf-8")  # the same name, now broken
    broken = incremental.lint_paths([bank], LintConfig(), Cache(folder))
    assert [f.code for f in broken if f.code.startswith("IA")] == ["IA004"]
