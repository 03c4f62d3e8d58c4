"""Export speed of every registered format on a 10,000-item bilingual bank, against a baseline.

    .venv/bin/python benchmarks/export.py [N] [--repeat R] [--formats qti21,gift]

Without --formats, two more rows: every file `dpassess build` writes (3 formats x id, en, multi
where carried), streamed to a temporary folder by `dpassess.export.runner.write_exports` in one
process, and in a process pool (the workers write the files; nothing comes back but warnings).

Items come from benchmarks/synth.py (realistic lengths, every item type), built in memory. The
baseline, timed in the same run on the same items, is the floor any XML exporter pays: lxml
building one bare element per text field of each item (no rendering, no structure) and
serialising it. Each format is timed best-of-R with the Markdown cache cleared first, so no
format profits from another's rendering; the exporters' own memo tables (`copied` subtrees,
grades, multilang texts) are cleared too.
A format whose module does not import yet is skipped.
"""

from __future__ import annotations

import gc
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lxml import etree

sys.path.insert(0, str(Path(__file__).parent))
import synth
from dpassess.export import EXPORTERS, MULTI, Collection
from dpassess.markup.markdown import clear_cache
from dpassess.model import Item, parse_item


def make_items(n: int, seed: int = 1) -> list[Item]:
    rng = random.Random(seed)
    return [parse_item(synth.item_data(k, rng)) for k in range(n)]


def baseline(items: list[Item], lang: str) -> int:
    """Bare trees: one element per text field, serialised; returns the bytes written."""
    size = 0
    for it in items:
        c = it.text[lang]
        root = etree.Element("item", id=it.id)
        etree.SubElement(root, "stem").text = c.stem
        for oid in it.option_ids:
            etree.SubElement(root, "option", id=oid).text = it.option_text(lang, oid)
        for oid, fb in c.feedback.items():
            etree.SubElement(root, "feedback", id=oid).text = fb
        if c.explanation:
            etree.SubElement(root, "explanation").text = c.explanation
        size += len(etree.tostring(root, encoding="UTF-8"))
    return size


def clear_export_caches() -> None:
    """Empty the exporters' own memo tables (multilang texts, grades, copied subtrees), so
    every repeat pays for them as a fresh process would."""
    import importlib

    for name in ("moodle.texts", "qti.items", "qti.manifest"):
        module = importlib.import_module(f"dpassess.export.{name}")
        for value in vars(module).values():
            if hasattr(value, "cache_clear") and not isinstance(value, type):
                value.cache_clear()


def best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        clear_cache()
        clear_export_caches()
        gc.collect()
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main(argv: list[str]) -> int:
    opts = {argv[i]: argv[i + 1] for i in range(len(argv) - 1) if argv[i].startswith("--")}
    args = [a for i, a in enumerate(argv)
            if not a.startswith("--") and not (i and argv[i - 1] in opts)]
    n = int(args[0]) if args else 10_000
    repeat = int(opts.get("--repeat", 3))
    only = opts["--formats"].split(",") if "--formats" in opts else list(EXPORTERS)
    t = time.perf_counter()
    items = make_items(n)
    collection = Collection(id="synthetic", title={"id": "Bank sintetis", "en": "Synthetic bank"},
                            languages=("id", "en"), items=items, category="synthetic")
    print(f"{n} bilingual items generated in {time.perf_counter() - t:.2f} s; best of {repeat}")

    base, size = best(lambda: baseline(items, "en"), repeat)
    print(f"{'baseline (lxml bare trees)':34} {base:7.2f} s {n / base:9.0f} items/s"
          f"  1.00x  {size / 1e6:6.1f} MB")
    for fmt in only:
        try:
            exp = EXPORTERS[fmt]
        except ImportError as exc:
            print(f"{fmt:34} skipped: {exc}")
            continue
        for lang in ("en", *([MULTI] if exp.multi else [])):
            secs, result = best(lambda exp=exp, lang=lang: exp.export(collection, lang), repeat)
            print(f"{fmt + ' --lang ' + lang:34} {secs:7.2f} s {n / secs:9.0f} items/s"
                  f" {secs / base:5.2f}x  {len(result.data) / 1e6:6.1f} MB"
                  f"  ({len(result.warnings)} warnings)")
    if "--formats" not in opts:
        from dpassess.export.runner import ExportFile, file_name, write_exports

        # every file `dpassess build` writes for the bank, in one process and in a process pool
        langs = {fmt: ("id", "en", *([MULTI] if EXPORTERS[fmt].multi else [])) for fmt in EXPORTERS}
        pairs = [(fmt, lang) for fmt in EXPORTERS for lang in langs[fmt]]
        jobs = min(os.cpu_count() or 1, 8, len(pairs))

        def write_all(jobs: int) -> None:
            with tempfile.TemporaryDirectory() as tmp:
                write_exports([ExportFile(collection, fmt, lang,
                                          Path(tmp) / file_name(collection, fmt, lang))
                               for fmt, lang in pairs], jobs=jobs)

        seq, _ = best(lambda: write_all(1), repeat)
        par, _ = best(lambda: write_all(jobs), repeat)
        print(f"{f'all {len(pairs)} files, 1 process':34} {seq:7.2f} s {n / seq:9.0f} items/s"
              f" {seq / base:5.2f}x")
        print(f"{f'all {len(pairs)} files, {jobs} processes':34} {par:7.2f} s {n / par:9.0f} items/s"
              f" {par / base:5.2f}x  ({seq / par:.2f}x faster than 1 process)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
