"""Every lint rule: its documentation page, and its passing and failing cases (tests/lint_cases/).

A failing case lists every finding of its rule as a user reads it: the field and the full message
(and the help line when it is not the rule's fix; the file, in a bank of several items), so a
changed message shows in the case file's diff."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import ROOT
from dpassess.diagnostics import Diagnostic
from dpassess.lint import RULES, LintConfig, lint_banks
from dpassess.lint.docs import render_docs
from dpassess.lint.registry import HEADINGS
from dpassess.model import Bank, BankConfig, LoadedItem, LoadedStimulus, Stimulus, parse_item

CASES = Path(__file__).parent / "lint_cases"


class CaseLoader(yaml.CSafeLoader):
    """YAML for case files: `!repeat [text, n]` is `text` written n times (a long field)."""


def _repeat(loader: yaml.SafeLoader, node: yaml.SequenceNode) -> str:
    text, times = loader.construct_sequence(node)
    return str(text) * int(times)


CaseLoader.add_constructor("!repeat", _repeat)


def load_cases(path: Path) -> Any:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=CaseLoader)


BASE = load_cases(CASES / "_base.yaml")


def merge(base: Any, patch: Any) -> Any:
    """Deep merge for case files: mappings merge, null deletes, anything else replaces."""
    if not isinstance(base, dict) or not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(base)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge(out.get(k), v)
    return out


def build(case: dict[str, Any], root: Path = Path("case")) -> Bank:
    config = BankConfig.model_validate(merge(BASE["bank"], case.get("bank", {})))
    patches = case.get("items") or [case.get("item", {})]
    entries = []
    for i, patch in enumerate(patches):
        data = merge(BASE["item"], patch)
        if "items" in case and "id" not in patch:
            data["id"] = f"item-{i}"
        item = parse_item(data)
        if "after" in case:
            after = {k: tuple(v) if isinstance(v, list) else v for k, v in case["after"].items()}
            item = item.model_copy(update=after)
        entries.append(LoadedItem(item, f"case/{i:02d}-{item.id}.yaml"))
    stimuli = [LoadedStimulus(Stimulus.model_validate({"type": "stimulus", **s}),
                              f"case/stimuli/{s['id']}.yaml") for s in case.get("stimuli", [])]
    for name, record in case.get("records", {}).items():  # the bank's recorded statistics
        (root / "stats").mkdir(parents=True, exist_ok=True)
        (root / "stats" / name).write_text(
            record if isinstance(record, str) else json.dumps(record), encoding="utf-8")
    return Bank(config=config, root=root, entries=entries, config_path="case/bank.yaml",
                stimuli=stimuli)


def _cases() -> list[Any]:
    out = []
    for path in sorted(CASES.glob("[A-Z]*.yaml")):
        data = load_cases(path)
        for kind in ("pass", "fail"):
            for case in data.get(kind, []):
                out.append(pytest.param(path.stem, kind, case, id=f"{path.stem}-{kind}-{case['name']}"))
    return out


def as_stated(f: Diagnostic, several_items: bool) -> dict[str, str]:
    """A finding as a case file states it (see the module docstring)."""
    out = {"path": f.path} if several_items else {}
    if f.field:
        out["field"] = f.field
    out["message"] = f.message
    if f.help != RULES[f.code].fix:
        out["help"] = f.help
    return out


@pytest.mark.parametrize(("code", "kind", "case"), _cases())
def test_rule_case(code: str, kind: str, case: dict[str, Any], tmp_path: Path,
                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a case's records are written to case/stats/
    bank = build(case)
    select = tuple(case.get("select", [code]))
    found = [f for f in lint_banks([bank], LintConfig(select=select)) if f.code == code]
    if kind == "pass":
        assert found == [], "\n".join(map(str, found))
    else:
        assert [as_stated(f, "items" in case) for f in found] == case["findings"]


def test_every_rule_has_cases_and_docs() -> None:
    files = {p.stem for p in CASES.glob("[A-Z]*.yaml")}
    assert files == set(RULES), f"missing cases: {set(RULES) - files}; stray: {files - set(RULES)}"
    for code in RULES:
        data = load_cases(CASES / f"{code}.yaml")
        assert data.get("pass") and data.get("fail"), f"{code} needs passing and failing cases"
        for case in data["fail"]:
            assert case.get("findings"), f"{code} {case['name']!r}: list the findings it reads"
        doc = RULES[code].doc
        for heading in HEADINGS:
            assert heading in doc, f"{code}: docstring lacks {heading!r}"


def test_rule_docs_are_fresh() -> None:
    folder = ROOT / "docs" / "rules"
    pages = render_docs()
    on_disk = {p.name for p in folder.glob("*.md")}
    assert on_disk == set(pages), "docs/rules is stale: run `python -m dpassess.lint.docs`"
    for name, text in pages.items():
        assert (folder / name).read_text(encoding="utf-8") == text, (
            f"docs/rules/{name} is stale: run `python -m dpassess.lint.docs`"
        )


def test_the_readme_and_the_rules_index_count_the_rules_there_are() -> None:
    # the README's "N rules" is checked here; the index page's count is generated
    import re
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    said = {int(n) for n in re.findall(r"\b(\d+) (?:lint )?rules\b", readme)}
    assert said == {len(RULES)}, f"README.md says {sorted(said)} rules; the registry has {len(RULES)}"
    index = (ROOT / "docs" / "rules" / "README.md").read_text(encoding="utf-8")
    assert f"{len(RULES)} rules" in index


def test_codes_and_names_are_unique_and_well_formed() -> None:
    names = [r.name for r in RULES.values()]
    assert len(names) == len(set(names))
    for code, r in RULES.items():
        assert code == r.code and code[:2] == r.family


@pytest.mark.parametrize(("kind", "case"), [p.values[1:] for p in _cases() if p.values[0] == "LM005"])
def test_lm005_agrees_with_the_moodle_exporter(kind: str, case: dict[str, Any]) -> None:
    """LM005 fires exactly when the Moodle exporter warns that a name will be cut, in some file
    (one language, or multi)."""
    from dpassess.export import EXPORTERS, MULTI, Collection

    bank = build(case)
    collection = Collection.from_bank(bank)
    warned = any(w.field == "title" and w.item is not None  # not the bank's category
                 for lang in (*bank.config.languages, MULTI)
                 for w in EXPORTERS["moodle-xml"].export(collection, lang).warnings)
    assert warned == (kind == "fail")


@pytest.mark.parametrize(("kind", "case"), [p.values[1:] for p in _cases() if p.values[0] == "LM007"])
def test_lm007_agrees_with_the_qti_exporter(kind: str, case: dict[str, Any]) -> None:
    """LM007 reports a language exactly when the QTI export of it warns that Canvas replaces
    the question text (the export measures the HTML it writes)."""
    from dpassess.export import EXPORTERS, Collection

    bank = build(case)
    collection = Collection.from_bank(bank)
    languages = [lang for lang in bank.config.languages if any(lang in i.text for i in bank)]
    warned = [lang for lang in languages
              if any("Canvas replaces" in w.message
                     for w in EXPORTERS["qti21"].export(collection, lang).warnings)]
    found = [f.field.split(".")[1] for f in lint_banks([bank], LintConfig(select=("LM007",)))]
    assert warned == found
    assert bool(found) == (kind == "fail")


def test_every_severity_answers_the_key_question() -> None:
    """Every rule says whether it can make a right answer wrong; those that can are errors."""
    for code, r in RULES.items():
        if r.removed:
            continue
        assert r.key_risk.startswith(("Yes", "No")), code
        if r.key_risk.startswith("Yes") and not r.key_risk.startswith("Yes, but"):
            assert r.severity.value == "error", code


def test_registration_refuses_a_rule_that_can_change_the_key_below_error() -> None:
    from dpassess.lint.registry import rule

    def check(ctx):
        """## What it does\nx\n## Why is this bad?\nx\n## Example\nx\n## Use instead\nx"""
        return ()

    with pytest.raises(ValueError, match="is an error"):
        rule("WR099", "made-up-rule", "warning", key_risk="Yes: it does.", fix="f")(check)
    with pytest.raises(ValueError, match="Yes or No"):
        rule("WR099", "made-up-rule", "warning", key_risk="Maybe.", fix="f")(check)
    assert "WR099" not in RULES


