"""Problems found while reading a responses file -> diagnostics, bounded in number.

A file of a million rows for another bank has a million bad rows; the first `limit` are kept as
they are, the rest are counted. Problems that repeat by nature (an item missing for some persons,
scores that differ from the bank's key) are *tallied*: one diagnostic each, with a count and the
first line.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpassess.diagnostics import Diagnostic, DpassessError, Severity

CODE = "stats"
#: Most diagnostics of each severity kept as they are.
LIMIT = 200


@dataclass
class _Tally:
    line: int
    field: str
    message: str
    severity: Severity
    count: int = 1
    example: str = ""


class Problems:
    """The diagnostics of one responses file (path = the file, line = its line)."""

    def __init__(self, path: str, limit: int = LIMIT) -> None:
        self.path = path
        self.limit = limit
        self._kept: list[Diagnostic] = []
        self._shown = {Severity.error: 0, Severity.warning: 0, Severity.info: 0}
        self._over = {Severity.error: 0, Severity.warning: 0, Severity.info: 0}
        self._errors = 0
        self._tallies: dict[tuple[object, ...], _Tally] = {}

    @property
    def errors(self) -> int:
        """How many errors were found (kept, tallied or only counted)."""
        return self._errors + sum(
            1 for t in self._tallies.values() if t.severity is Severity.error
        )

    def add(self, severity: Severity, line: int, field: str, message: str, *,
            item: str | None = None, path: str | None = None) -> None:
        if severity is Severity.error:
            self._errors += 1
        if self._shown[severity] >= self.limit:
            self._over[severity] += 1
            return
        self._shown[severity] += 1
        self._kept.append(Diagnostic(path or self.path, line, 0, field, message, CODE, severity,
                                     item=item))

    def summary(self, message: str) -> None:
        """An error about the whole file, always shown (not counted against the limit)."""
        self._errors += 1
        self._kept.append(Diagnostic(self.path, 0, 0, "", message, CODE, Severity.error))

    def error(self, line: int, field: str, message: str, *, item: str | None = None,
              path: str | None = None) -> None:
        self.add(Severity.error, line, field, message, item=item, path=path)

    def warning(self, line: int, field: str, message: str, *, item: str | None = None) -> None:
        self.add(Severity.warning, line, field, message, item=item)

    def tally(self, key: tuple[object, ...], line: int, field: str, message: str,
              severity: Severity = Severity.warning, example: str = "") -> None:
        """Count one occurrence of the problem `key`; reported once, at its first line."""
        t = self._tallies.get(key)
        if t is None:
            self._tallies[key] = _Tally(line, field, message, severity, example=example)
        else:
            t.count += 1

    def diagnostics(self) -> list[Diagnostic]:
        """Every diagnostic, by line; tallies say how often; a last one says how many were left out."""
        out = list(self._kept)
        for t in self._tallies.values():
            times = "once" if t.count == 1 else f"{t.count} times"
            example = f", e.g. {t.example}" if t.example else ""
            out.append(Diagnostic(self.path, t.line, 0, t.field,
                                  f"{t.message} ({times}{example}; first at line {t.line})",
                                  CODE, t.severity))
        out.sort(key=lambda d: (d.line, d.severity.rank * -1, d.field, d.message))
        for severity, over in self._over.items():
            if over:
                out.append(Diagnostic(self.path, 0, 0, "", f"{over} more {severity.value}s like "
                                      f"these not shown (the first {self.limit} are)", CODE,
                                      severity))
        return out


class ResponsesError(DpassessError):
    """The responses file has errors (unmatched rows, answers given twice, unknown options,
    scores that are no numbers): nothing is analysed. Carries every diagnostic (warnings too)."""

    exit_code = 1

    def __init__(self, diagnostics: list[Diagnostic], errors: int) -> None:
        self.diagnostics = diagnostics
        self.errors = errors
        super().__init__(f"{errors} error{'s' if errors != 1 else ''} in the responses file")

    def __str__(self) -> str:
        return "\n".join(str(d) for d in self.diagnostics)
