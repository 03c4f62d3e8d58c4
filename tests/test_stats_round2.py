"""After the exam, round 2: reproductions of what broke around the (exact) statistics, each
checked against a hand-worked figure or an independent computation: an unreceived question,
ties at the edge of the 27% groups, several forms in one file, a key that does not fit, a
re-download, the wide paper sheet, Moodle's Grades report and Responses report in other
settings."""

from __future__ import annotations

import random
from dataclasses import asdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT
from dpassess import load_bank
from dpassess.stats import analyse, read_responses

FIX = ROOT / "tests" / "fixtures" / "stats"


@pytest.fixture(scope="module")
def bank():
    return load_bank(FIX / "bank")


def write(tmp_path: Path, text: str, name: str = "r.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- 1. a question a student never received is missing, not wrong ------------------------------


def _half_received(n: int = 40) -> str:
    """40 persons; q-sun for all (right for the first 24), q-water for the even ones only (12
    of the 20 right: p 0.6)."""
    rows = ["person,item,response"]
    for i in range(n):
        rows.append(f"s{i:02d},q-sun,{'true' if i < 24 else 'false'}")
        if i % 2 == 0:
            rows.append(f"s{i:02d},q-water,{'c100' if i < 24 else 'c90'}")
    return "\n".join(rows) + "\n"


def test_an_unreceived_question_is_missing_not_wrong(bank, tmp_path: Path) -> None:
    s = analyse(read_responses(write(tmp_path, _half_received()), bank)).item("q-water")
    assert (s.n, s.missing, s.omitted) == (20, 20, 0)
    assert s.p == pytest.approx(0.6, abs=1e-12)
    assert "negative-discrimination" not in s.flags


def test_an_empty_response_is_an_omission(bank, tmp_path: Path) -> None:
    text = "person,item,response\na,q-sun,true\na,q-water,c100\nb,q-sun,true\nb,q-water,\n"
    s = analyse(read_responses(write(tmp_path, text), bank)).item("q-water")
    assert (s.n, s.missing, s.omitted, s.p) == (2, 0, 1, 0.5)


def test_a_canvas_question_from_a_group_not_received_is_missing(bank, tmp_path: Path) -> None:
    head = ("name,id,sis_id,submitted,attempt,101: What is the capital of Indonesia?,1.0,"
            "102: The sun is a star.,1.0,n correct,n incorrect,score")
    rows = [head]
    for i in range(10):
        capital = ("Jakarta,1.0" if i < 3 else "Bandung,0.0") if i % 2 == 0 else ","
        rows.append(f"P{i},{100 + i},S{i},2025-03-01 08:00:00 UTC,1,{capital},True,1.0,1,0,1.0")
    s = analyse(read_responses(write(tmp_path, "\n".join(rows) + "\n"), bank)).item("q-capital")
    assert (s.n, s.missing) == (5, 5)
    assert s.p == pytest.approx(2 / 5)


# --- 4. ties at the edge of the upper and lower groups ------------------------------------------


def test_relabelling_persons_changes_no_statistic(bank, tmp_path: Path) -> None:
    """The issue's case: 40 persons with many tied totals; any relabelling, same figures."""
    rng = random.Random(4)
    items = {"q-capital": ("jakarta", "bandung"), "q-sun": ("true", "false"),
             "q-water": ("c100", "c90")}
    answers = [{i: rng.choice(o) for i, o in items.items()} for _ in range(40)]

    def figures(labels: list[str]) -> list[dict[str, object]]:
        rows = ["person,item,response"]
        for label, a in zip(labels, answers, strict=True):
            rows += [f"{label},{i},{r}" for i, r in a.items()]
        path = write(tmp_path, "\n".join(rows) + "\n", f"{labels[0]}.csv")
        return [asdict(s) for s in analyse(read_responses(path, bank)).items]

    base = figures([f"s{i:02d}" for i in range(40)])
    for seed in range(3):
        labels = [f"x{i:02d}" for i in range(40)]
        random.Random(seed).shuffle(labels)
        assert figures(labels) == base


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_permuting_person_ids_leaves_every_statistic_unchanged(tmp_path_factory, bank,
                                                               data: st.DataObject) -> None:
    n = data.draw(st.integers(4, 30))
    choices = {"q-capital": ["jakarta", "bandung", "medan", ""], "q-sun": ["true", "false", ""],
               "q-water": ["c100", "c90", "c80", ""], "q-prime": ["two;three", "two", "four", ""]}
    answers = [{i: data.draw(st.sampled_from(o)) for i, o in choices.items()} for _ in range(n)]
    perm = data.draw(st.permutations(range(n)))
    folder = tmp_path_factory.mktemp("perm")

    def run(labels: list[str], name: str) -> tuple[object, ...]:
        rows = ["person,item,response"]
        for label, a in zip(labels, answers, strict=True):
            rows += [f"{label},{i},{r}" for i, r in a.items()]
        a = analyse(read_responses(write(folder, "\n".join(rows) + "\n", name), bank))
        test = asdict(a.test)
        return tuple(asdict(s) for s in a.items), test

    assert run([f"p{i:03d}" for i in range(n)], "a.csv") == \
        run([f"p{perm[i]:03d}" for i in range(n)], "b.csv")


# --- 3. several forms in one file; 6. a re-download updates its record --------------------------

import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

MAIN = "import sys, dpassess.cli.stats; from dpassess.cli import main; main(sys.argv[1:])"


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", MAIN, "stats", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def bank_dir(tmp_path: Path) -> Path:
    dst = tmp_path / "bank"
    shutil.copytree(FIX / "bank", dst)
    return dst


TWO_FORMS = ("person,form,item,response\n"
             + "".join(f"a{i},A,q-sun,{'true' if i % 3 else 'false'}\n"
                       f"a{i},A,q-capital,{'jakarta' if i % 2 else 'medan'}\n" for i in range(6))
             + "".join(f"b{i},B,q-water,{'c100' if i % 2 else 'c90'}\n"
                       f"b{i},B,q-capital,{'jakarta' if i % 3 else 'bandung'}\n" for i in range(6)))


def test_write_records_each_form_of_one_file(bank_dir: Path, tmp_path: Path) -> None:
    path = write(tmp_path, TWO_FORMS)
    r = run(path, "--bank", bank_dir, "--write")
    assert r.returncode == 0, r.stderr
    records = sorted((bank_dir / "stats").glob("*.json"))
    assert [p.name[-7:] for p in records] == ["-a.json", "-b.json"]
    data = [json.loads(p.read_text(encoding="utf-8")) for p in records]
    assert [(d["administration"]["form"], sorted(d["items"])) for d in data] == [
        ("A", ["q-capital", "q-sun"]), ("B", ["q-capital", "q-water"])]
    assert [d["test"]["n"] for d in data] == [6, 6]
    # the same file again: refused, nothing new
    again = run(path, "--bank", bank_dir, "--write")
    assert again.returncode == 2 and "already recorded" in again.stderr
    assert len(list((bank_dir / "stats").glob("*.json"))) == 2


def test_write_form_by_form_from_one_file(bank_dir: Path, tmp_path: Path) -> None:
    """The issue's way: `--form A --write`, then `--form B --write` from the same file: each
    form is recorded (as that form); the same form again is refused."""
    path = write(tmp_path, TWO_FORMS)
    for form in ("A", "B"):
        r = run(path, "--bank", bank_dir, "--form", form, "--write")
        assert r.returncode == 0, r.stderr
        assert f"form {form}" in r.stdout.splitlines()[0] or f"paket {form}" in r.stdout
    records = sorted((bank_dir / "stats").glob("*.json"))
    data = [json.loads(p.read_text(encoding="utf-8")) for p in records]
    assert [(p.name[-7:], d["administration"]["form"], d["test"]["n"])
            for p, d in zip(records, data, strict=True)] == [("-a.json", "A", 6), ("-b.json", "B", 6)]
    again = run(path, "--bank", bank_dir, "--form", "A", "--write")
    assert again.returncode == 2 and "already recorded" in again.stderr
    assert len(list((bank_dir / "stats").glob("*.json"))) == 2


def _moodle_quiz(prefix: str, slots: list[tuple[str, tuple[str, str]]], n: int = 30,
                 head: str = "") -> str:
    """A Moodle Responses download of `n` attempts: slot (question summary, (right response,
    wrong response)); every third attempt wrong, so the items discriminate."""
    cols = ",".join(f'"Question {k}","Response {k}"' for k in range(1, len(slots) + 1))
    rows = [head or f'"Last name","First name","Email address","State","Started on",{cols}']
    for i in range(n):
        cells = ",".join(f'"{q}","{r[0] if i % 3 else r[1]}"' for q, r in slots)
        rows.append(f'"{prefix}{i}","X","{prefix}{i}@example.org","Finished",'
                    f'"1 March 2025  08:{i:02d} AM",{cells}')
    return "\n".join(rows) + "\n"


CAPITAL = ("What is the capital of Indonesia?: Jakarta; Bandung; Surabaya; Medan",
           ("Jakarta", "Bandung"))


def test_two_moodle_quizzes_downloaded_into_one_file_are_two_forms(bank_dir: Path,
                                                                    tmp_path: Path) -> None:
    """One quiz per form, the second download pasted below the first (its header too, in the
    Indonesian interface): each quiz is analysed as a form of its own, and recorded apart."""
    from dpassess.stats import analyse_forms
    quiz_b_head = ('"Nama belakang","Nama depan","Alamat email","Status","Dimulai pada",'
                   '"Pertanyaan 1","Respons 1","Pertanyaan 2","Respons 2"')
    text = (_moodle_quiz("a", [("The sun is a star.", ("True", "False")), CAPITAL])
            + _moodle_quiz("b", [("At sea level, water boils at: 90 °C; 100 °C; 80 °C",
                                  ("100 °C", "90 °C")), CAPITAL], n=20, head=quiz_b_head))
    path = write(tmp_path, text)
    a, b = analyse_forms(read_responses(path, load_bank(bank_dir)))
    assert (a.form, sorted(s.item for s in a.items), a.test.n) == (
        "quiz 1", ["q-capital", "q-sun"], 30)
    assert (b.form, sorted(s.item for s in b.items), b.test.n) == (
        "quiz 2", ["q-capital", "q-water"], 20)
    assert a.item("q-sun").p == pytest.approx(20 / 30) and a.test.kr20 is not None
    assert b.item("q-water").missing == 0 and b.test.kr20 is not None
    r = run(path, "--bank", bank_dir, "--write")
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in (bank_dir / "stats").glob("*.json"))
    assert [n[-11:] for n in names] == ["quiz-1.json", "quiz-2.json"]


