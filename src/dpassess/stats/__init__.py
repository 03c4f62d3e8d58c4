"""Classical item analysis of an administration: a responses file (generic CSV, an assembled
form's answer sheet, Moodle's Responses report, Canvas's Student Analysis) -> per item
difficulty, discrimination and distractor figures with flags, and the test's reliability.

The library API (the CLI's `dpassess stats` is a thin layer over it)::

    from dpassess import load_bank
    from dpassess.stats import analyse, read_responses, render

    bank = load_bank("items/data-parallelism")
    responses = read_responses("ujian-a.csv", bank)        # ResponsesError if rows do not match
    analysis = analyse(responses)                          # Thresholds(...) to move the flags
    analysis.item("dp-gpu-holds").p
    html = render(analysis, "html", lang="id")
"""

from __future__ import annotations

from dpassess.stats.analysis import (
    FLAGS,
    Analysis,
    ItemStats,
    OptionStats,
    TestStats,
    Thresholds,
    analyse,
)
from dpassess.stats.problems import ResponsesError
from dpassess.stats.read import read_responses, sniff
from dpassess.stats.report import to_json, to_text
from dpassess.stats.report_html import to_html
from dpassess.stats.responses import Responses, Source
from dpassess.stats.scoring import Response, score

FORMATS = ("text", "json", "html")


def render(analysis: Analysis, fmt: str, lang: str = "en") -> bytes:
    """The report in `fmt` (text, json or html) as UTF-8 bytes; ValueError for another format."""
    if fmt == "text":
        return to_text(analysis, lang).encode("utf-8")
    if fmt == "json":
        return to_json(analysis).encode("utf-8")
    if fmt == "html":
        return to_html(analysis, lang)
    raise ValueError(f"no report format {fmt!r} (formats: {', '.join(FORMATS)})")


__all__ = [
    "FLAGS",
    "FORMATS",
    "Analysis",
    "ItemStats",
    "OptionStats",
    "Response",
    "Responses",
    "ResponsesError",
    "Source",
    "TestStats",
    "Thresholds",
    "analyse",
    "read_responses",
    "render",
    "score",
    "sniff",
    "to_html",
    "to_json",
    "to_text",
]
