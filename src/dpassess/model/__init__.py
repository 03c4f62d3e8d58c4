"""The item model. Knows no file format; imports only pydantic and the standard library.

`Item` is the union of the item types (`SingleChoice`, `MultipleResponse`, `TrueFalse`), told
apart by `type`; `parse_item` validates raw data into the right one.
"""

from dpassess.model.bank import Bank, BankConfig, GlossaryTerm, LoadedItem
from dpassess.model.common import (
    MAX_TEXT,
    SCHEMA_VERSION,
    Bloom,
    Difficulty,
    ItemValueError,
    Loc,
    Status,
)
from dpassess.model.items import (
    ITEM_CLASSES,
    TRUE_FALSE_IDS,
    TRUE_FALSE_WORDS,
    ChoiceBase,
    ChoiceItem,
    Content,
    ContentBase,
    Item,
    ItemBase,
    ItemType,
    MultipleResponse,
    Option,
    SingleChoice,
    Source,
    Suppression,
    TrueFalse,
    UnknownItemType,
    item_class,
    parse_item,
)

__all__ = [
    "ITEM_CLASSES",
    "MAX_TEXT",
    "SCHEMA_VERSION",
    "TRUE_FALSE_IDS",
    "TRUE_FALSE_WORDS",
    "Bank",
    "BankConfig",
    "Bloom",
    "ChoiceBase",
    "ChoiceItem",
    "Content",
    "ContentBase",
    "Difficulty",
    "GlossaryTerm",
    "Item",
    "ItemBase",
    "ItemType",
    "ItemValueError",
    "LoadedItem",
    "Loc",
    "MultipleResponse",
    "Option",
    "SingleChoice",
    "Source",
    "Status",
    "Suppression",
    "TrueFalse",
    "UnknownItemType",
    "item_class",
    "parse_item",
]
