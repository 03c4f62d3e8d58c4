"""Lint settings: `[tool.dpassess.lint]` in pyproject.toml or `[lint]` in dpassess.toml -> LintConfig.

Every key is checked: an unknown key, a value of the wrong type or an unknown rule code is a
`UsageError` (exit 2) naming the file, the key and the value.
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dpassess.diagnostics import UsageError
from dpassess.lint.registry import FAMILIES, RULES, Rule, Severity, by_name

CONFIG_FILES = ("dpassess.toml", "pyproject.toml")
FAIL_LEVELS = ("error", "warning")


@dataclass(frozen=True)
class LintConfig:
    """Which rules run, when lint fails, and the rules' tunable thresholds."""

    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    fail_on: Severity = Severity.warning
    #: Fewest options a choice item may have (ST004).
    min_options: int = 3
    #: The key counts as "longest by a clear margin" at this ratio to the longest distractor (WR001).
    key_longest_ratio: float = 1.25
    #: Where the settings came from (for messages); None for the defaults.
    source: str | None = None
    _rules: tuple[Rule, ...] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        where = self.source or "configuration"
        for key, codes in (("select", self.select), ("ignore", self.ignore)):
            for code in codes:
                _resolve(code, f"{where}: {key}")
        if self.min_options < 2:
            raise UsageError(f"{where}: min-options must be at least 2, not {self.min_options}")
        if self.key_longest_ratio < 1:
            raise UsageError(
                f"{where}: key-longest-ratio must be at least 1, not {self.key_longest_ratio}"
            )

    def rules(self) -> tuple[Rule, ...]:
        """The selected rules, by code."""
        chosen = {c for s in self.select for c in _resolve(s, "select")}
        chosen -= {c for s in self.ignore for c in _resolve(s, "ignore")}
        return tuple(RULES[c] for c in sorted(chosen) if not RULES[c].removed)

    def override(
        self,
        select: Iterable[str] | None = None,
        ignore: Iterable[str] | None = None,
        fail_on: str | None = None,
    ) -> LintConfig:
        """Settings given over the file's (a command line's): `select` replaces the selection,
        `ignore` adds to it. Errors name the setting (`select: unknown rule code 'XX1'`)."""
        changes: dict[str, Any] = {}
        if select:
            changes["select"] = tuple(_split(select, "select"))
        if ignore:
            changes["ignore"] = self.ignore + tuple(_split(ignore, "ignore"))
        if fail_on is not None:
            changes["fail_on"] = _level(fail_on, "fail-on")
        return replace(self, **changes)


def _split(values: Iterable[str], where: str) -> list[str]:
    out = [v.strip() for value in values for v in value.split(",") if v.strip()]
    for v in out:
        _resolve(v, where)
    return out


def _level(value: object, where: str) -> Severity:
    if value not in FAIL_LEVELS:
        raise UsageError(f"{where}: {value!r} is not one of {', '.join(FAIL_LEVELS)}")
    return Severity(str(value))


def _resolve(selector: str, where: str) -> list[str]:
    """Codes a selector names: `ALL`, a family (`WR`), a code (`WR001`) or a name."""
    s = selector.strip()
    if s.upper() == "ALL":
        return list(RULES)
    if s.upper() in FAMILIES:
        return [c for c in RULES if RULES[c].family == s.upper()]
    if s.upper() in RULES:
        return [s.upper()]
    names = by_name()
    if s in names:
        return [names[s].code]
    close = difflib.get_close_matches(s.upper(), list(RULES), n=1) or difflib.get_close_matches(
        s, list(names), n=1
    )
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise UsageError(f"{where}: unknown rule code {selector!r}{hint}")


_KEYS: dict[str, tuple[str, type | tuple[type, ...]]] = {
    "select": ("select", list),
    "ignore": ("ignore", list),
    "fail-on": ("fail_on", str),
    "min-options": ("min_options", int),
    "key-longest-ratio": ("key_longest_ratio", (int, float)),
}


def config_from_table(table: dict[str, Any], where: str) -> LintConfig:
    """A LintConfig from a TOML table; every key and value checked."""
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _KEYS:
            close = difflib.get_close_matches(key, list(_KEYS), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise UsageError(
                f"{where}: unknown key {key!r}{hint}; known keys: {', '.join(_KEYS)}"
            )
        attr, kind = _KEYS[key]
        if isinstance(value, bool) or not isinstance(value, kind):
            want = "a list of rule codes" if kind is list else getattr(kind, "__name__", "a number")
            raise UsageError(f"{where}: {key} = {value!r}: expected {want}")
        if isinstance(value, list):  # select, ignore
            if not all(isinstance(v, str) for v in value):
                raise UsageError(f"{where}: {key} = {value!r}: expected a list of rule codes")
            value = tuple(value)
        if key == "fail-on":
            value = _level(value, f"{where}: fail-on")
        values[attr] = value
    return LintConfig(**values, source=where)


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
        tool = data.get("tool", {}).get("dpassess")
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


def load_config(start: Path, explicit: Path | None = None) -> LintConfig:
    """The lint settings that apply at `start` (a folder or file).

    With `explicit`, that file (a pyproject.toml or a dpassess.toml) is read and must exist.
    Otherwise the folders from `start` upward are searched; the first `dpassess.toml`, or
    `pyproject.toml` with a `[tool.dpassess.lint]` table, wins. No file: the defaults.
    """
    if explicit is not None:
        if not explicit.is_file():
            raise UsageError(f"{explicit}: no such configuration file")
        table, where = _table(explicit, _read(explicit))
        return config_from_table(table or {}, where)
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
                return config_from_table(table or {}, where)
    return LintConfig()
