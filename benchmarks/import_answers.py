"""Long answer lists on import: seconds to read one GIFT question of N numerical answers and one
of N matching pairs.

    .venv/bin/python benchmarks/import_answers.py [N ...]

Each answer used to recompute every option id before it (quadratic: 16,000 numerical answers, a
165 KB file, took 130 s), and the matching item's checks compared each id with a list. A
question over the cap (`importers.safe.MAX_ANSWERS`) is skipped with the reason; the table shows
the time to read it with the cap lifted ("uncapped") and as a user runs it ("as run").
"""

from __future__ import annotations

import sys
import time

import dpassess.importers.questions as questions
from dpassess.importers.gift import read


def numerical(n: int) -> bytes:
    return ("::q::What? {#" + "".join(f"={i}:0 " for i in range(1, n + 1)) + "}\n").encode()


def matching(n: int) -> bytes:
    return ("::q::Match {" + "".join(f"=p{i} -> r{i} " for i in range(1, n + 1)) + "}\n").encode()


def seconds(data: bytes) -> tuple[float, str]:
    start = time.perf_counter()
    result = read(data, "bench.gift", "en")
    took = time.perf_counter() - start
    return took, f"{len(result.items)} read, {len(result.skipped)} skipped"


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1_000, 4_000, 16_000]
    cap = getattr(questions, "MAX_ANSWERS", None)
    print("kind\tN\tKB\tuncapped s\tas run s\tas run")
    for kind, make in (("numerical", numerical), ("matching", matching)):
        for n in sizes:
            data = make(n)
            if cap is not None:
                questions.MAX_ANSWERS = 10**9  # type: ignore[attr-defined]
            free, _ = seconds(data)
            if cap is not None:
                questions.MAX_ANSWERS = cap  # type: ignore[attr-defined]
            took, what = seconds(data)
            print(f"{kind}\t{n:,}\t{len(data) / 1000:.0f}\t{free:.2f}\t{took:.2f}\t{what}")


if __name__ == "__main__":
    main()
