"""Lint's fast paths give exactly the results of the plain computations they replace (never their
speed): the worker pool with the language model deferred, the pre-scans, the batched glossary
scan, the function-word screen on bytes."""

from __future__ import annotations

import dataclasses
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpassess.lint import RULES, LintConfig, engine, langid, lint_banks
from dpassess.lint.glossary import Glossary
from dpassess.lint.langid import _PUNCT, LanguageGuesser
from dpassess.lint.registry import CHOICE, EVERY_ITEM, Hit
from dpassess.lint.rules.structure import _LETTERS, _LONE_CAPITAL
from dpassess.lint.text import (
    Phrases,
    has_digit,
    numbers,
    phrase_pattern,
    plain,
)
from dpassess.lint.words import ABSOLUTE, ALL_NONE
from dpassess.model import Bank, BankConfig, Item, LoadedItem, parse_item
from strategies import any_items, essay_items, matching_items, ordering_items
from test_lint_rules import BASE, build, merge

ENGLISH = "Correct. The averaged gradients give every replica exactly the same update at each step."


def _case(n: int) -> dict[str, Any]:
    """n items; every third from the second has English feedback under Indonesian (TR007),
    every fifth suppresses TR007."""
    items = []
    for i in range(n):
        patch: dict[str, Any] = {}
        if i % 3 == 1:
            patch = {"text": {"id": {"feedback": {"b": f"{ENGLISH} ({i})"}}}}
        if i % 5 == 0:
            patch["suppress"] = [{"rule": "TR007", "reason": "test"}]
        items.append(patch)
    return {"items": items}


@pytest.mark.parametrize("sample", [1, 64])
def test_workers_and_the_language_model(monkeypatch: pytest.MonkeyPatch, sample: int) -> None:
    """sample 1: only item 0 (clean) is sampled, so the workers defer TR007 and this process
    runs it; 64: the sample needs the model, loaded before the workers fork."""
    bank = build(_case(24))
    monkeypatch.setattr(langid, "_LOADED", set())  # nothing loaded yet in this process
    langid._identifier.cache_clear()
    monkeypatch.setattr(engine, "MODEL_SAMPLE", sample)
    deferred = []
    complete = engine._complete
    monkeypatch.setattr(engine, "_complete", lambda e, p, *a: deferred.append(bool(p[2])) or complete(e, p, *a))
    par = lint_banks([bank], LintConfig(), jobs=2)
    assert sum(deferred) == (8 if sample == 1 else 0)
    seq = lint_banks([bank], LintConfig(), jobs=1)
    assert par == seq
    assert sum(f.code == "TR007" for f in seq) == 7  # 8 items with English feedback, 1 suppressed
    # the suppression is used on item 10 (deferred in the workers too), unused on 0, 5, 15, 20
    assert sorted(f.path for f in seq if f.code == "SP001") == [
        "case/00-item-0.yaml", "case/05-item-5.yaml", "case/15-item-15.yaml", "case/20-item-20.yaml"
    ]


def _parsed_plain(source: str) -> str:
    """The visible text through the parser, never the shortcut for text without markup."""
    from dpassess.markup.markdown import _visible
    from dpassess.markup.parser import parser

    out: list[str] = []
    _visible(parser().parse(source), out)
    return " ".join("".join(out).split())


def _strings(alphabet: str, n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(n)]


def test_plain_fast_path_is_the_parsers_reading() -> None:
    for s in _strings("ab AB1 2\n\t\x1c\x85\u00a0\u2003`$\\[]()<>*_#-+.)!x9=&|~", 30000, 1):
        assert plain.__wrapped__(s) == _parsed_plain(s), repr(s)


def test_digits() -> None:
    for s in _strings("a 1\u0661\u00b2.,٣x", 20000, 2):
        assert has_digit(s) == (re.search(r"\d", s) is not None), repr(s)
        assert numbers(s) == set(re.findall(r"\d+", s)), repr(s)


def test_lone_capital_gate_never_hides_a_letter_reference() -> None:
    for s in _strings("AB(F) -x\n_andorpt", 40000, 3):
        for pat in _LETTERS.values():
            if pat.search(s):
                assert _LONE_CAPITAL.search(s), repr(s)


def test_screen_on_bytes_is_the_screen_on_text() -> None:
    g = LanguageGuesser(("id", "en"))
    texts = [
        *_strings("ab y dan the \x1c\x1f.,'/-Ü’", 20000, 4),
        "dan yang the", "the of and dan", "Dengan 5 GPU dan batch per GPU", "a/b/c dan",
    ]
    for lang in ("id", "en"):
        got = [t for _, t in g.unsettled(((i, t) for i, t in enumerate(texts)), lang)]
        want = [t for t in texts if (lambda n, s: n >= 3 and not s)(*g.screen_text(t, lang))]
        assert got == want
    assert any(k >= 128 for k in _PUNCT)  # non-ASCII text takes the str path


GLOSSARY = [
    {"term": "all-reduce", "keep": True, "wrong": {"id": ["semua pengurangan", "semua-pengurangan"]}},
    {"term": "broadcast", "keep": True, "wrong": {"id": ["siaran"]}},
    {"term": "data parallelism", "render": {"id": ["paralelisme data"]}},
    {"term": "GPU", "keep": True},
    {"term": "reduce", "keep": True},
]


