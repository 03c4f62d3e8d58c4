"""`dpassess lint` replays a stored report only when none of its inputs changed.

The oracle is a run without any cache (`lint_banks(load_banks(...))`, formatted): after every
change below the report must equal it, and must not be a replay; with nothing changed it must
be a replay, byte for byte the same. A warm replay imports neither the model nor the rules.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import ROOT
from dpassess.app import lint as app_lint
from dpassess.app.lint import LintOptions, LintReport, lint_report
from dpassess.bank.load import load_banks
from dpassess.lint import failing, format_findings, lint_banks, load_config
from dpassess.runtime.cache import Cache

ORIGINAL = ROOT / "tests" / "fixtures" / "seed-original"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with one bank at items/bank, as the working folder."""
    shutil.copytree(ORIGINAL, tmp_path / "items" / "bank")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def uncached(paths: list[Path], options: LintOptions | None = None) -> LintReport:
    options = options or LintOptions()
    config = load_config(paths[0], options.config).override(
        options.select, options.ignore, options.fail_on)
    findings = lint_banks(load_banks(paths), config)
    return LintReport(format_findings(findings, options.fmt), failing(findings, config.fail_on))


def first_item(work: Path) -> Path:
    return sorted((work / "items" / "bank").rglob("*.yaml"))[1]  # [0] is bank.yaml


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_an_unchanged_bank_is_replayed_byte_for_byte(work: Path, fmt: str) -> None:
    paths, options, cache = [Path("items")], LintOptions(fmt=fmt), Cache(work / ".cache")
    want = uncached(paths, options)
    assert want.text  # the fixture has findings, so a different report would show
    first = lint_report(paths, options, cache)
    second = lint_report(paths, options, cache)
    assert (first.replayed, second.replayed) == (False, True)
    assert (first.text, first.failing) == (want.text, want.failing)
    assert (second.text, second.failing) == (want.text, want.failing)


def _edit_item(work: Path) -> None:
    f = first_item(work)
    f.write_text(f.read_text(encoding="utf-8").replace("status: draft", "status: reviewed")
                 .replace("status: reviewed", "status: retired", 1), encoding="utf-8")


def _comment_item(work: Path) -> None:
    with open(first_item(work), "a", encoding="utf-8") as fh:
        fh.write("# a comment changes the bytes, not the item\n")


def _rename_item(work: Path) -> None:
    f = first_item(work)
    f.rename(f.with_name("zz-" + f.name))


def _remove_item(work: Path) -> None:
    first_item(work).unlink()


def _copy_item(work: Path) -> None:
    f = first_item(work)
    shutil.copy(f, f.with_name("copy-" + f.name))  # a duplicate id: a load error, then fixed


