"""Differential item functioning between languages, against an independent computation: the
Mantel-Haenszel odds ratio, its Robins-Breslow-Greenland standard error and the MH chi-square
from statsmodels' StratifiedTable (a test-only dependency), the standardised p-difference and the
ETS categories written out here from the textbook formulas, on simulated data with planted DIF;
then the lint rule IA005 on the recorded figures."""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT
from dpassess import load_bank
from dpassess.lint import LintConfig, lint_banks
from dpassess.stats import analyse, read_responses
from dpassess.stats.dif import ets_category
from dpassess.stats.history import write_record

sys.path.insert(0, str(ROOT / "benchmarks"))
import stats_sim

sys.path.remove(str(ROOT / "benchmarks"))

#: Planted: harder for the focal language (b + 1.4), easier for it (b - 1.2).
HARDER, EASIER = "sim-02", "sim-04"


def simulate(out: Path, persons: int = 1200, k: int = 20, seed: int = 3) -> tuple[Path, Path]:
    """A single-choice bank (stats_sim's items) and a generic CSV with a language column:
    persons alternate between en (reference: the bank's default) and id (focal)."""
    items = [it for it in stats_sim.make_items(k, seed) if it.type == "single_choice"
             and not it.id.startswith(("sim-miskeyed", "sim-negative"))]
    stats_sim.write_bank(out / "bank", items)
    rng = random.Random(seed)
    lines = ["person,item,response,language"]
    for n in range(persons):
        lang = "en" if n % 2 else "id"
        theta = rng.gauss(0.0, 1.0)
        for it in items:
            b = it.b + (1.4 if it.id == HARDER and lang == "id" else 0.0) \
                - (1.2 if it.id == EASIER and lang == "id" else 0.0)
            right = rng.random() < 1 / (1 + math.exp(-it.a * (theta - b)))
            wrong = [o for o in it.options if o not in it.key]
            lines.append(f"p{n:04d},{it.id},{it.key[0] if right else rng.choice(wrong)},{lang}")
    path = out / "responses.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out / "bank", path


def oracle(path: Path, item: str) -> dict[str, float]:
    """The textbook figures of one item from the raw rows: statsmodels for alpha_MH, its
    standard error and the MH test; the STD P-DIF written out."""
    rows = [r.split(",") for r in path.read_text(encoding="utf-8").splitlines()[1:]]
    persons = sorted({r[0] for r in rows})
    ids = sorted({r[1] for r in rows})
    bank = load_bank(path.parent / "bank")
    x = np.zeros((len(persons), len(ids)))
    lang = {}
    for p, i, resp, la in rows:
        x[persons.index(p), ids.index(i)] = float(resp in bank.get(i).key)  # type: ignore[union-attr]
        lang[p] = la
    total = x.sum(axis=1)
    focal = np.array([lang[p] == "id" for p in persons])
    right = x[:, ids.index(item)].astype(bool)
    tables = []
    for t in np.unique(total):
        s = total == t
        a, b = int((right & s & ~focal).sum()), int((~right & s & ~focal).sum())
        c, d = int((right & s & focal).sum()), int((~right & s & focal).sum())
        if a + b and c + d:
            tables.append([[a, b], [c, d]])
    # imported here, not at collection: statsmodels and scipy take a second to import
    stratified = pytest.importorskip("statsmodels.stats.contingency_tables").StratifiedTable
    st = stratified(np.array(tables, dtype=float).transpose(1, 2, 0))
    test = st.test_null_odds(correction=True)
    t = np.array(tables, dtype=float)
    nf = t[:, 1].sum(axis=1)
    p_f, p_r = t[:, 1, 0] / nf, t[:, 0, 0] / t[:, 0].sum(axis=1)
    return {"alpha": st.oddsratio_pooled, "se": 2.35 * st.logodds_pooled_se,
            "chi2": test.statistic, "p": test.pvalue,
            "std": float((nf * (p_f - p_r)).sum() / nf.sum())}


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("dif")
    bank_dir, path = simulate(out)
    return bank_dir, path, analyse(read_responses(path, load_bank(bank_dir)))


