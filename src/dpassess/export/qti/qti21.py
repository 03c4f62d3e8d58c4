"""A collection in one language -> an IMS content package (zip) of QTI 2.1 items and one test.

Shaped the way Canvas's QTI 2 importer reads packages (`dpassess.lms.canvas`; docs/export-qti.md
says why each choice was made) and valid against the QTI 2.1.2 and IMS CP 1.1 schemas. The parts:
`items` (an assessmentItem per item), `manifest` (imsmanifest.xml), `assessment_test` (the test),
`package` (the reproducible zip), `names` (identifiers and paths). The same collection gives a
byte-identical zip.
"""

from __future__ import annotations

import io
import re
from typing import BinaryIO

from lxml import etree

from dpassess.diagnostics import Diagnostic
from dpassess.export import (
    Collection,
    ExportResult,
    check_lang,
    exported_languages,
    nothing_to_export,
)
from dpassess.export.memo import Fragments, Key
from dpassess.export.qti.assessment_test import assessment_test
from dpassess.export.qti.items import assessment_item
from dpassess.export.qti.manifest import write_manifest
from dpassess.export.qti.names import FORMAT, Q, item_identifier, item_path, test_path
from dpassess.export.qti.package import ZipStream
from dpassess.markup.fields import markdown_texts
from dpassess.markup.maths import MathsMode
from dpassess.markup.media import is_local_image, locate_image, read_media
from dpassess.markup.xmlchars import has_non_xml
from dpassess.model import Content, Item

SUFFIX = ".zip"
MULTI = False


def export(collection: Collection, lang: str, out: BinaryIO | None = None, *,
           maths: MathsMode = "mathml", memo: Fragments | None = None) -> ExportResult:
    """The package for `collection` in `lang`, and a warning for anything it does not carry:
    its bytes, or written to `out` (a seekable binary file; `data` is then empty). Formulas are
    MathML (the TeX kept as its annotation), or with `maths="tex"` TeX between `\\(` `\\)`
    and `\\[` `\\]`, for players that run MathJax. With `memo`, an item's file is taken
    from the fragments of the last export when its key is there (`dpassess.export.memo`)."""
    check_lang(FORMAT, collection, lang, multi=MULTI)
    if out is None:
        buf = io.BytesIO()
        warnings = export(collection, lang, buf, maths=maths, memo=memo).warnings
        return ExportResult(buf.getvalue(), warnings)
    items = collection.items
    notes: dict[int, list[Diagnostic]] = {}  # item index -> its warnings, once known
    exported: list[Item] = []
    by_path: dict[str, int] = {}  # item file -> index of the item written there (the last one)
    for i, item in enumerate(items):
        langs, missing = exported_languages(FORMAT, collection, item, lang)
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
    # With a memo, an item whose assessmentItem names no local file comes from it (such an
    # item packs nothing, so its fragment is all it gives); the others are built every time.
    images: dict[str, bytes] = {}  # package path -> the file's bytes
    shown: dict[str, list[str]] = {}  # item id -> package paths of the files it names
    keys: dict[int, Key] = {}  # item index -> its fragment's key
    for i, item in enumerate(items):
        if i in notes:
            continue
        if (by_path[item_path(item)] != i or item.stimulus is not None
                or _may_name_files(item, lang)):
            hit = memo.get(keys.setdefault(i, _key(memo, collection, item, lang, maths))
                           ) if memo is not None else None
            if hit is not None:
                notes[i], shown[item.id] = hit[1], []
                continue
            root, notes[i] = _item(collection, item, lang, maths)
            if memo is not None and not _names_local_files(root):
                memo.put(keys[i], _xml(root), notes[i])
            shown[item.id] = _pack_files(collection, item, lang, root, images, notes[i])
        else:
            shown.pop(item.id, None)  # as the last item of an id says: none

    with ZipStream(out) as package:  # an error abandons the zip (no noise when collected)
        with package.open("imsmanifest.xml") as fh:
            write_manifest(fh, collection, lang, exported, shown, memo=memo)
        for path in sorted([*by_path, *images]):
            if path in images:
                package.add(path, images[path])
                continue
            i = by_path[path]
            package.add(path, _item_file(collection, items[i], lang, maths, memo, keys, i,
                                         notes))
        package.add(test_path(collection), _xml(assessment_test(collection, lang, exported)))
    return ExportResult(b"", [w for i in sorted(notes) for w in notes[i]])


def _item_file(collection: Collection, item: Item, lang: str, maths: MathsMode,
               memo: Fragments | None, keys: dict[int, Key], i: int,
               notes: dict[int, list[Diagnostic]]) -> bytes:
    """The bytes of item `i`'s file, from `memo` when it has them; its warnings go to `notes`
    unless they are there already."""
    key = (keys.get(i) or _key(memo, collection, item, lang, maths)) if memo is not None else ()
    hit = memo.get(key) if memo is not None else None
    if hit is not None:
        notes.setdefault(i, hit[1])
        return hit[0]
    root, item_notes = _item(collection, item, lang, maths)
    data = _xml(root)
    notes.setdefault(i, item_notes)
    if memo is not None and not _names_local_files(root):
        memo.put(key, data, item_notes)
    return data


def _key(memo: Fragments, collection: Collection, item: Item, lang: str, maths: MathsMode
         ) -> Key:
    """The key of the item's file: what `_item` reads besides the item."""
    return memo.item_key(collection, item, FORMAT, lang, maths)


def _item(collection: Collection, item: Item, lang: str, maths: MathsMode
          ) -> tuple[etree._Element, list[Diagnostic]]:
    """The item's assessmentItem in this collection's package (its identifier, its stimulus)."""
    stimulus = collection.stimuli.get(item.stimulus) if item.stimulus is not None else None
    return assessment_item(item, lang, collection.paths.get(item.id, ""),
                           identifier=item_identifier(item, lang, collection.id),
                           stimulus=stimulus, maths=maths)


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
        warnings.append(collection.warning(FORMAT, item.id, f"text.{lang}", message))

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

