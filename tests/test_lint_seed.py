"""The seed bank lints clean; the original seed wording (tests/fixtures/seed-original) reports
the flaws it had, with their codes."""

from __future__ import annotations

from collections import defaultdict

import pytest

from conftest import ROOT, SEED_BANK
from dpassess.bank.load import load_banks
from dpassess.diagnostics import Diagnostic
from dpassess.lint import lint_banks

ORIGINAL = ROOT / "tests" / "fixtures" / "seed-original"


def test_seed_bank_lints_clean() -> None:
    findings = lint_banks(load_banks([SEED_BANK]))
    assert findings == [], "\n".join(map(str, findings))


def test_seed_bank_keeps_sources_verbatim() -> None:
    """The fix changed wording, never the recorded original."""
    fixed = {i.id: i for i in load_banks([SEED_BANK])[0]}
    original = {i.id: i for i in load_banks([ORIGINAL])[0]}
    assert fixed.keys() == original.keys()
    for item_id, item in fixed.items():
        assert item.source == original[item_id].source
        assert item.key == original[item_id].key


@pytest.fixture(scope="module")
def by_item() -> dict[str, list[Diagnostic]]:
    out: dict[str, list[Diagnostic]] = defaultdict(list)
    for f in lint_banks(load_banks([ORIGINAL])):
        out[f.path.rsplit("/", 1)[-1].split(".")[0]].append(f)
    return out


def _has(findings: list[Diagnostic], code: str, text: str = "", field: str = "") -> bool:
    return any(
        f.code == code and text in f.message and (not field or f.field == field) for f in findings
    )


def test_original_wrong_glossary_renderings(by_item: dict[str, list[Diagnostic]]) -> None:
    assert _has(by_item["01-gpu-holds"], "TR006", "'status pengoptimal'", "text.id.options.optimizer-state-only")
    assert _has(by_item["02-sync-operation"], "TR006", "'siaran'", "text.id.options.broadcast")
    assert _has(by_item["05-ddp-overlap"], "TR006", "'semua pengurangan'", "text.id.options.overlap-backward")
    assert _has(by_item["05-ddp-overlap"], "TR006", "'gerakan mundur'", "text.id.options.overlap-backward")
    assert all(f.severity == "error" for fs in by_item.values() for f in fs if f.code == "TR006")


def test_original_key_position_pattern(by_item: dict[str, list[Diagnostic]]) -> None:
    assert _has(by_item["bank"], "BK005", "A B C D A B C D")


def test_original_absolute_terms_and_absurd_distractors(by_item: dict[str, list[Diagnostic]]) -> None:
    assert _has(by_item["04-nccl-algorithms"], "WR003", "'only'", "text.en.options.seed-and-lr")
    assert _has(by_item["04-nccl-algorithms"], "WR003", "'only'", "text.en.options.param-count")
    assert _has(by_item["06-global-batch"], "WR003", "'always'", "text.en.options.always-w")
    # item 7's absurd distractors: 'only to one worker', 'always reduce ... to zero'
    assert _has(by_item["07-scaling-overhead"], "WR003", "'always'", "text.en.options.batch-zero")
    assert _has(by_item["07-scaling-overhead"], "WR003", "'only'", "text.en.options.single-copy")
    # item 8: 'Shard parameters automatically across all workers'
    assert _has(by_item["08-gradient-accumulation"], "WR003", "'all'", "text.en.options.auto-shard")
    # 'All-reduce' in item 7's distractor is a glossary term, not the absolute 'all'
    assert not _has(by_item["07-scaling-overhead"], "WR003", field="text.en.options.params-vanish")


def test_original_key_is_longest(by_item: dict[str, list[Diagnostic]]) -> None:
    for name in ("03-memory-limit", "06-global-batch", "07-scaling-overhead", "08-gradient-accumulation"):
        assert _has(by_item[name], "WR001", "'en'"), name
    assert _has(by_item["05-ddp-overlap"], "WR001", "'id'")
    assert not _has(by_item["01-gpu-holds"], "WR001")
    assert not _has(by_item["04-nccl-algorithms"], "WR001")
    assert _has(by_item["bank"], "BK006", "'en'")
    assert _has(by_item["bank"], "BK007", "'en'")


def test_original_clang_association(by_item: dict[str, list[Diagnostic]]) -> None:
    assert _has(by_item["07-scaling-overhead"], "WR005", "'menambah'")


def test_the_review_findings_are_acted_on() -> None:
    # the independent bilingual review's should-fix items on the seed bank (docs/seed-bank.md)
    import re

    from dpassess.lint.rules.writing import _leading_number

    items = {i.id: i for i in load_banks([SEED_BANK])[0]}
    nccl = items["dp-nccl-algorithms"]
    for lang, word in (("en", "protocol"), ("id", "protokol")):
        options = nccl.text[lang].options
        naming = [o for o, t in options.items() if word in t]
        assert nccl.key[0] in naming and len(naming) >= 3, (lang, naming)  # not the key alone
        assert max(options, key=lambda o: len(options[o])) != nccl.key[0], lang
    memory = items["dp-memory-limit"]
    assert len(memory.options) == 4 and not memory.shuffle
    for lang in ("en", "id"):
        options = memory.text[lang].options
        values = [_leading_number(options[o.id], lang) for o in memory.options]
        assert values == sorted(values), (lang, values)  # 3 / 6 / 8.25 / 24
        assert not re.search(r"\b24\b", options["all-sharded"])  # no longer states the key's figure
        assert not any(w in options["offloaded-optimizer"] for w in ("shard", "dibagi", "divided"))
    assert not items["dp-global-batch"].shuffle
    assert [o.id for o in items["dp-global-batch"].options] == ["b-div-w", "b-averaged", "b-times-w"]
