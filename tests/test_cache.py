"""The lint cache: same findings as an uncached run, reused only when nothing it depends on changed.

Each invalidation test changes one input (an item, the bank file, the settings, the dpassess
version) and checks two things: the findings equal an uncached run's, and the work was redone
(a spy on the loader and on the item rules counts what was parsed and checked).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import dpassess
from conftest import ROOT
from dpassess.bank.load import load_banks
from dpassess.cli import app
from dpassess.lint import LintConfig, lint_banks
from dpassess.lint import incremental as cached_mod
from dpassess.runtime import cache as cache_mod
from dpassess.runtime.cache import Cache, cache_dir

ORIGINAL = ROOT / "tests" / "fixtures" / "seed-original"


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    dst = tmp_path / "bank"
    shutil.copytree(ORIGINAL, dst)
    return dst


class Spy:
    """Counts banks loaded whole, items parsed (not from the cache, whole bank or one file) and
    items checked by item rules."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.loads = 0
        self.parsed = 0
        self.checked = 0
        #: The bank rules whose hits the last lint_bank took from the cache.
        self.kept_hits: set[str] = set()
        real_load, real_item = cached_mod.load_bank, cached_mod.load_item
        real_lint, real_bank = cached_mod.lint_banks, cached_mod.lint_bank

        def load_bank(root, *, jobs=None, preloaded=None):  # type: ignore[no-untyped-def]
            self.loads += 1
            b = real_load(root, jobs=jobs, preloaded=preloaded)
            self.parsed += len(b.entries) - len(preloaded or {})
            return b

        def load_item(path):  # type: ignore[no-untyped-def]
            self.parsed += 1
            return real_item(path)

        def lint(banks, config, *, jobs=None, known=None, record=None):  # type: ignore[no-untyped-def]
            banks = list(banks)
            self.checked += sum(len(b.entries) for b in banks) - len(known or {})
            return real_lint(banks, config, jobs=jobs, known=known, record=record)

        def lint_bank(bctx, paths, *, jobs=None, known=None, record=None, **kw):  # type: ignore[no-untyped-def]
            self.checked += sum(e.path not in (known or {}) for e in bctx.bank.entries)
            self.kept_hits = set(kw.get("kept_hits") or ())
            return real_bank(bctx, paths, jobs=jobs, known=known, record=record, **kw)

        monkeypatch.setattr(cached_mod, "load_bank", load_bank)
        monkeypatch.setattr(cached_mod, "load_item", load_item)
        monkeypatch.setattr(cached_mod, "lint_banks", lint)
        monkeypatch.setattr(cached_mod, "lint_bank", lint_bank)

    def reset(self) -> None:
        self.loads = self.parsed = self.checked = 0


def uncached(path: Path, config: LintConfig) -> list:
    return lint_banks(load_banks([path]), config)


