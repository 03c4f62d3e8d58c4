"""A large image in a printed form: wall time and peak memory of one form's PDF.

    .venv/bin/python benchmarks/print_images.py [MB ...]

For each size (default 5 and 20 MB), a copy of the kitchen-sink bank gets a PNG of random
pixels of about that many bytes in place of its image, and one form of one item that shows it is
compiled to PDF in a fresh process (so that the peak memory is that compile's alone). Larger
images than the print limits (docs/security.md) are left out of the PDF with a warning: the
figures then show the cost of refusing them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KS = ROOT / "tests" / "banks" / "kitchen-sink"

CHILD = """
import resource, sys, time
from pathlib import Path
from dpassess.bank.load import load_bank
from dpassess.assemble.output import collection
from dpassess.assemble.paper import Paper, compile_pdf
from dpassess.assemble import assemble_problem
from dpassess.assemble.problem import resolve
from dpassess.model.blueprint import Blueprint

bank = load_bank(Path(sys.argv[1]))
data = {"id": "ks", "bank": ".", "forms": 1, "items": 1, "anchors": ["ks-hash-lookup"]}
a = assemble_problem(resolve(Blueprint.model_validate(data), "<bp>", bank))
form = a.forms[0]
paper = Paper(form, "en", collection(a.problem, form).title_in("en"), False, bank)
start = time.perf_counter()
pdf = compile_pdf(paper)
took = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
warned = "; ".join(w.message for w in paper.warnings) or "none"
print(f"{took:.1f}\\t{peak:.0f}\\t{len(pdf):,}\\t{warned}")
"""


def png(side: int) -> bytes:
    """A `side` x `side` RGB PNG of random pixels (about 3 * side**2 bytes: noise does not
    compress)."""
    rows = b"".join(b"\0" + os.urandom(3 * side) for _ in range(side))
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (len(body).to_bytes(4, "big") + kind + body
                + zlib.crc32(kind + body).to_bytes(4, "big"))
    head = side.to_bytes(4, "big") * 2 + bytes([8, 2, 0, 0, 0])
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(rows, 1))
            + chunk(b"IEND", b""))


def main() -> None:
    sizes = [float(a) for a in sys.argv[1:]] or [5.0, 20.0]
    print("image MB\tpixels\tseconds\tpeak MB\tPDF bytes\twarnings")
    for mb in sizes:
        side = int((mb * 1e6 / 3) ** 0.5)
        with tempfile.TemporaryDirectory() as tmp:
            bank = Path(tmp) / "ks"
            shutil.copytree(KS, bank)
            data = png(side)
            (bank / "img" / "hash-table.png").write_bytes(data)
            r = subprocess.run([sys.executable, "-c", CHILD, str(bank)], capture_output=True,
                               text=True, cwd=ROOT)
            if r.returncode:
                print(f"{len(data) / 1e6:.1f}\t{side}x{side}\tfailed ({r.returncode}): "
                      f"{r.stderr.strip().splitlines()[-1:]}")
                continue
            print(f"{len(data) / 1e6:.1f}\t{side}x{side}\t{r.stdout.strip()}")


if __name__ == "__main__":
    main()
