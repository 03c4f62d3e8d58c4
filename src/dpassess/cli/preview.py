"""`dpassess preview`: the banks as a site to read in a browser (written, or served and rebuilt
on save).

Exit codes: 0 written (or served until Ctrl-C); 2 usage or load errors.
"""

from __future__ import annotations

from pathlib import Path

import typer

from dpassess.cli._app import app, err, report_error, report_warnings
from dpassess.diagnostics import BankLoadError, DpassessError


@app.command()
def preview(
    paths: list[Path] = typer.Argument(None, help="Bank folders, or folders holding banks (default: items)."),  # noqa: B008
    out: Path = typer.Option(Path("preview"), "--out", "-o", help="Folder to write the site into."),  # noqa: B008
    blueprints: Path = typer.Option(  # noqa: B008
        None, help="Folder of blueprints whose forms are shown (default: blueprints, if there).",
    ),
    serve: bool = typer.Option(
        False, "--serve", help="Serve the site on 127.0.0.1 and write it again on every save.",
    ),
    port: int = typer.Option(8000, help="Port for --serve (0: any free port)."),
    no_cache: bool = typer.Option(
        False, "--no-cache", help="Neither read nor write the cache (lint, preview pages)."),
) -> None:
    """Write a site that shows every item as students see it, in every language side by side.

    Open OUT/index.html in a browser (no server or network needed): the index lists each item
    with its type, topic, status, difficulty and lint findings, and filters them; each item's
    page shows its text with the maths rendered, the key (which can be hidden), its findings,
    its statistics history and what each export format loses; each blueprint's forms have a
    page too. With --serve the site is served on http://127.0.0.1:PORT/ and written again
    whenever a bank or blueprint file changes (Ctrl-C stops).
    """
    from dpassess.app.preview import PreviewReport
    from dpassess.app.preview import preview as run_preview
    from dpassess.app.preview import serve as run_serve
    from dpassess.runtime.cache import Cache
    from dpassess.runtime.cache import cache_dir as default_cache_dir

    banks = paths or [Path("items")]
    bp = blueprints if blueprints is not None else (Path("blueprints") if Path("blueprints").is_dir()
                                                    else None)
    cache = None if no_cache else Cache(default_cache_dir(None))

    def told(result: PreviewReport | DpassessError) -> None:
        if isinstance(result, DpassessError):
            report_error(result)
            return
        report_warnings(result.warnings)
        typer.echo(f"wrote {result.out / 'index.html'}: {result.items} items, "
                   f"{result.findings} lint findings, {len(result.written)} of {len(result.files)} "
                   "files changed")

    try:
        if serve:
            run_serve(banks, out, bp, port=port, cache=cache, on_build=told,
                      on_ready=lambda url: typer.echo(f"serving {url} (Ctrl-C stops)"))
        else:
            told(run_preview(banks, out, bp, cache=cache))
    except BankLoadError as exc:
        report_error(exc)
        raise typer.Exit(2) from None
    except OSError as exc:
        err(f"error: cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}")
        raise typer.Exit(2) from None
