"""`dpassess stats` as a user runs it: the report formats (the JSON shape scripts rely on,
deterministic HTML), exit codes, errors with their lines and nothing written after an error."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema
import lxml.html
import pytest

from conftest import ROOT, SEED_BANK, dpassess

FIX = ROOT / "tests" / "fixtures" / "stats"
BANK = FIX / "bank"
FORMS = ROOT / "exports" / "forms" / "data-parallelism"



def run(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """`dpassess stats ARGS` in this process (conftest.dpassess)."""
    return dpassess("stats", *args, cwd=cwd)


NUM = {"type": "number"}
NUM_OR_NULL = {"type": ["number", "null"]}
SHAPE = {
    "type": "object",
    "required": ["items", "test"],
    "properties": {
        "items": {"type": "array", "items": {
            "type": "object",
            "required": ["item", "n", "p", "d", "r_pb", "options", "flags"],
            "properties": {
                "item": {"type": "string"}, "n": {"type": "integer"}, "p": NUM, "d": NUM,
                "r_pb": NUM_OR_NULL,
                "options": {"type": "object", "additionalProperties": {
                    "type": "object", "required": ["key", "n", "share", "mean_total", "upper",
                                                   "lower", "works"]}},
                "flags": {"type": "array", "items": {"enum": [
                    "negative-discrimination", "low-discrimination", "too-hard", "too-easy",
                    "possible-second-key", "non-functional-distractor"]}},
            },
        }},
        "test": {"type": "object", "required": ["n", "k", "mean", "sd", "kr20", "alpha", "sem"],
                 "properties": {"n": {"type": "integer"}, "k": {"type": "integer"}, "mean": NUM,
                                "sd": NUM, "kr20": NUM_OR_NULL, "alpha": NUM_OR_NULL,
                                "sem": NUM_OR_NULL}},
    },
}


def test_text_table_in_the_banks_language() -> None:
    r = run(FIX / "hand.csv", "--bank", BANK)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Analisis butir soal: ")  # the bank's default language is id
    assert "q-capital" in r.stdout and "KR-20 0.549" in r.stdout
    assert "pengecoh tidak berfungsi: surabaya (0%), medan (0%)" in r.stdout
    assert r.stderr == ""


def test_json_has_the_documented_shape() -> None:
    r = run(FIX / "hand.csv", "--bank", BANK, "--format", "json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    jsonschema.validate(data, SHAPE)
    assert [i["item"] for i in data["items"]] == ["q-capital", "q-sun", "q-water", "q-prime"]
    capital = data["items"][0]
    assert capital["p"] == 0.8 and capital["d"] == 0.5
    assert list(capital["options"]) == ["jakarta", "bandung", "surabaya", "medan"]
    assert capital["options"]["jakarta"]["key"] is True
    assert capital["flags"] == ["low-discrimination", "non-functional-distractor"]
    assert data["test"]["n"] == 5 and data["test"]["k"] == 4
    assert data["administration"]["format"] == "generic"


def test_html_is_deterministic_and_self_contained(tmp_path: Path) -> None:
    pages = []
    for name in ("a.html", "b.html"):
        r = run(FIX / "moodle-responses.csv", "--bank", BANK, "--format", "html", "--out",
                tmp_path / name)
        assert r.returncode == 0, r.stderr
        pages.append((tmp_path / name).read_bytes())
    assert pages[0] == pages[1]
    doc = lxml.html.fromstring(pages[0])
    assert doc.get("lang") == "id"
    assert len(doc.findall(".//svg")) == 1 + 4  # the histogram, one option chart per item
    assert not doc.findall(".//script") and not doc.xpath("//@src")
    assert [s.get("id") for s in doc.findall(".//section[@class='item']")] == [
        "item-q-capital", "item-q-sun", "item-q-water", "item-q-prime"]
    assert "Tingkat kesukaran" in doc.text_content()
    for rect in doc.findall(".//svg//rect"):
        assert float(rect.get("width")) >= 0 and float(rect.get("height")) >= 0


def test_errors_exit_1_with_lines_and_write_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "r.csv"
    bad.write_text("person,item,response\na,q-sun,true\na,q-sun,false\nb,q-water,c42\n",
                   encoding="utf-8")
    out = tmp_path / "report.json"
    r = run(bad, "--bank", BANK, "--format", "json", "--out", out)
    assert r.returncode == 1
    assert f"error: {bad}:3: stats: response: person 'a' answers item 'q-sun' again" in r.stderr
    assert f"error: {bad}:4: stats: response: 'c42' is no option" in r.stderr
    assert r.stderr.rstrip().endswith("2 errors in the responses file: nothing written")
    assert not out.exists() and r.stdout == ""


def test_warnings_go_to_stderr() -> None:
    r = run(FIX / "canvas-student-analysis.csv", "--bank", BANK, "--format", "json")
    assert r.returncode == 0
    json.loads(r.stdout)
    assert "warning: " in r.stderr and "the bank's key is used" in r.stderr


def test_an_assembled_form_by_its_key_file(tmp_path: Path) -> None:
    key = json.loads((FORMS / "dp-quiz-b" / "dp-quiz-b-key.json").read_text(encoding="utf-8"))
    sheet = tmp_path / "sheet.csv"
    lines = ["person,form,item,response"]
    for person, right in (("s1", 8), ("s2", 5), ("s3", 2)):
        for row in key["items"]:
            wrong = next(c for c in "ABCD" if c not in row["key"])
            lines.append(f"{person},B,{row['position']},"
                         f"{row['key'][0] if row['position'] <= right else wrong}")
    sheet.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for form in (FORMS, FORMS / "dp-quiz-b" / "dp-quiz-b-key.json"):
        r = run(sheet, "--bank", SEED_BANK, "--form", form, "--format", "json")
        assert r.returncode == 0, r.stderr
        test = json.loads(r.stdout)["test"]
        assert (test["n"], test["k"], test["mean"]) == (3, 8, 5.0)


@pytest.mark.parametrize(("args", "message"), [
    (["--format", "pdf"], "--format pdf: choose one of text, json, html"),
    (["--form", "A"], "no responses of form 'A'"),
    (["--form", "exports/forms/none-key.json"], "no such answer-key file or folder"),
])
def test_usage(args: list[str], message: str) -> None:
    r = run(FIX / "hand.csv", "--bank", BANK, *args)
    assert r.returncode == 2 and message in r.stderr


def test_missing_files_and_banks(tmp_path: Path) -> None:
    r = run(tmp_path / "none.csv", "--bank", BANK)
    assert r.returncode == 2 and "no such responses file" in r.stderr
    r = run(FIX / "hand.csv", "--bank", tmp_path)
    assert r.returncode == 2 and "not a bank folder" in r.stderr
    (tmp_path / "empty.csv").write_bytes(b"")
    r = run(tmp_path / "empty.csv", "--bank", BANK)
    assert r.returncode == 2 and "empty" in r.stderr


def test_forms_with_different_items_are_analysed_apart(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("person,form,item,response\na,X,q-sun,true\nb,Y,q-water,c90\n",
                    encoding="utf-8")
    r = run(path, "--bank", BANK, "--format", "json")
    assert r.returncode == 0, r.stderr
    forms = json.loads(r.stdout)["forms"]
    assert [(f["administration"]["form"], [i["item"] for i in f["items"]]) for f in forms] == [
        ("X", ["q-sun"]), ("Y", ["q-water"])]
    r = run(path, "--bank", BANK, "--form", "X")
    assert r.returncode == 0 and "rows of form 'Y' passed over" in r.stderr


def test_a_moodle_report_with_a_form_says_to_leave_it_out() -> None:
    r = run(FIX / "moodle-responses.csv", "--bank", BANK, "--form", FORMS)
    assert r.returncode == 2, r.stderr
    assert ("moodle-responses.csv: a Moodle report names its own questions, so it takes no key "
            "files and no form to pick (leave out --form: each quiz pasted into the file is "
            "analysed as a form of its own)") in r.stderr, r.stderr
