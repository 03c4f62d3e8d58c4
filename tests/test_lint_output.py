"""Lint reports: JSON against the published schema, SARIF against the official 2.1.0 schema,
GitHub workflow commands with their escaping, and the text format."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from conftest import ROOT
from dpassess.bank.load import load_banks
from dpassess.diagnostics import Diagnostic, Severity, UsageError
from dpassess.lint import format_findings, lint_banks
from dpassess.lint.report import _escape_data, _escape_property

ORIGINAL = ROOT / "tests" / "fixtures" / "seed-original"


@pytest.fixture(scope="module")
def findings() -> list[Diagnostic]:
    return lint_banks(load_banks([ORIGINAL]))


def _hostile() -> Diagnostic:
    return Diagnostic(
        "a dir/with,comma:and%/x.yaml", 3, 5, "text.en.options.b", "100% sure: a,b\nnext line\r",
        "WR001", Severity.warning, "fix: it, now", "key-is-longest",
    )


def test_json_validates_against_published_schema(findings: list[Diagnostic]) -> None:
    schema = json.loads((ROOT / "docs" / "lint-output.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    for fs in (findings, [], [_hostile()]):
        doc = json.loads(format_findings(fs, "json"))
        jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)
        assert len(doc["findings"]) == len(fs)
        assert sum(doc["summary"].values()) == len(fs)


def test_sarif_validates_against_official_schema(findings: list[Diagnostic]) -> None:
    schema = json.loads(
        (ROOT / "tests" / "schemas" / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8")
    )
    checker = jsonschema.FormatChecker()
    for fs in (findings, [], [_hostile()]):
        doc = json.loads(format_findings(fs, "sarif"))
        jsonschema.validate(doc, schema, cls=jsonschema.Draft4Validator, format_checker=checker)
        run = doc["runs"][0]
        rules = run["tool"]["driver"]["rules"]
        for res in run["results"]:
            assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
            assert res["level"] in ("error", "warning", "note")
    doc = json.loads(format_findings(findings, "sarif"))
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"]}
    assert all(not u.startswith("/") for u in uris)


# ::error file=...,line=...,col=...,title=...::message  (one line; properties escaped)
GITHUB = re.compile(
    r"^::(error|warning|notice) file=([^,:\r\n]*),line=(\d+),col=(\d+),title=([^,:\r\n]*)::([^\r\n]*)$"
)


def test_github_annotations_match_workflow_command_syntax(findings: list[Diagnostic]) -> None:
    out = format_findings([*findings, _hostile()], "github")
    lines = out.splitlines()
    assert len(lines) == len(findings) + 1
    for line in lines:
        assert GITHUB.match(line), line
    last = GITHUB.match(lines[-1])
    assert last is not None
    assert last.group(2) == "a dir/with%2Ccomma%3Aand%25/x.yaml"
    assert last.group(6).startswith("100%25 sure: a,b%0Anext line%0D")


def test_github_escaping_rules() -> None:
    assert _escape_data("50% a\r\nb") == "50%25 a%0D%0Ab"
    assert _escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_text_format_has_position_code_and_help(findings: list[Diagnostic]) -> None:
    out = format_findings(findings, "text").splitlines()
    assert re.match(r"^\S.*:\d+:\d+: [A-Z]{2}\d{3} .+", out[0])
    assert out[1].startswith("  help: ")
    assert out[-1].startswith("Found ")
    assert format_findings([], "text") == "All checks passed.\n"


def test_formats_are_deterministic(findings: list[Diagnostic]) -> None:
    again = lint_banks(load_banks([ORIGINAL]))
    for fmt in ("text", "json", "sarif", "github"):
        assert format_findings(findings, fmt) == format_findings(again, fmt)


def test_unknown_format_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="format 'xml': choose one of text, json, sarif, github"):
        format_findings([], "xml")


def test_sarif_path_outside_the_working_folder_is_an_absolute_uri_alone(tmp_path) -> None:
    """A relative URI is resolved against %SRCROOT%; an absolute file: URI carries no base."""
    outside = Diagnostic(str(tmp_path / "x.yaml"), 1, 1, "", "m", "WR001", Severity.warning, "h",
                         "key-is-longest")
    inside = Diagnostic("items/x.yaml", 1, 1, "", "m", "WR001", Severity.warning, "h",
                        "key-is-longest")
    locs = [r["locations"][0]["physicalLocation"]["artifactLocation"]
            for r in json.loads(format_findings([outside, inside], "sarif"))["runs"][0]["results"]]
    assert {"uri": "items/x.yaml", "uriBaseId": "%SRCROOT%"} in locs
    assert {"uri": (tmp_path / "x.yaml").as_uri()} in locs


# --- hostile paths and messages ------------------------------------------------------------------

_COMMAND = re.compile(r"^::(error|warning|notice)(?: ([^:]*))?::(.*)$")


def _unescape(s: str) -> str:
    """The GitHub runner's unescaping of command values (actions/runner ActionCommand)."""
    return (s.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":")
            .replace("%2C", ",").replace("%25", "%"))


