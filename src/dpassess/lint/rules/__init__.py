"""The rule modules; importing this package registers every rule, family by family."""

from . import bank, lms, structure, suppression, translation, writing

__all__ = ["bank", "lms", "structure", "suppression", "translation", "writing"]
