"""An item's content in one language -> its Markdown text fields, each with its field path."""

from __future__ import annotations

from collections.abc import Iterator
from typing import assert_never

from dpassess.model.items import (
    AnswerContent,
    ClozeContent,
    Content,
    ContentBase,
    EssayContent,
    MatchingContent,
    OrderingContent,
    StimulusContent,
)

AnyContent = (Content | AnswerContent | MatchingContent | EssayContent | OrderingContent
              | ClozeContent | StimulusContent | ContentBase)


def markdown_texts(content: AnyContent) -> Iterator[tuple[tuple[str, ...], str]]:
    """Each Markdown field of `content` (the title excepted: titles are plain text) as (path
    under `text.<lang>`, source): `("stem",)`, `("options", "a")`, `("feedback", "b")`... Accepted
    short answers are typed by students, not rendered, and are not listed."""
    if isinstance(content, StimulusContent):
        yield ("text",), content.text
        return
    yield ("stem",), content.stem
    match content:
        case Content():
            for oid, text in content.options.items():
                yield ("options", oid), text
            for oid, text in content.feedback.items():
                yield ("feedback", oid), text
        case AnswerContent():
            for aid, text in content.feedback.items():
                yield ("feedback", aid), text
        case MatchingContent():
            for pid, text in content.premises.items():
                yield ("premises", pid), text
            for rid, text in content.responses.items():
                yield ("responses", rid), text
        case EssayContent():
            if content.grader_info:
                yield ("grader_info",), content.grader_info
            if content.response_template:
                yield ("response_template",), content.response_template
        case OrderingContent():
            for oid, text in content.options.items():
                yield ("options", oid), text
        case ClozeContent():
            for gid, gap in content.gaps.items():
                for oid, text in gap.options.items():
                    yield ("gaps", gid, "options", oid), text
                for fid, text in gap.feedback.items():
                    yield ("gaps", gid, "feedback", fid), text
        case ContentBase():  # a description: the stem alone
            pass
        case _:
            assert_never(content)
    if content.explanation:
        yield ("explanation",), content.explanation
