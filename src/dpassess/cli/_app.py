"""The typer app, its help layout and the printing helpers shared by the command modules.

The command modules import nothing heavy at module level (the pipeline, lxml, ortools, the
language model are imported inside the commands), so `--version` and `--help` stay light.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperGroup

from dpassess.diagnostics import Diagnostic, DpassessError, visible

#: The commands in the order a user meets them (unknown ones follow, as registered).
ORDER = ("init", "check", "lint", "export", "build", "preview", "import", "assemble", "scan",
         "stats", "schema")

#: Exit codes of every command (also in `dpassess --help`).
EXIT_CODES = (
    "Exit codes: 0 success; 1 findings (invalid items, lint findings at the fail level, an "
    "infeasible blueprint); 2 usage errors (bad arguments, unreadable or unwritable paths, a "
    "bank that does not load); 70 internal error (a bug in dpassess: please report it); "
    "130 interrupted (Ctrl-C or SIGTERM; files already there are left intact)."
)


def _summary(cmd: Any) -> str:
    """A command's first sentence (its short help, else its help up to the first '. ' or blank
    line), whole: click would cut it at 45 characters."""
    if cmd.short_help:
        return str(cmd.short_help)
    text = " ".join((cmd.help or "").split("\n\n")[0].split())
    head, dot, _ = text.partition(". ")
    return head + ("." if dot else "")


class OrderedGroup(TyperGroup):
    """The root command: commands listed in `ORDER`, each with its whole first sentence."""

    def list_commands(self, ctx: Any) -> list[str]:
        names = list(super().list_commands(ctx))
        rank = {name: i for i, name in enumerate(ORDER)}
        return sorted(names, key=lambda n: (rank.get(n, len(ORDER)), names.index(n)))

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, _summary(cmd)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


app = typer.Typer(
    name="dpassess",
    cls=OrderedGroup,
    help="Assessment item banks: check, lint, export to QTI 2.1 / Moodle XML / GIFT / Canvas, "
    "assemble forms.\n\nStart with `dpassess init` (a new bank) or `dpassess import` (questions you "
    f"have).\n\n{EXIT_CODES}",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"max_content_width": 100},
)


def _version(value: bool) -> None:
    if value:
        from dpassess.cli import _version as version

        typer.echo(f"dpassess {version()}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """dpassess: item banks written once, checked like code, delivered to any LMS."""


def tidy_help(command: Any) -> None:
    """Help without Python types: an argument shows its name only; an option shows its
    metavar (choices as `a|b|c`), else a plain word (PATH, TEXT, N). Applied to every
    parameter of every command, including those of modules this one does not own; only
    click's public `metavar` is set, so it holds across typer releases."""
    commands = [command, *getattr(command, "commands", {}).values()]
    for cmd in commands:
        for param in cmd.params:
            if getattr(param, "param_type_name", "") == "argument":
                param.display_type_rich = lambda ctx: None  # typer 0.29: no type column
            elif param.metavar is None and not getattr(param, "is_flag", False):
                label = _plain_type(param)
                param.metavar = label
                param.display_type_rich = lambda ctx, label=label: label


def _plain_type(param: Any) -> str:
    desc = getattr(param, "type_descriptor", None)  # typer 0.29
    choices = desc.choices if desc is not None and desc.is_choice else getattr(
        getattr(param, "type", None), "choices", None)
    if choices:
        return "|".join(str(getattr(c, "value", c)) for c in choices)
    longest = max(param.opts, key=len) if param.opts else "VALUE"
    name = longest.lstrip("-").upper().replace("-", "_")
    shown = {"OUT": "PATH", "OUTPUT": "FILE", "CONFIG": "FILE", "ITEMS": "FOLDER",
             "SELECT": "RULES", "IGNORE": "RULES", "FAIL_ON": "error|warning",
             "BLUEPRINTS": "FOLDER", "CACHE_DIR": "FOLDER", "BANK": "FOLDER", "SEED": "N",
             "TIME_LIMIT": "SECONDS"}
    return shown.get(name, name)


def say(message: str) -> None:
    """`message` on stdout, each line with control and bidirectional characters escaped (as
    `err`): for lines that echo a path or a name the user or a file gave."""
    typer.echo("\n".join(visible(line) for line in message.split("\n")))


def err(message: str) -> None:
    """`message` on stderr, each of its lines with control and bidirectional characters
    escaped (a file name cannot recolour the terminal or reorder what is shown)."""
    typer.echo("\n".join(visible(line) for line in message.split("\n")), err=True)


def report_error(exc: DpassessError, fmt: str = "text") -> None:
    """Every diagnostic the error carries, one per line, then `error: <what>`; with
    `fmt="github"` each diagnostic is a workflow-command annotation (escaped)."""
    if exc.diagnostics:
        for d in exc.diagnostics:
            err(_github_line(d) if fmt == "github" else str(d))
        err(f"error: {exc.args[0]}")
    else:
        err(f"error: {exc}")


def _github_line(d: Diagnostic) -> str:
    from dpassess.lint.report import format_findings

    return format_findings([d], "github").rstrip("\n")


def report_warnings(warnings: Sequence[Diagnostic]) -> None:
    for d in warnings:
        err(f"warning: {d}")
