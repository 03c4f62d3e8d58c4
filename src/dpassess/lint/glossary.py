"""Glossary terms of a bank -> compiled patterns, built once per bank.

Answers three questions per text field: which terms does the glossary-language text use, which
terms does a translation render in an accepted form, and which declared wrong renderings does it
contain. `mask` blanks accepted terms so that wording rules do not read `All-reduce` as `all`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, TypeVar, cast

from dpassess.lint.stem import roots, same_word
from dpassess.lint.text import gated_finditer, needles, words
from dpassess.model import BankConfig, GlossaryTerm

try:  # a compiled multi-pattern matcher (wheels for every platform CPython has)
    from ahocorasick_rs import AhoCorasick, MatchKind
except ImportError:  # pragma: no cover - the regex gate finds the same matches, slower
    AhoCorasick = None  # type: ignore[assignment,misc]

T = TypeVar("T")
_Automaton = Any  # ahocorasick_rs.AhoCorasick when installed

#: Clitics and particles an Indonesian word takes after a rendering: rata-ratanya, mediannya,
#: bukankah, itulah (reduplication, sampel-sampel, needs nothing: a hyphen ends a word).
_CLITICS = r"(?:-?(?:nya|lah|kah|pun|ku|mu))?"


def _plural(word: str) -> tuple[str, ...]:
    """The English plural forms of a word: GPUs, buses, probabilities (and `-es` always)."""
    if word.endswith("y") and len(word) > 2 and word[-2] not in "aeiou":
        return (word[:-1] + "ies",)
    return (word + "s", word + "es")


def inflections(term: GlossaryTerm) -> tuple[str, ...]:
    """The glossary-language forms that count as `term`: the term, its plural, and the forms
    the term lists in `inflections` (sharded, sharding); `mean` is not `meaning`."""
    head, _, last = term.term.rpartition(" ")
    plural = tuple(f"{head} {p}" if head else p for p in _plural(last))
    listed: tuple[str, ...] = getattr(term, "inflections", None) or ()
    return (term.term, *plural, *listed)


def _suffix(lang: str, glossary_language: str) -> str:
    return _CLITICS if lang != glossary_language and lang.split("-")[0] == "id" else ""


class _Terms:
    """Whole-word matches of glossary forms, each match tagged with its term's index.

    `full` is the exact pattern (named group `t<index>` per term, whole words, optional
    suffix). A pattern starting with a lookbehind is tried at every position of the text, so
    `full` is only tried where a form can start: every match of `full` starts with the first
    word of one of the forms, as written (lower case). An Aho-Corasick automaton of those
    first words (ahocorasick-rs) finds every such position in one pass in compiled code, each
    text once whatever the number of terms; `full` decides the match there, in order, so the
    matches are exactly `full.finditer`'s. Without the automaton (or for a form without a
    word) `lead`, the bare alternation of the forms, finds the positions instead: the regex
    engine tries each alternative at each position where one may start.
    """

    __slots__ = ("auto", "full", "lead", "needles")

    def __init__(self, full: re.Pattern[str], lead: re.Pattern[str], forms: list[str]) -> None:
        self.full = full
        self.lead = lead
        self.needles = needles(forms)  # a text without any of them holds no form
        firsts = {w[0] for w in map(str.split, forms) if w}
        self.auto = (
            AhoCorasick(sorted(firsts), matchkind=MatchKind.Standard)
            if AhoCorasick is not None and all(f.split() for f in forms) else None
        )

    def finditer(self, low: str) -> Iterator[re.Match[str]]:
        if self.auto is None:
            return gated_finditer(self.lead, self.full, low)
        return self._starts(self.auto, low)

    def _starts(self, auto: _Automaton, low: str) -> Iterator[re.Match[str]]:
        """`full`'s matches, tried at the starts of the first words in `low`, left to right."""
        match, pos = self.full.match, 0
        for s in sorted({s for _, s, _ in auto.find_matches_as_indexes(low, overlapping=True)}):
            if s >= pos:
                m = match(low, s)
                if m is not None:
                    yield m
                    pos = m.end()

    def search(self, low: str) -> re.Match[str] | None:
        if not any(n in low for n in self.needles):
            return None
        return next(self.finditer(low), None)

    def sub(self, repl: str, low: str) -> str:
        return self.full.sub(repl, low)


