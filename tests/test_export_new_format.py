"""Adding an export format takes one module and one registry line (and its goldens), nothing
else: a tiny format made here (a module holding its `FORMAT`, registered with one line as
docs/architecture.md says) is written by `dpassess build` and `dpassess export` like the
others, its per-item fragments cached by the runner with no cache code of its own."""

from __future__ import annotations

import importlib
import shutil
import sys
import types
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO

import pytest
import yaml

from conftest import ROOT, dpassess
from dpassess import load_bank
from dpassess.app.build import build
from dpassess.diagnostics import Diagnostic
from dpassess.export import (
    EXPORTERS,
    Collection,
    Context,
    Format,
    Fragment,
    Fragments,
    Job,
    exported_languages,
    nothing_to_export,
)
from dpassess.export import formats as registry
from dpassess.model import Item

#: The items the format's builder was asked for, in order (to see what the runner rebuilt).
BUILT: list[str] = []


def _start(collection: Collection, lang: str, options: Mapping[str, str]) -> Job:
    return Job(collection, lang, options)


def _fragment(job: Job, item: Item, context: Context) -> Fragment:
    """One line per item: its id, type and points (a tiny answer sheet)."""
    BUILT.append(item.id)
    line = f"{item.id}\t{item.type.value}\t{item.points:g}"
    if job.options["case"] == "upper":
        line = line.upper()
    warnings = [] if item.points == 1 else [job.collection.warning(
        "tiny", item.id, "points", "tiny says every item is worth one point")]
    return Fragment(line.encode() + b"\n", warnings)


def _assemble(job: Job, fragments: Fragments, out: BinaryIO) -> list[Diagnostic]:
    notes: list[Diagnostic] = []
    lines = []
    for item in job.collection.items:
        langs, missing = exported_languages("tiny", job.collection, item, job.lang)
        notes += missing
        if langs:
            made = fragments(item)
            notes += made.warnings
            lines.append(made.data)
    if not lines:
        raise nothing_to_export(job.collection, job.lang)
    out.write(f"# {job.collection.id} ({job.lang})\n".encode())
    out.writelines(lines)
    return notes


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> str:
    """The format's module, and its one registry line."""
    module = types.ModuleType("tiny_format")
    module.FORMAT = Format(  # type: ignore[attr-defined]
        "tiny", folder="tiny", suffix=".tsv", multi=False, start=_start, fragment=_fragment,
        assemble=_assemble, options={"case": ("lower", "upper")})
    monkeypatch.setitem(sys.modules, "tiny_format", module)
    # `dpassess export --help` lists the formats registered when the CLI is first imported, in
    # this process: let that be the real list, not one with the test's format in it (the command
    # itself checks `-f` against the registry as it is when it runs)
    importlib.import_module("dpassess.cli.export")
    monkeypatch.setitem(registry.FORMATS, "tiny", "tiny_format")  # the registry line
    BUILT.clear()
    return "tiny"


def expected(bank: Path, lang: str) -> bytes:
    """The oracle: the file as read from the item files themselves (the bank's items in file
    order, retired ones left out)."""
    lines = [f"# {yaml.safe_load((bank / 'bank.yaml').read_text())['id']} ({lang})\n"]
    for path in sorted(bank.glob("*.yaml")):
        if path.name == "bank.yaml":
            continue
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if data.get("status") == "retired" or lang not in data["text"]:
            continue
        lines.append(f"{data['id']}\t{data['type']}\t{data.get('points', 1):g}\n")
    return "".join(lines).encode()


def test_build_writes_a_format_added_with_one_module_and_one_line(tiny: str, tmp_path: Path):
    shutil.copytree(ROOT / "items", tmp_path / "items")
    bank = tmp_path / "items" / "data-parallelism"
    (tmp_path / "no-blueprints").mkdir()
    out, cache = tmp_path / "exports", tmp_path / "cache"
    report = build(tmp_path / "items", out, tmp_path / "no-blueprints", cache_dir=cache)
    assert report.exit_code == 0, report.lines
    for lang in ("id", "en"):
        assert (out / "tiny" / f"data-parallelism-{lang}.tsv").read_bytes() == expected(bank, lang)
    items = len(expected(bank, "en").splitlines()) - 1
    assert len(BUILT) == 2 * items  # every item once per language
    # the other formats are there as before
    assert {p.parent.name for p in out.glob("*/*-en.*")} == {*(EXPORTERS[f].folder
                                                               for f in EXPORTERS)}

    # one item edited: the runner asks the format for that item's fragments alone
    BUILT.clear()
    edited = bank / "03-memory-limit.yaml"
    data = yaml.safe_load(edited.read_text(encoding="utf-8"))
    assert data["points"] == 1
    edited.write_text(edited.read_text(encoding="utf-8").replace("\npoints: 1\n",
                                                                 "\npoints: 7\n"))
    report = build(tmp_path / "items", out, tmp_path / "no-blueprints", cache_dir=cache)
    assert report.exit_code == 0, report.lines
    assert [data["id"], data["id"]] == BUILT
    for lang in ("id", "en"):
        assert (out / "tiny" / f"data-parallelism-{lang}.tsv").read_bytes() == expected(bank, lang)
    said = [w for w in report.warnings if w.code == "tiny"]
    assert [(w.item, w.path) for w in said] == [(data["id"], str(edited))] * len(said) and said


def test_export_writes_it_with_its_options(tiny: str, tmp_path: Path):
    bank = ROOT / "items" / "data-parallelism"
    r = dpassess("export", bank, "-f", "tiny", "-l", "en", "-o", tmp_path / "x.tsv")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "x.tsv").read_bytes() == expected(bank, "en")
    got = EXPORTERS["tiny"].export(Collection.from_bank(load_bank(bank)), "en", case="upper")
    head, _, rest = expected(bank, "en").partition(b"\n")
    assert got.data == head + b"\n" + rest.upper()



def format_rows() -> list[str]:
    """The docs' table of formats, as the registry says it."""
    rows = []
    for name, fmt in EXPORTERS.items():
        langs = "one file per language" + (", and `multi` (all in one)" if fmt.multi else "")
        bar = "\\|"  # a | inside a Markdown table cell
        options = ", ".join(f"`--{o} {bar.join(values)}`" for o, values in fmt.options.items())
        rows.append(f"| `{name}` | `exports/{fmt.folder}/<bank>-<lang>{fmt.suffix}` | {langs} | "
                    + (f"{options} |" if options else "|"))
    return rows


def test_the_docs_table_of_formats_is_the_registry():
    lines = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8").splitlines()
    at = lines.index("| `--format` | files | languages | options |") + 2
    end = next((n for n in range(at, len(lines)) if not lines[n].startswith("|")), len(lines))
    assert lines[at:end] == format_rows()
