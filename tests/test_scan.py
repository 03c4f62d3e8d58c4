"""`dpassess scan`: printed answer sheets read back.

Oracles: the key PDF's grid page is a filled sheet, so scanning it must give the key file's
letters (for every form and language of the bundled bank); synthetic scans (a rendered sheet,
marks drawn at the layout's bubbles, the paper distorted) must give the planted answers, with
every planted doubtful mark flagged; the responses CSV must be what `dpassess stats` reads."""

from __future__ import annotations

import csv
import hashlib
import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT

cv2 = pytest.importorskip("cv2")
pytest.importorskip("pypdfium2")
sys.path.insert(0, str(ROOT / "benchmarks"))
import scan_synth as synth  # noqa: E402
from dpassess.cli import main  # noqa: E402
from dpassess.scan import scan  # noqa: E402
from dpassess.scan.read import load_sheet, parse_qr, read_page  # noqa: E402

FORMS = ROOT / "exports" / "forms" / "data-parallelism"
KEY_PDFS = sorted(FORMS.glob("*/*-key-*.pdf"))
SHEETS = {s.form: s for s in (load_sheet(p) for p in FORMS.glob("*/*-sheet.json"))}


def keys(form: str) -> dict[int, list[str]]:
    with (FORMS / form / f"{form}-key.csv").open(newline="") as f:
        return {int(r["position"]): r["key"].split(";") for r in csv.DictReader(f)}


def test_the_bundled_forms_have_key_pdfs_in_both_languages():
    assert {p.name.rsplit("-", 1)[1] for p in KEY_PDFS} == {"en.pdf", "id.pdf"}
    assert len(KEY_PDFS) == 2 * len(SHEETS) >= 4


@pytest.mark.parametrize("pdf", KEY_PDFS, ids=lambda p: p.name)
def test_scanning_the_key_grid_gives_exactly_the_key(pdf: Path):
    form = pdf.parent.name
    r = read_page(synth.render(pdf, 1, 200), SHEETS, str(pdf), 1)
    assert r.problem == ""
    assert r.form == form
    assert {row.position: row.marked for row in r.rows} == keys(form)
    assert all(row.problem == "" for row in r.rows)
    # the QR code names the key file it was printed with
    khash = hashlib.sha256((FORMS / form / f"{form}-key.csv").read_bytes()).hexdigest()[:8]
    # ... and the language it is printed in
    lang = pdf.stem.rsplit("-", 1)[1]
    assert parse_qr(r.qr) == (1, 1, khash, form, lang) and r.language == lang
    assert r.number_problem == "student number left blank"


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), dpi=st.sampled_from([150, 200, 300]),
       form=st.sampled_from(sorted(SHEETS)))
def test_synthetic_scans_read_as_planted_and_every_doubt_is_flagged(seed, dpi, form):
    rng = random.Random(seed)
    lay = synth.layout(FORMS / form / f"{form}-sheet.json")
    blank = _blank(form, dpi)
    planted = synth.fill(blank, lay, dpi, rng, doubtful_rate=0.3)
    r = read_page(synth.distort(planted.image, rng), SHEETS, "x.png", 1)
    assert r.problem == ""
    assert r.form == form
    assert r.number == planted.number and r.number_problem == ""
    for row in r.rows:
        kind, marked = planted.rows[row.position]
        if kind in (*synth.DOUBTFUL, "two"):
            assert row.problem, (kind, row)
        else:
            assert row.problem == "" and row.marked == marked, (kind, row)


_BLANKS: dict[tuple[str, int], object] = {}


def _blank(form: str, dpi: int):
    if (form, dpi) not in _BLANKS:
        _BLANKS[(form, dpi)] = synth.render(FORMS / form / f"{form}-en.pdf", -1, dpi)
    return _BLANKS[(form, dpi)]