def test_two_canvas_quizzes_downloaded_into_one_file_are_two_forms(bank: object,
                                                                    tmp_path: Path) -> None:
    from dpassess.stats import analyse_forms

    def quiz(first: int, question: str, answers: tuple[str, str]) -> str:
        rows = [f"name,id,sis_id,submitted,attempt,{question},1.0,n correct,n incorrect,score"]
        for i in range(first, first + 9):
            got = (answers[0], "1.0") if i % 3 else (answers[1], "0.0")
            rows.append(f"P{i},{100 + i},S{i},2025-03-01 08:00:00 UTC,1,{got[0]},{got[1]},"
                        f"1,0,{got[1]}")
        return "\n".join(rows) + "\n"

    text = (quiz(0, "101: What is the capital of Indonesia?", ("Jakarta", "Bandung"))
            + quiz(9, "102: The sun is a star.", ("True", "False")))
    a, b = analyse_forms(read_responses(write(tmp_path, text), bank))
    assert [(x.form, [s.item for s in x.items], x.test.n) for x in (a, b)] == [
        ("quiz 1", ["q-capital"], 9), ("quiz 2", ["q-sun"], 9)]


def _moodle(n: int) -> str:
    head = '"Last name","First name","Email address","State","Started on","Question 1","Response 1"'
    rows = [head]
    for i in range(n):
        rows.append(f'"P{i}","X","p{i}@example.org","Finished","1 March 2025  08:{i:02d} AM",'
                    f'"The sun is a star.","{"True" if i % 3 else "False"}"')
    return "\n".join(rows) + "\n"


