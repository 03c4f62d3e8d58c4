"""Simulated administrations with known item parameters, for the `dpassess stats` tests and timing.

    python benchmarks/stats_sim.py write OUT_DIR [--persons N] [--items K] [--seed S]
        # OUT_DIR/bank (a bank) and OUT_DIR/responses.csv (generic CSV)
    python benchmarks/stats_sim.py time [--persons 20000] [--items 50] [--trace]
        # reads and analyses persons x items rows (default 10^6) in a fresh process: wall and
        # CPU seconds, peak memory (resident set size above the process once the bank is
        # loaded, after reading and after the analysis; --trace: again under tracemalloc)

Persons have an ability theta ~ N(0, 1); each item answers right with the 2PL probability
1 / (1 + exp(-a (theta - b))), else picks a distractor by fixed weights, and 2% omit. Planted
among the ordinary items (ids `sim-NN`):

- `sim-miskeyed`: the bank's key is `b`, but the persons who know the answer choose `a`
  (a miskeyed item: negative discrimination, `a` a distractor chosen by high scorers);
- `sim-negative`: a = -1.2, so low scorers answer it right more often;
- `sim-dead`: its distractor `d` is never chosen;
- `sim-mr-NN` (multiple_response, key a and b of four, Moodle's default fractions) and
  `sim-tf-NN` (true_false) items for partial credit and two-option items.

Everything is drawn from `random.Random(seed)`: the same seed gives the same files.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import random
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

OPTIONS = ("a", "b", "c", "d")


@dataclass
class SimItem:
    """An item with its true parameters and how it is written in the bank."""

    id: str
    type: str = "single_choice"
    a: float = 1.0
    b: float = 0.0
    key: tuple[str, ...] = ("a",)
    #: the option(s) persons who know the answer choose (differs from `key` when miskeyed)
    true_key: tuple[str, ...] = ("a",)
    options: tuple[str, ...] = OPTIONS
    #: weight of each wrong option among wrong answers (0: nobody picks it)
    weights: dict[str, float] = field(default_factory=dict)

    def raw(self) -> dict[str, object]:
        """The item file's data."""
        data: dict[str, object] = {
            "schema": 1, "id": self.id, "type": self.type, "topic": "sim",
            "status": "reviewed", "points": 1,
        }
        if self.type != "true_false":
            data["options"] = list(self.options)
        data["key"] = list(self.key)
        content: dict[str, object] = {"stem": f"Simulated question {self.id}?"}
        if self.type != "true_false":
            content["options"] = {o: f"Option {o} of {self.id}" for o in self.options}
        data["text"] = {"en": content}
        return data


def make_items(k: int, seed: int) -> list[SimItem]:
    """k items: three planted bad ones, every seventh multiple_response, every eleventh
    true_false, the rest single_choice with a in [0.8, 2.0], b in [-1.5, 1.5]."""
    rng = random.Random(f"{seed}:items")
    items = [
        SimItem("sim-miskeyed", a=1.5, b=-0.3, key=("b",), true_key=("a",),
                weights={"b": 1.0, "c": 1.0, "d": 1.0}),
        SimItem("sim-negative", a=-1.2, b=0.0, weights={"b": 1.0, "c": 1.0, "d": 1.0}),
        SimItem("sim-dead", a=1.3, b=0.2, weights={"b": 1.0, "c": 1.0, "d": 0.0}),
    ]
    for j in range(k - len(items)):
        a, b = rng.uniform(0.8, 2.0), rng.uniform(-1.5, 1.5)
        if j % 7 == 3:
            items.append(SimItem(f"sim-mr-{j:02d}", "multiple_response", a, b, ("a", "b"),
                                 ("a", "b")))
        elif j % 11 == 5:
            items.append(SimItem(f"sim-tf-{j:02d}", "true_false", a, b, ("true",), ("true",),
                                 ("true", "false"), {"false": 1.0}))
        else:
            key = OPTIONS[j % 4]
            items.append(SimItem(f"sim-{j:02d}", a=a, b=b, key=(key,), true_key=(key,),
                                 weights={o: rng.uniform(0.5, 1.5) for o in OPTIONS if o != key}))
    return items


def _wrong(item: SimItem, rng: random.Random) -> list[str]:
    if item.type == "multiple_response":
        while True:  # any other non-empty set of options
            chosen = [o for o in item.options if rng.random() < 0.5]
            if chosen and tuple(chosen) != item.true_key:
                return chosen
    wrong = [o for o in item.options if o not in item.true_key]
    weights = [item.weights.get(o, 1.0) for o in wrong]
    return [rng.choices(wrong, weights)[0]]


