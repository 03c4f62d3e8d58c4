"""The lint cache against lint without it, over random histories of a bank on disk.

A small bank, in one language or two with a glossary (single-choice items whose stems and options come from small pools, so that
duplicates, near-duplicates, key cues, enemies and suppressions of bank findings occur, and a
stimulus that may grow past Canvas's limit) goes through a random sequence of edits, additions,
deletions, renames, stimulus changes, new titles (which the bank rules do not read), stems and
key texts (each read by some bank rules only). After each step, `lint_paths` and `load_and_lint`
through one cache give exactly what `lint_paths` without a cache gives (the findings, or the
same load errors).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpassess.diagnostics import BankLoadError
from dpassess.lint import LintConfig, incremental
from dpassess.runtime.cache import Cache

BANK = {"schema": 1, "id": "pb", "title": {"en": "P"}, "languages": ["en"],
        "default_language": "en"}
#: Two languages and a glossary: translation rules, masked terms, per-language key cues.
BILINGUAL = {"schema": 1, "id": "pb", "title": {"en": "P", "id": "P"}, "languages": ["en", "id"],
             "default_language": "en",
             "glossary": [{"term": "all-reduce", "keep": True}, {"term": "GPU", "keep": True}]}
STEMS = [
    "Which operation keeps the replicas of the model in sync after each step?",
    "Which operation keeps the replicas of the model in step after each step?",
    "Which operation keeps all replicas of the model in sync after each step?",
    "What does each GPU hold in standard data parallelism?",
    "What does every GPU hold in standard data parallelism?",
    "Pick the right one.",
]
OPTIONS = [
    "All-reduce of the gradients", "A broadcast of the weights", "Nothing at all, never",
    "Only the optimizer state, always", "A full copy of the model and its optimizer state",
    "Yes", "No", "All of the above",
]
IDS = [f"q-{i}" for i in range(8)]
SUPPRESSIBLE = ["BK001", "BK002", "WR001", "WR002", "WR003", "LM007"]


@st.composite
def items(draw: st.DrawFn) -> dict[str, Any]:
    k = draw(st.integers(3, 4))
    opts = draw(st.lists(st.sampled_from(OPTIONS), min_size=k, max_size=k, unique=True))
    ids = [f"o{j}" for j in range(k)]
    item: dict[str, Any] = {
        "schema": 1, "id": draw(st.sampled_from(IDS)), "type": "single_choice", "topic": "t",
        "options": ids, "key": ids[draw(st.integers(0, k - 1))],
        "text": {lang: {"stem": draw(st.sampled_from(STEMS)),
                        "options": dict(zip(ids, draw(st.permutations(opts)), strict=True))}
                 for lang in ("en", "id")},
    }
    enemies = draw(st.lists(st.sampled_from(IDS), max_size=2, unique=True))
    if enemies:
        item["enemies"] = enemies
    codes = draw(st.lists(st.sampled_from(SUPPRESSIBLE), max_size=2, unique=True))
    if codes:
        item["suppress"] = [{"rule": c, "reason": "on purpose"} for c in codes]
    if draw(st.booleans()):
        item["stimulus"] = "st-1"
    return item


NAMES = st.integers(0, 30).map(lambda n: f"{n:02d}-item.yaml")
STIMULUS = st.sampled_from(["short", "long", "gone"])

OPS = st.one_of(
    st.tuples(st.just("write"), NAMES, items()),  # an edit, or an addition
    st.tuples(st.just("delete"), NAMES, st.none()),
    st.tuples(st.just("rename"), NAMES, NAMES),
    st.tuples(st.just("stimulus"), STIMULUS, st.none()),
    # an edit the bank rules do not read: their stored hits are kept
    st.tuples(st.just("retitle"), NAMES, st.sampled_from(["A title", "Another title", None])),
    # edits of one part of the features: the hits of the rules that read another are kept
    st.tuples(st.just("restem"), NAMES, st.sampled_from(STEMS)),
    st.tuples(st.just("reoption"), NAMES, st.sampled_from(OPTIONS)),
)


def _stimulus(root: Path, how: str) -> None:
    path = root / "zz-stimulus.yaml"
    if how == "gone":
        path.unlink(missing_ok=True)
        return
    text = "A table of results." if how == "short" else "A & b, " * 2600
    path.write_text(yaml.safe_dump({"schema": 1, "type": "stimulus", "id": "st-1",
                                    "text": {lang: {"text": text} for lang in ("en", "id")}}),
                    encoding="utf-8")


def _apply(root: Path, op: tuple[str, Any, Any]) -> None:
    kind, a, b = op
    if kind == "write":
        (root / a).write_text(yaml.safe_dump(_languages(root, b), sort_keys=False),
                              encoding="utf-8")
    elif kind == "delete":
        (root / a).unlink(missing_ok=True)
    elif kind == "rename":
        if (root / a).exists():
            (root / a).rename(root / b)
    elif kind in ("retitle", "restem", "reoption"):
        if (root / a).exists():
            item = yaml.safe_load((root / a).read_text(encoding="utf-8"))
            for t in item["text"].values():
                if kind == "retitle":
                    t.pop("title", None)
                    if b is not None:
                        t["title"] = b
                elif kind == "restem":
                    t["stem"] = b
                else:  # the key's text, in every language
                    t["options"][item["key"]] = b
            (root / a).write_text(yaml.safe_dump(item, sort_keys=False), encoding="utf-8")
    else:
        _stimulus(root, a)


def _languages(root: Path, item: dict[str, Any]) -> dict[str, Any]:
    """The item with the text of the bank's languages only."""
    langs = yaml.safe_load((root / "bank.yaml").read_text(encoding="utf-8"))["languages"]
    return {**item, "text": {lang: t for lang, t in item["text"].items() if lang in langs}}


def _outcome(run: Any) -> tuple[str, list[object]]:
    try:
        return "findings", list(run())
    except BankLoadError as exc:
        return "load errors", sorted(exc.diagnostics, key=lambda d: d.sort_key)


@pytest.mark.parametrize("bank", [BANK, BILINGUAL], ids=["en", "en-id"])
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
          deadline=None, max_examples=30)
@given(start=st.lists(items(), min_size=3, max_size=7), ops=st.lists(OPS, max_size=8))
def test_cached_lint_is_lint_without_a_cache_after_every_step(
    tmp_path_factory: Any, bank: dict[str, Any], start: list[dict[str, Any]],
    ops: list[tuple[str, Any, Any]]
) -> None:
    work = tmp_path_factory.mktemp("hist")
    root = work / "bank"
    root.mkdir()
    (root / "bank.yaml").write_text(yaml.safe_dump(bank), encoding="utf-8")
    _stimulus(root, "short")
    for n, item in enumerate(start):
        item["id"] = f"q-{n}"  # a bank that loads, to begin with
        _apply(root, ("write", f"{2 * n:02d}-item.yaml", item))
    config = LintConfig()
    cache = Cache(work / "cache")
    try:
        for step, op in enumerate([None, *ops]):
            if op is not None:
                _apply(root, op)
            expected = _outcome(lambda: incremental.lint_paths([root], config, None))
            got = _outcome(lambda: incremental.lint_paths([root], config, cache))
            assert got == expected, (step, op)
            if step % 2:  # the path `dpassess build` takes, through the same cache
                both = _outcome(lambda: incremental.load_and_lint([root], config, cache)[1])
                assert both == expected, (step, op, "load_and_lint")
            again = _outcome(lambda: incremental.lint_paths([root], config, cache))
            assert again == expected, (step, op, "replayed")
    finally:
        shutil.rmtree(work, ignore_errors=True)
