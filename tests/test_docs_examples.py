"""Every Python example in README.md and docs/ runs as printed (from the repository root, in a
fresh interpreter), and the user pages carry no history of the project's own work."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def _examples() -> list[tuple[str, str]]:
    return [(f"{page.relative_to(ROOT)}#{n}", code)
            for page in PAGES for n, code in enumerate(BLOCK.findall(page.read_text()), 1)]


#: Examples that cannot run yet, and what they need (strict: fixing one fails this list).
KNOWN = {
    "docs/architecture.md#1": "a code pattern, not an example: fence it as ```text",
    "docs/stats.md#1": "reads ujian-a.csv: add it under tests/fixtures/ (responses to the forms)",
}
FILE = re.compile(r"""["']([\w./-]+\.(?:xml|csv|txt|zip|json))["']""")


def _workspace(tmp_path: Path, code: str) -> Path:
    """A copy of the repository's banks, blueprints and exports, with every data file the
    example names (found by name under tests/fixtures/)."""
    for name in ("items", "blueprints", "exports"):
        shutil.copytree(ROOT / name, tmp_path / name)
    for wanted in FILE.findall(code):
        if not (tmp_path / wanted).exists():
            found = sorted((ROOT / "tests" / "fixtures").rglob(Path(wanted).name))
            if found:
                (tmp_path / wanted).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(found[0], tmp_path / wanted)
    return tmp_path


@pytest.mark.parametrize(
    ("where", "code"),
    [pytest.param(w, c, marks=pytest.mark.xfail(strict=True, reason=KNOWN[w])) if w in KNOWN
     else (w, c) for w, c in _examples()],
    ids=[w for w, _ in _examples()],
)
def test_the_python_example_runs(where: str, code: str, tmp_path: Path):
    """From a copy of the repository's folders (an example may write), in a fresh interpreter."""
    r = subprocess.run([sys.executable, "-c", code], cwd=_workspace(tmp_path, code),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{where} fails:\n{r.stderr[-2000:]}"


#: What a user page must not say: the project's own work periods, tickets and targets.
HISTORY = re.compile(
    r"\b(session|sessions|round (one|two|\d)|issue #?\d+|ticket|CPU-s)\b|(?<!&)#\d{2,}\b", re.I)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_user_pages_carry_no_project_history(page: Path):
    text = BLOCK.sub("", page.read_text(encoding="utf-8"))
    hits = [m.group(0) for m in HISTORY.finditer(text)]
    assert not hits, f"{page.name}: {hits[:5]}"

