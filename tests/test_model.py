"""The item model: validation rules and the model -> YAML -> model round trip."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given
from pydantic import ValidationError

from dpassess.bank.write import item_to_yaml
from dpassess.model import ItemType, parse_item
from strategies import any_items

BASE = {
    "schema": 1,
    "id": "q-one",
    "topic": "a/b",
    "options": ["right", "wrong"],
    "key": "right",
    "text": {"en": {"stem": "Which?", "options": {"right": "R", "wrong": "W"}}},
}


def test_minimal_item_and_defaults():
    item = parse_item(BASE)
    assert item.type is ItemType.single_choice
    assert item.key == ("right",)
    assert item.points == 1.0 and item.shuffle
    assert item.fractions() == {"right": 1.0, "wrong": 0.0}
    assert item.title("en") == "Which?"


def test_true_false_defaults_to_two_options_with_language_words():
    data = {**BASE, "type": "true_false", "key": "false",
            "text": {"id": {"stem": "Benar?", "options": {}}}}
    del data["options"]
    item = parse_item(data)
    assert item.option_ids == ("true", "false")
    assert item.option_text("id", "true") == "Benar"


def test_true_false_option_text_may_be_left_out_where_words_are_built_in():
    """docs/authoring.md: the option text of a true_false item may be omitted in id and en."""
    data = {**BASE, "type": "true_false", "key": "true",
            "text": {"id": {"stem": "Benar?"}, "en": {"stem": "True?"}}}
    del data["options"]
    item = parse_item(data)
    assert [item.option_text(lang, "true") for lang in ("id", "en")] == ["Benar", "True"]


def test_true_false_in_a_language_without_built_in_words_needs_its_words():
    data = {**BASE, "type": "true_false", "key": "true",
            "text": {"en": {"stem": "True?"}, "ms": {"stem": "Betul?"}}}
    del data["options"]
    with pytest.raises(ValidationError) as info:
        parse_item(data)
    problems = info.value.errors()[0]["ctx"]["error"].problems
    assert [loc for loc, _ in problems] == [("text", "ms", "options")]
    assert "no built-in words for true/false in 'ms'" in problems[0][1]
    data["text"]["ms"]["options"] = {"true": "Betul", "false": "Salah"}
    assert parse_item(data).option_text("ms", "false") == "Salah"


def test_other_items_still_need_every_option_text():
    with pytest.raises(ValidationError) as info:
        parse_item({**BASE, "text": {"en": {"stem": "Which?"}}})
    problems = info.value.errors()[0]["ctx"]["error"].problems
    assert problems == [(("text", "en", "options"), "no text for option(s) right, wrong")]


def test_multiple_response_default_fractions_share_plus_and_minus_one():
    item = parse_item({
        **BASE, "type": "multiple_response", "options": ["a", "b", "c", "d"], "key": ["a", "b"],
        "text": {"en": {"stem": "S", "options": {o: o for o in "abcd"}}},
    })
    assert item.fractions() == {"a": 0.5, "b": 0.5, "c": -0.5, "d": -0.5}


@pytest.mark.parametrize(
    ("change", "loc", "fragment"),
    [
        ({"key": "nope"}, ("key", 0), "names no option"),
        ({"key": ["right", "wrong"]}, ("key",), "exactly one key"),
        ({"options": ["right", "right"]}, ("options", 1, "id"), "duplicate option id"),
        ({"type": "true_false"}, ("options",), "[true, false]"),
    ],
)
def test_semantic_errors_carry_their_field(change, loc, fragment):
    with pytest.raises(ValidationError) as info:
        parse_item({**BASE, **change})
    inner = info.value.errors()[0]["ctx"]["error"]
    assert any(p_loc == loc and fragment in msg for p_loc, msg in inner.problems), inner.problems


def test_unknown_field_and_bad_id_are_rejected():
    with pytest.raises(ValidationError) as info:
        parse_item({**BASE, "id": "Bad Id", "colour": "red"})
    kinds = {e["type"] for e in info.value.errors()}
    assert kinds == {"string_pattern_mismatch", "extra_forbidden"}


@given(any_items())
def test_model_yaml_model_round_trip(item):
    text = item_to_yaml(item)
    assert text.startswith("# yaml-language-server: $schema=")
    again = parse_item(yaml.load(text, Loader=yaml.CSafeLoader))
    assert again == item


def test_shared_fields_sets_keep_their_meaning():
    """Items share one fields-set object per combination (memory); what each item reports as
    set, dumps with exclude_unset and copies with update= must stay its own."""
    import pickle

    a = parse_item(BASE)
    b = parse_item(BASE)
    c = parse_item({**BASE, "difficulty": "hard"})
    assert a.model_fields_set == b.model_fields_set and "difficulty" not in a.model_fields_set
    assert "difficulty" in c.model_fields_set
    d = a.model_copy(update={"difficulty": "easy"})
    assert "difficulty" in d.model_fields_set
    assert "difficulty" not in a.model_fields_set and "difficulty" not in b.model_fields_set
    assert "difficulty" not in a.model_dump(exclude_unset=True)
    e = pickle.loads(pickle.dumps(c))
    assert e == c and e.model_fields_set == c.model_fields_set
    assert a.options[0].id is b.options[0].id  # option ids are interned


def test_a_suppression_may_name_one_field_and_one_term():
    item = parse_item({**BASE, "suppress": [
        {"rule": "TR005", "field": "text.en.stem", "term": "mean", "reason": "the verb"},
        {"rule": "WR002", "reason": "whole item"}]})
    narrow, whole = item.suppress
    assert narrow.covers("TR005", "text.en.stem", "mean")
    assert not narrow.covers("TR005", "text.en.stem", "median")
    assert not narrow.covers("TR005", "text.id.stem", "mean")
    assert not narrow.covers("WR002", "text.en.stem", "mean")
    assert whole.covers("WR002", "text.id.options.b")
    with pytest.raises(ValidationError):
        parse_item({**BASE, "suppress": [{"rule": "TR005", "field": "text en", "reason": "x y z"}]})


def test_a_key_naming_an_option_twice_is_an_error_at_the_key():
    """A multiple-response key may list several options, each once: `[right, right]` would
    give the option two shares of the marks in some formats and one in others."""
    data = {**BASE, "type": "multiple_response", "key": ["right", "right"]}
    with pytest.raises(ValidationError) as info:
        parse_item(data)
    problems = info.value.errors()[0]["ctx"]["error"].problems
    assert problems == [(("key",), "the key names an option twice")]
    assert parse_item({**data, "key": ["right"]}).key == ("right",)