def test_registration_refuses_a_docstring_with_a_tab() -> None:
    """`\\textcolor` in a docstring that is not raw is a tab and `extcolor` on the rule's page."""
    from dpassess.lint.registry import rule

    def check(ctx):
        return ()

    check.__doc__ = ("## What it does\nx\n## Why is this bad?\nx\n## Example\n$\textcolor{red}{x}$"
                     "\n## Use instead\nx")
    with pytest.raises(ValueError, match="tab or control character"):
        rule("WR099", "made-up-rule", "warning", key_risk="No: it does not.", fix="f")(check)
    assert "WR099" not in RULES


def test_a_retired_rule_is_one_line_never_runs_and_keeps_its_code(tmp_path, monkeypatch) -> None:
    """`retire(code, name, why)`: registered as removed, its page says so, selecting or
    suppressing it is accepted and does nothing, and the code cannot be taken again."""
    from dpassess.lint import registry
    from dpassess.lint.docs import rule_page
    from dpassess.lint.registry import retire, rule

    monkeypatch.setattr(registry, "RULES", dict(RULES))
    monkeypatch.setattr("dpassess.lint.config.RULES", registry.RULES)
    retire("WR099", "old-cue", "merged into WR001 (key-is-longest)")
    r = registry.RULES["WR099"]
    assert r.removed and r.retired == "merged into WR001 (key-is-longest)"
    page = rule_page(r)
    assert "# WR099 old-cue (removed)" in page
    assert "This rule was removed: merged into WR001 (key-is-longest)." in page
    assert "The code is not reused." in page
    with pytest.raises(ValueError, match="registered twice"):
        retire("WR099", "other-name", "again")
    with pytest.raises(ValueError, match="registered twice"):
        rule("WR099", "new-rule", "warning", key_risk="No.", fix="f")(lambda ctx: ())
    assert LintConfig(select=("WR099",)).rules() == ()
    assert "WR099" not in {x.code for x in LintConfig(select=("WR",)).rules()}
