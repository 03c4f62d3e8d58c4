"""Glossary terms of a bank -> compiled patterns, built once per bank.

Answers three questions per text field: which terms does the glossary-language text use, which
terms does a translation render in an accepted form, and which declared wrong renderings does it
contain. `mask` blanks accepted terms so that wording rules do not read `All-reduce` as `all`.
"""

from __future__ import annotations

import re

from ..model import BankConfig, GlossaryTerm

#: Inflections of a glossary-language (English) term still count as the term: GPUs, sharded.
_SUFFIX = r"(?:s|es|ed|d|ing)?"


def _group_pattern(groups: list[tuple[int, tuple[str, ...]]], suffix: str) -> re.Pattern[str] | None:
    groups = [(i, forms) for i, forms in groups if forms]
    if not groups:
        return None
    groups.sort(key=lambda g: -max(len(f) for f in g[1]))
    parts = []
    for i, forms in groups:
        alts = sorted({f.lower() for f in forms}, key=lambda f: (-len(f), f))
        body = "|".join(r"[\s-]+".join(map(re.escape, f.split())) for f in alts)
        parts.append(f"(?P<t{i}>{body})")
    # Compiled case-sensitive and matched against lower-cased text: twice as fast as re.I.
    return re.compile(rf"(?<![\w])(?:{'|'.join(parts)}){suffix}(?![\w])")


class Glossary:
    """The bank's glossary, compiled once; lookups are memoised per (language, text)."""

    def __init__(self, config: BankConfig) -> None:
        self.language = config.glossary_language
        self.terms: tuple[GlossaryTerm, ...] = config.glossary
        langs = set(config.languages) | {self.language}
        self._source = _group_pattern([(i, (t.term,)) for i, t in enumerate(self.terms)], _SUFFIX)
        self._accepted: dict[str, re.Pattern[str] | None] = {}
        self._wrong: dict[str, re.Pattern[str] | None] = {}
        for lang in langs:
            if lang == self.language:
                self._accepted[lang] = self._source
            else:
                self._accepted[lang] = _group_pattern(
                    [(i, t.accepted(lang)) for i, t in enumerate(self.terms)], ""
                )
            self._wrong[lang] = _group_pattern(
                [(i, t.wrong.get(lang, ())) for i, t in enumerate(self.terms)], ""
            )
        self._memo: dict[tuple[str, str, str], object] = {}

    def __bool__(self) -> bool:
        return bool(self.terms)

    def _cached(self, kind: str, lang: str, text: str, compute):  # type: ignore[no-untyped-def]
        key = (kind, lang, text)
        try:
            return self._memo[key]
        except KeyError:
            value = self._memo[key] = compute()
            return value

    def used(self, text: str) -> frozenset[int]:
        """Indices of the terms a glossary-language text uses."""
        pat = self._source
        if pat is None:
            return frozenset()
        return self._cached("u", "", text, lambda: frozenset(_indices(pat, text.lower())))  # type: ignore[return-value]

    def accepted(self, text: str, lang: str) -> frozenset[int]:
        """Indices of the terms `text` (in `lang`) renders in an accepted form."""
        pat = self._accepted.get(lang)
        if pat is None:
            return frozenset()
        return self._cached("a", lang, text, lambda: frozenset(_indices(pat, text.lower())))  # type: ignore[return-value]

    def wrong(self, text: str, lang: str) -> list[tuple[int, str]]:
        """(term index, matched text) for each declared wrong rendering in `text`."""
        pat = self._wrong.get(lang)
        if pat is None:
            return []
        return self._cached(  # type: ignore[return-value]
            "w", lang, text,
            lambda: [
                (int(m.lastgroup[1:]), m.group(0)) for m in pat.finditer(text.lower()) if m.lastgroup
            ],
        )

    def any_wrong(self, text: str, lang: str) -> bool:
        """Whether `text` holds any declared wrong rendering (no memo: for whole items)."""
        pat = self._wrong.get(lang)
        return pat is not None and pat.search(text.lower()) is not None

    def mask(self, text: str, lang: str) -> str:
        """`text` with every accepted glossary term blanked (a term is not its words)."""
        pat = self._accepted.get(lang)
        if pat is None:
            return text
        return self._cached("m", lang, text, lambda: _blank(pat, text))  # type: ignore[return-value]


def _blank(pat: re.Pattern[str], text: str) -> str:
    low = text.lower()
    if len(low) != len(text):  # a character whose lower case is longer: keep offsets simple
        return pat.sub(" ", low)
    spans = [m.span() for m in pat.finditer(low)]
    if not spans:
        return text
    out, last = [], 0
    for a, b in spans:
        out.append(text[last:a])
        out.append(" ")
        last = b
    out.append(text[last:])
    return "".join(out)


def _indices(pat: re.Pattern[str], text: str) -> list[int]:
    return [int(m.lastgroup[1:]) for m in pat.finditer(text) if m.lastgroup]
