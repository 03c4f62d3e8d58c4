"""The maths test bank (tests/banks/maths/): every formula parses, converts to MathML valid
against the W3C MathML 2 schema, and comes back exactly from each export as an LMS reads it
(Moodle XML through the port of Moodle's reader, QTI 2.1 validated by the official XSD)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import lxml.html
import pytest
from lxml import etree

from dpassess import load_bank
from dpassess.export import Collection
from dpassess.export.moodle import moodle_xml
from dpassess.export.qti import qti21
from dpassess.markup.fields import markdown_texts
from dpassess.markup.markdown import to_html
from dpassess.markup.maths import (
    MATHML_NS,
    find_maths,
    tex_problem,
    tex_to_mathml,
    unbalanced_maths,
)
from test_export_moodle_oracle import read_xml
from test_export_qti21 import assert_valid

BANK = Path(__file__).parent / "banks" / "maths"
SCHEMAS = Path(__file__).parent / "schemas"


@pytest.fixture(scope="module")
def bank():  # type: ignore[no-untyped-def]
    return load_bank(BANK)


def _spans(bank, lang: str):  # type: ignore[no-untyped-def]
    """(item id, delimited TeX as the TeX mode writes it) for every maths span in `lang`."""
    out = []
    for item in bank.items:
        for _, source in markdown_texts(item.text[lang]):
            for span in find_maths(source):
                out.append((item.id, ("\\[%s\\]" if span.display else "\\(%s\\)") % span.tex))
    return out


def _read(html: str) -> str:
    return str(lxml.html.fragment_fromstring(html, create_parent="div").text_content())


@pytest.mark.parametrize("lang", ["id", "en"])
def test_every_formula_is_clean_and_valid_mathml(bank, lang: str) -> None:  # type: ignore[no-untyped-def]
    schema = etree.XMLSchema(etree.parse(str(SCHEMAS / "w3" / "mathml2" / "mathml2.xsd")))
    count = 0
    for item in bank.items:
        for path, source in markdown_texts(item.text[lang]):
            assert unbalanced_maths(source) == [], (item.id, path)
            for span in find_maths(source):
                count += 1
                assert tex_problem(span.tex) is None, (item.id, path, span.tex)
                math = tex_to_mathml(span.tex, display=span.display)
                assert schema.validate(etree.ElementTree(math)), schema.error_log.last_error
    assert count == 44  # the delimiters in the files, counted by a plain regex count per language


@pytest.mark.parametrize("lang", ["id", "en"])
def test_tex_mode_html_gives_back_each_formula(bank, lang: str) -> None:  # type: ignore[no-untyped-def]
    for item in bank.items:
        for path, source in markdown_texts(item.text[lang]):
            text = _read(to_html(source))
            pos = 0
            for span in find_maths(source):
                delimited = ("\\[%s\\]" if span.display else "\\(%s\\)") % span.tex.strip("\n")
                found = text.find(delimited, pos)
                assert found != -1, (item.id, path, delimited, text)
                pos = found + len(delimited)


@pytest.mark.parametrize("lang", ["id", "en"])
def test_moodle_reader_gets_the_tex_back(bank, lang: str) -> None:  # type: ignore[no-untyped-def]
    result = moodle_xml.export(Collection.from_bank(bank), lang)
    questions = [q for q in read_xml(result.data) if q.qtype != "category"]
    text = "\n".join(_read(h) for q in questions
                     for h in (q.questiontext, q.generalfeedback, *q.answers, *q.feedback,
                               q.feedbacktrue, q.feedbackfalse) if h)
    for item_id, delimited in _spans(bank, lang):
        assert delimited.replace("\n", "") in text.replace("\n", ""), (item_id, delimited)


@pytest.mark.parametrize("lang", ["id", "en"])
def test_qti_package_is_valid_and_keeps_the_tex(bank, lang: str) -> None:  # type: ignore[no-untyped-def]
    result = qti21.export(Collection.from_bank(bank), lang)
    with zipfile.ZipFile(io.BytesIO(result.data)) as z:
        docs = {n: etree.fromstring(z.read(n)) for n in z.namelist()
                if n.endswith(".xml") and n != "imsmanifest.xml"}
    tex: list[str] = []
    for name, doc in docs.items():
        assert_valid("qti", doc, name)
        tex += [a.text or "" for a in doc.iter(f"{{{MATHML_NS}}}annotation")]
        tex.append("".join(doc.itertext()))
    everything = "\n".join(tex)
    for item_id, delimited in _spans(bank, lang):
        bare = delimited[2:-2]
        assert bare in everything, (item_id, bare)
