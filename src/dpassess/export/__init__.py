"""Exporters: each format is one module whose `FORMAT` value (a `Format`) is listed by name in
`dpassess.export.formats`; `EXPORTERS` is that registry.

A format turns a `Collection` (an ordered list of items with a name and title) into one file in
one language (or `multi` where the format can carry several), plus a warning for everything it
could not carry: nothing is dropped silently.

    from dpassess.export import EXPORTERS, Collection
    result = EXPORTERS["qti21"].export(Collection.from_bank(bank), "en")
    result.data, result.warnings

A `Format` is in two parts. `fragment(state, item, context)` builds one item's part of the file
(a `Fragment`: its bytes and its warnings); `assemble(state, fragments, out)` writes the file to
`out` (header, footer, package, manifest), asking `fragments(item, context)` for each item's
part in the order it needs them; `start(collection, lang, options)` makes the state both share
for one file. The runner (`dpassess.export.runner`) owns everything else: it gives `assemble`
fragments from its cache where the item did not change and builds only the others, streams
the file to a temporary file, in worker processes, and renames it into place. A format never
caches, forks or writes files itself. `Format.export(collection, lang, out=None, **options)`
builds every fragment (no cache): the whole file's bytes, or written to `out` (a seekable
binary file for the zip formats; `data` is then empty).

Every format treats languages alike (`check_lang`, `exported_languages`): a language the
collection does not have is a `UsageError`; an item without text in the exported language is
left out of that file with a warning; in `multi` an item is written in the languages it has.
"""

from __future__ import annotations

import importlib
import io
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, Generic, Protocol, TypeVar, cast

from dpassess.diagnostics import Diagnostic, UsageError, warning
from dpassess.export.formats import FORMATS, PAPERS

if TYPE_CHECKING:  # the model is imported by the formats, not by the names (`--help`)
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
    #: The hash of what each item (by id) and each stimulus (`stimulus_sources`, by id) was read
    #: from, when it is as read (a bank's items, not an assembled form's): its file's content
    #: hash. The runner keys the item's fragments on it instead of hashing its model; an item
    #: without one is keyed on its model.
    sources: Mapping[str, bytes] = field(default_factory=dict)
    stimulus_sources: Mapping[str, bytes] = field(default_factory=dict)

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


#: What an item's fragment reads from the file besides the item, as the assembly says (plain
#: values only: Moodle XML's languages of the item and whether its id is repeated).
Context = tuple[str | bool | int | tuple[str, ...] | None, ...]


@dataclass(frozen=True, slots=True)
class Fragment:
    """One item's part of a file: its bytes (empty: the item is not written) and its warnings.

    `reusable` is False when the bytes read another file (an image the item embeds or packs,
    which can change with no change to the item): such a fragment is built every time. `files`
    are the package paths of the files it packed into the format's state (never stored: a
    fragment that packs files is not reusable)."""

    data: bytes
    warnings: list[Diagnostic]
    reusable: bool = True
    files: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Job:
    """One file to write: the state of a format that needs nothing else (`start=Job`)."""

    collection: Collection
    lang: str
    options: Mapping[str, str]


#: A fact the assembly asks of one item (`Fragments.fact`): a plain value.
Fact = bool | int | str | None


class Fragments(Protocol):
    """What a format's assembly asks for each item's fragment (from the runner's cache, or
    built by the format's `fragment`). The runner's also keeps facts (`fact`)."""

    def __call__(self, item: Item, context: Context = ()) -> Fragment: ...


def fact(fragments: Fragments, item: Item, name: str, compute: Callable[[], Fact]) -> Fact:
    """A fact about `item` that the file's own parts read (whether it has maths, ...):
    `compute()`, or the value it gave for the same item (model, stimulus and source path),
    name and file the last time, kept by the runner (`fragments.fact`, when the fragments are
    the runner's). A fact reads only the item (and its stimulus), and the file's format,
    language and options."""
    ask = getattr(fragments, "fact", None)
    return compute() if ask is None else cast(Fact, ask(item, name, compute))


class _Built:
    """Every fragment built (no cache)."""

    def __init__(self, build: Callable[[Any, Item, Context], Fragment], state: Any) -> None:
        self._build, self._state = build, state

    def __call__(self, item: Item, context: Context = ()) -> Fragment:
        return self._build(self._state, item, context)


