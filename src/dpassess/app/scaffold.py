"""A new bank folder -> `bank.yaml`, one example item and the JSON Schemas editors validate with.

`dpassess init` writes a bank a user can check, lint and export at once, in their own
repository: the `# yaml-language-server: $schema=` comment of each file points at the schemas
written into the bank's `schema/` folder (not at this project's docs/), so an editor with the
YAML language server completes and checks fields offline. Importers use `write_schemas` and
`item_header` for the banks they create.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from dpassess.diagnostics import UsageError
from dpassess.runtime.files import write_all

#: The schemas' folder inside a bank (its files are JSON: the loader reads only YAML).
SCHEMA_DIR = "schema"
KINDS = ("item", "bank", "blueprint")

#: The example item's texts, in the languages we have them in (others start from English).
_EXAMPLE: dict[str, dict[str, Any]] = {
    "en": {
        "title": "The middle value of a data set",
        "stem": "Which summary of a data set is the middle value once the values are sorted?",
        "options": {"median": "The median", "mean": "The mean", "mode": "The mode",
                    "range": "The range"},
        "feedback": {
            "median": "Correct: half of the values lie below the median and half above it.",
            "mean": "The mean is the sum of the values divided by their number; outliers move it.",
            "mode": "The mode is the value that occurs most often.",
            "range": "The range is the largest value minus the smallest.",
        },
        "explanation": "Sort the values: the median is the one in the middle (or the mean of "
        "the two middle values).",
        "bank": "My first bank",
    },
    "id": {
        "title": "Nilai tengah sekumpulan data",
        "stem": "Ukuran manakah yang merupakan nilai tengah data setelah nilainya diurutkan?",
        "options": {"median": "Median", "mean": "Rata-rata", "mode": "Modus",
                    "range": "Jangkauan"},
        "feedback": {
            "median": "Benar: separuh nilai berada di bawah median dan separuh di atasnya.",
            "mean": "Rata-rata adalah jumlah nilai dibagi banyaknya nilai; pencilan menggesernya.",
            "mode": "Modus adalah nilai yang paling sering muncul.",
            "range": "Jangkauan adalah nilai terbesar dikurangi nilai terkecil.",
        },
        "explanation": "Urutkan nilainya: median adalah nilai di tengah (atau rata-rata dua "
        "nilai tengah).",
        "bank": "Bank soal pertama saya",
    },
}

EXAMPLE_LANGUAGES = tuple(_EXAMPLE)


def schema_comment(kind: str, file: Path, bank: Path) -> str:
    """The editor comment for `file` (in `bank`), pointing at `bank/schema/<kind>.schema.json`
    by a relative path."""
    depth = len(file.parent.relative_to(bank).parts)
    rel = "/".join([".."] * depth + [SCHEMA_DIR, f"{kind}.schema.json"])
    return f"# yaml-language-server: $schema={rel}\n"


def item_header(bank: Path) -> str:
    """The first line of an item file written at the top of `bank`."""
    return schema_comment("item", bank / "x.yaml", bank)


def schema_files(bank: Path) -> list[tuple[Path, bytes]]:
    """The JSON Schemas of item, bank and blueprint files, as `bank/schema/<kind>.schema.json`
    (the same text as `dpassess schema <kind>`)."""
    from dpassess.model.schemas import json_schema

    return [
        (bank / SCHEMA_DIR / f"{kind}.schema.json",
         (json.dumps(json_schema(kind), indent=2, ensure_ascii=False, sort_keys=True) + "\n")
         .encode("utf-8"))
        for kind in KINDS
    ]


def write_schemas(bank: Path) -> list[Path]:
    """Write (or refresh) the bank's schema files, all or none; returns their paths."""
    files = schema_files(bank)
    write_all(files)
    return [p for p, _ in files]


def slug(name: str) -> str:
    """A bank id from a folder name: lower case, runs of other characters as one '-' (a name
    too short for an id gets a `bank-` prefix)."""
    ident = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return ident if len(ident) >= 2 else f"bank-{ident}".rstrip("-")


def init_bank(folder: Path, languages: list[str], *, bank_id: str | None = None,
              title: str | None = None) -> list[Path]:
    """Scaffold a bank in `folder` (created as needed): bank.yaml, one example item in every
    language of `languages` (the first is the default) and the schemas; all files or none.
    Returns the paths written. Raises UsageError when a bank is already there or a language
    is not a language code."""
    from dpassess.bank.load import BANK_FILE

    if (folder / BANK_FILE).exists():
        raise UsageError(f"{folder / BANK_FILE}: a bank is already there; nothing written")
    if not languages or len(set(languages)) != len(languages):
        raise UsageError(f"languages {', '.join(languages) or '(none)'}: give each language once")
    for lang in languages:
        if not re.fullmatch(r"[a-z]{2,3}(-[A-Za-z0-9]{2,8})?", lang):
            raise UsageError(f"language {lang!r}: expected a language code such as en, id or pt-BR")
    ident = bank_id or slug(folder.resolve().name)
    texts = {lang: _EXAMPLE.get(lang, _EXAMPLE["en"]) for lang in languages}
    bank_file = folder / BANK_FILE
    item_file = folder / "01-middle-value.yaml"
    bank_text = schema_comment("bank", bank_file, folder) + _bank_yaml(ident, title, languages, texts)
    item_text = schema_comment("item", item_file, folder) + _item_yaml(ident, texts)
    files = [(bank_file, bank_text.encode("utf-8")), (item_file, item_text.encode("utf-8")),
             *schema_files(folder)]
    write_all(files)
    return [p for p, _ in files]


def _q(text: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(text, ensure_ascii=False)


def _bank_yaml(ident: str, title: str | None, languages: list[str],
               texts: dict[str, dict[str, Any]]) -> str:
    lines = [
        "# The bank file: its id names the exports; every item has text in each language.",
        "schema: 1",
        f"id: {ident}",
        "title:",
        *(f"  {lang}: {_q(title or str(texts[lang]['bank']))}" for lang in languages),
        f"languages: [{', '.join(languages)}]",
        f"default_language: {languages[0]}",
        "# glossary: terms kept or rendered a fixed way in translations (docs/authoring.md)",
        "glossary: []",
    ]
    return "\n".join(lines) + "\n"


def _item_yaml(ident: str, texts: dict[str, dict[str, Any]]) -> str:
    first = next(iter(texts.values()))
    options = list(first["options"])
    lines = [
        "# One question per file; files load in name order (01-, 02-, ...).",
        "schema: 1",
        "id: middle-value",
        "type: single_choice",
        f"topic: {ident}/descriptive-statistics",
        "difficulty: easy",
        "points: 1",
        "# options are ids; the key is an option id, never a letter",
        f"options: [{', '.join(options)}]",
        f"key: {options[0]}",
        "text:",
    ]
    for lang, t in texts.items():
        lines += [f"  {lang}:", f"    title: {_q(str(t['title']))}", f"    stem: {_q(str(t['stem']))}",
                  "    options:"]
        lines += [f"      {k}: {_q(v)}" for k, v in t["options"].items()]
        lines += ["    feedback:"]
        lines += [f"      {k}: {_q(v)}" for k, v in t["feedback"].items()]
        lines += [f"    explanation: {_q(str(t['explanation']))}"]
    return "\n".join(lines) + "\n"
