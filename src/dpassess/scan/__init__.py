"""Scanned answer sheets -> the long responses CSV `dpassess stats` reads, with every doubt
listed for the teacher.

`scan(paths, forms_dir, corrections)` reads each page (PDF pages through pypdfium2, images
and every page of a multi-page TIFF through opencv) in the runtime's worker pool, and returns a `Scan`: the decided responses and
the open questions (a doubtful row, a page that is no sheet, an unreadable or unknown QR code, a
sheet printed for another key, a student number left blank, unreadable or given twice). A
corrections file (`sheet,item,found,correction`) settles them: the next run applies every filled
correction and lists what is still open. Needs the `scan` extra (opencv-python-headless,
pypdfium2); importing this package without it raises `MissingExtra`.
"""

from __future__ import annotations

import base64
import csv
import io
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dpassess.diagnostics import UsageError

__all__ = ["IMAGE_TYPES", "MissingExtra", "Open", "Scan", "scan"]

IMAGE_TYPES = (".png", ".jpg", ".jpeg", ".tif", ".tiff")
#: Image types that can hold several pages (a scanner's multi-page TIFF): every page is read.
TIFF_TYPES = (".tif", ".tiff")
#: Resolution PDF pages are rendered at.
PDF_DPI = 200
CORRECTION_COLUMNS = ("sheet", "item", "found", "correction")


class MissingExtra(UsageError):
    """The scan extra is not installed."""


def _need_extra() -> None:
    try:
        import cv2  # noqa: F401
        import pypdfium2  # noqa: F401
    except ImportError as exc:
        from dpassess.runtime.extras import install_hint

        raise MissingExtra(
            f"dpassess scan needs the 'scan' extra ({exc.name} is missing): "
            f"{install_hint('cv2')}") from exc


@dataclass(frozen=True)
class Task:
    path: str
    page: int  # 1-based
    pdf: bool

    @property
    def ref(self) -> str:
        return f"{self.path}:{self.page}"


@dataclass
class Open:
    """One question for the teacher: `item` is a question number, 'person' or 'sheet'."""

    sheet: str
    item: str
    found: str
    crop: bytes = b""


