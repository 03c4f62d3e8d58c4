"""`dpassess export`: one bank (or several) to one format, per language or all languages."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from dpassess.cli._app import app, report_warnings, say
from dpassess.diagnostics import Diagnostic, UsageError
from dpassess.export.formats import FORMATS

if TYPE_CHECKING:
    from dpassess.model import Bank

#: The export formats, from the registry's names (no format is imported for `--help`).
EXPORT_FORMATS = tuple(FORMATS)


@app.command()
def export(
    paths: list[Path] = typer.Argument(None, help="Bank folders (default: items)."),  # noqa: B008
    fmt: str = typer.Option(
        ..., "--format", "-f", metavar="|".join(EXPORT_FORMATS), help="Output format.",
        show_default=False,
    ),
    lang: str = typer.Option(
        None, "--lang", "-l", metavar="LANG",
        help="A language of the bank, or 'multi' (Moodle XML, GIFT: all languages in one file). "
        "Default: one file per language (and multi where the format supports it).",
    ),
    out: Path = typer.Option(  # noqa: B008
        None, "--out", "-o", metavar="PATH",
        help="Output file (with --lang and one bank) or folder (default: exports/<format>/).",
    ),
    maths: str = typer.Option(
        "mathml", "--maths", metavar="mathml|tex",
        help="QTI 2.1 only: formulas as MathML (the TeX kept with them), or as TeX between "
        "\\( \\) for players that run MathJax.",
    ),
) -> None:
    """Export banks to QTI 2.1 (zip), Moodle XML, GIFT or Canvas (QTI 1.2 zip). Warnings name what a
    format cannot carry."""
    from dpassess.bank.load import load_banks
    from dpassess.cli.progress import progress
    from dpassess.export import EXPORTERS
    from dpassess.runtime.files import refuse_inside

    if fmt not in EXPORTERS:
        raise UsageError(f"--format {fmt}: choose one of {', '.join(EXPORTERS)}")
    if maths not in ("mathml", "tex"):
        raise UsageError(f"--maths {maths}: choose mathml or tex")
    has_maths = "maths" in EXPORTERS[fmt].options
    if maths != "mathml" and not has_maths:
        raise UsageError(f"--maths {maths}: only QTI 2.1 writes MathML (Moodle XML and GIFT "
                         "always keep the TeX; Canvas writes its equation images)")
    options = {"maths": maths} if has_maths else {}
    banks = load_banks(paths or [Path("items")])
    single_file = out is not None and lang is not None and out.suffix != ""
    if single_file and len(banks) > 1:
        raise UsageError(f"--out {out}: several banks given; name a folder instead")
    if out is not None and lang is None and _looks_like_a_file(out):
        raise UsageError(
            f"--out {out}: several files will be written (one per language); name a folder, "
            "or give --lang for one file"
        )
    # no file is written into a bank this command reads (the default folder too)
    for bank in banks:
        for dest in _dests(bank, fmt, lang, out if single_file else None,
                           out if not single_file else None):
            refuse_inside(dest, [b.root for b in banks], "--out" if out is not None else "output")
    for bank in banks:
        with progress() as show:
            show(f"exporting {bank.id}")
            dests, warnings = _export(bank, fmt, lang, out if single_file else None,
                                      out if not single_file else None, options)
        report_warnings(warnings)
        for path in dests:
            say(f"wrote {path}")


def _export(bank: Bank, fmt: str, lang: str | None, file: Path | None, folder: Path | None,
            options: dict[str, str]) -> tuple[list[Path], list[Diagnostic]]:
    """Write the bank's files in `fmt` (one `file`, or one per language into `folder`, default
    exports/<format>/); returns their paths and the warnings."""
    from dpassess.app.export import write_bank_exports
    from dpassess.export import Collection
    from dpassess.export.runner import ExportFile

    collection = Collection.from_bank(bank)
    langs = _langs(bank, fmt, lang)
    dests = _dests(bank, fmt, lang, file, folder)
    exports = [ExportFile(collection, fmt, x, p, options)
               for x, p in zip(langs, dests, strict=True)]
    return dests, write_bank_exports(bank, exports)


def _langs(bank: Bank, fmt: str, lang: str | None) -> list[str]:
    from dpassess.export import EXPORTERS, MULTI

    return [lang] if lang else [*bank.languages, *([MULTI] if EXPORTERS[fmt].multi else [])]


def _dests(bank: Bank, fmt: str, lang: str | None, file: Path | None, folder: Path | None
           ) -> list[Path]:
    """The files `_export` writes: `file`, or one per language in `folder` (default
    exports/<format>/)."""
    from dpassess.export import EXPORTERS, Collection

    if file is not None:
        return [file]
    collection = Collection.from_bank(bank)
    exporter = EXPORTERS[fmt]
    target_dir = folder if folder is not None else Path("exports") / exporter.folder
    return [target_dir / exporter.file_name(collection, x) for x in _langs(bank, fmt, lang)]


def _looks_like_a_file(out: Path) -> bool:
    """A name that is not an existing folder and ends like a file (`quiz.txt`, `a.zip`)."""
    return not out.is_dir() and out.suffix != "" and out.suffix[1:].isalnum()
