"""Form assembly: every form meets every constraint, keys point at keyed options in every
format and language, locked options stay put, output is deterministic, infeasible is explained.

Banks and blueprints are generated: a feasible blueprint is derived from randomly drawn
"witness" forms (so a solution is known to exist), an arbitrary one may be infeasible.
"""

from __future__ import annotations

import io
import math
import tempfile
import zipfile
from collections import Counter
from itertools import combinations, pairwise
from pathlib import Path

import lxml.etree as ET
import lxml.html
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT, files
from dpassess.assemble import (
    Assembly,
    BlueprintError,
    Infeasible,
    Status,
    assemble,
    assemble_problem,
    write_assembly,
)
from dpassess.assemble.forms import _movable, letter
from dpassess.assemble.problem import SCALE, Problem, resolve
from dpassess.export import MULTI
from dpassess.markup.markdown import to_html
from dpassess.model import Bank, ItemType, LoadedItem
from dpassess.model.blueprint import Blueprint
from strategies import bank_config, items

BLUEPRINT = ROOT / "blueprints" / "data-parallelism.yaml"
QTI = "{http://www.imsglobal.org/xsd/imsqti_v2p1}"


def make_bank(bank_items) -> Bank:
    return Bank(config=bank_config(), root=Path("<memory>"),
                entries=[LoadedItem(it, f"{it.id}.yaml") for it in bank_items])


def problem(bank: Bank, data: dict) -> Problem:
    data = {"statuses": ["draft", "reviewed"], **data}  # generated items are drafts
    return resolve(Blueprint.model_validate({"id": "bp", "bank": ".", **data}), "<bp>", bank)


# --- an independent check of every constraint --------------------------------------------------


def check(a: Assembly) -> None:
    pr, bp = a.problem, a.problem.blueprint
    assert a.selection.status in (Status.optimal, Status.feasible)
    assert len(a.forms) == bp.forms
    index = {it.id: n for n, it in enumerate(pr.items)}
    chosen = []
    enemies = {frozenset(p) for p in bp.enemies}
    for it in pr.items:
        enemies |= {frozenset((it.id, e)) for e in it.enemies}
    for form in a.forms:
        ids = [fi.source.id for fi in form.items]
        assert len(set(ids)) == len(ids)
        assert all(i in index for i in ids), "only eligible items"
        assert [fi.position for fi in form.items] == list(range(1, len(ids) + 1))
        s = set(ids)
        chosen.append(s)
        assert bp.items.min <= len(s) <= (bp.items.max or math.inf)
        for c in pr.cells:
            n = sum(1 for i in c.members if pr.items[i].id in s)
            assert c.cell.count.min <= n <= (c.cell.count.max if c.cell.count.max is not None
                                             else math.inf), c.label
        if bp.points is not None:
            pts = sum(fi.source.points for fi in form.items)
            assert bp.points.min - 1e-9 <= pts <= (bp.points.max or math.inf) + 1e-9
        assert set(bp.anchors) <= s
        for pair in combinations(sorted(s), 2):
            assert frozenset(pair) not in enemies, pair
        if bp.order == "fixed":
            assert sorted(ids, key=index.__getitem__) == ids
        if bp.order == "topic":
            first = {}
            for it in pr.items:
                first.setdefault(it.topic, index[it.id])
            ranks = [first[fi.source.topic] for fi in form.items]
            assert ranks == sorted(ranks)
        check_options(form, bp)
    if bp.max_overlap is not None:
        for x, y in combinations(chosen, 2):
            assert len((x & y) - set(bp.anchors)) <= bp.max_overlap
    if bp.balance is not None and bp.balance.tolerance is not None and len(chosen) > 1:
        means = [sum(pr.p[index[i]] for i in s) / (SCALE * len(s)) for s in chosen]
        assert max(means) - min(means) <= bp.balance.tolerance + 1e-9


