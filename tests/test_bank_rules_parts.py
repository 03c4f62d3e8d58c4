"""Each bank rule reads only the part of the items' features that the lint cache keys its
kept hits on (`dpassess.lint.incremental._READS`, `dpassess.runtime.records.FEATURE_PARTS`):
changing every other part of every item changes none of its hits. Otherwise an edit of that
other part would replay stale hits."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from conftest import ROOT
from dpassess.bank.load import load_banks
from dpassess.lint import LintConfig
from dpassess.lint.context import BankContext
from dpassess.lint.engine import _run
from dpassess.lint.features import item_features
from dpassess.lint.incremental import _READS
from dpassess.runtime.records import FEATURE_PARTS, ChoiceFeatures, ItemFeatures

BANKS = [ROOT / "tests" / "fixtures" / "seed-original", ROOT / "tests" / "banks" / "kitchen-sink",
         ROOT / "items" / "data-parallelism"]


def _changed(f: ItemFeatures, part: str, rng: random.Random) -> ItemFeatures:
    """`f` with `part` changed at random (the id and enemies, in several parts, are kept)."""
    if part == "words":
        return f._replace(stems=tuple(s._replace(
            words=None if s.words is None or rng.random() < 0.3 else tuple(
                rng.sample(["alpha", "beta", "gamma", "delta", "eps", "zeta"], 5)),
            quoted=f"q{rng.random()}") for s in f.stems))
    if part == "answers":
        return f._replace(stems=tuple(s._replace(stem=rng.choice([b"", b"x", b"y"]),
                                                 answers=rng.choice([b"a", b"b"]))
                                      for s in f.stems))
    if part == "choice":
        if rng.random() < 0.3:
            return f._replace(choice=None)
        k = rng.randint(3, 5)
        langs = tuple((lang, tuple(rng.randint(1, 9) for _ in range(k))) for lang in f.languages)
        absolute = tuple((lang, tuple(rng.random() < 0.2 for _ in range(k)))
                         for lang in f.languages)
        return f._replace(choice=ChoiceFeatures(k, rng.randrange(k), langs, absolute))
    assert part == "languages"
    return f._replace(languages=(*f.languages, rng.choice(["fr", "de", "en"])))


@pytest.mark.parametrize("code", sorted(_READS))
@pytest.mark.parametrize("path", BANKS, ids=lambda p: p.name)
def test_a_bank_rule_reads_only_its_part(code: str, path: Path) -> None:
    assert set(_READS.values()) <= set(FEATURE_PARTS)
    config = LintConfig()
    rule = next(r for r in config.rules() if r.code == code)
    bank = load_banks([path])[0]
    ctx = BankContext(bank, config)
    feats = [item_features(ctx, e.item, e.path) for e in bank.entries]

    def hits(features: list[ItemFeatures]) -> list[object]:
        bctx = BankContext(bank, config)
        bctx.features = features
        return list(_run(rule, bctx))

    expected = hits(feats)
    rng = random.Random(code + path.name)
    for part in FEATURE_PARTS:
        if part == _READS[code]:
            continue
        for _ in range(5):
            assert hits([_changed(f, part, rng) for f in feats]) == expected, part


def test_the_parts_matter() -> None:
    """The check above can fail: changing the part a rule reads changes its hits (on the
    original seed, whose key cues and duplicates it flags)."""
    bank = load_banks([BANKS[0]])[0]
    config = LintConfig()
    ctx = BankContext(bank, config)
    feats = [item_features(ctx, e.item, e.path) for e in bank.entries]
    feats[1] = feats[1]._replace(stems=feats[0].stems)  # a duplicate of the first
    rng = random.Random(1)
    changed = set()
    for code, part in _READS.items():
        rule = next(r for r in config.rules() if r.code == code)
        bctx = BankContext(bank, config)
        bctx.features = feats
        before = list(_run(rule, bctx))
        for _ in range(5):
            bctx = BankContext(bank, config)
            bctx.features = [_changed(f, part, rng) for f in feats]
            if list(_run(rule, bctx)) != before:
                changed.add(code)
                break
    assert changed >= {"BK001", "BK002", "BK005", "BK006", "BK007", "BK008"}, changed
