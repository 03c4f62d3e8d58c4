"""JSON Schemas of the files users write (item, bank, blueprint), for editors and CI."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter


def json_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of one kind of file: `item` (an item or a stimulus file), `bank`,
    `blueprint`; it accepts what the loader accepts, shorthands included."""
    from dpassess.model import BankConfig, Item, Stimulus
    from dpassess.model.blueprint import Blueprint

    models: dict[str, Any] = {"item": Item | Stimulus, "bank": BankConfig,
                              "blueprint": Blueprint}
    if kind not in models:  # pragma: no cover - the CLI checks
        raise ValueError(kind)
    model = models[kind]
    schema = TypeAdapter(model).json_schema(by_alias=True, mode="validation")
    if kind == "item":
        _choice_shorthands(schema)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://dpassess.invalid/schema/{kind}.schema.json"
    return schema


def _choice_shorthands(schema: dict[str, Any]) -> None:
    """What a choice item's `_normalise` accepts, said in the schema: an option written as its
    id (`options: [a, b]`) and a single key written as the id itself (`key: a`)."""
    for definition in schema.get("$defs", {}).values():
        props = definition.get("properties", {})
        if not ("options" in props and "key" in props and "items" in props["key"]):
            continue
        option_id = props["key"]["items"]
        options = props["options"]
        if "items" in options and "$ref" in options["items"]:
            options["items"] = {"anyOf": [options["items"], option_id]}
        key = props["key"]
        props["key"] = {"anyOf": [{k: v for k, v in key.items() if k not in ("description",
                                                                            "title")},
                                  option_id],
                        **{k: key[k] for k in ("description", "title") if k in key}}
