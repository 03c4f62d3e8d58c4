"""The glossary matcher (one scan per language, fields joined, `repeated` as a by-product) finds
what a plain per-term scan finds, and lint reports the same findings with either.

The oracle tries each term's own pattern at each position of one text, in the order the
combined pattern tries its groups (the longest forms first), and counts without any gate,
join or bound: the slow algorithm the matcher must equal.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import ROOT
from dpassess.bank.load import load_banks
from dpassess.lint import glossary, lint_banks
from dpassess.lint.config import LintConfig
from dpassess.lint.context import BankContext, text_fields
from dpassess.lint.glossary import (
    _IDIOM_JOINS,
    FieldTerms,
    Glossary,
    _suffix,
    _verb_use,
    inflections,
)
from dpassess.lint.stem import same_word
from dpassess.lint.text import words
from dpassess.model import Bank, GlossaryTerm

BANKS = sorted(
    [p.parent for p in (ROOT / "items").glob("*/bank.yaml")]
    + [p.parent for p in (ROOT / "tests" / "banks").glob("*/bank.yaml")]
    + [ROOT / "tests" / "fixtures" / "seed-original"]
)


def _patterns(g: Glossary, lang: str, kind: str) -> list[re.Pattern[str]]:
    """One whole-word pattern per term, in the order the combined pattern tries them."""
    if kind == "wrong":
        groups = [(i, tuple(t.wrong.get(lang, ()))) for i, t in enumerate(g.terms)]
    elif lang == g.language:
        groups = [(i, inflections(t)) for i, t in enumerate(g.terms)]
    else:
        groups = [(i, tuple(t.accepted(lang))) for i, t in enumerate(g.terms)]
    groups = [(i, forms) for i, forms in groups if forms]
    groups.sort(key=lambda x: -max(len(f) for f in x[1]))
    suffix = "" if kind == "accepted" and lang == g.language else _suffix(lang, g.language)
    out = []
    for i, forms in groups:
        alts = sorted({f.lower() for f in forms}, key=lambda f: (-len(f), f))
        body = "|".join(r"[\s-]+".join(map(re.escape, f.split())) for f in alts)
        out.append(re.compile(rf"(?<![\w])(?P<t{i}>{body}){suffix}(?![\w])"))
    return out


def _scan(pats: list[re.Pattern[str]], low: str) -> list[re.Match[str]]:
    out: list[re.Match[str]] = []
    pos = 0
    while pos <= len(low):
        for p in pats:
            m = p.match(low, pos)
            if m is not None:
                out.append(m)
                pos = m.end()
                break
        else:
            pos += 1
    return out


class Oracle:
    """The glossary's questions answered term by term, position by position."""

    def __init__(self, g: Glossary) -> None:
        self.g = g

    def _nouns(self, lang: str) -> dict[int, str]:
        return self.g._nouns if lang == self.g.language else {}

    def accepted(self, text: str, lang: str) -> frozenset[int]:
        low, nouns = text.lower(), self._nouns(lang)
        return frozenset(int(m.lastgroup[1:]) for m in _scan(_patterns(self.g, lang, "accepted"), low)
                         if m.lastgroup and not (nouns and _verb_use(low, m, nouns)))

    def counts(self, text: str, lang: str) -> Counter[int]:
        low, nouns = text.lower(), self._nouns(lang)
        out: Counter[int] = Counter()
        last: dict[int, int] = {}
        for m in _scan(_patterns(self.g, lang, "accepted"), low):
            assert m.lastgroup
            if nouns and _verb_use(low, m, nouns):
                continue
            i = int(m.lastgroup[1:])
            if i not in last or low[last[i]:m.start()] not in _IDIOM_JOINS:
                out[i] += 1
            last[i] = m.end()
        return out

    def repeated(self, text: str, lang: str) -> frozenset[int]:
        seen = Counter(int(m.lastgroup[1:]) for m in _scan(_patterns(self.g, lang, "accepted"),
                                                          text.lower()) if m.lastgroup)
        return frozenset(i for i, n in seen.items() if n > 1)

    def wrong(self, text: str, lang: str) -> list[tuple[int, str]]:
        return [(int(m.lastgroup[1:]), m.group(0))
                for m in _scan(_patterns(self.g, lang, "wrong"), text.lower()) if m.lastgroup]


def _bank(path: Path) -> Bank:
    return load_banks([path])[0]


