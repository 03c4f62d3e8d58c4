"""dpassess: assessment item banks written once, checked like code, delivered to any LMS.

The library API (the CLI is a thin layer over it)::

    import dpassess
    bank = dpassess.load_bank("items/data-parallelism")
    bank.get("dp-gpu-holds").text["en"].stem
"""

__version__ = "0.1.0"

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
