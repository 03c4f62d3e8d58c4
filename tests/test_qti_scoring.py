"""The QTI export's response processing, run by a QTI 2.1 engine (tests/qti_engine.py; no engine
can be pip-installed), scores as Moodle grades the same item: each accepted answer its fraction,
a wrong one 0. The oracles are Moodle's own grading rules, ported here from its code
(moodle/moodle question/type/{numerical,shortanswer,ordering}), and the engine itself is checked
first against the QTI spec's standard templates on hand-worked responses."""

from __future__ import annotations

import io
import itertools
import re
import zipfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from dpassess.export import Collection
from dpassess.export.qti.items import assessment_item
from dpassess.export.qti.qti21 import export
from dpassess.model import Item, parse_item
from qti_engine import QTI, Engine, xsd_regex
from strategies import (
    essay_items,
    items,
    matching_items,
    numerical_items,
    ordering_items,
    short_answer_items,
)
from test_export_qti21 import assert_valid

Q = f"{{{QTI}}}"


def score(item: Item, response: object, lang: str = "en") -> float:
    root, _ = assessment_item(item, lang)
    assert_valid("qti", root, item.id)
    return float(Engine(root).run({"RESPONSE": response})["SCORE"])


def close(a: float, b: float) -> bool:
    return abs(a - b) < 1e-9


# --- the engine, against the spec's standard templates ----------------------------------------


def _templated(template: str, cardinality: str, key: list[str],
               mapping: dict[str, float] | None = None) -> etree._Element:
    decl = f'<responseDeclaration identifier="RESPONSE" cardinality="{cardinality}" ' \
           f'baseType="identifier"><correctResponse>' + "".join(
               f"<value>{k}</value>" for k in key) + "</correctResponse>"
    if mapping is not None:
        decl += '<mapping lowerBound="0" upperBound="1.5" defaultValue="0">' + "".join(
            f'<mapEntry mapKey="{k}" mappedValue="{v}"/>' for k, v in mapping.items()) + \
            "</mapping>"
    return etree.fromstring(
        f'<assessmentItem xmlns="{QTI}">{decl}</responseDeclaration>'
        '<outcomeDeclaration identifier="SCORE" cardinality="single" baseType="float">'
        '<defaultValue><value>0</value></defaultValue></outcomeDeclaration>'
        f'<responseProcessing template="http://www.imsglobal.org/question/qti_v2p1/rptemplates/'
        f'{template}"/></assessmentItem>')


def test_engine_runs_match_correct_as_the_spec_says():
    item = _templated("match_correct", "single", ["b"])
    engine = Engine(item)
    assert [engine.run({"RESPONSE": r})["SCORE"] for r in ("b", "a", None)] == [1, 0, 0]
    multi = Engine(_templated("match_correct", "multiple", ["a", "c"]))
    assert [multi.run({"RESPONSE": r})["SCORE"] for r in (["c", "a"], ["a"], ["a", "b", "c"])] \
        == [1, 0, 0]


def test_engine_runs_map_response_with_its_bounds():
    engine = Engine(_templated("map_response", "multiple", ["a", "b"],
                               {"a": 1, "b": 0.5, "c": -2}))
    worked = {("a", "b"): 1.5, ("a",): 1, ("a", "c"): 0, ("b", "b"): 0.5, (): 0}
    for response, expected in worked.items():
        assert engine.run({"RESPONSE": list(response)})["SCORE"] == expected, response
    assert engine.run({"RESPONSE": None})["SCORE"] == 0


def test_engine_reads_xsd_patterns_as_the_schema_language_does():
    assert re.fullmatch(xsd_regex(r"[lL]ist.*\.\*"), "List of x.*")
    assert not re.fullmatch(xsd_regex("a.b"), "a\nb")
    assert not re.fullmatch(xsd_regex("ab"), "abc")  # XSD patterns match the whole string


# --- choice items: the written-out rules equal the templates they restate ----------------------


