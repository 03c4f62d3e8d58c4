"""The models as plain data (`dpassess.runtime.modeldata`): what the lint cache keeps of each
unchanged item for `load_and_lint`. Rebuilt without validation, a model must be the model the
loader makes (equal, the same JSON, the same types down to the enums and the fields set), and
a planted or damaged entry must be a miss, never code run and never an exception."""

from __future__ import annotations

import pickle
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from pydantic import BaseModel

from conftest import ROOT
from dpassess.bank.load import load_banks
from dpassess.lint import LintConfig, incremental, lint_banks
from dpassess.model import Item
from dpassess.runtime import modeldata, records
from dpassess.runtime.cache import Cache
from strategies import any_items

BANKS = [ROOT / "items", ROOT / "tests" / "banks" / "kitchen-sink", ROOT / "tests" / "banks" / "maths"]


def same(a: Any, b: Any, where: str = "") -> None:
    """`a` and `b` are the same value, type for type (an enum stays an enum, a tuple a tuple)."""
    assert type(a) is type(b), where
    if isinstance(a, BaseModel):
        assert a.model_fields_set == b.model_fields_set, where
        assert a.__pydantic_extra__ == b.__pydantic_extra__, where
        assert list(a.__dict__) == list(b.__dict__), where
        for k in a.__dict__:
            same(a.__dict__[k], b.__dict__[k], f"{where}.{k}")
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, tuple | list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
    else:
        assert a == b or (a != a and b != b), where  # NaN is not in the model, but be exact


def roundtrip(model: BaseModel) -> BaseModel:
    """Through the cache's own serialisation (the unpickler that refuses every class)."""
    return modeldata.load(records.loads(records.dumps(modeldata.dump(model))))


@given(any_items())
def test_a_rebuilt_item_is_the_item(item: Item) -> None:
    back = roundtrip(item)
    assert back == item
    assert back.model_dump_json() == item.model_dump_json()
    assert back.model_dump(by_alias=True) == item.model_dump(by_alias=True)
    same(back, item)


def test_every_item_and_stimulus_of_the_repository_banks() -> None:
    banks = load_banks(BANKS)
    models: list[BaseModel] = [e.item for b in banks for e in b.entries]
    models += [s.stimulus for b in banks for s in b.stimuli]
    assert any(b.stimuli for b in banks)
    assert len({type(m) for m in models}) >= 9  # every item type, and the stimuli
    for m in models:
        back = roundtrip(m)
        assert back == m
        assert back.model_dump_json() == m.model_dump_json()
        same(back, m)


def test_the_plain_form_is_plain() -> None:
    """Nothing but Python's own types: an enum is written as its value."""
    item = load_banks([ROOT / "tests" / "banks" / "kitchen-sink"])[0].entries[0].item

    def walk(v: object) -> None:
        assert type(v) in (tuple, list, dict, str, int, float, bool, bytes, type(None)), type(v)
        if isinstance(v, tuple | list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(k)
                walk(x)

    plain = modeldata.dump(item)
    walk(plain)
    assert not any(isinstance(v, Enum) for v in plain)


class Payload:
    """Runs code when unpickled (it must never be)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (Path.touch, (self.marker,))


@pytest.mark.parametrize("bad", [
    None, (), ("SingleChoice",), ("NoSuchClass", 0), ("BankConfig", 0), ("Path", 0, "x"),
    ("Option", 0), ("Option", 1 << 40, "a", False), ("Option", -1, "a", False),
    ["Option", 0, "a", False], ("Option", 0, "a", False, "one too many"),
    ("SingleChoice", 0, *("x",) * 22),
])
def test_a_damaged_or_foreign_entry_raises(bad: object) -> None:
    """The shape of the models and enums is checked (a plain field is taken as read: the
    entries are authenticated with the user's key, and written by this version)."""
    with pytest.raises((TypeError, ValueError, KeyError, IndexError, AttributeError)):
        modeldata.load(bad)


def test_a_planted_model_is_a_miss(tmp_path: Path) -> None:
    """Entries of the models layer replaced (a class named, a wrong shape): the findings and the bank are those of a run without a cache, nothing planted
    runs, and the next run reads the rewritten layer."""
    import shutil

    bank = tmp_path / "bank"
    shutil.copytree(ROOT / "tests" / "banks" / "kitchen-sink", bank)
    cache = Cache(tmp_path / "c")
    _, found = incremental.load_and_lint([bank], LintConfig(), cache)
    expected = lint_banks(load_banks([bank]), LintConfig())
    assert found == expected
    marker = tmp_path / "ran"
    folder = incremental._folder(bank, LintConfig(), {})
    assert folder is not None
    shards = folder.shards
    files = folder.files
    values = {i: cache.load_plain(folder.key_root, f"models-{i:02x}", folder.salt)
              for i in shards}
    for n, (i, paths) in enumerate(sorted(shards.items())):
        value = values[i]
        assert isinstance(value, dict) and set(value) == set(paths)
        f = paths[0]
        digest = value[f][0]
        if n % 4 == 3:  # a pickle that would run code, with an authentic tag
            cache.store_bytes(folder.key_root, f"models-{i:02x}", folder.salt,
                              pickle.dumps({f: (digest, Payload(marker))}))
            continue
        value[f] = [(digest, ("Path", 0, str(marker))), (digest, ("Option", 0)), (digest,)][n % 4]
        cache.store_plain(folder.key_root, f"models-{i:02x}", folder.salt, value)
    assert len(shards) >= 4
    again, found = incremental.load_and_lint([bank], LintConfig(), cache)
    assert not marker.exists()
    assert found == expected
    fresh = load_banks([bank])[0]
    assert [e.item for e in again[0].entries] == [e.item for e in fresh.entries]
    assert [e.item.model_dump_json() for e in again[0].entries] == [
        e.item.model_dump_json() for e in fresh.entries]
    models = incremental._models(cache, folder)
    assert set(models.models) == set(files) and not models.dirty


def test_every_model_class_has_a_plain_form() -> None:
    """Every class an item or a stimulus can hold (a new item type's too) has a reader and a
    writer: a field of a type with no plain form is an error here, not a cache that silently
    never hits."""
    modeldata.ready()
    from dpassess.model import ITEM_CLASSES, Stimulus

    names = set(modeldata._SPECS)
    assert {c.__name__ for c in ITEM_CLASSES.values()} | {"Stimulus", "Option"} <= names
    assert Stimulus.__name__ in names
