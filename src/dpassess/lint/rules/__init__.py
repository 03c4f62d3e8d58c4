"""The rule modules; importing this package registers every rule, family by family."""

from dpassess.lint.rules import bank, lms, structure, suppression, translation, writing

__all__ = ["bank", "lms", "structure", "suppression", "translation", "writing"]