@settings(max_examples=40)
@given(items(langs=("en",)))
def test_choice_rules_score_as_the_standard_templates(it):
    root, _ = assessment_item(it, "en")
    multiple = root.find(Q + "responseDeclaration").get("cardinality") == "multiple"
    templated = etree.fromstring(etree.tostring(root))
    rp = templated.find(Q + "responseProcessing")
    for child in list(rp):
        rp.remove(child)
    rp.set("template", "map_response" if multiple else "match_correct")
    ids = list(it.option_ids)
    responses = ([list(c) for n in range(len(ids) + 1) for c in itertools.combinations(ids, n)]
                 if multiple else [*ids, None])
    for response in responses:
        ours = Engine(root).run({"RESPONSE": response})["SCORE"]
        spec = Engine(templated).run({"RESPONSE": response})["SCORE"]
        expected = spec if multiple else spec * it.points  # match_correct scores 1, ours points
        assert close(ours, expected), (response, ours, expected)
        if not multiple:
            assert close(ours, it.points if response in it.key else 0.0)


# --- numerical: Moodle's qtype_numerical_answer::within_tolerance, first answer that holds -----


def moodle_numerical(item, x: float) -> float:
    """qtype_numerical_question::get_matching_answer: the first answer (in order) whose
    tolerance (nominal, absolute) or range holds x."""
    for a in item.answers:
        lo, hi = (a.value - a.tolerance, a.value + a.tolerance) if a.value is not None \
            else (a.min, a.max)
        if lo <= x <= hi:
            return a.fraction
    return 0.0


def _probes(item) -> list[float]:
    out = []
    for a in item.answers:
        lo, hi = a.bounds
        out += [lo, hi, (lo + hi) / 2, lo - 0.25, hi + 0.25, hi + 1000]
    return out


@settings(max_examples=60)
@given(numerical_items(langs=("en",)))
def test_numerical_scores_each_answer_its_fraction_and_a_wrong_number_zero(it):
    for x in _probes(it):
        assert close(score(it, x), moodle_numerical(it, x) * it.points), x
    assert score(it, None) == 0


def test_numerical_kitchen_sink_hand_worked():
    it = parse_item({"id": "lf", "type": "numerical", "topic": "t/u", "points": 2, "answers": [
        {"id": "exact", "value": 0.75, "tolerance": 0.005},
        {"id": "slip", "min": 74, "max": 76, "fraction": 0.5}],
        "text": {"en": {"stem": "?", "feedback": {"slip": "Percent."}}}})
    assert [score(it, x) for x in (0.75, 0.7549, 0.756, 75, 76, 76.01, -0.75)] == [
        2, 2, 0, 1, 1, 0, 0]
    root, _ = assessment_item(it, "en")
    outcomes = Engine(root).run({"RESPONSE": 75.0})
    assert (outcomes["FEEDBACK"], outcomes["ANSWER"]) == (("FB2",), "slip")
    assert Engine(root).run({"RESPONSE": 0.75})["ANSWER"] == "exact"
    assert Engine(root).run({"RESPONSE": 3.0})["ANSWER"] is None


def test_numerical_feedback_for_any_other_number():
    """Moodle's `*` answer: every number no earlier answer accepts earns 0 and its feedback."""
    it = parse_item({"id": "ao", "type": "numerical", "topic": "t/u", "answers": [
        {"id": "a", "value": 2}, {"id": "z", "any_other": True}],
        "text": {"en": {"stem": "?", "feedback": {"z": "Count again."}}}})
    root, _ = assessment_item(it, "en")
    assert_valid("qti", root, it.id)
    right, other = (Engine(root).run({"RESPONSE": x}) for x in (2.0, 7.0))
    assert (float(right["SCORE"]), right["ANSWER"], right["FEEDBACK"]) == (1, "a", None)
    assert (float(other["SCORE"]), other["ANSWER"], other["FEEDBACK"]) == (0, "z", ("FB2",))
    assert float(Engine(root).run({"RESPONSE": None})["SCORE"]) == 0


def test_graded_units_warn_once_that_qti_has_none():
    it = parse_item({"id": "lf", "type": "numerical", "topic": "t/u", "answers": [
        {"id": "a", "value": 1}], "units": [{"unit": "m"}, {"unit": "cm", "multiplier": 100}],
        "unit_penalty": 0.1, "text": {"en": {"stem": "?"}}})
    _, warnings = assessment_item(it, "en")
    assert [w.field for w in warnings] == ["units"]
    assert "cm" in warnings[0].message and "penalty" in warnings[0].message


