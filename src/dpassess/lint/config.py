"""Lint settings: `[tool.dpassess.lint]` in pyproject.toml or `[lint]` in dpassess.toml -> LintConfig.

Every key is checked: an unknown key, a value of the wrong type or an unknown rule code is a
`UsageError` (exit 2) naming the file, the key and the value.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dpassess.diagnostics import Diagnostic, UsageError
from dpassess.lint.registry import FAMILIES, RULES, Rule, Severity, by_name
from dpassess.runtime.configfile import CONFIG_FILES as CONFIG_FILES
from dpassess.runtime.configfile import find_config

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
                if code.strip().upper() != "ALL":  # always valid: the rules need not be read
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


def failing(findings: Iterable[Diagnostic], fail_on: Severity | str = Severity.warning) -> bool:
    """True when a finding is at or above the fail level (`error` or `warning`)."""
    level = Severity(fail_on).rank
    return any(f.severity.rank >= level for f in findings)


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


def load_config(start: Path, explicit: Path | None = None) -> LintConfig:
    """The lint settings that apply at `start` (a folder or file).

    With `explicit`, that file (a pyproject.toml or a dpassess.toml) is read and must exist.
    Otherwise the folders from `start` upward are searched; the first `dpassess.toml`, or
    `pyproject.toml` with a `[tool.dpassess.lint]` table, wins. No file: the defaults.
    """
    found = find_config(start, explicit)
    return config_from_table(found.table, found.where) if found is not None else LintConfig()
