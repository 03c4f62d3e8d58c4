"""dpassess: assessment item banks written once, checked like code, delivered to any LMS.

The library API (the CLI is a thin layer over it)::

    import dpassess
    bank = dpassess.load_bank("items/data-parallelism")
    bank.get("dp-gpu-holds").text["en"].stem

The names below are imported on first use (PEP 562), so `import dpassess` and
`dpassess --version` do not load the model or the loader.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

if TYPE_CHECKING:
    from dpassess.bank.load import find_banks, load_bank, load_banks
    from dpassess.diagnostics import BankLoadError, Diagnostic, DpassessError, Severity, UsageError
    from dpassess.model import (
        Bank,
        BankConfig,
        Item,
        ItemBase,
        ItemType,
        MultipleResponse,
        SingleChoice,
        TrueFalse,
        parse_item,
    )

#: Where each public name lives.
_HOME = {
    "find_banks": "dpassess.bank.load",
    "load_bank": "dpassess.bank.load",
    "load_banks": "dpassess.bank.load",
    **dict.fromkeys(
        ("BankLoadError", "Diagnostic", "DpassessError", "Severity", "UsageError"),
        "dpassess.diagnostics",
    ),
    **dict.fromkeys(
        ("Bank", "BankConfig", "Item", "ItemBase", "ItemType", "MultipleResponse",
         "SingleChoice", "TrueFalse", "parse_item"),
        "dpassess.model",
    ),
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'dpassess' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME])


__all__ = [
    "Bank",
    "BankConfig",
    "BankLoadError",
    "Diagnostic",
    "DpassessError",
    "Item",
    "ItemBase",
    "ItemType",
    "MultipleResponse",
    "Severity",
    "SingleChoice",
    "TrueFalse",
    "UsageError",
    "__version__",
    "find_banks",
    "load_bank",
    "load_banks",
    "parse_item",
]
