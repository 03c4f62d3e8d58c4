"""Adding an item type, as docs/architecture.md says it: every type's class answers the questions
the rest of the code asks of an item (checked here on the classes and on the kitchen-sink bank's
items), and the files that docs/architecture.md names are exactly those holding a `match` that
names every item type and ends in `assert_never` (read from the source's syntax trees), so that
the documented steps stay the ones mypy makes a contributor take."""

from __future__ import annotations

import ast
import re
import textwrap
import typing

import pytest

from conftest import ROOT
from dpassess import load_bank, model
from dpassess.model import ITEM_CLASSES, ContentBase, Item, ItemBase, ItemType, ScoredItem

SRC = ROOT / "src" / "dpassess"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
KITCHEN_SINK = ROOT / "tests" / "banks" / "kitchen-sink"

#: Files the steps name for what they hold besides a `match` (the class, its re-export; the
#: importers' builders, written only for a type some format carries).
NAMED_OTHERWISE = {"model/items.py", "model/__init__.py", "importers/questions.py"}


def _union_classes(union: object) -> set[type]:
    args = typing.get_args(union)
    if args and typing.get_origin(union) is typing.Annotated:
        return _union_classes(args[0])
    return set(args) if args else {union}  # type: ignore[arg-type]


SCORED = {t for t, cls in ITEM_CLASSES.items() if cls in _union_classes(ScoredItem)}


# --- every type answers the model's questions ---------------------------------------------------


def _content_class(cls: type[ItemBase]) -> type[ContentBase]:
    """The class of the item type's text in one language (`text: dict[LangCode, <it>]`)."""
    annotation = cls.model_fields["text"].annotation
    content = typing.get_args(annotation)[1]
    assert isinstance(content, type) and issubclass(content, ContentBase)
    return content


def _defined_below(cls: type, base: type, name: str) -> bool:
    """Whether `name` is defined by `cls` or an ancestor of it that is not `base` or above."""
    return any(name in vars(k) for k in cls.__mro__[:cls.__mro__.index(base)])


def test_every_type_has_its_class_in_the_union():
    assert set(ITEM_CLASSES) == set(ItemType)
    assert set(ITEM_CLASSES.values()) == _union_classes(Item)
    assert _union_classes(ScoredItem) <= _union_classes(Item)


@pytest.mark.parametrize("kind", list(ItemType), ids=str)
def test_every_type_says_whether_it_is_scored(kind):
    cls = ITEM_CLASSES[kind]
    assert _defined_below(cls, ItemBase, "scored"), f"{cls.__name__} does not set `scored`"
    assert cls.scored == (kind in SCORED), (
        f"{cls.__name__}.scored is {cls.scored}, but it is {'' if kind in SCORED else 'not '}"
        "in ScoredItem")


@pytest.mark.parametrize("kind", list(ItemType), ids=str)
def test_every_content_class_with_fields_of_its_own_lists_them(kind):
    content = _content_class(ITEM_CLASSES[kind])
    own = set(content.model_fields) - set(ContentBase.model_fields)
    if own:
        assert _defined_below(content, ContentBase, "own_texts"), (
            f"{content.__name__} adds {', '.join(sorted(own))} but not `own_texts`")


def _items() -> list[Item]:
    return [e.item for e in load_bank(KITCHEN_SINK).entries]


def test_the_kitchen_sink_bank_has_every_type():
    assert {it.type for it in _items()} == set(ItemType)


def test_own_texts_lists_every_text_the_content_holds():
    """Oracle: the content's own data, walked generically (every string under a field that
    `ContentBase` does not have), against what the class lists."""
    for item in _items():
        for lang, content in item.text.items():
            listed = {(path, text) for path, text, _ in content.own_texts()}
            held: set[tuple[tuple[str | int, ...], str]] = set()

            def walk(path: tuple[str | int, ...], value: object,
                     held: set[tuple[tuple[str | int, ...], str]] = held) -> None:
                if isinstance(value, str):
                    held.add((path, value))
                elif isinstance(value, dict):
                    for k, v in value.items():
                        walk((*path, k), v)
                elif isinstance(value, tuple | list):
                    for k, v in enumerate(value):
                        walk((*path, k), v)
                elif isinstance(value, model.GapContent):
                    for name in type(value).model_fields:
                        walk((*path, name), getattr(value, name))

            for name in set(type(content).model_fields) - set(ContentBase.model_fields):
                walk((name,), getattr(content, name))
            assert listed == held, f"{item.id} ({lang})"


