"""An administration's analysis -> one record file in the bank (`stats/<date>-<sha12>.json`), and
the records of a bank -> each item's observed figures (p pooled over administrations, weighted by
n), which lint and assemble use.

A record is a sidecar: item files (and their comments) are never rewritten. One file per
administration, named by its date and the first 12 hex digits of the responses file's SHA-256,
so the same responses file is recorded once only, and two teachers recording different exams
never write the same file. Records are written whole (temporary file, then rename) after the
responses file was read without an error.

Imports only the standard library, the model, diagnostics and runtime.files: lint (beside this
package) and assemble read the history through `observed`.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpassess.bank.files import HISTORY_DIR as HISTORY_DIR
from dpassess.bank.files import record_files as record_files
from dpassess.diagnostics import Diagnostic, Severity, UsageError
from dpassess.model import Bank, Item
from dpassess.runtime.files import atomic_write

if TYPE_CHECKING:
    from dpassess.stats.analysis import Analysis

SCHEMA = 1
CODE = "stats-history"
#: Largest record read (a record of 10,000 items is about 3 MB).
MAX_RECORD_BYTES = 64 << 20


@dataclass(frozen=True, slots=True)
class ItemRecord:
    """One item's figures in one administration."""

    administration: str
    date: str
    n: int
    p: float
    d: float | None
    r_pb: float | None
    #: share of persons choosing each option (choice items only)
    options: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class Observed:
    """An item's figures over every recorded administration: p, D and r_pb weighted by n (D and
    r_pb over the administrations that have them), option shares weighted by n."""

    n: int
    p: float
    d: float | None
    r_pb: float | None
    options: Mapping[str, float]
    administrations: int
    last: str


def _slug(form: str) -> str:
    """A form's name as a part of a file name: letters and digits, the rest as '-'."""
    out = "".join(ch if ch.isascii() and ch.isalnum() else "-" for ch in form.lower()).strip("-")
    return out[:40] or hashlib.sha256(form.encode()).hexdigest()[:8]


def record_name(analysis: Analysis, when: date) -> str:
    form = f"-{_slug(analysis.form)}" if analysis.form else ""
    return f"{when.isoformat()}-{analysis.source.sha256[:12]}{form}.json"


def to_record(analysis: Analysis, when: date) -> dict[str, Any]:
    """The record of one administration (the JSON written to the bank)."""
    src = analysis.source
    items: dict[str, Any] = {}
    for s in analysis.items:
        items[s.item] = {
            "n": s.n, "p": s.p, "d": s.d, "r_pb": s.r_pb,
            "options": {o.option: o.share for o in s.options},
            "flags": list(s.flags),
        }
    for d in analysis.dif:  # read by the lint rule IA005 (stats.checks.translation_dif)
        items[d.item].setdefault("dif", []).append({
            "reference": d.reference, "focal": d.focal, "n_reference": d.n_reference,
            "n_focal": d.n_focal, "delta": d.delta, "se": d.se, "p_value": d.p_value,
            "category": d.category, "std_p_dif": d.std_p_dif})
    t = analysis.test
    admin: dict[str, Any] = {
        "id": record_name(analysis, when).removesuffix(".json"),
        "date": when.isoformat(),
        "responses": Path(src.path).name,
        "sha256": src.sha256,
        "format": src.format,
        "bank": src.bank,
        "forms": list(src.forms),
    }
    if analysis.form:
        admin["form"] = analysis.form
    admin["attempts"] = list(analysis.attempts)
    return {
        "schema": SCHEMA,
        "administration": admin,
        "test": {"n": t.n, "k": t.k, "mean": t.mean, "sd": t.sd, "kr20": t.kr20,
                 "alpha": t.alpha, "sem": t.sem},
        "items": items,
    }


@dataclass(frozen=True)
class Prepared:
    """A record ready to be written, and the records of the same administration it replaces
    (an earlier download of the same attempts)."""

    target: Path
    data: bytes
    replaces: tuple[Path, ...] = ()


def write_record(analysis: Analysis, when: date | None = None) -> Path:
    """Record `analysis` in its bank; the path written (see `prepare_records`)."""
    [prepared] = prepare_records([analysis], when)
    commit_records([prepared])
    return prepared.target


