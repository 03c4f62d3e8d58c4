"""The rule registry: each rule is one small function with a code, a name, a severity and a doc.

A rule's docstring is its documentation page (What it does / Why is this bad / Example / Use
instead); `docs.py` turns the registry into `docs/rules/`. Codes are never reused: a retired rule
stays registered with `removed=True`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, NamedTuple


class Severity(StrEnum):
    error = "error"
    warning = "warning"
    info = "info"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Severity.info: 0, Severity.warning: 1, Severity.error: 2}

#: Rule families: the letters of a code and what they check.
FAMILIES: dict[str, str] = {
    "ST": "Structure",
    "WR": "Item-writing flaws",
    "TR": "Translation",
    "BK": "Bank",
    "LM": "Target LMS",
    "SP": "Suppressions",
}

Loc = tuple[str | int, ...]


class Hit(NamedTuple):
    """What a rule yields: where (a field path in the item file) and what is wrong.

    Bank rules also say which item (`item_id`; None for the bank file itself).
    """

    loc: Loc
    message: str
    help: str | None = None
    item_id: str | None = None


Scope = Literal["item", "bank", "suppression"]


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    scope: Scope
    fix: str
    check: Callable[[Any], Iterable[Hit]]
    doc: str
    target: str | None = None
    removed: bool = False

    @property
    def family(self) -> str:
        return self.code.rstrip("0123456789")

    @property
    def summary(self) -> str:
        """First paragraph of the 'What it does' section."""
        m = re.search(r"## What it does\n+(.+?)(?:\n\n|\Z)", self.doc, re.S)
        return " ".join(m.group(1).split()) if m else self.name


RULES: dict[str, Rule] = {}
HEADINGS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead")
_CODE = re.compile(r"^[A-Z]{2}[0-9]{3}$")
_NAME = re.compile(r"^[a-z]+(?:-[a-z0-9]+)*$")


def rule(
    code: str,
    name: str,
    severity: Severity | str,
    *,
    fix: str,
    scope: Scope = "item",
    target: str | None = None,
) -> Callable[[Callable[[Any], Iterable[Hit]]], Callable[[Any], Iterable[Hit]]]:
    """Register a rule function. Its docstring must carry the four doc headings."""

    def register(fn: Callable[[Any], Iterable[Hit]]) -> Callable[[Any], Iterable[Hit]]:
        doc = inspect.cleandoc(fn.__doc__ or "")
        if not _CODE.match(code) or code[:2] not in FAMILIES:
            raise ValueError(f"{code}: a code is a family ({', '.join(FAMILIES)}) and 3 digits")
        if not _NAME.match(name):
            raise ValueError(f"{code}: {name!r} is not a kebab-case name")
        if code in RULES or any(r.name == name for r in RULES.values()):
            raise ValueError(f"{code} {name}: code or name registered twice")
        missing = [h for h in HEADINGS if h not in doc]
        if missing:
            raise ValueError(f"{code}: docstring lacks {', '.join(missing)}")
        RULES[code] = Rule(code, name, Severity(severity), scope, fix, fn, doc, target)
        return fn

    return register


def by_name() -> dict[str, Rule]:
    return {r.name: r for r in RULES.values()}
