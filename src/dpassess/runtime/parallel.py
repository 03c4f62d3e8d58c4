"""Work split over forked worker processes that share the caller's data: the one process pool.

Loading, linting and exporting a large bank each split their work into tasks (a chunk of files,
a chunk of items, one export file). `Pool(fn, shared, tasks, jobs)` computes `fn(shared, task)`
for every task in `jobs` worker processes forked with `shared` already in memory (nothing is
pickled on the way in but a task's index; results are pickled back) and yields the results in
task order, whatever the scheduling: the output never depends on `jobs`. With one job, or where
`fork` is not available, the same calls run in this process, one by one as results are asked for.

Workers ignore Ctrl-C (the terminal sends it to the whole process group: the parent alone
handles it, so no worker prints a traceback), take the default action on SIGTERM, and die with
their parent (`prctl(PR_SET_PDEATHSIG)` on Linux, and a check of the parent's pid before every
task elsewhere). A pool left by an exception (an interrupt, a failing task) kills its workers at
once instead of waiting for the tasks they are running.

The workers are forked inside `Pool(...)` itself, before it returns: whatever state the caller
sets just before creating the pool (a flag on `shared`, a module-level setting) is what every
worker sees, and changes made after it do not reach them.

    with Pool(check_chunk, bank, chunks, jobs=worker_count(len(items), 2000)) as pool:
        other_work()            # the workers are already running
        for result in pool:     # in task order
            ...
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")

#: Most worker processes used by default.
MAX_JOBS = 8

# What the forked workers read: the function, the shared data and the tasks. Set only while a
# pool forks its workers (they inherit it); None otherwise.
_WORK: tuple[Callable[[Any, Any], Any], Any, Sequence[Any]] | None = None


def can_fork() -> bool:
    import multiprocessing  # here: a small job (one process) never needs it at start-up

    return "fork" in multiprocessing.get_all_start_methods()


def worker_count(size: int, threshold: int, jobs: int | None = None, tasks: int | None = None
                 ) -> int:
    """How many workers to use for work of `size` (items, files): `jobs` when given, else one
    per core (at most MAX_JOBS) once `size` reaches `threshold`, else 1; never more than
    `tasks`, and 1 where processes cannot be forked."""
    if jobs is None:
        jobs = min(os.cpu_count() or 1, MAX_JOBS) if size >= threshold else 1
    if tasks is not None:
        jobs = min(jobs, tasks)
    return jobs if jobs > 1 and can_fork() else 1


def chunks(n: int, jobs: int, *, per_job: int = 4, most: int | None = None) -> list[range]:
    """`range(n)` cut into contiguous pieces: about `per_job` per worker (so results arrive
    while the workers go on), at most `most` long."""
    size = max(1, -(-n // (max(jobs, 1) * per_job)))
    if most is not None:
        size = min(size, most)
    return [range(i, min(i + size, n)) for i in range(0, n, size)]


#: Linux's prctl option: the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1
_PARENT: int | None = None


def _die() -> None:
    """End this worker as PR_SET_PDEATHSIG would: its parent is gone, nobody wants its work."""
    os.kill(os.getpid(), signal.SIGKILL)


def _worker_init(parent: int) -> None:
    """In each worker, before any task: leave Ctrl-C to the parent, restore SIGTERM's default
    (the parent's handler is inherited through fork) and die with the parent."""
    global _PARENT
    _PARENT = parent
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before prctl took effect
        _die()


def _call(index: int) -> Any:
    assert _WORK is not None, "a worker runs only inside a forked pool"
    if _PARENT is not None and os.getppid() != _PARENT:
        _die()
    fn, shared, tasks = _WORK
    return fn(shared, tasks[index])


class Pool(Generic[S, T, R]):
    """`fn(shared, task)` for each of `tasks`; see the module docstring. Use it as a context
    manager (or call `close`): leaving the block stops the workers, and unfinished tasks are
    cancelled."""

    def __init__(self, fn: Callable[[S, T], R], shared: S, tasks: Sequence[T], jobs: int, *,
                 cost: Callable[[T], float] | None = None) -> None:
        self.fn, self.shared, self.tasks = fn, shared, tasks
        self.executor: ProcessPoolExecutor | None = None
        self.futures: list[Future[R]] = []
        if jobs <= 1 or len(tasks) < 2 or not can_fork():
            return
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        global _WORK
        _WORK = (fn, shared, tasks)
        try:
            # With `fork`, every worker is forked by the first submit, before the executor
            # starts a thread: all of them inherit _WORK.
            self.executor = ProcessPoolExecutor(
                max_workers=min(jobs, len(tasks)), mp_context=multiprocessing.get_context("fork"),
                initializer=_worker_init, initargs=(os.getpid(),))
            # the costliest tasks first (when the caller can tell), so that a large task taken
            # last does not keep one worker busy while the others wait
            order = (range(len(tasks)) if cost is None else
                     sorted(range(len(tasks)), key=lambda i: -cost(tasks[i])))
            futures = {i: self.executor.submit(_call, i) for i in order}
            self.futures = [futures[i] for i in range(len(tasks))]
        finally:
            _WORK = None

    @property
    def parallel(self) -> bool:
        return self.executor is not None

    def __iter__(self) -> Iterator[R]:
        """The results in task order, each as soon as it (and every one before it) is done."""
        if self.executor is None:
            for task in self.tasks:
                yield self.fn(self.shared, task)
            return
        for future in self.futures:
            yield future.result()

    def results(self) -> list[R]:
        """Every result in task order. When tasks fail, every task has ended before the first
        failing one (in task order) raises, as it would in one process."""
        if self.executor is not None:
            from concurrent.futures import wait

            wait(self.futures)
        return list(self)

    def close(self, *, kill: bool = False) -> None:
        """Stop the workers: after their tasks, or at once (`kill`: their results are not
        wanted, as when the caller is unwinding from an interrupt)."""
        if self.executor is not None:
            if kill:
                processes = getattr(self.executor, "_processes", None) or {}
                for process in list(processes.values()):
                    with contextlib.suppress(OSError, AttributeError):
                        process.kill()
            self.executor.shutdown(cancel_futures=True)
            self.executor = None

    def __enter__(self) -> Pool[S, T, R]:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close(kill=exc is not None)


def run(fn: Callable[[S, T], R], shared: S, tasks: Sequence[T], jobs: int, *,
        cost: Callable[[T], float] | None = None) -> list[R]:
    """`[fn(shared, t) for t in tasks]`, in `jobs` forked workers (see `Pool.results`); with
    `cost`, a task's expected work, the costliest tasks are handed out first."""
    with Pool(fn, shared, tasks, jobs, cost=cost) as pool:
        return pool.results()
