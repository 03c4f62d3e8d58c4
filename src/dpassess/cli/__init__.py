"""The command line: a thin typer layer over the library. Only this package prints or exits.

Exit codes: 0 success; 1 findings (lint findings at or above the fail level, invalid items in
`check`, an infeasible blueprint); 2 usage errors (bad arguments, unreadable or unwritable paths,
a bank that cannot be loaded where a command needs it loaded); 70 an internal error (a bug:
the traceback is printed, then one line saying so); 130 interrupted (Ctrl-C or SIGTERM: the
line "interrupted, cleaning up" comes at once, temporary files are removed, earlier outputs
stay intact).
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from types import FrameType
from typing import Any

__all__ = ["EXIT_INTERNAL", "EXIT_INTERRUPTED", "app", "main"]

#: An unexpected exception (a bug), as sysexits' EX_SOFTWARE; 1 is reserved for findings.
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130


def _interrupted(signum: int, frame: FrameType | None) -> None:
    """Say so at once (clean-up may take a moment), then unwind as Ctrl-C does: every
    `finally` and every staged write removes its temporary files on the way out."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    clear = b"\r\x1b[2K" if os.isatty(2) else b""  # over a progress line, if one is drawn
    os.write(2, clear + b"interrupted, cleaning up\n")
    raise KeyboardInterrupt


def _registered_app() -> Any:
    """The typer app with every command registered (each command module registers its own
    when imported; they import nothing heavy at module level)."""
    from dpassess.cli import (  # noqa: F401
        assemble,
        core,
        export,
        importers,
        init,
        lint,
        scan,
        stats,
    )
    from dpassess.cli._app import app

    return app


def __getattr__(name: str) -> Any:
    if name == "app":
        return _registered_app()
    raise AttributeError(f"module 'dpassess.cli' has no attribute {name!r}")


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: library errors become one clear line and an exit code."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:  # the one answer that needs no command module at all
        print(f"dpassess {_version()}")
        return
    import typer.main

    from dpassess.cli._app import err, report_error, tidy_help
    from dpassess.diagnostics import DpassessError

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _interrupted)
    command = typer.main.get_command(_registered_app())
    tidy_help(command)
    try:
        command(args=args, prog_name="dpassess", standalone_mode=True)
    except SystemExit:
        raise
    except DpassessError as exc:
        report_error(exc)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err("interrupted")
        sys.exit(EXIT_INTERRUPTED)
    except Exception:
        traceback.print_exc()
        err(f"internal error: this is a bug in dpassess {_version()}; please report it with "
            "the traceback above")
        sys.exit(EXIT_INTERNAL)


def _version() -> str:
    from dpassess import __version__

    return __version__
