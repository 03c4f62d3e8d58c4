"""A lower bound of b's export: the XML serialisation alone, with no dpassess code at all.

    .venv/bin/python benchmarks/serialise_bound.py [N]

Writes the 8 files of a build for a synthetic bank of N items (default 10,000), parses every QTI
item file and every Moodle `<question>` back (untimed), then times only lxml's `tostring` of
those very trees, plus the CRC a zip entry needs. Whatever the exporters do, they cannot cost
less than this while they write XML through lxml. Printed: CPU seconds per file and in all, the
same figure spread ideally over 2 cores, and the exporters' own CPU seconds in this process for
comparison. docs/performance.md ("The limits") quotes it.
"""

from __future__ import annotations

import sys
import tempfile
import time
import zipfile
import zlib
from pathlib import Path

from lxml import etree

sys.path.insert(0, str(Path(__file__).parent))
import synth
from dpassess import load_bank
from dpassess.export import EXPORTERS, MULTI, Collection
from dpassess.export.runner import ExportFile, file_name, write_exports


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 10_000
    with tempfile.TemporaryDirectory(prefix="dpassess-bound-") as tmp:
        work = Path(tmp)
        bank = load_bank(synth.write(work / "bank", n))
        collection = Collection.from_bank(bank)
        exports = [ExportFile(collection, fmt, lang, work / "out" / fmt / file_name(collection, fmt, lang))
                   for fmt, exp in EXPORTERS.items()
                   for lang in [*bank.config.languages, *([MULTI] if exp.multi else [])]]
        t = time.process_time()
        write_exports(exports, jobs=1)
        exporters = time.process_time() - t
        total = 0.0
        print(f"{n:,} items; only lxml's tostring of the trees the exporters wrote (CPU s):")
        for z in sorted((work / "out" / "qti21").glob("*.zip")):
            with zipfile.ZipFile(z) as zf:
                trees = [etree.fromstring(zf.read(m)) for m in zf.namelist()
                         if m.endswith(".xml")]
            t = time.process_time()
            for tree in trees:
                zlib.crc32(etree.tostring(tree, xml_declaration=True, encoding="UTF-8"))
            secs = time.process_time() - t
            total += secs
            print(f"  {z.name}: {len(trees):,} files, {secs:.2f}")
        parser = etree.XMLParser(huge_tree=True)
        for f in sorted((work / "out" / "moodle-xml").glob("*.xml")):
            questions = list(etree.parse(str(f), parser).getroot())
            t = time.process_time()
            for q in questions:
                etree.tostring(q, encoding="UTF-8")
            secs = time.process_time() - t
            total += secs
            print(f"  {f.name}: {len(questions):,} questions, {secs:.2f}")
        print(f"serialisation alone: {total:.2f} CPU s ({total / 2:.2f} s on 2 cores at best)")
        print(f"the exporters (8 files, one process, this run): {exporters:.2f} CPU s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
