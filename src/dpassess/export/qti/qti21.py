"""A collection in one language -> an IMS content package (zip) of QTI 2.1 items and one test.

Shaped the way Canvas's QTI 2 importer reads packages (`dpassess.lms.canvas`; docs/export-qti.md
says why each choice was made) and valid against the QTI 2.1.2 and IMS CP 1.1 schemas. The parts:
`items` (an assessmentItem per item), `manifest` (imsmanifest.xml), `assessment_test` (the test),
`package` (the reproducible zip), `names` (identifiers and paths). The same collection gives a
byte-identical zip.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import partial
from typing import BinaryIO

from lxml import etree

from dpassess.diagnostics import Diagnostic
from dpassess.export import (
    Collection,
    Context,
    Format,
    Fragment,
    Fragments,
    fact,
    languages_of_items,
    nothing_to_export,
)
from dpassess.export.qti.assessment_test import assessment_test
from dpassess.export.qti.items import assessment_item
from dpassess.export.qti.manifest import item_resource, resource_stream, write_manifest
from dpassess.export.qti.names import FORMAT as NAME
from dpassess.export.qti.names import Q, item_identifier, item_path, test_path
from dpassess.export.qti.package import ZipStream
from dpassess.export.xmlfast import ChildStream, spliced
from dpassess.markup.fields import markdown_texts
from dpassess.markup.maths import MathsMode
from dpassess.markup.media import is_local_image, locate_image, read_media
from dpassess.markup.xmlchars import has_non_xml
from dpassess.model import Content, Item


class _Package:
    """One package being written: its collection, language and maths, the files its items
    pack (package path -> bytes) and, while the manifest is written, its stream."""

    def __init__(self, collection: Collection, lang: str, options: Mapping[str, str]) -> None:
        self.collection, self.lang = collection, lang
        self.maths: MathsMode = "tex" if options.get("maths") == "tex" else "mathml"
        self.images: dict[str, bytes] = {}
        self.manifest: ChildStream | None = None


#: The context of an item's resource in the manifest (then the package paths of its files).
RESOURCE = "resource"


def _fragment(job: _Package, item: Item, context: Context) -> Fragment:
    """The item's file (context `()`), or its resource in the manifest (context `(RESOURCE,
    shown)`, `shown` the paths of the files it names). An item file that names a local file
    packs it into `job.images` and is not reusable."""
    collection, lang = job.collection, job.lang
    if context:
        kind, shown = context
        assert kind == RESOURCE and isinstance(shown, tuple)
        if job.manifest is None:  # (a fresh state: `Format.glue`)
            job.manifest = resource_stream(collection, lang)
        item_resource(job.manifest.parent, collection, lang, item, shown)
        return Fragment(job.manifest.flushed(), [])
    held: list[bytes] = []
    root, notes = _item(collection, item, lang, job.maths, held)
    data = spliced(root, held, xml_declaration=True)
    if not _names_local_files(root):
        return Fragment(data, notes)
    shown_files = _pack_files(collection, item, lang, root, job.images, notes)
    return Fragment(data, notes, reusable=False, files=tuple(shown_files))


def _assemble(job: _Package, fragments: Fragments, out: BinaryIO) -> list[Diagnostic]:
    """The package for the collection in `lang` written to `out` (a seekable binary file), and
    a warning for anything it does not carry. Formulas are MathML (the TeX kept as its
    annotation), or with `maths="tex"` TeX between `\\(` `\\)` and `\\[` `\\]`, for players
    that run MathJax."""
    collection, lang = job.collection, job.lang
    items = collection.items
    notes: dict[int, Sequence[Diagnostic]] = {}  # item index -> its warnings, once known
    exported: list[Item] = []
    by_path: dict[str, int] = {}  # item file -> index of the item written there (the last one)
    for i, (item, (langs, missing)) in enumerate(zip(
            items, languages_of_items(NAME, collection, lang), strict=True)):
        if not langs:
            notes[i] = missing
            continue
        exported.append(item)
        by_path[item_path(item)] = i
    if not exported:
        raise nothing_to_export(collection, lang)

    # The manifest comes first in the package (entries are in sorted order) and lists each
    # item's files (images, linked files), so the items that may name one are built first, in
    # item order, to find them (the files are kept to be packed); so are items read with a
    # stimulus (it may name files too) and items whose file a later item replaces (same id),
    # for their warnings. Every other item is built once, when written.
    shown: dict[str, list[str]] = {}  # item id -> package paths of the files it names
    early: dict[int, Fragment] = {}  # item index -> its file, built to find its files
    for i, item in enumerate(items):
        if i in notes:
            continue
        if (by_path[item_path(item)] != i or item.stimulus is not None
                or fact(fragments, item, "files", partial(_may_name_files, item, lang))):
            early[i] = made = fragments(item)
            notes[i], shown[item.id] = made.warnings, list(made.files)
        else:
            shown.pop(item.id, None)  # as the last item of an id says: none

    def resource(stream: ChildStream, item: Item, files: tuple[str, ...]) -> bytes:
        job.manifest = stream
        return fragments(item, (RESOURCE, files)).data

    with ZipStream(out) as package:  # an error abandons the zip (no noise when collected)
        with package.open("imsmanifest.xml") as fh:
            write_manifest(fh, collection, lang, exported, shown, resource=resource)
        job.manifest = None
        for path in sorted([*by_path, *job.images]):
            if path in job.images:
                package.add(path, job.images[path])
                continue
            i = by_path[path]
            made = early.get(i) or fragments(items[i])
            notes.setdefault(i, made.warnings)
            package.add(path, made.data)
        package.add(test_path(collection), _xml(assessment_test(collection, lang, exported)))
    return [w for i in sorted(notes) for w in notes[i]]


def _item(collection: Collection, item: Item, lang: str, maths: MathsMode,
          held: list[bytes] | None = None) -> tuple[etree._Element, list[Diagnostic]]:
    """The item's assessmentItem in this collection's package (its identifier, its stimulus);
    `held` as `assessment_item` takes it."""
    stimulus = collection.stimuli.get(item.stimulus) if item.stimulus is not None else None
    return assessment_item(item, lang, collection.paths.get(item.id, ""),
                           identifier=item_identifier(item, lang, collection.id),
                           stimulus=stimulus, maths=maths, held=held)


#: The attributes through which an item's XHTML names a file: what it shows or links to.
_FILE_ATTRIBUTES = ((Q + "img", "src", "image"), (Q + "a", "href", "linked file"),
                    (Q + "object", "data", "object"))


def _may_name_files(item: Item, lang: str) -> bool:
    """False when no text of the item can link a file or show an image (True may be a false
    alarm): Markdown links and images, HTML `<a`, `<img`, `<object`, and characters XML cannot
    carry (removed before rendering, they can join the parts of one)."""
    content = item.text[lang]
    if isinstance(content, Content):  # the choice types, most items: their fields directly
        text = " ".join((content.stem, content.explanation or "", *content.options.values(),
                         *content.feedback.values()))
    else:
        text = " ".join(t for _, t in markdown_texts(content))
    return ("![" in text or "](" in text or "]:" in text
            or ("<" in text and _FILE_TAG.search(text) is not None) or has_non_xml(text))


#: What `may_show_images` looks for, and links: one scan of the texts joined.
_FILE_TAG = re.compile(r"<(?:img|object|a[\s>/])", re.IGNORECASE)


def _names_local_files(root: etree._Element) -> bool:
    """Whether `root` names a local file: what `_pack_files` packs or warns about."""
    for el in root.iter(*(tag for tag, _, _ in _FILE_ATTRIBUTES)):
        attr = next(a for tag, a, _ in _FILE_ATTRIBUTES if tag == el.tag)
        ref = el.get(attr, "")
        if ref and is_local_image(ref):
            return True
    return False


def _pack_files(collection: Collection, item: Item, lang: str, root: etree._Element,
                files: dict[str, bytes], warnings: list[Diagnostic]) -> list[str]:
    """Put the local files `root` (the item's assessmentItem) shows or links to (images,
    `<a href>` targets, objects) into `files`, beside the item file as the reference says,
    and return their package paths; warn about those that cannot be packed."""
    def warn(message: str) -> None:
        warnings.append(collection.warning(NAME, item.id, f"text.{lang}", message))

    found: list[str] = []
    for el in root.iter(*(tag for tag, _, _ in _FILE_ATTRIBUTES)):
        _, attr, kind = next(f for f in _FILE_ATTRIBUTES if f[0] == el.tag)
        ref = el.get(attr, "")
        if not ref or not is_local_image(ref):
            continue  # a URL, data: URI or #fragment travels as written
        located = locate_image(ref, collection.paths.get(item.id))
        if isinstance(located, str):
            warn(f"{kind} {ref!r} {located}; not in the package")
            continue
        path, local = located
        if path.endswith(".xml"):
            warn(f"{kind} {ref!r} names an XML file (the package's own files are XML); not in "
                 "the package")
            continue
        try:
            data = read_media(local)
        except OSError as exc:
            warn(f"{kind} {ref!r}: cannot read {local}: {exc.strerror or exc}; not in the "
                 "package")
            continue
        if files.get(path, data) != data:
            # items from different folders name different files with the same path
            warn(f"{kind} {ref!r}: another item's file is already packed as {path}; rename one "
                 "of them (not in the package)")
            continue
        files[path] = data
        if path not in found:
            found.append(path)
    return found


def _xml(root: etree._Element) -> bytes:
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)



def _glue(job: _Package, item: Item, fragments: Fragments) -> object:
    """What the package's own parts read of `item` (`Format.glue`): its id (its file's path,
    its identifier in the manifest and the test), languages and source path (the warning of a
    language it lacks), stimulus and whether its text may name a file (which items are built
    before the manifest), and points (its weight in the test)."""
    lang = job.lang
    return (item.id, tuple(item.text), job.collection.paths.get(item.id), item.stimulus,
            item.points,
            lang in item.text and fact(fragments, item, "files", partial(_may_name_files, item, lang)))


#: The format: one QTI 2.1 package (zip) per language; formulas as MathML or TeX.
FORMAT = Format(NAME, folder="qti21", suffix=".zip", multi=False, start=_Package,
                fragment=_fragment, assemble=_assemble, options={"maths": ("mathml", "tex")},
                glue=_glue, zipped=True)
export = FORMAT.export
