"""The first hour of a new user, through the CLI as they run it: `init`, the help
pages, `export --out`, the build summary, `build --fail-on`, exit codes of internal errors and
a light `--version`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from conftest import ROOT, SEED_BANK, dpassess


def run(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    """The command in this process (conftest.dpassess); the tests of start-up imports, internal
    errors and the terminal start a real process."""
    return dpassess(*args, cwd=cwd, env=env)


def test_init_scaffolds_a_bank_that_checks_lints_and_exports(tmp_path: Path):
    r = run("init", "items/stats", "--languages", "id,en", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    bank = tmp_path / "items" / "stats"
    assert {p.relative_to(bank).as_posix() for p in bank.rglob("*") if p.is_file()} == {
        "bank.yaml", "01-middle-value.yaml", "schema/item.schema.json",
        "schema/bank.schema.json", "schema/blueprint.schema.json",
    }
    # each file names its schema by a path that exists from the file's folder, and the
    # bank file is valid against it (jsonschema: an independent validator)
    for name, kind in (("bank.yaml", "bank"), ("01-middle-value.yaml", "item")):
        text = (bank / name).read_text(encoding="utf-8")
        m = re.match(r"# yaml-language-server: \$schema=(\S+)\n", text)
        assert m, name
        schema_file = (bank / m.group(1)).resolve()
        assert schema_file == (bank / "schema" / f"{kind}.schema.json").resolve()
        schema = json.loads(schema_file.read_text(encoding="utf-8"))
        assert schema == json.loads(run("schema", kind).stdout)
        if kind == "bank":
            jsonschema.validate(yaml.safe_load(text), schema)
    assert run("check", "items", cwd=tmp_path).stdout.strip() == "ok: 1 bank, 1 items"
    lint = run("lint", "items", cwd=tmp_path)
    assert lint.returncode == 0, lint.stdout
    export = run("export", "-f", "moodle-xml", "items/stats", "-o", "out", cwd=tmp_path)
    assert export.returncode == 0, export.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "stats-en.xml", "stats-id.xml", "stats-multi.xml"]


def test_the_item_schema_accepts_the_example_item(tmp_path: Path):
    run("init", "b", cwd=tmp_path)
    schema = json.loads((tmp_path / "b" / "schema" / "item.schema.json").read_text())
    item = yaml.safe_load((tmp_path / "b" / "01-middle-value.yaml").read_text())
    jsonschema.validate(item, schema)


def test_init_refuses_an_existing_bank_and_bad_languages(tmp_path: Path):
    assert run("init", "b", cwd=tmp_path).returncode == 0
    before = (tmp_path / "b" / "bank.yaml").read_bytes()
    again = run("init", "b", "--languages", "fr", cwd=tmp_path)
    assert again.returncode == 2 and "a bank is already there" in again.stderr
    assert (tmp_path / "b" / "bank.yaml").read_bytes() == before
    bad = run("init", "c", "--languages", "en,English", cwd=tmp_path)
    assert bad.returncode == 2 and "'English'" in bad.stderr
    assert not (tmp_path / "c").exists()


def test_init_in_another_language_says_the_example_is_english(tmp_path: Path):
    r = run("init", "b", "--languages", "fr,en", cwd=tmp_path)
    assert r.returncode == 0 and "'fr' text is English: translate it" in r.stdout
    assert run("check", "b", cwd=tmp_path).returncode == 0


def test_export_refuses_a_file_name_when_several_files_would_be_written(tmp_path: Path):
    r = run("export", str(SEED_BANK), "-f", "gift", "--out", "quiz.txt", cwd=tmp_path)
    assert r.returncode == 2
    assert "--out quiz.txt: several files will be written" in r.stderr
    assert list(tmp_path.iterdir()) == []
    one = run("export", str(SEED_BANK), "-f", "gift", "-l", "en", "--out", "quiz.txt",
              cwd=tmp_path)
    assert one.returncode == 0 and (tmp_path / "quiz.txt").is_file()


COMMANDS = ["init", "check", "lint", "export", "build", "preview", "import", "assemble", "scan",
            "stats", "schema"]


def test_help_lists_commands_in_the_order_a_user_meets_them_untruncated():
    r = run("--help")
    assert r.returncode == 0
    listed = re.findall(r"^  ([a-z]+)  ", r.stdout.split("Commands:")[1], re.M)
    assert listed == COMMANDS
    assert "..." not in r.stdout.split("Commands:")[1]
    assert "Exit codes:" in r.stdout and "130 interrupted" in r.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_no_python_types(command: str):
    r = run(command, "--help")
    assert r.returncode == 0, r.stderr
    assert not re.search(r"<(list\[|str>|int>|float>|Path>|path>|bool>)", r.stdout), r.stdout


def test_help_shows_the_format_choices_and_lint_exit_codes():
    assert "--format qti21|moodle-xml|gift" in run("export", "--help").stdout
    lint = run("lint", "--help").stdout
    assert "--format text|json|sarif|github" in lint
    assert "Exit codes: 0" in lint and "1 findings" in lint


def test_the_cli_lists_every_format_the_library_has():
    from dpassess.cli.export import EXPORT_FORMATS
    from dpassess.cli.importers import IMPORT_FORMATS
    from dpassess.cli.lint import LINT_FORMATS
    from dpassess.export import EXPORTERS
    from dpassess.importers import READERS
    from dpassess.lint import FORMATS

    assert tuple(EXPORTERS) == EXPORT_FORMATS
    assert tuple(READERS) == IMPORT_FORMATS
    assert tuple(FORMATS) == LINT_FORMATS


def _bank_with_a_warning(tmp_path: Path) -> Path:
    """An init'ed bank whose item has a length cue (WR: the key is the longest option)."""
    run("init", "items/b", cwd=tmp_path)
    item = tmp_path / "items" / "b" / "01-middle-value.yaml"
    item.write_text(item.read_text().replace(
        '"The median"', '"The median, the value with half of the sorted values below it"'))
    return tmp_path


