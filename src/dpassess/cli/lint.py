"""`dpassess lint`: every finding of every bank at once, as text, JSON, SARIF or GitHub annotations.

Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage or load errors.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from dpassess.cli._app import app, err, report_error
from dpassess.diagnostics import BankLoadError, UsageError

#: The report formats (dpassess.lint.FORMATS; a test keeps the two the same).
LINT_FORMATS = ("text", "json", "sarif", "github")


@app.command()
def lint(
    paths: list[Path] = typer.Argument(None, help="Bank folders, or folders holding banks (default: items)."),  # noqa: B008
    fmt: str = typer.Option(
        "text", "--format", "-f", metavar="|".join(LINT_FORMATS), help="Output format.",
    ),
    select: list[str] = typer.Option(  # noqa: B008
        None, "--select", help="Rules to run: codes (WR001), families (WR) or names, comma-separated; "
        "replaces the configured selection.",
    ),
    ignore: list[str] = typer.Option(  # noqa: B008
        None, "--ignore", help="Rules to skip (codes, families or names), added to the configured ones.",
    ),
    fail_on: str = typer.Option(
        None, "--fail-on", help="Exit 1 on findings at or above this severity: error or warning "
        "(default: warning, or the configured fail-on).", show_default=False,
    ),
    config: Path = typer.Option(  # noqa: B008
        None, "--config", help="A pyproject.toml or dpassess.toml (default: the nearest one above "
        "the first path).",
    ),
    output: Path = typer.Option(  # noqa: B008
        None, "--output", "-o", help="Write the report to this file (atomically) instead of stdout.",
    ),
    no_cache: bool = typer.Option(
        False, "--no-cache", help="Neither read nor write the lint cache.",
    ),
    cache_dir: Path = typer.Option(  # noqa: B008
        None, "--cache-dir", help="Folder of the lint cache (default: $DPASSESS_CACHE_DIR, else "
        ".dpassess_cache).", show_default=False,
    ),
) -> None:
    """Check banks for item-writing flaws, translation problems, bank-wide cues and LMS traps.

    Exit codes: 0 no findings at or above the fail level; 1 findings at or above it; 2 usage
    errors (bad arguments, a bad config) or a bank that does not load (its errors are printed
    in the chosen --format when it is github, else as text on stderr).
    """
    from dpassess.app.lint import LintOptions, lint_report
    from dpassess.cli.progress import progress
    from dpassess.runtime.cache import Cache
    from dpassess.runtime.cache import cache_dir as default_cache_dir
    from dpassess.runtime.files import atomic_write

    @contextmanager
    def working() -> Iterator[None]:
        with progress() as show:
            show("linting")
            yield

    try:
        if fmt not in LINT_FORMATS:
            raise UsageError(f"--format {fmt}: choose one of {', '.join(LINT_FORMATS)}")
        options = LintOptions(fmt, tuple(select or ()), tuple(ignore or ()), fail_on, config)
        cache = None if no_cache else Cache(default_cache_dir(cache_dir))
        report = lint_report(paths or [Path("items")], options, cache, working=working)
        if cache is not None and cache.notice:
            err(f"warning: {cache.notice}")
        if output is not None:
            atomic_write(output, report.text.encode("utf-8"))
        else:
            typer.echo(report.text, nl=False)
    except (BankLoadError, UsageError) as exc:
        report_error(exc, fmt)
        raise typer.Exit(2) from None
    if report.failing:
        raise typer.Exit(1)
