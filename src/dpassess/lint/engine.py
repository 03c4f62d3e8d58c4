"""Banks + settings -> findings: runs the selected rules, applies suppressions, adds positions."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..model import Bank
from .config import LintConfig
from .context import BankContext
from .registry import Hit, Loc, Rule, Severity
from .where import Locator


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
    except Exception as exc:  # a bug in a rule must not hide every other finding
        return [Hit((), f"internal error in rule {rule.code}: {type(exc).__name__}: {exc} "
                        "(please report this)")]


def lint_banks(banks: Iterable[Bank], config: LintConfig | None = None) -> list[Finding]:
    """Every finding of the selected rules over `banks`, sorted by path, line, column, code."""
    config = config or LintConfig()
    rules = config.rules()
    item_rules = [r for r in rules if r.scope == "item"]
    bank_rules = [r for r in rules if r.scope == "bank"]
    meta_rules = [r for r in rules if r.scope == "suppression"]
    ran = {r.code for r in rules if r.scope != "suppression"}
    out: list[Finding] = []
    locate = Locator()
    for bank in banks:
        bctx = BankContext(bank, config)
        contexts = list(bctx.items())
        used: dict[str, set[str]] = {c.item.id: set() for c in contexts}
        suppressed = {c.item.id: {s.rule for s in c.item.suppress} for c in contexts}
        for ctx in contexts:
            off, hit_codes = suppressed[ctx.item.id], used[ctx.item.id]
            for r in item_rules:
                for hit in _run(r, ctx):
                    if r.code in off:
                        hit_codes.add(r.code)
                    else:
                        out.append(_finding(r, ctx.path, hit, locate))
        for r in bank_rules:
            for hit in _run(r, bctx):
                if hit.item_id is not None and hit.item_id in used:
                    if r.code in suppressed[hit.item_id]:
                        used[hit.item_id].add(r.code)
                        continue
                    out.append(_finding(r, bank.path_of(hit.item_id), hit, locate))
                else:
                    out.append(_finding(r, bank.config_path or bank.root, hit, locate))
        for ctx in contexts:
            if not ctx.item.suppress:
                continue
            for r in meta_rules:
                for hit in _run(r, ctx, used[ctx.item.id], ran):
                    out.append(_finding(r, ctx.path, hit, locate))
    out.sort(key=lambda f: f.sort_key)
    return out


def failing(findings: Iterable[Finding], fail_on: Severity | str = Severity.warning) -> bool:
    """True when a finding is at or above the fail level (`error` or `warning`)."""
    level = Severity(fail_on).rank
    return any(f.severity.rank >= level for f in findings)