def check_options(form, bp) -> None:
    for fi in form.items:
        src, it = fi.source, fi.item
        assert it.shuffle is False
        assert sorted(it.option_ids) == sorted(src.option_ids)
        assert it.key == src.key and it.text == src.text
        for p, o in enumerate(src.options):
            if o.locked:
                assert it.options[p] == o, "a locked option moved"
        if not (bp.shuffle_options and _movable(src)):
            assert it.options == src.options
        # the key letters name the keyed options in the form's order
        assert [it.option_ids[ord(k) - 65] for k in fi.key_letters] == fi.key_ids
        assert set(fi.key_ids) == set(src.key)
    n_opts = {len(fi.item.options) for fi in form.items}
    simple = all(_movable(fi.source) and len(fi.source.key) == 1
                 and not any(o.locked for o in fi.source.options) for fi in form.items)
    if bp.shuffle_options and bp.balance_keys and simple and len(n_opts) == 1:
        counts = Counter(fi.key_positions[0] for fi in form.items)
        per = [counts.get(p, 0) for p in range(n_opts.pop())]
        assert max(per) - min(per) <= 1, per


# --- generated banks and blueprints ------------------------------------------------------------


@st.composite
def banks(draw, min_size=3, max_size=10, plain=True):
    """Banks of choice items; their texts are plain words unless an export reads them (`plain`
    false): the assembler never reads a text, and hostile texts were most of these tests' time."""
    its = draw(st.lists(items(plain=plain), min_size=min_size, max_size=max_size,
                        unique_by=lambda i: i.id))
    p_values = draw(st.lists(st.none() | st.floats(0.05, 0.95), min_size=len(its),
                             max_size=len(its)))
    return [it.model_copy(update={"p_value": p}) for it, p in zip(its, p_values, strict=True)]


