"""The rule modules; importing this package registers every rule, family by family."""

from dpassess.lint.rules import (
    bank,
    lms,
    maths,
    stats,
    structure,
    suppression,
    translation,
    writing,
)

__all__ = ["bank", "lms", "maths", "stats", "structure", "suppression", "translation", "writing"]
