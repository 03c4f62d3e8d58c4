"""A key written twice in one YAML mapping is a load error (PyYAML would keep the last value).

Also: a YAML boolean, number or null where text is expected says what to write.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from conftest import ROOT
from dpassess.assemble import BlueprintError
from dpassess.assemble.problem import load_blueprint
from dpassess.bank.load import DuplicateKeyError, load_yaml
from test_loader import GOOD, errors_of, make_bank

TF = """\
schema: 1
id: tf-item
type: true_false
topic: a/b
key: "true"
text:
  en:
    stem: True?
    options: {"true": T, "false": F}
"""


def _dup(text: str) -> tuple[list[str | int], int, int, int]:
    with pytest.raises(DuplicateKeyError) as info:
        load_yaml(text)
    e = info.value
    return e.loc, e.problem_mark.line + 1, e.problem_mark.column + 1, e.first_line


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: 1\na: 2", (["a"], 2, 1, 1)),
        ("x:\n  y: [1, {a: 1, b: 2, a: 3}]\n", (["x", "y", 1, "a"], 2, 23, 2)),
        ("- {a: 1}\n- {a: 1, a: 2}", ([1, "a"], 2, 10, 2)),
        ("a: &x {b: 1, b: 2}\nc: *x", (["a", "b"], 1, 14, 1)),
        ("'a': 1\na: 2", (["a"], 2, 1, 1)),
        # the PyYAML path (merge keys, non-string keys, tags), at any depth
        ("<<: {a: 1, a: 2}\nb: 1", (["<<", "a"], 1, 12, 1)),
        ("b: &b {a: 1}\nx:\n  <<: *b\n  a: 2\n  c: [{k: 1, k: 2}]", (["x", "c", 0, "k"], 5, 14, 5)),
        ("x: {1: a, 2: b, k: {z: 1, z: 2}}", (["x", "k", "z"], 1, 27, 1)),
        ("1: a\n1: b", (["1"], 2, 1, 1)),
        ("1: a\ntrue: b", (["true"], 2, 1, 1)),  # one dict key: the second would replace the first
    ],
)
def test_a_repeated_key_at_any_depth_is_refused_at_its_second_occurrence(text, expected):
    assert _dup(text) == expected


def test_keys_from_a_merge_may_be_overridden():
    text = "base: &b {key: [two], seed: 1}\nitem:\n  <<: *b\n  key: [four]\n"
    assert load_yaml(text)["item"] == {"key": ["four"], "seed": 1}  # as PyYAML: test_loader


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (GOOD.replace("key: right", "key: [right]") + "key: [wrong]\n",
         "x.yaml:13:1: key: duplicate key 'key' (first at line 5)"),
        (GOOD + "  en:\n    stem: Again?\n    options: {right: R, wrong: W, other: O}\n",
         "x.yaml:13:3: text.en: duplicate key 'en' (first at line 10)"),
        (GOOD.replace("options: {right: Benar,", "options: {right: Benar, right: Betul,"),
         "x.yaml:9:29: text.id.options.right: duplicate key 'right' (first at line 9)"),
    ],
    ids=["key", "language-block", "deep"],
)
def test_item_with_a_repeated_key_is_a_positioned_load_error(tmp_path, body, error):
    assert errors_of(make_bank(tmp_path, {"x.yaml": body})) == [error]


def test_repeated_key_in_bank_yaml(tmp_path):
    root = make_bank(tmp_path, {"x.yaml": GOOD})
    (root / "bank.yaml").write_text(
        "schema: 1\nid: bb\ntitle: {en: B, en: C}\nlanguages: [en]\ndefault_language: en\n",
        encoding="utf-8",
    )
    assert errors_of(root) == ["bank.yaml:3:16: title.en: duplicate key 'en' (first at line 3)"]


def test_merge_keys_in_an_item_still_load(tmp_path):
    body = GOOD.replace(
        "text:\n  id:\n",
        "text:\n  id: &id\n",
    ).replace("  en:\n    stem: Which one?\n    options: {right: Right, wrong: Wrong, other: Other}\n",
              "  en:\n    <<: *id\n    stem: Which one?\n")
    from dpassess import load_bank

    (item,) = load_bank(make_bank(tmp_path, {"x.yaml": body}))
    assert item.text["en"].stem == "Which one?"
    assert item.text["en"].options == item.text["id"].options


def test_repeated_key_in_a_blueprint(tmp_path):
    text = (ROOT / "blueprints" / "data-parallelism.yaml").read_text(encoding="utf-8")
    assert "\nseed: 2024\n" in text
    bp = tmp_path / "bp.yaml"
    bp.write_text(text.replace("\nseed: 2024\n", "\nseed: 1\nseed: 2\n"), encoding="utf-8")
    line = text.split("\nseed: 2024\n")[0].count("\n") + 2
    with pytest.raises(BlueprintError) as info:
        load_blueprint(bp)
    assert [str(d) for d in info.value.diagnostics] == [
        f"{bp}:{line + 1}:1: seed: duplicate key 'seed' (first at line {line})"
    ]


# Property: text written from lists of (key, value) pairs, which may repeat a key. It loads as
# PyYAML loads it when no mapping repeats a key, and is refused when one does.

_keys = st.text(max_size=3) | st.integers(-3, 3)
_leaf = st.none() | st.booleans() | st.integers() | st.text(max_size=5)
_tree = st.recursive(
    _leaf,
    lambda inner: st.tuples(st.just("seq"), st.lists(inner, max_size=3))
    | st.tuples(st.just("map"), st.lists(st.tuples(_keys, inner), max_size=4)),
    max_leaves=10,
)


def _scalar(x: Any) -> str:
    """One line of YAML for `x`. Strings are double-quoted with escapes: in PyYAML's own choice
    of style, a string with a line break spans several lines, which the slicing cut apart."""
    if isinstance(x, str):
        line = yaml.safe_dump(x, default_style='"', width=10**9)[:-1]
    else:
        line = yaml.safe_dump([x], default_flow_style=True, width=10**9)[1:-2]
    assert "\n" not in line
    return line


def _text(t: Any) -> str:
    if isinstance(t, tuple) and t[0] == "seq":
        return "[" + ", ".join(_text(x) for x in t[1]) + "]"
    if isinstance(t, tuple):
        return "{" + ", ".join(f"{_scalar(k)}: {_text(v)}" for k, v in t[1]) + "}"
    return _scalar(t)


def _repeats(t: Any) -> bool:
    if isinstance(t, tuple) and t[0] == "seq":
        return any(_repeats(x) for x in t[1])
    if isinstance(t, tuple):
        keys = [k for k, _ in t[1]]
        return len(set(keys)) != len(keys) or any(_repeats(v) for _, v in t[1])
    return False


@given(_tree)
@example(("map", [("\n", None)]))  # a key with a line break (the scalar once spanned lines)
@example(("map", [("a", 1), ("a", 2)]))
def test_repeated_keys_are_refused_and_everything_else_loads_as_pyyaml(tree):  # type: ignore[no-untyped-def]
    text = _text(tree)
    if _repeats(tree):
        with pytest.raises(DuplicateKeyError):
            load_yaml(text)
    else:
        assert load_yaml(text) == yaml.load(text, Loader=yaml.CSafeLoader)


# A YAML boolean, number or null where an id is expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ('key: "true"', "key: true",
         'x.yaml:5:1: key: `true` is read by YAML as a boolean: write the option id in quotes, '
         'key: "true"'),
        ('key: "true"', "key: no",
         'x.yaml:5:1: key: `no` is read by YAML as a boolean: write the option id in quotes, '
         'key: "no"'),
        ('key: "true"', "key: [true]",
         'x.yaml:5:7: key[0]: `true` is read by YAML as a boolean: write the option id in quotes, '
         '"true"'),
        ('key: "true"', "key: 12",
         'x.yaml:5:1: key: `12` is read by YAML as a number: write the option id in quotes, '
         'key: "12"'),
        ("id: tf-item", "id: 2024-01-01",
         'x.yaml:2:1: id: `2024-01-01` is read by YAML as a date: write it in quotes, '
         'id: "2024-01-01"'),
        ("type: true_false\n", "options: [{id: on}, {id: 'off'}]\n",
         'x.yaml:3:12: options[0].id: `on` is read by YAML as a boolean: write the option id in '
         'quotes, id: "on"'),
    ],
)
def test_a_yaml_boolean_or_number_where_an_id_is_expected_says_what_to_write(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    assert old in TF
    errors = errors_of(make_bank(tmp_path, {"x.yaml": TF.replace(old, new)}))
    assert expected in errors, errors
