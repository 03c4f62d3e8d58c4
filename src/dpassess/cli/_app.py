"""The typer app and the printing helpers shared by the command modules."""

from __future__ import annotations

from collections.abc import Sequence

import typer

from dpassess import __version__
from dpassess.diagnostics import Diagnostic, DpassessError

app = typer.Typer(
    name="dpassess",
    help="Assessment item banks: check, lint, export to QTI 2.1 / Moodle XML / GIFT, assemble forms.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"dpassess {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """dpassess: item banks written once, checked like code, delivered to any LMS."""


def err(message: str) -> None:
    typer.echo(message, err=True)


def report_error(exc: DpassessError) -> None:
    """Every diagnostic the error carries, one per line (`str(d)`), then `error: <what>`."""
    if exc.diagnostics:
        for d in exc.diagnostics:
            err(str(d))
        err(f"error: {exc.args[0]}")
    else:
        err(f"error: {exc}")


def report_warnings(warnings: Sequence[Diagnostic]) -> None:
    for d in warnings:
        err(f"warning: {d}")