def test_a_moodle_download_again_after_one_more_attempt_updates_its_record(
        bank_dir: Path, tmp_path: Path) -> None:
    first = write(tmp_path, _moodle(40), "first.csv")
    assert run(first, "--bank", bank_dir, "--write").returncode == 0
    second = write(tmp_path, _moodle(41), "second.csv")
    r = run(second, "--bank", bank_dir, "--write")
    assert r.returncode == 0, r.stderr
    assert "replaces" in r.stderr
    [record] = (bank_dir / "stats").glob("*.json")
    data = json.loads(record.read_text(encoding="utf-8"))
    assert data["items"]["q-sun"]["n"] == 41
    assert data["administration"]["responses"] == "second.csv"
    assert not any("p1@example.org" in a for a in data["administration"]["attempts"])
    from dpassess.stats.history import observed
    seen, _ = observed(load_bank(bank_dir))
    assert seen["q-sun"].n == 41  # not 81


# --- 2. Moodle's Responses report as Moodle shows it --------------------------------------------


def _bank_with(tmp_path: Path, files: dict[str, str]) -> Path:
    dst = tmp_path / "bank"
    shutil.copytree(FIX / "bank", dst)
    for name, text in files.items():
        (dst / name).write_text(text, encoding="utf-8")
    return dst