@pytest.fixture(params=["automaton", "regex"])
def matcher(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways the matcher finds where a form may start: the Aho-Corasick automaton, and
    the regex gate used where ahocorasick-rs is not installed."""
    if request.param == "regex":
        monkeypatch.setattr(glossary, "AhoCorasick", None)
    else:
        assert glossary.AhoCorasick is not None, "ahocorasick-rs is a dependency"
    return str(request.param)


@pytest.mark.parametrize("path", BANKS, ids=lambda p: p.name)
def test_matcher_equals_per_term_scan(path: Path, matcher: str) -> None:
    bank = _bank(path)
    g = BankContext(bank, LintConfig()).glossary
    oracle = Oracle(g)
    checked = 0
    for entry in bank.entries:
        for lang in entry.item.text:
            texts = [t for _, t in text_fields(entry.item, lang)]
            got = Glossary(bank.config).accepted_fields(texts, lang)  # a cold memo: one scan
            fresh = Glossary(bank.config)
            fresh.accepted_fields(texts, lang)
            for text, found in zip(texts, got, strict=True):
                assert found == oracle.accepted(text, lang), (entry.path, lang, text)
                assert fresh.repeated(text, lang) == oracle.repeated(text, lang), text
                assert g.repeated(text, lang) == oracle.repeated(text, lang), text  # no scan
                assert g.counts(text, lang) == oracle.counts(text, lang), text
                assert {i for i, n in g.counts(text, lang).items() if n > 1} <= g.repeated(
                    text, lang)
                assert g.wrong(text, lang) == oracle.wrong(text, lang), text
                checked += bool(found)
    assert checked or not g, "the bank's glossary is never used: the test checks nothing"


@pytest.mark.parametrize("path", BANKS, ids=lambda p: p.name)
def test_findings_equal_with_the_per_term_oracle(path: Path, matcher: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Every finding, byte for byte, is the one lint reports with the oracle's answers."""
    fast = [repr(d) for d in lint_banks([_bank(path)], jobs=1)]

    def via(name: str) -> object:
        return lambda self, *a: getattr(Oracle(self), name)(*a)

    def fields(self: Glossary, texts: list[str], lang: str) -> list[FieldTerms]:
        o = Oracle(self)
        return [FieldTerms(o.accepted(t, lang), o.repeated(t, lang), o.counts(t, lang))
                for t in texts]

    monkeypatch.setattr(Glossary, "fields", fields)
    monkeypatch.setattr(Glossary, "accepted", via("accepted"))
    monkeypatch.setattr(Glossary, "accepted_fields",
                        lambda self, texts, lang: [Oracle(self).accepted(t, lang) for t in texts])
    monkeypatch.setattr(Glossary, "used", lambda self, t: Oracle(self).accepted(t, self.language))
    monkeypatch.setattr(Glossary, "counts", via("counts"))
    monkeypatch.setattr(Glossary, "repeated", via("repeated"))
    monkeypatch.setattr(Glossary, "wrong", via("wrong"))
    monkeypatch.setattr(Glossary, "any_wrong",
                        lambda self, texts, lang: any(Oracle(self).wrong(t, lang) for t in texts))
    slow = [repr(d) for d in lint_banks([_bank(path)], jobs=1)]
    assert fast == slow


#: Texts the banks lack: verb uses of a translated term (`to shard`, `it shards the`), at a
#: text's start and end, terms twice and side by side, clitics, wrong renderings, characters
#: beyond ASCII before a match (the automaton's offsets are characters, as the regex's).
HAND = {
    "en": ["Each rank has to shard the optimizer state.", "It shards the state, shard by shard",
           "A shard", "to shard", "Shard", "The latency and the latency; latency.",
           "gradient accumulation with gradient  accumulation", "All-reduce, all-reduce"],
    "id": ["Setiap rank men-shard state optimizer-nya.", "shard-shard", "latensinya latensi",
           "semua pengurangan dan siarannya", "akumulasi gradien akumulasi-gradien", "hasil",
           "Latensi — latensi… «shard» dan GPU-nya: ééé all-reduce, ﬁ latensi"],
}


@pytest.mark.parametrize("lang", sorted(HAND))
def test_matcher_equals_per_term_scan_by_hand(lang: str, matcher: str) -> None:
    config = _bank(ROOT / "items" / "data-parallelism").config
    g = Glossary(config)
    oracle = Oracle(g)
    texts = HAND[lang]
    assert g.accepted_fields(texts, lang) == [oracle.accepted(t, lang) for t in texts]
    for t in texts:
        assert g.repeated(t, lang) == oracle.repeated(t, lang), t
        assert g.counts(t, lang) == oracle.counts(t, lang), t
        assert g.wrong(t, lang) == oracle.wrong(t, lang), t


def test_a_form_inside_another_forms_first_word(matcher: str) -> None:
    """`two` starts inside `one-two-three` and ends first: the match is the one that starts
    first (the automaton reports a form where it ends, so its starts must be put in order)."""
    config = _bank(ROOT / "items" / "data-parallelism").config.model_copy(update={"glossary": (
        GlossaryTerm(term="one-two-three", keep=True), GlossaryTerm(term="two", keep=True))})
    g = Glossary(config)
    oracle = Oracle(g)
    texts = ["one-two-three", "two one-two-three two-three", "x-two-y"]
    for lang in ("en", "id"):
        assert g.accepted_fields(texts, lang) == [oracle.accepted(t, lang) for t in texts]
        for t in texts:
            assert g.counts(t, lang) == oracle.counts(t, lang), t
    assert g.counts("one-two-three", "en") == {0: 1}


def _inflected_per_term(g: Glossary, text: str, lang: str, index: int) -> int:
    """The per-term algorithm: each rendering of the term tried at each word of the text."""
    if lang.split("-")[0] != "id":
        return 0
    ws = words(text.lower())
    best = 0
    for form in g.terms[index].accepted(lang):
        fw = form.lower().split()
        n = len(fw)
        k = found = 0
        while k <= len(ws) - n:
            if all(same_word(a, b) for a, b in zip(fw, ws[k:k + n], strict=True)):
                found += 1
                k += n
            else:
                k += 1
        best = max(best, found)
    return best


#: Inflected and affixed renderings the banks may lack (roots, reduplication, two words).
INFLECTED = ["Parameter di-shard dan men-shard-nya; shard-shard itu", "paralelisme datanya",
             "akumulasi gradiennya diakumulasikan; antarnode dan node", "latensinya, berlatensi"]


@pytest.mark.parametrize("path", BANKS, ids=lambda p: p.name)
def test_inflected_counts_equal_the_per_term_algorithm(path: Path) -> None:
    bank = _bank(path)
    g = Glossary(bank.config)
    texts = [t for e in bank.entries for lang in e.item.text if lang.startswith("id")
             for _, t in text_fields(e.item, lang)] + INFLECTED
    found = 0
    for text in texts:
        for i in range(len(g.terms)):
            want = _inflected_per_term(g, text, "id", i)
            assert g.inflected_count(text, "id", i) == want, (text, g.terms[i].term)
            found += want
    assert found or not g.terms


def test_inflected_renderings_by_hand() -> None:
    """Matches that overlap count once (left to right), and an affixed form is found by its
    root though neither word is the other's root (`dibakukan`, `membakukan`: `baku`)."""
    config = _bank(ROOT / "items" / "data-parallelism").config.model_copy(update={"glossary": (
        GlossaryTerm(term="mean", render={"id": ("rata rata",)}),
        GlossaryTerm(term="standardize", render={"id": ("membakukan",)}))})
    g = Glossary(config)
    cases = {"rata rata rata": (1, 0), "rata rata rata rata": (2, 0),
             "Skor dibakukan lalu dibakukan lagi": (0, 2)}
    for text, want in cases.items():
        got = tuple(g.inflected_count(text, "id", i) for i in range(2))
        assert got == want == tuple(_inflected_per_term(g, text, "id", i) for i in range(2))


#: Pieces the generated texts are made of: forms of the glossary's terms (plural, clitics,
#: hyphenated, two words), the contexts that make a one-word translated term a verb or a noun
#: ("does it shard" ending a text, "to shard", "it shards the", "the shard"), the idiom joins
#: ("bucket by bucket"), white space and punctuation.
VOCABULARY = [
    "shard", "shards", "Shard", "sharding", "what does it shard", "to shard", "it shards",
    "does the shard", "the shard", "latency", "latensi", "latensinya", "all-reduce",
    "All-Reduce", "all reduce", "GPU", "GPUs", "GPU-nya", "gradient accumulation",
    "akumulasi gradien", "data parallelism", "paralelisme data", "semua pengurangan", "siaran",
    "bucket", "bucket by bucket", "buckets", "after", "demi", "did not", "doesn't", "it", "this",
    "the", "will", "here", "that", "for", ".", ",", "?", "!", ";", "\n", " ", "-", "—", "é", "ﬁ",
]


@st.composite
def texts(draw: st.DrawFn) -> list[str]:
    """A few texts (the fields of one language of an item) made of the words above."""
    one = st.lists(st.sampled_from(VOCABULARY), max_size=8).map(
        lambda ws: "".join(w if w in ".,?!;—" else " " + w for w in ws).lstrip())
    return draw(st.lists(one, min_size=1, max_size=8))


@given(texts(), st.sampled_from(["en", "id"]))
def test_fields_equal_the_per_term_scan_of_each_text(fields: list[str], lang: str) -> None:
    """One scan of an item's fields (joined) finds, for each field, what the per-term oracle
    finds in that field alone: accepted terms, repeated terms and counts (a verb use at the
    end of one field, where the next field follows in the scan, included)."""
    config = _bank(ROOT / "items" / "data-parallelism").config
    g = Glossary(config)
    oracle = Oracle(g)
    got = g.fields(fields, lang)
    assert got == [FieldTerms(oracle.accepted(t, lang), oracle.repeated(t, lang),
                              oracle.counts(t, lang)) for t in fields]
    # and a second call reads the memo: the same answers
    assert g.fields(fields, lang) == got
    assert [g.counts(t, lang) for t in fields] == [f.counts for f in got]


def test_a_verb_at_the_end_of_a_field_is_a_verb() -> None:
    """By hand: "What does it shard" ends its field; joined with the next one, a NUL follows
    it, not the end of a text, and it is still the verb (no term used)."""
    config = _bank(ROOT / "items" / "data-parallelism").config
    g = Glossary(config)
    shard = next(i for i, t in enumerate(g.terms) if t.term == "shard")
    got = g.fields(["What does it shard", "it shards", "the shard", "x"], "en")
    assert [f.accepted for f in got] == [frozenset(), frozenset(), {shard}, frozenset()]
