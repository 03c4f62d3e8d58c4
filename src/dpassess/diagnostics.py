"""Diagnostics: the one type for every problem any layer reports, and the library's errors.

A load error, a lint finding, an export warning, an import skip and a blueprint error are all a
`Diagnostic`: what is wrong (`message`, with `help` on how to fix it), how bad (`severity`),
which check said so (`code`: a lint rule's code such as `ST001`, an exporter's or importer's
format such as `gift`, `blueprint`; empty for the loader's own errors) and where (`path:line:col`, the field path inside
the file, and the item when the path alone does not say). `str()` is the one human form:

    items/b/q1.yaml:12:5: key: 'x' names no option
    items/b/q1.yaml: gift: q1: points: GIFT cannot set the mark: Moodle gives 1, not 2

Imports nothing of ours.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum


class Severity(StrEnum):
    error = "error"
    warning = "warning"
    info = "info"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Severity.info: 0, Severity.warning: 1, Severity.error: 2}

#: A field path inside a file: `("text", "en", "options", "a")`, `("options", 0, "id")`.
FieldPath = tuple[str | int, ...]


def format_field(path: Iterable[str | int]) -> str:
    """`text.en.options.a`, `options[0].id`: a field path as an author reads it."""
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else ("." if out else "") + str(step)
    return out


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem at one place. See the module docstring."""

    path: str
    line: int
    col: int
    field: str
    message: str
    code: str = ""
    severity: Severity = Severity.error
    help: str = ""
    #: the rule's name (lint), e.g. `key-unknown-option`
    name: str = ""
    #: the item concerned, when `path` is not its file (an export, an import source)
    item: str | None = None

    @property
    def where(self) -> str:
        """`path:line:col`, `path:line` or `path` (as much as is known)."""
        if not self.line:
            return self.path
        return f"{self.path}:{self.line}:{self.col}" if self.col else f"{self.path}:{self.line}"

    @property
    def sort_key(self) -> tuple[str, int, int, str, str, str]:
        return (self.path, self.line, self.col, self.code, self.field, self.message)

    def at(self, path: str, line: int = 0, col: int = 0) -> Diagnostic:
        """The same diagnostic at another place (an exporter's warning placed in the item file)."""
        return replace(self, path=path, line=line, col=col)

    def __str__(self) -> str:
        parts = [p for p in (self.where, self.code, self.item, self.field) if p]
        return visible(": ".join([*parts, self.message]))


#: Characters that would start a new line, rewrite one or reorder it in a terminal or a CI log:
#: C0 and C1 controls (ESC, and so the ANSI and OSC sequences), DEL, the Unicode line and
#: paragraph separators, and the bidirectional controls (U+202A-U+202E, U+2066-U+2069, U+200E,
#: U+200F, U+061C: "Trojan Source").
UNSAFE_CHARACTERS = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def visible(s: str, *, keep_breaks: bool = False) -> str:
    """`s` with every line break, control and bidirectional control character written as an
    escape (`\\n`, `\\x1b`, `\\u202e`): a file name or message holding one cannot forge a line
    of a report, recolour a terminal or reverse the text a reader sees (a CI log reads a line
    starting with `::error` as a workflow command). `keep_breaks` keeps LF and CR as they are,
    for a format that escapes them itself (GitHub's workflow commands)."""
    if not UNSAFE_CHARACTERS.search(s):
        return s
    if keep_breaks:
        return UNSAFE_CHARACTERS.sub(
            lambda m: m.group(0) if m.group(0) in "\r\n" else _escape(m.group(0)), s)
    return UNSAFE_CHARACTERS.sub(lambda m: _escape(m.group(0)), s)


def _escape(ch: str) -> str:
    code = ord(ch)
    if ch in "\n\r\t":
        return repr(ch)[1:-1]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def warning(code: str, message: str, *, path: str = "", field: str = "", item: str | None = None,
            help: str = "") -> Diagnostic:
    """A warning not tied to a line (an export or import note)."""
    return Diagnostic(path, 0, 0, field, message, code, Severity.warning, help, item=item)


def dedupe(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Each diagnostic once, in first-seen order (a note repeated by every language)."""
    return list(dict.fromkeys(diagnostics))


class DpassessError(Exception):
    """Base of the errors the library raises on purpose (the CLI turns them into exit codes).

    `diagnostics` holds every problem found, when there are several (a bank that does not load,
    a blueprint with errors): the CLI prints each, then the error's one-line summary."""

    exit_code = 2
    diagnostics: Sequence[Diagnostic] = ()


class UsageError(DpassessError):
    """Bad arguments, a path that does not exist, an unwritable output: exit 2."""


class DiagnosedError(DpassessError):
    """An error that carries every problem found, not only the first, sorted by place; its
    message counts them ("3 errors while loading the bank")."""

    #: what the errors were found in, for the message
    subject = "the input"

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = sorted(diagnostics, key=lambda d: (d.path, d.line, d.col, d.field))
        n = len(self.diagnostics)
        super().__init__(f"{n} error{'s' if n != 1 else ''} {self.subject}")

    def __str__(self) -> str:
        return "\n".join(str(d) for d in self.diagnostics)


class BankLoadError(DiagnosedError):
    """The bank could not be loaded; carries every problem found, not only the first."""

    subject = "while loading the bank"
