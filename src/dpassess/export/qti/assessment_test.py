"""A collection's items in one language -> the package's `assessmentTest`: one part, one hidden
section referring to every item in delivery order, SCORE and MAXSCORE summed over the items."""

from __future__ import annotations

from collections.abc import Sequence

from lxml import etree
from lxml.etree import SubElement

from dpassess.export import Collection
from dpassess.export.qti.names import (
    QTI_LOCATION,
    QTI_NSMAP,
    SCHEMA_LOCATION,
    TOOL,
    Q,
    item_identifier,
    item_path,
    number,
    plain,
)
from dpassess.lms import canvas
from dpassess.model import Item


def assessment_test(collection: Collection, lang: str, items: Sequence[Item]) -> etree._Element:
    base = f"{collection.id}-{lang}"
    title = plain(collection.title_in(lang)) or collection.id
    root = etree.Element(Q + "assessmentTest", nsmap=QTI_NSMAP)
    root.set(SCHEMA_LOCATION, QTI_LOCATION)
    root.set("identifier", f"{base}-test")
    root.set("title", title)
    root.set("toolName", TOOL)
    for name in ("SCORE", "MAXSCORE"):
        outcome = SubElement(root, Q + "outcomeDeclaration", identifier=name,
                             cardinality="single", baseType="float")
        SubElement(SubElement(outcome, Q + "defaultValue"), Q + "value").text = "0"
    part = SubElement(root, Q + "testPart", identifier=f"{base}-part",
                      navigationMode="nonlinear", submissionMode="individual")
    section = SubElement(part, Q + "assessmentSection", identifier=f"{base}-section",
                         title=title, visible=canvas.SECTION_VISIBLE)
    for item in items:
        ref = SubElement(section, Q + "assessmentItemRef", identifier=item_identifier(item, lang, collection.id),
                         href="../" + item_path(item))
        SubElement(ref, Q + "weight", identifier=canvas.POINTS_WEIGHT_ID,
                   value=number(item.points))
    processing = SubElement(root, Q + "outcomeProcessing")
    for name in ("SCORE", "MAXSCORE"):
        total = SubElement(SubElement(processing, Q + "setOutcomeValue", identifier=name),
                           Q + "sum")
        SubElement(total, Q + "testVariables", variableIdentifier=name)
    return root
