"""Banks + settings -> findings: runs the selected rules, applies suppressions, adds positions.

A finding is a `Diagnostic` whose code and name are the rule's, with the rule's fix as `help`
(unless the hit brings its own) and `path:line:col` of the field in the item file.

Item rules run on the items of the classes they apply to (`Rule.items`), in this process for a
small bank, else in the worker processes of `dpassess.runtime.parallel.Pool`, started before the
bank rules run here. Forked workers do not load the language model (each would, 0.5-0.7 s): a
rule that needs it is deferred, and this process loads the model in a thread as soon as a chunk
reports one (while the other chunks run), then runs the deferred rules of those items.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple, Protocol

from dpassess.bank.positions import Locator
from dpassess.diagnostics import Diagnostic, format_field
from dpassess.lint.config import LintConfig
from dpassess.lint.config import failing as failing
from dpassess.lint.context import BankContext, ItemContext
from dpassess.lint.langid import ModelDeferred
from dpassess.lint.registry import Hit, Rule
from dpassess.lint.text import clear_memos
from dpassess.model import Bank, Item, LoadedItem
from dpassess.runtime.gcpause import gc_paused
from dpassess.runtime.parallel import Pool, chunks, worker_count
from dpassess.runtime.records import ItemFeatures

#: Below this many items a process pool for the item rules costs more than it saves.
PARALLEL_MIN_ITEMS = 2000

#: Items whose rules are run, deferring the model, to tell whether a bank needs it.
MODEL_SAMPLE = 64

#: The rule that reads the language model (TR007 wrong-language).
MODEL_RULE = "TR007"

#: What one item's item rules produced: its findings and the indices (in `item.suppress`) of
#: the suppressions that silenced one.
ItemResult = tuple[list[Diagnostic], set[int]]


class Checked(NamedTuple):
    """One item's item-rule results, perhaps without the rules deferred for the language model
    (`deferred`: each such rule's index in the item's rule list, and where its findings go)."""

    found: list[Diagnostic]
    used: set[int]
    deferred: list[tuple[int, int]]


def _diagnostic(rule: Rule, path: str, hit: Hit, locate: Locator) -> Diagnostic:
    line, col = locate(path, hit.loc)
    return Diagnostic(path, line, col, format_field(hit.loc), hit.message, rule.code,
                      rule.severity, hit.help or rule.fix, rule.name)


def _run(rule: Rule, *args: object) -> list[Hit]:
    """The rule's hits; a rule that fails reports the failure as its own finding."""
    try:
        return list(rule.check(*args))
    except ModelDeferred:
        raise
    except Exception as exc:  # a bug in a rule must not hide every other finding
        return [_failure(rule, exc)]


def _failure(rule: Rule, exc: Exception) -> Hit:
    """A rule's failure, reported as its own finding."""
    return Hit((), f"internal error in rule {rule.code}: {type(exc).__name__}: {exc} "
                   "(please report this)")


class ItemRules:
    """The selected item rules, and for each item class those that apply to it (in code
    order)."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        self.all = [r for r in rules if r.scope == "item"]
        self._by_class: dict[type, list[Rule]] = {}

    def of(self, item: Item) -> list[Rule]:
        cls = type(item)
        rules = self._by_class.get(cls)
        if rules is None:
            rules = self._by_class[cls] = [r for r in self.all if issubclass(cls, r.items)]
        return rules


class _Suppression(Protocol):
    """An entry of an item's `suppress` list: the model's, or the lint cache's record of it."""

    @property
    def rule(self) -> str: ...
    def covers(self, rule: str, field: str, term: str | None = None) -> bool: ...


def _silencer(suppress: Sequence[_Suppression], code: str, hit: Hit) -> int | None:
    """The index of the first suppression that covers `hit` of rule `code`, if any."""
    field = None
    for j, sup in enumerate(suppress):
        if sup.rule != code:
            continue
        if field is None:
            field = format_field(hit.loc)
        if sup.covers(code, field, hit.term):
            return j
    return None


def _apply(rule: Rule, ctx: ItemContext[Item], off: set[str], used: set[int],
           locate: Locator) -> list[Diagnostic]:
    return _found(rule, ctx, _run(rule, ctx), off, used, locate)


def _found(rule: Rule, ctx: ItemContext[Item], hits: list[Hit], off: set[str], used: set[int],
           locate: Locator) -> list[Diagnostic]:
    """The findings of `hits` of `rule` on `ctx`'s item, but for those a suppression silences
    (whose index goes to `used`)."""
    new = []
    for hit in hits:
        j = _silencer(ctx.item.suppress, rule.code, hit) if rule.code in off else None
        if j is None:
            new.append(_diagnostic(rule, ctx.path, hit, locate))
        else:
            used.add(j)
    return new