def test_glossary_scans_match_plain_finditer() -> None:
    config = BankConfig.model_validate(merge(BASE["bank"], {"glossary": GLOSSARY}))
    g = Glossary(config)
    words = ["all", "reduce", "all-reduce", "gpus", "semua", "pengurangan", "siaran", "data",
             "parallelism", "paralelisme", "broadcasted", "xgpu", "-", " ", "\n", "Σ", "İ"]
    rng = random.Random(5)
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 6))) for _ in range(3000)]
    for lang in ("en", "id"):
        pat = g._accepted[lang]
        assert pat is not None
        for t in texts:
            low = t.lower()
            assert [m.span() for m in pat.finditer(low)] == [m.span() for m in pat.full.finditer(low)]
            # (no term here is a one-word translated noun: no match is a verb use)
            assert frozenset(int(m.lastgroup[1:]) for m in pat.full.finditer(low)
                             if m.lastgroup) == g.accepted(t, lang)
        for i in range(0, len(texts), 7):
            group = texts[i : i + 7]
            assert g.accepted_fields(group, lang) == [g.accepted(t, lang) for t in group]
        wrong = g._wrong.get(lang)
        if wrong is not None:
            for t in texts:
                low = t.lower()
                assert (wrong.search(low) is None) == (wrong.full.search(low) is None)


def test_phrases_match_their_pattern() -> None:
    vocab = ["All", "of", "the", "above", "ONLY", "none", "semua", "jawaban", "benar", "all-reduce",
             "tidak", "ada", "yang", "-", "\n", "always.", "nevermore", "İ", "ſelalu", "K"]
    rng = random.Random(6)
    texts = [" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 8))) for _ in range(4000)]
    for lists in (ABSOLUTE, ALL_NONE):
        for phrases in lists.values():
            fast, pat = Phrases(phrases), phrase_pattern(phrases)
            assert pat is not None
            for t in texts:
                assert [m.span() for m in fast.finditer(t)] == [m.span() for m in pat.finditer(t)], t


def test_a_rule_runs_only_on_the_item_classes_it_names() -> None:
    """The engine hands each item the rules whose `items` include its class, and no others."""
    rules = engine.ItemRules(RULES.values())
    base = {k: v for k, v in BASE["item"].items() if k not in ("options", "key")}
    tf = parse_item(merge(base, {"type": "true_false", "key": "true", "text": {
        "en": {"options": None, "feedback": None}, "id": {"options": None, "feedback": None}}}))
    mr = parse_item(merge(BASE["item"], {"type": "multiple_response", "key": ["a", "b"]}))
    sc = parse_item(BASE["item"])
    every = {c for c, r in RULES.items() if r.scope == "item" and r.items == EVERY_ITEM}
    assert {"ST007", "TR001", "LM005"} <= every
    for item, only in ((sc, {"ST002", "ST004", "WR001", "WR005", "ST005", "ST011", "WR011",
                             "LM002"}),
                       (mr, {"ST003", "ST004", "LM002", "ST005", "ST010", "ST011", "WR011"}),
                       (tf, {"ST002", "ST005", "WR010"})):
        got = {r.code for r in rules.of(item)}
        choice = {c for c, r in RULES.items() if r.scope == "item" and r.items == CHOICE}
        assert got == every | choice | only, (item.type, got ^ (every | choice | only))



@given(st.one_of(essay_items(), matching_items(), ordering_items()))
def test_the_new_item_types_get_their_rules_and_no_choice_rule(item: Item) -> None:
    """An essay gets the rules of every item and ST012, no option rule; a matching or ordering
    item gets ST005 (its premises, responses or options must differ), a matching item LM010
    (Moodle's menu of responses), an ordering item LM008 (Canvas writes it as a matching
    question)."""
    rules = engine.ItemRules(RULES.values())
    every = {c for c, r in RULES.items() if r.scope == "item" and r.items == EVERY_ITEM}
    only = {"essay": {"ST012"}, "matching": {"ST005", "LM010"}, "ordering": {"ST005", "LM008"}}[
        item.type.value]
    assert {r.code for r in rules.of(item)} == every | only


@given(any_items())
def test_every_rule_runs_on_every_item_type(item: Item) -> None:
    """No rule fails (an internal error is reported as the rule's own finding) on an item of
    any type."""
    config = BankConfig.model_validate(BASE["bank"])
    bank = Bank(config=config, root=Path("p"), entries=[LoadedItem(item, "p/x.yaml")],
                config_path="p/bank.yaml")
    found = lint_banks([bank], LintConfig(), jobs=1)
    assert not [f for f in found if "internal error" in f.message]


def test_a_failing_rule_is_its_own_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule that fails, even after yielding a hit, gives one finding (the failure, at the
    item) instead of its hits; every other rule's findings are the same as without it."""
    bank = build(_case(4))
    before = lint_banks([bank], LintConfig(), jobs=1)
    rule = RULES["TR009"]

    def check(ctx: Any) -> Any:
        yield from rule.check(ctx)
        yield Hit(("text",), "a hit before the failure")
        raise ValueError("boom")

    broken = dataclasses.replace(rule, check=check)
    monkeypatch.setitem(RULES, rule.code, broken)
    after = lint_banks([bank], LintConfig(), jobs=1)
    failed = [f for f in after if f.code == "TR009"]
    assert [f.message for f in failed] == [
        "internal error in rule TR009: ValueError: boom (please report this)"] * len(bank.entries)
    assert [f.path for f in failed] == sorted(e.path for e in bank.entries)
    assert [f for f in after if f.code != "TR009"] == [f for f in before if f.code != "TR009"]
