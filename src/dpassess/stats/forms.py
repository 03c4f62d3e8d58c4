"""Answer-key files of assembled forms (`<form>-key.json`) -> the item and option order of each
form, so that a response sheet by form, question number and letter maps back to item and option
ids (options are shuffled per form).

A key file is checked against the bank: every item must be in it with the same options, else the
letters would silently name other options.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpassess.diagnostics import Diagnostic, UsageError
from dpassess.model import Bank
from dpassess.stats.problems import CODE

KEY_SUFFIX = "-key.json"
#: Largest key file read: a form of 10,000 items is about 2 MB.
MAX_KEY_BYTES = 16 << 20


@dataclass(frozen=True)
class FormKey:
    """One assembled form: its id (`dp-quiz-a`), label (`A`) and items by position."""

    id: str
    label: str
    blueprint: str
    path: str
    #: position (1-based) -> (item id, option ids in the order the form prints them)
    positions: dict[int, tuple[str, tuple[str, ...]]]

    @property
    def items(self) -> frozenset[str]:
        return frozenset(item for item, _ in self.positions.values())


def letter_index(letters: str) -> int | None:
    """A -> 0, Z -> 25, AA -> 26 (the letters of an assembled form); None if not such letters."""
    if not letters or not letters.isascii() or not letters.isalpha() or not letters.isupper():
        return None
    n = 0
    for ch in letters:
        n = n * 26 + (ord(ch) - ord("A") + 1)
    return n - 1


def key_files(path: Path) -> list[Path]:
    """`path` if it is a key file; else the key files in folder `path` and two levels below
    (the output folder of `dpassess assemble` holds one folder per form)."""
    if path.is_file():
        return [path]
    found = [*path.glob(f"*{KEY_SUFFIX}"), *path.glob(f"*/*{KEY_SUFFIX}"),
             *path.glob(f"*/*/*{KEY_SUFFIX}")]
    return sorted(p for p in found if p.is_file())


def load_keys(path: Path, bank: Bank) -> tuple[list[FormKey], list[Diagnostic]]:
    """Every form key at `path` (a key file or a folder of assembled forms), checked against
    `bank`. Raises UsageError for a path without key files or a file that is no key file."""
    files = key_files(path)
    if not files:
        raise UsageError(f"{path}: no answer-key file (*{KEY_SUFFIX}) here or in the folders below")
    keys: list[FormKey] = []
    problems: list[Diagnostic] = []
    for f in files:
        key = _read(f)
        problems += _check(key, bank)
        keys.append(key)
    seen: dict[str, str] = {}
    for key in keys:
        if key.id in seen:
            raise UsageError(f"{key.path}: form {key.id!r} again (also in {seen[key.id]})")
        seen[key.id] = key.path
    return keys, problems


def _read(f: Path) -> FormKey:
    try:
        if f.stat().st_size > MAX_KEY_BYTES:
            raise UsageError(f"{f}: too large for an answer-key file")
        data: Any = json.loads(f.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{f}: cannot read: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{f}: not an answer-key file (invalid JSON: {exc})") from exc

    def bad(what: str) -> UsageError:
        return UsageError(f"{f}: not an answer-key file of dpassess assemble: {what}")

    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise bad("expected an object with 'form' and 'items'")
    form, label, blueprint = data.get("form"), data.get("label"), data.get("blueprint", "")
    if not isinstance(form, str) or not form or not isinstance(label, str):
        raise bad("'form' and 'label' must be text")
    positions: dict[int, tuple[str, tuple[str, ...]]] = {}
    for i, row in enumerate(data["items"]):
        if not isinstance(row, dict):
            raise bad(f"items[{i}] is not an object")
        pos, item, options = row.get("position"), row.get("item"), row.get("options")
        if not isinstance(pos, int) or isinstance(pos, bool) or pos < 1 or pos in positions:
            raise bad(f"items[{i}].position must be a new whole number from 1")
        if not isinstance(item, str) or not isinstance(options, list) or not all(
                isinstance(o, str) for o in options):
            raise bad(f"items[{i}] needs an 'item' id and a list of 'options'")
        positions[pos] = (item, tuple(options))
    return FormKey(form, label, str(blueprint), str(f), positions)


def _check(key: FormKey, bank: Bank) -> list[Diagnostic]:
    out = []
    for pos, (item_id, options) in sorted(key.positions.items()):
        field = f"items[{pos - 1}]"
        if item_id not in bank:
            out.append(Diagnostic(key.path, 0, 0, field,
                                  f"form {key.id}, question {pos}: item {item_id!r} is not in bank "
                                  f"{bank.config.id!r} (a key file of another bank?)", CODE))
            continue
        own = bank.get(item_id).choice_ids
        if own and sorted(own) != sorted(options):  # a choice item's options are lettered
            out.append(Diagnostic(key.path, 0, 0, field,
                                  f"form {key.id}, question {pos}: item {item_id!r} has options "
                                  f"{', '.join(own)} in the bank but {', '.join(options)} on the "
                                  "form (the item changed since the form was assembled)", CODE))
    return out
