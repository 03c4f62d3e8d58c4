"""A collection's items in one language -> the package's `imsmanifest.xml` (IMS CP 1.1 with IEEE
LOM metadata): the test's resource, then one resource per item with its files, written
one resource at a time."""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from typing import IO
from urllib.parse import quote

from lxml import etree
from lxml.etree import SubElement

from dpassess.export import Collection
from dpassess.export.qti.names import (
    CP,
    CP_LOCATION,
    CP_NS,
    LOM,
    LOM_NS,
    QTI_NS,
    SCHEMA_LOCATION,
    XSI_NS,
    item_identifier,
    item_path,
    plain,
    test_path,
)
from dpassess.export.xmlfast import ChildStream, copied, nsmap
from dpassess.lms import canvas
from dpassess.markup.markdown import item_title
from dpassess.model import Item

NSMAP = nsmap({None: CP_NS, canvas.QTI2_NAMESPACE_PREFIX: QTI_NS, "lom": LOM_NS,
               "xsi": XSI_NS})
LOM_STATUS = {"draft": "draft", "reviewed": "final", "retired": "unavailable"}
LOM_DIFFICULTY = {"easy": "easy", "medium": "medium", "hard": "difficult"}


def write_manifest(out: IO[bytes], collection: Collection, lang: str, items: Sequence[Item],
                   files: Mapping[str, Sequence[str]], *,
                   resource: Callable[[ChildStream, Item, tuple[str, ...]], bytes] | None = None
                   ) -> None:
    """Write the manifest of the package holding `items` to `out`; `files` gives the package
    paths of the images each item shows (by item id). `resource(stream, item, shown)` gives an
    item's resource as the bytes `stream` writes: `stream.flushed()` after `item_resource(
    stream.parent, ...)` (the default)."""
    stream = _open(out, collection, lang, items)

    def built(stream: ChildStream, item: Item, shown: tuple[str, ...]) -> bytes:
        item_resource(stream.parent, collection, lang, item, shown)
        return stream.flushed()

    make = resource or built
    for item in items:
        stream.write_bytes(make(stream, item, tuple(files.get(item.id, ()))))
    stream.close()


def resource_stream(collection: Collection, lang: str) -> ChildStream:
    """A stream whose `parent` stands for the manifest's resources, as `write_manifest`'s
    does (an item's resource is serialised the same by either): its bytes are not kept."""
    return _open(io.BytesIO(), collection, lang, ())


def _open(out: IO[bytes], collection: Collection, lang: str, items: Sequence[Item]
          ) -> ChildStream:
    """The manifest up to the items' resources written to `out`; the stream that writes them."""
    base = f"{collection.id}-{lang}"
    root = etree.Element(CP + "manifest", nsmap=NSMAP)
    root.set(SCHEMA_LOCATION, CP_LOCATION)
    root.set("identifier", f"{base}-package")
    meta = SubElement(root, CP + "metadata")
    SubElement(meta, CP + "schema").text = "QTIv2.1 Package"
    SubElement(meta, CP + "schemaversion").text = "1.0.0"
    SubElement(root, CP + "organizations")
    resources = SubElement(root, CP + "resources")

    href = test_path(collection)
    test = SubElement(resources, CP + "resource", identifier=f"{base}-test",
                      type="imsqti_test_xmlv2p1", href=href)
    _lom_general(SubElement(SubElement(test, CP + "metadata"), LOM + "lom"), collection.category,
                 f"{collection.id}-test", plain(collection.title_in(lang)) or collection.id,
                 lang, ())
    SubElement(test, CP + "file", href=href)
    for item in items:
        SubElement(test, CP + "dependency", identifierref=item_identifier(item, lang, collection.id))
    return ChildStream(out, resources, xml_declaration=True)


def item_resource(resources: etree._Element, collection: Collection, lang: str, item: Item,
                  files: Sequence[str]) -> etree._Element:
    """The item's resource in `resources`: its QTI and LOM metadata, its file and the images it
    shows (Canvas imports every listed file)."""
    href = item_path(item)
    keywords = (*item.tags, item.topic)
    resource = _resource(collection.category, lang, len(keywords), item.status.value,
                         None if item.difficulty is None else item.difficulty.value)
    resource.set("identifier", item_identifier(item, lang, collection.id))
    resource.set("href", href)
    general = resource[0][0][0]  # metadata, lom, general: as `_lom_general` built it
    general[0][1].text = item.id  # identifier, entry
    general[1][0].text = item_title(item, lang) or item.id  # title, string
    for n, word in enumerate(keywords, 3):  # after identifier, title, language
        general[n][0].text = word  # keyword, string
    resource[1].set("href", href)  # its file
    resources.append(resource)
    for path in files:
        SubElement(resource, CP + "file", href=quote(path))
    return resource


@copied
def _resource(catalog: str, lang: str, keywords: int, status: str, difficulty: str | None
              ) -> etree._Element:
    """An item's resource standing alone, all but what `item_resource` sets: its identifier and
    href, the entry, title and keywords of its LOM, and the files it shows (copying it is
    several times faster than building it element by element). Its metadata holds its LOM
    only: no QTI metadata (`qtiMetadata`), which the QTI 3.0 upgrade (citolab-qti-convert)
    copies unchanged into the 3.0 manifest, where its QTI 2.1 namespace is invalid; and Canvas
    reads none of it (`canvas.INTERACTION_TYPES`)."""
    resource = etree.Element(CP + "resource", identifier="", type="imsqti_item_xmlv2p1",
                             href="", nsmap=NSMAP)
    meta = SubElement(resource, CP + "metadata")
    lom = SubElement(meta, LOM + "lom")
    _lom_general(lom, catalog, "", "", lang, ("",) * keywords)
    lom.append(_lom_vocabulary("lifeCycle", "status", LOM_STATUS[status]))
    if difficulty is not None:
        lom.append(_lom_vocabulary("educational", "difficulty", LOM_DIFFICULTY[difficulty]))
    SubElement(resource, CP + "file", href="")
    return resource


def _lom_general(lom: etree._Element, catalog: str, entry: str, title: str, lang: str,
                 keywords: Sequence[str]) -> None:
    general = SubElement(lom, LOM + "general")
    identifier = SubElement(general, LOM + "identifier")
    SubElement(identifier, LOM + "catalog").text = catalog
    SubElement(identifier, LOM + "entry").text = entry
    SubElement(SubElement(general, LOM + "title"), LOM + "string", language=lang).text = title
    SubElement(general, LOM + "language").text = lang
    for word in keywords:
        SubElement(SubElement(general, LOM + "keyword"), LOM + "string", language=lang).text = word


@copied
def _lom_vocabulary(category: str, name: str, value: str) -> etree._Element:
    """`<category><name>` holding a LOMv1.0 vocabulary `value`."""
    parent = etree.Element(LOM + category, nsmap=NSMAP)
    term = SubElement(parent, LOM + name)
    SubElement(term, LOM + "source").text = "LOMv1.0"
    SubElement(term, LOM + "value").text = value
    return parent