# --- short answer: Moodle's qtype_shortanswer_question::compare_string_with_wildcard ----------


def moodle_matches(response: str, pattern: str, ignore_case: bool) -> bool:
    """Split the pattern on unescaped runs of `*`, quote each piece (`\\*` a star), join with
    `.*`, match the trimmed response from start to end (case-insensitively if asked)."""
    bits = re.split(r"(?<!\\)\*+", pattern)
    regexp = ".*".join(re.escape(b.replace("\\*", "*")) for b in bits)
    return re.fullmatch(regexp, response.strip(), re.I if ignore_case else 0) is not None


def moodle_short_answer(item, lang: str, response: str) -> float:
    for a in item.answers:
        if any(moodle_matches(response, w, not item.case_sensitive)
               for w in item.text[lang].answers.get(a.id, ())):
            return a.fraction
    return 0.0


def _typed(wording: str) -> list[str]:
    literal = wording.replace("\\*", "\0").replace("*", "").replace("\0", "*")
    filled = wording.replace("\\*", "\0").replace("*", "zz").replace("\0", "*")
    return [literal, filled, wording.upper(), wording.lower(), wording.swapcase(),
            wording + "x", "x" + filled, "nothing like it"]


@settings(max_examples=60)
@given(short_answer_items(langs=("en",)))
def test_short_answer_scores_every_wording_as_moodle_and_others_zero(it):
    for wordings in it.text["en"].answers.values():
        for w in wordings:
            for response in _typed(w):
                if response != response.strip():
                    continue
                assert close(score(it, response), moodle_short_answer(it, "en", response)
                             * it.points), (w, response)


wildcard_wording = st.lists(st.sampled_from(["a", "B", "*", "\\*", ".", "(", "[x]", "-", "^",
                                             "é", " ", "$", "?", "|", "{2}"]),
                            min_size=1, max_size=6).map("".join).filter(
    lambda w: w.strip() == w and w.strip("*") != "")


@settings(max_examples=80)
@given(wildcard_wording, st.booleans(), st.lists(st.sampled_from(
    ["a", "A", "b", "B", "*", ".", "(", "[x]", "x", "-", "^", "é", "É", " ", "$", "?", "|",
     "{2}"]), max_size=6).map("".join))
def test_wildcard_wordings_match_what_moodle_matches(wording, case, response):
    it = parse_item({"id": "sa", "type": "short_answer", "topic": "t/u", "case_sensitive": case,
                     "answers": [{"id": "a"}], "text": {"en": {"stem": "?", "answers": {
                         "a": [wording]}}}})
    if response != response.strip() or not response:
        return
    assert score(it, response) == (1.0 if moodle_matches(response, wording, not case) else 0.0)


def test_short_answer_hand_worked_first_answer_wins_and_feedback():
    it = parse_item({"id": "sa", "type": "short_answer", "topic": "t/u", "answers": [
        {"id": "queue"}, {"id": "list", "fraction": 0.5}],
        "text": {"en": {"stem": "?", "answers": {"queue": ["queue", "FIFO queue"],
                                                  "list": ["list*"]},
                        "feedback": {"list": "Close."}}}})
    assert [score(it, r) for r in ("Queue", "fifo QUEUE", "listing", "list", "a list", "")] == [
        1, 1, 0.5, 0.5, 0, 0]
    root, _ = assessment_item(it, "en")
    outcomes = Engine(root).run({"RESPONSE": "lists"})
    assert (outcomes["FEEDBACK"], outcomes["ANSWER"]) == (("FB2",), "list")


# --- matching: an equal share per right pair ------------------------------------------------------


@settings(max_examples=40)
@given(matching_items(langs=("en",)), st.data())
def test_matching_scores_each_right_pair_its_share(it, data):
    p, r = "p-{}".format, "r-{}".format
    right = [(p(x), r(x)) for x in it.pairs]
    assert close(score(it, right), it.points)
    assert score(it, None) == 0
    chosen = data.draw(st.lists(st.sampled_from(it.response_ids), min_size=len(it.pairs),
                                max_size=len(it.pairs)))
    response = [(p(x), r(y)) for x, y in zip(it.pairs, chosen, strict=True)]
    n_right = sum(x == y for x, y in zip(it.pairs, chosen, strict=True))
    assert close(score(it, response), it.points * n_right / len(it.pairs))


