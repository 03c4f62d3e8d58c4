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

import importlib
import json
from typing import TYPE_CHECKING, Any

from dpassess.stats.analysis import (
    FLAGS,
    Analysis,
    ItemStats,
    OptionStats,
    TestStats,
    Thresholds,
    analyse,
    analyse_forms,
)
from dpassess.stats.problems import ResponsesError
from dpassess.stats.responses import Responses, Source
from dpassess.stats.scoring import Response, score

if TYPE_CHECKING:
    from dpassess.stats.read import read_responses, sniff
    from dpassess.stats.report import to_json, to_text
    from dpassess.stats.report_html import to_html

#: Names imported when first asked for: the readers and the reports (lxml's HTML builder) are
#: not loaded by what only needs the analysis or the records (lint's statistics rules).
_LAZY = {"read_responses": "dpassess.stats.read", "sniff": "dpassess.stats.read",
         "to_json": "dpassess.stats.report", "to_text": "dpassess.stats.report",
         "to_html": "dpassess.stats.report_html"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


FORMATS = ("text", "json", "html", "moodle", "anates")


def render(analysis: Analysis, fmt: str, lang: str = "en") -> bytes:
    """The report in `fmt` (text, json, html; moodle: the figures under the names of Moodle's
    Statistics report; anates: the printable Indonesian item-analysis report with a decision per
    item) as UTF-8 bytes; ValueError for another format."""
    from dpassess.stats.report import to_json, to_moodle, to_text
    from dpassess.stats.report_anates import to_anates
    from dpassess.stats.report_html import to_html

    if fmt == "text":
        return to_text(analysis, lang).encode("utf-8")
    if fmt == "json":
        return to_json(analysis).encode("utf-8")
    if fmt == "html":
        return to_html(analysis, lang)
    if fmt == "moodle":
        return to_moodle(analysis, lang).encode("utf-8")
    if fmt == "anates":
        return to_anates([analysis])
    raise ValueError(f"no report format {fmt!r} (formats: {', '.join(FORMATS)})")


def render_many(analyses: list[Analysis], fmt: str, lang: str = "en") -> bytes:
    """The report of the administrations of one file (`analyse_forms`): one analysis renders as
    `render` does; several (one per form) as the text reports one after the other, a JSON
    object `{"forms": [...]}`, or one HTML page with a part per form."""
    from dpassess.stats.report import to_moodle, to_text
    from dpassess.stats.report_anates import to_anates
    from dpassess.stats.report_html import to_html_many

    if len(analyses) == 1:
        return render(analyses[0], fmt, lang)
    if fmt == "text":
        return "\n".join(to_text(a, lang) for a in analyses).encode("utf-8")
    if fmt == "json":
        data = {"forms": [a.to_dict() for a in analyses]}
        return (json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()
    if fmt == "html":
        return to_html_many(analyses, lang)
    if fmt == "moodle":
        return "\n".join(to_moodle(a, lang) for a in analyses).encode("utf-8")
    if fmt == "anates":
        return to_anates(analyses)
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
    "analyse_forms",
    "read_responses",
    "render",
    "render_many",
    "score",
    "sniff",
    "to_html",
    "to_json",
    "to_text",
]
