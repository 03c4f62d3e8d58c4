"""`dpassess assemble`: randomized exam forms from a blueprint (registered on import)."""

from __future__ import annotations

from pathlib import Path

import typer

from dpassess.cli._app import app, err, report_error, report_warnings, say


def _seed(value: int | None) -> int | None:
    """--seed checked by the blueprint's own rule (0..2^63-1)."""
    from dpassess.model.blueprint import check_seed

    try:
        return None if value is None else check_seed(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _time_limit(value: float | None) -> float | None:
    """--time-limit checked by the blueprint's own rule (finite, above 0, bounded)."""
    from dpassess.model.blueprint import check_time_limit

    try:
        return None if value is None else check_time_limit(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


@app.command()
def assemble(
    blueprint: Path = typer.Argument(..., help="The blueprint YAML file.", show_default=False),  # noqa: B008
    seed: int = typer.Option(
        None, "--seed", callback=_seed,
        help="Seed for every random choice, 0 to 2^63-1 (default: the blueprint's).",
    ),
    time_limit: float = typer.Option(
        None, "--time-limit", callback=_time_limit,
        help="Solver budget in deterministic seconds, at most 3600; the wall time is bounded "
        "by three times it plus 5 s (default: the blueprint's, 10).",
    ),
    out: Path = typer.Option(  # noqa: B008
        ..., "--out", "-o", help="Folder to write the forms into.", show_default=False
    ),
    no_cache: bool = typer.Option(
        False, "--no-cache", help="Neither read nor write the lint cache.",
    ),
    cache_dir: Path = typer.Option(  # noqa: B008
        None, "--cache-dir", help="Folder of the lint cache, shared with `dpassess lint` "
        "(default: $DPASSESS_CACHE_DIR, else .dpassess_cache).", show_default=False,
    ),
) -> None:
    """Assemble exam forms that meet a blueprint; write keys, exports, HTML and a summary.

    Exit 1 when no forms can meet the blueprint (with the reason), 2 for a bad blueprint or
    an output path that cannot be written (then nothing is written).
    """
    from dpassess.assemble import BlueprintError, Infeasible, Status, write_assembly
    from dpassess.assemble import assemble as run

    if not blueprint.is_file():
        err(f"error: {blueprint}: no such blueprint file")
        raise typer.Exit(2)
    from dpassess.cli.progress import progress
    from dpassess.runtime.cache import Cache
    from dpassess.runtime.cache import cache_dir as default_cache_dir

    cache = None if no_cache else Cache(default_cache_dir(cache_dir))
    try:
        with progress() as show:
            result = run(blueprint, seed=seed, time_limit=time_limit, progress=show, cache=cache)
    except BlueprintError as exc:
        report_error(exc)
        raise typer.Exit(2) from None
    except Infeasible as exc:
        err(f"error: {blueprint}: no forms meet the blueprint ({exc.status.value})")
        for line in exc.lines:
            err(line)
        if exc.status is Status.unknown:
            err("(--time-limit S overrides the blueprint's time_limit)")
        raise typer.Exit(1) from None
    with progress() as show:
        show("writing the forms")
        written, warnings = write_assembly(result, out)
    typer.echo(result.summary(), nl=False)
    say(f"solved in {result.selection.seconds:.2f} s; wrote {len(written)} files to {out}")
    report_warnings(warnings)
    if cache is not None and cache.notice:
        err(f"warning: {cache.notice}")