def test_unchanged_bank_is_not_parsed_or_checked_again(
    bank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, cfg = Cache(tmp_path / "c"), LintConfig()
    spy = Spy(monkeypatch)
    first = cached_mod.lint_paths([bank], cfg, cache)
    assert first == uncached(bank, cfg) and first  # the original seed has findings
    assert (spy.loads, spy.parsed, spy.checked) == (1, 8, 8)
    spy.reset()
    assert cached_mod.lint_paths([bank], cfg, cache) == first
    assert (spy.loads, spy.parsed, spy.checked) == (0, 0, 0)


def test_a_changed_item_is_parsed_and_checked_again_alone(
    bank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, cfg = Cache(tmp_path / "c"), LintConfig()
    spy = Spy(monkeypatch)
    before = cached_mod.lint_paths([bank], cfg, cache)
    item = bank / "03-memory-limit.yaml"
    text = item.read_text(encoding="utf-8")
    # an "all of the above" distractor: a finding that was not there before
    old = "different-layers: Each worker stores different model layers by default"
    assert old in text
    item.write_text(text.replace(old, "different-layers: All of the above"), encoding="utf-8")
    spy.reset()
    after = cached_mod.lint_paths([bank], cfg, cache)
    assert after == uncached(bank, cfg)
    assert after != before
    # the bank is not loaded whole: the one file is parsed and checked
    assert (spy.loads, spy.parsed, spy.checked) == (0, 1, 1)


@pytest.mark.parametrize("run", ["lint_paths", "load_and_lint"])
def test_the_bank_rules_hits_are_kept_while_no_item_features_change(
    bank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: str
) -> None:
    """An edit the bank rules do not read (a title) reuses their stored hits; one that some
    read (an option's length: the key is no longer the longest) runs those again (the key-cue
    rules and the duplicate rule, which compares the options' texts), and so does undoing it; a
    new stem, the duplicate rules. Each time the findings are
    those of a run without a cache."""
    cache, cfg = Cache(tmp_path / "c"), LintConfig()
    spy = Spy(monkeypatch)

    def lint() -> list[object]:
        if run == "lint_paths":
            return list(cached_mod.lint_paths([bank], cfg, cache))
        return list(cached_mod.load_and_lint([bank], cfg, cache)[1])

    bank_rules = {r.code for r in cfg.rules() if r.scope == "bank" and r.code.startswith("BK")}
    key_cues = {"BK004", "BK005", "BK006", "BK007"}
    answers = {"BK001", "BK003"}  # (the duplicate rule reads the options' texts)
    duplicates = {"BK001", "BK002", "BK003"}
    first = lint()
    assert {f.code for f in first} >= {"BK005", "BK006", "BK007"}  # hits to keep
    assert spy.kept_hits == set()
    item = bank / "03-memory-limit.yaml"
    text = item.read_text(encoding="utf-8")
    item.write_text(text.replace("title: Memory limit of", "title: The memory limit of"),
                    encoding="utf-8")
    assert lint() == uncached(bank, cfg) == first
    assert spy.kept_hits == bank_rules
    short = text.replace("replicated-state: Each GPU keeps model parameters and optimizer state "
                         "replicated, limiting the model\n        size that fits",
                         "replicated-state: Replicas")
    assert short != text
    item.write_text(short, encoding="utf-8")
    changed = lint()
    assert changed == uncached(bank, cfg) != first
    assert spy.kept_hits == bank_rules - key_cues - answers
    item.write_text(text, encoding="utf-8")
    assert lint() == uncached(bank, cfg) == first
    assert spy.kept_hits == bank_rules - key_cues - answers  # the first run's keys were replaced
    item.write_text(text.replace("title: Memory limit of", "title: A memory limit of"),
                    encoding="utf-8")
    assert lint() == first
    assert spy.kept_hits == bank_rules
    item.write_text(text.replace("stem: What memory limit remains in plain data parallelism?",
                                 "stem: Which operation keeps replicas in sync?"),
                    encoding="utf-8")
    assert lint() == uncached(bank, cfg)
    assert spy.kept_hits == bank_rules - duplicates


def test_load_and_lint_parses_each_file_once_and_returns_the_banks(
    bank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`dpassess build`'s path: the banks it exports are the loader's, whether their items were
    parsed now or came from the cache, and an unchanged bank is not parsed or checked again."""
    cache, cfg = Cache(tmp_path / "c"), LintConfig()
    spy = Spy(monkeypatch)
    expected_banks = load_banks([bank])
    banks, findings = cached_mod.load_and_lint([bank], cfg, cache)
    assert (spy.loads, spy.parsed, spy.checked) == (1, 8, 8)
    assert findings == uncached(bank, cfg)
    assert [(e.path, e.item) for e in banks[0].entries] == [
        (e.path, e.item) for e in expected_banks[0].entries
    ]
    spy.reset()
    banks2, findings2 = cached_mod.load_and_lint([bank], cfg, cache)
    assert (spy.parsed, spy.checked) == (0, 0) and findings2 == findings
    assert banks2[0].entries == banks[0].entries and banks2[0].config == banks[0].config
    spy.reset()
    assert cached_mod.load_and_lint([bank], cfg, None) == (expected_banks, findings)


def test_added_and_removed_items_invalidate(bank: Path, tmp_path: Path) -> None:
    cache, cfg = Cache(tmp_path / "c"), LintConfig()
    cached_mod.lint_paths([bank], cfg, cache)
    (bank / "08-gradient-accumulation.yaml").unlink()
    assert cached_mod.lint_paths([bank], cfg, cache) == uncached(bank, cfg)
    shutil.copy(ORIGINAL / "08-gradient-accumulation.yaml", bank / "08-gradient-accumulation.yaml")
    assert cached_mod.lint_paths([bank], cfg, cache) == uncached(bank, cfg)


def test_a_changed_bank_file_invalidates(
    bank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, cfg = Cache(tmp_path / "c"), LintConfig()
    spy = Spy(monkeypatch)
    before = cached_mod.lint_paths([bank], cfg, cache)
    cfg_file = bank / "bank.yaml"
    text = cfg_file.read_text(encoding="utf-8")
    assert "glossary:" in text
    # without the glossary, glossary findings go and masking changes
    cfg_file.write_text(text[: text.index("glossary:")], encoding="utf-8")
    spy.reset()
    after = cached_mod.lint_paths([bank], cfg, cache)
    assert after == uncached(bank, cfg) and after != before
    assert (spy.parsed, spy.checked) == (8, 8)


def test_changed_settings_invalidate(
    bank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = Cache(tmp_path / "c")
    spy = Spy(monkeypatch)
    a = cached_mod.lint_paths([bank], LintConfig(), cache)
    for cfg in (LintConfig(min_options=5), LintConfig(ignore=("WR",)),
                LintConfig(key_longest_ratio=3.0)):
        spy.reset()
        b = cached_mod.lint_paths([bank], cfg, cache)
        assert b == uncached(bank, cfg) and b != a
        assert spy.checked == 8


def test_another_dpassess_version_invalidates(
    bank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, cfg = Cache(tmp_path / "c"), LintConfig()
    spy = Spy(monkeypatch)
    first = cached_mod.lint_paths([bank], cfg, cache)
    monkeypatch.setattr(dpassess, "__version__", "999.0.0")
    spy.reset()
    assert cached_mod.lint_paths([bank], cfg, cache) == first
    assert (spy.loads, spy.parsed, spy.checked) == (1, 8, 8)


def test_an_edited_source_file_anywhere_in_the_package_invalidates(tmp_path: Path) -> None:
    """The salt covers every dpassess source file (an edited rule, in a development install),
    not only the cache's own folder."""
    assert Path(dpassess.__file__).resolve().parent == cache_mod.PACKAGE
    rule = tmp_path / "dpassess" / "lint" / "rules" / "writing.py"
    rule.parent.mkdir(parents=True)
    rule.write_text("x = 1\n", encoding="utf-8")
    before = cache_mod.fingerprint(tmp_path / "dpassess")
    rule.write_text("x = 22\n", encoding="utf-8")
    assert cache_mod.fingerprint(tmp_path / "dpassess") != before


@pytest.mark.parametrize("garbage", [b"", b"not a pickle", b"\x80\x05K\x01.", os.urandom(200)])
def test_corrupted_cache_files_are_ignored(
    bank: Path, tmp_path: Path, garbage: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, cfg = Cache(tmp_path / "c"), LintConfig()
    first = cached_mod.lint_paths([bank], cfg, cache)
    files = [p for p in (tmp_path / "c").iterdir()
             if p.suffix == ".lint" or p.suffix.startswith((".items-", ".models-"))]
    # the findings, and the records and models in their shards
    assert {p.suffix.split("-")[0] for p in files} == {".lint", ".items", ".models"}
    for p in files:
        p.write_bytes(garbage)
    spy = Spy(monkeypatch)
    assert cached_mod.lint_paths([bank], cfg, cache) == first
    assert (spy.parsed, spy.checked) == (8, 8)  # a miss: everything parsed and checked again
    # and rewritten: the next run is a hit again
    spy.reset()
    assert cached_mod.lint_paths([bank], cfg, cache) == first
    assert (spy.parsed, spy.checked) == (0, 0)


def test_unreadable_or_unwritable_cache_is_ignored(bank: Path, tmp_path: Path) -> None:
    cfg = LintConfig()
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    cache = Cache(blocker / "c")  # cannot be created: a file is in the way
    assert cached_mod.lint_paths([bank], cfg, cache) == uncached(bank, cfg)
    assert cached_mod.lint_paths([bank], cfg, cache) == uncached(bank, cfg)
    d = tmp_path / "c"
    cached_mod.lint_paths([bank], cfg, Cache(d))
    for p in d.iterdir():
        if p.suffix == ".lint":
            p.unlink()
            p.mkdir()  # a folder where a cache file should be
    assert cached_mod.lint_paths([bank], cfg, Cache(d)) == uncached(bank, cfg)


def test_load_errors_are_reported_and_not_cached(bank: Path, tmp_path: Path) -> None:
    from dpassess.diagnostics import BankLoadError

    cache, cfg = Cache(tmp_path / "c"), LintConfig()
    (bank / "09-broken.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(BankLoadError) as exc:
            cached_mod.lint_paths([bank], cfg, cache)
        assert any("09-broken.yaml" in d.path for d in exc.value.diagnostics)


def test_cli_cache_dir_env_and_no_cache(
    bank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    r0 = runner.invoke(app, ["lint", "--no-cache", str(bank), "-f", "json"])
    assert r0.exit_code == 1
    assert not (tmp_path / ".dpassess_cache").exists()
    r1 = runner.invoke(app, ["lint", str(bank), "-f", "json"])
    assert (r1.exit_code, r1.stdout) == (1, r0.stdout)
    assert any(p.suffix == ".lint" for p in (tmp_path / ".dpassess_cache").iterdir())
    assert (tmp_path / ".dpassess_cache" / ".gitignore").read_text() == "*\n"
    monkeypatch.setenv("DPASSESS_CACHE_DIR", str(tmp_path / "env"))
    assert cache_dir() == tmp_path / "env"
    r2 = runner.invoke(app, ["lint", str(bank), "-f", "json"])
    assert (r2.exit_code, r2.stdout) == (1, r0.stdout)
    assert (tmp_path / "env").is_dir()
    r3 = runner.invoke(app, ["lint", "--cache-dir", str(tmp_path / "flag"), str(bank), "-f", "json"])
    assert (r3.exit_code, r3.stdout) == (1, r0.stdout)
    assert (tmp_path / "flag").is_dir()
    assert cache_dir(tmp_path / "x") == tmp_path / "x"