def _group_pattern(groups: list[tuple[int, tuple[str, ...]]], suffix: str) -> _Terms | None:
    groups = [(i, forms) for i, forms in groups if forms]
    if not groups:
        return None
    groups.sort(key=lambda g: -max(len(f) for f in g[1]))
    parts, bodies, every = [], [], []
    for i, forms in groups:
        alts = sorted({f.lower() for f in forms}, key=lambda f: (-len(f), f))
        every += alts
        body = "|".join(r"[\s-]+".join(map(re.escape, f.split())) for f in alts)
        parts.append(f"(?P<t{i}>{body})")
        bodies.append(body)
    # Compiled case-sensitive and matched against lower-cased text: twice as fast as re.I.
    full = re.compile(rf"(?<![\w])(?:{'|'.join(parts)}){suffix}(?![\w])")
    return _Terms(full, re.compile("|".join(bodies)), every)


#: English words ending so are verbs first (standardize, normalise, quantify, estimate): a
#: glossary that pins one means the verb, and its verb uses are the term.
_VERB_ENDINGS = ("ize", "ise", "yze", "yse", "ify", "ate")

class FieldTerms(NamedTuple):
    """The glossary terms of one text in one language (see `Glossary.fields`)."""

    #: The terms it renders in an accepted form (in the glossary language: uses; a verb use of
    #: a renderable term is not the term).
    accepted: frozenset[int]
    #: The terms whose forms it holds twice or more, verb uses included.
    repeated: frozenset[int]
    #: How many times it uses each term ("bucket by bucket" is one use; a term it does not use
    #: is not a key). Read only: shared.
    counts: dict[int, int]


_NONE: frozenset[int] = frozenset()
_NO_TERMS = FieldTerms(_NONE, _NONE, {})

#: Memoised lookups kept at most (then the memo starts again): a bound on its memory.
MEMO_MAX = 1 << 16


