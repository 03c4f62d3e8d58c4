"""Lint's findings on fixed banks, byte for byte, against files written by an earlier version:
the rules' fast paths (one glossary scan per field, the memoised views of a field, the engine's
loop) must find exactly what they found before. The banks: the bundled bank (clean), its
reviewed original (findings of most families), the kitchen-sink and maths banks (every item
type, maths), and three generated banks (benchmarks/synth.py): real parallel sentences; the
same with glossary terms dropped, mistranslated, inflected and cased in the Indonesian texts
(the glossary and translation rules); and word salad, where most rules fire on most items.

After a deliberate change to what a rule finds: `pytest tests/test_lint_findings_golden.py
--update-goldens`, then review the diff of tests/lint_golden/."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import ROOT, SEED_BANK
from dpassess.cli import app

sys.path.insert(0, str(ROOT / "benchmarks"))
import synth

GOLDEN = ROOT / "tests" / "lint_golden"

REPO_BANKS = {
    "seed": SEED_BANK,
    "seed-original": ROOT / "tests" / "fixtures" / "seed-original",
    "kitchen-sink": ROOT / "tests" / "banks" / "kitchen-sink",
    "maths": ROOT / "tests" / "banks" / "maths",
}
SYNTH_BANKS = {"synth-real": "real", "synth-salad": "salad", "synth-glossary": "real"}
SYNTH_ITEMS = 120

#: A sentence full of glossary terms (English), and Indonesian renderings of it: kept, some
#: terms inflected or doubled or cased otherwise, mistranslated with a listed wrong form, or
#: left out.
TERMS_EN = ("The all-reduce of each gradient uses NCCL's ring over the node's bandwidth, with a "
            "pipeline of microbatch shards; the optimizer state and the learning rate stay on "
            "the GPU.")
TERMS_ID = (
    "All-reduce setiap gradien memakai ring NCCL pada bandwidth node, dengan pipeline "
    "microbatch yang di-shard; state optimizer dan learning rate tetap di GPU.",
    "All-reduce-nya memakai ring NCCL di bandwidth nodenya dan node-node, dengan "
    "pipelinelah microbatchnya yang men-shard; state optimizer dan learning rate tetap di gpu.",
    "Semua pengurangan setiap gradien memakai cincin NCCL pada pita lebar simpul, dengan pipa "
    "kumpulan mikro; status pengoptimal dan tingkat pembelajaran tetap di prosesor grafis.",
    "Setiap gradien dijumlahkan lewat NCCL pada jaringan, dengan pipeline microbatch; state "
    "optimizer dan learning rate tetap di GPU.",
    "ALL-REDUCE setiap gradien memakai Ring NCCL pada Bandwidth Node, dengan Pipeline "
    "Microbatch yang di-shard; State Optimizer dan Learning Rate tetap di GPU",
)
#: Indonesian words of the templates swapped for a listed wrong form or left out.
SWAPS = (("GPU", "prosesor grafis"), ("batch", "kumpulan"), ("throughput", "hasil"),
         ("node", "simpul"), ("GPU", "GPU-nya"), ("batch", "batch-batch"))


def _glossary_bank(out: Path, n: int) -> None:
    """`n` items of the real style, each Indonesian field changed by a seeded choice of
    `TERMS_ID` (the English field gets `TERMS_EN`) or of `SWAPS`."""
    synth.write(out, n, seed=1, style="real")
    rng = random.Random(5)
    for path in sorted(out.glob("item-*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        en, id_ = data["text"]["en"], data["text"]["id"]
        fields = [("stem",), ("explanation",)] + [("options", o) for o in id_["options"]] + [
            ("feedback", o) for o in id_["feedback"]]
        for f in fields:
            e_parent, i_parent = (en, id_) if len(f) == 1 else (en[f[0]], id_[f[0]])
            if rng.random() < 0.4:
                e_parent[f[-1]] += " " + TERMS_EN
                i_parent[f[-1]] += " " + rng.choice(TERMS_ID)
            elif rng.random() < 0.5:
                old, new = rng.choice(SWAPS)
                i_parent[f[-1]] = i_parent[f[-1]].replace(old, new)
        path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False),
                        encoding="utf-8")


def _lint(bank: str, fmt: str) -> tuple[int, bytes]:
    """`dpassess lint --no-cache --format FMT BANK` from the working folder (the caller's
    `chdir`: paths in the output are as given, relative)."""
    r = CliRunner().invoke(app, ["lint", "--no-cache", "--format", fmt, bank],
                           catch_exceptions=False)
    assert r.exit_code in (0, 1), r.stderr
    return r.exit_code, r.stdout_bytes


def _check(config: pytest.Config, name: str, fmt: str, code: int, data: bytes) -> None:
    path = GOLDEN / f"{name}.{fmt}"
    text = b"exit %d\n" % code + data
    if config.getoption("--update-goldens"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text)
    assert path.exists(), f"{path} missing: run pytest with --update-goldens"
    assert text == path.read_bytes(), f"lint's {fmt} findings on {name} differ from {path}"


@pytest.mark.parametrize("fmt", ["json", "text"])
@pytest.mark.parametrize("name", sorted(REPO_BANKS))
def test_findings_on_the_repository_banks_are_unchanged(
        request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, name: str, fmt: str
) -> None:
    monkeypatch.chdir(ROOT)
    code, data = _lint(str(REPO_BANKS[name].relative_to(ROOT)), fmt)
    _check(request.config, name, fmt, code, data)


@pytest.mark.parametrize("name", sorted(SYNTH_BANKS))
def test_findings_on_generated_banks_are_unchanged(
        request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        name: str) -> None:
    if name == "synth-glossary":
        _glossary_bank(tmp_path / name, SYNTH_ITEMS // 3)
    else:
        synth.write(tmp_path / name, SYNTH_ITEMS, seed=1, style=SYNTH_BANKS[name])
    monkeypatch.chdir(tmp_path)
    code, data = _lint(name, "text")  # (the JSON of these is large: the text form)
    _check(request.config, name, "text", code, data)
    if name != "synth-real":  # the oracle is not empty: most items have findings
        assert code == 1 and len(re.findall(rb": [A-Z]{2}[0-9]{3} ", data)) > SYNTH_ITEMS // 2
