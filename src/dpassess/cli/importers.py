"""`dpassess import`: GIFT, Moodle XML, a QTI 2.1 package or a Canvas export into bank item
files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from dpassess.cli._app import app, err, report_warnings, say

if TYPE_CHECKING:
    from dpassess.importers.common import ImportResult

#: The input formats (the keys of dpassess.importers.READERS; a test keeps the two the same),
#: written out so that `--help` imports no importer.
IMPORT_FORMATS = ("gift", "moodle-xml", "qti21", "canvas")


def _words(specs: list[str]) -> dict[str, tuple[str, str]]:
    """`ru=Верно,Неверно` (repeatable) -> {"ru": ("Верно", "Неверно")}."""
    from dpassess.importers.common import lang_code

    out: dict[str, tuple[str, str]] = {}
    for spec in specs:
        lang, _, words = spec.partition("=")
        true, comma, false = words.partition(",")
        code = lang_code(lang.strip())
        if code is None or not comma or not true.strip() or not false.strip():
            raise typer.BadParameter(f"{spec!r}: give LANG=TRUE,FALSE (for example "
                                     "ru=Верно,Неверно)", param_hint="'--true-false-words'")
        out[code] = (true.strip(), false.strip())
    return out


def _bank_skeleton(bank: Path, result: ImportResult) -> list[tuple[Path, bytes]]:
    """bank.yaml (id and title from the folder's name, the items' languages) and the schemas
    its files point at, for a folder that has no bank.yaml yet."""
    from dpassess.app.scaffold import schema_comment, schema_files, slug

    # the languages every item has (a bank requires each of its languages in every item)
    langs = dict.fromkeys(result.items[0].languages)
    for item in result.items[1:]:
        langs = {lang: None for lang in langs if lang in item.languages}
    if not langs:
        langs = dict.fromkeys(result.items[0].languages)
    name = bank.resolve().name
    title = json.dumps(name, ensure_ascii=False)  # a JSON string is a YAML scalar
    text = "".join([
        schema_comment("bank", bank / "bank.yaml", bank),
        "# Written by `dpassess import`: check the title and the languages.\n",
        "schema: 1\n",
        f"id: {slug(name)}\n",
        "title:\n", *(f"  {lang}: {title}\n" for lang in langs),
        f"languages: [{', '.join(langs)}]\n",
        f"default_language: {next(iter(langs))}\n",
    ])
    return [(bank / "bank.yaml", text.encode("utf-8")), *schema_files(bank)]


@app.command("import")
def import_(
    file: Path = typer.Argument(  # noqa: B008
        ..., help="The file to import (.txt, .xml, a QTI .zip or a Canvas quiz export .zip)."),
    fmt: str = typer.Option(
        ..., "--from", help=f"Input format: {', '.join(IMPORT_FORMATS)}.", show_default=False
    ),
    bank: Path = typer.Option(  # noqa: B008
        Path("items/imported"), "--bank", help="Bank folder to write the item files into."
    ),
    lang: str = typer.Option(
        None, "--lang",
        help="Language of single-language input (Moodle multilang spans give their own; "
        "a Canvas export needs it).",
    ),
    true_false_words: list[str] = typer.Option(  # noqa: B008
        [], "--true-false-words", metavar="LANG=TRUE,FALSE",
        help="The words true/false questions show in a language without built-in ones "
        "(only id and en have them), e.g. ru=Верно,Неверно. Repeatable.",
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite existing item files."),
) -> None:
    """Import questions as item files (one YAML file per question, numbered in the file's
    order). Skipped questions are listed. Exit 1 when nothing was imported."""
    from dpassess.importers import WouldOverwrite, import_file, write_items
    from dpassess.importers.common import NoLanguage

    if fmt not in IMPORT_FORMATS:
        raise typer.BadParameter(f"{fmt!r} is not one of {', '.join(IMPORT_FORMATS)}",
                                 param_hint="'--from'")
    words = _words(true_false_words)
    try:
        result = import_file(file, fmt, lang=lang, true_false_words=words)
    except NoLanguage as exc:
        err(f"error: {exc} with --lang (for example --lang en)")
        raise typer.Exit(exc.exit_code) from None
    for d in result.skipped:
        err(f"skipped: {d}")
    report_warnings(result.warnings)
    if not result.items:
        typer.echo(result.summary())
        err(f"error: nothing was imported from {file}; no file written")
        raise typer.Exit(1)
    from dpassess.app.scaffold import item_header

    new_bank = not (bank / "bank.yaml").exists()
    extra = [(p, data) for p, data in _bank_skeleton(bank, result) if not p.exists()] \
        if new_bank else []
    own_schemas = new_bank or (bank / "schema" / "item.schema.json").exists()
    try:
        written = write_items(result, bank, overwrite=force,
                              header=item_header(bank) if own_schemas else None, extra=extra)
    except WouldOverwrite as exc:
        err(f"error: {exc}; use --force to overwrite")
        raise typer.Exit(exc.exit_code) from None
    for p in written:
        say(f"wrote {p}")
    typer.echo(result.summary())
    if new_bank:
        err(f"note: wrote {bank / 'bank.yaml'} (check its title and languages) and the "
            f"schemas in {bank / 'schema'}")
