"""Load time of a 10,000-item bilingual bank: dpassess.load_bank against a bare CSafeLoader pass.

    .venv/bin/python benchmarks/load.py [N]

Both passes read the same files in the same run; each is timed best-of-3, and peak memory is
measured with tracemalloc in a separate pass (tracing slows the code, so it is not timed).
"""

from __future__ import annotations

import gc
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
import synth
from dpassess import load_bank


def bare(root: Path) -> int:
    n = 0
    for p in sorted(root.glob("*.yaml")):
        with open(p, encoding="utf-8") as fh:
            yaml.load(fh.read(), Loader=yaml.CSafeLoader)
        n += 1
    return n


def best(fn, *args, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return min(times)


def peak(fn, *args) -> float:
    gc.collect()
    tracemalloc.start()
    fn(*args)
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top / 2**20


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        root = synth.write(Path(tmp) / "bank", n)
        size = sum(p.stat().st_size for p in root.iterdir()) / 2**20
        bare(root)  # warm the page cache
        t_bare = best(bare, root)
        t_load = best(load_bank, root)
        t_seq = best(lambda r: load_bank(r, jobs=1), root)
        m_bare = peak(bare, root)
        m_load = peak(lambda r: load_bank(r, jobs=1), root)
    print(f"bank: {n:,} bilingual items, {size:.1f} MiB of YAML, {os.cpu_count()} cores")
    print(f"{'step':<34}{'time (s)':>10}{'items/s':>12}{'peak MiB':>10}")
    print(f"{'bare yaml.load(CSafeLoader)':<34}{t_bare:>10.3f}{n / t_bare:>12,.0f}{m_bare:>10.1f}")
    print(f"{'dpassess.load_bank (1 process)':<34}{t_seq:>10.3f}{n / t_seq:>12,.0f}{m_load:>10.1f}")
    print(f"{'dpassess.load_bank (default)':<34}{t_load:>10.3f}{n / t_load:>12,.0f}{'':>10}")
    print(f"ratio load_bank / bare: {t_load / t_bare:.2f}x default, {t_seq / t_bare:.2f}x in one "
          "process (target <= 1.30x)")
    print("peak MiB: tracemalloc in this process (the pool's workers are not traced, so the "
          "one-process figure is given)")


if __name__ == "__main__":
    main()
