"""The rule registry: each rule is one small function with a code, a name, a severity and a doc.

A rule is its function and its case file (tests/lint_cases/<code>.yaml): the decorator holds
its code, name and severity, and `key_risk`, the answer to "can this make a student's right
answer wrong?" that sets the severity (`error` when it can, or when the item cannot be
delivered as written; `warning` for flaws that cue or confuse; `info` for what to look at;
registration refuses a plain "Yes" on a rule that is not an error). The docstring is its
documentation page (What it does / Why is this bad / Example / Use instead); `docs.py` turns
the registry into `docs/rules/`. Codes are never reused: a retired rule is one line,

    retire("WR011", "option-length-spread", "merged into WR009 (uneven-options)")

and stays registered as removed (never run, its page says so, its code is refused to a new rule).

An item rule says once which item classes it applies to (`items=`, default: every item type),
and the engine runs it on those items only, so a new item type skips the rules that make no
sense for it (the option rules for an essay) and the function is typed for what it reads:

    @rule("ST003", "response-mix", "error", fix="...", items=(MultipleResponse,))
    def response_mix(ctx: ItemContext[MultipleResponse]) -> Iterator[Hit]: ...

Several classes go in a tuple declared with its type (`CHOICE`, or `ONE_KEY: tuple[type[
SingleChoice | TrueFalse], ...]`): mypy reads a bare literal of several as every item class.

The registry itself imports neither the item model nor a rule: `RULES` is filled by importing
the rule modules (`dpassess.lint.rules`), which the first read of `RULES` does. The settings
(`config.py`) and the reports (`report.py`) thus load no rule, and no pydantic model, when
they do not need one: `dpassess build` with nothing changed prints the stored findings and
checks the fail level without them.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar, cast, get_args, overload

from dpassess.diagnostics import FieldPath, Severity

if TYPE_CHECKING:
    from _collections_abc import dict_items, dict_keys, dict_values

    from dpassess.lint.context import BankContext, ItemContext
    from dpassess.model import ChoiceItem, Item, ItemBase
    from dpassess.runtime.records import SuppressionRecord

    #: Every item class: what an item rule applies to unless it says otherwise.
    EVERY_ITEM: tuple[type[Item], ...]
    #: The choice item classes (options and a key).
    CHOICE: tuple[type[ChoiceItem], ...]

__all__ = [
    "CHOICE", "EVERY_ITEM", "FAMILIES", "HEADINGS", "RULES", "Hit", "Rule", "Scope", "Severity",
    "bank_rule", "by_name", "retire", "rule", "suppression_rule",
]

#: Rule families: the letters of a code and what they check.
FAMILIES: dict[str, str] = {
    "ST": "Structure",
    "WR": "Item-writing flaws",
    "TR": "Translation",
    "MT": "Mathematics",
    "BK": "Bank",
    "IA": "Item analysis",
    "LM": "Target LMS",
    "SP": "Suppressions",
}


def _every_item() -> tuple[type[Item], ...]:
    from dpassess.model import ITEM_CLASSES

    return cast("tuple[type[Item], ...]", tuple(ITEM_CLASSES.values()))


def __getattr__(name: str) -> Any:
    """`EVERY_ITEM` and `CHOICE`, from the item model when first asked for (by a rule module)."""
    if name == "EVERY_ITEM":
        return _every_item()
    if name == "CHOICE":
        from dpassess.model import ChoiceItem

        return cast("tuple[type[ChoiceItem], ...]", get_args(ChoiceItem))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Hit(NamedTuple):
    """What a rule yields: where (a field path in the item file) and what is wrong.

    Bank rules also say which item (`item_id`; None for the bank file itself).
    """

    loc: FieldPath
    message: str
    help: str | None = None
    item_id: str | None = None
    #: The glossary term the finding is about (a suppression may name it).
    term: str | None = None


Scope = Literal["item", "bank", "suppression"]


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    scope: Scope
    fix: str
    check: Callable[..., Iterable[Hit]]
    doc: str
    target: str | None = None
    removed: bool = False
    #: The item classes an item rule runs on.
    items: tuple[type[ItemBase], ...] = ()
    #: "Can it make a right answer wrong?": "Yes..." or "No..." and why (sets the severity).
    key_risk: str = ""
    #: Why a removed rule was retired (and what replaces it).
    retired: str = ""

    @property
    def family(self) -> str:
        return self.code.rstrip("0123456789")

    @property
    def summary(self) -> str:
        """First paragraph of the 'What it does' section."""
        m = re.search(r"## What it does\n+(.+?)(?:\n\n|\Z)", self.doc, re.S)
        return " ".join(m.group(1).split()) if m else self.name


class _Rules(dict[str, "Rule"]):
    """Every rule by code, as registered by the rule modules, which the first read imports (a
    rule module registering itself reads it too: the import under way is not started again).
    Only the reads below are made of it."""

    def _load(self) -> None:
        global _LOADED
        if not _LOADED:
            _LOADED = True
            import dpassess.lint.rules  # noqa: F401  (registers every rule)

    def __getitem__(self, code: str) -> Rule:
        self._load()
        return super().__getitem__(code)

    def __contains__(self, code: object) -> bool:
        self._load()
        return super().__contains__(code)

    def __iter__(self) -> Iterator[str]:
        self._load()
        return super().__iter__()

    def __len__(self) -> int:
        self._load()
        return super().__len__()

    def get(self, code: str, default: Any = None) -> Any:
        self._load()
        return super().get(code, default)

    def keys(self) -> dict_keys[str, Rule]:
        self._load()
        return super().keys()

    def values(self) -> dict_values[str, Rule]:
        self._load()
        return super().values()

    def items(self) -> dict_items[str, Rule]:
        self._load()
        return super().items()


_LOADED = False
RULES: dict[str, Rule] = _Rules()
HEADINGS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead")
_CODE = re.compile(r"^[A-Z]{2}[0-9]{3}$")
_NAME = re.compile(r"^[a-z]+(?:-[a-z0-9]+)*$")

ItemT = TypeVar("ItemT", bound="Item")
F = TypeVar("F", bound=Callable[..., Iterable[Hit]])


def _check_id(code: str, name: str) -> None:
    if not _CODE.match(code) or code[:2] not in FAMILIES:
        raise ValueError(f"{code}: a code is a family ({', '.join(FAMILIES)}) and 3 digits")
    if not _NAME.match(name):
        raise ValueError(f"{code}: {name!r} is not a kebab-case name")
    if code in RULES or any(r.name == name for r in RULES.values()):
        raise ValueError(f"{code} {name}: code or name registered twice")


def _register(code: str, name: str, severity: Severity | str, fix: str, scope: Scope,
              target: str | None, items: tuple[type[ItemBase], ...] | None, key_risk: str
              ) -> Callable[[F], F]:
    """Check the rule's code, name, severity rationale and docstring, and add it to RULES."""

    def register(fn: F) -> F:
        doc = inspect.cleandoc(fn.__doc__ or "")
        _check_id(code, name)
        level = Severity(severity)
        if not key_risk.startswith(("Yes", "No")):
            raise ValueError(f"{code}: key_risk answers \"can it make a right answer wrong?\" "
                             "with Yes or No, and why")
        if key_risk.startswith("Yes") and not key_risk.startswith("Yes, but") \
                and level is not Severity.error:
            raise ValueError(f"{code}: a rule that can make a right answer wrong is an error")
        missing = [h for h in HEADINGS if h not in doc]
        if missing:
            raise ValueError(f"{code}: docstring lacks {', '.join(missing)}")
        if re.search(r"[\x00-\x09\x0b-\x1f\x7f]", fn.__doc__ or ""):
            # `\t` of `\textcolor` in a docstring that is not raw: the page would show a tab
            raise ValueError(f"{code}: docstring holds a tab or control character; write TeX in "
                             "a raw docstring (r\"\"\"...)")
        RULES[code] = Rule(code, name, level, scope, fix, fn, doc, target,
                           items=_every_item() if items is None else items,
                           key_risk=key_risk)
        return fn

    return register