def test_build_summary_says_clean_or_counts_findings_below_the_fail_level(tmp_path: Path):
    run("init", "items/b", cwd=tmp_path)
    clean = run("build", "--no-cache", cwd=tmp_path)
    assert clean.returncode == 0, clean.stderr
    assert "lint: clean" in clean.stdout.splitlines()
    _bank_with_a_warning(tmp_path)
    r = run("build", "--no-cache", "--fail-on", "error", cwd=tmp_path)
    assert r.returncode == 0, r.stdout
    assert re.search(r"^lint: \d+ findings?, none at the fail level$", r.stdout, re.M), r.stdout


def test_build_fail_on_warning_writes_nothing_and_exits_1(tmp_path: Path):
    _bank_with_a_warning(tmp_path)
    r = run("build", "--no-cache", "--fail-on", "warning", cwd=tmp_path)
    assert r.returncode == 1
    assert "lint failed: nothing exported" in r.stdout
    assert not (tmp_path / "exports").exists()
    bad = run("build", "--fail-on", "sometimes", cwd=tmp_path)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_an_internal_error_says_so_and_exits_70(tmp_path: Path):
    code = (
        "import sys, dpassess.bank.load as l\n"
        "def boom(*a, **k): raise RuntimeError('simulated bug')\n"
        "l.load_banks = boom\n"
        "from dpassess.cli import main\n"
        "main(['check', '.'])\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 70
    assert "RuntimeError: simulated bug" in r.stderr
    assert "internal error: this is a bug in dpassess" in r.stderr.splitlines()[-1]


def test_load_errors_are_github_annotations_with_format_github(tmp_path: Path):
    run("init", "b", cwd=tmp_path)
    (tmp_path / "b" / "02-broken.yaml").write_text("id: [\n", encoding="utf-8")
    r = run("lint", "b", "--format", "github", cwd=tmp_path)
    assert r.returncode == 2
    first = r.stderr.splitlines()[0]
    assert first.startswith("::error file=b/02-broken.yaml,line=2"), first


HEAVY = {"lxml", "ortools", "numpy", "py3langid", "pydantic", "yaml", "markdown_it", "rich"}


def test_version_imports_no_part_of_the_pipeline():
    code = (
        "import sys\nfrom dpassess.cli import main\nmain(['--version'])\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(HEAVY)!r})))\n"
        "print(sorted(m for m in sys.modules if m.startswith('dpassess.')))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    version, heavy, ours = r.stdout.splitlines()
    assert version.startswith("dpassess ")
    assert heavy == "[]"
    assert ours == "['dpassess.cli']"


def test_help_imports_no_part_of_the_pipeline():
    code = (
        "import sys\nfrom dpassess.cli import main\ntry:\n    main(['--help'])\n"
        "except SystemExit:\n    pass\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(HEAVY)!r})))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "[]"


def test_each_command_is_registered_by_the_module_named_for_it():
    """`dpassess <command>` imports the one module COMMAND_MODULES names: it must be the module
    that registers that command, and every command must be named."""
    from dpassess.cli import COMMAND_MODULES, app

    where = {info.name or info.callback.__name__.replace("_", "-"): info.callback.__module__
             for info in app.registered_commands if info.callback is not None}
    assert where == {name: f"dpassess.cli.{module}" for name, module in COMMAND_MODULES.items()}


def test_a_command_imports_its_own_command_module_only():
    code = (
        f"import sys\nfrom dpassess.cli import main\ntry:\n    main(['check', {str(SEED_BANK)!r}])\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('dpassess.cli')))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == str(["dpassess.cli", "dpassess.cli._app",
                                             "dpassess.cli.core"])


def test_lint_settings_and_stored_findings_need_no_rule_and_no_model():
    """What `dpassess build` reads when nothing changed (the settings, the fail level, the
    stored findings as text) loads neither a rule nor the item model; the first read of RULES
    registers every rule."""
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from dpassess.lint import failing, format_findings, load_config\n"
        "from dpassess.diagnostics import Diagnostic, Severity\n"
        "c = load_config(Path('.')).override(None, None, 'warning')\n"
        "d = Diagnostic('a.yaml', 1, 1, '', 'x', 'WR001', Severity.warning)\n"
        "assert failing([d], c.fail_on) and format_findings([d], 'text')\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(HEAVY)!r})))\n"
        "print(sorted(m for m in sys.modules if m.startswith(('dpassess.lint.rules', "
        "'dpassess.model'))))\n"
        "from dpassess.lint.registry import RULES\n"
        "n = len(RULES)\nimport dpassess.lint.rules\nprint(n == len(RULES) > 60)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[]", "[]", "True"]


def _stderr_on_a_terminal(args: list[str], env: dict[str, str], cwd: Path) -> str:
    """What the command writes to stderr when stderr is a terminal (a pseudo-terminal here)."""
    import os
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "dpassess", *args], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=300)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pseudo-terminal")
def test_progress_is_drawn_on_a_terminal_only_and_never_in_ci(tmp_path: Path):
    import os

    run("init", "items/b", cwd=tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["TERM"] = "xterm"
    shown = _stderr_on_a_terminal(["build", "--no-cache"], env, tmp_path)
    assert "dpassess: linting" in shown and "\x1b[2K" in shown
    assert "dpassess: linting" not in _stderr_on_a_terminal(
        ["build", "--no-cache"], {**env, "CI": "true"}, tmp_path)
    piped = run("build", "--no-cache", cwd=tmp_path, env=env)
    assert "dpassess:" not in piped.stderr and "\x1b" not in piped.stderr + piped.stdout


def test_assemble_shows_its_stages_on_a_terminal(tmp_path: Path):
    import os

    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["TERM"] = "xterm"
    blueprint = sorted((ROOT / "blueprints").glob("*.yaml"))[0]
    shown = _stderr_on_a_terminal(["assemble", str(blueprint), "--out", str(tmp_path / "f")],
                                  env, ROOT)
    for stage in ("loading and linting the bank", "selecting items (solver budget",
                  "writing the forms"):
        assert f"dpassess: {stage}" in shown, shown
    piped = run("assemble", str(blueprint), "--out", str(tmp_path / "g"), cwd=ROOT, env=env)
    assert "dpassess:" not in piped.stderr and "\x1b" not in piped.stderr + piped.stdout


def test_lint_writes_nothing_in_the_users_cache_folder(tmp_path: Path):
    """Language identification reads py3langid's own model each run: nothing is kept in
    `$XDG_CACHE_HOME` (or `~/.cache`), and lint says nothing about it."""
    import os

    run("init", "b", "--languages", "en,id", cwd=tmp_path)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path / "home"))
    first = run("lint", "b", "--no-cache", cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "note:" not in first.stderr
    assert not (tmp_path / "xdg").exists() and not (tmp_path / "home").exists()
