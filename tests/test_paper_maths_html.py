"""The printed forms' HTML writes maths as MathML (the converter the QTI export uses), and a
formula that converter cannot say stays TeX with the QTI export's warning."""

from __future__ import annotations

import shutil

import lxml.html

from conftest import ROOT
from dpassess.assemble import assemble_problem
from dpassess.assemble.output import collection
from dpassess.assemble.paper import Paper, paper_html
from dpassess.assemble.problem import resolve
from dpassess.bank.load import load_bank
from dpassess.export import EXPORTERS
from dpassess.markup.maths import find_maths
from dpassess.model.blueprint import Blueprint

MATHS = ROOT / "tests" / "banks" / "maths"
MATHML = "{http://www.w3.org/1998/Math/MathML}"


def forms(root):
    bank = load_bank(root)
    data = {"id": "mx", "bank": ".", "forms": 1, "items": len(bank), "statuses": ["draft", "reviewed"],
            "seed": 1}
    return bank, assemble_problem(resolve(Blueprint.model_validate(data), "<bp>", bank))


def student_fields(fi, lang):
    """The Markdown a student form shows of one item (stem and options)."""
    content = fi.item.text[lang]
    yield content.stem
    yield from getattr(content, "options", {}).values()


def test_student_form_html_has_a_math_element_per_formula_and_no_tex():
    bank, a = forms(MATHS)
    form = a.forms[0]
    for lang in bank.languages:
        paper = Paper(form, lang, "t", False, bank)
        page = paper_html(paper)
        doc = lxml.html.document_fromstring(page)
        maths = [el for el in doc.iter() if el.tag == "math"]
        expected = sum(len(find_maths(text)) for fi in form.items
                       for text in student_fields(fi, lang))
        assert expected > 10
        assert len(maths) == expected
        for el in maths:
            for ann in el.iter("annotation"):
                ann.drop_tree()
        shown = doc.text_content()
        assert "\\(" not in shown and "$$" not in shown and "\\frac" not in shown
        assert not paper.warnings


def test_a_formula_the_converter_cannot_say_stays_tex_with_the_qti_warning(tmp_path):
    root = tmp_path / "bank"
    shutil.copytree(MATHS, root)
    item = root / "m01-fraction.yaml"
    item.write_text(item.read_text().replace("stem: ", "stem: Bad \\(\\nosuchcommand{x}\\). ", 1))
    bank, a = forms(root)
    form = a.forms[0]
    lang = next(la for la in bank.languages
                if "nosuchcommand" in bank.get("m-fraction").text[la].stem)
    paper = Paper(form, lang, "t", False, bank)
    doc = lxml.html.document_fromstring(paper_html(paper))
    assert "\\(\\nosuchcommand{x}\\)" in doc.text_content()
    qti = EXPORTERS["qti21"].export(collection(a.problem, form), lang)
    theirs = {d.message for d in qti.warnings if "nosuchcommand" in d.message}
    ours = [d for d in paper.warnings if "nosuchcommand" in d.message]
    assert theirs and len(ours) == 1
    assert ours[0].message.endswith(next(iter(theirs)))
    assert ours[0].path.endswith("m01-fraction.yaml") and ours[0].field == f"text.{lang}.stem"