IMAGE_ITEM = """schema: 1
id: q-flag
type: single_choice
topic: geo
options: [red-white, white-red]
key: red-white
text:
  id:
    stem: "Bendera mana ini? ![Bendera merah putih](flag.png)"
    options: {red-white: Merah putih, white-red: Putih merah}
  en:
    stem: "Which flag is this? ![A red and white flag](flag.png)"
    options: {red-white: Red over white, white-red: White over red}
"""

STIMULUS = """schema: 1
type: stimulus
id: s-river
text:
  id: {text: "Sungai Kapuas adalah sungai terpanjang di Indonesia."}
  en: {text: "The Kapuas is the longest river in Indonesia."}
"""

STIMULUS_ITEM = """schema: 1
id: q-river
type: single_choice
topic: geo
stimulus: s-river
options: [kapuas, musi]
key: kapuas
text:
  id:
    stem: Sungai apa yang terpanjang?
    options: {kapuas: Kapuas, musi: Musi}
  en:
    stem: Which river is the longest?
    options: {kapuas: Kapuas, musi: Musi}
"""


def test_moodle_images_stimuli_multilang_off_and_indonesian_interface(tmp_path: Path) -> None:
    bank_dir = _bank_with(tmp_path, {"05-flag.yaml": IMAGE_ITEM, "06-stimulus.yaml": STIMULUS,
                                     "07-river.yaml": STIMULUS_ITEM})
    (bank_dir / "flag.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    bank = load_bank(bank_dir)
    # the interface in Indonesian; row 1 in English with an image as [alt text]; row 2 with the
    # stimulus before the stem; row 3 with the multilang filter off (both languages one after
    # the other)
    text = (
        '"Nama belakang","Nama depan","Alamat email","Status","Dimulai pada",'
        '"Pertanyaan 1","Respons 1","Jawaban benar 1","Pertanyaan 2","Respons 2","Jawaban benar 2"\n'
        '"A","B","a@x.org","Selesai","1 Mar","Which flag is this? [A red and white flag]: '
        'Red over white; White over red","Red over white","Red over white",'
        '"The Kapuas is the longest river in Indonesia. Which river is the longest?: Kapuas; '
        'Musi","Musi","Kapuas"\n'
        '"C","D","c@x.org","Selesai","1 Mar","Bendera mana ini? [Bendera merah putih]: '
        'Putih merah; Merah putih","Putih merah","Merah putih",'
        '"Sungai Kapuas adalah sungai terpanjang di Indonesia. Sungai apa yang terpanjang?: '
        'Musi; Kapuas","Kapuas","Kapuas"\n'
        '"E","F","e@x.org","Selesai","1 Mar","Bendera mana ini? [Bendera merah putih]Which '
        'flag is this? [A red and white flag]: Merah putihRed over white; Putih merahWhite over '
        'red","Merah putihRed over white","Merah putihRed over white",'
        '"Sungai Kapuas adalah sungai terpanjang di Indonesia.The Kapuas is the longest river '
        'in Indonesia.Sungai apa yang terpanjang?Which river is the longest?: Kapuas; Musi",'
        '"Kapuas","Kapuas"\n'
    )
    r = read_responses(write(tmp_path, text), bank)
    assert r.source.format == "moodle"
    a = analyse(r)
    assert a.item("q-flag").n == 3 and a.item("q-flag").p == pytest.approx(2 / 3)
    assert a.item("q-river").n == 3 and a.item("q-river").p == pytest.approx(2 / 3)
    assert r.persons == ["a@x.org", "c@x.org", "e@x.org"]
    assert [r.language_of(i) for i in range(3)] == ["en", "id", ""]


# --- 5. a key that does not fit the sheet -------------------------------------------------------

SEED = ROOT / "items" / "data-parallelism"
SEED_FORMS = ROOT / "exports" / "forms" / "data-parallelism"
sys.path.insert(0, str(ROOT / "benchmarks"))
import stats_end_to_end as e2e  # noqa: E402

sys.path.remove(str(ROOT / "benchmarks"))


def _rotated_sheet(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """A simulated bank of 30 items, form A printing the options in authoring order and form B
    rotated by one, and form B's sheet of 200 students (question numbers and letters, without
    its form column): (bank, sheet, key A, key B)."""
    import stats_sim
    bank_dir, responses = stats_sim.write(tmp_path / "sim", persons=200, k=30, seed=5)
    items = stats_sim.make_items(30, 5)
    shown = {}
    keys = {}
    for label, rotate in (("A", 0), ("B", 1)):
        rows = []
        for pos, it in enumerate(items, start=1):
            opts = list(it.options)
            if it.type != "true_false":
                opts = opts[rotate:] + opts[:rotate]
            shown[(label, it.id)] = opts
            rows.append({"position": pos, "item": it.id, "options": opts})
        keys[label] = tmp_path / f"sim-{label.lower()}-key.json"
        keys[label].write_text(json.dumps({"form": f"sim-{label.lower()}", "label": label,
                                           "items": rows}), encoding="utf-8")
    pos = {it.id: n for n, it in enumerate(items, start=1)}
    lines = ["person,item,response"]
    for row in responses.read_text(encoding="utf-8").splitlines()[1:]:
        person, _, item, response = row.split(",")
        letters = ";".join(chr(65 + shown[("B", item)].index(o)) for o in response.split(";")
                           if o)
        lines.append(f"{person},{pos[item]},{letters}")
    return bank_dir, write(tmp_path, "\n".join(lines) + "\n", "form-b.csv"), keys["A"], keys["B"]


def test_a_key_of_another_form_is_a_loud_warning_and_not_recorded(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        bank_dir, sheet, key_a, key_b = _rotated_sheet(tmp_path)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    bank = load_bank(bank_dir)
    right = analyse(read_responses(sheet, bank, keys=key_b))
    assert right.misfit == () and not [d for d in right.warnings if d.field == "key"]
    wrong = analyse(read_responses(sheet, bank, keys=key_a))
    assert len(wrong.misfit) >= 2  # the items the wrong key leaves right now disagree
    [d] = [d for d in wrong.warnings if d.field == "key"]
    assert "DOES NOT FIT" in d.message and "another form" in d.message
    r = run(sheet, "--bank", bank_dir, "--form", key_a, "--write")
    assert r.returncode == 2 and "not recorded" in r.stderr and "--force" in r.stderr
    assert not list((bank_dir / "stats").glob("*.json"))
    r = run(sheet, "--bank", bank_dir, "--form", key_a, "--write", "--force")
    assert r.returncode == 0 and len(list((bank_dir / "stats").glob("*.json"))) == 1


def test_a_letter_beyond_the_keys_options_is_refused(tmp_path: Path) -> None:
    from dpassess.stats import ResponsesError
    path = write(tmp_path, "person,item,response\nx,1,F\n")
    with pytest.raises(ResponsesError, match="key of this sheet's form"):
        read_responses(path, load_bank(SEED), keys=SEED_FORMS / "dp-quiz-a" / "dp-quiz-a-key.json")


def test_a_sheet_of_another_form_than_its_key_file_is_refused(tmp_path: Path) -> None:
    from dpassess.diagnostics import UsageError
    path = write(tmp_path, "person,form,item,response\nx,B,1,A\ny,B,2,B\n")
    with pytest.raises(UsageError, match="does not fit this sheet"):
        read_responses(path, load_bank(SEED), keys=SEED_FORMS / "dp-quiz-a" / "dp-quiz-a-key.json")


# --- 7. the wide paper sheet and letter answers -------------------------------------------------


def _key(form: str) -> dict:
    return json.loads((SEED_FORMS / form / f"{form}-key.json").read_text(encoding="utf-8"))


def test_the_wide_paper_sheet_as_teachers_type_it(tmp_path: Path) -> None:
    """One row per student, one column per question number, the form letter, lower-case
    letters, '-' or blank for no answer: the same scores as the long sheet."""
    bank = load_bank(SEED)
    rows, _ = e2e.simulate(SEED, 40, 7)
    long = write(tmp_path, "person,form,item,response\n"
                 + "".join(f"{p},{f},{q},{x}\n" for p, f, q, x, *_ in rows), "long.csv")
    by_person: dict[str, dict[str, str]] = {}
    forms: dict[str, str] = {}
    for p, f, q, x, *_ in rows:
        by_person.setdefault(p, {})[q] = x
        forms[p] = f
    numbers = sorted({q for _, _, q, *_ in rows}, key=int)
    lines = ["Nama,Kode," + ",".join(numbers)]
    for i, (p, answers) in enumerate(by_person.items()):
        cells = [answers.get(q, "") for q in numbers]
        cells = [("-" if i % 2 else "") if not c else c.lower() if i % 3 == 0 else c
                 for c in cells]
        lines.append(f"{p},{forms[p]}," + ",".join(cells))
    wide = write(tmp_path, "\n".join(lines) + "\n", "wide.csv")
    a = read_responses(long, bank, keys=SEED_FORMS)
    b = read_responses(wide, bank, keys=SEED_FORMS)
    assert b.source.format == "wide"
    assert [asdict(s) for s in analyse(a).items] == [asdict(s) for s in analyse(b).items]


def test_letter_answers_for_matching_and_ordering(tmp_path: Path) -> None:
    """`1-B, 2-A, 3-C` as the paper form prints a matching question; `B A C D` or `1-B, ...` for
    an ordering one: read through the form's key into the items' own ids."""
    from dpassess.model import Matching, Ordering
    bank = load_bank(ROOT / "tests" / "banks" / "kitchen-sink")
    matching = next(it for it in bank if isinstance(it, Matching))
    ordering = next(it for it in bank if isinstance(it, Ordering))
    key = {"form": "t", "label": "T", "items": [
        {"position": 1, "item": matching.id, "options": list(reversed(matching.response_ids))},
        {"position": 2, "item": ordering.id, "options": list(reversed(ordering.options))}]}
    key_file = tmp_path / "t-key.json"
    key_file.write_text(json.dumps(key), encoding="utf-8")
    shown_m = list(reversed(matching.response_ids))
    right_m = ", ".join(f"{n + 1}-{chr(65 + shown_m.index(pid))}"
                        for n, pid in enumerate(matching.pairs))
    shown_o = list(reversed(ordering.options))
    right_o = " ".join(chr(65 + shown_o.index(o)) for o in ordering.options)
    pairs_o = ", ".join(f"{n + 1}-{chr(97 + shown_o.index(o))}"
                        for n, o in enumerate(ordering.options))
    path = write(tmp_path, f'person,1,2\na,"{right_m}",{right_o}\nb,"{right_m.lower()}",'
                 f'"{pairs_o}"\nc,-,\n')
    s = analyse(read_responses(path, bank, keys=key_file))
    m, o = s.item(matching.id), s.item(ordering.id)
    assert (m.n, m.omitted, m.mean) == (3, 1, pytest.approx(2 * matching.points / 3))
    assert (o.n, o.omitted, o.mean) == (3, 1, pytest.approx(2 * ordering.points / 3))


# --- 8. Moodle's Grades report, as CSV or Excel -------------------------------------------------

GRADES = [  # the hand-worked example of test_stats_analysis (hand.csv) as Moodle's marks
    ("Satu", "P1@example.org", ["1.00", "1.00", "1.00", "2.00"]),
    ("Dua", "P2@example.org", ["1.00", "1.00", "1.00", "0.00"]),
    ("Tiga", "P3@example.org", ["1.00", "0.00", "1.00", "0.00"]),
    ("Empat", "P4@example.org", ["0.00", "1.00", "0.00", "0.00"]),
    ("Lima", "P5@example.org", ["1.00", "0.00", "-", "0.00"]),
]
GRADES_HEAD = ["Last name", "First name", "Email address", "State", "Started on", "Completed",
               "Time taken", "Grade/5.00", "Q. 1 /1.00", "Q. 2 /1.00", "Q. 3 /1.00", "Q. 4 /2.00"]


def _grades_rows() -> list[list[str]]:
    rows = [GRADES_HEAD]
    for last, email, marks in GRADES:
        rows.append([last, "Peserta", email, "Finished", "1 March 2025  08:00 AM",
                     "1 March 2025  08:20 AM", "20 mins", "-", *marks])
    rows.append(["Overall average", "", "", "", "", "", "", "2.40", "0.80", "0.60", "0.60",
                 "0.40"])
    return rows


def _grades_key(tmp_path: Path) -> Path:
    key = {"form": "demo", "label": "A", "items": [
        {"position": n, "item": i, "options": o} for n, (i, o) in enumerate([
            ("q-capital", ["jakarta", "bandung", "surabaya", "medan"]), ("q-sun", ["true", "false"]),
            ("q-water", ["c90", "c100", "c80"]), ("q-prime", ["two", "three", "four", "nine"])],
            start=1)]}
    path = tmp_path / "demo-key.json"
    path.write_text(json.dumps(key), encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", ["csv", "xlsx"])
def test_moodle_grades_report_marks_only(bank, tmp_path: Path, kind: str) -> None:
    rows = _grades_rows()
    if kind == "csv":
        import csv
        path = tmp_path / "grades.csv"
        with open(path, "w", encoding="utf-8", newline="") as fh:
            csv.writer(fh).writerows(rows)
    else:
        openpyxl = pytest.importorskip("openpyxl")
        book = openpyxl.Workbook()
        for row in rows:  # numbers as Excel holds them
            book.active.append([float(c) if c.replace(".", "").isdigit() else c for c in row])
        path = tmp_path / "grades.xlsx"
        book.save(path)
    r = read_responses(path, bank, keys=_grades_key(tmp_path))
    assert r.source.format == "moodle-grades"
    a = analyse(r)
    hand = analyse(read_responses(FIX / "hand.csv", bank))
    for s, h in zip(a.items, hand.items, strict=True):
        assert (s.item, s.n, s.p, s.d, s.r_pb) == (h.item, h.n, h.p, h.d, h.r_pb)
        assert s.options == () and "non-functional-distractor" not in s.flags
    assert a.test.kr20 == pytest.approx(28 / 51, abs=1e-12)
    assert any("no distractor analysis" in d.message for d in a.warnings)


def test_moodle_grades_report_without_a_key_says_what_to_do(bank, tmp_path: Path) -> None:
    from dpassess.diagnostics import UsageError
    path = write(tmp_path, "\n".join(",".join(r) for r in _grades_rows()) + "\n")
    with pytest.raises(UsageError, match="names no question"):
        read_responses(path, bank)


# --- Moodle's definitions side by side; the absolute difficulty flag ----------------------------


def test_moodle_statistics_as_moodle_computes_them(tmp_path: Path) -> None:
    """question/classes/statistics/questions/calculator.php, written out with numpy: sample
    (n - 1) moments; discriminative efficiency = covariance over the covariance of the two
    mark lists each sorted."""
    import numpy as np
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import stats_sim
    sys.path.remove(str(ROOT / "benchmarks"))
    bank_dir, responses = stats_sim.write(tmp_path, persons=300, k=12, seed=8)
    a = analyse(read_responses(responses, load_bank(bank_dir)))
    x = np.zeros((300, 12))
    ids = [s.item for s in a.items]
    bank = load_bank(bank_dir)
    from dpassess.stats import Response, score
    for line in responses.read_text(encoding="utf-8").splitlines()[1:]:
        person, _, item, resp = line.split(",")
        x[int(person[1:]) - 1, ids.index(item)] = score(
            bank.get(item), Response(frozenset(filter(None, resp.split(";")))))
    total = x.sum(axis=1)
    for j, s in enumerate(a.items):
        mark, other = x[:, j], total - x[:, j]
        n = len(mark)
        cov = ((mark - mark.mean()) * (other - other.mean())).sum() / (n - 1)
        covmax = ((np.sort(mark) - mark.mean()) * (np.sort(other) - other.mean())).sum() / (n - 1)
        var_m, var_o = mark.var(ddof=1), other.var(ddof=1)
        assert s.facility_index == pytest.approx(100 * mark.mean() / bank.get(s.item).points,
                                                 abs=1e-9)
        assert s.discrimination_index == pytest.approx(100 * cov / np.sqrt(var_m * var_o),
                                                       abs=1e-9)
        assert s.discriminative_efficiency == pytest.approx(100 * cov / covmax, abs=1e-9)
    out = run(responses, "--bank", bank_dir, "--format", "moodle")
    assert out.returncode == 0 and "Discriminative efficiency" in out.stdout
    assert f"{100 * a.test.alpha:.2f}%" in out.stdout


def test_the_absolute_difficulty_flag_is_configurable(bank, tmp_path: Path) -> None:
    path = FIX / "hand.csv"  # q-capital p 0.8, q-prime p 0.2
    r = run(path, "--bank", FIX / "bank", "--format", "json")
    flags = {i["item"]: i["flags"] for i in json.loads(r.stdout)["items"]}
    assert "too-easy" not in flags["q-capital"] and "too-hard" not in flags["q-prime"]
    r = run(path, "--bank", FIX / "bank", "--format", "json", "--too-easy", "0.75",
            "--too-hard", "0.25")
    flags = {i["item"]: i["flags"] for i in json.loads(r.stdout)["items"]}
    assert "too-easy" in flags["q-capital"] and "too-hard" in flags["q-prime"]
    assert json.loads(r.stdout)["thresholds"]["too_easy"] == 0.75
    r = run(path, "--bank", FIX / "bank", "--too-easy", "0.1", "--too-hard", "0.5")
    assert r.returncode == 2 and "too_hard" in r.stderr


# --- the Indonesian report to hand in ----------------------------------------------------------


def test_the_anates_report_gives_a_decision_per_item(bank, tmp_path: Path) -> None:
    import lxml.html

    from dpassess.stats.report_anates import decision
    out = tmp_path / "laporan.html"
    r = run(FIX / "hand.csv", "--bank", FIX / "bank", "--format", "anates", "--out", out)
    assert r.returncode == 0, r.stderr
    doc = lxml.html.fromstring(out.read_bytes())
    rows = doc.xpath("//table/tr[td]")
    a = analyse(read_responses(FIX / "hand.csv", bank))
    got = {row[1].text_content(): (row[3].text_content(), row[5].text_content(),
                                   row[-1].text_content()) for row in rows}
    assert got == {s.item: (f"{s.p:.2f}", f"{s.d:.2f}", decision(s)) for s in a.items}
    text = doc.text_content()
    assert "KR-20 0.549" in text and "SEM 0.78" in text and "Kepala Sekolah" in text
    # the hand-worked items: no flag -> diterima; a flag -> direvisi
    assert decision(a.item("q-water")) == "direvisi" and decision(a.item("q-sun")) == "direvisi"
    assert out.read_bytes() == run(FIX / "hand.csv", "--bank", FIX / "bank", "--format",
                                   "anates").stdout.encode("utf-8")


def test_decisions_by_the_stated_rule() -> None:
    from dataclasses import replace as copy

    from dpassess.stats.report_anates import decision
    a = analyse(read_responses(FIX / "hand.csv", load_bank(FIX / "bank")))
    s = a.item("q-capital")
    assert decision(copy(s, flags=())) == "diterima"
    assert decision(copy(s, flags=("negative-discrimination",))) == "dibuang"
    assert decision(copy(s, flags=("low-discrimination", "too-easy"))) == "dibuang"
    assert decision(copy(s, flags=("low-discrimination",))) == "direvisi"
    assert decision(copy(s, flags=("non-functional-distractor",))) == "direvisi"
