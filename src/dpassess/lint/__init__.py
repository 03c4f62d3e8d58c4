"""Lint: item banks -> findings (item-writing flaws, translation, bank statistics, target LMS).

    from dpassess.lint import load_config, lint_banks, format_findings, failing
    config = load_config(Path("."))
    findings = lint_banks(load_banks(["items"]), config)
    print(format_findings(findings, "text")); exit(1 if failing(findings, config.fail_on) else 0)

Rules live in `rules/` (one function each, registered in `registry.RULES`); their docstrings are
the pages of docs/rules/.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dpassess.lint.config import LintConfig, failing, load_config
    from dpassess.lint.engine import lint_banks
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

#: Where each name is defined: importing this package imports none of them (a command that
#: only reads settings or prints stored findings loads neither the rules nor the item model;
#: `RULES` registers every rule the first time it is read).
_WHERE = {
    "FAMILIES": "registry", "RULES": "registry", "Rule": "registry", "Severity": "registry",
    "LintConfig": "config", "failing": "config", "load_config": "config",
    "lint_banks": "engine", "FORMATS": "report", "format_findings": "report",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{module}"), name)
