"""The sha256 of every file `dpassess build` writes, cold and after each kind of change to the
bank, to compare two versions of the library byte for byte.

    .venv/bin/python benchmarks/export_hashes.py WORK BANK [BANK ...] [--items N] [--blueprints DIR]

(lint fails the build only at errors: the added copy is a near-duplicate, a warning)

Each BANK (a bank folder; `synthetic` makes an N-item bank with benchmarks/synth.py) is copied to
WORK/items/<name>/ and built into WORK/exports/ with the cache in WORK/cache/ (blueprints from
--blueprints, default none), then rebuilt after each step, in order: one item edited (its
first `stem:` line gets " (edited)"), one item added (a copy of another under a new id and
file), one deleted, one renamed (its file, the id unchanged). After each build the script
prints `step<TAB>path<TAB>sha256` for every file under WORK/exports/ (sorted). WORK is emptied
first. Run it once per version (`PYTHONPATH=<other checkout>/src` for another) with the same
WORK and compare the outputs: paths are the same, so the bytes must be.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _items(bank: Path) -> list[Path]:
    return sorted(p for p in bank.glob("*.yaml") if p.name != "bank.yaml")


def _build(work: Path, blueprints: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "dpassess", "build", "--items", str(work / "items"),
                        "--out", str(work / "exports"), "--cache-dir", str(work / "cache"),
                        "--blueprints", str(blueprints), "--fail-on", "error"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"build failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")


def _hashes(work: Path, step: str) -> None:
    out = work / "exports"
    for p in sorted(out.rglob("*")):
        if p.is_file():
            print(f"{step}\t{p.relative_to(out)}\t{hashlib.sha256(p.read_bytes()).hexdigest()}")


def main(argv: list[str]) -> int:
    n = int(argv[argv.index("--items") + 1]) if "--items" in argv else 10_000
    bp = Path(argv[argv.index("--blueprints") + 1]) if "--blueprints" in argv else None
    args = [a for i, a in enumerate(argv)
            if not a.startswith("--") and (i == 0 or argv[i - 1] not in ("--items", "--blueprints"))]
    work, banks = Path(args[0]), args[1:]
    shutil.rmtree(work, ignore_errors=True)
    (work / "items").mkdir(parents=True)
    (work / "no-blueprints").mkdir()
    blueprints = bp.resolve() if bp is not None else work / "no-blueprints"
    roots = []
    for bank in banks:
        if bank == "synthetic":
            import synth

            root = work / "items" / "synthetic"
            synth.write(root, n)
        else:
            root = work / "items" / Path(bank).name
            shutil.copytree(bank, root)
        roots.append(root)
    _build(work, blueprints)
    _hashes(work, "cold")
    for root in roots:
        files = _items(root)
        edited = files[len(files) // 2]
        text = edited.read_text(encoding="utf-8")
        edited.write_text(re.sub(r"(\n\s+stem: *[^\n|>]+)", r"\1 (edited)", text, count=1),
                          encoding="utf-8")
    _build(work, blueprints)
    _hashes(work, "edited")
    for root in roots:
        files = _items(root)
        source = files[1].read_text(encoding="utf-8")
        added = re.sub(r"(?m)^id: *(\S+)", r"id: \1-added", source, count=1)
        (root / f"zz-added-{files[1].name}").write_text(added, encoding="utf-8")
    _build(work, blueprints)
    _hashes(work, "added")
    for root in roots:
        _items(root)[2].unlink()
    _build(work, blueprints)
    _hashes(work, "deleted")
    for root in roots:
        f = _items(root)[3]
        f.rename(f.with_name("renamed-" + f.name))
    _build(work, blueprints)
    _hashes(work, "renamed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
