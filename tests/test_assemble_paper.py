"""Forms of every item type, item sets, key patterns, the solver's bounds and the printed
papers (HTML and PDF, the PDF read back by PDFium: its text and its rendered pages)."""

from __future__ import annotations

import os
import signal
import tempfile
import threading
from pathlib import Path

import lxml.html
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT, files
from dpassess.assemble import Infeasible, assemble, assemble_problem, write_assembly
from dpassess.assemble.forms import key_patterns
from dpassess.assemble.paper import t
from dpassess.assemble.problem import resolve
from dpassess.assemble.solve import _solve
from dpassess.bank.load import load_bank
from dpassess.markup.typst_maths import tex_to_typst
from dpassess.markup.xmlchars import xml_safe
from dpassess.model import Essay, Matching, Numerical, Ordering, SingleChoice, TrueFalse
from dpassess.model.blueprint import Blueprint, check_seed, check_time_limit

KS = ROOT / "tests" / "banks" / "kitchen-sink"
SEED_BLUEPRINT = ROOT / "blueprints" / "data-parallelism.yaml"
pdfium = pytest.importorskip("pypdfium2")


def ks_assembly(**extra):
    bank = load_bank(KS)
    data = {"id": "ks", "bank": ".", "forms": 2, "items": {"min": 8, "max": 14},
            "statuses": ["draft", "reviewed"], "seed": 3, **extra}
    return assemble_problem(resolve(Blueprint.model_validate(data), "<bp>", bank))


def shown_text(markdown: str) -> str:
    """The visible text of Markdown as the exports render it."""
    from dpassess.markup.markdown import to_html
    html = lxml.html.fragment_fromstring(to_html(markdown), create_parent="div")
    return " ".join(html.text_content().split())


