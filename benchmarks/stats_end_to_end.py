"""The seed bank's two forms end to end: 200 simulated students take forms A and B on paper, half
of them in Indonesian and half in English, the answer sheets of both forms in one file (form
letter, question number, letter marked, language) are read through the forms' key files, the
statistics are written back to (a copy of) the bank, written again from a re-download with one
more student (which replaces the first record instead of adding to it), and the forms are
assembled again with the observed p-values.

    python benchmarks/stats_end_to_end.py [OUT_DIR] [--persons 200] [--seed 2026]

Every student has an ability theta ~ N(0, 1) and answers item i right with the 2PL probability
1 / (1 + exp(-a_i (theta - b_i))), the item parameters set from its declared difficulty (`PARAMS`;
one item, `PLANTED_DEAD`, has a distractor nobody chooses; one, `PLANTED_DIF`, is harder in
English by `DIF_SHIFT` on the ability scale); a wrong answer marks a distractor by fixed weights;
2% of the answers are left blank. Students alternate between forms A and B, and between
Indonesian and English in pairs.

Prints the analysis (the text report), an independent computation of p, D, r_pb and KR-20 from
the simulated right/wrong matrix (numpy, from the simulation's own record of who chose which
option: not through dpassess) and the largest difference, the record written, the lint findings
of the item-analysis rules (IA005: the planted DIF between the languages), the re-download's
pooled n, and the summary of the re-assembled forms.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import random
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "items" / "data-parallelism"
BLUEPRINT = ROOT / "blueprints" / "data-parallelism.yaml"
FORMS = ROOT / "exports" / "forms" / "data-parallelism"

#: (a, b) by declared difficulty: easy items answered right by most, hard ones by few.
PARAMS = {"easy": (1.2, -1.2), "medium": (1.4, 0.0), "hard": (1.6, 1.3)}
#: The item whose last distractor in authoring order nobody marks.
PLANTED_DEAD = "dp-global-batch"
#: The item whose English version is harder (by DIF_SHIFT on the ability scale).
PLANTED_DIF = "dp-sync-operation"
DIF_SHIFT = 1.6
OMIT = 0.02


def _keys() -> dict[str, dict[str, Any]]:
    """Form label -> its key file's data (the forms handed out: exports/forms)."""
    out = {}
    for path in sorted(FORMS.glob("*/*-key.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        out[data["label"]] = data
    return out


def simulate(bank_dir: Path, persons: int, seed: int
             ) -> tuple[list[list[str]], dict[str, dict[str, str]]]:
    """The answer-sheet rows (person, form, question number, letter or blank, language) and, per person,
    the option id marked on each item ("" for a blank): the simulation's own record."""
    rng = random.Random(seed)
    items = {}
    for path in sorted(bank_dir.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if path.name != "bank.yaml":
            items[data["id"]] = data
    keys = _keys()
    labels = sorted(keys)
    rows: list[list[str]] = []
    marked: dict[str, dict[str, str]] = {}
    for n in range(persons):
        person = f"s{n + 1:03d}"
        theta = rng.gauss(0.0, 1.0)
        label = labels[n % len(labels)]
        lang = "id" if n % 4 < 2 else "en"
        marked[person] = {}
        for q in keys[label]["items"]:
            item = items[q["item"]]
            a, b = PARAMS[item["difficulty"]]
            if item["id"] == PLANTED_DIF and lang == "en":
                b += DIF_SHIFT
            key = item["key"] if isinstance(item["key"], str) else item["key"][0]
            wrong = [o for o in item["options"] if o != key]
            if item["id"] == PLANTED_DEAD:
                wrong = wrong[:-1]
            if rng.random() < OMIT:
                chosen = ""
            elif rng.random() < 1 / (1 + math.exp(-a * (theta - b))):
                chosen = key
            else:
                chosen = rng.choices(wrong, [1.0 + i for i in range(len(wrong))])[0]
            marked[person][item["id"]] = chosen
            letter = chr(ord("A") + q["options"].index(chosen)) if chosen else ""
            rows.append([person, label, str(q["position"]), letter, lang])
    return rows, marked


def independent(marked: dict[str, dict[str, str]], keys: dict[str, str]) -> dict[str, Any]:
    """p, D, corrected r_pb per item and KR-20, from the marks alone (numpy; the definitions of
    docs/stats.md: population variances, groups of ceil(0.27 n) by total, persons tied at a
    group's edge sharing its places left: a person with `above` persons strictly above and `eq`
    at their total belongs to the upper group by clip(g - above, 0, eq) / eq)."""
    persons = sorted(marked)
    ids = sorted(keys)
    x = np.array([[1.0 if marked[p][i] == keys[i] else 0.0 for i in ids] for p in persons])
    n, k = x.shape
    total = x.sum(axis=1)
    g = math.ceil(0.27 * n)
    above = (total[None, :] > total[:, None]).sum(axis=1)
    below = (total[None, :] < total[:, None]).sum(axis=1)
    eq = (total[None, :] == total[:, None]).sum(axis=1)
    w_up, w_low = np.clip(g - above, 0, eq) / eq, np.clip(g - below, 0, eq) / eq
    out: dict[str, Any] = {"items": {}}
    for c, item in enumerate(ids):
        rest = total - x[:, c]
        r = float(np.corrcoef(x[:, c], rest)[0, 1])
        out["items"][item] = {"p": float(x[:, c].mean()),
                              "d": float((w_up @ x[:, c] - w_low @ x[:, c]) / g), "r_pb": r}
    pq = float((x.mean(axis=0) * (1 - x.mean(axis=0))).sum())
    out["kr20"] = k / (k - 1) * (1 - pq / float(total.var()))
    return out


def run(out: Path, persons: int = 200, seed: int = 2026) -> dict[str, Any]:
    """Everything above in `out` (a copy of the seed bank, the answer sheets, the record, the
    forms assembled again); returns the figures printed."""
    from dpassess import load_bank
    from dpassess.assemble import assemble, summary_data
    from dpassess.stats import analyse_forms, read_responses, render
    from dpassess.stats.history import commit_records, effective_p, observed, prepare_records

    bank_dir = out / "items" / "data-parallelism"
    if bank_dir.exists():
        shutil.rmtree(bank_dir)
    shutil.copytree(BANK, bank_dir)
    blueprint = out / "blueprints" / BLUEPRINT.name
    blueprint.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(BLUEPRINT, blueprint)
    rows, marked = simulate(bank_dir, persons, seed)

    def sheet(name: str, keep: list[list[str]]) -> Path:
        path = out / name
        with open(path, "w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(["person", "form", "item", "response", "language"])
            w.writerows(keep)
        return path

    bank = load_bank(bank_dir)
    # the first download, before the last student's sheet came in: recorded ...
    last = f"s{persons:03d}"
    first = sheet("answer-sheets-1.csv", [r for r in rows if r[0] != last])
    [early] = analyse_forms(read_responses(first, bank, keys=FORMS))
    commit_records(prepare_records([early]))
    # ... then the whole file downloaded again: it replaces that record
    [analysis] = analyse_forms(read_responses(sheet("answer-sheets.csv", rows), bank, keys=FORMS))
    [prepared] = prepare_records([analysis])
    commit_records([prepared])
    record = prepared.target
    keys = {it.id: it.key[0] for it in bank}  # type: ignore[union-attr]
    ind = independent(marked, keys)
    diff = max(max(abs(getattr(analysis.item(i), f) - v[f]) for f in ("p", "d", "r_pb"))
               for i, v in ind["items"].items())
    diff = max(diff, abs((analysis.test.kr20 or 0.0) - ind["kr20"]))

    bank = load_bank(bank_dir)  # as a later run reads it: the record included
    seen, problems = observed(bank)
    assert not problems, problems
    with_p = [e.item.model_copy(update={"p_value": effective_p(e.item, seen)})
              for e in bank.entries]
    from dpassess.model import Bank, LoadedItem

    observed_bank = Bank(config=bank.config, root=bank.root, config_path=bank.config_path,
                         entries=[LoadedItem(it, e.path) for it, e in
                                  zip(with_p, bank.entries, strict=True)],
                         stimuli=bank.stimuli)
    # lint=False: the bank has exactly the 8 items each form needs, and the administration's
    # own IA warnings (the planted dead distractor, printed below) would leave items out at the
    # bank's fail level
    assembly = assemble(blueprint, bank=observed_bank, lint=False)

    lint = _lint(bank_dir)
    dif = next(d for d in analysis.dif if d.item == PLANTED_DIF)
    return {
        "forms_in_file": sorted({r[1] for r in rows}),
        "languages": sorted({r[4] for r in rows}),
        "dif": {"item": dif.item, "delta": dif.delta, "se": dif.se, "category": dif.category,
                "std_p_dif": dif.std_p_dif, "n": [dif.n_reference, dif.n_focal]},
        "redownload": {"replaced": [p.name for p in prepared.replaces],
                       "records": len(list((bank_dir / "stats").glob("*.json"))),
                       "pooled_n": max(o.n for o in seen.values())},
        "report": render(analysis, "text", "en").decode("utf-8"),
        "independent_max_difference": diff,
        "record": str(record.relative_to(out)),
        "observed_p": {i: round(o.p, 4) for i, o in sorted(seen.items())},
        "flags": {s.item: list(s.flags) for s in analysis.items if s.flags},
        "lint": lint,
        "summary": assembly.summary(),
        # each re-assembled form holds the 8 items of the administration recorded, so its
        # predicted SD and KR-20 must be the ones observed
        "predicted": [f.get("predicted") for f in summary_data(
            assembly.problem, assembly.selection, assembly.forms, assembly.seed)["forms"]],
        "observed_test": {"sd": analysis.test.sd, "kr20": analysis.test.kr20},
    }


def _lint(bank_dir: Path) -> list[str]:
    """The item-analysis rules' findings."""
    from dpassess import load_bank
    from dpassess.lint import LintConfig, lint_banks

    found = lint_banks([load_bank(bank_dir)],
                       LintConfig(select=("IA001", "IA002", "IA003", "IA004", "IA005")))
    return [f"{Path(f.path).name}: {f.code} {f.field}: {f.message}" for f in found]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", type=Path)
    ap.add_argument("--persons", type=int, default=200)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="dpassess-e2e-"))
    fig = run(out, args.persons, args.seed)
    print(fig["report"])
    print(f"independent computation (numpy): largest difference in p, D, r_pb, KR-20: "
          f"{fig['independent_max_difference']:.2e}")
    print(f"recorded: {out / fig['record']}")
    print(f"forms in one file: {', '.join(fig['forms_in_file'])}; languages: "
          f"{', '.join(fig['languages'])}")
    d = fig["dif"]
    print(f"DIF of the planted item {d['item']} (id reference, en focal, n {d['n']}): MH D-DIF "
          f"{d['delta']:.2f} (SE {d['se']:.2f}), ETS {d['category']}, STD P-DIF "
          f"{d['std_p_dif']:.3f}")
    r = fig["redownload"]
    print(f"re-download with one more student: replaced {r['replaced']}, {r['records']} record "
          f"in the bank, pooled n {r['pooled_n']}")
    print("observed p:", json.dumps(fig["observed_p"]))
    print("lint (item analysis):")
    for line in fig["lint"]:
        print("  " + line)
    print("forms assembled again with the observed p-values:")
    print(fig["summary"])
    t = fig["observed_test"]
    forms = ", ".join(f"{p['sd']:.4f} {p['kr20']:.4f}" for p in fig["predicted"])
    print(f"predicted SD and KR-20 per form: {forms}; "
          f"observed on the administration (the same 8 items): {t['sd']:.4f} {t['kr20']:.4f}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    main()
