"""The command line: a thin typer layer over the library. Only this package prints or exits.

Exit codes: 0 success; 1 findings (lint findings at or above the fail level, invalid items in
`check`, an infeasible blueprint); 2 usage errors (bad arguments, unreadable or unwritable paths,
a bank that cannot be loaded where a command needs it loaded).
"""

from __future__ import annotations

import sys

# Each module registers its commands on `app` when imported.
from dpassess.cli import assemble, core, export, importers, lint, stats  # noqa: F401
from dpassess.cli._app import app, err, report_error
from dpassess.diagnostics import DpassessError

__all__ = ["app", "main"]


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: library errors become one clear line and an exit code."""
    try:
        app(args=argv, prog_name="dpassess")
    except DpassessError as exc:
        report_error(exc)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:  # pragma: no cover
        err("interrupted")
        sys.exit(130)