def simulate(items: list[SimItem], persons: int, seed: int) -> Iterator[tuple[str, str, str]]:
    """(person, item, response) rows, person by person; response: option ids joined by ';'."""
    rng = random.Random(f"{seed}:responses")
    width = len(str(persons))
    for n in range(persons):
        theta = rng.gauss(0.0, 1.0)
        person = f"p{n + 1:0{width}d}"
        for item in items:
            if rng.random() < 0.02:
                yield person, item.id, ""
                continue
            right = rng.random() < 1.0 / (1.0 + math.exp(-item.a * (theta - item.b)))
            chosen = list(item.true_key) if right else _wrong(item, rng)
            yield person, item.id, ";".join(chosen)


def write_bank(folder: Path, items: list[SimItem]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bank.yaml").write_text(yaml.safe_dump({
        "schema": 1, "id": "sim", "title": {"en": "Simulated bank"}, "languages": ["en"],
        "default_language": "en",
    }), encoding="utf-8")
    for i, item in enumerate(items):
        (folder / f"{i:03d}-{item.id}.yaml").write_text(
            yaml.safe_dump(item.raw(), sort_keys=False), encoding="utf-8")


def write_responses(path: Path, items: list[SimItem], persons: int, seed: int) -> int:
    """The generic CSV; returns the number of rows."""
    rows = 0
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["person", "form", "item", "response"])
        for person, item, response in simulate(items, persons, seed):
            w.writerow([person, "", item, response])
            rows += 1
    return rows


def write(out: Path, persons: int, k: int, seed: int) -> tuple[Path, Path]:
    items = make_items(k, seed)
    write_bank(out / "bank", items)
    write_responses(out / "responses.csv", items, persons, seed)
    return out / "bank", out / "responses.csv"


_TIMED = r"""
import json, resource, sys, time, tracemalloc
import dpassess
from dpassess.stats import analyse, read_responses, render
bank = dpassess.load_bank(sys.argv[1])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
trace = sys.argv[3] == "trace"
if trace:
    tracemalloc.start()
t0, c0 = time.perf_counter(), time.process_time()
responses = read_responses(sys.argv[2], bank)
t1, c1 = time.perf_counter(), time.process_time()
read_rss = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024
analysis = analyse(responses)
t2, c2 = time.perf_counter(), time.process_time()
report = render(analysis, "json")
t3 = time.perf_counter()
out = {"read_s": t1 - t0, "read_cpu_s": c1 - c0, "analyse_s": t2 - t1,
       "analyse_cpu_s": c2 - c1, "json_s": t3 - t2,
       "peak_rss_read_mb": read_rss,
       "peak_rss_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024}
if trace:
    out["tracemalloc_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
print("RESULT " + json.dumps(out))
"""


def time_it(persons: int, k: int, seed: int, work: Path, trace: bool) -> None:
    bank, responses = write(work, persons, k, seed)
    size = responses.stat().st_size / 2**20
    print(f"{persons} persons x {k} items = {persons * k} rows, {size:.1f} MB of CSV")
    for mode in ("plain", "trace") if trace else ("plain",):
        p = subprocess.run([sys.executable, "-c", _TIMED, str(bank), str(responses), mode],
                           capture_output=True, text=True, check=True)
        line = next(x for x in p.stdout.splitlines() if x.startswith("RESULT "))
        r = json.loads(line[len("RESULT "):])
        print(f"  [{mode}] " + ", ".join(f"{k} {v:.2f}" for k, v in r.items()))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("out", type=Path)
    t = sub.add_parser("time")
    t.add_argument("--work", type=Path, default=None)
    t.add_argument("--trace", action="store_true",
                   help="also run under tracemalloc (several times slower)")
    for p, persons in ((w, 500), (t, 20_000)):
        p.add_argument("--persons", type=int, default=persons)
        p.add_argument("--items", type=int, default=50 if p is t else 40)
        p.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    if args.cmd == "write":
        bank, responses = write(args.out, args.persons, args.items, args.seed)
        print(f"wrote {bank} and {responses}")
        return
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        time_it(args.persons, args.items, args.seed, args.work or Path(tmp), args.trace)


if __name__ == "__main__":
    main()
