"""A responses file -> `Responses`: its format told from its header, its rows streamed one at a
time, each resolved to item and option ids of the bank and checked.

Three layouts are read (see docs/stats.md): the generic long CSV `person,form,item,response[,score]`
(item ids or question numbers of an assembled form; option ids or the form's letters), Moodle's
quiz Responses report download, and Canvas's quiz Student Analysis report (`stats.lms`).
A row that cannot be matched is an error at its line; the file is analysed only without errors.
"""

from __future__ import annotations

import csv
import hashlib
import os
import zipfile
from collections.abc import Callable, Iterator
from datetime import date, datetime, time
from pathlib import Path
from typing import TextIO

from dpassess.diagnostics import UsageError
from dpassess.model import Bank
from dpassess.stats.context import Context, Rows
from dpassess.stats.forms import load_keys
from dpassess.stats.generic import read_generic
from dpassess.stats.lms import (
    is_canvas,
    is_moodle,
    is_moodle_grades,
    read_canvas,
    read_moodle,
    read_moodle_grades,
)
from dpassess.stats.problems import Problems, ResponsesError
from dpassess.stats.responses import Answer, Responses, Source
from dpassess.stats.wide import is_wide, read_wide

#: Longest field accepted (characters): a question text with its choices fits easily.
MAX_FIELD = 1 << 20

Reader = Callable[[tuple[int, list[str]], Rows, Context], Iterator[Answer]]
READERS: dict[str, Reader] = {"generic": read_generic, "moodle": read_moodle,
                              "canvas": read_canvas, "wide": read_wide,
                              "moodle-grades": read_moodle_grades}


def read_responses(
    path: str | os.PathLike[str],
    bank: Bank,
    *,
    keys: str | os.PathLike[str] | None = None,
    form: str | None = None,
) -> Responses:
    """Read and check a responses file against `bank`.

    `keys`: an answer-key file of an assembled form, or a folder of them (question numbers and
    letters are mapped through them). `form`: analyse only the rows of this form (an id or a
    label; default: every form; with a single key file: its form).

    Raises UsageError for a file that is missing, empty or of no known layout, and
    ResponsesError with every diagnostic when any row has an error. Warnings are in
    `responses.problems`.
    """
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"{p}: no such responses file")
    form_keys, key_problems = load_keys(Path(keys), bank) if keys is not None else ([], [])
    if form is None and len(form_keys) == 1:
        form = form_keys[0].id
    problems = Problems(str(p))
    for d in key_problems:
        problems.error(0, d.field, d.message, path=d.path)
    responses = Responses(Source(str(p), "", bank.config.id), problems, bank)
    ctx = Context(bank, problems, responses, form_keys, form)
    if ctx.only is not None and form_keys and ctx.only not in {k.id for k in form_keys}:
        raise UsageError(f"form {form!r} is none of the key files' forms "
                         f"({', '.join(k.id for k in form_keys)})")
    try:
        with open(p, encoding="utf-8-sig", newline="") as fh:
            rows = xlsx_records(p) if is_xlsx(p) else _records(fh, str(p))
            first = next(rows, None)
            if first is None:
                raise UsageError(f"{p}: the responses file is empty")
            fmt = sniff(first[1], bank)
            responses.source.format = fmt
            if fmt in ("moodle", "canvas") and (form_keys or form is not None):
                raise UsageError(f"{p}: a {fmt.capitalize()} report names its own questions, so "
                                 "it takes no key files and no form to pick (leave out --form: "
                                 "each quiz pasted into the file is analysed as a form of its "
                                 "own)")
            for answer in READERS[fmt](first, rows, ctx):
                responses.add(answer)
    except UnicodeDecodeError as exc:
        raise UsageError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start} of a block)") from exc
    except OSError as exc:
        raise UsageError(f"{p}: cannot read: {exc.strerror or exc}") from exc
    responses.source.sha256 = _sha256(p)
    responses.source.forms = tuple(sorted(responses.form_items))
    if responses.source.rows == 0:
        raise UsageError(f"{p}: no responses (the file has a header only)")
    if not responses.columns and not problems.errors:
        if form is not None and form_keys:
            raise UsageError(f"{p}: no responses of form {form!r}: the key file does not fit "
                             "this sheet (its rows are of another form; see the warnings): give "
                             "the key file of the sheet's form, or the folder of every form's key")
        raise UsageError(f"{p}: no responses of form {form!r} (see the warnings for the forms "
                         "the file has)" if form is not None else f"{p}: no responses to analyse")
    if not responses.columns:
        problems.summary(f"no row matches an item of bank {bank.config.id!r}: is this the "
                       "responses file of another bank or form?")
    responses.finish()
    if problems.errors:
        raise ResponsesError(problems.diagnostics(), problems.errors)
    return responses


