"""Lint time of a 10,000-item bilingual bank against its load time, measured in the same run.

    .venv/bin/python benchmarks/lint.py [N] [--salad]

The bank is `synth.py`'s (realistic field lengths, every item type) with the seed bank's
glossary, so glossary masking and rendering checks do real work. By default its text is real
sentences and a typical item lints clean (a few findings in 10,000 items); `--salad` gives random
word salad with about two findings per item (the figure for a bank full of problems). Target: lint adds at most 50%
on top of loading (ratio <= 0.50). Lint time includes reading the language model (py3langid's own
file, about 0.5 s of CPU, docs/lint.md) and computing line:col for every finding.
"""

from __future__ import annotations

import gc
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
import synth
from dpassess import load_bank
from dpassess.lint import LintConfig, lint_banks

SEED_BANK = Path(__file__).resolve().parent.parent / "items" / "data-parallelism" / "bank.yaml"


def make(root: Path, n: int, style: str = "real") -> Path:
    synth.write(root, n, style=style)
    cfg = yaml.safe_load((root / "bank.yaml").read_text(encoding="utf-8"))
    cfg["glossary"] = yaml.safe_load(SEED_BANK.read_text(encoding="utf-8"))["glossary"]
    (root / "bank.yaml").write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return root


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 10_000
    style = "salad" if "--salad" in sys.argv else "real"
    with tempfile.TemporaryDirectory() as tmp:
        root = make(Path(tmp) / "bank", n, style)
        gc.collect()
        t0 = time.perf_counter()
        bank = load_bank(root)
        t_load = time.perf_counter() - t0
        gc.collect()
        t0 = time.perf_counter()
        findings = lint_banks([bank], LintConfig())
        t_lint = time.perf_counter() - t0
    counts = Counter(f.code for f in findings)
    print(f"bank: {n:,} bilingual items (id, en), {style} text, "
          f"{len(bank.config.glossary)} glossary terms")
    print(f"load: {t_load:8.2f} s  ({t_load / n * 1e3:.3f} ms/item)")
    print(f"lint: {t_lint:8.2f} s  ({t_lint / n * 1e3:.3f} ms/item, {len(findings):,} findings)")
    print(f"lint / load: {t_lint / t_load:.2f}  (target <= 0.50)")
    print("findings by code: " + ", ".join(f"{c} {k}" for c, k in sorted(counts.items())))


if __name__ == "__main__":
    main()
