"""What the parts of a QTI package call each other: namespaces, schemas, identifiers, file paths.

Identifiers come from ids: item `<collection id>__<item id>-<lang>` (its file
`items/<item id>.xml`), test `<collection id>-<lang>-test` (its file `tests/<collection id>.xml`).
The collection is a bank or an assembled form: each form's questions have identifiers of their
own, so importing a form never updates another form's (or the bank's) questions in an LMS that
matches questions by identifier (Canvas's "overwrite assessment content with matching IDs").
No identifier has a `.`: in a test, QTI refers to an item's outcome as `<item ref>.<outcome>`
(`item.SCORE`), so a dotted item identifier breaks a QTI engine's test session. Ids never hold
`__` (each `-` or `_` is followed by a letter or digit), so `__` joins collection and item
unambiguously and the identifier says which collection and which item it is.
"""

from __future__ import annotations

from dpassess.export import Collection
from dpassess.export.xmlfast import nsmap
from dpassess.markup.markdown import plain_title
from dpassess.markup.xhtml import QTI_NS, XML_LANG
from dpassess.model import ItemBase

__all__ = ["QTI_NS", "XML_LANG"]

FORMAT = "qti21"
TOOL = "dpassess"

CP_NS = "http://www.imsglobal.org/xsd/imscp_v1p1"
LOM_NS = "http://ltsc.ieee.org/xsd/LOM"
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"
SCHEMA_LOCATION = f"{{{XSI_NS}}}schemaLocation"
QTI_LOCATION = f"{QTI_NS} http://www.imsglobal.org/xsd/qti/qtiv2p1/imsqti_v2p1p2.xsd"
CP_LOCATION = " ".join([
    CP_NS, "http://www.imsglobal.org/xsd/imscp_v1p1.xsd",
    LOM_NS, "http://www.imsglobal.org/xsd/imsmd_loose_v1p3p2.xsd",
])

#: The namespaces of the package's item and test files.
QTI_NSMAP = nsmap({None: QTI_NS, "xsi": XSI_NS})

#: Tag prefixes: `Q + "div"` is `{QTI namespace}div`.
Q = f"{{{QTI_NS}}}"
CP = f"{{{CP_NS}}}"
LOM = f"{{{LOM_NS}}}"


#: Between collection id and item id in an item's identifier: not `.` (see above), and never
#: inside an id.
ITEM_SEPARATOR = "__"


def item_identifier(item: ItemBase, lang: str, collection_id: str = "") -> str:
    """The item's identifier in a package of the collection `collection_id` (none: the item's
    own, `<item id>-<lang>`, for an item exported alone)."""
    own = f"{item.id}-{lang}"
    return f"{collection_id}{ITEM_SEPARATOR}{own}" if collection_id else own


def item_path(item: ItemBase) -> str:
    return f"items/{item.id}.xml"


def test_path(collection: Collection) -> str:
    return f"tests/{collection.id}.xml"


def number(x: float) -> str:
    """A float as QTI writes it: `1`, `0.5`, shortest round-trip form otherwise."""
    return str(int(x)) if x == int(x) else repr(x)


def plain(title: str) -> str:
    """A title as written (plain text, never Markdown), without characters XML cannot carry."""
    return plain_title(title)
