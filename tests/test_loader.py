"""The bank on disk: every load error names path:line:col and the field; all errors at once."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SEED_BANK
from dpassess import BankLoadError, UsageError, load_bank, load_banks
from dpassess.bank.load import MAX_FILE_BYTES
from strategies import bank_config, items, write_bank

SEED_KEYS = {
    "dp-gpu-holds": "full-copy",
    "dp-sync-operation": "all-reduce",
    "dp-memory-limit": "replicated-state",
    "dp-nccl-algorithms": "size-and-topology",
    "dp-ddp-overlap": "overlap-backward",
    "dp-global-batch": "b-times-w",
    "dp-scaling-overhead": "comm-overhead",
    "dp-gradient-accumulation": "combine-microbatches",
}

GOOD = """\
schema: 1
id: good-item
topic: a/b
options: [right, wrong, other]
key: right
text:
  id:
    stem: Yang mana?
    options: {right: Benar, wrong: Salah, other: Lain}
  en:
    stem: Which one?
    options: {right: Right, wrong: Wrong, other: Other}
"""


def make_bank(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    root = write_bank(tmp_path / "bank", [])
    for name, body in files.items():
        p = root / name
        if isinstance(body, bytes):
            p.write_bytes(body)
        else:
            p.write_text(body, encoding="utf-8")
    return root


def errors_of(root: Path) -> list[str]:
    with pytest.raises(BankLoadError) as info:
        load_bank(root)
    return [str(d).replace(str(root) + "/", "") for d in info.value.diagnostics]


def test_seed_bank_loads_with_both_languages_and_the_issue_keys():
    bank = load_bank(SEED_BANK)
    assert len(bank) == 8
    assert {i.id: i.key for i in bank} == {k: (v,) for k, v in SEED_KEYS.items()}
    for item in bank:
        assert set(item.text) == {"id", "en"}
        for content in item.text.values():
            assert content.stem and content.explanation
            assert set(content.options) == set(item.option_ids)
            assert set(content.feedback) == set(item.option_ids)
        assert item.source is not None and item.source.text
    assert bank.by_topic("data-parallelism") == bank.items
    assert bank.get("dp-global-batch").symbols == ("B", "W")
    assert bank.root == SEED_BANK and isinstance(bank.root, Path)  # a Path, as the API takes


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (GOOD.replace("id: good-item", "id: Good Item"),
         "x.yaml:2:1: id: 'Good Item' does not match the pattern"),
        (GOOD.replace("topic: a/b", "topic: a/b\npoints: -2"),
         "x.yaml:4:1: points: must be above 0, found -2"),
        (GOOD.replace("topic: a/b", "topic: a/b\ncolour: red"),
         "x.yaml:4:1: colour: unknown field"),
        (GOOD.replace("topic: a/b", "topic: a/b\ntags: cs"),
         "x.yaml:4:1: tags: expected a list ([a, b] or one '- ' line per entry), found the "
         "text 'cs'"),
        (GOOD.replace("topic: a/b", "topic: a/b\nenemies:"),
         "x.yaml:4:1: enemies: expected a list ([a, b] or one '- ' line per entry), found "
         "nothing"),
        (GOOD.replace("topic: a/b", "topic: a/b\nsource: 3"),
         "x.yaml:4:1: source: expected a mapping (one 'name: value' line per entry), found a "
         "number"),
        (GOOD.replace("topic: a/b", "topic: a/b\ndifficulty: trivial"),
         "x.yaml:4:1: difficulty: 'trivial' is not one of 'easy', 'medium' or 'hard'"),
        (GOOD.replace("key: right", "key: nope"),
         "x.yaml:5:1: key[0]: key 'nope' names no option (options: right, wrong, other)"),
        (GOOD.replace("key: right", "key: [right, wrong]"),
         "x.yaml:5:1: key: a single_choice item has exactly one key"),
        (GOOD.replace("topic: a/b\n", ""), "x.yaml:1:1: topic: required field is missing"),
        (GOOD.replace("key: right", "key: right\nunit_penalty: 0.1"),
         "x.yaml:6:1: unit_penalty: unit_penalty is for numerical items only (this item is "
         "single_choice)"),
        (GOOD.replace("key: right", "key: right\nweights: {right: 0.5}"),
         "x.yaml:6:11: weights.right: the key 'right' earns all the points; its weight cannot "
         "be 0.5"),
        (GOOD.replace("topic: a/b", "topic: a/b\ntype: fill_in"),
         "x.yaml:4:1: type: 'fill_in' is not one of single_choice, multiple_response, true_false, "
         "numerical, short_answer, matching, essay, ordering, cloze, description"),
        (GOOD.replace("topic: a/b", "topic: a/b\ntype: cloze"),
         "x.yaml:1:1: gaps: required field is missing"),
        (GOOD.replace("    options: {right: Right, wrong: Wrong, other: Other}",
                      "    options: {right: Right, wrong: Wrong}"),
         "x.yaml:12:5: text.en.options: no text for option(s) other"),
        (GOOD.replace("other: Lain}", "other: Lain, extra: X}"),
         "x.yaml:9:56: text.id.options.extra: text for unknown option 'extra'"),
        (GOOD.replace("  en:\n    stem: Which one?\n    options: {right: Right, wrong: Wrong, other: Other}\n", ""),
         "x.yaml:6:1: text: required language 'en' is missing"),
        (GOOD.replace("stem: Yang mana?", "stem: " + "x" * 20_001),
         "x.yaml:8:5: text.id.stem: text too long (limit 20,000 characters)"),
        ("id: [unclosed\n", "x.yaml:1:5: invalid YAML: while parsing a flow sequence here, did "
                           "not find expected ',' or ']' at line 2, column 1"),
        ("id: !!python/object/apply:os.system [ls]\n",
         "x.yaml:1:5: YAML tag !!python/object/apply:os.system not allowed"),
        ("", "x.yaml:1:1: empty file"),
        ("- a\n- b\n", "x.yaml:1:1: expected a mapping of fields, found list"),
        (b"id: caf\xe9\n", "x.yaml:1:8: not UTF-8: byte 0xe9 cannot be decoded"),
    ],
    ids=lambda v: v[:40] if isinstance(v, str) else None,
)
def test_each_error_names_path_line_col_and_field(tmp_path, body, expected):
    errors = errors_of(make_bank(tmp_path, {"x.yaml": body}))
    assert any(e.startswith(expected) for e in errors), errors


def test_all_errors_of_a_bank_are_reported_at_once(tmp_path):
    root = make_bank(tmp_path, {
        "a.yaml": GOOD.replace("key: right", "key: nope"),
        "b.yaml": GOOD.replace("id: good-item", "id: other-item").replace("topic: a/b", "topic: A"),
        "c.yaml": "",
    })
    errors = errors_of(root)
    assert [e.split(":")[0] for e in errors] == ["a.yaml", "b.yaml", "c.yaml"]


def test_duplicate_ids_name_both_files(tmp_path):
    root = make_bank(tmp_path, {"a.yaml": GOOD, "b.yaml": GOOD})
    errors = errors_of(root)
    assert len(errors) == 1
    assert errors[0].startswith("b.yaml:2:1: id: duplicate id 'good-item' (also in ")
    assert errors[0].endswith("a.yaml)")


def test_a_directory_named_like_an_item_file_is_reported(tmp_path):
    root = make_bank(tmp_path, {})
    (root / "dir.yaml").mkdir()
    assert errors_of(root) == ["dir.yaml:1:1: is a directory, not a YAML file"]


def test_oversized_file_is_refused_before_parsing(tmp_path):
    root = make_bank(tmp_path, {"big.yaml": "a: " + "x" * (MAX_FILE_BYTES + 10) + "\n"})
    (err,) = errors_of(root)
    assert err.startswith("big.yaml:1:1: file is ") and "the limit is 1,048,576" in err


def test_bank_file_errors_are_positioned(tmp_path):
    root = make_bank(tmp_path, {})
    (root / "bank.yaml").write_text(
        "schema: 1\nid: b\ntitle: {en: B}\nlanguages: [en]\ndefault_language: id\n",
        encoding="utf-8",
    )
    errors = errors_of(root)
    assert errors == [
        "bank.yaml:2:1: id: String should have at least 2 characters",
    ]


def test_missing_paths_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        load_banks([tmp_path / "nope"])
    with pytest.raises(UsageError, match=r"no bank\.yaml"):
        load_banks([tmp_path])


@settings(max_examples=10)
@given(st.lists(items(), min_size=1, max_size=5, unique_by=lambda i: i.id))
def test_written_banks_load_back_equal(tmp_path_factory, bank_items):
    root = write_bank(tmp_path_factory.mktemp("b") / "bank", bank_items, bank_config())
    assert load_bank(root).items == bank_items


def test_parallel_and_sequential_loads_agree(tmp_path):
    import sys

    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    import synth

    root = synth.write(tmp_path / "bank", 40)
    assert load_bank(root, jobs=2).items == load_bank(root, jobs=1).items


_YAML_CASES = [
    "a: 1", "a: &x [1, *x]", "x: &a {b: 1}\ny: *a", "<<: {a: 1}\nb: 2", "a: 2024-01-01",
    "? [1]\n: 2", "1: a", "a: yes\nb: ~\nc: 1.5\nd: 0x1f\ne: '1'",
    "- a\n- b: c", "a: !foo x", "a: {b: [c, {d: e}]}", "", "a: 1\n---\nb: 2",
    "&r [*r]", "a: [b, c",
    # merge keys: explicit keys override merged ones (not duplicates), repeated `<<` all merge
    "b: &b {x: 1, y: 2}\nc: {<<: *b, x: 3}", "<<: [{a: 1}, {a: 2, b: 3}]\na: 4",
    "a: 1\n<<: {a: 0}\n<<: {b: 2}", "1: a\n'1': b", "a: 1\nA: 2",
    "=: a\nb: =",  # a key with no constructor: PyYAML's error, at the value it cannot build
]


@pytest.mark.parametrize("text", ["a: !!set {x, y}", "a: !!binary aGk=", "a: !!omap [{b: 1}]",
                                  "a: !!pairs [{b: 1}]", "a: [1, !!set {x}]"])
def test_sets_pairs_and_bytes_are_refused(text: str) -> None:
    """Where PyYAML builds a set (its order follows the hash seed), ordered pairs or bytes."""
    from dpassess.bank.load import load_yaml

    with pytest.raises(yaml.constructor.ConstructorError, match="unacceptable tag"):
        load_yaml(text)


def _outcome(load, text):  # type: ignore[no-untyped-def]
    try:
        return "ok", repr(load(text))
    except Exception as exc:
        return "error", type(exc).__name__, str(exc)


@pytest.mark.parametrize("text", _YAML_CASES)
def test_fast_yaml_construction_matches_pyyaml(text: str) -> None:
    from dpassess.bank.load import load_yaml

    assert _outcome(load_yaml, text) == _outcome(lambda t: yaml.load(t, Loader=yaml.CSafeLoader), text)


_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_data = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8) | st.integers(), inner, max_size=4),
    max_leaves=12,
)


@given(_data, st.booleans())
def test_fast_yaml_construction_matches_pyyaml_on_any_data(data, flow: bool) -> None:  # type: ignore[no-untyped-def]
    from dpassess.bank.load import load_yaml

    text = yaml.safe_dump(data, allow_unicode=True, default_flow_style=flow)
    assert load_yaml(text) == yaml.load(text, Loader=yaml.CSafeLoader)


#: Characters that make a plain scalar resolve to another tag (bool, int, float, null,
#: timestamp, merge, value) in YAML 1.1, as PyYAML's resolvers read them.
_SCALAR_CHARS = "0123456789+-._:xoXObB eEinfINFaANtTrRuUlLsSyYoO~=<>"


#: Spellings of each YAML 1.1 type the safe loader resolves (from the YAML 1.1 type pages).
_TYPED = ["yes", "No", "TRUE", "off", "On", "y", "~", "null", "Null", "NULL", "", "0x1F", "0o17",
          "0b101", "017", "1_000", "+12", "-0", "1:20", "190:20:30", ".inf", "-.INF", ".NaN",
          "1e3", "1.5e-3", "6.8523015e+5", "685.230_15e+03", "0.", ".5", "2001-12-14",
          "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "<<", "="]


@given(st.lists(st.sampled_from(_TYPED) | st.text(_SCALAR_CHARS, max_size=12),
                min_size=1, max_size=6))
def test_fast_tag_resolution_matches_pyyaml_on_plain_scalars(values: list[str]) -> None:
    """Plain (unquoted) scalars as keys, values and sequence entries resolve to the tags
    PyYAML's safe loader gives them (safe_dump quotes exactly these, so the property above
    rarely reaches them)."""
    from dpassess.bank.load import load_yaml

    text = f"{values[0]}: first key\n" + "".join(
        f"k{i}: {v}\nl{i}: [{v}, x]\nm{i}:\n  - {v}\n" for i, v in enumerate(values))
    assert _outcome(load_yaml, text) == _outcome(lambda t: yaml.load(t, Loader=yaml.CSafeLoader), text)


# --- files that are not the bank's own, and values YAML cannot give back -----------------------


def test_only_the_banks_own_regular_files_are_read(tmp_path):
    """A link to a file outside the bank (a secret, /dev/zero), a link to a folder and a named
    pipe are each reported and never read (a pipe would block the load for ever)."""
    import os
    secret = tmp_path / "secret.yaml"
    secret.write_text(GOOD.replace("good-item", "leaked-token"), encoding="utf-8")
    root = make_bank(tmp_path, {"a.yaml": GOOD})
    (root / "inside.yaml").symlink_to(root / "a.yaml")  # a link inside the bank is read
    (root / "out.yaml").symlink_to(secret)
    (root / "zero.yaml").symlink_to("/dev/zero")
    (root / "folder").symlink_to(tmp_path)
    os.mkfifo(root / "pipe.yaml")
    errors = errors_of(root)
    assert f"out.yaml:1:1: is a link to {secret}, outside the bank: not read (copy the file " \
           "into the bank)" in errors
    assert "zero.yaml:1:1: is a link to /dev/zero, outside the bank: not read (copy the file " \
           "into the bank)" in errors
    assert "folder:1:1: is a link to a folder: not read (a bank's folders must be real folders " \
           "inside it)" in errors
    assert "pipe.yaml:1:1: is a named pipe, not a regular file: not read" in errors
    assert any(e.startswith("inside.yaml:2:1: id: duplicate id 'good-item'") for e in errors)
    assert not any("leaked-token" in e for e in errors)


@pytest.mark.parametrize(("body", "expected"), [
    (GOOD.replace("topic: a/b", "topic: a/b\npoints: 1" + "9" * 5000),
     "x.yaml:4:9: number too large: Exceeds the limit (4300 digits) for integer string "
     "conversion: value has 5001 digits"),
    (GOOD.replace("topic: a/b", "topic: a/b\ntags: !!set {x, y}"),
     "x.yaml:4:7: YAML tag !!set not allowed (only plain data is accepted)"),
    (GOOD.replace("topic: a/b", "topic: a/b\ntags: !!omap [{x: 1}]"),
     "x.yaml:4:7: YAML tag !!omap not allowed (only plain data is accepted)"),
    (GOOD.replace("key: right", "key: B"),
     "x.yaml:5:1: key: 'B' is not an option id: keys name options by their ids, not by "
     "letters (options: right, wrong, other)"),
    (GOOD.replace("    options: {right: Right", "    feedbak: {}\n    options: {right: Right"),
     "x.yaml:12:5: text.en.feedbak: unknown field (did you mean 'feedback'?)"),
])
def test_values_yaml_cannot_give_back_and_near_misses_are_named(tmp_path, body, expected):
    assert expected in errors_of(make_bank(tmp_path, {"x.yaml": body}))


def test_a_utf16_file_is_named_as_utf16(tmp_path):
    root = make_bank(tmp_path, {"x.yaml": GOOD.encode("utf-16")})
    assert errors_of(root) == ["x.yaml:1:1: is UTF-16 (it starts with a UTF-16 byte-order mark): "
                               "save it as UTF-8"]


def test_an_unclosed_quote_is_reported_where_it_opens(tmp_path):
    # PyYAML gives up lines later (at the end of the file, or at the next quote); the
    # diagnostic points at the quote and keeps the parser's own words and place
    at_end = GOOD.replace("stem: Which one?", 'stem: "Which one?')
    errors = errors_of(make_bank(tmp_path / "a", {"x.yaml": at_end}))
    line = at_end.splitlines().index('    stem: "Which one?') + 1
    assert any(e.startswith(f"x.yaml:{line}:11: invalid YAML: while scanning a quoted scalar "
                            "here, found unexpected end of stream at line ") for e in errors), errors
    swallowing = GOOD.replace("stem: Yang mana?", 'stem: "Yang mana?').replace(
        "stem: Which one?", 'stem: "Which one?"')
    errors = errors_of(make_bank(tmp_path / "b", {"x.yaml": swallowing}))
    line = swallowing.splitlines().index('    stem: "Yang mana?') + 1
    assert any(e.startswith(f"x.yaml:{line}:11: invalid YAML: the quoted string opened here "
                            "runs on to line ") for e in errors), errors
