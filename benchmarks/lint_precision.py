"""The labelled precision set (tests/lint_precision/) -> precision and recall of each lint rule.

Each case is an item (a patch over one of base.yaml's clean items) labelled with the rules that
must report it (`expect`; none for a clean item); flawed and clean items come in pairs. Every
item is linted alone (one bank per item: the bank rules have nothing to compare), with every
rule; per rule, a true positive is an item it reports that expects it, a false positive an item
it reports that does not, a false negative an item that expects it and is not reported.

    python benchmarks/lint_precision.py [-v]        # the table [and the items it gets wrong]
    python benchmarks/lint_precision.py --choice    # single choice, multiple response, true/false
    PYTHONPATH=<other src> python benchmarks/lint_precision.py   # another version of the code
"""

from __future__ import annotations

import copy
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from dpassess.lint import LintConfig, lint_banks
from dpassess.model import Bank, BankConfig, LoadedItem, parse_item

#: The bases of the choice types (`--choice`: only these, for code that lints no other type).
CHOICE = ("choice", "mr", "tf")
HERE = Path(__file__).resolve().parent.parent / "tests" / "lint_precision"
#: The families of bank rules (a bank of one item gives them nothing to judge; the item-analysis
#: rules read recorded statistics, which the set has none of).
BANK_FAMILIES = ("BK", "IA")
#: Rules that report what one export cannot carry, not a flaw of the item (LM008: the Canvas
#: export's warnings): left out, as the set labels flaws.
EXPORT_LIMITS = ("LM008",)


def merge(base: Any, patch: Any) -> Any:
    """Mappings merge, null deletes, anything else replaces."""
    if not isinstance(base, dict) or not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(base)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge(out.get(k), v)
    return out


def labelled() -> list[tuple[str, dict[str, Any], frozenset[str]]]:
    """(name, raw item, expected rule codes) of every item of the set."""
    base = yaml.safe_load((HERE / "base.yaml").read_text(encoding="utf-8"))
    out = []
    for path in sorted(HERE.glob("cases*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8")):
            kinds = [("flawed", frozenset([case["rule"], *case.get("also", [])])),
                     ("clean", frozenset(case.get("clean_also", [])))]
            for kind, expect in kinds:
                if kind not in case:
                    continue
                data = merge(base["items"][case.get("base", "choice")], case[kind])
                data["id"] = f"{case['name']}-{kind}"
                if "--choice" in sys.argv and case.get("base", "choice") not in CHOICE:
                    continue
                out.append((f"{case['name']} ({kind})", data, expect))
    return out


def bank_config(case_bank: dict[str, Any] | None = None) -> BankConfig:
    base = yaml.safe_load((HERE / "base.yaml").read_text(encoding="utf-8"))
    return BankConfig.model_validate(merge(base["bank"], case_bank or {}))


def findings() -> list[tuple[str, frozenset[str], frozenset[str]]]:
    """(name, expected codes, reported codes) per item (item-level rules only)."""
    config = bank_config()
    out = []
    for name, data, expect in labelled():
        try:  # older code (PYTHONPATH) may not load an item type: nothing is found in it
            item = parse_item(data)
        except Exception:
            UNLOADABLE.append(name)
            out.append((name, expect, frozenset()))
            continue
        bank = Bank(config=config, root=Path("p"),
                    entries=[LoadedItem(item, f"p/{item.id}.yaml")], config_path="p/bank.yaml")
        found = [f for f in lint_banks([bank], LintConfig(), jobs=1)
                 if not f.code.startswith(BANK_FAMILIES) and f.code not in EXPORT_LIMITS]
        crashed = {f.code for f in found if f.message.startswith("internal error in rule")}
        if crashed:  # a rule that fails on the item (older code) finds nothing in it
            CRASHED.append(name)
        out.append((name, expect, frozenset(f.code for f in found) - crashed))
    return out


#: The items `findings` could not load, and those on which a rule failed (with older code).
UNLOADABLE: list[str] = []
CRASHED: list[str] = []


def table(rows: list[tuple[str, frozenset[str], frozenset[str]]]) -> dict[str, tuple[int, int, int]]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for _, expect, got in rows:
        for code in expect | got:
            c = counts[code]
            if code in expect and code in got:
                c[0] += 1
            elif code in got:
                c[1] += 1
            else:
                c[2] += 1
    return {code: (tp, fp, fn) for code, (tp, fp, fn) in sorted(counts.items())}


def main() -> None:
    rows = findings()
    stats = table(rows)
    print(f"{len(rows)} items, {sum(1 for _, e, _ in rows if e)} flawed"
          + (f", {len(UNLOADABLE)} not loaded" if UNLOADABLE else "")
          + (f", {len(CRASHED)} on which rules failed" if CRASHED else "")
          + (" (counted as nothing found)" if UNLOADABLE or CRASHED else ""))
    print(f"{'rule':6} {'TP':>4} {'FP':>4} {'FN':>4} {'precision':>9} {'recall':>7}")
    tot = [0, 0, 0]
    for code, (tp, fp, fn) in stats.items():
        tot = [tot[0] + tp, tot[1] + fp, tot[2] + fn]
        p = f"{tp / (tp + fp):.2f}" if tp + fp else "-"
        r = f"{tp / (tp + fn):.2f}" if tp + fn else "-"
        print(f"{code:6} {tp:4} {fp:4} {fn:4} {p:>9} {r:>7}")
    tp, fp, fn = tot
    print(f"{'all':6} {tp:4} {fp:4} {fn:4} {tp / (tp + fp):9.2f} {tp / (tp + fn):7.2f}")
    if "-v" in sys.argv:
        for name, expect, got in rows:
            if expect != got:
                print(f"  {name}: expected {sorted(expect)}, got {sorted(got)}")


if __name__ == "__main__":
    main()