def _check_item(ctx: ItemContext[Item], rules: list[Rule], locate: Locator) -> Checked:
    off = {s.rule for s in ctx.item.suppress}
    found: list[Diagnostic] = []
    used: set[int] = set()
    deferred: list[tuple[int, int]] = []
    for i, r in enumerate(rules):
        # `_apply` inlined: most of the ~40 rules an item gets find nothing, and two calls
        # per rule and item were a tenth of the cost of those rules.
        try:
            hits = list(r.check(ctx))
        except ModelDeferred:
            deferred.append((i, len(found)))
            continue
        except Exception as exc:  # as `_run`
            hits = [_failure(r, exc)]
        if hits:
            found += _found(r, ctx, hits, off, used, locate)
    return Checked(found, used, deferred)


#: What every worker shares: the items to check, the rules and the bank's context.
Shared = tuple[list[LoadedItem], ItemRules, BankContext]


def _check_span(shared: Shared, span: range) -> list[Checked]:
    """The item rules over `todo[span]`, in order (a worker's task). Each item's context (and
    the text derived from it) lives only while that item is checked."""
    todo, rules, bctx = shared
    locate = Locator()
    out = []
    for e in todo[span.start:span.stop]:
        ctx: ItemContext[Item] = ItemContext(e.item, e.path, bctx)
        out.append(_check_item(ctx, rules.of(e.item), locate))
        ctx.release()
    return out


def _complete(e: LoadedItem, checked: Checked, rules: ItemRules, bctx: BankContext,
              locate: Locator) -> ItemResult:
    """The item's result with its deferred rules run here, their findings where they would
    have been."""
    found, used, deferred = checked
    if deferred:
        ctx: ItemContext[Item] = ItemContext(e.item, e.path, bctx)
        off = {s.rule for s in e.item.suppress}
        item_rules = rules.of(e.item)
        for i, at in reversed(deferred):
            found[at:at] = _apply(item_rules[i], ctx, off, used, locate)
        ctx.release()
    return found, used