def _parse_github(out: str) -> list[tuple[str, dict[str, str], str]]:
    """Every workflow command in `out`, parsed as the runner parses a log line."""
    cmds = []
    for line in out.split("\n"):
        m = _COMMAND.match(line)
        if m:
            props = dict(p.split("=", 1) for p in (m.group(2) or "").split(",") if p)
            cmds.append((m.group(1), {k: _unescape(v) for k, v in props.items()},
                         _unescape(m.group(3))))
    return cmds


EVIL = "items/a\n::error file=x.yaml::pwned\r\n::notice::x%0A,y:z.yaml"


@pytest.mark.parametrize("fmt", ["github", "text"])
def test_a_path_or_message_cannot_inject_a_workflow_command(fmt: str) -> None:

    finding = Diagnostic(EVIL, 3, 7, "text.en.stem", "bad\n::error::also pwned", "ST007",
                         Severity.error, "fix\r\n::warning::it", "empty-field")
    load_error = Diagnostic(EVIL, 0, 0, "", "cannot read\n::error::x", "", Severity.error, "")
    out = format_findings([finding, load_error], fmt)
    cmds = _parse_github(out)
    if fmt == "text":
        assert cmds == [] and "\r" not in out
        assert out.count("\n") == 5  # two lines per finding and the summary
    else:
        assert len(cmds) == 2 == out.count("\n")
        (level, props, body), (level2, props2, body2) = cmds
        assert (level, props["file"], props["line"], props["col"]) == ("error", EVIL, "3", "7")
        assert body == "bad\n::error::also pwned\nhelp: fix\r\n::warning::it"
        assert props["title"] == "ST007 empty-field"
        assert (level2, props2, body2) == ("error", {"file": EVIL}, "cannot read\n::error::x")


def test_github_line_is_what_the_cli_prints_for_load_errors() -> None:
    from dpassess.lint.report import github_line

    d = Diagnostic("b/x.yaml", 2, 1, "id", "duplicate id 'a'", "", Severity.error, "")
    assert github_line(d) == "::error file=b/x.yaml,line=2,col=1::duplicate id 'a'"


# --- control and bidirectional characters ------------------------------------------------------

#: An OSC 8 hyperlink and an ANSI colour in a file name, a right-to-left override in a message.
SNEAKY = "items/b/\x1b]8;;evil.example/\x07x\x1b[31m\u202etxt.yaml"


@pytest.mark.parametrize("fmt", ["text", "github", "json", "sarif"])
def test_control_and_bidi_characters_are_shown_escaped(fmt: str) -> None:
    finding = Diagnostic(SNEAKY, 1, 1, "text.en.stem", "a \u2066b\u2069 \x9bc \u200f\u061c",
                         "ST007", Severity.error, "fix\u202d it", "empty-field")
    out = format_findings([finding], fmt)
    bad = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
    assert not bad.search(out), repr(out)
    if fmt in ("json", "sarif"):
        doc = json.loads(out)  # the same values as written, as JSON escapes
        if fmt == "json":
            assert doc["findings"][0]["path"] == SNEAKY
    else:
        assert "\\x1b]8;;evil.example/\\x07x\\x1b[31m\\u202etxt.yaml" in out
        assert "\\u2066b\\u2069" in out and "\\x9bc" in out


def test_sarif_uris_are_percent_encoded_and_validate() -> None:
    schema = json.loads(
        (ROOT / "tests" / "schemas" / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8")
    )
    finding = Diagnostic(SNEAKY.replace("/b/", "/a b%/"), 1, 1, "", "m", "ST007", Severity.error,
                         "h", "empty-field")
    doc = json.loads(format_findings([finding], "sarif"))
    jsonschema.validate(doc, schema, cls=jsonschema.Draft4Validator,
                        format_checker=jsonschema.FormatChecker())
    uri = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert re.fullmatch(r"[A-Za-z0-9\-._~/%]+", uri), uri  # RFC 3986 unreserved, / and escapes
    from urllib.parse import unquote
    assert unquote(uri) == SNEAKY.replace("/b/", "/a b%/")
    assert "%1B" in uri and "%E2%80%AE" in uri and "a%20b%25" in uri


def test_cli_messages_show_control_characters_escaped(tmp_path) -> None:
    from typer.testing import CliRunner

    from dpassess.cli import app

    r = CliRunner().invoke(app, ["lint", str(tmp_path / "no\x1b]0;pwned\x07bank\u202e")])
    assert r.exit_code == 2
    assert "\x1b" not in r.stderr and "\u202e" not in r.stderr
    assert "\\x1b]0;pwned\\x07bank\\u202e" in r.stderr


def test_wrote_lines_show_control_characters_escaped(tmp_path) -> None:
    from typer.testing import CliRunner

    from dpassess.cli import app

    target = tmp_path / "quiz\x1b[2J\u202e.txt"
    r = CliRunner().invoke(app, ["export", str(ORIGINAL), "-f", "gift", "-l", "en", "-o",
                                 str(target)])
    assert r.exit_code == 0, r.output
    assert target.is_file()
    assert "\x1b" not in r.stdout and "\u202e" not in r.stdout
    assert "quiz\\x1b[2J\\u202e.txt" in r.stdout