def _nothing(*args: object) -> Iterable[Hit]:
    return ()


def retire(code: str, name: str, why: str) -> None:
    """Register `code` as a removed rule: it never runs, its documentation page says `why`
    (and what replaces it), and no new rule may take its code or name."""
    _check_id(code, name)
    RULES[code] = Rule(code, name, Severity.info, "item", "", _nothing, "", removed=True,
                       items=_every_item(), retired=why)


if TYPE_CHECKING:
    #: An item rule: the item's context -> what is wrong with it.
    ItemCheck = Callable[[ItemContext[ItemT]], Iterable[Hit]]
    #: A suppression rule: an item's suppressions, the indices of those that silenced a
    #: finding in this run and the codes that ran -> the suppressions that did nothing.
    SuppressionCheck = Callable[[Sequence[SuppressionRecord], set[int], set[str]], Iterable[Hit]]


@overload
def rule(code: str, name: str, severity: Severity | str, *, key_risk: str, fix: str,
         target: str | None = None) -> Callable[[ItemCheck[Item]], ItemCheck[Item]]: ...
@overload
def rule(code: str, name: str, severity: Severity | str, *, key_risk: str, fix: str,
         items: tuple[type[ItemT], ...],
         target: str | None = None) -> Callable[[ItemCheck[ItemT]], ItemCheck[ItemT]]: ...
def rule(code: str, name: str, severity: Severity | str, *, key_risk: str, fix: str,
         items: tuple[type[ItemBase], ...] | None = None,
         target: str | None = None) -> Callable[[Any], Any]:
    """Register an item rule, run on every item of the classes `items` (default: all). Its
    docstring must carry the four doc headings."""
    return _register(code, name, severity, fix, "item", target, items, key_risk)


def bank_rule(code: str, name: str, severity: Severity | str, *, key_risk: str, fix: str
              ) -> Callable[[Callable[[BankContext], Iterable[Hit]]],
                            Callable[[BankContext], Iterable[Hit]]]:
    """Register a bank rule: it reads the whole bank once (and picks the items it compares)."""
    return _register(code, name, severity, fix, "bank", None, (), key_risk)


def suppression_rule(code: str, name: str, severity: Severity | str, *, key_risk: str, fix: str
                     ) -> Callable[[SuppressionCheck], SuppressionCheck]:
    """Register a rule on an item's suppressions, given which of them silenced a finding in
    this run and the codes that ran."""
    return _register(code, name, severity, fix, "suppression", None, None, key_risk)


def by_name() -> dict[str, Rule]:
    return {r.name: r for r in RULES.values()}
