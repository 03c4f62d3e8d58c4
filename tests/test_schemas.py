"""The published JSON Schemas accept what the loader accepts and refuse what it refuses: every
item and stimulus file of the bundled and test banks validates against docs/schema/item.schema.json
(checked by jsonschema, an independent validator), and a few broken files do not."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from conftest import ROOT

SCHEMA = json.loads((ROOT / "docs" / "schema" / "item.schema.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
FILES = sorted(p for folder in ("items", "tests/banks") for p in (ROOT / folder).rglob("*.yaml")
               if p.name != "bank.yaml")


def test_there_are_files_of_every_kind():
    kinds = {yaml.safe_load(p.read_text(encoding="utf-8")).get("type", "single_choice")
             for p in FILES}
    assert {"single_choice", "multiple_response", "true_false", "numerical", "short_answer",
            "matching", "essay", "ordering", "stimulus"} <= kinds


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_bank_file_validates(path):
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    errors = [e.message for e in VALIDATOR.iter_errors(data)]
    assert errors == []


GOOD = {"schema": 1, "id": "q-one", "topic": "a/b", "options": ["right", "wrong"],
        "key": "right", "text": {"en": {"stem": "Which?",
                                        "options": {"right": "R", "wrong": "W"}}}}


@pytest.mark.parametrize("change", [
    {"key": "B"},                      # a letter, not an option id
    {"colour": "red"},                 # an unknown field
    {"type": "cloze"},                 # an unknown type
    {"options": [{"id": "a", "lockd": True}, "b"]},
    {"points": -1},
])
def test_broken_files_are_refused(change):
    assert VALIDATOR.is_valid(GOOD)
    assert not VALIDATOR.is_valid({**GOOD, **change})
