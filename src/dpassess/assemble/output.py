"""Assembled forms -> the files of an assembly: answer keys (CSV, JSON), the student and key
papers (HTML, PDF), every export of every form, a summary; written all together or not at all.

`layout` says what goes where: the exports (streamed by `dpassess.export.runner`, as `dpassess
export` writes them) and the other files' bytes. `write` checks every destination, then hands
everything to `write_exports` in one all-or-nothing write. No file holds a time stamp.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpassess.assemble.forms import Form, letter
from dpassess.assemble.keys import answer
from dpassess.assemble.paper import Paper
from dpassess.assemble.problem import SCALE, Problem
from dpassess.assemble.sheet import choice, key_hash
from dpassess.assemble.sheet import layout as sheet_layout
from dpassess.assemble.solve import Selection
from dpassess.diagnostics import Diagnostic, Severity, UsageError, dedupe
from dpassess.export import EXPORTERS, MULTI, PAPER_WRITERS, Collection
from dpassess.export.runner import FORMAT_DIRS, ExportFile, file_name, write_exports
from dpassess.runtime.extras import install_hint, installed


def collection(pr: Problem, form: Form) -> Collection:
    bank = pr.bank
    base = pr.blueprint.title or dict(bank.config.title)
    return Collection(
        id=form.id,
        title={lang: f"{base.get(lang) or next(iter(base.values()))} ({form.label})"
               for lang in bank.languages},
        languages=tuple(bank.languages),
        items=[fi.item for fi in form.items],
        category=form.id,
        default_language=bank.config.default_language,
        paths={fi.item.id: bank.path_of(fi.item.id) for fi in form.items},
        stimuli={fi.stimulus: bank.stimulus(fi.stimulus) for fi in form.items
                 if fi.stimulus is not None},
    )


def key_rows(form: Form, langs: Sequence[str] = ()) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for fi in form.questions:  # a description has no key
        a = answer(fi, langs)
        rows.append({
            "form": form.id,
            "position": fi.position,
            "item": fi.item.id,
            "type": fi.item.type.value,
            "key": a.letters,
            "key_ids": a.ids,
            "options": a.shown,
            "points": fi.item.points,
            "answer": a.words,
            **({"data": a.data} if a.data else {}),
        })
    return rows


#: What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: A plain number (`-1.5`): a spreadsheet reads it as that number, never as a formula.
_PLAIN_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


def csv_cell(value: object) -> str:
    """`value` as a CSV cell no spreadsheet evaluates: text starting with `=`, `+`, `-`, `@`, a
    tab or a carriage return gets a leading `'` (OWASP's advice), except a plain number such
    as `-1.5`, which a spreadsheet reads as the number it is."""
    text = str(value)
    if text.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def key_csv(form: Form, langs: Sequence[str]) -> bytes:
    """One row per item: the first five columns as before, then the type, the points and the
    key in words in the first language. Every cell goes through `csv_cell` (no cell starts a
    formula); the key JSON keeps the text as written."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["form", "position", "item", "key", "key_ids", "type", "points", "answer"])
    first = langs[0] if langs else "en"
    for fi in form.questions:  # a description has no key
        a = answer(fi, langs)
        w.writerow([csv_cell(c) for c in (
            form.id, fi.position, fi.item.id, ";".join(a.letters), ";".join(a.ids),
            fi.item.type.value, f"{fi.item.points:g}", a.words.get(first, ""))])
    return buf.getvalue().encode("utf-8")


def key_json(form: Form, pr: Problem, seed: int) -> bytes:
    data = {"form": form.id, "label": form.label, "blueprint": pr.blueprint.id, "seed": seed,
            "items": key_rows(form, pr.bank.languages)}
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


# --- summary ---------------------------------------------------------------------------------


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def summary_data(pr: Problem, sel: Selection, forms: list[Form], seed: int) -> dict[str, Any]:
    bp = pr.blueprint
    scale = bp.difficulty_scale
    chosen = [set(s) for s in sel.forms]
    anchors = set(pr.anchors)
    sizes = [sum(pr.counted[i] for i in s) for s in chosen]  # the items that count
    means = [sum(pr.p[i] for i in s) / (SCALE * k) if k else 0.0
             for s, k in zip(chosen, sizes, strict=True)]
    out_forms = []
    for form, s, mean, size in zip(forms, chosen, means, sizes, strict=True):
        items = [pr.items[i] for i in sorted(s) if pr.counts(i)]
        declared = [getattr(scale, (it.difficulty.value if it.difficulty else "medium"))
                    for it in items]
        observed = [pr.observed_p[it.id] for it in items if it.id in pr.observed_p]
        out_forms.append({
            "id": form.id,
            "label": form.label,
            "items": [fi.item.id for fi in form.items],
            "count": size,
            "points": sum(fi.item.points for fi in form.questions),
            "mean_p": round(mean, 4),
            "mean_p_declared": _mean(declared),
            "mean_p_observed": _mean(observed),
            "observed_items": len(observed),
            "cells": {c.label: sum(1 for i in c.members if i in s) for c in pr.cells},
            "key_positions": form.key_counts(),
            "key_sequence": "".join(letter(p) for p in form.key_sequence()),
            "key_patterns": form.key_patterns(),
            **_predicted(pr, items),
        })
    counted = [{i for i in s if pr.counts(i)} for s in chosen]  # as `max_overlap` counts
    overlap = [[len((a & b) - anchors) if x != y else len(a)
                for y, b in enumerate(counted)] for x, a in enumerate(counted)]
    spread = max(means) - min(means) if means else 0.0
    return {
        "blueprint": bp.id,
        "bank": pr.bank.id,
        "usable_items": len(pr.items),
        "seed": seed,
        "status": sel.status.value,
        "notes": sel.notes,
        "asked": {
            "items": str(bp.items),
            "points": str(bp.points) if bp.points is not None else None,
            "cells": {c.label: str(c.cell.count) for c in pr.cells},
            "max_overlap": bp.max_overlap,
            "tolerance": bp.balance.tolerance if bp.balance else None,
            "target": bp.balance.target if bp.balance else None,
        },
        "forms": out_forms,
        "overlap": overlap,
        "mean_p_spread": round(spread, 4),
        "mean_p_spread_bound": round(sel.spread_bound, 4) if sel.spread_bound is not None else None,
    }


def _predicted(pr: Problem, items: list[Any]) -> dict[str, Any]:
    """The form's score mean, SD and KR-20 predicted from the history, when every item has an
    observed p and r_pb: mean = sum w p; SD from `predicted_sd`; KR-20 = k / (k - 1)
    (1 - sum w^2 p (1 - p) / SD^2). {} otherwise."""
    if not items or not all(it.id in pr.observed_p and it.id in pr.observed_r for it in items):
        return {}
    ps = [(it.points, pr.observed_p[it.id], max(pr.observed_r[it.id], 0.0)) for it in items]
    mean = math.fsum(w * p for w, p, _ in ps)
    sd = predicted_sd([(w * math.sqrt(p * (1 - p)), r) for w, p, r in ps])
    k = len(ps)
    kr20 = (k / (k - 1) * (1 - math.fsum(w * w * p * (1 - p) for w, p, _ in ps) / sd ** 2)
            if k > 1 and sd > 0 else None)
    return {"predicted": {"mean": round(mean, 4), "sd": round(sd, 4),
                          "kr20": round(kr20, 4) if kr20 is not None else None}}


def predicted_sd(items: list[tuple[float, float]]) -> float:
    """The SD of the total score X of items with SDs s_i and corrected item-rest correlations
    r_i (the recorded r_pb), each taken to hold against the rest of this form: the X that solves
    var(X) = sum_i cov(x_i, X) = sum_i (s_i^2 + r_i s_i sd(R_i)), where the rest R_i = X - x_i has
    var(R_i) = var(X) - s_i^2 - 2 r_i s_i sd(R_i), so sd(R_i) = sqrt(r_i^2 s_i^2 + var(X) -
    s_i^2) - r_i s_i. Exact (the observed SD) for the items of the administration recorded;
    found by iterating from var(X) = sum s_i^2, which converges (the step is a contraction for
    r_i >= 0)."""
    base = math.fsum(s * s for s, _ in items)
    var = base
    for _ in range(200):
        nxt = base + math.fsum(r * s * (math.sqrt(r * r * s * s + var - s * s) - r * s)
                               for s, r in items)
        if abs(nxt - var) <= 1e-15 * nxt:
            var = nxt
            break
        var = nxt
    return math.sqrt(var)


def unequal_points(data: Mapping[str, Any], where: str) -> list[Diagnostic]:
    """A warning when the forms' point totals differ (parallel forms should not)."""
    totals = {f["label"]: f["points"] for f in data["forms"]}
    if len(set(totals.values())) <= 1:
        return []
    shown = ", ".join(f"{k} {v:g}" for k, v in totals.items())
    return [Diagnostic(where, 0, 0, "", f"the forms' point totals differ ({shown}); set "
                       "`points` or `equal_points: true` for parallel forms",
                       severity=Severity.warning)]


def summary_text(data: Mapping[str, Any]) -> str:
    forms = data["forms"]
    asked = data["asked"]
    labels = [f["label"] for f in forms]

    def p3(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f}"

    rows: list[list[str]] = [["", *labels, "asked"]]
    rows.append(["items", *(str(f["count"]) for f in forms), asked["items"]])
    rows.append(["points", *(f"{f['points']:g}" for f in forms), asked["points"] or "-"])
    cells = list(asked["cells"].items())
    for n, (label, want) in enumerate(cells):
        rows.append([f"cell {n + 1}", *(str(f["cells"][label]) for f in forms), want])
    target = asked.get("target")
    rows.append(["mean p (balanced)", *(p3(f["mean_p"]) for f in forms),
                 "-" if target is None else f"{target:g}"])
    rows.append(["mean p declared", *(p3(f.get("mean_p_declared")) for f in forms), ""])
    rows.append(["mean p observed", *(p3(f.get("mean_p_observed")) for f in forms), ""])
    if any("predicted" in f for f in forms):
        for key, name in (("mean", "predicted mean"), ("sd", "predicted SD"),
                          ("kr20", "predicted KR-20")):
            rows.append([name, *(p3(f["predicted"][key]) if "predicted" in f else "-"
                                 for f in forms), ""])
    # one column per letter that any form uses, so that every form's counts line up
    letters = sorted({x for f in forms for x in f["key_positions"]}, key=lambda x: (len(x), x))
    rows.append([f"keys at {''.join(letters)}" if letters else "keys at",
                 *("/".join(str(f["key_positions"].get(x, 0)) for x in letters) or "-"
                   for f in forms), ""])
    rows.append(["key patterns", *(str(len(f.get("key_patterns", []))) for f in forms), "0"])
    spread = f"mean p spread {data['mean_p_spread']:.4f}"
    if asked["tolerance"] is not None:
        spread += f" (tolerance {asked['tolerance']:g})"
    if data["mean_p_spread_bound"] is not None:
        spread += f" (best possible ≥ {data['mean_p_spread_bound']:.4f})"
    observed = ", ".join(f"{f['label']} {f.get('observed_items', 0)}/{f['count']}" for f in forms)
    lines = [
        f"blueprint {data['blueprint']}: bank {data['bank']} ({data['usable_items']} usable "
        f"items), {len(forms)} form{'s' if len(forms) != 1 else ''}, seed {data['seed']}",
        f"solver: {data['status']}" + "".join(f"\n  note: {n}" for n in data["notes"]),
        "",
        *_table(rows),
        "",
        *(f"cell {n + 1}: {label}" for n, (label, _) in enumerate(cells)),
        spread,
        f"items with an observed p: {observed}",
    ]
    for f in forms:
        lines += [f"form {f['label']} keys: {f.get('key_sequence', '')}",
                  *(f"  pattern: {x}" for x in f.get("key_patterns", []))]
    if len(forms) > 1:
        lines += ["", "shared items between forms (anchors not counted; diagonal: form size)"]
        lines += _table([["", *labels], *([lab, *map(str, row)]
                                          for lab, row in zip(labels, data["overlap"], strict=True))])
    return "\n".join(lines) + "\n"


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [r[0].ljust(widths[0])] + [v.rjust(w) for v, w in zip(r[1:], widths[1:], strict=True)]
        out.append("  ".join(cells).rstrip())
    return out


# --- everything -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """Every file of an assembly in its output folder: the exports (streamed by the export
    runner) and the other files with their bytes (keys, printable forms; the summary last)."""

    out_dir: Path
    exports: list[ExportFile]
    files: list[tuple[Path, bytes]]
    warnings: list[Diagnostic] = field(default_factory=list)  # the papers'

    def paths(self) -> list[Path]:
        """Every destination, sorted, the summary last."""
        paths = [e.path for e in self.exports] + [p for p, _ in self.files]
        return sorted(paths, key=lambda p: _rank(self.out_dir, p))


def _rank(out_dir: Path, path: Path) -> tuple[bool, str]:
    rel = path.relative_to(out_dir).as_posix()
    return rel.startswith("summary."), rel


def layout(pr: Problem, sel: Selection, forms: list[Form], seed: int, out_dir: Path) -> Layout:
    """Where each file of the assembly goes under `out_dir`; nothing is exported yet."""
    exports: list[ExportFile] = []
    files: list[tuple[Path, bytes]] = []
    warnings: list[Diagnostic] = []
    langs = list(pr.bank.languages)
    pdf = installed("typst")
    if not pdf and forms:
        warnings.append(Diagnostic(
            str(out_dir), 0, 0, "", "the printable forms are written as HTML only: PDF needs "
            f"the optional package typst, which is not installed ({install_hint('typst')})",
            severity=Severity.warning))
    colls = [collection(pr, form) for form in forms]
    keys = [key_csv(form, langs) for form in forms]
    printed = _all_papers(pr, forms, colls, [key_hash(k) for k in keys], out_dir, pdf)
    for form, coll, key_file, (paper_files, paper_warnings) in zip(
            forms, colls, keys, printed, strict=True):
        d = out_dir / form.id
        files.append((d / f"{form.id}-key.csv", key_file))
        files.append((d / f"{form.id}-key.json", key_json(form, pr, seed)))
        khash = key_hash(key_file)
        if any(choice(fi) for fi in form.items):
            digits = pr.blueprint.student_number_digits
            files.append((d / f"{form.id}-sheet.json", sheet_layout(form, digits).json(khash)))
        files += paper_files
        warnings += paper_warnings
        for fmt, exp in EXPORTERS.items():
            for lang in [*langs, *([MULTI] if exp.multi else [])]:
                path = d / FORMAT_DIRS[fmt] / file_name(coll, fmt, lang)
                exports.append(ExportFile(coll, fmt, lang, path))
    data = summary_data(pr, sel, forms, seed)
    files.append((out_dir / "summary.json",
                  (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()))
    files.append((out_dir / "summary.txt", summary_text(data).encode("utf-8")))
    return Layout(out_dir, exports, files, warnings)


#: Fewest items, over all forms, from which the papers are typeset in worker processes (one
#: form's papers a task); below it, or on one core, they are typeset here, one after another.
PAPERS_PARALLEL_MIN = 200

_PaperWork = tuple[Problem, list[Form], list[Collection], list[str], Path, bool]


def _all_papers(pr: Problem, forms: list[Form], colls: list[Collection], khashes: list[str],
                out_dir: Path, pdf: bool) -> list[tuple[list[tuple[Path, bytes]], list[Diagnostic]]]:
    """Each form's papers (`papers`) and their warnings, in form order, whatever the number of
    workers (so the same bytes and warnings). Workers are forked only while this process has
    not run Typst itself: Typst's thread pool does not survive a fork (a forked child that
    used it would wait for threads it does not have)."""
    from dpassess.assemble.paper import typst_started
    from dpassess.runtime import parallel

    size = sum(len(form.items) for form in forms)
    jobs = 1 if pdf and typst_started() else parallel.worker_count(
        size, PAPERS_PARALLEL_MIN, tasks=len(forms))
    work: _PaperWork = (pr, forms, colls, khashes, out_dir, pdf)
    return parallel.run(_form_papers, work, range(len(forms)), jobs)


def _form_papers(work: _PaperWork, n: int) -> tuple[list[tuple[Path, bytes]], list[Diagnostic]]:
    pr, forms, colls, khashes, out_dir, pdf = work
    warnings: list[Diagnostic] = []
    files = papers(pr, forms[n], colls[n], out_dir / forms[n].id, warnings, khashes[n], pdf=pdf)
    return files, warnings


def papers(pr: Problem, form: Form, coll: Collection, d: Path,
           warnings: list[Diagnostic], khash: str = "00000000", *,
           pdf: bool = True) -> list[tuple[Path, bytes]]:
    """The printable papers of one form: per language the student form (`<id>-<lang>`) and,
    in files of their own, the answer key (`<id>-key-<lang>`), each written by the paper
    writers (`PAPER_WRITERS`): HTML and (`pdf`) PDF."""
    writers = [w for name, w in PAPER_WRITERS.items() if pdf or name != "paper-pdf"]
    out = []
    for lang in pr.bank.languages:
        for key in (False, True):
            paper = Paper(form, lang, coll.title_in(lang), key, pr.bank,
                          duration=pr.blueprint.duration_minutes,
                          digits=pr.blueprint.student_number_digits, key_hash=khash)
            stem = f"{form.id}-key-{lang}" if key else f"{form.id}-{lang}"
            found: list[Diagnostic] = []
            for writer in writers:
                buf = io.BytesIO()
                found += writer.write_state(paper, buf)
                out.append((d / f"{stem}{writer.suffix}", buf.getvalue()))
            warnings += [w.at(str(d)) if not w.path else w for w in found]
    return out


def check_targets(paths: list[Path]) -> None:
    """Raise UsageError naming the path when a destination is a folder or has a non-folder in
    the way of its parent folders; nothing is created."""
    for path in paths:
        if path.is_dir():
            raise UsageError(f"{path}: is a directory; remove it or choose another output folder")
        for folder in path.parents:
            if folder.exists():
                if not folder.is_dir():
                    raise UsageError(f"{folder}: not a directory; cannot write {path} inside it")
                break


def write(out: Layout) -> tuple[list[Path], list[Diagnostic]]:
    """Write every file, or none, and return the paths (as `Layout.paths`) and the exports'
    warnings, each once (a warning about a whole form is placed at the form's folder).

    Every destination is checked first; then `write_exports` streams each export and writes
    each file to a temporary file beside its destination, and renames them all (the summary
    last) once every one is complete. On a failure every temporary file and every folder the
    write created are removed; files that were there before are left as they were.

    Raises UsageError naming the path that cannot be written."""
    paths = out.paths()
    check_targets(paths)
    files = sorted(out.files, key=lambda f: _rank(out.out_dir, f[0]))
    results = write_exports(out.exports, files)
    warnings: list[Diagnostic] = []
    for export, found in zip(out.exports, results, strict=True):
        form_dir = str(out.out_dir / export.collection.id)
        warnings += [d if d.path else d.at(form_dir) for d in found]
    return paths, dedupe([*out.warnings, *warnings])


def stale_forms(out: Layout) -> list[Diagnostic]:
    """Warnings for form folders an earlier run's summary.json in the output folder lists that
    this assembly does not write (they are left in place: they may hold files of the user's)."""
    try:
        earlier = json.loads((out.out_dir / "summary.json").read_bytes())
        ids = [f["id"] for f in earlier["forms"]]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    now = {p.relative_to(out.out_dir).parts[0] for p in out.paths()}
    return [Diagnostic(str(out.out_dir / i), 0, 0, "",
                       f"a form of an earlier assembly ({earlier.get('blueprint')}), not of "
                       "this one; left in place: remove it if it is no longer wanted",
                       severity=Severity.warning)
            for i in ids if isinstance(i, str) and i not in now and (out.out_dir / i).is_dir()]