def test_dif_matches_statsmodels_and_the_textbook(simulated) -> None:
    _, path, analysis = simulated
    assert {(d.reference, d.focal) for d in analysis.dif} == {("en", "id")}
    for d in analysis.dif:
        ref = oracle(path, d.item)
        assert d.alpha_mh == pytest.approx(ref["alpha"], abs=1e-9, rel=1e-9)
        assert d.delta == pytest.approx(-2.35 * math.log(ref["alpha"]), abs=1e-9)
        assert d.se == pytest.approx(ref["se"], abs=1e-9)
        assert d.chi2 == pytest.approx(ref["chi2"], abs=1e-9)
        assert d.p_value == pytest.approx(ref["p"], abs=1e-9)
        assert d.std_p_dif == pytest.approx(ref["std"], abs=1e-9)
        assert (d.n_reference, d.n_focal) == (600, 600)


def test_planted_dif_is_category_c_with_its_sign(simulated) -> None:
    _, _, analysis = simulated
    by_item = {d.item: d for d in analysis.dif}
    harder, easier = by_item[HARDER], by_item[EASIER]
    assert harder.category == "C" and harder.delta is not None and harder.delta < -1.5
    assert easier.category == "C" and easier.delta is not None and easier.delta > 1.5
    assert harder.std_p_dif is not None and harder.std_p_dif < 0
    others = [d for d in analysis.dif if d.item not in (HARDER, EASIER)]
    assert sum(d.category == "C" for d in others) <= 1


def test_ets_categories_by_the_rule() -> None:
    assert ets_category(-0.9, 0.1, 0.001) == "A"       # |D| < 1
    assert ets_category(-2.0, 0.3, 0.2) == "A"         # not significant
    assert ets_category(-1.2, 0.1, 0.001) == "B"       # 1 <= |D| < 1.5
    assert ets_category(-1.6, 0.5, 0.001) == "B"       # |D| - 1 not significantly above 0
    assert ets_category(-1.6, 0.3, 0.001) == "C"       # (1.6 - 1) / 0.3 = 2 > 1.645
    assert ets_category(None, None, None) == ""


def test_lint_flags_category_c_between_languages(simulated, tmp_path: Path) -> None:
    import shutil
    bank_dir, _, analysis = simulated
    copy = tmp_path / "bank"
    shutil.copytree(bank_dir, copy)
    bank = load_bank(copy)
    write_record(analysis.__class__(**{**analysis.__dict__, "bank": bank}))
    found = [f for f in lint_banks([load_bank(copy)], LintConfig(select=("IA005",)))]
    flagged = {Path(f.path).stem.split("-", 1)[1] for f in found}
    assert {HARDER, EASIER} <= flagged
    [msg] = [f.message for f in found if f.path.endswith(f"-{HARDER}.yaml")]
    assert msg.startswith("the English and Indonesian versions of this item do not measure the "
                          "same thing")
    assert "harder in Indonesian" in msg


def test_the_reports_show_the_dif(simulated) -> None:
    import json

    import lxml.html

    from dpassess.stats import render
    _, _, analysis = simulated
    doc = lxml.html.fromstring(render(analysis, "html", "en"))
    [table] = [t for t in doc.xpath("//section[h2]") if "DIF" in t.findtext("h2")]
    rows = {r[0].text_content(): r[7].text_content() for r in table.xpath(".//tr[td]")}
    assert rows == {d.item: d.category for d in analysis.dif}
    data = json.loads(render(analysis, "json"))
    assert [(d["item"], d["category"]) for d in data["dif"]] == [
        (d.item, d.category) for d in analysis.dif]
    text = render(analysis, "text", "en").decode()
    assert f"{HARDER}: the English and Indonesian versions do not measure the same thing" in text
