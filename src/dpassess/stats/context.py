"""What every reader of a responses file shares: the bank, the forms' answer keys, the form to
keep, the problems found so far; and how a row's form and item are resolved."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from dpassess.model import Bank, Item
from dpassess.stats.forms import FormKey
from dpassess.stats.problems import Problems
from dpassess.stats.responses import Responses
from dpassess.stats.text import TextIndex

#: (first line, fields) of each CSV record after the header
Rows = Iterator[tuple[int, list[str]]]


@dataclass
class Context:
    """What every reader needs: the bank, the forms' keys, the form to keep, the problems."""

    bank: Bank
    problems: Problems
    responses: Responses
    keys: list[FormKey] = field(default_factory=list)
    #: the only form analysed (an id or label), None for every form
    only: str | None = None
    _by_name: dict[str, FormKey] = field(default_factory=dict)
    _orders: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    _index: TextIndex | None = None
    _options: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        labels: dict[str, list[FormKey]] = {}
        for key in self.keys:
            self._by_name[key.id] = key
            labels.setdefault(key.label, []).append(key)
            for item, order in key.positions.values():
                self._orders[(key.id, item)] = order
        for label, keys in labels.items():
            if len(keys) == 1 and label not in self._by_name:
                self._by_name[label] = keys[0]
        if self.only is not None and self.only in self._by_name:
            self.only = self._by_name[self.only].id

    def options(self, item: Item) -> tuple[str, ...]:
        """The item's option ids (remembered: the model builds them anew on every call)."""
        ids = self._options.get(item.id)
        if ids is None:
            ids = self._options[item.id] = item.choice_ids
        return ids

    @property
    def index(self) -> TextIndex:
        if self._index is None:
            self._index = TextIndex(self.bank)
        return self._index

    def form(self, raw: str, line: int) -> str | None:
        """The form a row is on (a key's id when keys are known), None to pass the row over."""
        key = None
        if self.keys:
            key = self.keys[0] if not raw and len(self.keys) == 1 else self._by_name.get(raw)
        name = key.id if key is not None else raw
        if self.only is not None and name != self.only:
            self.responses.source.only = self.only  # one form of several: recorded as that form
            self.problems.tally(("other-form", name), line, "form",
                                f"rows of form {name!r} passed over: only form {self.only!r} is "
                                "analysed")
            return None
        if self.keys and key is None:
            known = ", ".join(k.id for k in self.keys)
            self.problems.error(line, "form", f"form {raw!r} has no answer-key file (the key "
                                f"files are of {known})")
            return None
        return name

    def item(self, raw: str, form: str, line: int,
             fld: str) -> tuple[Item, tuple[str, ...] | None] | None:
        """The item a row names (an id, or a question number of its form) and the option order
        of its form, if known."""
        key = self._by_name.get(form)
        order: tuple[str, ...] | None
        if raw.isascii() and raw.isdigit():
            if key is None:
                self.problems.error(line, fld, f"question number {raw}: numbers need the form's "
                                    "answer-key file, to know which item each number is")
                return None
            entry = key.positions.get(int(raw))
            if entry is None:
                self.problems.error(line, fld, f"form {key.id} has no question {raw} (it has "
                                    f"{len(key.positions)})")
                return None
            item_id, order = entry
        else:
            item_id = raw
            order = self._orders.get((form, item_id)) if key is not None else None
            if key is not None and order is None:
                self.problems.error(line, fld, f"item {item_id!r} is not on form {key.id}")
                return None
        if item_id not in self.bank:
            self.problems.error(line, fld, f"item {item_id!r} is not in bank "
                                f"{self.bank.config.id!r}")
            return None
        return self.bank.get(item_id), order
