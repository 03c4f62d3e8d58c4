"""The bank rules' faster paths against their definitions: words of ASCII text against the word
pattern, BK006/BK007 counts against the item rules' views (`key_length_cue`, `absolute_terms`),
BK001 against a plain dictionary of every stem and its answers, and BK002's choice of the item
it names, worked by hand."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

import dpassess.lint.rules.bank as bank_rules
from dpassess.lint import RULES, LintConfig
from dpassess.lint.context import BankContext, ItemContext
from dpassess.lint.rules.writing import absolute_terms, key_length_cue
from dpassess.lint.text import _WORD, norm, words
from dpassess.model import Bank, BankConfig, LoadedItem, SingleChoice, parse_item

BANK = {
    "schema": 1, "id": "bank-b", "title": {"en": "B", "id": "B"}, "languages": ["en", "id"],
    "default_language": "en",
    "glossary": [{"term": "all-reduce", "keep": True}, {"term": "GPU", "keep": True}],
}


def _bank(items: list[dict[str, Any]]) -> Bank:
    entries = [LoadedItem(parse_item(d), f"b/{d['id']}.yaml") for d in items]
    return Bank(config=BankConfig.model_validate(BANK), root=Path("b"), entries=entries,
                config_path="b/bank.yaml")


def _item(i: int, stems: tuple[str, str], options: list[tuple[str, str]], key: int,
          **more: Any) -> dict[str, Any]:
    ids = [f"o{j}" for j in range(len(options))]
    return {
        "schema": 1, "id": f"item-{i}", "type": "single_choice", "topic": "t",
        "options": ids, "key": ids[key], **more,
        "text": {lang: {"stem": stems[n], "options": {o: t[n] for o, t in zip(ids, options, strict=True)}}
                 for n, lang in enumerate(("en", "id"))},
    }


# --- words ------------------------------------------------------------------------------

ASCII_LIKE = st.text(st.sampled_from("aZ09 _-'’.,\t\n*`\u00e9\u0130\u00df\u0660") | st.characters(),
                     max_size=40)


@given(ASCII_LIKE)
def test_words_are_the_pattern_matches_of_the_lower_cased_text(text: str) -> None:
    assert words(text) == tuple(_WORD.findall(text.lower()))


def test_words_hand_worked() -> None:
    assert words("It's an All-Reduce -- 'not' a-b- x--y 3.5") == (
        "it's", "an", "all-reduce", "not", "a-b", "x", "y", "3", "5")


# --- BK006, BK007 -------------------------------------------------------------------------

FRAGMENTS = ["Only", "only the", "all-reduce", "All", "never", "Always", "hanya", "semua",
             "tidak pernah", "**bold**", "`code`", "![image](x.png)", "GPU", "weights", "data",
             "bobot", "Straße", "é", "a", "the outputs of one GPU"]
TEXT = st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=5).map(" ".join)


@st.composite
def choice_banks(draw: st.DrawFn) -> Bank:
    items = []
    for i in range(draw(st.integers(5, 12))):
        k = draw(st.integers(2, 5))
        options = [(draw(TEXT), draw(TEXT)) for _ in range(k)]
        items.append(_item(i, (f"Stem {i}?", f"Soal {i}?"), options, draw(st.integers(0, k - 1))))
    return _bank(items)


@contextmanager
def spied(*names: str) -> Iterator[list[tuple[str, tuple[Any, ...]]]]:
    """The calls of the bank rules to their statistics functions, in order."""
    calls: list[tuple[str, tuple[Any, ...]]] = []
    with ExitStack() as stack:
        for name in names:
            real = getattr(bank_rules, name)

            def spy(*args: Any, _name: str = name, _real: Any = real) -> Any:
                calls.append((_name, args))
                return _real(*args)
            stack.enter_context(mock.patch.object(bank_rules, name, spy))
        yield calls


def _reference(bank: Bank) -> list[tuple[str, tuple[Any, ...]]]:
    """BK006's and BK007's statistics, counted on the item rules' views."""
    bctx = BankContext(bank, LintConfig())
    ctxs = [ItemContext(e.item, e.path, bctx) for e in bank.entries
            if isinstance(e.item, SingleChoice) and len(e.item.options) >= 3]
    b6: list[tuple[str, tuple[Any, ...]]] = []
    b7: list[tuple[str, tuple[Any, ...]]] = []
    for lang in bctx.languages:
        hits = 0
        chance = var = 0.0
        scores = {"longest": 0.0, "shortest": 0.0}
        for ctx in ctxs:
            v, key, k = ctx.view(lang), ctx.item.key[0], len(ctx.option_ids)
            hits += key_length_cue(v, key, ctx.distractors, 1.0) is not None
            chance += 1 / k
            var += (1 / k) * (1 - 1 / k)
            kept = [o for o in ctx.option_ids if not absolute_terms(v, o)] or list(ctx.option_ids)
            for name, pick in (("longest", max), ("shortest", min)):
                chosen = pick(len(v.options[o]) for o in kept)
                top = [o for o in kept if len(v.options[o]) == chosen]
                scores[name] += (key in top) / len(top)
        if len(ctxs) >= 5:
            b6.append(("binom_sf", (hits, len(ctxs), chance / len(ctxs))))
            best = max(scores, key=scores.__getitem__)
            b7.append(("z_score", (scores[best], chance, var)))
    return b6 + b7


