"""Description items (text only) on assembled forms, worked by hand: by default they do not count
towards a blueprint's `items` (nor its cells, overlap or mean p), `descriptions_count: true`
makes them count, a description stays in its place before its item set, and only the scored
items are numbered (the form, the key files and the answer sheet alike)."""

from __future__ import annotations

import json
from pathlib import Path

import lxml.html
import pytest
import yaml

from dpassess.assemble import Assembly, BlueprintError, Infeasible, assemble_problem
from dpassess.assemble.output import key_csv, key_rows, summary_data
from dpassess.assemble.paper import Paper, paper_html
from dpassess.assemble.problem import resolve
from dpassess.assemble.sheet import layout
from dpassess.bank.load import load_bank
from dpassess.model.blueprint import Blueprint

pytest.importorskip("ortools")


SCORED = {"s1", "s2", "q1", "q2", "q3", "q4"}


def _choice(item_id: str, **extra: object) -> dict[str, object]:
    return {"schema": 1, "id": item_id, "type": "single_choice", "topic": "t/a",
            "status": "reviewed", "options": ["r", "w"], "key": "r", **extra,
            "text": {"en": {"stem": f"Question {item_id}?",
                            "options": {"r": "Right", "w": "Wrong"}}}}


def _description(item_id: str, **extra: object) -> dict[str, object]:
    return {"schema": 1, "id": item_id, "type": "description", "topic": "t/a",
            "status": "reviewed", **extra, "text": {"en": {"stem": f"Read this ({item_id})."}}}


