"""What the lint cache's formats cost: the parsed items of an N-item synthetic bank (default
10,000, `benchmarks/synth.py`) and their findings, stored and read back as a pickle (what the
cache keeps, now with its HMAC-SHA256 tag) and as JSON read back through the model's validation
(the format that cannot run code, the alternative to a key).

    .venv/bin/python benchmarks/cache_formats.py [N]

Each row is the best of 3 in one process: pickle dumps and loads of every item; the HMAC-SHA256
of those bytes (what authenticating a file adds); JSON (`model_dump_json`) and back
(`TypeAdapter(Item).validate_json`, the pydantic-core parser). Reading is what a warm run pays.
"""

from __future__ import annotations

import hashlib
import hmac
import pickle
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import TypeAdapter

sys.path.insert(0, str(Path(__file__).parent))
import synth
from dpassess import load_bank
from dpassess.model import Item


def best(fn: Callable[[], object], rounds: int = 3) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv: list[str]) -> None:
    n = int(argv[0]) if argv else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        bank = load_bank(synth.write(Path(tmp) / "bank", n))
    items = [e.item for e in bank.entries]
    adapter: TypeAdapter[Item] = TypeAdapter(Item)
    key = b"k" * 32

    blobs = [pickle.dumps(it, protocol=pickle.HIGHEST_PROTOCOL) for it in items]
    whole = pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL)
    jsons = [adapter.dump_json(it) for it in items]

    rows = [
        ("pickle dumps (every item)", best(lambda: [pickle.dumps(it, protocol=5) for it in items])),
        ("pickle loads (every item)", best(lambda: [pickle.loads(b) for b in blobs])),
        ("HMAC-SHA256 of the whole pickle", best(lambda: hmac.new(key, whole, hashlib.sha256).digest())),
        ("JSON dumps (every item)", best(lambda: [adapter.dump_json(it) for it in items])),
        ("JSON loads + validation (every item)", best(lambda: [adapter.validate_json(j) for j in jsons])),
    ]
    size_p, size_j = sum(map(len, blobs)), sum(map(len, jsons))
    print(f"{n} items; pickle {size_p / 1e6:.1f} MB, JSON {size_j / 1e6:.1f} MB")
    for name, t in rows:
        print(f"  {name:<40} {t * 1000:8.1f} ms")
    print(f"  JSON read / pickle read: {rows[4][1] / rows[1][1]:.1f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
