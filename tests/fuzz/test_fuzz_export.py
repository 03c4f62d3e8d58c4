"""Fuzzing the exporters: items of every type (tests/strategies.py) whose texts are replaced by
hostile text (control characters, markup, entities, the formats' own syntax, images), kept only
when the model accepts them (what `check` passes). Property: every exporter writes them in every
language or refuses with a DpassessError; the XML formats' output is well-formed XML."""

from __future__ import annotations

import io
import zipfile
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st
from lxml import etree
from pydantic import ValidationError

from dpassess.diagnostics import DpassessError
from dpassess.export import EXPORTERS, Collection
from dpassess.model import parse_item
from fuzz.hostile import hostile_text, stop_when_spent
from strategies import LANGS, any_items

TEXT_KEYS = {"title", "stem", "explanation", "options", "feedback", "premises", "responses",
             "grader_info", "response_template", "answers"}


def _replace(draw: st.DrawFn, value: Any) -> Any:
    if isinstance(value, str):
        return draw(hostile_text) if draw(st.booleans()) else value
    if isinstance(value, dict):
        return {k: _replace(draw, v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_replace(draw, v) for v in value]
    return value


@st.composite
def hostile_items(draw: st.DrawFn) -> Any:
    item = draw(any_items())
    data = item.model_dump(mode="json", by_alias=True, exclude_none=True)
    for lang, content in data["text"].items():
        data["text"][lang] = {k: (_replace(draw, v) if k in TEXT_KEYS else v)
                              for k, v in content.items()}
    try:
        return parse_item(data)
    except (ValidationError, ValueError):
        assume(False)


@given(st.lists(hostile_items(), min_size=1, max_size=6, unique_by=lambda i: i.id))
def test_exporters(items: list[Any]) -> None:
    stop_when_spent()
    coll = Collection(id="fuzz", title={lang: "Fuzz" for lang in LANGS}, languages=LANGS,
                      items=items, category="fuzz", default_language=LANGS[0])
    for name in EXPORTERS:
        for lang in (*LANGS, "multi"):
            try:
                result = EXPORTERS[name].export(coll, lang)
            except DpassessError:
                continue
            if name == "moodle-xml":
                etree.fromstring(result.data)
            elif name == "qti21":
                with zipfile.ZipFile(io.BytesIO(result.data)) as z:
                    for entry in z.namelist():
                        if entry.endswith(".xml"):
                            etree.fromstring(z.read(entry))