class Glossary:
    """The bank's glossary, compiled once; lookups are memoised per (language, text)."""

    def __init__(self, config: BankConfig) -> None:
        self.language = config.glossary_language
        self.terms: tuple[GlossaryTerm, ...] = config.glossary
        langs = set(config.languages) | {self.language}
        self._source = _group_pattern(
            [(i, inflections(t)) for i, t in enumerate(self.terms)], "")
        self._accepted: dict[str, _Terms | None] = {}
        self._wrong: dict[str, _Terms | None] = {}
        for lang in langs:
            if lang == self.language:
                self._accepted[lang] = self._source
            else:
                self._accepted[lang] = _group_pattern(
                    [(i, t.accepted(lang)) for i, t in enumerate(self.terms)],
                    _suffix(lang, self.language),
                )
            self._wrong[lang] = _group_pattern(
                [(i, t.wrong.get(lang, ())) for i, t in enumerate(self.terms)],
                _suffix(lang, self.language),
            )
        self._memo: dict[tuple[str, str, str], object] = {}
        self._by_root: dict[str, dict[str, list[tuple[int, int, list[str]]]]] = {}
        #: Terms a verb in the glossary language is not (English only): the renderable ones.
        #: "What does it mean?" does not use the statistic `mean`; a kept term (all-reduce,
        #: broadcast) is the same word as a verb, so its verb uses count.
        self._nouns: dict[int, str] = {
            i: t.term.lower() for i, t in enumerate(self.terms)
            if not t.keep and not t.term.lower().endswith(_VERB_ENDINGS)
        } if self.language.split("-")[0] == "en" else {}
        forms = [f for t in self.terms for fs in (t.render | t.wrong).values() for f in fs]
        self._nul = any("\0" in f for f in (*forms, *(t.term for t in self.terms)))

    def __bool__(self) -> bool:
        return bool(self.terms)

    def _cached(self, kind: str, lang: str, text: str, compute: Callable[[], T]) -> T:
        """`compute()`, memoised by (kind, lang, text): each kind holds values of one type."""
        key = (kind, lang, text)
        try:
            return cast(T, self._memo[key])
        except KeyError:
            if len(self._memo) >= MEMO_MAX:
                self._memo.clear()
            value = self._memo[key] = compute()
            return value

    def used(self, text: str) -> frozenset[int]:
        """Indices of the terms a glossary-language text uses."""
        return self.accepted(text, self.language)

    def accepted(self, text: str, lang: str) -> frozenset[int]:
        """Indices of the terms `text` (in `lang`) renders in an accepted form."""
        return self.fields([text], lang)[0].accepted

    def accepted_fields(self, texts: list[str], lang: str) -> list[frozenset[int]]:
        """`accepted(text, lang)` for each of `texts` (in the glossary language: `used`)."""
        return [f.accepted for f in self.fields(texts, lang)]

    def repeated(self, text: str, lang: str) -> frozenset[int]:
        """Indices of the terms whose accepted forms (in the glossary language: the term's
        forms) `text` holds twice or more, verb uses included: every term `counts` finds more
        than once is one of them."""
        return self.fields([text], lang)[0].repeated

    def counts(self, text: str, lang: str) -> Counter[int]:
        """How many times `text` (in `lang`) uses each term in an accepted form (in the
        glossary language: the term)."""
        return Counter(self.fields([text], lang)[0].counts)

    def fields(self, texts: list[str], lang: str) -> list[FieldTerms]:
        """The terms each of `texts` (in `lang`) renders in an accepted form (in the glossary
        language: uses), how many times, and those it holds twice: one scan of the texts not
        in the memo (by (lang, text)).

        They are scanned at once, joined by NUL: no form or separator matches a NUL, which,
        like a text's ends, is neither a word character nor cased, so every match falls in one
        text and is the match a scan of that text alone finds. Whether a match is a verb reads
        the text around it, in its own text (at the end of a text, "What does it shard" is a
        verb, where a NUL and the next text follow)."""
        pat = self._accepted.get(lang)
        if pat is None:
            return [_NO_TERMS] * len(texts)
        memo = self._memo
        out: list[FieldTerms] = []
        todo: list[int] = []
        for k, t in enumerate(texts):
            hit = memo.get(("f", lang, t))
            if hit is None:
                todo.append(k)
            out.append(hit)  # type: ignore[arg-type]
        if not todo:
            return out
        if len(memo) + len(todo) > MEMO_MAX:
            memo.clear()
        nouns = self._nouns if lang == self.language else {}
        lows = [texts[k].lower() for k in todo]
        if self._nul or any("\0" in t for t in lows):  # each text alone
            found = [_scan(pat, [t], nouns)[0] for t in lows]
        else:
            found = _scan(pat, lows, nouns)
        for k, f in zip(todo, found, strict=True):
            out[k] = memo["f", lang, texts[k]] = f
        return out

    def inflected(self, text: str, lang: str, index: int) -> bool:
        """Whether an Indonesian `text` renders term `index` in an inflected form the patterns
        do not list: each word of a rendering matched by a word with the same root, in order
        (`dibakukan` for `membakukan`, `merata-ratakan` for `rata-rata`)."""
        return self.inflected_count(text, lang, index) > 0

    def inflected_count(self, text: str, lang: str, index: int) -> int:
        """How many times an Indonesian `text` renders term `index` in any form with the
        roots of a rendering (listed or inflected: `antarnode` and `node` are two); 0 in
        other languages."""
        if lang.split("-")[0] != "id":
            return 0
        return self._cached("i", lang, text, lambda: self._inflected(text, lang)).get(index, 0)

    def _inflected(self, text: str, lang: str) -> dict[int, int]:
        """`inflected_count` of every term at once, the stemmer applied to the text's words.

        Each word is looked up, by itself and by its roots, in an index of the renderings' first
        words (and their roots): two words are forms of one word when they are equal or share a
        root, so every rendering that may start at the word is found, and checked word by word.
        A rendering counts where it matches, left to right without overlap (the most of the
        term's renderings)."""
        by_root = self._by_root.get(lang)
        if by_root is None:
            by_root = self._by_root[lang] = _renderings_by_root(self.terms, lang)
        ws = words(text.lower())
        where: dict[tuple[int, int], list[int]] = {}
        size: dict[tuple[int, int], int] = {}
        for k, w in enumerate(ws):
            tried: set[tuple[int, int]] = set()
            for key in (w, *roots(w)):
                for i, j, fw in by_root.get(key, ()):
                    if (i, j) in tried:
                        continue
                    tried.add((i, j))
                    n = len(fw)
                    if k + n <= len(ws) and all(
                            same_word(a, b) for a, b in zip(fw, ws[k:k + n], strict=True)):
                        where.setdefault((i, j), []).append(k)
                        size[i, j] = n
        best: dict[int, int] = {}
        for (i, j), starts in where.items():
            n, found, free = size[i, j], 0, 0
            for k in starts:
                if k >= free:
                    found += 1
                    free = k + n
            best[i] = max(best.get(i, 0), found)
        return best

    def wrong(self, text: str, lang: str) -> list[tuple[int, str]]:
        """(term index, matched text) for each declared wrong rendering in `text`."""
        pat = self._wrong.get(lang)
        if pat is None:
            return []
        return self._cached(
            "w", lang, text,
            lambda: [
                (int(m.lastgroup[1:]), m.group(0)) for m in pat.finditer(text.lower()) if m.lastgroup
            ],
        )

    def any_wrong(self, texts: list[str], lang: str) -> bool:
        """Whether one of `texts` may hold a declared wrong rendering (no memo: for the fields
        of a whole item). They are searched at once, one per line: a line break is not a word
        character, so a rendering in one text is found; one spanning two lines only makes the
        answer True when it could have been False."""
        pat = self._wrong.get(lang)
        return pat is not None and pat.search("\n".join(texts).lower()) is not None

    def mask(self, text: str, lang: str) -> str:
        """`text` with every accepted glossary term blanked (a term is not its words)."""
        pat = self._accepted.get(lang)
        if pat is None:
            return text
        return self._cached("m", lang, text, lambda: _blank(pat, text))