def _sample_needs_model(todo: list[LoadedItem], rules: ItemRules, bctx: BankContext) -> bool:
    """Whether an item rule needs the language model on one of MODEL_SAMPLE items spread over
    the bank (a few milliseconds): then every worker would, and it is cheaper to load it once
    before forking than to run those rules again here. A bank where the sample does not need it
    is checked with the model deferred, so the guess changes no finding."""
    guesser = bctx.guesser
    if not any(r.code == MODEL_RULE for r in rules.all) or guesser.model_loaded:
        return False
    step = max(1, len(todo) // MODEL_SAMPLE)
    guesser.defer = True
    try:
        for e in todo[::step]:
            ctx: ItemContext[Item] = ItemContext(e.item, e.path, bctx)
            for r in rules.of(e.item):
                try:
                    _run(r, ctx)
                except ModelDeferred:
                    return True
    finally:
        guesser.defer = False
    return False


def _start(todo: list[LoadedItem], rules: ItemRules, bctx: BankContext, jobs: int | None
           ) -> Pool[Shared, range, list[Checked]]:
    """The item checks of `todo`, in worker processes started now when the bank is large
    enough (their rules defer the language model), else run in this process as the results
    are read."""
    n_jobs = worker_count(len(todo), PARALLEL_MIN_ITEMS, jobs, tasks=len(todo))
    if n_jobs > 1 and _sample_needs_model(todo, rules, bctx):
        # Loaded before the workers fork (they share it), and alone: run beside the bank
        # rules it took longer (they compete for the interpreter) and their memory added
        # to its peak (10k items: lint 5.0 -> 4.0-4.5 s, peak RSS 294 -> 260 MiB).
        bctx.guesser.load_model()
    guesser = bctx.guesser
    guesser.defer = n_jobs > 1  # what the forked workers inherit
    try:
        return Pool(_check_span, (todo, rules, bctx), chunks(len(todo), n_jobs), n_jobs)
    finally:
        guesser.defer = False


def _results(pool: Pool[Shared, range, list[Checked]], todo: list[LoadedItem], rules: ItemRules,
             bctx: BankContext) -> Iterator[ItemResult]:
    """Every item's result, in order; deferred rules run here once the model is loaded (in a
    thread, while the workers go on; items are completed meanwhile until one needs it)."""
    locate = Locator()
    waiting: list[tuple[LoadedItem, Checked]] = []
    loading: threading.Thread | None = None
    done = 0
    for checked in pool:
        entries = todo[done:done + len(checked)]
        done += len(checked)
        if loading is None and any(c.deferred for c in checked):
            loading = threading.Thread(target=bctx.guesser.load_model, daemon=True)
            loading.start()
        waiting += zip(entries, checked, strict=True)
        if loading is None or not loading.is_alive():
            for e, c in waiting:
                yield _complete(e, c, rules, bctx, locate)
            waiting = []
    pool.close()
    if loading is not None:
        loading.join()
    for e, c in waiting:
        yield _complete(e, c, rules, bctx, locate)


def lint_banks(
    banks: Iterable[Bank],
    config: LintConfig | None = None,
    *,
    jobs: int | None = None,
    known: Mapping[str, ItemResult] | None = None,
    record: dict[str, ItemResult] | None = None,
) -> list[Diagnostic]:
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
            return _lint(banks, config or LintConfig(), jobs, known or {}, record)
        finally:
            clear_memos()  # bounded, but not kept once lint is done


def _lint(
    banks: Iterable[Bank],
    config: LintConfig,
    jobs: int | None,
    known: Mapping[str, ItemResult],
    record: dict[str, ItemResult] | None,
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for bank in banks:
        bctx = BankContext(bank, config)
        out += lint_bank(bctx, [e.path for e in bank.entries], jobs=jobs, known=known,
                         record=record)
    out.sort(key=lambda f: f.sort_key)
    return out


def lint_bank(
    bctx: BankContext,
    paths: Sequence[str],
    *,
    jobs: int | None = None,
    known: Mapping[str, ItemResult] | None = None,
    record: dict[str, ItemResult] | None = None,
    kept_hits: Mapping[str, list[Hit]] | None = None,
    hits_out: dict[str, list[Hit]] | None = None,
) -> list[Diagnostic]:
    """Every finding of the bank `bctx`, whose items are in the files `paths` (every item, in
    authoring order, as `bctx.features`): the item rules run on the bank's entries whose path
    is not in `known` (`bctx.bank.entries` may hold only those), the bank rules on the
    features of every item, but for those whose hits are in `kept_hits` (by rule code: the
    lint cache's, found in the same features). `hits_out`, when given, receives each bank rule's
    hits. Unsorted; the collector is the caller's (see `lint_banks`)."""
    kept_hits = kept_hits or {}
    known = known or {}
    config = bctx.config
    rules = config.rules()
    item_rules = ItemRules(rules)
    bank_rules = [r for r in rules if r.scope == "bank"]
    meta_rules = [r for r in rules if r.scope == "suppression"]
    ran = {r.code for r in rules if r.scope != "suppression"}
    out: list[Diagnostic] = []
    locate = Locator()
    bank = bctx.bank
    todo = [e for e in bank.entries if e.path not in known]
    with _start(todo, item_rules, bctx, jobs) as pool:
        # Bank rules do not depend on the item rules' results: they run while the workers
        # check the items.
        bank_hits = [(r, kept_hits[r.code] if r.code in kept_hits else _run(r, bctx))
                     for r in bank_rules]
        if hits_out is not None:
            hits_out.update((r.code, h) for r, h in bank_hits)
        fresh = dict(zip((e.path for e in todo), _results(pool, todo, item_rules, bctx),
                         strict=True))
    used: dict[str, set[int]] = {}
    items: dict[str, tuple[str, ItemFeatures]] = {}
    for path, f in zip(paths, bctx.features, strict=True):
        found, silenced = known[path] if path in known else fresh[path]
        if record is not None:
            record[path] = (found, silenced)
        out.extend(found)
        used[f.id] = set(silenced)
        items[f.id] = (path, f)
    for r, hits in bank_hits:
        for hit in hits:
            if hit.item_id is not None and hit.item_id in used:
                path, f = items[hit.item_id]
                j = _silencer(f.suppress, r.code, hit)
                if j is not None:
                    used[hit.item_id].add(j)
                    continue
                out.append(_diagnostic(r, path, hit, locate))
            else:
                out.append(_diagnostic(r, bank.config_path or str(bank.root), hit, locate))
    for path, f in items.values():
        if not f.suppress:
            continue
        for r in meta_rules:
            for hit in _run(r, f.suppress, used[f.id], ran):
                out.append(_diagnostic(r, path, hit, locate))
    return out