@st.composite
def witness_cases(draw, plain=True):
    """A bank and a blueprint that randomly drawn witness forms satisfy."""
    its = draw(banks(plain=plain))
    ids = [it.id for it in its]
    pos = {i: n for n, i in enumerate(ids)}
    forms = draw(st.integers(1, 3))
    n = draw(st.integers(1, len(its)))
    witness = [set(draw(st.permutations(ids))[:n]) for _ in range(forms)]
    common = sorted(set.intersection(*witness), key=pos.__getitem__)
    anchors = draw(st.lists(st.sampled_from(common), unique=True, max_size=2)) if common else []
    apart = [(a, b) for a, b in combinations(ids, 2) if not any({a, b} <= w for w in witness)]
    pairs = draw(st.lists(st.sampled_from(apart), unique=True, max_size=4)) if apart else []
    in_items = draw(st.lists(st.booleans(), min_size=len(pairs), max_size=len(pairs)))
    own = {}
    for (a, b), put in zip(pairs, in_items, strict=True):
        if put:
            own.setdefault(a, []).append(b)
    its = [it.model_copy(update={"enemies": tuple(own.get(it.id, ()))}) for it in its]
    data: dict = {"forms": forms, "anchors": anchors, "seed": draw(st.integers(0, 2**32)),
                  "order": draw(st.sampled_from(["random", "topic", "fixed"])),
                  "shuffle_options": draw(st.booleans()), "balance_keys": draw(st.booleans()),
                  "enemies": [list(p) for p, put in zip(pairs, in_items, strict=True) if not put]}
    slack = draw(st.integers(0, 1))
    data["items"] = n if slack == 0 else {"min": max(1, n - 1), "max": n + 1}
    by_id = {it.id: it for it in its}
    cells = []
    for _ in range(draw(st.integers(0, 3))):
        pick = by_id[draw(st.sampled_from(ids))]
        kind = draw(st.sampled_from(["topic", "difficulty", "tag"]))
        if kind == "topic":
            parts = pick.topic.split("/")
            cell = {"topic": "/".join(parts[: draw(st.integers(1, len(parts)))])}
        elif kind == "difficulty" and pick.difficulty is not None:
            cell = {"difficulty": pick.difficulty.value}
        elif pick.tags:
            cell = {"tags": [draw(st.sampled_from(pick.tags))]}
        else:
            cell = {"topic": pick.topic}
        bp_cell = Blueprint.model_validate({"id": "x1", "bank": ".", "forms": 1, "items": 1,
                                            "cells": [{**cell, "count": 0}]}).cells[0]
        from dpassess.assemble.problem import _matches

        counts = [sum(1 for i in w if _matches(bp_cell, by_id[i])) for w in witness]
        lo = max(0, min(counts) - draw(st.integers(0, 1)))
        hi = max(counts) + draw(st.integers(0, 1))
        cells.append({**cell, "count": lo if lo == hi else {"min": lo, "max": hi}})
    data["cells"] = cells
    pts = [sum(by_id[i].points for i in w) for w in witness]
    data["equal_points"] = len(set(pts)) == 1  # what the witness forms meet
    if draw(st.booleans()):
        data["points"] = {"min": min(pts), "max": max(pts)}
    if forms > 1 and draw(st.booleans()):
        over = max(len((x & y) - set(anchors)) for x, y in combinations(witness, 2))
        data["max_overlap"] = over + draw(st.integers(0, 1))
    if forms > 1 and draw(st.booleans()):
        bank = make_bank(its)
        p = {it.id: v for it, v in zip(bank.items, problem(bank, {**data}).p, strict=True)}
        means = [sum(p[i] for i in w) / (SCALE * len(w)) for w in witness]
        tol = math.ceil((max(means) - min(means)) * 1000) / 1000 + 0.003
        data["balance"] = {"tolerance": min(1.0, tol), "minimize": draw(st.booleans())}
    return its, data


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(witness_cases())
def test_every_form_meets_every_constraint(case):
    its, data = case
    pr = problem(make_bank(its), data)
    a = assemble_problem(pr, time_limit=5)
    check(a)


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(banks(), st.data())
def test_arbitrary_blueprints_are_met_or_explained(its, data):
    ids = [it.id for it in its]
    topics = sorted({it.topic.split("/")[0] for it in its})
    bp = {
        "forms": data.draw(st.integers(1, 4)),
        "items": data.draw(st.integers(1, len(its))),
        "cells": [{"topic": data.draw(st.sampled_from(topics)), "count": data.draw(st.integers(0, 3))}
                  for _ in range(data.draw(st.integers(0, 2)))],
        "anchors": data.draw(st.lists(st.sampled_from(ids), unique=True, max_size=2)),
        "enemies": data.draw(st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(ids))
                                      .filter(lambda p: p[0] != p[1]), max_size=3)),
        "max_overlap": data.draw(st.none() | st.integers(0, 2)),
    }
    if data.draw(st.booleans()):
        bp["points"] = data.draw(st.integers(1, 8))
    pr = problem(make_bank(its), bp)
    try:
        a = assemble_problem(pr, time_limit=5)
    except Infeasible as exc:
        assert exc.status in (Status.infeasible, Status.unknown)
        assert exc.lines and all(line.strip() for line in exc.lines)
        assert exc.exit_code == 1
    except BlueprintError as exc:
        assert exc.diagnostics and exc.exit_code == 2
        assert "more forms than the bank can fill" in str(exc)
    else:
        check(a)


def test_infeasible_conflict_is_named_by_the_deletion_filter():
    """Two enemies in a cell that asks for both: neither a supply shortage nor visible before
    search; the explanation names exactly the cell and the enemies."""
    its = [it for it in _seed_items()]
    comm = [it.id for it in its if it.topic.endswith("communication")]
    pr = problem(make_bank(its), {"forms": 1, "items": 3, "enemies": [comm],
                                  "cells": [{"topic": "data-parallelism/communication",
                                             "count": 2}]})
    with pytest.raises(Infeasible) as exc:
        assemble_problem(pr, time_limit=5)
    text = "\n".join(exc.value.lines)
    assert exc.value.status is Status.infeasible
    assert "cell data-parallelism/communication: 2 per form" in text
    assert f"this pair never on one form: {comm[0]} × {comm[1]}" in text
    assert "1 enemy pairs" not in text
    assert "items per form" not in text, "the filter keeps only what conflicts"