def _renderings_by_root(terms: tuple[GlossaryTerm, ...], lang: str
                        ) -> dict[str, list[tuple[int, int, list[str]]]]:
    """(term, rendering, its words) of every rendering in `lang`, under its first word and
    each root of that word."""
    out: dict[str, list[tuple[int, int, list[str]]]] = {}
    for i, term in enumerate(terms):
        for j, form in enumerate(term.accepted(lang)):
            fw = form.lower().split()
            if fw:
                for key in {fw[0], *roots(fw[0])}:
                    out.setdefault(key, []).append((i, j, fw))
    return out


def _blank(pat: _Terms, text: str) -> str:
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


def _twice(seen: Counter[int]) -> frozenset[int]:
    return frozenset(i for i, n in seen.items() if n > 1)


#: "bucket by bucket", "layer after layer": one use of the term (Indonesian: per bucket).
_IDIOM_JOINS = frozenset({" by ", " after ", " demi "})


def _scan(pat: _Terms, lows: list[str], nouns: dict[int, str]) -> list[FieldTerms]:
    """`FieldTerms` of each lower-cased text of `lows` (none holding a NUL), in one scan of
    the texts joined by NUL (see `Glossary.fields`)."""
    ends, end = [], -1
    for t in lows:  # where each text's NUL (or the end) is
        end += len(t) + 1
        ends.append(end)
    joined = "\0".join(lows)
    # Each text's matches: (term, start, end, whether it is a verb), in order.
    matches: dict[int, list[tuple[int, int, int, bool]]] = {}
    full = pat.full.match
    for m in pat.finditer(joined):
        if m.lastgroup:
            start = m.start()
            k, i = bisect_right(ends, start), int(m.lastgroup[1:])
            verb = False
            if i in nouns:  # read in its own text
                low, at = lows[k], ends[k] - len(lows[k])
                own = full(low, start - at)
                verb = own is not None and _verb_use(low, own, nouns)
            matches.setdefault(k, []).append((i, start, m.end(), verb))
    out = [_NO_TERMS] * len(lows)
    for k, found in matches.items():
        accepted = frozenset([i for i, _, _, verb in found if not verb])
        ids = [i for i, _, _, _ in found]
        if len(set(ids)) == len(ids):  # each term once (most texts): used once unless a verb
            out[k] = FieldTerms(accepted, _NONE, dict.fromkeys(accepted, 1))
        else:
            out[k] = FieldTerms(accepted, _twice(Counter(ids)), _tally(joined, found))
    return out


