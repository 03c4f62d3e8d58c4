"""An item's content in one language -> its Markdown text fields, each with its field path."""

from __future__ import annotations

from collections.abc import Iterator

from dpassess.model.common import Loc
from dpassess.model.items import ContentBase, StimulusContent

AnyContent = ContentBase | StimulusContent


def markdown_texts(content: AnyContent) -> Iterator[tuple[Loc, str]]:
    """Each Markdown field of `content` (the title excepted: titles are plain text) as (path
    under `text.<lang>`, source): `("stem",)`, `("options", "a")`, `("feedback", "b")`... Accepted
    short answers are typed by students, not rendered, and are not listed. The fields each item
    type adds are the ones its content class lists (`ContentBase.own_texts`)."""
    if isinstance(content, StimulusContent):
        yield ("text",), content.text
        return
    yield ("stem",), content.stem
    for path, text, markdown in content.own_texts():
        if markdown and text:
            yield path, text
    if content.explanation:
        yield ("explanation",), content.explanation
