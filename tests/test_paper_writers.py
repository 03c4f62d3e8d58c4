"""The printed papers are two writers on the exports' contract (`dpassess.export.Format`): a
per-item builder and an assembly, listed in a registry of their own.

Oracles: lxml writing the whole paper as one tree (what the HTML was before it was assembled
from fragments: the spliced file must be the same bytes), Python's own HTML parser reading the
list of items back, and pypdf reading the text of the compiled PDF."""

from __future__ import annotations

import dataclasses
import io
from html.parser import HTMLParser

import pytest
from lxml.html import builder

from conftest import ROOT
from dpassess.assemble import assemble_problem, paper
from dpassess.assemble.output import collection
from dpassess.assemble.paper import Paper
from dpassess.assemble.problem import resolve
from dpassess.bank.load import load_bank
from dpassess.diagnostics import Diagnostic, Severity, UsageError
from dpassess.export import EXPORTERS, PAPER_WRITERS, Format, Fragment
from dpassess.export.formats import FORMATS
from dpassess.model.blueprint import Blueprint

BANK = ROOT / "tests" / "banks" / "kitchen-sink"


@pytest.fixture(scope="module")
def assembled():
    bank = load_bank(BANK)
    data = {"id": "pw", "bank": ".", "forms": 1, "items": 1,
            "statuses": ["draft", "reviewed"], "seed": 1}
    # all it can hold: every counted item but one of a pair of enemies
    data["items"] = sum(resolve(Blueprint.model_validate(data), "<bp>", bank).counted) - 1
    problem = resolve(Blueprint.model_validate(data), "<bp>", bank)
    return problem, assemble_problem(problem)


def test_the_papers_are_writers_of_their_own_registry_not_format_choices():
    assert set(PAPER_WRITERS) == {"paper-html", "paper-pdf"}
    assert not set(PAPER_WRITERS) & set(EXPORTERS) and not set(PAPER_WRITERS) & set(FORMATS)
    assert [w.suffix for w in PAPER_WRITERS.values()] == [".html", ".pdf"]
    assert all(isinstance(w, Format) for w in PAPER_WRITERS.values())


def test_a_paper_writer_cannot_write_a_bare_collection(assembled):
    problem, a = assembled
    coll = collection(problem, a.forms[0])
    with pytest.raises(UsageError, match="assembled form"):
        PAPER_WRITERS["paper-html"].export(coll, coll.languages[0])


def _whole_tree(p: Paper, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """The paper's HTML with the items built into the list of the one tree lxml writes."""
    plain_ol = builder.OL

    def ol(*children, **attrs):
        if children == ({"class": "items"},):
            return plain_ol(*(paper._item_html(p, fi) for fi in p.form.items), *children)
        return plain_ol(*children, **attrs)

    with monkeypatch.context() as m:
        m.setattr(builder, "OL", ol)
        return paper._html_skeleton(p)


@pytest.mark.parametrize("count", [0, 1, 2, 3, None])
def test_the_html_writer_writes_what_lxml_writes_of_the_whole_tree(assembled, monkeypatch,
                                                                   count):
    problem, a = assembled
    form = a.forms[0]
    form = dataclasses.replace(form, items=form.items[:count])
    assert count is not None or len(form.items) > 10
    for lang in problem.bank.languages:
        for key in (False, True):
            out = io.BytesIO()
            found = PAPER_WRITERS["paper-html"].write_state(
                Paper(form, lang, "T", key, problem.bank), out)
            oracle = Paper(form, lang, "T", key, problem.bank)
            assert out.getvalue() == _whole_tree(oracle, monkeypatch)
            assert found == oracle.warnings


class _Items(HTMLParser):
    """The ids of the `<li>` elements directly in `<ol class="items">`."""

    def __init__(self) -> None:
        super().__init__()
        self.depth, self.ids = 0, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if self.depth:
            if tag == "li" and self.depth == 1:
                self.ids.append(attrs.get("id"))
            self.depth += tag in ("ol", "ul")
        elif tag == "ol" and attrs.get("class") == "items":
            self.depth = 1

    def handle_endtag(self, tag):
        if self.depth and tag in ("ol", "ul"):
            self.depth -= 1


def test_the_html_assembly_puts_each_items_fragment_in_form_order(assembled):
    problem, a = assembled
    form = a.forms[0]
    asked = []

    def fragments(item, context=()):
        asked.append(item.id)
        n = len(asked)
        return Fragment(f'<li id="f{n}">{n}</li>'.encode(),
                        [Diagnostic("", 0, 0, "", f"w{n}", severity=Severity.warning)])

    lang = problem.bank.languages[0]
    out = io.BytesIO()
    found = PAPER_WRITERS["paper-html"].write_state(
        Paper(form, lang, "T", False, problem.bank), out, fragments)
    assert asked == [fi.item.id for fi in form.items]
    parser = _Items()
    parser.feed(out.getvalue().decode())
    assert parser.ids == [f"f{n}" for n in range(1, len(form.items) + 1)]
    assert [d.message for d in found] == [f"w{n}" for n in range(1, len(form.items) + 1)]
    asked.clear()
    PAPER_WRITERS["paper-html"].write_state(Paper(form, lang, "T", True, problem.bank),
                                            io.BytesIO(), fragments)
    assert asked == []  # the key lists answers, not items


def test_the_pdf_assembly_asks_for_plain_fragments_when_typst_refuses(assembled):
    pytest.importorskip("typst")
    pypdf = pytest.importorskip("pypdf")
    problem, a = assembled
    form = dataclasses.replace(a.forms[0], items=a.forms[0].items[:3])
    asked = []

    def fragments(item, context=()):
        asked.append(context)
        if context == (False,):
            return Fragment(b"#this-is-no-function(\n", [])
        return Fragment(f'#"PLAINITEM{len(asked)}"\n\n'.encode(), [])

    out = io.BytesIO()
    found = PAPER_WRITERS["paper-pdf"].write_state(
        Paper(form, problem.bank.languages[0], "T", False, problem.bank), out, fragments)
    assert asked == [(False,)] * 3 + [(True,)] * 3
    text = "".join(page.extract_text() for page in pypdf.PdfReader(out).pages)
    assert "PLAINITEM4" in text and "PLAINITEM6" in text
    assert any("Typst could not typeset them" in d.message for d in found)


def test_the_pdf_writer_item_is_the_typst_of_the_paper(assembled):
    pytest.importorskip("typst")
    problem, a = assembled
    form = a.forms[0]
    lang = problem.bank.languages[0]
    p = Paper(form, lang, "T", False, problem.bank)
    source = paper.paper_typst(p).encode()
    for fi in form.items:
        part = PAPER_WRITERS["paper-pdf"].fragment(p, fi.item, (False,))
        assert part.data and part.data in source