def _seed_items():
    from dpassess.bank.load import load_bank

    return list(load_bank(ROOT / "items" / "data-parallelism"))


# --- determinism -------------------------------------------------------------------------------


def written(a: Assembly) -> dict[str, bytes]:
    """Every file `write_assembly` writes for `a` (path relative to the output folder -> bytes)."""
    with tempfile.TemporaryDirectory() as tmp:
        write_assembly(a, tmp)
        return files(Path(tmp))


def test_same_seed_same_bytes_other_seed_other_forms():
    a = written(assemble(BLUEPRINT))
    b = written(assemble(BLUEPRINT))
    assert a == b
    c = written(assemble(BLUEPRINT, seed=99))
    assert c.keys() == a.keys()
    assert c["dp-quiz-a/dp-quiz-a-key.json"] != a["dp-quiz-a/dp-quiz-a-key.json"]


@settings(max_examples=10, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(witness_cases())
def test_generated_assembly_is_deterministic(case):
    its, data = case
    first = assemble_problem(problem(make_bank(its), data), time_limit=5)
    again = assemble_problem(problem(make_bank(its), data), time_limit=5)
    assert [[fi.item for fi in f.items] for f in first.forms] == \
           [[fi.item for fi in f.items] for f in again.forms]
    assert first.summary() == again.summary()


def test_balance_objective_is_reported_honestly():
    its = _seed_items()
    a = assemble_problem(problem(make_bank(its), {
        "forms": 2, "items": 3, "max_overlap": 0, "balance": {"minimize": True}}), time_limit=5)
    check(a)
    assert a.selection.status is Status.optimal
    assert a.selection.spread_bound is not None
    means = [sum(a.problem.p[i] for i in s) / (SCALE * 3) for s in a.selection.forms]
    assert max(means) - min(means) <= a.selection.spread_bound + 0.001 + 1e-9


# --- keys in every format and language ---------------------------------------------------------


def keyed_positions_in_exports(a: Assembly) -> None:
    """Parse every written format and check option order and keys against the form."""
    out = written(a)
    oracle = pytest.importorskip("test_export_moodle_oracle", reason="Moodle oracle not present")
    langs = list(a.problem.bank.languages)
    for form in a.forms:
        d = form.id
        expected = {fi.item.id: fi for fi in form.items}
        for lang in langs:
            html = lxml.html.fromstring(out[f"{d}/{d}-{lang}.html"])
            key = lxml.html.fromstring(out[f"{d}/{d}-key-{lang}.html"])
            key_rows = key.xpath("//section[@class='answers']//tr[td]")
            assert len(key_rows) == len(form.items)
            assert not html.xpath("//*[contains(@class, 'filled')]"), "a key on the exam"
            for fi, row in zip(form.items, key_rows, strict=True):
                assert row.xpath("string(td[2])") == ", ".join(fi.key_letters)
                filled = key.xpath(f"//section[@class='grid']//tr[{fi.position}]"
                                   "//span[contains(@class, 'filled')]/text()")
                assert filled == fi.key_letters
                choices = html.xpath(f"//li[@id='q{fi.position}']/ol/li")
                for k, oid in zip(fi.key_letters, fi.key_ids, strict=True):
                    want = lxml.html.fragment_fromstring(  # maths as MathML, as the forms
                        to_html(fi.item.option_text(lang, oid), "mathml"), create_parent="div")
                    # the visible text (HTML collapses white space; an unclosed <b> in raw
                    # Markdown HTML moves a newline when the parser closes it)
                    got = choices[ord(k) - 65].text_content()
                    assert got.split() == want.text_content().split()
            qti = zipfile.ZipFile(io.BytesIO(out[f"{d}/qti21/{d}-{lang}.zip"]))
            test = ET.fromstring(qti.read(f"tests/{d}.xml"))
            refs = [r.get("identifier") for r in test.iter(f"{QTI}assessmentItemRef")]
            # item refs may carry the collection as a prefix (unique across packages)
            assert [r.removesuffix(f"-{lang}").removeprefix(f"{d}__") for r in refs] == \
                [fi.item.id for fi in form.items]
            for fi in form.items:
                doc = ET.fromstring(qti.read(f"items/{fi.item.id}.xml"))
                order = [c.get("identifier") for c in doc.iter(f"{QTI}simpleChoice")]
                if fi.item.type is not ItemType.true_false:
                    assert order == list(fi.item.option_ids)
                correct = [v.text for v in doc.iter(f"{QTI}correctResponse")][0:1]
                values = [v.text for v in next(doc.iter(f"{QTI}correctResponse"))]
                assert sorted(values) == sorted(fi.key_ids), correct
        for lang in [*langs, MULTI]:
            moodle = oracle.read_xml(out[f"{d}/moodle/{d}-{lang}.xml"])
            gift = oracle.read_gift(out[f"{d}/gift/{d}-{lang}.txt"].decode("utf-8"))
            for questions in (moodle, gift):
                qs = [q for q in questions if q.qtype != "category"]
                assert [q.idnumber for q in qs] == [fi.item.id for fi in form.items]
                for q in qs:
                    fi = expected[q.idnumber]
                    if q.qtype == "truefalse":
                        assert q.correctanswer == (1 if fi.key_ids == ["true"] else 0)
                        continue
                    right = [n for n, f in enumerate(q.fractions) if f > 0]
                    assert [letter(n) for n in right] == fi.key_letters, (q.idnumber, lang)


def test_seed_blueprint_keys_in_every_format_and_language():
    keyed_positions_in_exports(assemble(BLUEPRINT))


@settings(max_examples=8, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(witness_cases(plain=False))
def test_generated_keys_in_every_format_and_language(case):
    its, data = case
    keyed_positions_in_exports(assemble_problem(problem(make_bank(its), data), time_limit=5))


@given(st.integers(2, 5), st.integers(1, 30), st.integers(0, 2**32), st.data())
def test_key_positions_are_balanced_on_every_form(n_options, n_items, seed, data):
    import random

    from dpassess.assemble.forms import _arrange
    from dpassess.model import parse_item

    opts = [f"o{k}" for k in range(n_options)]
    its = [parse_item({
        "id": f"q{k}", "topic": "t", "options": opts, "key": data.draw(st.sampled_from(opts)),
        "text": {"en": {"stem": "s", "options": {o: o for o in opts}}}}) for k in range(n_items)]
    out = _arrange(its, random.Random(seed), shuffle=True, balance=True)
    seq = [it.option_ids.index(it.key[0]) for it in out]
    counts = Counter(seq)
    per = [counts.get(p, 0) for p in range(n_options)]
    assert max(per) - min(per) <= 1
    if n_options >= 3:  # and no pattern, checked by brute force over every window
        for i in range(len(seq)):
            assert len(seq[i:i + 3]) < 3 or len(set(seq[i:i + 3])) > 1, seq
            w = seq[i:i + 4]
            if len(w) == 4:
                assert {b - a for a, b in pairwise(w)} not in ({1}, {-1}), seq
            for per_ in (2, 3, 4):
                w = seq[i:i + 2 * per_]
                if len(w) == 2 * per_ and len(set(w)) > 1:
                    assert w[:per_] != w[per_:], seq


def test_seed_blueprint_meets_its_constraints():
    a = assemble(BLUEPRINT)
    check(a)
    assert [len(f.items) for f in a.forms] == [8, 8]
    assert all(set(f.key_counts().values()) == {2} for f in a.forms)
    assert [fi.item.id for fi in a.forms[0].items] != [fi.item.id for fi in a.forms[1].items]


# --- the bank, loaded once ---------------------------------------------------------------------


def test_a_loaded_bank_is_used_as_it_is_and_another_is_refused(monkeypatch):
    """`assemble(path, bank=...)` takes the blueprint's bank as loaded (by `build`) and does not
    read it again; the forms are those of a bank loaded from the blueprint's `bank:`."""
    from dpassess.assemble import load_problem
    from dpassess.assemble import problem as problem_module
    from dpassess.bank.load import load_bank

    bank = load_bank(ROOT / "items" / "data-parallelism")
    expected = written(assemble(BLUEPRINT))

    def no_second_load(root):
        raise AssertionError(f"the bank at {root} was loaded again")

    monkeypatch.setattr(problem_module, "load_bank", no_second_load)
    assert load_problem(BLUEPRINT, bank).bank is bank
    assert written(assemble(BLUEPRINT, bank=bank)) == expected
    with pytest.raises(ValueError, match=r"the blueprint's bank is .*items/data-parallelism"):
        load_problem(BLUEPRINT, make_bank(_seed_items()))


def test_the_balance_uses_the_recorded_p_unless_the_author_fixed_one(tmp_path):
    """An item's recorded administrations (the bank's stats/ records, pooled by n) give the p
    the balance uses; an author's p_value wins; a broken record is a warning, not used."""
    import json

    from dpassess.model import parse_item
    from dpassess.stats.history import HISTORY_DIR, SCHEMA

    its = [parse_item({"id": f"q{k}", "topic": "t", "status": "reviewed",
                       "options": ["a", "b"], "key": "a",
                       **({"p_value": 0.9} if k == 0 else {}),
                       "text": {lang: {"stem": f"Q{k}?", "options": {"a": "A", "b": "B"}}
                                for lang in ("id", "en")}}) for k in range(6)]
    bank = make_bank(its)
    bank.root = tmp_path
    folder = tmp_path / HISTORY_DIR
    folder.mkdir()

    def record(name: str, figures: dict) -> None:
        (folder / name).write_text(json.dumps({
            "schema": SCHEMA, "administration": {"id": name[:-5], "date": "2026-11-01"},
            "items": {i: {"n": n, "p": p} for i, (n, p) in figures.items()}}))

    record("2026-11-01-a.json", {"q0": (10, 0.1), "q1": (10, 0.2), "q2": (30, 0.6)})
    record("2026-11-02-b.json", {"q1": (30, 0.6)})
    (folder / "2026-11-03-c.json").write_text("{not json")
    pr = problem(bank, {"forms": 1, "items": 6})
    by_id = {it.id: p for it, p in zip(pr.items, pr.p, strict=True)}
    assert by_id["q0"] == round(0.9 * SCALE)  # the author's p_value
    assert by_id["q1"] == round((10 * 0.2 + 30 * 0.6) / 40 * SCALE)  # pooled, weighted by n
    assert by_id["q2"] == round(0.6 * SCALE)
    assert by_id["q3"] == round(pr.blueprint.difficulty_scale.medium * SCALE)
    assert pr.observed_p == pytest.approx({"q0": 0.1, "q1": 0.5, "q2": 0.6})
    assert any("2026-11-03-c.json" in w.path and "not used" in w.message for w in pr.warnings)


def test_a_search_reports_its_progress_and_bound_without_changing_the_forms():
    """The progress display is told the solutions found, the spread and the proven bound; the
    reports do not change the search (the same forms with and without a display)."""
    from dpassess.assemble.solve import solve

    its = _seed_items()
    data = {"forms": 2, "items": 3, "max_overlap": 0, "balance": {"minimize": True}}
    lines: list[str] = []
    shown = solve(problem(make_bank(its), data), 5, 5, progress=lines.append)
    quiet = solve(problem(make_bank(its), data), 5, 5)
    assert shown.forms == quiet.forms
    assert lines and all(line.startswith("selecting items (") for line in lines)
    last = lines[-1]
    assert "forms found (" in last
    assert shown.spread_bound is not None
    assert f"best bound {shown.spread_bound:.4f}" in last
    means = [sum(problem(make_bank(its), data).p[i] for i in f) / (SCALE * 3) for f in shown.forms]
    assert f"mean-p spread {max(means) - min(means):.4f}" in last
