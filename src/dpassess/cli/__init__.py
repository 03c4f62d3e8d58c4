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
from pathlib import Path
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


#: The module of `dpassess.cli` that registers each command. `dpassess <command> ...` imports
#: that one alone: the others would only register commands this run does not use (the export
#: command's module lists the formats, the stats command's imports the file writer, and typer
#: builds a click command for each). No command, `--help` or an unknown name imports them all.
COMMAND_MODULES = {
    "init": "init", "check": "core", "lint": "lint", "export": "export", "build": "core",
    "preview": "preview", "import": "importers", "assemble": "assemble", "scan": "scan",
    "stats": "stats", "schema": "core",
}


def _registered_app(command: str | None = None) -> Any:
    """The typer app with `command` registered (each command module registers its own when
    imported; they import nothing heavy at module level), or every command when `command` is
    None or names none of them."""
    from importlib import import_module

    from dpassess.cli._app import app

    module = COMMAND_MODULES.get(command or "")
    for name in [module] if module else sorted(set(COMMAND_MODULES.values())):
        import_module(f"dpassess.cli.{name}")
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
    command = typer.main.get_command(_registered_app(args[0] if args else None))
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
    """The version, and the git commit it was installed or is run from where that is known:
    `0.2.0 (commit 1a2b3c4d5e6f)`."""
    from dpassess import __version__

    commit = _commit(__version__)
    return f"{__version__} (commit {commit[:12]})" if commit else __version__


def _head(dot_git: Path) -> str | None:
    """The commit HEAD names, read from the repository's files (a few small reads, no process):
    `.git` a folder or a worktree's `gitdir:` file, HEAD a commit id or a branch, the branch
    a loose ref or a line of `packed-refs`. None when anything is not as expected (git then
    answers)."""
    try:
        git = dot_git
        if dot_git.is_file():
            line = dot_git.read_text(encoding="utf-8").strip()
            if not line.startswith("gitdir:"):
                return None
            git = (dot_git.parent / line[7:].strip()).resolve()
        head = (git / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref:"):
            return head if _is_commit(head) else None
        ref = head[4:].strip()
        common = git
        if (git / "commondir").is_file():
            common = (git / (git / "commondir").read_text(encoding="utf-8").strip()).resolve()
        for folder in dict.fromkeys((git, common)):
            loose = folder / ref
            if loose.is_file():
                value = loose.read_text(encoding="utf-8").strip()
                return value if _is_commit(value) else None
        packed = common / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8").splitlines():
                value, _, name = line.partition(" ")
                if name == ref and _is_commit(value):
                    return value
    except (OSError, UnicodeDecodeError):
        return None
    return None


def _is_commit(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def _commit(version: str) -> str | None:
    """The commit id of this copy of dpassess, cheaply (`--version` stays light): pip records it
    for an install from git (`direct_url.json`, PEP 610: `vcs_info.commit_id`); a checkout (the
    package under `src/` beside `.git`, as `pip install -e .` runs it) asks git. Else None."""
    import json

    package = Path(__file__).resolve().parent.parent
    record = package.parent / f"dpassess-{version}.dist-info" / "direct_url.json"
    try:
        commit = json.loads(record.read_text(encoding="utf-8"))["vcs_info"]["commit_id"]
        return commit if isinstance(commit, str) else None
    except (OSError, ValueError, KeyError, TypeError):
        pass
    root = package.parent.parent
    if package.parent.name != "src" or not (root / ".git").exists():
        return None
    found = _head(root / ".git")
    if found:
        return found
    import subprocess

    try:
        done = subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=root,
                              capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout.strip()
    return out if done.returncode == 0 and out else None
