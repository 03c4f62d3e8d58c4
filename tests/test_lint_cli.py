"""`dpassess lint` through the CLI: exit codes, selection, configuration, suppressions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT, SEED_BANK
from dpassess.bank.load import load_banks
from dpassess.cli import app
from dpassess.diagnostics import UsageError
from dpassess.lint import LintConfig, failing, lint_banks, load_config

ORIGINAL = ROOT / "tests" / "fixtures" / "seed-original"


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, ["lint", *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.stdout, r.stderr


def test_clean_bank_exits_0() -> None:
    code, out, _ = run(str(SEED_BANK))
    assert code == 0
    assert out == "All checks passed.\n"


def test_findings_exit_1_with_positions() -> None:
    code, out, _ = run(str(ORIGINAL))
    assert code == 1
    assert "05-ddp-overlap.yaml:" in out and " TR006 " in out and "help: " in out


def test_fail_on_error_ignores_warnings() -> None:
    assert run(str(ORIGINAL), "--select", "WR", "--fail-on", "error")[0] == 0
    assert run(str(ORIGINAL), "--select", "TR006", "--fail-on", "error")[0] == 1


def test_select_and_ignore_by_code_family_and_name() -> None:
    _, out, _ = run(str(ORIGINAL), "--select", "WR003,key-is-longest", "-f", "json")
    codes = {f["code"] for f in json.loads(out)["findings"]}
    assert codes == {"WR001", "WR003"}
    _, out, _ = run(str(ORIGINAL), "--ignore", "WR", "--ignore", "BK005", "-f", "json")
    codes = {f["code"] for f in json.loads(out)["findings"]}
    assert not any(c.startswith("WR") for c in codes) and "BK005" not in codes and "TR006" in codes


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--select", "XX123"], "error: select: unknown rule code 'XX123'"),
        (["--ignore", "WR01"], "error: ignore: unknown rule code 'WR01'"),
        (["--fail-on", "info"], "error: fail-on: 'info' is not one of error, warning"),
        (["--format", "xml"], "--format xml"),
        (["--config", "missing.toml"], "missing.toml: no such configuration file"),
    ],
)
def test_usage_errors_exit_2(args: list[str], needle: str) -> None:
    code, _, err = run(str(SEED_BANK), *args)
    assert code == 2
    assert needle in err
    assert "Traceback" not in err


def test_missing_path_and_load_errors_exit_2(tmp_path: Path) -> None:
    code, _, err = run(str(tmp_path / "nope"))
    assert code == 2 and "no such file or directory" in err
    bank = tmp_path / "bank"
    shutil.copytree(SEED_BANK, bank)
    (bank / "01-gpu-holds.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    code, _, err = run(str(bank))
    assert code == 2 and "01-gpu-holds.yaml:" in err


def test_config_in_pyproject(tmp_path: Path) -> None:
    shutil.copytree(ORIGINAL, tmp_path / "items" / "bank")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.dpassess.lint]\nselect = ["TR"]\nfail-on = "error"\n',
        encoding="utf-8",
    )
    cfg = load_config(tmp_path / "items")
    assert cfg.select == ("TR",) and cfg.fail_on == "error"
    code, out, _ = run(str(tmp_path / "items"), "-f", "json")
    assert code == 1  # TR006 is an error
    assert {f["code"] for f in json.loads(out)["findings"]} == {"TR006"}


def test_dpassess_toml_wins_and_bad_keys_exit_2(tmp_path: Path) -> None:
    shutil.copytree(ORIGINAL, tmp_path / "bank")
    (tmp_path / "dpassess.toml").write_text('[lint]\nignore = ["ALL"]\n', encoding="utf-8")
    assert run(str(tmp_path / "bank"))[0] == 0
    (tmp_path / "dpassess.toml").write_text('[lint]\nfail_on = "error"\n', encoding="utf-8")
    code, _, err = run(str(tmp_path / "bank"))
    assert code == 2 and "unknown key 'fail_on'" in err and "did you mean 'fail-on'" in err
    (tmp_path / "dpassess.toml").write_text('[lint]\nselect = "WR"\n', encoding="utf-8")
    code, _, err = run(str(tmp_path / "bank"))
    assert code == 2 and "select = 'WR'" in err
    (tmp_path / "dpassess.toml").write_text('[lint]\nselect = ["WR999"]\n', encoding="utf-8")
    code, _, err = run(str(tmp_path / "bank"))
    assert code == 2 and "unknown rule code 'WR999'" in err
    (tmp_path / "dpassess.toml").write_text("[lint\n", encoding="utf-8")
    code, _, err = run(str(tmp_path / "bank"))
    assert code == 2 and "invalid TOML" in err


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("dpassess.toml", '[lnt]\nignore = ["ALL"]\n', "unknown key 'lnt' (did you mean 'lint'?)"),
        ("dpassess.toml", "fail-on = 'error'\n", "unknown key 'fail-on'"),
        ("pyproject.toml", '[tool.dpassess.lnt]\nignore = ["ALL"]\n',
         "[tool.dpassess]: unknown key 'lnt' (did you mean 'lint'?)"),
        ("pyproject.toml", "[tool.dpassess]\nfoo = 1\n", "[tool.dpassess]: unknown key 'foo'"),
        ("pyproject.toml", "[tool]\ndpassess = 1\n", "[tool.dpassess]: expected a table"),
    ],
)
def test_a_mistyped_table_is_a_usage_error(tmp_path: Path, name: str, text: str,
                                          needle: str) -> None:
    """A typo in a table name would otherwise leave the defaults in force without a word."""
    shutil.copytree(ORIGINAL, tmp_path / "bank")
    (tmp_path / name).write_text(text, encoding="utf-8")
    code, _, err = run(str(tmp_path / "bank"))
    assert code == 2 and needle in err and name in err


def test_pyproject_without_dpassess_tables_is_passed_over(tmp_path: Path) -> None:
    """A pyproject.toml of another project (no [tool.dpassess]) is not ours to judge."""
    shutil.copytree(ORIGINAL, tmp_path / "bank")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.ruff]\nline-length = 99\n',
                                             encoding="utf-8")
    assert load_config(tmp_path / "bank") == LintConfig()
    (tmp_path / "pyproject.toml").write_text("tool = 1\n", encoding="utf-8")  # not even a table
    assert load_config(tmp_path / "bank") == LintConfig()


def test_output_file_is_written(tmp_path: Path) -> None:
    out = tmp_path / "lint.sarif"
    code, stdout, _ = run(str(ORIGINAL), "-f", "sarif", "-o", str(out))
    assert code == 1 and stdout == ""
    assert json.loads(out.read_text(encoding="utf-8"))["version"] == "2.1.0"


def _with_suppression(tmp_path: Path, entry: str) -> Path:
    bank = tmp_path / "bank"
    shutil.copytree(ORIGINAL, bank)
    f = bank / "04-nccl-algorithms.yaml"
    f.write_text(f.read_text(encoding="utf-8") + f"suppress:\n- {entry}\n", encoding="utf-8")
    return bank


def test_suppression_with_reason_silences_the_item(tmp_path: Path) -> None:
    bank = _with_suppression(tmp_path, "{rule: WR003, reason: the seed wording is kept on purpose}")
    findings = lint_banks(load_banks([bank]), LintConfig(select=("WR003", "SP001")))
    assert not [f for f in findings if "04-nccl" in f.path]
    assert [f for f in findings if "06-global" in f.path]


def test_unused_suppression_is_a_finding(tmp_path: Path) -> None:
    bank = _with_suppression(tmp_path, "{rule: LM001, reason: no emoji here any more}")
    findings = lint_banks(load_banks([bank]))
    unused = [f for f in findings if f.code == "SP001"]
    assert len(unused) == 1 and "04-nccl" in unused[0].path and unused[0].field == "suppress[0].rule"
    assert unused[0].line > 1
    # not judged when the suppressed rule did not run
    assert not [f for f in lint_banks(load_banks([bank]), LintConfig(select=("SP001",))) if f.code == "SP001"]


def test_suppression_without_reason_is_a_load_error(tmp_path: Path) -> None:
    bank = _with_suppression(tmp_path, "{rule: WR003}")
    code, _, err = run(str(bank))
    assert code == 2 and "suppress" in err


def test_failing_levels() -> None:
    findings = lint_banks(load_banks([ORIGINAL]), LintConfig(select=("WR009",)))
    assert findings and all(f.severity == "info" for f in findings)
    assert not failing(findings, "warning") and not failing(findings, "error")
    with pytest.raises(UsageError):
        LintConfig(select=("NOPE",))


def test_too_few_options_help_follows_the_configured_minimum() -> None:
    findings = lint_banks(load_banks([SEED_BANK]), LintConfig(select=("ST004",), min_options=5))
    assert findings and all("at least 5 are needed" in f.message for f in findings)
    assert all(f.help.startswith("Add plausible distractors (5 or more options)") for f in findings)
