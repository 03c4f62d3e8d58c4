"""Banks + settings -> findings: runs the selected rules, applies suppressions, adds positions."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dpassess.bank.positions import Locator
from dpassess.lint.config import LintConfig
from dpassess.lint.context import BankContext, ItemContext
from dpassess.lint.langid import ModelDeferred
from dpassess.lint.registry import Hit, Loc, Rule, Severity
from dpassess.lint.text import clear_memos
from dpassess.model import Bank, LoadedItem
from dpassess.runtime.gcpause import gc_paused


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: which rule, where (`path:line:col` and the field path), what and how to fix."""

    code: str
    name: str
    severity: Severity
    path: str
    line: int
    col: int
    field: str
    message: str
    help: str

    @property
    def sort_key(self) -> tuple[str, int, int, str, str, str]:
        return (self.path, self.line, self.col, self.code, self.field, self.message)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"


def field_path(loc: Loc) -> str:
    out = ""
    for step in loc:
        out += f"[{step}]" if isinstance(step, int) else ("." if out else "") + str(step)
    return out


def _finding(rule: Rule, path: str, hit: Hit, locate: Locator) -> Finding:
    line, col = locate(path, hit.loc)
    return Finding(
        rule.code, rule.name, rule.severity, path, line, col, field_path(hit.loc),
        hit.message, hit.help or rule.fix,
    )


def _run(rule: Rule, *args: object) -> list[Hit]:
    """The rule's hits; a rule that fails reports the failure as its own finding."""
    try:
        return list(rule.check(*args))
    except ModelDeferred:
        raise
    except Exception as exc:  # a bug in a rule must not hide every other finding
        return [Hit((), f"internal error in rule {rule.code}: {type(exc).__name__}: {exc} "
                        "(please report this)")]


#: Below this many items a process pool for the item rules costs more than it saves.
PARALLEL_MIN_ITEMS = 2000

#: What one item's item rules produced: its findings and the suppressed codes that fired.
ItemResult = tuple[list[Finding], set[str]]

#: An item result still missing some rules (their index in the rule list, and where their
#: findings go in the list), deferred by a worker because they needed the language model.
Partial = tuple[list[Finding], set[str], list[tuple[int, int]]]


def _apply(
    r: Rule, ctx: ItemContext, off: set[str], hit_codes: set[str],
    locate: Locator,
) -> list[Finding]:
    new = []
    for hit in _run(r, ctx):
        if r.code in off:
            hit_codes.add(r.code)
        else:
            new.append(_finding(r, ctx.path, hit, locate))
    return new


def _item_result(ctx: ItemContext, item_rules: list[Rule], locate: Locator) -> Partial:
    off = {s.rule for s in ctx.item.suppress}
    found: list[Finding] = []
    hit_codes: set[str] = set()
    deferred: list[tuple[int, int]] = []
    for i, r in enumerate(item_rules):
        try:
            found += _apply(r, ctx, off, hit_codes, locate)
        except ModelDeferred:
            deferred.append((i, len(found)))
    return found, hit_codes, deferred


def _check(entries: list[LoadedItem], item_rules: list[Rule], bctx: BankContext) -> list[Partial]:
    """Item rules over `entries`, in order. Each item's context (and the text derived from it)
    lives only while that item is checked."""
    locate = Locator()
    out = []
    for e in entries:
        ctx = ItemContext(e.item, e.path, bctx)
        out.append(_item_result(ctx, item_rules, locate))
        ctx.release()
    return out


def _complete(
    e: LoadedItem, part: Partial, item_rules: list[Rule], bctx: BankContext, locate: Locator
) -> ItemResult:
    """The item result with its deferred rules run here, their findings where they would
    have been."""
    found, hit_codes, deferred = part
    if deferred:
        ctx = ItemContext(e.item, e.path, bctx)
        off = {s.rule for s in e.item.suppress}
        for i, at in reversed(deferred):
            found[at:at] = _apply(item_rules[i], ctx, off, hit_codes, locate)
        ctx.release()
    return found, hit_codes


def _load_model(bctx: BankContext) -> None:
    """Load the language model for the bank's languages (once per process)."""
    from dpassess.lint.langid import _identifier

    _identifier(bctx.guesser._langs)


