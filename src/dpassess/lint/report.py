"""Findings -> text for people, JSON for scripts, SARIF 2.1.0 for code scanning, GitHub annotations.

A finding is a `Diagnostic` from the lint engine (code and name of its rule, `help` its fix).
Every format is deterministic: same findings, same bytes.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from dpassess import __version__
from dpassess.diagnostics import Diagnostic, Severity, UsageError, visible
from dpassess.lint.registry import FAMILIES, RULES

JSON_VERSION = 1


def _counts(findings: Sequence[Diagnostic]) -> dict[str, int]:
    c = Counter(f.severity.value for f in findings)
    return {s.value: c.get(s.value, 0) for s in Severity}


#: Bidirectional controls and line separators as JSON escapes: the same JSON value, but a
#: terminal or viewer showing the file does not reorder or break its lines.
_JSON_UNSAFE = re.compile("[\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\x7f-\x9f]")


def _json_text(doc: object) -> str:
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text) + "\n"


def format_text(findings: Sequence[Diagnostic]) -> str:
    lines = []
    for f in findings:
        lines.append(f"{visible(f.path)}:{f.line}:{f.col}: {f.code} {visible(f.message)}")
        lines.append(f"  help: {visible(f.help)}")
    if findings:
        c = _counts(findings)
        parts = [f"{n} {s}{'s' if n != 1 and s != 'info' else ''}" for s, n in c.items() if n]
        lines.append(f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''} "
                     f"({', '.join(parts)}).")
    else:
        lines.append("All checks passed.")
    return "\n".join(lines) + "\n"


def format_json(findings: Sequence[Diagnostic]) -> str:
    doc = {
        "version": JSON_VERSION,
        "tool": {"name": "dpassess", "version": __version__},
        "summary": _counts(findings),
        "findings": [
            {
                "code": f.code,
                "name": f.name,
                "severity": f.severity.value,
                "path": f.path,
                "line": f.line,
                "col": f.col,
                "field": f.field,
                "message": f.message,
                "help": f.help,
            }
            for f in findings
        ],
    }
    return _json_text(doc)


_SARIF_LEVEL = {Severity.error: "error", Severity.warning: "warning", Severity.info: "note"}


def _uri(path: str) -> str:
    """A relative POSIX URI for a path under the working folder, else a file: URI; every
    character but the unreserved ones and `/` percent-encoded (RFC 3986, of the UTF-8 bytes)."""
    p = Path(path)
    if p.is_absolute():
        try:
            p = p.relative_to(Path.cwd())
        except ValueError:
            return p.as_uri()
    posix = str(PurePosixPath(*p.parts)) if os.sep != "/" else p.as_posix()
    return quote(posix, safe="/", errors="surrogateescape")


def _artifact(path: str) -> dict[str, str]:
    """A relative URI against %SRCROOT% (where code scanning checks out the repository); an
    absolute file: URI stands alone (SARIF 2.1.0 §3.4.3: no uriBaseId with an absolute URI)."""
    uri = _uri(path)
    return {"uri": uri} if uri.startswith("file:") else {"uri": uri, "uriBaseId": "%SRCROOT%"}


def format_sarif(findings: Sequence[Diagnostic]) -> str:
    codes = sorted(RULES)
    index = {c: i for i, c in enumerate(codes)}
    rules = []
    for c in codes:
        r = RULES[c]
        rules.append({
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.summary},
            "fullDescription": {"text": r.summary},
            "help": {"text": r.fix, "markdown": r.doc},
            "defaultConfiguration": {"level": _SARIF_LEVEL[r.severity]},
            "properties": {"tags": [FAMILIES[r.family]], "family": r.family},
        })
    results = []
    for f in findings:
        location: dict[str, Any] = {"physicalLocation": {
            "artifactLocation": _artifact(f.path),
            "region": {"startLine": f.line, "startColumn": f.col},
        }}
        if f.field:
            location["logicalLocations"] = [{"fullyQualifiedName": f.field}]
        results.append({
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f"{visible(f.message)}\nhelp: {visible(f.help)}"},
            "locations": [location],
        })
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "dpassess",
                "version": __version__,
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    return _json_text(doc)


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


_GITHUB_LEVEL = {Severity.error: "error", Severity.warning: "warning", Severity.info: "notice"}


def github_line(d: Diagnostic) -> str:
    """One diagnostic (a finding, or a load error without code or help) as one GitHub Actions
    workflow command, `::error file=...,line=...::message`, every value escaped as the runner
    unescapes it (`%`, CR and LF everywhere; `:` and `,` in properties): nothing in a path or
    message can end the line or start another command; control and bidirectional characters
    are written as escapes (`\\x1b`, `\\u202e`, `visible`)."""
    props = [("file", visible(d.path, keep_breaks=True))] if d.path else []
    if d.line:
        props += [("line", str(d.line)), ("col", str(d.col))]
    title = " ".join(p for p in (d.code, d.name) if p)
    if title:
        props.append(("title", title))
    body = (visible(d.message, keep_breaks=True)
            + (f"\nhelp: {visible(d.help, keep_breaks=True)}" if d.help else ""))
    head = ",".join(f"{k}={_escape_property(v)}" for k, v in props)
    return f"::{_GITHUB_LEVEL[d.severity]}{' ' + head if head else ''}::{_escape_data(body)}"


def format_github(findings: Sequence[Diagnostic]) -> str:
    """GitHub Actions workflow commands: one `::error file=...::message` line per finding."""
    return "".join(github_line(f) + "\n" for f in findings)


FORMATS: dict[str, Callable[[Sequence[Diagnostic]], str]] = {
    "text": format_text,
    "json": format_json,
    "sarif": format_sarif,
    "github": format_github,
}


def format_findings(findings: Sequence[Diagnostic], fmt: str = "text") -> str:
    """Diagnostics in one of FORMATS (text, json, sarif, github)."""
    try:
        return FORMATS[fmt](findings)
    except KeyError:
        raise UsageError(f"format {fmt!r}: choose one of {', '.join(FORMATS)}") from None