def test_choice_answers_agree_with_the_options():
    """What a choice item says of its options against its own fields (key, options)."""
    kinds = set()
    for item in _items():
        if isinstance(item, model.ChoiceBase):
            kinds.add(item.type)
            assert item.choice_ids == tuple(o.id for o in item.options)
            assert item.takes_one == (not isinstance(item, model.MultipleResponse))
            for oid in item.choice_ids:
                assert item.is_distractor(oid) == (item.fractions()[oid] <= 0)
                assert item.option_text(next(iter(item.text)), oid)
        else:
            assert item.choice_ids == ()
            assert not item.takes_one
            with pytest.raises(ValueError, match="has no options to choose"):
                item.option_text(next(iter(item.text)), "a")
    assert len(kinds) == 3


# --- the files the steps name are the files a new type makes mypy name --------------------------


def _covered(match: ast.Match) -> set[ItemType]:
    """The item types the cases of `match` name, by class (or a base class) or by `ItemType`."""
    out: set[ItemType] = set()
    for case in match.cases:
        for pat in ast.walk(case.pattern):
            if isinstance(pat, ast.MatchClass) and isinstance(pat.cls, ast.Name):
                cls = getattr(model, pat.cls.id, None)
                if isinstance(cls, type) and issubclass(cls, ItemBase):
                    out |= {t for t, c in ITEM_CLASSES.items() if issubclass(c, cls)}
            elif (isinstance(pat, ast.MatchValue) and isinstance(pat.value, ast.Attribute)
                  and isinstance(pat.value.value, ast.Name) and pat.value.value.id == "ItemType"):
                out.add(ItemType[pat.value.attr])
    return out


def _closed(match: ast.Match) -> bool:
    """Whether the match ends in `case _: assert_never(...)` (mypy checks it is exhaustive)."""
    last = match.cases[-1]
    return (isinstance(last.pattern, ast.MatchAs) and last.pattern.pattern is None
            and len(last.body) == 1 and isinstance(last.body[0], ast.Expr)
            and isinstance(last.body[0].value, ast.Call)
            and isinstance(last.body[0].value.func, ast.Name)
            and last.body[0].value.func.id == "assert_never")


def closed_matches(source: str) -> list[set[ItemType]]:
    """The item types named by each closed `match` of `source`."""
    return [_covered(node) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Match) and _closed(node)]


def _files_matching(every: set[ItemType]) -> set[str]:
    """The files (under src/dpassess) with a closed match naming at least `every` type."""
    return {p.relative_to(SRC).as_posix() for p in sorted(SRC.rglob("*.py"))
            if any(every <= c for c in closed_matches(p.read_text(encoding="utf-8")))}


def _documented() -> set[str]:
    """The source files the "An item type" step of docs/architecture.md names."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text[text.index("**An item type**"):]
    section = section[:section.index("\n**", 1)]
    return {p for p in re.findall(r"`([\w/]+\.py)`", section) if (SRC / p).is_file()}


def test_the_documented_files_are_those_a_new_type_touches():
    every = _files_matching(set(ItemType))
    scored = _files_matching(SCORED) - every
    named = _documented()
    assert every | scored | NAMED_OTHERWISE == named, (
        f"not in docs/architecture.md: {sorted((every | scored) - named)}; "
        f"named there but no longer needed: {sorted(named - every - scored - NAMED_OTHERWISE)}")
    # the count the docs give, and the target it keeps: an unscored type touches these alone
    assert len(every | {"model/items.py", "model/__init__.py"}) <= 11
    assert "nine files" in ARCHITECTURE.read_text(encoding="utf-8")
    assert len(every | {"model/items.py", "model/__init__.py"}) == 9


@pytest.mark.parametrize(("source", "expected"), [
    # every type by its class, closed: a new type must be added here
    ("match item:\n" + "".join(f"    case {c.__name__}():\n        pass\n"
                               for c in ITEM_CLASSES.values())
     + "    case _:\n        assert_never(item)\n", set(ItemType)),
    # a base class names each of its types
    ("match item:\n    case ChoiceBase():\n        pass\n    case _:\n"
     "        assert_never(item)\n", {t for t, c in ITEM_CLASSES.items()
                                       if issubclass(c, model.ChoiceBase)}),
    # by ItemType, closed
    ("match k:\n" + "".join(f"    case ItemType.{t.name}:\n        pass\n" for t in ItemType)
     + "    case _:\n        assert_never(k)\n", set(ItemType)),
    # a default case instead of assert_never: not closed, a new type passes by
    ("""
     match item:
         case SingleChoice():
             pass
         case _:
             pass
     """, None),
])
def test_closed_matches_finds_what_it_should(source, expected):
    found = closed_matches(textwrap.dedent(source))
    assert found == ([] if expected is None else [expected])