@given(choice_banks())
def test_key_cue_counts_are_the_views_counts(bank: Bank) -> None:
    bctx = BankContext(bank, LintConfig())
    with spied("binom_sf", "z_score") as calls:
        for code in ("BK006", "BK007"):
            list(RULES[code].check(bctx))
    assert calls == _reference(bank)


# --- BK001, BK002 -------------------------------------------------------------------------

STEMS = st.sampled_from(["Which is it?", "which IS it", "**Which** is `it`?", "Other one?", ""])
OPTIONS = st.sampled_from(["Yes", "yes!", "No", "Maybe", "*No*"])


@st.composite
def duplicate_banks(draw: st.DrawFn) -> Bank:
    items = []
    for i in range(draw(st.integers(1, 10))):
        options = [(draw(OPTIONS), draw(OPTIONS)) for _ in range(3)]
        stems = (draw(STEMS) or "Empty?", draw(STEMS)) if draw(st.booleans()) else ("Own?", f"{i}?")
        items.append(_item(i, stems, options, 0))
    return _bank(items)


def _duplicates(bank: Bank) -> list[tuple[str | None, str]]:
    """BK001 by its definition: the first item with the same stem and options in a language."""
    seen: dict[tuple[str, str, tuple[str, ...]], str] = {}
    out = []
    for item in bank:
        for lang, c in item.text.items():
            if not norm(c.stem):
                continue
            answers = tuple(sorted(map(norm, c.options.values())))  # type: ignore[union-attr]
            first = seen.setdefault((lang, norm(c.stem), answers), item.id)
            if first != item.id:
                out.append((item.id, f"duplicates item {first!r} ({lang!r})"))
                break
    return out


@given(duplicate_banks())
def test_duplicates_are_found_as_defined(bank: Bank) -> None:
    found = RULES["BK001"].check(BankContext(bank, LintConfig()))
    assert [(h.item_id, h.message) for h in found] == _duplicates(bank)


def test_a_near_duplicate_is_named_past_its_enemies() -> None:
    """item-4 is one word from each of items 0-3 (a different word each), and an enemy of three
    of them: it nearly repeats the fourth, whatever the order of the words' hashes."""
    base = "alpha beta gamma delta epsilon"
    extra = ["red", "green", "blue", "grey"]
    options = [("A", "A"), ("B", "B"), ("C", "C")]
    items = [_item(i, (f"{base} {' '.join(e for e in extra if e != w)}", f"soal {i}"), options, 0)
             for i, w in enumerate(extra)]
    items.append(_item(4, (f"{base} {' '.join(extra)}", "soal 4"), options, 0,
                       enemies=["item-0", "item-1", "item-3"]))
    found = [(h.item_id, h.message.split(":")[0])
             for h in RULES["BK002"].check(BankContext(_bank(items), LintConfig()))]
    assert found == [
        ("item-1", "the stem nearly repeats item 'item-0' ('en')"),
        ("item-2", "the stem nearly repeats item 'item-0' ('en')"),
        ("item-3", "the stem nearly repeats item 'item-0' ('en')"),
        ("item-4", "the stem nearly repeats item 'item-2' ('en')"),
    ]


def test_an_enemy_first_under_a_key_hides_no_later_item() -> None:
    """items 0, 1 and 2 each change the same word of one stem ("red" -> "green", "blue"), so
    all three share one key (the stem without that word); item 0 came first under it and is
    item 2's enemy: item 2 still nearly repeats item 1."""
    base = "alpha beta gamma delta epsilon"
    options = [("A", "A"), ("B", "B"), ("C", "C")]
    items = [_item(i, (f"{base} {w}", f"soal {i}"), options, 0)
             for i, w in enumerate(["red", "green"])]
    items.append(_item(2, (f"{base} blue", "soal 2"), options, 0, enemies=["item-0"]))
    found = [(h.item_id, h.message.split(":")[0])
             for h in RULES["BK002"].check(BankContext(_bank(items), LintConfig()))]
    assert found == [
        ("item-1", "the stem nearly repeats item 'item-0' ('en')"),
        ("item-2", "the stem nearly repeats item 'item-1' ('en')"),
    ]