# --- essay: never scored by the package --------------------------------------------------------


@settings(max_examples=20)
@given(essay_items(langs=("en",)), st.text(max_size=30))
def test_essay_is_not_scored_automatically(it, text):
    assert score(it, text or None) == 0


# --- ordering: Moodle's qtype_ordering_question::grade_response, ported ------------------------


def _next_ids(ids: list[str], last: bool) -> dict[str, str]:
    out, n = {}, len(ids)
    following = "" if last else ids[n - 1]
    top = n - 1 if last else n - 2
    for i in range(top, -1, -1):
        out[ids[i]] = following
        following = ids[i]
    return out


def _prev_next(ids: list[str], every: bool) -> dict[str, tuple[list[str], list[str]]]:
    out = {}
    for i, x in enumerate(ids):
        prev, nxt = list(reversed(ids[:i])), ids[i + 1:]
        out[x] = (prev, nxt) if every else ([prev[0] if prev else ""], [nxt[0] if nxt else ""])
    return out


def _subsets(positions: list[int], contiguous: bool, imax: int, imin: int = 0,
             previous: int = -1) -> list[list[int]]:
    """get_ordered_subsets, line by line."""
    subsets: list[list[int]] = []
    subset: list[int] = []
    for i in range(imin, imax):
        current = positions[i]
        if previous < 0 or current == previous + 1:
            tails, prepend, append = [], False, True
        elif current < previous or (contiguous and current > previous + 1):
            tails, prepend, append = _subsets(positions, contiguous, imax, i), False, False
        elif current > previous:
            tails, prepend, append = _subsets(positions, contiguous, imax, i + 1, previous), \
                True, True
        else:
            tails, prepend, append = [], False, False
        for tail in tails:
            subsets.append(subset + tail if prepend else tail)
        if append:
            subset.append(i)
            previous = current
    if subset:
        subsets.insert(0, subset)
    return subsets


def moodle_ordering(grading: str, right: list[str], given: list[str]) -> float:
    correct = countable = 0
    if grading in ("all_or_nothing", "absolute_position"):
        correct = sum(g == r for g, r in zip(given, right, strict=True))
        countable = len(right)
        if grading == "all_or_nothing" and correct < countable:
            correct = 0
    elif grading.startswith("relative_next"):
        last = grading.endswith("include_last")
        cur, ref = _next_ids(given, last), _next_ids(right, last)
        for x, nxt in ref.items():
            correct += x in cur and cur[x] == nxt
            countable += 1
    elif grading in ("relative_one_previous_and_next", "relative_all_previous_and_next"):
        every = grading == "relative_all_previous_and_next"
        cur, ref = _prev_next(given, every), _prev_next(right, every)
        for x, (prev, nxt) in ref.items():
            if x in cur:
                correct += len([p for p in cur[x][0] if p in prev])
                correct += len([n for n in cur[x][1] if n in nxt])
            countable += len(prev) + len(nxt)
    elif grading.startswith("longest"):
        positions = [right.index(g) for g in given]
        best: list[int] = []
        for s in _subsets(positions, grading.endswith("contiguous_subset"), len(positions)):
            if len(s) > max(1, len(best)):
                best = s
        correct, countable = len(best), len(given)
    elif grading == "relative_to_correct":
        top = len(right) - 1
        for pos, x in enumerate(right):
            correct += max(0, top - abs(pos - given.index(x)))
            countable += top
    return correct / countable if countable else 0.0


GRADINGS = ["all_or_nothing", "absolute_position", "relative_next_exclude_last",
            "relative_next_include_last", "relative_one_previous_and_next",
            "relative_all_previous_and_next", "longest_ordered_subset",
            "longest_contiguous_subset", "relative_to_correct"]


def test_the_ordering_port_gives_moodles_own_test_figures():
    """question/type/ordering/tests/questiontype_test.php: six items reversed."""
    right = ["Modular", "Object", "Oriented", "Dynamic", "Learning", "Environment"]
    assert moodle_ordering("relative_to_correct", right, right[::-1]) == pytest.approx(0.4)
    swapped = ["Object", "Oriented", "Dynamic", "Learning", "Environment", "Modular"]
    assert moodle_ordering("longest_ordered_subset", right, swapped) == pytest.approx(5 / 6)


