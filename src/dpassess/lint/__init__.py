"""Lint: item banks -> findings (item-writing flaws, translation, bank statistics, target LMS).

    from dpassess.lint import load_config, lint_banks, format_findings, failing
    config = load_config(Path("."))
    findings = lint_banks(load_banks(["items"]), config)
    print(format_findings(findings, "text")); exit(1 if failing(findings, config.fail_on) else 0)

Rules live in `rules/` (one function each, registered in `registry.RULES`); their docstrings are
the pages of docs/rules/.
"""

from dpassess.lint import rules as _rules  # noqa: F401  (registers every rule)
from dpassess.lint.config import LintConfig, load_config
from dpassess.lint.engine import failing, lint_banks
from dpassess.lint.registry import FAMILIES, RULES, Rule, Severity
from dpassess.lint.report import FORMATS, format_findings

__all__ = [
    "FAMILIES",
    "FORMATS",
    "RULES",
    "LintConfig",
    "Rule",
    "Severity",
    "failing",
    "format_findings",
    "lint_banks",
    "load_config",
]
