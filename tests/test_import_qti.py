"""Plain QTI 2.1 items from other tools: a bare item file, a package without a manifest, other
interactions skipped, identifiers that are not option ids renamed, feedback tied by identifier."""

from __future__ import annotations

import pytest

from dpassess.export.qti.package import zip_bytes
from dpassess.importers import NoLanguage
from dpassess.importers.qti21 import read

ITEM = b"""<?xml version="1.0" encoding="UTF-8"?>
<assessmentItem xmlns="http://www.imsglobal.org/xsd/imsqti_v2p1" identifier="choiceMultiple"
    title="Composition of Water" adaptive="false" timeDependent="false">
  <responseDeclaration identifier="RESPONSE" cardinality="multiple" baseType="identifier">
    <correctResponse><value>H</value><value>O</value></correctResponse>
    <mapping lowerBound="0" upperBound="2" defaultValue="-2">
      <mapEntry mapKey="H" mappedValue="1"/><mapEntry mapKey="O" mappedValue="1"/>
      <mapEntry mapKey="Cl" mappedValue="-1"/>
    </mapping>
  </responseDeclaration>
  <outcomeDeclaration identifier="SCORE" cardinality="single" baseType="float"/>
  <outcomeDeclaration identifier="FEEDBACK" cardinality="multiple" baseType="identifier"/>
  <itemBody>
    <choiceInteraction responseIdentifier="RESPONSE" shuffle="true" maxChoices="0">
      <prompt>Which of the following elements are used to form <b>water</b>?</prompt>
      <simpleChoice identifier="H" fixed="false">Hydrogen</simpleChoice>
      <simpleChoice identifier="He" fixed="false">Helium</simpleChoice>
      <simpleChoice identifier="C" fixed="false">Carbon</simpleChoice>
      <simpleChoice identifier="O" fixed="false">Oxygen</simpleChoice>
      <simpleChoice identifier="N" fixed="false">Nitrogen</simpleChoice>
      <simpleChoice identifier="Cl" fixed="true">Chlorine</simpleChoice>
    </choiceInteraction>
  </itemBody>
  <responseProcessing
      template="http://www.imsglobal.org/question/qti_v2p1/rptemplates/map_response"/>
  <modalFeedback outcomeIdentifier="FEEDBACK" identifier="Cl" showHide="show">Chlorine is
    in salt.</modalFeedback>
  <modalFeedback outcomeIdentifier="FEEDBACK" identifier="correct" showHide="show">Yes.</modalFeedback>
</assessmentItem>"""


def test_a_plain_qti_item_file():
    r = read(ITEM, "water.xml", "en")
    assert r.skipped == []
    (item,) = r.items
    assert item.id == "choicemultiple"
    assert item.type.value == "multiple_response" and item.shuffle
    assert item.option_ids == ("h", "he", "c", "o", "n", "cl")
    assert [o.locked for o in item.options] == [False] * 5 + [True]
    assert item.key == ("h", "o") and item.points == 2
    assert item.weights == {"h": 0.5, "he": -1.0, "c": -1.0, "o": 0.5, "n": -1.0, "cl": -0.5}
    en = item.text["en"]
    assert en.title == "Composition of Water"
    assert en.stem == "Which of the following elements are used to form <b>water</b>?"
    assert en.feedback == {"cl": "Chlorine is\n    in salt."}
    assert [str(w) for w in r.warnings] == [
        "water.xml: qti21: choiceMultiple: modalFeedback 'correct' is not tied to one choice; "
        "not carried"]


def test_a_package_without_manifest_and_other_interactions():
    text = ITEM.replace(b"choiceInteraction", b"hotspotInteraction")
    data = zip_bytes({"a.xml": ITEM, "b.xml": text, "notes.txt": b"x"})
    r = read(data, "pkg.zip", "en")
    assert [i.id for i in r.items] == ["choicemultiple"]
    assert [str(s) for s in r.skipped] == [
        "pkg.zip:b.xml: qti21: choiceMultiple: hotspotInteraction items (response type "
        "'identifier') are not supported"]


def test_an_item_without_language_needs_lang():
    with pytest.raises(NoLanguage, match=r"^water\.xml: the item has no xml:lang, so its "
                                         r"language must be given$"):
        read(ITEM, "water.xml", None)


def test_an_item_worth_zero_points_is_skipped_not_a_crash():
    zero = ITEM.replace(b'upperBound="2"', b'upperBound="0"')
    r = read(zero, "zero.xml", "en")
    assert r.items == []
    assert [str(s) for s in r.skipped] == [
        "zero.xml: qti21: choiceMultiple: the item is worth 0 points; items are worth more than "
        "0 and at most 1000"]
