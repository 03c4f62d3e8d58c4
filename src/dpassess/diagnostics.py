"""Diagnostics: every problem names a file, a line, a column and a field."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem found while loading: `path:line:col: field: message`."""

    path: str
    line: int
    col: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}:{self.col}"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class DpassessError(Exception):
    """Base of the errors the library raises on purpose (the CLI turns them into exit codes)."""

    exit_code = 2


class UsageError(DpassessError):
    """Bad arguments, a path that does not exist, an unwritable output: exit 2."""


class BankLoadError(DpassessError):
    """The bank could not be loaded; carries every problem found, not only the first."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = sorted(diagnostics, key=lambda d: (d.path, d.line, d.col, d.field))
        n = len(self.diagnostics)
        super().__init__(f"{n} error{'s' if n != 1 else ''} while loading the bank")

    def __str__(self) -> str:
        return "\n".join(str(d) for d in self.diagnostics)
