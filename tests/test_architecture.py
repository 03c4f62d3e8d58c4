"""Architecture rules read from the source's syntax trees: only the CLI prints or exits, no module
shadows a standard-library name, and the import contract in pyproject.toml names every package.

The layer order itself is checked by import-linter (`lint-imports`, part of `make test`).
"""

from __future__ import annotations

import ast
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT

SRC = ROOT / "src" / "dpassess"
CLI = SRC / "cli"

# Calls that print or end the process, by their dotted name once aliases are resolved.
TERMINAL_CALLS = {
    "print", "exit", "quit", "SystemExit", "sys.exit", "os._exit", "os.abort",
    "typer.echo", "typer.secho", "typer.Exit", "typer.Abort", "click.echo", "click.secho",
}
# Objects whose mere use means writing to the terminal.
TERMINAL_STREAMS = ("sys.stdout", "sys.stderr", "sys.__stdout__", "sys.__stderr__")


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> dotted name it was imported as (`from sys import exit as e`: e -> sys.exit)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:  # `import a.b` binds a; `import a.b as c` binds c to a.b
                top = a.name.partition(".")[0]
                names[a.asname or top] = a.name if a.asname else top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def _dotted(node: ast.expr, aliases: dict[str, str]) -> str | None:
    if isinstance(node, ast.Name):
        return aliases.get(node.id, node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, aliases)
        return None if base is None else f"{base}.{node.attr}"
    return None


def terminal_uses(source: str) -> Iterator[tuple[int, str]]:
    """(line, what) for every print, exit or terminal-stream use in `source`."""
    tree = ast.parse(source)
    aliases = _aliases(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _dotted(node.func, aliases)
            if name in TERMINAL_CALLS:
                yield node.lineno, f"{name}()"
        elif isinstance(node, ast.Raise) and node.exc is not None:
            name = _dotted(node.exc, aliases)
            if name in TERMINAL_CALLS:
                yield node.lineno, f"raise {name}"
        if isinstance(node, ast.Attribute | ast.Name) and isinstance(node.ctx, ast.Load):
            name = _dotted(node, aliases)
            if name in TERMINAL_STREAMS:
                yield node.lineno, name


def library_modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if CLI not in p.parents)


def test_only_the_cli_prints_or_exits():
    found = [f"{p.relative_to(ROOT)}:{line}: {what}"
             for p in library_modules()
             for line, what in sorted(terminal_uses(p.read_text(encoding="utf-8")))]
    assert found == [], "only src/dpassess/cli/ may print or exit; the library returns " \
        "diagnostics or raises:\n" + "\n".join(found)


@pytest.mark.parametrize("source, expected", [
    ("print('x')", ["print()"]),
    ("import sys\nsys.exit(1)", ["sys.exit()"]),
    ("from sys import exit as leave\nleave(2)", ["sys.exit()"]),
    ("import sys\nsys.stderr.write('x')", ["sys.stderr"]),
    ("import sys as s\nprint('x', file=s.stdout)", ["print()", "sys.stdout"]),
    ("import typer\nraise typer.Exit(1)", ["typer.Exit()"]),
    ("import typer\nraise typer.Abort", ["raise typer.Abort"]),
    ("from typer import echo\necho('x')", ["typer.echo()"]),
    ("raise SystemExit(main())", ["SystemExit()"]),
    ("raise SystemExit", ["raise SystemExit"]),
    ("exit(1)", ["exit()"]),
    # not terminal: a method named print, a logger, a stream object passed in
    ("report.print('x')\nimport logging\nlogging.error('x')\nout.write('x')", []),
    ("import sys\nv = sys.version_info", []),
])
def test_terminal_uses_finds_what_it_should(source, expected):
    assert sorted(what for _, what in terminal_uses(textwrap.dedent(source))) == sorted(expected)


def stdlib_clashes(root: Path) -> list[str]:
    """Modules and packages below `root` named like a standard-library module (dunders aside)."""
    clash = []
    for p in sorted(root.rglob("*")):
        name = p.stem if p.suffix == ".py" else p.name if (p / "__init__.py").exists() else None
        if name and not name.startswith("__") and name in sys.stdlib_module_names:
            clash.append(p.relative_to(root).as_posix())
    return clash


def test_no_module_has_the_name_of_a_standard_library_module():
    assert stdlib_clashes(SRC) == [], "rename these: they shadow standard-library modules"


def test_stdlib_clashes_finds_modules_and_packages(tmp_path):
    for name in ("a/__init__.py", "a/types.py", "a/stats.py", "a/__main__.py", "logging/__init__.py",
                 "csv/notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).touch()
    assert stdlib_clashes(tmp_path) == ["a/types.py", "logging"]


def _packages() -> set[str]:
    """Every top-level module or package of dpassess (`dpassess.model`, `dpassess.diagnostics`...)."""
    return {f"dpassess.{p.stem if p.suffix == '.py' else p.name}"
            for p in SRC.iterdir()
            if (p.suffix == ".py" or (p / "__init__.py").exists()) and not p.stem.startswith("__")}


def test_the_model_contract_forbids_every_other_package():
    """import-linter's `forbidden` contract lists modules one by one: a new package must join it."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    [model] = [c for c in contracts if c.get("source_modules") == ["dpassess.model"]]
    missing = _packages() - {"dpassess.model"} - set(model["forbidden_modules"])
    assert not missing, f"add {sorted(missing)} to the model's forbidden_modules in pyproject.toml"


def test_the_package_ships_its_type_information():
    """PEP 561: `py.typed` beside the code and in the package data, so users' mypy reads our types."""
    assert (SRC / "py.typed").is_file()
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["dpassess"]
    assert "py.typed" in package_data
