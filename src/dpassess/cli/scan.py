"""`dpassess scan`: scanned answer sheets -> the responses CSV `dpassess stats` reads
(registered on import).

Beside `--out` it writes `<out>-review.html` (each open question with the crop of its row or
sheet) and `<out>-corrections.csv` (the same questions, a column for the teacher's decision);
the next run reads that file, applies every filled decision and rewrites it with what is still
open.

Exit codes: 0 every sheet and row decided; 1 something is still open (listed on stderr; the
responses CSV holds the decided rows only); 2 usage errors (a missing file or folder, a file
that is no PDF or image, no sheet layouts under --forms, the `scan` extra not installed).
"""

from __future__ import annotations

from pathlib import Path

import typer

from dpassess.cli._app import app, err
from dpassess.diagnostics import UsageError


@app.command()
def scan(
    scans: list[Path] = typer.Argument(  # noqa: B008
        ..., help="Scanned answer sheets: PDFs (every page) and images (PNG, JPEG, TIFF: every page).",
        show_default=False,
    ),
    forms: Path = typer.Option(  # noqa: B008
        ..., "--forms", help="The folder of the assembled forms (their <form>-sheet.json).",
        show_default=False,
    ),
    out: Path = typer.Option(  # noqa: B008
        ..., "--out", "-o", help="The responses CSV to write (person,form,item,response,language).",
        show_default=False,
    ),
    jobs: int = typer.Option(None, "--jobs", "-j", help="Worker processes (default: one per "
                             "core, at most 8).", show_default=False),
) -> None:
    """Read filled answer sheets into responses; list every doubtful mark for review."""
    from dpassess.cli.progress import progress
    from dpassess.runtime.files import write_all

    stem = out.with_suffix("")
    review = stem.with_name(stem.name + "-review.html")
    corrections = stem.with_name(stem.name + "-corrections.csv")
    try:
        from dpassess.scan import read_corrections
        from dpassess.scan import scan as run_scan

        fixes = read_corrections(corrections) if corrections.is_file() else {}
        if jobs is None:
            import os

            jobs = min(os.cpu_count() or 1, 8)
        with progress() as show:
            result = run_scan(scans, forms, fixes, jobs=jobs, show=show)
        kept = {k: v for k, v in fixes.items() if v[1]}
        write_all([(out, result.csv()), (review, result.review_html()),
                   (corrections, result.corrections_csv(kept))])
    except UsageError as exc:
        err(f"error: {exc}")
        raise typer.Exit(2) from None
    for o in result.open:
        err(f"open: {o.sheet}: {o.item}: {o.found}")
    err(f"read {result.pages} pages, {result.sheets} answer sheets, {len(result.rows)} "
        f"responses; {result.applied} corrections applied, {len(result.open)} open")
    err(f"wrote {out}, {review}, {corrections}")
    if result.open:
        err(f"to do: write the decisions in {corrections} and run dpassess scan again")
        raise typer.Exit(1)