def commit_records(prepared: list[Prepared]) -> None:
    """Write each record whole, then remove the records it replaces."""
    for p in prepared:
        atomic_write(p.target, p.data)
    for p in prepared:
        for old in p.replaces:
            if old != p.target and old.is_file():
                old.unlink()


def prepare_record(analysis: Analysis, when: date | None = None) -> tuple[Path, bytes]:
    """Where `analysis` is to be recorded and the bytes (see `prepare_records`)."""
    [prepared] = prepare_records([analysis], when)
    return prepared.target, prepared.data


def _administrations(folder: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The `administration` object of each readable record in `folder`."""
    out = []
    for path in record_files(folder.parent):
        try:
            if path.stat().st_size > MAX_RECORD_BYTES:
                continue
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            continue
        admin = data.get("administration") if isinstance(data, dict) else None
        if isinstance(admin, dict):
            out.append((path, admin))
    return out


def prepare_records(analyses: list[Analysis], when: date | None = None) -> list[Prepared]:
    """Where each analysis of one file is to be recorded, the bytes, and the records it
    replaces, checked before anything is written.

    An administration is known by its attempts (hashed attempt keys: an LMS's user and start
    time, else the person and form): a record sharing attempts with a new one is an earlier
    download of the same administration, and the new record replaces it. UsageError if this
    responses file (and form) is already recorded, or the records folder is a link or not a
    folder (a record must land in the bank, not wherever a link points)."""
    when = when or datetime.now(UTC).date()
    out: list[Prepared] = []
    for analysis in analyses:
        folder = analysis.bank.root / HISTORY_DIR
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise UsageError(f"{folder}: not a folder of the bank (a link or a file): statistics "
                             "are recorded in a real folder inside the bank only")
        mine = set(analysis.attempts)
        replaces: list[Path] = []
        for old, admin in _administrations(folder) if folder.is_dir() else []:
            if admin.get("sha256") == analysis.source.sha256 and \
                    admin.get("form", "") == analysis.form:
                form = f" (form {analysis.form})" if analysis.form else ""
                raise UsageError(f"{analysis.source.path}{form}: this responses file is already "
                                 f"recorded in {old}: nothing written")
            theirs = admin.get("attempts")
            if isinstance(theirs, list) and mine & {a for a in theirs if isinstance(a, str)}:
                replaces.append(old)
        target = folder / record_name(analysis, when)
        data = json.dumps(to_record(analysis, when), ensure_ascii=False, indent=2,
                          allow_nan=False) + "\n"
        out.append(Prepared(target, data.encode("utf-8"), tuple(replaces)))
    return out


# --- reading ---------------------------------------------------------------------------------


def _number(value: object, low: float, high: float) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    v = float(value)
    return v if math.isfinite(v) and low <= v <= high else None


#: Largest whole number read from a record (n, the number of responses): more digits are read as
#: a float, which the checks then refuse, so that no huge integer is ever built.
MAX_N = 1_000_000_000
_INT_DIGITS = 18


def _int(text: str) -> int | float:
    return int(text) if len(text) <= _INT_DIGITS else float(text)  # float: inf past 1e308


def _read_record(path: Path) -> tuple[list[tuple[str, ItemRecord]], list[Diagnostic]]:
    text = ""

    def bad(fld: str, message: str, line: int = 0, key: str = ""
            ) -> tuple[list[tuple[str, ItemRecord]], list[Diagnostic]]:
        if key and not line:  # the line of the item's key, for the reader to find it
            at = text.find(json.dumps(key, ensure_ascii=False))
            line = text.count("\n", 0, at) + 1 if at >= 0 else 0
        return [], [Diagnostic(str(path), line, 0, fld, f"{message}: the record is not used",
                               CODE, Severity.error)]

    try:
        if path.stat().st_size > MAX_RECORD_BYTES:
            return bad("", "too large for a statistics record")
        text = path.read_text(encoding="utf-8")
        data: Any = json.loads(text, parse_int=_int, parse_constant=float)
    except OSError as exc:
        return bad("", f"cannot read: {exc.strerror or exc}")
    except json.JSONDecodeError as exc:
        return bad("", f"not a statistics record (invalid JSON: {exc})", exc.lineno)
    except (UnicodeDecodeError, RecursionError, ValueError) as exc:
        return bad("", f"not a statistics record (invalid JSON: {exc})")
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        return bad("schema", f"not a statistics record of schema {SCHEMA}")
    admin, items = data.get("administration"), data.get("items")
    if not isinstance(admin, dict) or not isinstance(items, dict):
        return bad("", "a record has 'administration' and 'items'")
    admin_id, when = admin.get("id"), admin.get("date")
    if not isinstance(admin_id, str) or not isinstance(when, str):
        return bad("administration", "'id' and 'date' must be text")
    out: list[tuple[str, ItemRecord]] = []
    for item_id, fig in items.items():
        fld = f"items.{item_id}"
        if not isinstance(fig, dict):
            return bad(fld, "not an object", key=item_id)
        n, p = fig.get("n"), _number(fig.get("p"), 0, 1)
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_N or p is None:
            return bad(fld, f"needs n (a whole number from 1 to {MAX_N:,}) and p (from 0 to 1)",
                       key=item_id)
        d, r = fig.get("d"), fig.get("r_pb")
        d_v, r_v = _number(d, -1, 1), _number(r, -1, 1)
        if (d is not None and d_v is None) or (r is not None and r_v is None):
            return bad(fld, "d and r_pb are numbers from -1 to 1, or null", key=item_id)
        options = fig.get("options", {})
        if not isinstance(options, dict) or any(
                not isinstance(k, str) or _number(v, 0, 1) is None for k, v in options.items()):
            return bad(f"{fld}.options", "option shares are numbers from 0 to 1", key=item_id)
        out.append((item_id, ItemRecord(admin_id, when, n, p, d_v, r_v,
                                        {k: float(v) for k, v in options.items()})))
    return out, []


def read_history(root: Path) -> tuple[dict[str, list[ItemRecord]], list[Diagnostic]]:
    """Every item's records (oldest first) from the bank at `root`, and the problems of records
    that cannot be used (each file is used whole or not at all)."""
    history: dict[str, list[ItemRecord]] = {}
    problems: list[Diagnostic] = []
    for path in record_files(root):
        rows, bad = _read_record(path)
        problems += bad
        for item_id, rec in rows:
            history.setdefault(item_id, []).append(rec)
    for records in history.values():
        records.sort(key=lambda r: (r.date, r.administration))
    return history, problems


def _weighted(pairs: list[tuple[float | None, int]]) -> float | None:
    have = [(v, n) for v, n in pairs if v is not None]
    total = sum(n for _, n in have)
    return math.fsum(v * n for v, n in have) / total if total else None


def pooled(records: list[ItemRecord]) -> Observed:
    """One item's figures over its records (see `Observed`)."""
    n = sum(r.n for r in records)
    p = _weighted([(r.p, r.n) for r in records])
    assert p is not None
    options: dict[str, float] = {}
    for oid in sorted({o for r in records for o in r.options}):
        share = _weighted([(r.options.get(oid), r.n) for r in records if oid in r.options])
        assert share is not None
        options[oid] = share
    return Observed(n, p, _weighted([(r.d, r.n) for r in records]),
                    _weighted([(r.r_pb, r.n) for r in records]), options, len(records),
                    records[-1].date)


def observed(bank: Bank) -> tuple[dict[str, Observed], list[Diagnostic]]:
    """The observed figures of each item of `bank` that has records (items no longer in the
    bank are passed over), and the problems of unusable records."""
    history, problems = read_history(bank.root)
    return {i: pooled(r) for i, r in history.items() if i in bank}, problems


def effective_p(item: Item, seen: Mapping[str, Observed]) -> float | None:
    """The p an assembler balances on: the author's `p_value` if the item file fixes one, else
    the observed p (weighted by n), else None (the blueprint's default for its difficulty)."""
    if item.p_value is not None:
        return item.p_value
    obs = seen.get(item.id)
    return obs.p if obs is not None else None

