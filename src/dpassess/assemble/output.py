"""Assembled forms -> files: answer keys (CSV, JSON), printable HTML, every export, a summary.

Everything is built in memory first. `write` then checks every destination, writes each file
to a temporary file beside it and renames them all only when every one is complete: a failing
exporter or a failing write leaves the output folder as it was. No file holds a time stamp.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import lxml.html
from lxml.html import builder as E

from dpassess.assemble.forms import Form
from dpassess.assemble.problem import SCALE, Problem
from dpassess.assemble.solve import Selection
from dpassess.diagnostics import UsageError
from dpassess.export import EXPORTERS, MULTI, Collection
from dpassess.export.runner import FORMAT_DIRS
from dpassess.markup.markdown import to_html
from dpassess.markup.xmlchars import xml_safe
from dpassess.runtime.files import write_all

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


@dataclass
class Output:
    """Files to write (path relative to the output folder -> bytes) and warnings."""

    files: dict[str, bytes] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


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


def _fragments(markdown: str) -> list:
    """Markdown -> HTML through dpassess.markup.markdown, parsed into lxml nodes (never concatenated)."""
    parts = lxml.html.fragments_fromstring(to_html(markdown)) if markdown.strip() else []
    return list(parts)


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
    return lxml.html.tostring(doc, doctype="<!DOCTYPE html>", encoding="utf-8", pretty_print=True)


# --- summary ---------------------------------------------------------------------------------


def summary_data(pr: Problem, sel: Selection, forms: list[Form], seed: int) -> dict:
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


def summary_text(data: Mapping) -> str:
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


def render(pr: Problem, sel: Selection, forms: list[Form], seed: int) -> Output:
    out = Output()
    langs = list(pr.bank.languages)
    for form in forms:
        coll = collection(pr, form)
        d = form.id
        out.files[f"{d}/{d}-key.csv"] = key_csv(form)
        out.files[f"{d}/{d}-key.json"] = key_json(form, pr, seed)
        for lang in langs:
            out.files[f"{d}/{d}-{lang}.html"] = exam_html(form, coll, lang)
        for fmt in EXPORTERS:
            try:
                exp = EXPORTERS[fmt]
            except ModuleNotFoundError as exc:  # a format still being written
                out.warnings.append(f"{fmt}: not available ({exc}); form exports skipped")
                continue
            for lang in [*langs, *([MULTI] if exp.multi else [])]:
                result = exp.export(coll, lang)
                out.files[f"{d}/{FORMAT_DIRS.get(fmt, fmt)}/{d}-{lang}{exp.suffix}"] = result.data
                for w in result.warnings:
                    line = f"{form.id}: {w}"
                    if line not in out.warnings:
                        out.warnings.append(line)
    data = summary_data(pr, sel, forms, seed)
    out.files["summary.txt"] = summary_text(data).encode("utf-8")
    out.files["summary.json"] = (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()
    return out


def check_targets(paths: list[Path]) -> None:
    """Raise UsageError naming the path when a destination is a folder or has a non-folder in
    the way of its parent folders; nothing is created."""
    for path in paths:
        if path.is_dir():
            raise UsageError(f"{path}: is a directory; remove it or choose another --out")
        for folder in path.parents:
            if folder.exists():
                if not folder.is_dir():
                    raise UsageError(f"{folder}: not a directory; cannot write {path} inside it")
                break


def write(output: Output, out_dir: Path) -> list[Path]:
    """Write every file, or none: every destination is checked first, each file goes to a
    temporary file beside its destination, and all are renamed (in sorted order, the summary
    last) once every one is complete. On a failure every temporary file and every folder this
    call created are removed; files that were there before are left as they were.

    Raises UsageError naming the path that cannot be written (exit 2 in the CLI)."""
    rels = sorted(output.files, key=lambda rel: (rel.startswith("summary."), rel))
    paths = [out_dir / rel for rel in rels]
    check_targets(paths)
    write_all([(path, output.files[rel]) for rel, path in zip(rels, paths, strict=True)])
    return paths


def stale_forms(output: Output, out_dir: Path) -> list[str]:
    """Warnings for form folders an earlier run's summary.json in `out_dir` lists that this
    output does not write (they are left in place: they may hold files of the user's)."""
    try:
        earlier = json.loads((out_dir / "summary.json").read_bytes())
        ids = [f["id"] for f in earlier["forms"]]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    now = {rel.split("/", 1)[0] for rel in output.files}
    return [f"{out_dir / i}: a form of an earlier assembly ({earlier.get('blueprint')}), not of "
            "this one; left in place: remove it if it is no longer wanted"
            for i in ids if isinstance(i, str) and i not in now and (out_dir / i).is_dir()]