def _sheet(tmp: Path, name: str, form: str, rng: random.Random, number: str, doubtful: float
           ) -> synth.Planted:
    lay = synth.layout(FORMS / form / f"{form}-sheet.json")
    p = synth.fill(_blank(form, 200), lay, 200, rng, doubtful_rate=doubtful, number=number)
    cv2.imwrite(str(tmp / name), synth.distort(p.image, rng, jpeg=False))
    return p


def test_the_review_loop_ends_when_the_teacher_has_decided_everything(tmp_path: Path, capsys):
    rng = random.Random(7)
    a = _sheet(tmp_path, "a.png", "dp-quiz-a", rng, "1234567890", 0.0)
    b = _sheet(tmp_path, "b.png", "dp-quiz-b", rng, "2234567890", 1.0)  # every row doubtful
    c = _sheet(tmp_path, "c.png", "dp-quiz-a", rng, "0000000042", 0.0)
    out = tmp_path / "responses.csv"
    args = ["scan", str(tmp_path / "a.png"), str(tmp_path / "b.png"), str(tmp_path / "c.png"),
            "--forms", str(FORMS), "--out", str(out), "--jobs", "2"]
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 1
    fixes = tmp_path / "responses-corrections.csv"
    with fixes.open(newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["sheet", "item", "found", "correction"]
    open_b = {r[1] for r in rows[1:] if r[0].endswith("b.png:1")}
    assert open_b == {str(n) for n, (k, _) in b.rows.items() if k in (*synth.DOUBTFUL, "two")}
    assert not any(r[1] == "person" for r in rows[1:])
    html = (tmp_path / "responses-review.html").read_text()
    assert html.count("data:image/png;base64,") == len(rows) - 1
    # the teacher decides: B for every open row, and runs again
    with fixes.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(rows[0])
        w.writerows([[*r[:3], "B" if r[1] != "1" else "-"] for r in rows[1:]])
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code in (0, None)
    assert f"{len(rows) - 1} corrections applied, 0 open" in capsys.readouterr().err
    with out.open(newline="") as f:
        got = {(r["person"], r["form"], int(r["item"])): r["response"] for r in csv.DictReader(f)}
    want = {}
    for p, form in ((a, "dp-quiz-a"), (b, "dp-quiz-b"), (c, "dp-quiz-a")):
        for n, (kind, marked) in p.rows.items():
            if kind in (*synth.DOUBTFUL, "two"):
                marked = [] if n == 1 else ["B"]
            want[(p.number, form, n)] = ";".join(marked)
    assert got == want
    # and `dpassess stats` reads it through the forms' key files
    with pytest.raises(SystemExit) as e:
        main(["stats", str(out), "--bank", str(ROOT / "items" / "data-parallelism"),
              "--form", str(FORMS), "--format", "json", "--out", str(tmp_path / "s.json")])
    assert e.value.code in (0, None)


def test_a_duplicate_student_number_and_a_page_without_a_sheet_are_open(tmp_path: Path):
    rng = random.Random(3)
    _sheet(tmp_path, "a.png", "dp-quiz-a", rng, "5555555555", 0.0)
    _sheet(tmp_path, "b.png", "dp-quiz-b", rng, "5555555555", 0.0)  # one student, two forms
    cv2.imwrite(str(tmp_path / "c.png"), _blank("dp-quiz-a", 150)[:400])  # no marks
    result = scan([tmp_path / x for x in ("a.png", "b.png", "c.png")], FORMS)
    found = {(o.sheet.rsplit("/", 1)[-1], o.item) for o in result.open}
    assert found == {("a.png:1", "person"), ("b.png:1", "person"), ("c.png:1", "sheet")}


def test_without_the_scan_extra_the_command_says_which_extra(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "cv2", None)
    with pytest.raises(SystemExit) as e:
        main(["scan", str(KEY_PDFS[0]), "--forms", str(FORMS), "--out", str(tmp_path / "r.csv")])
    assert e.value.code == 2
    from dpassess.runtime.extras import install_hint

    assert install_hint("cv2") in capsys.readouterr().err
    assert "[scan]" in install_hint("cv2")


def test_scanning_the_key_pdfs_whole_reads_every_grid_and_lists_the_other_pages():
    result = scan(KEY_PDFS, FORMS, jobs=2)
    assert result.pages == 2 * len(KEY_PDFS) and result.sheets == len(KEY_PDFS)
    for pdf in KEY_PDFS:
        form, ref = pdf.parent.name, f"{pdf}:1"
        got = {int(n): r.split(";") for p, f, n, r, _ in result.rows if p == ref and f == form}
        assert got == keys(form)
        # each row says the language of the sheet it was read from (for the DIF in stats)
        assert {lang for p, _, _, _, lang in result.rows if p == ref} == {
            pdf.stem.rsplit("-", 1)[1]}
    assert {(o.sheet, o.item) for o in result.open} == {
        *((f"{p}:1", "person") for p in KEY_PDFS), *((f"{p}:2", "sheet") for p in KEY_PDFS)}


def test_a_sheet_printed_for_another_key_waits_for_accept(tmp_path: Path):
    import shutil

    forms = tmp_path / "forms"
    shutil.copytree(FORMS / "dp-quiz-a", forms / "dp-quiz-a",
                    ignore=shutil.ignore_patterns("gift", "moodle", "qti21", "*.html"))
    layout = forms / "dp-quiz-a" / "dp-quiz-a-sheet.json"
    layout.write_text(layout.read_text().replace('"key_hash": "', '"key_hash": "f'))
    pdf = forms / "dp-quiz-a" / "dp-quiz-a-key-en.pdf"
    result = scan([pdf], forms)
    [other] = [o for o in result.open if o.item == "sheet" and o.sheet == f"{pdf}:1"]
    assert "another key" in other.found
    assert not result.rows
    accepted = scan([pdf], forms, {(f"{pdf}:1", "sheet"): (other.found, "accept")})
    assert {int(n): r.split(";") for _, _, n, r, _ in accepted.rows} == keys("dp-quiz-a")


def test_every_page_of_a_multi_page_tiff_is_read(tmp_path: Path):
    import numpy as np

    rng = random.Random(11)
    pages, planted = [], []
    for form, number in (("dp-quiz-a", "1111111111"), ("dp-quiz-b", "2222222222")):
        lay = synth.layout(FORMS / form / f"{form}-sheet.json")
        p = synth.fill(_blank(form, 200), lay, 200, rng, doubtful_rate=0.0, number=number)
        pages.append(synth.distort(p.image, rng, jpeg=False))
        planted.append((form, p))
    pages.append(np.full((800, 600), 240, np.uint8))  # a page without a sheet
    tif = tmp_path / "scans.tif"
    assert cv2.imwritemulti(str(tif), pages)
    result = scan([tif], FORMS, jobs=2)
    assert result.pages == 3 and result.sheets == 2
    got = {(person, form, int(n)): r for person, form, n, r, _ in result.rows}
    assert got == {(p.number, form, n): ";".join(marked)
                   for form, p in planted for n, (_, marked) in p.rows.items()}
    assert {(o.sheet, o.item) for o in result.open} == {(f"{tif}:3", "sheet")}


def test_a_sheet_printed_before_the_qr_code_named_its_language_is_still_read():
    assert parse_qr("dpassess:sheet:1:2:abcd1234:dp-quiz-a") == (1, 2, "abcd1234", "dp-quiz-a", "")
    assert parse_qr("dpassess:sheet:1:2:abcd1234:dp-quiz-a:id") == (
        1, 2, "abcd1234", "dp-quiz-a", "id")
    assert parse_qr("dpassess:sheet:1:x:abcd1234:dp-quiz-a:id") is None
    assert parse_qr("dpassess:sheet:1:2:abcd1234") is None
