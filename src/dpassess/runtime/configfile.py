"""A project's configuration file -> dpassess's table in it: `[tool.dpassess.lint]` in
pyproject.toml or `[lint]` in dpassess.toml, found from a folder upward.

Only the standard library: a command can key its cache on the settings file before it imports
what reads the settings (`dpassess.lint.config` checks every key of the table).
"""

from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpassess.diagnostics import UsageError

CONFIG_FILES = ("dpassess.toml", "pyproject.toml")


@dataclass(frozen=True)
class ConfigTable:
    """The lint table of one file (empty when the file has none), where it came from (for
    messages: `pyproject.toml: [tool.dpassess.lint]`) and the file itself."""

    table: dict[str, Any]
    where: str
    path: Path


def find_config(start: Path, explicit: Path | None = None) -> ConfigTable | None:
    """The lint table that applies at `start` (a folder or file), or None for the defaults.

    With `explicit`, that file (a pyproject.toml or a dpassess.toml) is read and must exist.
    Otherwise the folders from `start` upward are searched; the first `dpassess.toml`, or
    `pyproject.toml` with a `[tool.dpassess.lint]` table, wins.
    """
    if explicit is not None:
        if not explicit.is_file():
            raise UsageError(f"{explicit}: no such configuration file")
        table, where = _table(explicit, _read(explicit))
        return ConfigTable(table or {}, where, explicit)
    here = start.resolve()
    if here.is_file() or not here.exists():
        here = here.parent
    for folder in (here, *here.parents):
        for name in CONFIG_FILES:
            path = folder / name
            if not path.is_file():
                continue
            table, where = _table(path, _read(path))
            if name == "dpassess.toml" or table is not None:
                return ConfigTable(table or {}, where, path)
    return None


def _read(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: invalid TOML: {exc}") from exc


def _only_lint(container: dict[str, Any], where: str) -> None:
    """`lint` is the only table dpassess reads here: any other key is a typo that would
    otherwise switch the settings off without a word."""
    for key in container:
        if key != "lint":
            close = difflib.get_close_matches(key, ["lint"], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise UsageError(f"{where}: unknown key {key!r}{hint}; the only table is 'lint'")


def _table(path: Path, data: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    if path.name == "pyproject.toml":
        tools = data.get("tool")  # another project's business when it is no table
        tool = tools.get("dpassess") if isinstance(tools, dict) else None
        where = f"{path}: [tool.dpassess.lint]"
        if tool is not None and not isinstance(tool, dict):
            raise UsageError(f"{path}: [tool.dpassess]: expected a table, found "
                             f"{type(tool).__name__}")
        if tool is not None:
            _only_lint(tool, f"{path}: [tool.dpassess]")
        table = tool.get("lint") if tool is not None else None
    else:
        where = f"{path}: [lint]"
        _only_lint(data, str(path))
        table = data.get("lint")
    if table is not None and not isinstance(table, dict):
        raise UsageError(f"{where}: expected a table, found {type(table).__name__}")
    return table, where