@dataclass
class Scan:
    #: person, form, item, response, language (the sheet's, "" when its QR code does not say)
    rows: list[tuple[str, str, str, str, str]] = field(default_factory=list)
    open: list[Open] = field(default_factory=list)
    applied: int = 0  # corrections applied
    pages: int = 0
    sheets: int = 0
    notes: list[str] = field(default_factory=list)

    def csv(self) -> bytes:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["person", "form", "item", "response", "language"])
        w.writerows(self.rows)
        return buf.getvalue().encode("utf-8")

    def corrections_csv(self, kept: dict[tuple[str, str], tuple[str, str]]) -> bytes:
        """The open questions (correction empty) after the corrections already made."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(CORRECTION_COLUMNS)
        for (sheet, item), (found, value) in sorted(kept.items()):
            w.writerow([sheet, item, found, value])
        done = set(kept)
        for o in self.open:
            if (o.sheet, o.item) not in done:
                w.writerow([o.sheet, o.item, o.found, ""])
        return buf.getvalue().encode("utf-8")

    def review_html(self) -> bytes:
        from lxml.html import builder as E
        from lxml.html import tostring

        rows = [E.TR(E.TH("sheet"), E.TH("item"), E.TH("found"), E.TH("scan"))]
        for o in self.open:
            img = (E.IMG(src="data:image/png;base64," + base64.b64encode(o.crop).decode(),
                         alt=o.found) if o.crop else "")
            rows.append(E.TR(E.TD(o.sheet), E.TD(o.item), E.TD(o.found), E.TD(img)))
        doc = E.HTML(E.HEAD(E.META(charset="utf-8"), E.TITLE("dpassess scan: to review"),
                            E.STYLE("body{font-family:sans-serif}td,th{border:1px solid #999;"
                                    "padding:4px;text-align:left;vertical-align:top}"
                                    "table{border-collapse:collapse}img{max-width:600px}")),
                     E.BODY(E.H1(f"{len(self.open)} open"),
                            E.P("Write each decision in the corrections file's last column "
                                "(letters such as B or A;C, - for no answer; a student "
                                "number; skip, keep or a form id for a sheet), then run "
                                "dpassess scan again."),
                            E.TABLE(*rows)))
        data: bytes = tostring(doc, doctype="<!DOCTYPE html>", encoding="utf-8",
                               pretty_print=True)
        return data


def read_corrections(path: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(sheet, item) -> (found, correction) of a corrections file (empty corrections too)."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None or [h.strip() for h in header] != list(CORRECTION_COLUMNS):
            raise UsageError(f"{path}:1: the header must be {','.join(CORRECTION_COLUMNS)}")
        for line, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(row) != 4:
                raise UsageError(f"{path}:{line}: {len(row)} fields, the header has 4")
            out[(row[0], row[1])] = (row[2], row[3].strip())
    return out


def tasks_of(paths: Sequence[Path]) -> list[Task]:
    import pypdfium2 as pdfium

    tasks: list[Task] = []
    for p in paths:
        if not p.is_file():
            raise UsageError(f"{p}: no such file")
        suffix = p.suffix.lower()
        if suffix == ".pdf":
            try:
                doc = pdfium.PdfDocument(str(p))
            except pdfium.PdfiumError as exc:
                raise UsageError(f"{p}: not a PDF that can be read ({exc})") from exc
            n = len(doc)
            doc.close()
            tasks += [Task(str(p), i + 1, True) for i in range(n)]
        elif suffix in TIFF_TYPES:  # a scanner's multi-page TIFF: every page
            tasks += [Task(str(p), i + 1, False) for i in range(_tiff_pages(p))]
        elif suffix in IMAGE_TYPES:
            tasks.append(Task(str(p), 1, False))
        else:
            raise UsageError(f"{p}: not a PDF or an image ({', '.join(IMAGE_TYPES)})")
    return tasks


def _tiff_pages(path: Path) -> int:
    """How many pages a TIFF has (1 when opencv cannot tell: reading it then says why)."""
    import cv2

    try:
        return max(int(cv2.imcount(str(path))), 1)
    except cv2.error:
        return 1


@dataclass(frozen=True)
class _Shared:
    sheets: dict[str, object]
    hints: dict[str, str]  # sheet ref -> form id (a correction of an unreadable QR code)


def _read(shared: _Shared, task: Task) -> object:
    import cv2
    import numpy as np
    import pypdfium2 as pdfium

    from dpassess.scan.read import PageRead, read_page

    if task.pdf:
        doc = pdfium.PdfDocument(task.path)
        try:
            bmp = doc[task.page - 1].render(scale=PDF_DPI / 72, grayscale=True)
            arr = bmp.to_numpy()
        finally:
            doc.close()
        img = np.ascontiguousarray(arr[:, :, 0] if arr.ndim == 3 else arr)
    else:
        read = None
        try:
            if task.path.lower().endswith(TIFF_TYPES):  # page `task.page` of a TIFF
                ok, pages = cv2.imreadmulti(task.path, task.page - 1, 1,
                                            flags=cv2.IMREAD_GRAYSCALE)
                read = pages[0] if ok and pages else None
            else:
                read = cv2.imread(task.path, cv2.IMREAD_GRAYSCALE)
        except cv2.error:
            pass
        if read is None:
            r = PageRead(task.path, task.page)
            r.problem = "not an image opencv can read"
            return r
        img = read
    return read_page(img, shared.sheets, task.path, task.page,  # type: ignore[arg-type]
                     shared.hints.get(task.ref))


def scan(paths: Sequence[Path], forms_dir: Path,
         corrections: dict[tuple[str, str], tuple[str, str]] | None = None, jobs: int = 1,
         show: Callable[[str], None] = lambda _: None) -> Scan:
    """Read every page of `paths` against the sheet layouts under `forms_dir`."""
    _need_extra()
    import cv2

    from dpassess.runtime.parallel import Pool
    from dpassess.scan.read import PageRead, load_sheet

    cv2.setNumThreads(1)
    fixes = corrections or {}
    if not forms_dir.is_dir():
        raise UsageError(f"{forms_dir}: no such folder (--forms: the assembled forms)")
    sheets = {}
    for p in sorted(forms_dir.rglob("*-sheet.json")):
        try:
            s = load_sheet(p)
        except ValueError as exc:
            raise UsageError(str(exc)) from exc
        sheets[s.form] = s
    if not sheets:
        raise UsageError(f"{forms_dir}: no <form>-sheet.json (assemble the forms with "
                         "dpassess assemble first)")
    tasks = tasks_of(paths)
    hints = {sheet: value for (sheet, item), (_, value) in fixes.items()
             if item == "sheet" and value in sheets}
    out = Scan(pages=len(tasks))
    reads: list[PageRead] = []
    with Pool(_read, _Shared(dict(sheets), hints), tasks, jobs) as pool:
        for n, r in enumerate(pool, start=1):
            show(f"scanning page {n}/{len(tasks)}")
            assert isinstance(r, PageRead)
            reads.append(r)
    _decide(out, reads, fixes)
    return out


def _fix(fixes: dict[tuple[str, str], tuple[str, str]], sheet: str, item: str) -> str:
    return fixes.get((sheet, item), ("", ""))[1]


def _decide(out: Scan, reads: Sequence[object], fixes: dict[tuple[str, str], tuple[str, str]]
            ) -> None:
    from dpassess.scan.read import PageRead

    people: dict[tuple[int, str], list[str]] = defaultdict(list)  # (page, person) -> sheets
    good: list[tuple[PageRead, str]] = []
    for r in reads:
        assert isinstance(r, PageRead)
        ref = f"{r.source}:{r.page}"
        sheet_fix = _fix(fixes, ref, "sheet")
        if sheet_fix == "skip":
            out.applied += 1
            continue
        if r.problem:
            hash_only = r.form and r.rows
            if hash_only and sheet_fix == "accept":
                out.applied += 1
            else:  # its rows wait for the teacher's `accept`
                out.open.append(Open(ref, "sheet", r.problem, r.crop))
                continue
        elif sheet_fix:
            out.applied += 1
        out.sheets += 1
        person = r.number
        if r.number_problem:
            fixed = _fix(fixes, ref, "person")
            if fixed == "keep":
                person = ref
                out.applied += 1
            elif fixed:
                person = fixed
                out.applied += 1
            else:
                person = ref
                out.open.append(Open(ref, "person", f"{r.number_problem} (read as {ref})",
                                     r.crop))
        people[(r.sheet_page, person)].append(ref)
        good.append((r, person))
    for (_, person), refs in people.items():
        if len(refs) > 1:  # one student, one form: the same number twice is a misread or a slip
            for ref in refs:
                if not _fix(fixes, ref, "person"):
                    out.open.append(Open(ref, "person", f"student number {person} is on "
                                         f"{len(refs)} sheets: {', '.join(refs)}"))
    for r, person in good:
        ref = f"{r.source}:{r.page}"
        for row in r.rows:
            response = ";".join(row.marked)
            if row.problem:
                fixed = _fix(fixes, ref, str(row.position))
                if not fixed:
                    out.open.append(Open(ref, str(row.position), row.problem, row.crop))
                    continue
                response = "" if fixed == "-" else ";".join(
                    x.strip().upper() for x in fixed.replace(",", ";").split(";") if x.strip())
                out.applied += 1
            out.rows.append((person, r.form, str(row.position), response, r.language))
    out.rows.sort(key=lambda x: (x[1], x[0], int(x[2])))
