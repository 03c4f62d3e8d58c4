"""The printed paper's fixed text says only what applies to the form (scoring, answer sheet,
time allowed), the key's grid page says it is for the teacher without moving the grid, and the
summary's "keys at" column has one count per letter on every form. The PDFs are read back by
pypdf (text, and where each piece of text is drawn)."""

from __future__ import annotations

import io
import json

import pytest

from conftest import ROOT
from dpassess.assemble import assemble, assemble_problem, sheet
from dpassess.assemble.output import collection, summary_text
from dpassess.assemble.paper import Paper, compile_pdf, paper_html
from dpassess.assemble.problem import resolve
from dpassess.bank.load import load_bank
from dpassess.model.blueprint import Blueprint

pypdf = pytest.importorskip("pypdf")

KS = ROOT / "tests" / "banks" / "kitchen-sink"
SEED = ROOT / "items" / "data-parallelism"
SEED_BLUEPRINT = ROOT / "blueprints" / "data-parallelism.yaml"
ALWAYS_ON_FORM = ("essays are graded by hand", "unless marked otherwise", "all that apply",
                  "answers to the other items go on the form")


def paper(bank_dir, lang="en", key=False, duration=None, **blueprint):
    bank = load_bank(bank_dir)
    data = {"id": "tt", "bank": ".", "forms": 1, "statuses": ["draft", "reviewed"], "seed": 5,
            **blueprint}
    a = assemble_problem(resolve(Blueprint.model_validate(data), "<bp>", bank))
    form = a.forms[0]
    return Paper(form, lang, collection(a.problem, form).title_in(lang), key, bank,
                 duration=duration)


def pages(data: bytes) -> list[str]:
    return [" ".join(p.extract_text().split()) for p in pypdf.PdfReader(io.BytesIO(data)).pages]


def text_of(p: Paper) -> str:
    return "\n".join(pages(compile_pdf(p)))


def test_a_form_of_one_point_single_choice_items_says_none_of_what_does_not_apply():
    text = text_of(paper(SEED, items=8))
    for sentence in ALWAYS_ON_FORM:
        assert sentence not in text
    assert "Each item is worth 1 point; a wrong answer takes no points off." in text
    assert "Fill in one circle per row." in text
    assert "Mark your answers on the answer sheet (the last page)." in text


def test_a_form_of_every_type_says_all_of_it():
    p = paper(KS, items=12)
    text = text_of(p)
    for sentence in ALWAYS_ON_FORM:
        assert sentence in text
    assert "Mark the answers to the items with lettered options on the answer sheet" in text
    html = paper_html(p)
    assert b"essays are graded by hand" in html and b"all that apply" in html


def test_the_same_in_indonesian():
    seed = text_of(paper(SEED, lang="id", items=8))
    ks = text_of(paper(KS, lang="id", items=12))
    for sentence in ("esai dinilai oleh pemeriksa", "kecuali ditandai lain",
                     "semua yang benar bila soal memintanya", "jawaban soal lain ditulis"):
        assert sentence in ks and sentence not in seed
    assert "Tandai jawaban Anda pada lembar jawaban (halaman terakhir)." in seed


def test_a_form_without_choice_items_has_no_answer_sheet():
    p = paper(KS, items=2, anchors=["ks-load-factor", "ks-explain-amortized"])
    texts = pages(compile_pdf(p))
    whole = "\n".join(texts)
    assert "Answer sheet" not in whole and "answer sheet" not in whole
    assert "Each item's" not in whole and "The points of each item are marked beside it" in whole
    key = "\n".join(pages(compile_pdf(paper(KS, key=True, items=2, anchors=[
        "ks-load-factor", "ks-explain-amortized"]))))
    assert "TEACHER ONLY" not in key and "Teacher only" in key  # no grid page; the footer says it