def written(a) -> dict[str, bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        write_assembly(a, tmp)
        return files(Path(tmp))


# --- key patterns: hand-worked sequences ----------------------------------------------------------


@pytest.mark.parametrize(("seq", "found"), [
    ([0, 1, 2, 3, 1], True),       # A B C D: a sequence
    ([3, 2, 1, 0], True),          # D C B A
    ([1, 1, 1], True),             # B B B: a run
    ([0, 2, 0, 2], True),          # A C A C: a repeated block
    ([0, 2, 3, 0, 2, 3], True),    # A C D A C D
    ([2, 0, 3, 1, 1, 3, 0, 2], False),
    ([1, 2, 0, 3, 0, 2, 1, 1], False),
])
def test_key_patterns_hand_worked(seq, found):
    assert bool(key_patterns(seq)) is found


def test_seed_forms_have_no_key_pattern_and_say_so():
    a = assemble(SEED_BLUEPRINT)
    for form in a.forms:
        seq = form.key_sequence()
        assert len(seq) == 8
        # an independent check: no 3 equal in a row, no 4 stepping by one, no ABAB
        for i in range(len(seq)):
            assert len(set(seq[i:i + 3])) > 1 or len(seq[i:i + 3]) < 3
            w = seq[i:i + 4]
            if len(w) == 4:
                assert {w[1] - w[0], w[2] - w[1], w[3] - w[2]} not in ({1}, {-1})
                assert not (w[0] == w[2] and w[1] == w[3] and w[0] != w[1])
    assert "key patterns             0        0" in a.summary()


# --- every item type, item sets -----------------------------------------------------------------


def test_every_type_is_placed_as_it_should_be():
    a = ks_assembly()
    bank = a.problem.bank
    sets = bank.sets()
    seen_types = set()
    for form in a.forms:
        ids = [fi.source.id for fi in form.items]
        for fi in form.items:
            seen_types.add(type(fi.item))
            src = fi.source
            if isinstance(src, TrueFalse):
                assert fi.item.options == src.options  # never shuffled
            if isinstance(src, Numerical | Essay):
                assert fi.item == src and fi.display == ()
            if isinstance(src, Ordering):
                assert sorted(fi.display) == sorted(src.options)
                assert list(fi.display) != list(src.options)  # shown out of order
            if isinstance(src, Matching):
                assert sorted(fi.display) == sorted(src.response_ids)
        for members in sets.values():
            m = [it.id for it in members]
            on = [i for i in m if i in ids]
            assert on in ([], m)  # all or none
            if on:
                k = ids.index(m[0])
                assert ids[k:k + len(m)] == m  # together, in authoring order
                assert form.items[k].stimulus is not None
                assert all(fi.stimulus is None for fi in form.items[k + 1:k + len(m)])
    assert {SingleChoice, Numerical, Matching, Essay, Ordering} <= seen_types


def test_keys_of_every_type_in_the_key_files_and_papers():
    a = ks_assembly()
    out = written(a)
    import json
    for form in a.forms:
        data = json.loads(out[f"{form.id}/{form.id}-key.json"])
        rows = {r["item"]: r for r in data["items"]}
        html = lxml.html.fromstring(out[f"{form.id}/{form.id}-id.html"])
        key = lxml.html.fromstring(out[f"{form.id}/{form.id}-key-id.html"])
        points = {tr.xpath("string(td[4])"): tr.xpath("string(td[3])")
                  for tr in key.xpath("//section[@class='answers']//tr[td]")}
        for fi in form.items:
            want = f"{fi.item.points:g}".replace(".", ",")  # Indonesian decimal comma
            assert points[fi.item.id] == want
            row = rows[fi.item.id]
            src = fi.source
            if isinstance(src, Essay):
                assert row["answer"]["en"] == "graded by hand"
            if src.id == "ks-load-factor":
                assert row["answer"]["id"].startswith("0,75 ± 0,005")  # decimal comma
                assert row["answer"]["en"].startswith("0.75 ± 0.005")
            if isinstance(src, Matching):
                # the oracle: the printed table, premise n beside the response letters
                shown = html.xpath(f"//li[@id='q{fi.position}']//table//tr/td[2]")
                texts = [" ".join(td.text_content().split()[1:]) for td in shown]
                content = src.text["id"]
                for pid, let in zip(src.pairs, row["key"], strict=True):
                    assert texts[ord(let) - 65] == shown_text(content.responses[pid])
            if isinstance(src, Ordering):
                shown = html.xpath(f"//li[@id='q{fi.position}']//ul/li")
                # a formula is printed as MathML: read back by the TeX of its annotation
                texts = [f"${''.join(tex)}$" if (tex := li.xpath(".//annotation/text()"))
                         else " ".join(li.text_content().split()[1:]) for li in shown]
                by_text = {md if md.startswith("$") and md.endswith("$") else shown_text(md): o
                           for o in src.options if (md := src.text["id"].options[o])}
                got = [by_text[texts[ord(let) - 65]] for let in row["key"]]
                assert got == list(src.options)


def test_a_set_with_an_unusable_item_is_left_out_whole():
    bank = load_bank(KS)
    data = {"id": "ks", "bank": ".", "forms": 1, "items": {"min": 1, "max": 14},
            "exclude": ["ks-probe-next"]}
    pr = resolve(Blueprint.model_validate(data), "<bp>", bank)
    ids = {it.id for it in pr.items}
    assert "ks-probe-count" not in ids and "ks-probe-next" not in ids
    assert any("item set 'ks-probe-table' left out whole" in w.message for w in pr.warnings)


def test_statuses_default_to_reviewed_and_others_are_warned_about():
    bank = load_bank(KS)
    base = {"id": "ks", "bank": ".", "forms": 1, "items": {"min": 1, "max": 14}}
    pr = resolve(Blueprint.model_validate(base), "<bp>", bank)
    assert all(it.status.value == "reviewed" for it in pr.items)
    assert not any("statuses" in w.field for w in pr.warnings)
    pr = resolve(Blueprint.model_validate({**base, "statuses": ["draft", "reviewed"]}), "<bp>",
                 bank)
    assert any("draft" in w.message for w in pr.warnings)


def test_lint_errors_block_items_when_assembling_alone(monkeypatch):
    import dpassess.lint as lint
    from dpassess.diagnostics import Diagnostic, Severity

    bank = load_bank(ROOT / "items" / "data-parallelism")
    victim = bank.items[0].id
    finding = Diagnostic(bank.path_of(victim), 3, 1, "key", "made up", code="IT999",
                         severity=Severity.error)
    monkeypatch.setattr(lint, "lint_banks", lambda banks, config: [finding])
    bp = Blueprint.model_validate({"id": "bp", "bank": ".", "forms": 1,
                                   "items": {"min": 1, "max": 8}})
    monkeypatch.setattr("dpassess.assemble.load_blueprint", lambda path: bp)
    from dpassess.assemble import problem as problem_module
    monkeypatch.setattr(problem_module, "bank_path", lambda bp, path: Path(bank.root).resolve())
    a = assemble("<bp>", bank=bank)
    assert victim not in {fi.item.id for f in a.forms for fi in f.items}
    assert any(f"item {victim!r} left out: lint error IT999" in w.message
               for w in a.problem.warnings)


def test_equal_points_and_target_difficulty():
    a = ks_assembly(items={"min": 4, "max": 6})
    totals = [sum(fi.item.points for fi in f.items) for f in a.forms]
    assert len(set(totals)) == 1
    a = ks_assembly(items=4, balance={"target": 0.7, "target_tolerance": 0.02})
    for s in a.selection.forms:
        mean = sum(a.problem.p[i] for i in s) / (1000 * len(s))
        assert abs(mean - 0.7) <= 0.02 + 1e-9
    with pytest.raises(Infeasible) as exc:
        ks_assembly(items=4, balance={"target": 0.99, "target_tolerance": 0.001})
    assert "mean difficulty 0.99" in "\n".join(exc.value.lines)


# --- the solver's bounds -------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [-1, 2**63, 1.5, True, "3"])
def test_seed_is_checked_as_the_blueprint_checks_it(bad):
    with pytest.raises(ValueError):
        check_seed(bad)
    with pytest.raises(ValueError):
        Blueprint.model_validate({"id": "bp", "bank": ".", "forms": 1, "items": 1, "seed": bad})


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan"), 3601])
def test_time_limit_is_checked_as_the_blueprint_checks_it(bad):
    with pytest.raises(ValueError):
        check_time_limit(bad)
    with pytest.raises(ValueError):
        Blueprint.model_validate({"id": "bp", "bank": ".", "forms": 1, "items": 1,
                                  "time_limit": bad})


def test_ctrl_c_during_the_search_is_an_interruption():
    """The search runs in a thread: SIGINT reaches the main thread, which stops the search and
    raises KeyboardInterrupt (never an "unknown" status)."""

    class SlowSolver:
        def __init__(self) -> None:
            self.stopped = threading.Event()

        def solve(self, model, cb):
            self.stopped.wait(60)
            return "unknown"

        def stop_search(self) -> None:
            self.stopped.set()

    solver = SlowSolver()
    # Python's own Ctrl-C handler, whatever an earlier test in this process left installed
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            _solve(solver, None, None)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert solver.stopped.is_set()


# --- printed papers -------------------------------------------------------------------------------


def page_texts(data: bytes) -> list[str]:
    doc = pdfium.PdfDocument(data)
    return [doc[i].get_textpage().get_text_range() for i in range(len(doc))]


def dark_pixels(data: bytes, page: int) -> int:
    doc = pdfium.PdfDocument(data)
    bitmap = doc[page].render(scale=1, grayscale=True)
    pixels = bytes(bitmap.buffer)
    return sum(1 for b in pixels[::4] if b < 100)


def test_seed_papers_student_and_key_apart_footer_on_every_page():
    a = assemble(SEED_BLUEPRINT)
    out = written(a)
    again = written(assemble(SEED_BLUEPRINT))
    assert out == again  # byte-identical, PDFs included
    form = a.forms[0]
    for lang, word in (("id", "Paket"), ("en", "Form")):
        student = out[f"{form.id}/{form.id}-{lang}.pdf"]
        key = out[f"{form.id}/{form.id}-key-{lang}.pdf"]
        texts = page_texts(student)
        assert len(texts) >= 2
        for n, text in enumerate(texts):
            assert f"{word} A" in text and f"{n + 1}" in text.splitlines()[-1]
        whole = "\n".join(texts)
        assert "Pilih satu jawaban yang paling tepat" in whole or lang == "en"
        assert "Choose the one best answer" in whole or lang == "id"
        for fi in form.items:
            assert fi.item.id not in whole  # the key list names the items; the exam does not
        key_text = "\n".join(page_texts(key))
        assert all(fi.item.id in key_text for fi in form.items)
        # the key grid (page 1) lies over the answer sheet (the student's last page): the
        # same rows, with one filled circle per choice item
        sheet_dark = dark_pixels(student, len(texts) - 1)
        key_dark = dark_pixels(key, 0)
        assert key_dark > sheet_dark


def test_tex_becomes_typst_maths():
    import typst
    for tex in (r"x^2 + \sqrt{y}", r"\frac{n}{m}", r"h(k) = k \bmod 7", r"O(n \log n)",
                r"\alpha = n/m", r"\begin{matrix} a \end{matrix}"):
        maths = tex_to_typst(tex)
        assert maths is not None, tex
        typst.compile(f"${maths}$".encode(), ignore_system_fonts=True)


@settings(max_examples=25, deadline=None)
@given(st.text(st.characters(min_codepoint=0x20, max_codepoint=0x24F,  # Latin, as id and en
                             exclude_categories=("Cc", "Cf", "Cn")), min_size=1, max_size=40))
def test_any_text_prints_as_itself(text):
    """Every text goes into the PDF as a Typst string: nothing in it is read as markup (the
    oracle: PDFium's text of the page)."""
    import typst
    pdf = typst.compile(f"#set page(width: 30cm, height: auto)\n{t(text)}".encode(),
                        ignore_system_fonts=True)
    shown = "".join(page_texts(pdf)).split()
    assert "".join(shown) == "".join(xml_safe(text)[0].split())


def test_each_item_of_a_set_counts_in_the_cells_it_matches():
    bank = load_bank(KS)
    base = {"id": "ks", "bank": ".", "forms": 1, "items": 3, "anchors": ["ks-probe-count"]}
    pr = resolve(Blueprint.model_validate(
        {**base, "cells": [{"topic": "kitchen-sink/hashing", "count": 3}]}), "<bp>", bank)
    ids = [fi.source.id for fi in assemble_problem(pr).forms[0].items]
    assert {"ks-probe-count", "ks-probe-next"} <= set(ids)
    assert sum(1 for i in ids if bank.get(i).topic == "kitchen-sink/hashing") == 3
    # one hashing item per form cannot hold a set of two: the set is named in the conflict
    pr = resolve(Blueprint.model_validate(
        {**base, "cells": [{"topic": "kitchen-sink/hashing", "count": 1}]}), "<bp>", bank)
    with pytest.raises(Infeasible) as exc:
        assemble_problem(pr)
    assert "item sets on a form whole or not at all: ks-probe-table (2 items)" in \
        "\n".join(exc.value.lines)


def test_images_from_the_bank_are_in_the_pdf_and_links_are_not_followed(tmp_path):
    import shutil

    from dpassess.assemble.output import collection
    from dpassess.assemble.paper import Paper, compile_pdf

    def images_on(pdf: bytes) -> int:
        doc = pdfium.PdfDocument(pdf)
        return sum(len(list(doc[i].get_objects(filter=[pdfium.raw.FPDF_PAGEOBJ_IMAGE])))
                   for i in range(len(doc)))

    def paper_of(bank_dir: Path):
        bank = load_bank(bank_dir)
        data = {"id": "ks", "bank": ".", "forms": 1, "items": 1, "anchors": ["ks-hash-lookup"]}
        a = assemble_problem(resolve(Blueprint.model_validate(data), "<bp>", bank))
        form = a.forms[0]
        return Paper(form, "en", collection(a.problem, form).title_in("en"), False, bank)

    paper = paper_of(KS)
    assert images_on(compile_pdf(paper)) >= 1 and not paper.warnings
    copy = tmp_path / "ks"
    shutil.copytree(KS, copy)
    target = copy / "img" / "hash-table.png"
    (tmp_path / "outside.png").write_bytes(target.read_bytes())
    target.unlink()
    target.symlink_to(tmp_path / "outside.png")
    paper = paper_of(copy)
    assert images_on(compile_pdf(paper)) == 0
    assert any("symbolic link" in w.message for w in paper.warnings)
