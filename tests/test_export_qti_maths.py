"""Maths in QTI 2.1 packages: MathML in the MathML namespace the QTI 2.1.2 XSD imports, the TeX
kept as its annotation, or TeX between delimiters in the TeX mode; checked by the official XSDs
(tests/schemas) and against the TeX written in the maths test bank's files."""

from __future__ import annotations

import pytest

from conftest import ROOT
from dpassess import load_bank
from dpassess.export import Collection
from dpassess.export.qti.items import assessment_item
from dpassess.export.qti.qti21 import export
from dpassess.markup.fields import markdown_texts
from dpassess.markup.maths import find_maths
from dpassess.model import parse_item
from test_export_qti21 import assert_valid, check_package

MATHS = ROOT / "tests" / "banks" / "maths"
M = "{http://www.w3.org/1998/Math/MathML}"


@pytest.fixture(scope="module")
def bank():
    return load_bank(MATHS)


@pytest.mark.parametrize("lang", ["id", "en"])
def test_every_formula_is_mathml_with_its_tex_as_written(bank, lang):
    data = export(Collection.from_bank(bank), lang)
    docs = check_package(data.data)  # valid against the QTI 2.1.2 XSD, MathML 2 included
    assert data.warnings == []
    for entry in bank.entries:
        item = entry.item
        doc = docs[f"items/{item.id}.xml"]
        written = [a.text for a in doc.iter(M + "annotation")]
        source = [m.tex for _, text in markdown_texts(item.text[lang])
                  for m in find_maths(text)]
        assert sorted(written) == sorted(source), item.id
        assert all(a.get("encoding") == "application/x-tex" for a in doc.iter(M + "annotation"))
        assert "m" in doc.nsmap and doc.nsmap["m"] == M[1:-1]  # declared once, on the root


@pytest.mark.parametrize("lang", ["id", "en"])
def test_tex_mode_writes_the_tex_between_delimiters(bank, lang):
    docs = check_package(export(Collection.from_bank(bank), lang, maths="tex").data)
    for entry in bank.entries:
        doc = docs[f"items/{entry.item.id}.xml"]
        assert next(doc.iter(M + "math"), None) is None
        text = "".join(doc.itertext())
        for _, source in markdown_texts(entry.item.text[lang]):
            for m in find_maths(source):
                delims = (r"\[", r"\]") if m.display else (r"\(", r"\)")
                assert f"{delims[0]}{m.tex}{delims[1]}" in text, (entry.item.id, m.tex)


def test_tex_that_mathml_cannot_say_stays_tex_with_a_warning():
    it = parse_item({"id": "mx", "topic": "t/u", "options": ["a", "b"], "key": "a",
                     "text": {"en": {"stem": r"Broken \(\frac{1}{\) and fine $x^2$.",
                                     "options": {"a": "A", "b": "B"}}}})
    root, warnings = assessment_item(it, "en")
    assert_valid("qti", root, "mx")
    assert [w.field for w in warnings] == ["text.en.stem"]
    assert "MathML" in warnings[0].message
    assert [a.text for a in root.iter(M + "annotation")] == ["x^2"]
    assert r"\(\frac{1}{\)" in "".join(root.itertext())


def test_the_maths_bank_exists_with_maths_in_every_item(bank):
    assert len(bank.entries) >= 5
    for entry in bank.entries:
        assert any(find_maths(t) for _, t in markdown_texts(entry.item.text["en"]))
