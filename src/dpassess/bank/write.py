"""Model -> YAML item files (the bank format), for importers and tools that create items."""

from __future__ import annotations

from typing import Any

import yaml

from dpassess.model import ChoiceBase, Item, MultipleResponse, Stimulus

HEADER = "# yaml-language-server: $schema=../../docs/schema/item.schema.json\n"

_Dumper: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _ItemDumper(_Dumper):  # type: ignore[misc]
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    # Literal blocks keep multi-line Markdown readable; libyaml falls back to quoting when a
    # literal block cannot represent the string exactly (trailing spaces, control characters).
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_ItemDumper.add_representer(str, _str)


#: The order of fields in an item file (fields of any type; a type has some of them).
FIELD_ORDER = (
    "schema", "id", "type", "topic", "difficulty", "p_value", "bloom", "points", "tags", "status",
    "enemies", "symbols", "stimulus", "shuffle", "options", "key", "weights", "answers",
    "units", "unit_penalty", "case_sensitive", "pairs", "distractors", "grading",
    "response_format", "response_required", "lines", "min_words", "max_words", "text",
    "source", "lms", "suppress",
)

#: The order of the fields of one language's text.
TEXT_ORDER = (
    "title", "stem", "text", "options", "premises", "responses", "answers", "feedback",
    "explanation", "grader_info", "response_template",
)


def item_to_data(item: Item | Stimulus) -> dict[str, Any]:
    """Plain data for an item file: defaults left out, options as ids when none is locked."""
    data = item.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data = {"schema": item.schema_version, **data}
    if isinstance(item, ChoiceBase):
        if "options" in data:  # a true/false item's [true, false] is its default
            data["options"] = [o["id"] if set(o) == {"id"} else o for o in data["options"]]
        if len(item.key) == 1 and not isinstance(item, MultipleResponse):
            data["key"] = item.key[0]
    for lang, content in data.get("text", {}).items():
        data["text"][lang] = _ordered(content, TEXT_ORDER)
    return _ordered(data, FIELD_ORDER)


def _ordered(data: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    rank = {name: i for i, name in enumerate(order)}
    return dict(sorted(data.items(), key=lambda kv: rank.get(kv[0], len(rank))))


def item_to_yaml(item: Item | Stimulus, *, header: str = HEADER) -> str:
    """The YAML text of an item file, header line included."""
    body: str = yaml.dump(
        item_to_data(item),
        Dumper=_ItemDumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
    )
    return header + body
