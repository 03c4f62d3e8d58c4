"""`dpassess import`: GIFT, Moodle XML or a QTI 2.1 package into bank item files."""

from __future__ import annotations

from pathlib import Path

import typer

from dpassess.cli._app import app, err, report_warnings
from dpassess.importers import READERS, WouldOverwrite, import_file, write_items
from dpassess.importers.common import NoLanguage


@app.command("import")
def import_(
    file: Path = typer.Argument(..., help="The file to import (.txt, .xml, or a QTI .zip)."),  # noqa: B008
    fmt: str = typer.Option(
        ..., "--from", help=f"Input format: {', '.join(READERS)}.", show_default=False
    ),
    bank: Path = typer.Option(  # noqa: B008
        Path("items/imported"), "--bank", help="Bank folder to write the item files into."
    ),
    lang: str = typer.Option(
        None, "--lang",
        help="Language of single-language input (Moodle multilang spans give their own).",
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite existing item files."),
) -> None:
    """Import questions as item files (one YAML file per question). Skipped questions are listed."""
    if fmt not in READERS:
        raise typer.BadParameter(f"{fmt!r} is not one of {', '.join(READERS)}",
                                 param_hint="'--from'")
    try:
        result = import_file(file, fmt, lang=lang)
    except NoLanguage as exc:
        err(f"error: {exc}; give it with --lang (for example --lang en)")
        raise typer.Exit(exc.exit_code) from None
    for d in result.skipped:
        err(f"skipped: {d}")
    report_warnings(result.warnings)
    try:
        written = write_items(result, bank, overwrite=force)
    except WouldOverwrite as exc:
        err(f"error: {exc}; use --force to overwrite")
        raise typer.Exit(exc.exit_code) from None
    for p in written:
        typer.echo(f"wrote {p}")
    typer.echo(result.summary())
    if not (bank / "bank.yaml").exists() and written:
        err(f"note: {bank} has no bank.yaml yet; add one (see docs/authoring.md) to lint it")
