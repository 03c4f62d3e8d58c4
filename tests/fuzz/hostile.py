"""Strategies of hostile input for the fuzzing harness: text that breaks parsers (control
characters, lone surrogates' neighbours, entities, markup, the importers' own syntax), and byte
mutations of real files (the seeds: tests/fuzz/corpus/seeds and the committed goldens)."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

import pytest
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
SEEDS = Path(__file__).parent / "corpus" / "seeds"

#: Pieces of every syntax the importers and the loader read.
TOKENS = [
    "::", "{", "}", "=", "~", "#", "%50%", "%-100%", "->", "\\", "\\:", "\\{", "\\=", "//",
    "[id:", "[tag:", "]", "$CATEGORY:", "[html]", "[markdown]", "[moodle]", "\n\n", "\r\n",
    "<", ">", "&", "&amp;", "&#0;", "&#x1F600;", "&bogus;", "<![CDATA[", "]]>", "<!--", "-->",
    '<span lang="en" class="multilang">', "</span>", "<img src=\"../../etc/passwd\">",
    '<img src="@@PLUGINFILE@@/a.png">', "<script>", "<math>", "$", "$$", "\\(", "\\)",
    "\x00", "\x01", "\x0b", "\x1f", "\x7f", "\u0085", "\u2028", "\ufeff", "\ufffe", "\U0001f600",
    "-", ": ", "- ", "? ", "!!python/object:os.system", "!!set", "&a", "*a", "<<: *a", "'", '"',
    "|", ">-", "---", "...", "%YAML 1.1", "9" * 5000, "1e309", "-0", "nan", ".inf", "~", "null",
]

hostile_text = st.lists(
    st.one_of(st.sampled_from(TOKENS), st.text(max_size=20), st.sampled_from(["a", "x" * 200])),
    max_size=40,
).map("".join)


#: Seconds each fuzz test may spend on its inputs: FUZZ_TEST_SECONDS, else a share of
#: FUZZ_SECONDS (the whole run's bound: `set_budget`), else no limit. Once spent, the rest of a
#: test's examples are not tried (the test stops and passes), so that the run ends by itself
#: within its bound
#: (`make fuzz`, and `make fuzz-slice`, part of `make test`) rather than being killed.
_budget = [float(os.environ.get("FUZZ_TEST_SECONDS") or "inf")]
_deadline = [math.inf]


def set_budget(tests: int) -> None:
    """Share FUZZ_SECONDS among `tests` tests (when FUZZ_TEST_SECONDS does not say): most of
    it, the rest left for starting up and for the slowest example."""
    total = os.environ.get("FUZZ_SECONDS")
    if not os.environ.get("FUZZ_TEST_SECONDS") and total and tests:
        _budget[0] = 0.8 * float(total) / tests


def start_budget() -> None:
    """Start the time budget of one test (the harness's conftest calls it before each)."""
    _deadline[0] = time.monotonic() + _budget[0]


class OutOfTime(pytest.skip.Exception):
    """A test's time budget is spent: hypothesis stops at once (it re-raises a skip), and the
    conftest reports the test as passed, with the examples tried so far."""


def stop_when_spent() -> None:
    """Stop the test (OutOfTime) when its time budget is spent."""
    if time.monotonic() > _deadline[0]:
        raise OutOfTime("time budget spent", _use_item_location=False)


def seed_files(*patterns: str) -> list[Path]:
    """The seed inputs matching `patterns` (globs under the repository root)."""
    out: list[Path] = []
    for pattern in patterns:
        out += sorted(ROOT.glob(pattern))
    return [p for p in out if p.is_file()]


@st.composite
def mutated(draw: st.DrawFn, seeds: list[Path]) -> bytes:
    """A seed file with a few slices replaced by hostile text, repeated, or cut."""
    data = bytearray(draw(st.sampled_from(seeds)).read_bytes())
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, len(data)))
        j = draw(st.integers(i, min(len(data), i + 64)))
        op = draw(st.sampled_from(["insert", "replace", "repeat", "cut"]))
        if op == "insert":
            data[i:i] = draw(hostile_text).encode("utf-8", "surrogatepass")
        elif op == "replace":
            data[i:j] = draw(hostile_text).encode("utf-8", "surrogatepass")
        elif op == "repeat":
            data[i:j] = bytes(data[i:j]) * draw(st.integers(2, 2000))
        else:
            del data[i:j]
    return bytes(data)
