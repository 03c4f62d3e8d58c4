"""`dpassess schema`, `check` and `build`."""

from __future__ import annotations

from pathlib import Path

import typer

from dpassess.cli._app import app, err, report_error, report_warnings, say
from dpassess.diagnostics import BankLoadError

SCHEMAS = ("item", "bank", "blueprint")


@app.command()
def schema(
    kind: str = typer.Argument("item", help=f"Which file: {', '.join(SCHEMAS)}."),
) -> None:
    """Print the JSON Schema of an item file (or the bank file, or a blueprint)."""
    import json

    from dpassess.model.schemas import json_schema

    if kind not in SCHEMAS:
        raise typer.BadParameter(f"{kind!r} is not one of {', '.join(SCHEMAS)}", param_hint="KIND")
    typer.echo(json.dumps(json_schema(kind), indent=2, ensure_ascii=False, sort_keys=True))


@app.command()
def check(
    paths: list[Path] = typer.Argument(None, help="Bank folders, or folders holding banks (default: items)."),  # noqa: B008
) -> None:
    """Load and validate banks; report every error at once (exit 1 if any)."""
    from dpassess.bank.load import load_banks

    try:
        banks = load_banks(paths or [Path("items")])
    except BankLoadError as exc:
        report_error(exc)
        raise typer.Exit(1) from None
    n = sum(len(b) for b in banks)
    typer.echo(f"ok: {len(banks)} bank{'s' if len(banks) != 1 else ''}, {n} items")


@app.command()
def build(
    items: Path = typer.Option(Path("items"), help="Folder of banks."),  # noqa: B008
    out: Path = typer.Option(Path("exports"), help="Folder to write into."),  # noqa: B008
    blueprints: Path = typer.Option(  # noqa: B008
        None, help="Folder of blueprints to assemble (default: blueprints/ beside --items)."
    ),
    no_cache: bool = typer.Option(
        False, "--no-cache", help="Neither read nor write the cache (lint, exports, preview)."),
    cache_dir: Path = typer.Option(  # noqa: B008
        None, help="Folder of the cache (default: $DPASSESS_CACHE_DIR, else .dpassess_cache)."
    ),
    fail_on: str = typer.Option(
        None, "--fail-on", metavar="error|warning", show_default=False,
        help="Export nothing and exit 1 on lint findings at or above this severity "
        "(default: warning, or the configured fail-on).",
    ),
) -> None:
    """The main job: check and lint the banks, write every export and the sample forms.

    Outputs whose inputs did not change since the last build are left as they are (the cache
    holds a content key per file; --no-cache rebuilds everything).

    Exit codes: 0 built; 1 lint findings at the fail level (nothing written); 2 usage or
    load errors.
    """
    from dpassess.app.build import build as run_build
    from dpassess.cli.progress import progress

    with progress() as show:
        report = run_build(items, out, blueprints, cache_dir=cache_dir, use_cache=not no_cache,
                           fail_on=fail_on, progress=show)
    for line in report.lines:
        say(line)
    if report.cache_warning:
        err(f"warning: {report.cache_warning}")
    report_warnings(report.warnings)
    for note in report.notes:
        err(f"note: {note}")
    if report.exit_code:
        raise typer.Exit(report.exit_code)
