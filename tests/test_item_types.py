"""The item types beyond choice: each loads from its documented example, and each kind of bad
input named for it (a numerical answer that is no number, a negative tolerance, no fully right
answer, fewer than two pairs, duplicate answers, a language without its wordings) is a load
error at the field's path:line:col, never a silent change of what is graded right."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT
from dpassess import BankLoadError, load_bank
from dpassess.model import Essay, Matching, Numerical, Ordering, ShortAnswer
from strategies import write_bank

AUTHORING = ROOT / "docs" / "authoring.md"


def _examples() -> dict[str, str]:
    """The YAML example under each '### <type>' heading of docs/authoring.md."""
    text = AUTHORING.read_text(encoding="utf-8")
    found = {}
    for m in re.finditer(r"^### (\w+)\n\n```yaml\n(.*?)```", text, re.M | re.S):
        found[m.group(1)] = m.group(2)
    return found


EXAMPLES = _examples()


def _bank(tmp_path: Path, files: dict[str, str]) -> Path:
    root = write_bank(tmp_path / "bank", [])
    for name, body in files.items():
        (root / name).write_text(body, encoding="utf-8")
    return root


def _errors(root: Path) -> list[str]:
    with pytest.raises(BankLoadError) as info:
        load_bank(root)
    return [str(d).replace(str(root) + "/", "") for d in info.value.diagnostics]


def test_the_documented_example_of_every_type_loads(tmp_path):
    assert {"numerical", "short_answer", "matching", "essay", "ordering"} <= set(EXAMPLES)
    root = _bank(tmp_path, {f"{n:02d}-{kind}.yaml": body
                            for n, (kind, body) in enumerate(EXAMPLES.items())})
    bank = load_bank(root)
    by_type = {type(i).__name__: i for i in bank}
    num = by_type["Numerical"]
    assert isinstance(num, Numerical)
    assert num.fraction_for(4.46) == 1 and num.fraction_for(2.25) == 0
    assert num.fraction_for(4.56) == 0  # outside 4.5 ± 0.05 and outside the range
    assert [u.multiplier for u in num.units] == [1, 1000]
    short = by_type["ShortAnswer"]
    assert isinstance(short, ShortAnswer)
    assert short.text["id"].answers["mean"] != short.text["en"].answers["mean"]
    match = by_type["Matching"]
    assert isinstance(match, Matching) and match.response_ids == ("ring", "tree", "star")
    assert isinstance(by_type["Essay"], Essay) and by_type["Essay"].lines == 10
    order = by_type["Ordering"]
    assert isinstance(order, Ordering) and order.grading == "relative_to_correct"


NUMERICAL = """\
schema: 1
id: n-one
type: numerical
topic: a/b
answers:
  - {id: right, value: 4.5, tolerance: 0.05}
text:
  en:
    stem: How many?
"""

SHORT = """\
schema: 1
id: s-one
type: short_answer
topic: a/b
answers:
  - {id: right}
text:
  en:
    stem: Name it.
    answers:
      right: [mean]
"""

MATCHING = """\
schema: 1
id: m-one
type: matching
topic: a/b
pairs: [a, b]
text:
  en:
    stem: Match.
    premises: {a: A, b: B}
    responses: {a: one, b: two}
"""


def _one_language(tmp_path: Path, body: str) -> list[str]:
    root = write_bank(tmp_path / "bank", [])
    (root / "bank.yaml").write_text("schema: 1\nid: bk\ntitle: {en: B}\nlanguages: [en]\n"
                                    "default_language: en\n", encoding="utf-8")
    (root / "x.yaml").write_text(body, encoding="utf-8")
    return _errors(root)


@pytest.mark.parametrize(("body", "expected"), [
    (NUMERICAL.replace("value: 4.5", "value: eight"),
     "x.yaml:6:17: answers[0].value: 'eight' is not a number (write it with digits and a "
     "decimal point, e.g. 9.81)"),
    (NUMERICAL.replace("tolerance: 0.05", "tolerance: -1"),
     "x.yaml:6:29: answers[0].tolerance: must be at least 0, found -1"),
    (NUMERICAL.replace("tolerance: 0.05}", "tolerance: 0.05, fraction: 0.5}"),
     "x.yaml:5:1: answers: no answer earns full marks (fraction: 1): nobody could get this "
     "item fully right"),
    (NUMERICAL.replace("value: 4.5, tolerance: 0.05", "min: 5, max: 4"),
     "x.yaml:6:17: answers[0].min: min 5 is above max 4"),
    (NUMERICAL + "    feedback: {wrong: No.}\n",
     "x.yaml:10:16: text.en.feedback.wrong: feedback for unknown answer 'wrong'"),
    (SHORT.replace("  - {id: right}", "  - {id: right, fraction: 0.5}"),
     "x.yaml:5:1: answers: no answer earns full marks (fraction: 1): nobody could get this "
     "item fully right"),
    (SHORT.replace("right: [mean]", "right: [mean, Mean]"),
     "x.yaml:11:21: text.en.answers.right[1]: 'Mean' is accepted twice (also under 'right')"),
    (SHORT.replace("      right: [mean]\n", "      {}\n"),
     "x.yaml:10:5: text.en.answers: no accepted wording in 'en' for answer(s) right"),
    (MATCHING.replace("pairs: [a, b]", "pairs: [a]").replace(", b: B", "").replace(", b: two", ""),
     "x.yaml:5:1: pairs: a matching item needs at least two pairs"),
    (MATCHING.replace("responses: {a: one, b: two}", "responses: {a: one}"),
     "x.yaml:10:5: text.en.responses: no text for response(s) b"),
])
def test_bad_input_is_a_load_error_at_its_field(tmp_path, body, expected):
    errors = _one_language(tmp_path, body)
    assert any(e.startswith(expected) for e in errors), errors


def test_a_range_with_min_equal_to_max_is_one_exact_number(tmp_path):
    """`min: 4, max: 4` is a range holding one number (docs/authoring.md: min is not above
    max): it loads, and it accepts 4 and nothing else."""
    root = write_bank(tmp_path / "bank", [])
    (root / "bank.yaml").write_text("schema: 1\nid: bk\ntitle: {en: B}\nlanguages: [en]\n"
                                    "default_language: en\n", encoding="utf-8")
    (root / "x.yaml").write_text(NUMERICAL.replace("value: 4.5, tolerance: 0.05",
                                                   "min: 4, max: 4"), encoding="utf-8")
    [item] = list(load_bank(root))
    assert isinstance(item, Numerical)
    assert item.answers[0].bounds == (4, 4)
    assert item.fraction_for(4) == 1
    assert item.fraction_for(4.000001) == 0 and item.fraction_for(3.999999) == 0
