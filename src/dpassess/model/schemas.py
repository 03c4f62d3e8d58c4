"""JSON Schemas of the files users write (item, bank, blueprint), for editors and CI."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter


def json_schema(kind: str) -> dict[str, Any]:
    if kind == "item":
        from dpassess.model import Item as model
    elif kind == "bank":
        from dpassess.model import BankConfig as model
    elif kind == "blueprint":
        from dpassess.model.blueprint import Blueprint as model
    else:  # pragma: no cover - the CLI checks
        raise ValueError(kind)
    schema = TypeAdapter(model).json_schema(by_alias=True, mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://dpassess.invalid/schema/{kind}.schema.json"
    return schema
