"""The item model. Knows no file format; imports only pydantic and the standard library."""

from dpassess.model.bank import Bank, BankConfig, GlossaryTerm, LoadedItem
from dpassess.model.items import (
    MAX_TEXT,
    SCHEMA_VERSION,
    TRUE_FALSE_WORDS,
    Bloom,
    Content,
    Difficulty,
    Item,
    ItemType,
    ItemValueError,
    Option,
    Source,
    Status,
    Suppression,
)

__all__ = [
    "MAX_TEXT",
    "SCHEMA_VERSION",
    "TRUE_FALSE_WORDS",
    "Bank",
    "BankConfig",
    "Bloom",
    "Content",
    "Difficulty",
    "GlossaryTerm",
    "Item",
    "ItemType",
    "ItemValueError",
    "LoadedItem",
    "Option",
    "Source",
    "Status",
    "Suppression",
]
