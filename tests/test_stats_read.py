"""Reading responses: each layout from a small fixture written after the LMS's own code (Moodle's
mod/quiz/report/responses, Canvas's quiz_statistics/student_analysis.rb), assembled forms through
their committed key files, and every kind of bad input reported with its line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT, SEED_BANK
from dpassess import load_bank
from dpassess.diagnostics import Severity, UsageError
from dpassess.stats import ResponsesError, analyse, read_responses, score, sniff
from dpassess.stats.scoring import Response

FIX = ROOT / "tests" / "fixtures" / "stats"
FORMS = ROOT / "exports" / "forms" / "data-parallelism"


@pytest.fixture(scope="module")
def bank():
    return load_bank(FIX / "bank")


@pytest.fixture(scope="module")
def seed():
    return load_bank(SEED_BANK)


def table(responses) -> dict[tuple[str, str], tuple[float, frozenset[str]]]:
    """(person, item) -> (score, chosen options), for comparing readers."""
    out = {}
    for item, col in responses.columns.items():
        for i, person in enumerate(responses.persons):
            out[(person, item)] = (col.scores[i], col.chosen(i))
    return out


def write(tmp_path: Path, text: str, name: str = "r.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def errors(exc: pytest.ExceptionInfo[ResponsesError]) -> list[tuple[int, str, str]]:
    return [(d.line, d.field, d.message) for d in exc.value.diagnostics
            if d.severity is Severity.error]


# --- the three layouts give the same answers ----------------------------------------------------


def test_generic_reads_ids(bank) -> None:
    r = read_responses(FIX / "hand.csv", bank)
    assert r.source.format == "generic" and r.source.rows == 20 and r.n == 5
    t = table(r)
    assert t[("P1", "q-prime")] == (1.0, frozenset({"two", "three"}))
    assert t[("P5", "q-water")] == (0.0, frozenset())  # omitted


def _by_person(responses, rename: dict[str, str]) -> dict:
    return {(rename.get(p, p), i): v for (p, i), v in table(responses).items()}


def test_moodle_responses_report_matches_the_generic_file(bank) -> None:
    moodle = read_responses(FIX / "moodle-responses.csv", bank)
    assert moodle.source.format == "moodle"
    rename = {f"P{i}@example.org": f"P{i}" for i in range(1, 6)}
    assert _by_person(moodle, rename) == table(read_responses(FIX / "hand.csv", bank))
    assert not [d for d in moodle.problems.diagnostics()]


def test_canvas_student_analysis_matches_the_generic_file(bank) -> None:
    canvas = read_responses(FIX / "canvas-student-analysis.csv", bank)
    assert canvas.source.format == "canvas"
    assert table(canvas) == table(read_responses(FIX / "hand.csv", bank))
    # Canvas gave 0.5 for "9,2" on the multiple-answer question; the bank's key gives 0
    [d] = canvas.problems.diagnostics()
    assert (d.line, d.field, d.severity) == (6, "score", Severity.warning)
    assert "q-prime" in d.message and "0.5 for 0" in d.message


def test_every_layout_gives_the_same_analysis(bank) -> None:
    a = [analyse(read_responses(FIX / f, bank)).items
         for f in ("hand.csv", "moodle-responses.csv", "canvas-student-analysis.csv")]
    assert a[0] == a[1] == a[2]


def test_sniff_refuses_an_unknown_header() -> None:
    with pytest.raises(UsageError, match="not a responses file"):
        sniff(["student", "q1", "q2"])


# --- assembled forms: question numbers and letters through the key file -------------------------


def _key(form: str) -> dict:
    return json.loads((FORMS / form / f"{form}-key.json").read_text(encoding="utf-8"))


def test_letters_of_the_key_score_full_marks_on_every_form(seed, tmp_path: Path) -> None:
    lines = ["person,form,item,response"]
    for form, label in (("dp-quiz-a", "A"), ("dp-quiz-b", "B")):
        for row in _key(form)["items"]:
            lines.append(f"{label}1,{label},{row['position']},{';'.join(row['key'])}")
            lines.append(f"{label}2,{form},{row['position']},A")
    r = read_responses(write(tmp_path, "\n".join(lines) + "\n"), seed, keys=FORMS)
    t = table(r)
    for form, label in (("dp-quiz-a", "A"), ("dp-quiz-b", "B")):
        for row in _key(form)["items"]:
            assert t[(f"{label}1", row["item"])] == (1.0, frozenset(row["key_ids"]))
            # "A" is the first option printed on that form
            first = row["options"][0]
            assert t[(f"{label}2", row["item"])] == (float(first in row["key_ids"]),
                                                    frozenset({first}))


def test_one_key_file_selects_its_form(seed, tmp_path: Path) -> None:
    key = FORMS / "dp-quiz-a" / "dp-quiz-a-key.json"
    path = write(tmp_path, "person,form,item,response\nx,A,1,A\nx,A,2,B\ny,B,1,C\n")
    r = read_responses(path, seed, keys=key)
    assert r.persons == ["x"]
    [d] = r.problems.diagnostics()
    assert d.line == 4 and "form 'B' passed over" in d.message


def test_a_sheet_without_form_column_and_one_key(seed, tmp_path: Path) -> None:
    key = FORMS / "dp-quiz-b" / "dp-quiz-b-key.json"
    first = _key("dp-quiz-b")["items"][0]
    r = read_responses(write(tmp_path, f"person,item,response\nx,1,{first['key'][0]}\n"), seed,
                       keys=key)
    assert table(r)[("x", first["item"])][0] == 1.0


def test_a_form_id_filters_rows(bank, tmp_path: Path) -> None:
    path = write(tmp_path, "person,form,item,response\na,X,q-sun,true\nb,Y,q-sun,false\n")
    r = read_responses(path, bank, form="Y")
    assert r.persons == ["b"]


def test_letters_without_a_key_file(bank, tmp_path: Path) -> None:
    with pytest.raises(ResponsesError) as exc:
        read_responses(write(tmp_path, "person,item,response\na,q-sun,true\na,q-capital,B\n"
                                       "a,3,B\n"), bank)
    [(l1, f1, m1), (l2, f2, m2)] = errors(exc)
    assert (l1, f1) == (3, "response") and "answer-key file" in m1
    assert (l2, f2) == (4, "item") and "question number 3" in m2


def test_a_key_file_of_another_bank(bank) -> None:
    with pytest.raises(ResponsesError) as exc:
        read_responses(FIX / "hand.csv", bank, keys=FORMS / "dp-quiz-a" / "dp-quiz-a-key.json")
    messages = [m for _, _, m in errors(exc)]
    assert any("'dp-gpu-holds' is not in bank 'stats-demo'" in m for m in messages)


# --- bad input, each with its line --------------------------------------------------------------


# after the header (line 1) and a good row (line 2), the rows below start at line 3
BAD = [
    ("a,q-sun,true\na,q-sun,false\n", 4, "response", "answers item 'q-sun' again (first at line 3)"),
    ("a,q-nope,true\n", 3, "item", "item 'q-nope' is not in bank 'stats-demo'"),
    ("a,q-capital,paris\n", 3, "response", "'paris' is no option of item 'q-capital'"),
    ("a,q-capital,E\n", 3, "response", "letters need the form's answer-key file"),
    ("a,q-prime,two;two\n", 3, "response", "option 'two' given twice"),
    (",q-sun,true\n", 3, "person", "no person"),
    ("a,q-sun\n", 3, "", "2 fields, but the header has 3"),
    ('a,q-sun,"tr\nue"\nb,q-nope,true\n', 5, "item", "item 'q-nope'"),  # a record of two lines
]


@pytest.mark.parametrize(("rows", "line", "field", "message"), BAD)
def test_bad_rows_are_errors_at_their_line(bank, tmp_path: Path, rows: str, line: int,
                                           field: str, message: str) -> None:
    path = write(tmp_path, "person,item,response\na,q-water,c100\n" + rows)
    with pytest.raises(ResponsesError) as exc:
        read_responses(path, bank)
    found = errors(exc)
    assert any(ln == line and f == field and message in m for ln, f, m in found), found


@pytest.mark.parametrize(("value", "message"), [("abc", "score 'abc' is not a number"),
                                                ("nan", "outside 0 to 1"), ("2", "outside 0 to 1"),
                                                ("-1", "outside 0 to 1")])
def test_bad_scores(bank, tmp_path: Path, value: str, message: str) -> None:
    path = write(tmp_path, f"person,item,response,score\na,q-sun,true,1\nb,q-sun,true,{value}\n")
    with pytest.raises(ResponsesError) as exc:
        read_responses(path, bank)
    assert [(ln, f) for ln, f, m in errors(exc) if message in m] == [(3, "score")]


def test_a_decimal_comma_score_is_read(bank, tmp_path: Path) -> None:
    path = write(tmp_path, 'person,item,response,score\na,q-prime,two,"0,5"\n')
    assert not read_responses(path, bank).problems.diagnostics()  # 0.5 is what the key gives


def test_a_person_on_two_forms(bank, tmp_path: Path) -> None:
    path = write(tmp_path, "person,form,item,response\na,X,q-sun,true\na,Y,q-water,c90\n")
    with pytest.raises(ResponsesError) as exc:
        read_responses(path, bank)
    assert errors(exc)[0][:2] == (3, "form")


def test_a_file_for_another_bank(bank, tmp_path: Path) -> None:
    rows = "".join(f"p{i},dp-item-{i},a\n" for i in range(500))
    with pytest.raises(ResponsesError) as exc:
        read_responses(write(tmp_path, "person,item,response\n" + rows), bank)
    assert exc.value.errors == 501  # 500 rows and the summary
    messages = [str(d) for d in exc.value.diagnostics]
    assert any("another bank" in m for m in messages)
    assert any("300 more errors like these not shown" in m for m in messages)  # bounded


@pytest.mark.parametrize(("text", "message"), [
    ("", "the responses file is empty"),
    ("person,item,response\n", "header only"),
    ("\ufeffname,score\nx,1\n", "not a responses file"),
    ("person,item,response,person\n", "column 'person' twice"),
])
def test_files_that_are_usage_errors(bank, tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        read_responses(write(tmp_path, text), bank)


def test_not_utf8(bank, tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_bytes(b"person,item,response\nJos\xe9,q-sun,true\n")
    with pytest.raises(UsageError, match="not UTF-8"):
        read_responses(path, bank)


def test_an_item_without_a_row_was_not_received(bank, tmp_path: Path) -> None:
    path = write(tmp_path, "person,item,response\na,q-sun,true\na,q-water,c100\nb,q-sun,true\n")
    r = read_responses(path, bank)
    [d] = r.problems.diagnostics()
    assert d.severity is Severity.warning and "q-water" in d.message and "'b'" in d.message
    s = analyse(r).item("q-water")
    assert (s.n, s.missing, s.omitted, s.p) == (1, 1, 0, 1.0)


def test_forms_with_different_items(bank, tmp_path: Path) -> None:
    path = write(tmp_path, "person,form,item,response\na,X,q-sun,true\nb,Y,q-water,c90\n")
    with pytest.raises(UsageError, match="analyse one form at a time"):
        analyse(read_responses(path, bank))


# --- the LMS layouts' own problems --------------------------------------------------------------


MOODLE_HEAD = '"Last name","First name","ID number","State","Question 1","Response 1"\n'


def test_moodle_without_question_columns(bank, tmp_path: Path) -> None:
    path = write(tmp_path, '"Last name","First name","Response 1"\n"A","B","Jakarta"\n')
    with pytest.raises(UsageError, match="tick 'Question text'"):
        read_responses(path, bank)


def test_moodle_unmatched_question_and_response(bank, tmp_path: Path) -> None:
    path = write(tmp_path, MOODLE_HEAD
                 + '"A","B","s1","Finished","What is the capital of Malaysia?: Kuala Lumpur","Kuala Lumpur"\n'
                 + '"C","D","s2","Finished","What is the capital of Malaysia?: Kuala Lumpur","Kuala Lumpur"\n'
                 + '"E","F","s3","Finished","The sun is a star.","Maybe"\n')
    with pytest.raises(ResponsesError) as exc:
        read_responses(path, bank)
    found = errors(exc)
    assert (2, "Question 1") in [(ln, f) for ln, f, _ in found]  # tallied: once, with a count
    assert any("2 times" in m and "matches no item" in m for _, _, m in found)
    assert (4, "Response 1") in [(ln, f) for ln, f, _ in found]


def test_moodle_two_attempts_of_one_person(bank, tmp_path: Path) -> None:
    row = '"A","B","s1","Finished","The sun is a star.","True"\n'
    with pytest.raises(ResponsesError) as exc:
        read_responses(write(tmp_path, MOODLE_HEAD + row + row), bank)
    [(line, _, message)] = errors(exc)
    assert line == 3 and "one attempt per person" in message


def test_moodle_row_without_answers_is_reported(bank, tmp_path: Path) -> None:
    path = write(tmp_path, MOODLE_HEAD + '"A","B","s1","Finished","The sun is a star.","True"\n'
                 '"C","D","s2","Never submitted","-","-"\n')
    r = read_responses(path, bank)
    assert r.persons == ["s1"]
    lines = {(d.line, d.field): d.message for d in r.problems.diagnostics()}
    assert "passed over" in lines[(3, "")] and "attempts not finished" in lines[(3, "State")]


def test_moodle_right_answer_that_differs_from_the_key(bank, tmp_path: Path) -> None:
    path = write(tmp_path, '"ID number","Question 1","Response 1","Right answer 1"\n'
                 '"s1","What is the capital of Indonesia?: Jakarta; Bandung; Medan; Surabaya",'
                 '"Bandung","Bandung"\n')
    [d] = read_responses(path, bank).problems.diagnostics()
    assert d.field == "Right answer 1" and "not the bank's key" in d.message


def test_canvas_question_not_in_the_bank(bank, tmp_path: Path) -> None:
    path = write(tmp_path, "name,id,7: What is the capital of Malaysia?,1.0,score\nA,1,KL,1,1\n")
    with pytest.raises(ResponsesError) as exc:
        read_responses(path, bank)
    assert (1, "question 7") in [(ln, f) for ln, f, _ in errors(exc)]


def test_canvas_question_a_person_did_not_get(bank, tmp_path: Path) -> None:
    path = write(tmp_path, "name,id,1: The sun is a star.,1.0,2: At sea level; water boils at,1.0\n"
                 "A,1,True,1,,\n")
    path.write_text(path.read_text().replace("; water", ", water").replace(
        "2: At sea level, water boils at", '"2: At sea level, water boils at"'), encoding="utf-8")
    r = read_responses(path, bank)
    assert sorted(r.columns) == ["q-sun"]  # nothing of q-water: not in this submission


def test_a_response_text_naming_two_options_is_split(bank) -> None:
    from dpassess.stats.text import TextIndex

    index = TextIndex(bank)
    prime = bank.get("q-prime")
    assert index.choices(prime, "3, an odd prime; 2", "; ") == frozenset({"two", "three"})
    assert index.choices(prime, "23, an odd prime", "; ") == frozenset({"two", "three"})
    assert isinstance(index.choices(prime, "7", "; "), str)
    assert score(prime, Response(frozenset({"two", "three"}))) == 1.0


def test_a_repeated_bad_value_is_an_error_on_every_line_and_good_ones_score_alike(
        bank, tmp_path: Path) -> None:
    """Forms, items and responses are resolved once each: an error is still reported at each
    line that has it, and the same response scores the same for every person."""
    rows = "".join(f"p{k},q-capital,paris\np{k},q-nope,true\np{k},q-prime,two;three\n"
                   for k in range(3))
    path = write(tmp_path, "person,item,response\n" + rows)
    with pytest.raises(ResponsesError) as exc:
        read_responses(path, bank)
    found = errors(exc)
    assert [ln for ln, f, _ in found if f == "response"] == [2, 5, 8], found
    assert [ln for ln, f, _ in found if f == "item"] == [3, 6, 9], found
    good = write(tmp_path, "person,item,response\n" + "".join(
        f"p{k},q-prime,two;three\np{k},q-capital,\n" for k in range(3)), "good.csv")
    t = table(read_responses(good, bank))
    assert {t[(f"p{k}", "q-prime")] for k in range(3)} == {(1.0, frozenset({"two", "three"}))}
    assert {t[(f"p{k}", "q-capital")] for k in range(3)} == {(0.0, frozenset())}
