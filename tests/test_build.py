"""`dpassess build`: the main job writes every export, deterministically; exports/ is current."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT, files


def test_build_is_deterministic_and_exports_are_current(tmp_path):
    outs = []
    for n in (1, 2):
        out = tmp_path / f"out{n}"
        r = subprocess.run(
            [sys.executable, "-m", "dpassess", "build", "--items", str(ROOT / "items"),
             "--out", str(out)],
            capture_output=True, text=True, timeout=600, cwd=tmp_path,
        )
        assert r.returncode == 0, r.stderr
        assert "Traceback" not in r.stderr
        outs.append(files(out))
    assert outs[0] == outs[1], "two builds of the same bank differ"
    committed = files(ROOT / "exports")
    stale = sorted(
        name for name in set(outs[0]) | set(committed) if outs[0].get(name) != committed.get(name)
    )
    assert not stale, f"exports/ is stale, run `make run` and commit: {stale[:10]}"
