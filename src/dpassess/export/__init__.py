"""Exporters: each format is one module with one entry point, registered here by name.

An exporter turns a `Collection` (an ordered list of items with a name and title) into bytes in one
language (or `multi` where the format can carry several), plus a warning for everything it could
not carry: nothing is dropped silently.

    from dpassess.export import EXPORTERS, Collection
    result = EXPORTERS["qti21"].export(Collection.from_bank(bank), "en")
    result.data, result.warnings

Each entry point also streams: `export(collection, lang, out)` with `out` a binary file object
(seekable for QTI's zip) writes the same bytes there item by item, never holding the whole file,
and returns the warnings with empty `data`. If it raises, `out` holds part of a file: write to a
temporary file (as `dpassess.export.runner.write_targets` does) and discard it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO, Protocol

from dpassess.model import Bank, Item

MULTI = "multi"


@dataclass(frozen=True, slots=True)
class ExportWarning:
    """Something the format cannot carry, or that the target LMS would alter."""

    format: str
    item_id: str | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.item_id}: {self.field}" if self.item_id else self.field
        return f"{self.format}: {where}: {self.message}"


@dataclass(frozen=True, slots=True)
class ExportResult:
    data: bytes
    warnings: list[ExportWarning] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Collection:
    """What an exporter writes: items in delivery order, named and titled.

    `id` names the package/test/file (a slug); `category` is the bank id (Moodle's category root);
    `title` is by language. A bank is one collection; an assembled form is another (its items
    carry the form's option order and `shuffle=False`).
    """

    id: str
    title: Mapping[str, str]
    languages: tuple[str, ...]
    items: Sequence[Item]
    category: str
    default_language: str = ""
    paths: Mapping[str, str] = field(default_factory=dict)  # item id -> source file, for messages

    @classmethod
    def from_bank(cls, bank: Bank, *, include_retired: bool = False) -> Collection:
        entries = [
            e for e in bank.entries if include_retired or e.item.status.value != "retired"
        ]
        return cls(
            id=bank.id,
            title=dict(bank.config.title),
            languages=tuple(bank.config.languages),
            items=[e.item for e in entries],
            category=bank.id,
            default_language=bank.config.default_language,
            paths={e.item.id: e.path for e in entries},
        )

    def title_in(self, lang: str) -> str:
        if lang in self.title:
            return self.title[lang]
        return next(iter(self.title.values()), self.id)


class Exporter(Protocol):
    """The one entry point of a format module."""

    name: str  # registry key and --format value
    suffix: str  # file suffix of its output: ".zip", ".xml", ".txt"
    multi: bool  # whether `lang="multi"` (all languages in one file) is supported

    def export(self, collection: Collection, lang: str, out: BinaryIO | None = None
               ) -> ExportResult: ...


@dataclass(frozen=True, slots=True)
class FormatModule:
    name: str
    suffix: str
    multi: bool
    export: Callable[..., ExportResult]  # (collection, lang, out=None)


#: format name -> module path. Modules are imported on first use (the CLI lists names only).
_MODULES: dict[str, str] = {
    "qti21": "dpassess.export.qti.qti21",
    "moodle-xml": "dpassess.export.moodle.moodle_xml",
    "gift": "dpassess.export.moodle.gift",
}


class _Registry(Mapping[str, Exporter]):
    def __getitem__(self, name: str) -> Exporter:
        if name not in _MODULES:
            raise KeyError(name)
        mod = importlib.import_module(_MODULES[name])
        return FormatModule(name, mod.SUFFIX, mod.MULTI, mod.export)

    def __iter__(self):
        return iter(_MODULES)

    def __len__(self) -> int:
        return len(_MODULES)


EXPORTERS: Mapping[str, Exporter] = _Registry()


def check_lang(fmt: str, collection: Collection, lang: str, *, multi: bool) -> None:
    """Raise UsageError when `lang` is not one of the collection's languages (or multi)."""
    from dpassess.diagnostics import UsageError

    if lang == MULTI:
        if not multi:
            raise UsageError(f"--lang multi is not supported by {fmt}; give one of "
                             f"{', '.join(collection.languages)}")
        return
    if lang not in collection.languages:
        raise UsageError(
            f"--lang {lang}: the bank has {', '.join(collection.languages)}"
            + (" or multi" if multi else "")
        )


def export_all(
    collection: Collection, formats: Sequence[str], langs: Sequence[str]
) -> dict[tuple[str, str], ExportResult]:
    """Every (format, language) pair, in a fixed order."""
    out: dict[tuple[str, str], ExportResult] = {}
    for fmt in formats:
        exp = EXPORTERS[fmt]
        for lang in langs:
            if lang == MULTI and not exp.multi:
                continue
            out[(fmt, lang)] = exp.export(collection, lang)
    return out