def _load_model_in_thread(bctx: BankContext) -> threading.Thread:
    thread = threading.Thread(target=_load_model, args=(bctx,), daemon=True)
    thread.start()
    return thread


#: Items whose rules are run, deferring the model, to tell whether a bank needs it.
MODEL_SAMPLE = 64


def _sample_needs_model(todo: list[LoadedItem], item_rules: list[Rule], bctx: BankContext) -> bool:
    """Whether an item rule needs the language model on one of MODEL_SAMPLE items spread over
    the bank (a few milliseconds): then every worker would, and it is cheaper to load it once
    before forking than to run those rules again here. A bank where the sample does not need it
    is checked with the model deferred (see _ItemChecks), so the guess changes no finding."""
    from dpassess.lint.langid import loaded

    guesser = bctx.guesser
    if not any(r.code == "TR007" for r in item_rules) or loaded(guesser._langs):
        return False
    step = max(1, len(todo) // MODEL_SAMPLE)
    guesser.defer = True
    try:
        for e in todo[::step]:
            ctx = ItemContext(e.item, e.path, bctx)
            for r in item_rules:
                try:
                    _run(r, ctx)
                except ModelDeferred:
                    return True
    finally:
        guesser.defer = False
    return False


# The pool's workers are forked with the bank already in memory: they read it from here.
_WORK: tuple[list[LoadedItem], list[Rule], BankContext] | None = None


def _item_chunk(bounds: tuple[int, int]) -> list[Partial]:
    assert _WORK is not None
    entries, item_rules, bctx = _WORK
    return _check(entries[bounds[0] : bounds[1]], item_rules, bctx)


def _jobs(n: int, jobs: int | None) -> int:
    """Worker processes for `n` items (1: in this process)."""
    import multiprocessing
    import os

    if jobs is None:
        jobs = min(os.cpu_count() or 1, 8) if n >= PARALLEL_MIN_ITEMS else 1
    if jobs <= 1 or n < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return jobs


class _ItemChecks:
    """The item rules over `todo`, in order: in this process when `collect` is called, or in
    `jobs` forked worker processes started at once (so that this process can run the bank
    rules meanwhile).

    Each worker checks a contiguous chunk and results come back in chunk order, so findings do
    not depend on scheduling (and are sorted afterwards anyway). Workers do not load the
    language model (each would, 0.5-0.7 s): a rule that needs it is deferred, and this process
    loads the model in a thread as soon as a chunk reports one (while the other chunks run),
    then runs the deferred rules of those items.
    """

    def __init__(self, todo: list[LoadedItem], item_rules: list[Rule], bctx: BankContext, jobs: int) -> None:
        self.todo, self.item_rules, self.bctx = todo, item_rules, bctx
        self.pool: Any = None
        if jobs <= 1:
            return
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        global _WORK
        size = -(-len(todo) // (jobs * 4))
        bounds = [(i, min(i + size, len(todo))) for i in range(0, len(todo), size)]
        guesser = bctx.guesser
        _WORK = (todo, item_rules, bctx)
        guesser.defer = True
        try:
            # All workers are forked by the first submit, before the pool starts any thread.
            self.pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"))
            self.bounds = bounds
            self.futures = [self.pool.submit(_item_chunk, b) for b in bounds]
        finally:
            _WORK = None
            guesser.defer = False

    def collect(self) -> list[ItemResult]:
        locate = Locator()
        if self.pool is None:
            parts = _check(self.todo, self.item_rules, self.bctx)
            return [_complete(e, p, self.item_rules, self.bctx, locate) for e, p in zip(self.todo, parts, strict=True)]
        out: list[ItemResult] = []
        waiting: list[tuple[LoadedItem, Partial]] = []
        loading = None
        for (lo, hi), f in zip(self.bounds, self.futures, strict=True):
            chunk = f.result()
            if loading is None and any(p[2] for p in chunk):
                loading = _load_model_in_thread(self.bctx)
            waiting += zip(self.todo[lo:hi], chunk, strict=True)
            if loading is None or not loading.is_alive():  # complete while the workers go on
                out += [_complete(e, p, self.item_rules, self.bctx, locate) for e, p in waiting]
                waiting = []
        self.close()
        if loading is not None:
            loading.join()
        out += [_complete(e, p, self.item_rules, self.bctx, locate) for e, p in waiting]
        return out

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
            self.pool = None


def lint_banks(
    banks: Iterable[Bank],
    config: LintConfig | None = None,
    *,
    jobs: int | None = None,
    known: Mapping[str, ItemResult] | None = None,
    record: dict[str, ItemResult] | None = None,
) -> list[Finding]:
    """Every finding of the selected rules over `banks`, sorted by path, line, column, code.

    `jobs`: worker processes for the item rules (default: one per core for banks of
    PARALLEL_MIN_ITEMS items or more). The result does not depend on it.
    `known`: item-rule results by item file path, reused instead of checking those items again
    (the lint cache's); `record`, when given, receives every item's item-rule results.
    """
    # Lint makes no reference cycles (a bank's findings, the rules' views and memos are freed by
    # reference counting: measured, 66 cyclic objects in a 10,000-item run, from imports), so
    # the collector is paused: its full passes would traverse the whole bank for nothing, and
    # in forked workers touch, and so copy, every page of it.
    with gc_paused():
        try:
            return _lint(banks, config, jobs, known, record)
        finally:
            clear_memos()  # bounded, but not kept once lint is done


def _lint(
    banks: Iterable[Bank],
    config: LintConfig | None,
    jobs: int | None,
    known: Mapping[str, ItemResult] | None,
    record: dict[str, ItemResult] | None,
) -> list[Finding]:
    config = config or LintConfig()
    rules = config.rules()
    item_rules = [r for r in rules if r.scope == "item"]
    bank_rules = [r for r in rules if r.scope == "bank"]
    meta_rules = [r for r in rules if r.scope == "suppression"]
    ran = {r.code for r in rules if r.scope != "suppression"}
    known = known or {}
    out: list[Finding] = []
    locate = Locator()
    for bank in banks:
        bctx = BankContext(bank, config)
        entries = bank.entries
        todo = [e for e in entries if e.path not in known]
        n_jobs = _jobs(len(todo), jobs)
        if n_jobs > 1 and _sample_needs_model(todo, item_rules, bctx):
            # Loaded before the workers fork (they share it), and alone: run beside the bank
            # rules it took longer (they compete for the interpreter) and their memory added
            # to its peak (10k items: lint 5.0 -> 4.0-4.5 s, peak RSS 294 -> 260 MiB).
            _load_model(bctx)
        checks = _ItemChecks(todo, item_rules, bctx, n_jobs)
        try:
            # Bank rules do not depend on the item rules' results: they run while the workers
            # check the items.
            bank_hits = [(r, _run(r, bctx)) for r in bank_rules]
            fresh = dict(zip((e.path for e in todo), checks.collect(), strict=True))
        finally:
            checks.close()
        used: dict[str, set[str]] = {}
        suppressed = {e.item.id: {s.rule for s in e.item.suppress} for e in entries}
        for e in entries:
            found, hit_codes = known[e.path] if e.path in known else fresh[e.path]
            if record is not None:
                record[e.path] = (found, hit_codes)
            out.extend(found)
            used[e.item.id] = set(hit_codes)
        for r, hits in bank_hits:
            for hit in hits:
                if hit.item_id is not None and hit.item_id in used:
                    if r.code in suppressed[hit.item_id]:
                        used[hit.item_id].add(r.code)
                        continue
                    out.append(_finding(r, bank.path_of(hit.item_id), hit, locate))
                else:
                    out.append(_finding(r, bank.config_path or bank.root, hit, locate))
        for e in entries:
            if not e.item.suppress:
                continue
            ctx = ItemContext(e.item, e.path, bctx)
            for r in meta_rules:
                for hit in _run(r, ctx, used[e.item.id], ran):
                    out.append(_finding(r, e.path, hit, locate))
    out.sort(key=lambda f: f.sort_key)
    return out


def failing(findings: Iterable[Finding], fail_on: Severity | str = Severity.warning) -> bool:
    """True when a finding is at or above the fail level (`error` or `warning`)."""
    level = Severity(fail_on).rank
    return any(f.severity.rank >= level for f in findings)
