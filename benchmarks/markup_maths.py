"""Maths parsing on hostile text: time of each input at 1k, 10k and 100k characters and the growth
per x10, for markdown-it alone, with the maths rules (render, find_maths), and with
mdit-py-plugins' texmath plugin (brackets), which was measured and not used.

    .venv/bin/python benchmarks/markup_maths.py [--no-texmath]

Linear work grows about x10 per x10; markdown-it itself grows ~x12-14 on inputs made of
thousands of escapes (its own cost, shown in the first column for comparison).
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Callable

from markdown_it import MarkdownIt

from dpassess.markup.markdown import _md
from dpassess.markup.maths import _parse_scan

CASES = {
    "unclosed \\(": "\\(a ",
    "unclosed \\[": "\\[a ",
    "\\[ lines": "\\[a\n",
    "unclosed $": "$a ",
    "unclosed $$": "$$a ",
    "stray \\)": "a\\) ",
    "closed \\( \\)": "\\(a\\) ",
    "backslash runs": "\\\\\\\\\\(",
    "$$ block lines": "$$\na\n",
}
SIZES = (1_000, 10_000, 100_000)


def _time(f: Callable[[str], object], text: str) -> float:
    start = time.perf_counter()
    f(text)
    return time.perf_counter() - start


def main() -> None:
    plain = MarkdownIt("commonmark", {"html": True})
    columns: dict[str, Callable[[str], object]] = {
        "markdown-it": plain.render,
        "with maths": lambda t: (_md.render(t), _parse_scan.__wrapped__(t)),
    }
    if "--no-texmath" not in sys.argv:
        from mdit_py_plugins.texmath import texmath_plugin

        texmath = MarkdownIt("commonmark", {"html": True}).use(texmath_plugin,
                                                                delimiters="brackets")
        columns["texmath"] = texmath.render
    print(f"{'input':16} " + " ".join(f"{name + ' 1k/10k/100k s (growth)':>40}"
                                       for name in columns))
    for name, unit in CASES.items():
        cells = []
        for label, f in columns.items():
            times = []
            for n in SIZES:
                if label == "texmath" and n > 10_000 and unit.startswith("\\("):
                    times.append(float("nan"))  # quadratic: ~30 s at 100k
                    continue
                times.append(_time(f, unit * (n // len(unit))))
            growth = "/".join(f"x{b / a:.0f}" if a > 0 and b == b else "-"
                              for a, b in itertools.pairwise(times))
            cells.append(" ".join(f"{t:.3f}" for t in times) + f" ({growth})")
        print(f"{name:16} " + " ".join(f"{c:>40}" for c in cells))


if __name__ == "__main__":
    main()