@pytest.mark.parametrize("grading", GRADINGS)
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_ordering_scores_every_order_as_moodle(grading, n):
    ids = [f"o{i}" for i in range(n)]
    it = parse_item({"id": "or", "type": "ordering", "topic": "t/u", "points": 3,
                     "options": ids, "grading": grading,
                     "text": {"en": {"stem": "?", "options": {o: o for o in ids}}}})
    root, _ = assessment_item(it, "en")
    assert_valid("qti", root, "ordering")
    engine = Engine(root)
    for order in itertools.permutations(ids):
        got = engine.run({"RESPONSE": list(order)})["SCORE"]
        moodle = moodle_ordering(grading, ids, list(order))
        if grading == "longest_ordered_subset":  # approximated: the true longest, at most Moodle
            assert close(got, 3 * longest_increasing(ids, list(order))), (order, got)
            assert got <= 3 * moodle + 1e-9
        else:
            assert close(got, 3 * moodle), (order, got)


def longest_increasing(right: list[str], given: list[str]) -> float:
    """The longest increasing subsequence of the right places, counted if longer than one."""
    places = [right.index(g) for g in given]
    best = [1] * len(places)
    for j in range(len(places)):
        for i in range(j):
            if places[i] < places[j]:
                best[j] = max(best[j], best[i] + 1)
    return (max(best) if max(best) > 1 else 0) / len(places)


def test_longest_ordered_subset_warns_of_the_approximation():
    it = parse_item({"id": "or", "type": "ordering", "topic": "t/u", "options": ["a", "b"],
                     "grading": "longest_ordered_subset",
                     "text": {"en": {"stem": "?", "options": {"a": "A", "b": "B"}}}})
    _, warnings = assessment_item(it, "en")
    assert [w.field for w in warnings] == ["grading", "type"] and "Moodle" in warnings[0].message
    # and the difference is real: Moodle credits 3 of 4 where the longest increasing run is 2
    assert moodle_ordering("longest_ordered_subset", ["o0", "o1", "o2", "o3"],
                           ["o1", "o3", "o0", "o2"]) == 0.75
    assert longest_increasing(["o0", "o1", "o2", "o3"], ["o1", "o3", "o0", "o2"]) == 0.5


@settings(max_examples=20)
@given(ordering_items(langs=("en",)))
def test_ordering_right_order_scores_full(it):
    assert close(score(it, list(it.options)), it.points)


# --- the package as a whole -----------------------------------------------------------------------


def test_kitchen_sink_package_scores_each_item_type():
    from conftest import ROOT
    from dpassess import load_bank
    c = Collection.from_bank(load_bank(ROOT / "tests" / "banks" / "kitchen-sink"))
    z = zipfile.ZipFile(io.BytesIO(export(c, "id").data))
    run = {name: Engine(etree.fromstring(z.read(f"items/{name}.xml")))
           for name in ("ks-load-factor", "ks-fifo-name", "ks-traversal-match",
                        "ks-growth-ordering", "ks-explain-amortized")}
    assert run["ks-load-factor"].run({"RESPONSE": 0.75})["SCORE"] == 2
    assert run["ks-load-factor"].run({"RESPONSE": 75.0})["SCORE"] == 1
    assert run["ks-fifo-name"].run({"RESPONSE": "Antrian"})["SCORE"] == 1
    assert run["ks-fifo-name"].run({"RESPONSE": "daftar berantai"})["SCORE"] == 0.5
    assert run["ks-fifo-name"].run({"RESPONSE": "list"})["SCORE"] == 0  # English wording
    pairs = [("p-bfs", "r-bfs"), ("p-dfs", "r-dijkstra"), ("p-dijkstra", "r-bellman")]
    assert run["ks-traversal-match"].run({"RESPONSE": pairs})["SCORE"] == 1
    order = ["constant", "logarithmic", "quadratic", "linear"]
    assert run["ks-growth-ordering"].run({"RESPONSE": order})["SCORE"] == pytest.approx(
        moodle_ordering("relative_to_correct", sorted(order, key=[
            "constant", "logarithmic", "linear", "quadratic"].index), order))
    assert run["ks-explain-amortized"].run({"RESPONSE": "Because"})["SCORE"] == 0
