"""Assembled forms -> the files of an assembly: answer keys (CSV, JSON), printable HTML, every
export of every form, a summary; written all together or not at all.

`layout` says what goes where: the exports (streamed by `dpassess.export.runner`, as `dpassess
export` writes them) and the other files' bytes. `write` checks every destination, then hands
everything to `write_exports` in one all-or-nothing write. No file holds a time stamp.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lxml.html
from lxml.html import builder as E

from dpassess.assemble.forms import Form
from dpassess.assemble.problem import SCALE, Problem
from dpassess.assemble.solve import Selection
from dpassess.diagnostics import Diagnostic, Severity, UsageError, dedupe
from dpassess.export import EXPORTERS, MULTI, Collection
from dpassess.export.runner import FORMAT_DIRS, ExportFile, file_name, write_exports
from dpassess.markup.markdown import to_html
from dpassess.markup.xmlchars import xml_safe

WORDS: dict[str, dict[str, str]] = {
    "en": {"form": "Form", "key": "Answer key", "items": "items", "points": "points",
           "question": "Question", "answer": "Answer", "item": "Item"},
    "id": {"form": "Paket", "key": "Kunci jawaban", "items": "soal", "points": "poin",
           "question": "Soal", "answer": "Jawaban", "item": "Butir"},
}

CSS = """
body { font-family: serif; max-width: 46em; margin: 2em auto; line-height: 1.4; }
header { border-bottom: 1px solid #000; margin-bottom: 1.5em; }
ol.items > li { margin-bottom: 1.2em; break-inside: avoid; }
ol.options { list-style-type: upper-alpha; }
section.answer-key { break-before: page; page-break-before: always; }
table { border-collapse: collapse; }
td, th { border: 1px solid #888; padding: 0.2em 0.6em; text-align: left; }
"""


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
    )


def key_rows(form: Form) -> list[dict[str, object]]:
    return [
        {
            "form": form.id,
            "position": fi.position,
            "item": fi.item.id,
            "key": fi.key_letters,
            "key_ids": fi.key_ids,
            "options": list(fi.item.option_ids),
            "points": fi.item.points,
        }
        for fi in form.items
    ]


def key_csv(form: Form) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["form", "position", "item", "key", "key_ids"])
    for r in key_rows(form):
        w.writerow([r["form"], r["position"], r["item"], ";".join(r["key"]),  # type: ignore[arg-type]
                    ";".join(r["key_ids"])])  # type: ignore[arg-type]
    return buf.getvalue().encode("utf-8")


def key_json(form: Form, pr: Problem, seed: int) -> bytes:
    data = {"form": form.id, "label": form.label, "blueprint": pr.blueprint.id, "seed": seed,
            "items": key_rows(form)}
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _fragments(markdown: str) -> list[Any]:
    """Markdown -> HTML through dpassess.markup.markdown, parsed into lxml nodes (never
    concatenated): elements, and the leading text if any (as lxml's builder takes them)."""
    if not markdown.strip():
        return []
    return [*lxml.html.fragments_fromstring(to_html(markdown))]


def exam_html(form: Form, coll: Collection, lang: str) -> bytes:
    words = WORDS.get(lang, WORDS["en"])
    title, _ = xml_safe(coll.title_in(lang))  # lxml refuses control characters in text
    points = sum(fi.item.points for fi in form.items)
    entries = []
    for fi in form.items:
        content = fi.item.text[lang]
        options = [E.LI(*_fragments(fi.item.option_text(lang, oid))) for oid in fi.item.option_ids]
        entries.append(E.LI(E.DIV(*_fragments(content.stem), E.CLASS("stem")),
                            E.OL(*options, E.CLASS("options"), type="A"),
                            id=f"q{fi.position}"))
    rows = [E.TR(E.TH(words["question"]), E.TH(words["answer"]), E.TH(words["item"]))]
    rows += [E.TR(E.TD(str(fi.position)), E.TD(", ".join(fi.key_letters)), E.TD(fi.item.id))
             for fi in form.items]
    doc = E.HTML(
        E.HEAD(E.META(charset="utf-8"), E.TITLE(f"{title}"), E.STYLE(CSS)),
        E.BODY(
            E.HEADER(E.H1(title), E.P(f"{words['form']} {form.label} · {len(form.items)} "
                                      f"{words['items']} · {points:g} {words['points']}")),
            E.OL(*entries, E.CLASS("items")),
            E.SECTION(E.H2(f"{words['key']}: {words['form']} {form.label}"), E.TABLE(*rows),
                      E.CLASS("answer-key")),
        ),
        lang=lang,
    )
    data: bytes = lxml.html.tostring(doc, doctype="<!DOCTYPE html>", encoding="utf-8",
                                     pretty_print=True)
    return data


# --- summary ---------------------------------------------------------------------------------


def summary_data(pr: Problem, sel: Selection, forms: list[Form], seed: int) -> dict[str, Any]:
    bp = pr.blueprint
    chosen = [set(s) for s in sel.forms]
    anchors = set(pr.anchors)
    means = [sum(pr.p[i] for i in s) / (SCALE * len(s)) if s else 0.0 for s in chosen]
    out_forms = []
    for form, s, mean in zip(forms, chosen, means, strict=True):
        out_forms.append({
            "id": form.id,
            "label": form.label,
            "items": [fi.item.id for fi in form.items],
            "count": len(form.items),
            "points": sum(fi.item.points for fi in form.items),
            "mean_p": round(mean, 4),
            "cells": {c.label: sum(1 for i in c.members if i in s) for c in pr.cells},
            "key_positions": form.key_counts(),
        })
    overlap = [[len((a & b) - anchors) if x != y else len(a)
                for y, b in enumerate(chosen)] for x, a in enumerate(chosen)]
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
        },
        "forms": out_forms,
        "overlap": overlap,
        "mean_p_spread": round(spread, 4),
        "mean_p_spread_bound": round(sel.spread_bound, 4) if sel.spread_bound is not None else None,
    }


def summary_text(data: Mapping[str, Any]) -> str:
    forms = data["forms"]
    asked = data["asked"]
    labels = [f["label"] for f in forms]
    rows: list[list[str]] = [["", *labels, "asked"]]
    rows.append(["items", *(str(f["count"]) for f in forms), asked["items"]])
    rows.append(["points", *(f"{f['points']:g}" for f in forms), asked["points"] or "-"])
    for label, want in asked["cells"].items():
        rows.append([f"cell {label}", *(str(f["cells"][label]) for f in forms), want])
    tol = asked["tolerance"]
    spread = f"spread {data['mean_p_spread']:.4f}"
    if tol is not None:
        spread += f" (tolerance {tol:g})"
    if data["mean_p_spread_bound"] is not None:
        spread += f" (best possible ≥ {data['mean_p_spread_bound']:.4f})"
    rows.append(["mean difficulty (p)", *(f"{f['mean_p']:.3f}" for f in forms), spread])
    width = max((len(f["key_positions"]) for f in forms), default=0)
    head = "/".join(list(forms[0]["key_positions"])[:width]) if forms else ""
    rows.append([f"key positions {head}",
                 *("/".join(str(v) for v in f["key_positions"].values()) for f in forms), ""])
    lines = [
        f"blueprint {data['blueprint']}: bank {data['bank']} ({data['usable_items']} usable "
        f"items), {len(forms)} form{'s' if len(forms) != 1 else ''}, seed {data['seed']}",
        f"solver: {data['status']}" + "".join(f"\n  note: {n}" for n in data["notes"]),
        "",
        *_table(rows),
    ]
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
    langs = list(pr.bank.languages)
    for form in forms:
        coll = collection(pr, form)
        d = out_dir / form.id
        files.append((d / f"{form.id}-key.csv", key_csv(form)))
        files.append((d / f"{form.id}-key.json", key_json(form, pr, seed)))
        files += [(d / f"{form.id}-{lang}.html", exam_html(form, coll, lang)) for lang in langs]
        for fmt, exp in EXPORTERS.items():
            for lang in [*langs, *([MULTI] if exp.multi else [])]:
                path = d / FORMAT_DIRS[fmt] / file_name(coll, fmt, lang)
                exports.append(ExportFile(coll, fmt, lang, path))
    data = summary_data(pr, sel, forms, seed)
    files.append((out_dir / "summary.json",
                  (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()))
    files.append((out_dir / "summary.txt", summary_text(data).encode("utf-8")))
    return Layout(out_dir, exports, files)


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
    return paths, dedupe(warnings)


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
