"""`dpassess stats`: classical item analysis of a responses file, as a table, JSON or HTML
(registered on import).

Exit codes: 0 the analysis was written (and, with --write, recorded in the bank; warnings go to
stderr); 1 the responses file has errors (rows that match no item or option, answers given twice,
bad scores: each printed with its line; nothing is written); 2 usage errors (bad arguments, a
missing, empty or unknown file, a bank that cannot be loaded, a responses file already
recorded).
"""

from __future__ import annotations

from pathlib import Path

import typer

from dpassess.cli._app import app, err, report_error
from dpassess.diagnostics import BankLoadError, UsageError
from dpassess.runtime.files import atomic_write


@app.command()
def stats(
    responses: Path = typer.Argument(  # noqa: B008
        ..., help="The responses file (CSV): generic, a Moodle Responses report download or a "
        "Canvas Student Analysis report.", show_default=False,
    ),
    bank_dir: Path = typer.Option(  # noqa: B008
        ..., "--bank", "-b", help="The bank folder the items come from.", show_default=False,
    ),
    form: str = typer.Option(
        None, "--form", help="A form's answer-key file (<form>-key.json) or a folder of "
        "assembled forms, to map question numbers and letters; or a form id or label, to "
        "analyse only that form's rows.", show_default=False,
    ),
    fmt: str = typer.Option("text", "--format", "-f", help="Report format: text, json, html, "
                            "moodle (the figures under the names of Moodle's Statistics report), "
                            "anates (the printable Indonesian report: a decision per item)."),
    too_hard: float = typer.Option(
        0.20, "--too-hard", help="Flag an item too hard below this p (0 to 1).", min=0.0, max=1.0,
    ),
    too_easy: float = typer.Option(
        0.90, "--too-easy", help="Flag an item too easy above this p (0 to 1).", min=0.0, max=1.0,
    ),
    out: Path = typer.Option(  # noqa: B008
        None, "--out", "-o", help="Write the report to this file (atomically) instead of stdout.",
    ),
    write: bool = typer.Option(
        False, "--write", help="Record the statistics in the bank (stats/<date>-<sha>.json; "
        "item files are not changed), for lint and assemble to use.",
    ),
    force: bool = typer.Option(
        False, "--force", help="With --write: record even figures that contradict the answer "
        "key on several items (by default refused: most likely the key of another form).",
    ),
) -> None:
    """Item analysis of one administration: difficulty, discrimination, distractors, reliability.

    Labels are in the bank's default language (Indonesian or English).
    """
    from dpassess.bank.load import load_bank
    from dpassess.stats import (
        FORMATS,
        ResponsesError,
        Thresholds,
        analyse_forms,
        read_responses,
        render_many,
    )
    from dpassess.stats.history import commit_records, prepare_records

    try:
        if fmt not in FORMATS:
            raise UsageError(f"--format {fmt}: choose one of {', '.join(FORMATS)}")
        bank = load_bank(bank_dir)
        keys: Path | None = None
        only: str | None = form
        if form is not None and Path(form).exists():
            keys, only = Path(form), None
        elif form is not None and (form.endswith(".json") or "/" in form):
            raise UsageError(f"--form {form}: no such answer-key file or folder")
        result = read_responses(responses, bank, keys=keys, form=only)
        analyses = analyse_forms(result, Thresholds(too_hard=too_hard, too_easy=too_easy))
        report = render_many(analyses, fmt, bank.config.default_language)
        if write and not force:
            for a in analyses:
                if a.misfit:
                    raise UsageError(
                        f"not recorded: the answer key does not fit {a.source.path} "
                        f"({len(a.misfit)} items with strongly negative discrimination: "
                        f"{', '.join(a.misfit[:8])}): most likely the key of another form; check "
                        "the key file, or record anyway with --write --force")
        records = prepare_records(analyses) if write else []
        if out is not None:
            atomic_write(out, report)
        else:
            typer.echo(report.decode("utf-8"), nl=False)
        commit_records(records)
    except BankLoadError as exc:
        report_error(exc)
        raise typer.Exit(2) from None
    except ResponsesError as exc:
        for d in exc.diagnostics:
            err(f"{d.severity.value}: {d}")
        err(f"error: {exc.args[0]}: nothing written")
        raise typer.Exit(1) from None
    except UsageError as exc:
        err(f"error: {exc}")
        raise typer.Exit(2) from None
    for d in analyses[0].warnings:
        err(f"warning: {d}")
    if out is not None:
        err(f"wrote {out}")
    for record in records:
        again = f" (replaces {', '.join(p.name for p in record.replaces)}: the same attempts, " \
            "downloaded again)" if record.replaces else ""
        err(f"recorded {record.target}{again}")
