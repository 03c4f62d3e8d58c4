"""Shared test set-up: hypothesis profiles (bounded so `make test` stays fast) and bank helpers."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

settings.register_profile(
    "dev", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow],
    derandomize=True, print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# The language model cache of this test session (and of the commands its tests start): a fresh
# folder, so that the tests neither read nor write the user's own cache.
if "DPASSESS_MODEL_CACHE" not in os.environ:
    _model_cache = tempfile.mkdtemp(prefix="dpassess-model-")
    os.environ["DPASSESS_MODEL_CACHE"] = _model_cache
    atexit.register(shutil.rmtree, _model_cache, ignore_errors=True)

ROOT = Path(__file__).resolve().parent.parent
SEED_BANK = ROOT / "items" / "data-parallelism"


def files(root: Path) -> dict[str, bytes]:
    """Every file below `root`: its POSIX path relative to `root` -> its bytes (sorted)."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}