S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class Format(Generic[S]):
    """An export format: what the registry lists for it.

    `name` is its `--format` value; its files go to `exports/<folder>/<collection id>-<lang>
    <suffix>`; `multi` says whether it writes every language in one file (`lang="multi"`);
    `options` are its own options, each with its values (the first is the default).
    `start(collection, lang, options)` makes one file's state; `fragment(state, item,
    context)` builds one item's fragment; `assemble(state, fragments, out)` writes the file to
    `out` and returns its warnings in order (see the module docstring).

    `glue(state, item, fragments)`, optional, is everything the file's own parts (all but the fragments:
    header, categories, the file's warnings) read of the item, as plain values (tuples,
    strings, numbers, None). A format that gives it lets the runner write a file in which
    only some items changed, and none in its `glue`, by copying the previous file around the
    changed items' fragments (built again with the contexts they had): the assembly is not
    run. Such a format's fragments are then all of the file's bytes that depend on an item
    beyond its `glue`, and `fragment` must work on a state fresh from `start`; `glue` may ask
    facts (`fact(fragments, ...)`) as the assembly does. `zipped` says
    the file is a zip that `dpassess.export.qti.package.ZipStream` writes (its fragments lie
    in stored entries: an entry that changed gets its new CRC and size)."""

    name: str
    folder: str
    suffix: str
    multi: bool
    start: Callable[[Collection, str, Mapping[str, str]], S]
    fragment: Callable[[S, Item, Context], Fragment]
    assemble: Callable[[S, Fragments, BinaryIO], list[Diagnostic]]
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    glue: Callable[[S, Item, Fragments], object] | None = None
    zipped: bool = False

    def file_name(self, collection: Collection, lang: str) -> str:
        """The name of the file of `collection` in `lang`."""
        return f"{collection.id}-{lang}{self.suffix}"

    def settings(self, options: Mapping[str, str]) -> dict[str, str]:
        """`options` with every option of the format (its default where not given), in the
        format's order; UsageError for an unknown option or value."""
        for name, value in options.items():
            if name not in self.options:
                raise UsageError(f"{self.name} has no option {name!r}"
                                 + (f" (it has {', '.join(self.options)})" if self.options
                                    else ""))
            if value not in self.options[name]:
                raise UsageError(f"{self.name}: {name} {value!r}: choose one of "
                                 f"{', '.join(self.options[name])}")
        return {name: options.get(name, values[0]) for name, values in self.options.items()}

    def write(self, collection: Collection, lang: str, out: BinaryIO,
              options: Mapping[str, str], fragments: Callable[[S], Fragments] | None = None
              ) -> list[Diagnostic]:
        """Write the file to `out` and return its warnings; `fragments(state)` gives the
        fragments (default: each built, no cache)."""
        check_lang(self.name, collection, lang, multi=self.multi)
        state = self.start(collection, lang, self.settings(options))
        return self.write_state(state, out, None if fragments is None else fragments(state))

    def write_state(self, state: S, out: BinaryIO, fragments: Fragments | None = None
                    ) -> list[Diagnostic]:
        """Write the file of `state` (made by `start`, or by the caller of a writer whose state
        is not made from a collection: the papers) to `out` and return its warnings;
        `fragments` gives the fragments (default: each built, no cache)."""
        return self.assemble(state, fragments if fragments is not None
                             else _Built(self.fragment, state), out)

    def export(self, collection: Collection, lang: str, out: BinaryIO | None = None,
               **options: str) -> ExportResult:
        """The file of `collection` in `lang`, every fragment built: its bytes, or written to
        `out` (then `data` is empty)."""
        if out is None:
            buf = io.BytesIO()
            warnings = self.write(collection, lang, buf, options)
            return ExportResult(buf.getvalue(), warnings)
        return ExportResult(b"", self.write(collection, lang, out, options))


#: What the registry gives: a format whatever its state.
Exporter = Format[Any]


class _Registry(Mapping[str, Exporter]):
    """A map of names to modules (`dpassess.export.formats`), each name's module imported on
    first use; its value is the module's `FORMAT`, or the one `module:VALUE` names."""

    def __init__(self, names: Mapping[str, str]) -> None:
        self._names = names

    def __getitem__(self, name: str) -> Exporter:
        if name not in self._names:
            raise KeyError(name)
        module, _, value = self._names[name].partition(":")
        fmt = getattr(importlib.import_module(module), value or "FORMAT")
        if not isinstance(fmt, Format) or fmt.name != name:
            raise TypeError(f"{self._names[name]} is not the Format named {name!r}")
        return fmt

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


EXPORTERS: Mapping[str, Exporter] = _Registry(FORMATS)
#: The printable papers' writers (`formats.PAPERS`): their state is a paper of an assembled
#: form, which `dpassess assemble` builds (`Format.write_state`); they are not exports.
PAPER_WRITERS: Mapping[str, Exporter] = _Registry(PAPERS)


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


def languages_of_items(fmt: str, collection: Collection, lang: str
                       ) -> list[tuple[tuple[str, ...], Sequence[Diagnostic]]]:
    """`exported_languages` of every item of the collection, in order (in one loop: a file's
    assembly asks it of every item, and most have the file's language)."""
    if lang == MULTI:
        return [exported_languages(fmt, collection, item, lang) for item in collection.items]
    one: tuple[tuple[str, ...], Sequence[Diagnostic]] = ((lang,), ())
    return [one if lang in item.text else exported_languages(fmt, collection, item, lang)
            for item in collection.items]


def nothing_to_export(collection: Collection, lang: str) -> UsageError:
    """The error for a file in `lang` that no item of the collection has text for."""
    return UsageError(f"{collection.id}: no item has {lang!r} text; nothing to export")