def _tally(low: str, matches: list[tuple[int, int, int, bool]]) -> dict[int, int]:
    """How many times each term is used, from the matches of a text (term, start, end,
    whether it is a verb) in `low`: a verb is not the term, and "bucket by bucket" is one use."""
    out: dict[int, int] = {}
    last: dict[int, int] = {}
    for i, start, end, verb in matches:
        if verb:
            continue
        if i not in last or low[last[i]:start] not in _IDIOM_JOINS:
            out[i] = out.get(i, 0) + 1
        last[i] = end
    return out


#: English words after which a word is a verb: "to mean", "will mean", "doesn't mean".
_VERB_AFTER = re.compile(
    r"(?:(?<![\w-])(?:to|will|would|can|could|may|might|must|shall|should|(?:do|does|did)\s+not)"
    r"|n['’]t)\s+$")
#: Do-support: "does it mean", "what do these figures mean", ending the clause.
_DO_SUPPORT = re.compile(r"(?<![\w-])(?:do|does|did)(?:\s+(?:not|n['’]t))?(?:\s+[^\s,;:!?]+){1,4}\s+$")
_CLAUSE_END = re.compile(r"\s*(?:[.,;:!?)]|$|\s*(?:here|for|to|in|that|by|when|if|exactly)(?![\w-]))")
#: "it means", "this means that": a third-person verb, never a plural noun after these.
_SUBJECT = re.compile(r"(?<![\w-])(?:it|this|that|which|he|she|also|still|only)\s+$")
_OBJECT = re.compile(r"\s*(?:[.,;:!?)]|$|\s*(?:that|the|a|an|we|you|it|there)(?![\w-]))")
#: A word after these is a noun: "the mean", "what does the mean in this table show".
_DETERMINER = re.compile(
    r"(?<![\w-])(?:the|a|an|its|their|his|her|our|your|my|these|those|sample|population"
    r"|arithmetic|weighted|group|overall)\s+$")
#: How far back a verb context is looked for (a bound: linear in the text).
_WINDOW = 60


def _verb_use(low: str, m: re.Match[str], nouns: dict[int, str]) -> bool:
    """Whether the match `m` of a renderable term is the English verb, not the term:
    "What does it mean?", "to mean", "this means that"; "the mean", "their mean?" and "what
    does the sample mean tell us" are the term."""
    assert m.lastgroup
    term = nouns.get(int(m.lastgroup[1:]))
    word = m.group(m.lastgroup)
    if term is None or " " in term:
        return False
    start = m.start()
    before = low[max(0, start - _WINDOW):start].rpartition("\0")[2]
    if _DETERMINER.search(before):
        return False
    if _VERB_AFTER.search(before):
        return True
    if _DO_SUPPORT.search(before) and _CLAUSE_END.match(low, m.end()):
        return True
    return (word == term + "s" and bool(_SUBJECT.search(before))
            and _OBJECT.match(low, m.end()) is not None)
