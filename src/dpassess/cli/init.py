"""`dpassess init`: a new bank folder with an example item and the editor schemas."""

from __future__ import annotations

from pathlib import Path

import typer

from dpassess.cli._app import app, say


@app.command()
def init(
    folder: Path = typer.Argument(Path("items/my-bank"), help="The bank folder to create."),  # noqa: B008
    languages: str = typer.Option(
        "en", "--languages", metavar="LANGS",
        help="The bank's languages, comma-separated; the first is the default (e.g. id,en).",
    ),
    bank_id: str = typer.Option(
        None, "--id", metavar="ID", show_default=False,
        help="The bank's id, which names its exports (default: from the folder name).",
    ),
    title: str = typer.Option(
        None, "--title", metavar="TEXT", show_default=False,
        help="The bank's title (default: a placeholder to edit).",
    ),
) -> None:
    """Start a bank: bank.yaml, one example item and the JSON Schemas for editors.

    Each file's first line points the YAML language server (VS Code's YAML extension and
    others) at the schemas in FOLDER/schema/, so fields are completed and checked as you type.
    Then: dpassess check FOLDER; dpassess lint FOLDER; dpassess export -f moodle-xml FOLDER.
    """
    from dpassess.app.scaffold import EXAMPLE_LANGUAGES, init_bank

    langs = [x.strip() for x in languages.split(",") if x.strip()]
    for path in init_bank(folder, langs, bank_id=bank_id, title=title):
        say(f"wrote {path}")
    for lang in langs:
        if lang not in EXAMPLE_LANGUAGES:
            typer.echo(f"note: the example's {lang!r} text is English: translate it")
    say(f"next: dpassess check {folder} && dpassess lint {folder}")
