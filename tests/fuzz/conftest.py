"""The fuzzing harness (`make fuzz`), not part of `make test`: its tests are collected only with
DPASSESS_FUZZ=1, under a hypothesis profile of many large examples whose failures are kept in
tests/fuzz/corpus/hypothesis (replayed first on the next run).

    DPASSESS_FUZZ=1 FUZZ_EXAMPLES=500 python -m pytest tests/fuzz

FUZZ_SECONDS bounds the whole run (each test gets a share, then stops trying its examples), or
FUZZ_TEST_SECONDS each test (`make fuzz-slice`, run by `make test`: the importers for about a
minute, under the commit's seed with HYPOTHESIS_PROFILE=ci).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from fuzz.hostile import OutOfTime, set_budget, start_budget

HERE = Path(__file__).parent

if os.environ.get("DPASSESS_FUZZ") != "1":
    collect_ignore_glob = ["test_*.py"]
else:
    settings.register_profile(
        "fuzz",
        max_examples=int(os.environ.get("FUZZ_EXAMPLES", "300")),
        # a hang shows as a failure rather than a stuck run
        deadline=float(os.environ.get("FUZZ_DEADLINE_MS", "20000")),
        database=DirectoryBasedExampleDatabase(str(HERE / "corpus" / "hypothesis")),
        suppress_health_check=list(HealthCheck),
        derandomize=False,
        print_blob=True,
        # shrinking a large hostile input can take many minutes: FUZZ_SHRINK=1 to shrink
        phases=[p for p in Phase if p is not Phase.shrink or os.environ.get("FUZZ_SHRINK") == "1"],
    )
    settings.load_profile("fuzz")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    set_budget(len(items))


@pytest.fixture(autouse=True)
def _time_budget() -> Iterator[None]:
    start_budget()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Iterator[None]:
    """A test stopped by its time budget passed: every example it tried did."""
    outcome = yield
    if call.when == "call" and call.excinfo is not None and call.excinfo.errisinstance(OutOfTime):
        report = outcome.get_result()  # type: ignore[attr-defined]
        report.outcome, report.longrepr = "passed", None
