"""Properties: no rule crashes on any valid item; fast positions agree with composing the file."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from dpassess.bank.positions import find, locate
from dpassess.lint import LintConfig, lint_banks
from dpassess.model import Bank, BankConfig, LoadedItem
from strategies import bank_config, items, write_bank

GLOSSARY = BankConfig.model_validate({
    **bank_config().model_dump(by_alias=True),
    "glossary": [
        {"term": "all-reduce", "keep": True, "wrong": {"id": ["semua pengurangan"]}},
        {"term": "x", "keep": True},
        {"term": "batch", "render": {"id": ["batch", "kumpulan data"]}, "wrong": {"id": ["kumpulan"]}},
    ],
})


@given(st.lists(items(), min_size=1, max_size=4, unique_by=lambda i: i.id), st.booleans())
def test_no_rule_crashes_on_valid_items(bank_items, with_glossary) -> None:
    config = GLOSSARY if with_glossary else bank_config()
    entries = [LoadedItem(item, f"mem/{n}-{item.id}.yaml") for n, item in enumerate(bank_items)]
    bank = Bank(config=config, root=Path("mem"), entries=entries, config_path="mem/bank.yaml")
    findings = lint_banks([bank], LintConfig())
    for f in findings:
        assert "internal error" not in f.message, f
        assert f.line >= 1 and f.col >= 1 and f.help
    assert findings == lint_banks([bank], LintConfig())  # deterministic


@given(items())
def test_line_scan_agrees_with_composed_positions(item) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = write_bank(Path(tmp) / "b", [item])
        path = next(p for p in root.glob("*.yaml") if p.name != "bank.yaml")
        text = "\n" + path.read_text(encoding="utf-8")
        locs = [(), ("id",), ("key",), ("text",), ("suppress",)]
        for lang, c in item.text.items():
            locs += [("text", lang), ("text", lang, "stem"), ("text", lang, "feedback")]
            locs += [("text", lang, "options", oid) for oid in c.options]
            locs += [("text", lang, "feedback", oid) for oid in c.feedback]
        for loc in locs:
            pos = find(text, loc)
            if pos is not None:
                assert pos == locate(str(path), loc), loc