def sniff(header: list[str], bank: Bank | None = None) -> str:
    """The layout a header row belongs to: generic, moodle, canvas or (given the bank, whose
    item ids may head a column) a wide sheet (UsageError if none)."""
    names = {h.strip().lower() for h in header}
    if is_canvas(header):
        return "canvas"
    if is_moodle_grades(header):
        return "moodle-grades"
    if is_moodle(header):
        return "moodle"
    if {"person", "item", "response"} <= names:
        return "generic"
    if bank is not None and is_wide(header, bank):
        return "wide"
    shown = ",".join(h.strip() for h in header[:6]) + ("..." if len(header) > 6 else "")
    raise UsageError(
        f"not a responses file dpassess reads (header: {shown}): expected the columns "
        "person,form,item,response[,score], a wide sheet (a person column and one column per "
        "question number), a Moodle Responses report download ('Response 1', ...) or a Canvas "
        "Student Analysis report ('<id>: <question>' columns)"
    )


#: Largest uncompressed size of a spreadsheet read (the sum of its parts).
MAX_XLSX_BYTES = 256 << 20


def is_xlsx(p: Path) -> bool:
    """An Excel workbook (a zip file: LMS downloads as .xlsx), told by its first bytes."""
    with open(p, "rb") as fh:
        return fh.read(4) == b"PK\x03\x04"


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.10g}"
    if isinstance(value, datetime | date | time):
        return value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()
    return str(value)


def xlsx_records(p: Path) -> Rows:
    """(row number, cells as text) of the first sheet of an Excel workbook; blank rows passed
    over. openpyxl is imported here only (reading CSV does not need it)."""
    try:
        with zipfile.ZipFile(p) as z:
            if sum(i.file_size for i in z.infolist()) > MAX_XLSX_BYTES:
                raise UsageError(f"{p}: the workbook unpacks to more than "
                                 f"{MAX_XLSX_BYTES >> 20} MB: save the sheet as CSV")
    except zipfile.BadZipFile as exc:
        raise UsageError(f"{p}: not an Excel workbook (.xlsx): {exc}") from exc
    import openpyxl  # an optional-looking but declared dependency: only spreadsheets need it

    try:
        book = openpyxl.load_workbook(p, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many kinds for a damaged file
        raise UsageError(f"{p}: not a readable Excel workbook (.xlsx): {exc}") from exc
    try:
        sheet = book.worksheets[0]
        for n, row in enumerate(sheet.iter_rows(values_only=True), start=1):
            cells = [_cell(v) for v in row]
            while cells and not cells[-1]:
                cells.pop()
            if cells:
                yield n, cells
    finally:
        book.close()


def _records(fh: TextIO, path: str) -> Rows:
    """(first line, fields) of each CSV record; blank lines are passed over."""
    csv.field_size_limit(MAX_FIELD)
    reader = csv.reader(fh)
    start = 1
    try:
        for row in reader:
            if row:
                yield start, row
            start = reader.line_num + 1
    except csv.Error as exc:
        raise UsageError(f"{path}:{start}: not valid CSV: {exc}") from exc


def _sha256(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


