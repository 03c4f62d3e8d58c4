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
temporary file (as `dpassess.export.runner.write_exports` does) and discard it.

Every format treats languages alike (`check_lang`, `exported_languages`): a language the
collection does not have is a `UsageError`; an item without text in the exported language is
left out of that file with a warning; in `multi` an item is written in the languages it has.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO, Protocol

from dpassess.diagnostics import Diagnostic, UsageError, warning
from dpassess.model import Bank, Item, Stimulus

MULTI = "multi"


@dataclass(frozen=True, slots=True)
class ExportResult:
    """A file's bytes (empty when it was streamed) and a warning for each thing it does not
    carry as written: `code` is the format, `item` the item's id (None for the collection),
    `field` the field path, `path` the item's source file when the collection knows it."""

    data: bytes
    warnings: list[Diagnostic] = field(default_factory=list)


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
    stimuli: Mapping[str, Stimulus] = field(default_factory=dict)  # the items' stimuli, by id

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
            stimuli={s.stimulus.id: s.stimulus for s in bank.stimuli},
        )

    def title_in(self, lang: str) -> str:
        if lang in self.title:
            return self.title[lang]
        return next(iter(self.title.values()), self.id)

    def warning(self, fmt: str, item_id: str | None, field: str, message: str) -> Diagnostic:
        """A warning of format `fmt` about item `item_id` (None: the collection itself), placed
        in the item's source file when the collection knows it."""
        path = self.paths.get(item_id, "") if item_id is not None else ""
        return warning(fmt, message, path=path, field=field, item=item_id)


class Exporter(Protocol):
    """The one entry point of a format module."""

    @property
    def name(self) -> str: ...  # registry key and --format value

    @property
    def suffix(self) -> str: ...  # file suffix of its output: ".zip", ".xml", ".txt"

    @property
    def multi(self) -> bool: ...  # whether `lang="multi"` (all languages in one file) works

    def export(self, collection: Collection, lang: str, out: BinaryIO | None = None
               ) -> ExportResult: ...


class ExportFunction(Protocol):
    """A format module's `export(collection, lang, out=None)`."""

    def __call__(self, collection: Collection, lang: str, out: BinaryIO | None = None
                 ) -> ExportResult: ...


@dataclass(frozen=True, slots=True)
class FormatModule:
    name: str
    suffix: str
    multi: bool
    export: ExportFunction


#: format name -> module path. Modules are imported on first use (the CLI lists names only).
_MODULES: dict[str, str] = {
    "qti21": "dpassess.export.qti.qti21",
    "moodle-xml": "dpassess.export.moodle.moodle_xml",
    "gift": "dpassess.export.moodle.gift",
    "canvas": "dpassess.export.canvas.qti12",
}


class _Registry(Mapping[str, Exporter]):
    def __getitem__(self, name: str) -> Exporter:
        if name not in _MODULES:
            raise KeyError(name)
        mod = importlib.import_module(_MODULES[name])
        return FormatModule(name, mod.SUFFIX, mod.MULTI, mod.export)

    def __iter__(self) -> Iterator[str]:
        return iter(_MODULES)

    def __len__(self) -> int:
        return len(_MODULES)


EXPORTERS: Mapping[str, Exporter] = _Registry()


def check_lang(fmt: str, collection: Collection, lang: str, *, multi: bool) -> None:
    """Raise UsageError when `lang` is not one of the collection's languages (or multi, where
    the format supports it)."""
    if lang == MULTI:
        if not multi:
            raise UsageError(f"language {MULTI!r} (every language in one file) is not supported "
                             f"by {fmt}; give one of {', '.join(collection.languages)}")
        return
    if lang not in collection.languages:
        raise UsageError(
            f"language {lang!r}: the collection has {', '.join(collection.languages)}"
            + (" or multi" if multi else "")
        )


def exported_languages(fmt: str, collection: Collection, item: Item, lang: str
                       ) -> tuple[tuple[str, ...], list[Diagnostic]]:
    """The languages `item` is written in for a file in `lang`, and the warnings that says.

    One language: `(lang,)`, or `()` when the item has no text in it (the item is left out of
    that file, with a warning). `multi`: every language of the collection the item has; for a
    language it lacks a warning says which text its readers see instead (the default language's
    when the item has it, else the item's first)."""
    if lang != MULTI:
        if lang in item.text:
            return (lang,), []
        return (), [collection.warning(fmt, item.id, "text", f"no {lang!r} text; not exported")]
    have = [la for la in collection.languages if la in item.text]
    warnings = []
    for la in collection.languages:
        if la not in item.text:
            d = collection.default_language
            fallback = d if d in item.text else next(iter(item.text))
            warnings.append(collection.warning(
                fmt, item.id, f"text.{la}",
                f"no {la!r} text; the {fallback!r} text is written in its place"))
            if fallback not in have:
                have.append(fallback)
    return tuple(have), warnings


def nothing_to_export(collection: Collection, lang: str) -> UsageError:
    """The error for a file in `lang` that no item of the collection has text for."""
    return UsageError(f"{collection.id}: no item has {lang!r} text; nothing to export")