@pytest.fixture(scope="module")
def bank_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Bank order (file names): the intro (a description, anchored below), a loose description
    (never drawn), the set's description, the set's two items, four free items."""
    root = tmp_path_factory.mktemp("bank")
    (root / "bank.yaml").write_text(yaml.safe_dump({
        "schema": 1, "id": "bank-b", "title": {"en": "B"}, "languages": ["en"],
        "default_language": "en"}), encoding="utf-8")
    files = {
        "00-intro": _description("intro"),
        "01-loose": _description("loose"),
        "02-table": {"schema": 1, "type": "stimulus", "id": "table",
                     "text": {"en": {"text": "A table."}}},
        "03-set-read": _description("set-read", stimulus="table"),
        "04-s1": _choice("s1", stimulus="table"),
        "05-s2": _choice("s2", stimulus="table"),
        **{f"1{n}-q{n}": _choice(f"q{n}") for n in range(1, 5)},
    }
    for name, data in files.items():
        (root / f"{name}.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    return root


def assembled(bank_dir: Path, **over: object) -> Assembly:
    data = {"id": "bp", "bank": ".", "forms": 2, "items": 4, "anchors": ["intro", "s1"],
            "order": "fixed", "shuffle_options": False, **over}
    return assemble_problem(resolve(Blueprint.model_validate(data), "<bp>", load_bank(bank_dir)))


def test_by_default_a_form_has_its_items_scored_and_its_descriptions_on_top(bank_dir: Path):
    a = assembled(bank_dir)
    for form in a.forms:
        ids = [fi.source.id for fi in form.items]
        # 4 scored items (s1, s2 and two of q1..q4), the anchored intro and the set's
        # description on top; the loose description is never drawn; bank order (fixed)
        assert len([i for i in ids if i in SCORED]) == 4
        assert ids[:4] == ["intro", "set-read", "s1", "s2"]
        assert "loose" not in ids
        # only scored items are numbered, 1..4 in form order
        assert [(fi.source.id, fi.position) for fi in form.items][:4] == [
            ("intro", 0), ("set-read", 0), ("s1", 1), ("s2", 2)]
        assert [fi.position for fi in form.items[4:]] == [3, 4]
        assert form.items[1].stimulus == "table"  # printed once, with the set's first item
        # the key files and the answer sheet have a row per numbered item
        assert [r["position"] for r in key_rows(form, ["en"])] == [1, 2, 3, 4]
        assert [r["item"] for r in key_rows(form, ["en"])] == ids[2:]
        lines = key_csv(form, ["en"]).decode().splitlines()
        assert [line.split(",")[1] for line in lines[1:]] == ["1", "2", "3", "4"]
        rows = [r for page in layout(form).pages for r in page.rows]
        assert [(r.position, r.item) for r in rows] == [(n, i) for n, i in
                                                        enumerate(ids[2:], 1)]
    data = summary_data(a.problem, a.selection, a.forms, a.seed)
    assert [f["count"] for f in data["forms"]] == [4, 4]
    assert [f["points"] for f in data["forms"]] == [4, 4]


def test_the_printed_form_numbers_the_questions_and_not_the_descriptions(bank_dir: Path):
    a = assembled(bank_dir)
    form = a.forms[0]
    paper = Paper(form, "en", "B", False, a.problem.bank)
    page = lxml.html.fromstring(paper_html(paper))
    assert [n.text for n in page.xpath('//ol[@class="items"]//span[@class="num"]')] == ["1.", "2.", "3.", "4."]
    assert [li.get("id") for li in page.xpath('//ol[@class="items"]/li')] == [
        None, None, "q1", "q2", "q3", "q4"]
    text = page.text_content()
    assert "Read this (intro)." in text and "Read this (set-read)." in text
    assert "4 items · 4 points" in paper.summary()
    # the stimulus note names the set's questions, 1-2 (not the description before them)
    assert paper.stimulus_note(form.items[1]) == paper.w["read"].format(a=1, b=2)
    key = Paper(form, "en", "B", True, a.problem.bank)
    rows = lxml.html.fromstring(paper_html(key)).xpath('//section[@class="answers"]//tr')
    assert [r[0].text for r in rows[1:]] == ["1", "2", "3", "4"]


def test_descriptions_count_when_the_blueprint_says_so(bank_dir: Path):
    # items: 4 with descriptions counting: intro + set-read + s1 + s2 fill each form
    a = assembled(bank_dir, descriptions_count=True)
    for form in a.forms:
        assert [fi.source.id for fi in form.items] == ["intro", "set-read", "s1", "s2"]
        assert [fi.position for fi in form.items] == [0, 0, 1, 2]
    data = summary_data(a.problem, a.selection, a.forms, a.seed)
    assert [f["count"] for f in data["forms"]] == [4, 4]
    assert [f["points"] for f in data["forms"]] == [2, 2]


def test_a_description_is_no_item_for_the_bank_supply_or_the_overlap(bank_dir: Path):
    # 2 forms of 4 scored items sharing at most 1 free item: s1 is an anchor and s2 comes
    # with it (its set), so the forms share s2 alone and split q1..q4 between them
    a = assembled(bank_dir, max_overlap=1)
    first, second = ({fi.source.id for fi in f.items} for f in a.forms)
    assert first & second == {"intro", "set-read", "s1", "s2"}
    assert len(first | second) == 8
    assert summary_data(a.problem, a.selection, a.forms, a.seed)["overlap"] == [[4, 1], [1, 4]]
    # counted, the set's description is a second shared item: the same forms (now of 6) are
    # refused
    with pytest.raises((Infeasible, BlueprintError)):
        assembled(bank_dir, max_overlap=1, descriptions_count=True, items=6)


def test_a_cell_counts_no_description_unless_descriptions_count(bank_dir: Path):
    cell = {"topic": "t/a", "count": 4}
    a = assembled(bank_dir, forms=1, cells=[cell])
    assert sum(fi.numbered for fi in a.forms[0].items) == 4
    a = assembled(bank_dir, forms=1, cells=[cell], descriptions_count=True)
    assert [fi.source.id for fi in a.forms[0].items] == ["intro", "set-read", "s1", "s2"]


def test_the_field_is_in_the_blueprint_schema():
    from dpassess.model.schemas import json_schema

    props = json.loads(json.dumps(json_schema("blueprint")))["properties"]
    assert props["descriptions_count"]["default"] is False