def test_the_time_allowed_is_on_the_cover_when_the_blueprint_gives_it():
    assert "Time allowed: 90 minutes" in pages(compile_pdf(paper(SEED, items=8, duration=90)))[0]
    assert "Waktu: 45 menit" in pages(compile_pdf(paper(SEED, lang="id", items=8,
                                                         duration=45)))[0]
    assert "Time allowed" not in text_of(paper(SEED, items=8))
    bp = Blueprint.model_validate({"id": "tt", "bank": ".", "forms": 1, "items": 1, "duration_minutes": 90})
    assert bp.duration_minutes == 90 and bp.time_limit == 10.0
    for bad in (0, 1441, 1.5, "90"):
        with pytest.raises(ValueError, match="duration_minutes"):
            Blueprint.model_validate({"id": "tt", "bank": ".", "forms": 1, "items": 1,
                                      "duration_minutes": bad})
    schema = json.loads((ROOT / "docs/schema/blueprint.schema.json").read_text())
    assert "duration_minutes" in schema["properties"]


def drawn(data: bytes, page: int) -> list[tuple[str, float, float]]:
    """Each piece of text of a page with where it is drawn (x, y in points)."""
    out: list[tuple[str, float, float]] = []

    def visit(text, cm, tm, font, size):
        if text.strip():
            x = cm[0] * tm[4] + cm[2] * tm[5] + cm[4]
            y = cm[1] * tm[4] + cm[3] * tm[5] + cm[5]
            out.append((text.strip(), round(x, 2), round(y, 2)))

    pypdf.PdfReader(io.BytesIO(data)).pages[page].extract_text(visitor_text=visit)
    return out


@pytest.mark.parametrize("lang", ["en", "id"])
def test_the_key_grid_says_teacher_only_and_lies_exactly_over_the_answer_sheet(lang):
    a = assemble(SEED_BLUEPRINT)
    form = a.forms[0]
    title = collection(a.problem, form).title_in(lang)
    student = compile_pdf(Paper(form, lang, title, False, a.problem.bank))
    key = compile_pdf(Paper(form, lang, title, True, a.problem.bank))
    last = len(pages(student)) - 1
    key_page = pages(key)[0]
    head = "TEACHER ONLY: NEVER HAND OUT" if lang == "en" else "UNTUK PENGAJAR: JANGAN DIBAGIKAN"
    assert key_page.startswith(head)
    assert ("Answer key · Teacher only · Form A" if lang == "en"
            else "Kunci jawaban · Untuk pengajar · Paket A") in key_page
    # the grid: row numbers and bubble letters, drawn at the same places on both pages
    grid = {x for x in drawn(student, last) if x[0].isdigit() or len(x[0]) == 1}
    on_key = set(drawn(key, 0))
    # the item rows start below the student-number grid (whose bubbles hold digits too)
    below = sheet.PAGE_H - sheet.ROWS_TOP + 10
    rows = {x for x in grid if x[0].isdigit() and 100 < x[2] < below}
    assert len(rows) == len(form.items)
    assert len({x for x in grid if x[0].isdigit() and x[2] > below}) == 10 * 10
    assert grid - {x for x in grid if x[2] < 80} <= on_key  # all but the footer's page number


def test_keys_at_has_one_column_per_letter_on_every_form():
    a = assemble(SEED_BLUEPRINT)
    from dpassess.assemble.output import summary_data

    data = summary_data(a.problem, a.selection, a.forms, a.seed)
    data["forms"][1]["key_positions"] = {"A": 2, "B": 2, "C": 2, "D": 1, "E": 1}
    line = next(x for x in summary_text(data).splitlines() if x.startswith("keys at"))
    assert line.split()[:4] == ["keys", "at", "ABCDE", "2/2/2/2/0"]
    assert line.split()[4] == "2/2/2/1/1"
    data["forms"][0]["key_positions"], data["forms"][1]["key_positions"] = (
        data["forms"][1]["key_positions"], {"A": 4, "B": 4})
    line = next(x for x in summary_text(data).splitlines() if x.startswith("keys at"))
    assert line.split()[2:5] == ["ABCDE", "2/2/2/1/1", "4/4/0/0/0"]