def _bank_file(work: Path) -> None:
    b = work / "items" / "bank" / "bank.yaml"
    b.write_text(b.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")


def _settings_file(work: Path) -> None:
    (work / "dpassess.toml").write_text('[lint]\nignore = ["WR"]\n', encoding="utf-8")


def _stats_record(work: Path) -> None:
    folder = work / "items" / "bank" / "stats"
    folder.mkdir(exist_ok=True)
    (folder / "2026-01-01-000000000000.json").write_text(json.dumps({"schema": 1}),
                                                         encoding="utf-8")


CHANGES: dict[str, Callable[[Path], None]] = {
    "an edited item": _edit_item, "a comment in an item file": _comment_item,
    "a renamed item file": _rename_item, "a removed item file": _remove_item,
    "the bank file": _bank_file, "a settings file": _settings_file,
    "a statistics record": _stats_record,
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_changed_input_is_linted_again(work: Path, change: str) -> None:
    paths, cache = [Path("items")], Cache(work / ".cache")
    lint_report(paths, LintOptions(), cache)
    CHANGES[change](work)
    got = lint_report(paths, LintOptions(), cache)
    assert not got.replayed
    assert (got.text, got.failing) == (uncached(paths).text, uncached(paths).failing)
    assert lint_report(paths, LintOptions(), cache).replayed


def test_a_load_error_is_never_stored(work: Path) -> None:
    from dpassess.diagnostics import BankLoadError

    paths, cache = [Path("items")], Cache(work / ".cache")
    lint_report(paths, LintOptions(), cache)
    _copy_item(work)
    for _ in range(2):
        with pytest.raises(BankLoadError):
            lint_report(paths, LintOptions(), cache)


@pytest.mark.parametrize("options", [
    LintOptions(fmt="json"), LintOptions(select=("WR",)), LintOptions(ignore=("TR",)),
    LintOptions(fail_on="error"),
])
def test_other_options_are_other_reports(work: Path, options: LintOptions) -> None:
    paths, cache = [Path("items")], Cache(work / ".cache")
    lint_report(paths, LintOptions(), cache)
    got = lint_report(paths, options, cache)
    assert not got.replayed
    assert (got.text, got.failing) == (uncached(paths, options).text,
                                        uncached(paths, options).failing)


def test_another_working_folder_is_another_report(work: Path, monkeypatch: pytest.MonkeyPatch
                                                  ) -> None:
    """Reports show paths as given, relative to the working folder (SARIF): the same bank
    linted from elsewhere is linted again."""
    cache = Cache(work / ".cache")
    lint_report([Path("items")], LintOptions(fmt="sarif"), cache)
    monkeypatch.chdir(work / "items")
    got = lint_report([Path("bank")], LintOptions(fmt="sarif"), cache)
    assert not got.replayed
    assert got.text == uncached([Path("bank")], LintOptions(fmt="sarif")).text


def test_a_damaged_report_is_a_miss(work: Path) -> None:
    paths, cache = [Path("items")], Cache(work / ".cache")
    want = lint_report(paths, LintOptions(), cache)
    [stored] = (work / ".cache").glob("*.report")
    data = stored.read_bytes()
    for at in range(0, len(data), max(1, len(data) // 61)):
        damaged = bytearray(data)
        damaged[at] ^= 0x01
        stored.write_bytes(bytes(damaged))
        got = lint_report(paths, LintOptions(), cache)
        assert (got.text, got.failing) == (want.text, want.failing), at
        stored.write_bytes(data)


def test_an_input_changed_while_linting_is_not_stored(work: Path, monkeypatch: pytest.MonkeyPatch
                                                      ) -> None:
    """The report of the bytes lint read must not be stored under the key of the bytes read
    before: otherwise restoring the file would replay a report of the edited one."""
    from dpassess.lint import incremental

    paths, cache = [Path("items")], Cache(work / ".cache")
    item = first_item(work)
    before = item.read_text(encoding="utf-8")
    real = incremental.lint_paths

    def edit_during(*args: object, **kwargs: object) -> object:
        _edit_item(work)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(incremental, "lint_paths", edit_during)
    lint_report(paths, LintOptions(), cache)
    monkeypatch.setattr(incremental, "lint_paths", real)
    item.write_text(before, encoding="utf-8")
    got = lint_report(paths, LintOptions(), cache)
    assert not got.replayed
    assert got.text == uncached(paths).text


def test_an_edited_dpassess_is_not_replayed(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths, cache = [Path("items")], Cache(work / ".cache")
    lint_report(paths, LintOptions(), cache)
    monkeypatch.setattr(app_lint, "__version__", "0.0.0-other")
    assert not lint_report(paths, LintOptions(), cache).replayed


HEAVY = ("dpassess.model", "dpassess.lint.rules", "dpassess.bank.load", "yaml", "lxml",
         "py3langid", "markdown_it", "ortools")


def test_a_replay_imports_neither_the_model_nor_the_rules(work: Path) -> None:
    code = ("import sys\nfrom dpassess.cli import main\n"
            "try:\n    main(['lint', 'items'])\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    env = {**os.environ, "DPASSESS_CACHE_DIR": str(work / ".cache")}
    runs = [subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True,
                           text=True, timeout=120) for _ in range(2)]
    cold, warm = (r.stdout.splitlines()[-1] for r in runs)
    assert "dpassess.model" in cold  # the first run loads and lints
    assert warm == "[]", runs[1].stderr
    assert runs[0].stdout == runs[1].stdout.replace(warm, cold)
