"""JSON Schemas of the files users write (item, bank, blueprint), for editors and CI."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter


def json_schema(kind: str) -> dict[str, Any]:
    from dpassess.model import BankConfig, Item
    from dpassess.model.blueprint import Blueprint

    models: dict[str, Any] = {"item": Item, "bank": BankConfig, "blueprint": Blueprint}
    if kind not in models:  # pragma: no cover - the CLI checks
        raise ValueError(kind)
    model = models[kind]
    schema = TypeAdapter(model).json_schema(by_alias=True, mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://dpassess.invalid/schema/{kind}.schema.json"
    return schema
