"""The pool hands the costliest tasks out first when told their cost, and still returns the
results in task order."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpassess.runtime import parallel


def _note_start(log: Path, task: int) -> int:
    with open(log, "a", encoding="utf-8") as fh:  # one short append: whole lines
        fh.write(f"{task}\n")
    return task * 10


@pytest.mark.skipif(not parallel.can_fork(), reason="needs fork")
def test_the_costliest_tasks_start_first_and_results_keep_task_order(tmp_path: Path) -> None:
    log = tmp_path / "started"
    tasks = [0, 1, 2, 3, 4, 5]
    cost = {0: 1.0, 1: 2.0, 2: 9.0, 3: 1.5, 4: 8.0, 5: 0.5}
    results = parallel.run(_note_start, log, tasks, 2, cost=cost.__getitem__)
    assert results == [0, 10, 20, 30, 40, 50]
    started = [int(line) for line in log.read_text(encoding="utf-8").split()]
    assert sorted(started) == tasks
    # two workers take the first two tasks handed out: the two costliest
    assert set(started[:2]) == {2, 4}


def test_one_job_runs_in_task_order_whatever_the_cost(tmp_path: Path) -> None:
    log = tmp_path / "started"
    assert parallel.run(_note_start, log, [0, 1, 2], 1, cost=lambda t: -t) == [0, 10, 20]
    assert log.read_text(encoding="utf-8").split() == ["0", "1", "2"]
