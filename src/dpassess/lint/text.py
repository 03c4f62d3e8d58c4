"""Text helpers for the rules: Markdown source -> visible words, cheaply and memoised.

The visible text is `dpassess.markup.markdown.to_plain`, read from the parser's own tokens: the
rules judge the text the exporters render (`plain("a &amp; b") == "a & b"`), and text without
markup skips the parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from dpassess.markup.markdown import clear_text_cache, to_plain, to_prose

#: Entries of each memo below (plain, words, norm): a bound on their memory, about 80 MiB
#: together when full (measured on word salad: 100 MiB for 98,538 + 86,158 + 65,536 entries).
#: The bank rules and the item rules read the same derived text, so a memo that holds a good
#: part of a bank pays (10,000 word-salad items: 7.2 CPU-s with 2**17 entries, 7.8 with 2**16,
#: 8.2 with 2**15); `clear_memos` empties them after each lint run.
CACHE_MAX = 1 << 16

#: Code spans and images in Markdown source, for the rules that compare them as written
#: (TR002: the code and images of two languages; MT003: emphasis outside code).
_CODE = re.compile(r"(`+)(.+?)\1", re.S)
_IMG = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")

#: The visible text of a Markdown string (memoised; `clear_memos` empties it too).
plain = to_plain


#: The visible text without code spans, code blocks and maths (for language checks).
without_code = to_prose


#: ASCII bytes -> the byte `words` reads: letters lower-cased, digits, `'` and `-` kept (the
#: only ASCII characters `_WORD` matches), anything else a space.
_ASCII_WORD = bytes(
    (c | 0x20 if chr(c).isupper() else c) if chr(c).isalnum() or chr(c) in "'-" else 0x20
    for c in range(128)
) + b" " * 128


@lru_cache(maxsize=CACHE_MAX)
def words(text: str) -> tuple[str, ...]:
    """Lower-case words of a plain string (hyphenated words stay whole: `all-reduce`)."""
    if not text.isascii():
        return tuple(_WORD.findall(text.lower()))
    # ASCII: `_WORD` matches within runs of letters, digits, `'` and `-` only; a run of
    # letters and digits alone is one word (a byte translation finds the runs, in C).
    runs = text.encode("ascii").translate(_ASCII_WORD).decode("ascii").split()
    if "'" not in text and "-" not in text:
        return tuple(runs)
    out: list[str] = []
    for r in runs:
        if "'" in r or "-" in r:
            out += _WORD.findall(r)
        else:
            out.append(r)
    return tuple(out)


def phrase_pattern(phrases: tuple[str, ...] | list[str], suffix: str = "") -> re.Pattern[str] | None:
    """One case-insensitive whole-word pattern for a list of phrases, longest first."""
    if not phrases:
        return None
    alts = sorted({p.strip() for p in phrases if p.strip()}, key=lambda p: (-len(p), p))
    body = "|".join(r"\s+".join(map(re.escape, p.split())) for p in alts)
    return re.compile(rf"(?<![\w-])(?:{body}){suffix}(?![\w])", re.I)


def gated_finditer(
    lead: re.Pattern[str], full: re.Pattern[str], low: str, text: str | None = None
) -> Iterator[re.Match[str]]:
    """`full.finditer(text)` (default: `low`), trying `full` only where `lead` matches `low`.

    `lead` is a bare alternation starting with literals, which the regex engine skips to in C;
    `full` starts with a lookbehind and would be tried at every position. When every match of
    `full` starts where `lead` matches the lower-cased text, the matches are exactly the same.
    """
    target = low if text is None else text
    search, match = lead.search, full.match
    m = search(low)
    while m is not None:
        hit = match(target, m.start())
        if hit is None:
            m = search(low, m.start() + 1)
        else:
            yield hit
            m = search(low, hit.end())


def needles(forms: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Substrings every text holding one of `forms` holds one of: the longest word of each form,
    without those that hold another (a few substring tests, cheaper than a regex scan). An
    empty form gives `("",)`: anything may hold it."""
    split = [f.split() for f in forms]
    if any(not ws for ws in split):
        return ("",)
    longest = {max(ws, key=len) for ws in split}
    return tuple(sorted(n for n in longest if not any(m != n and m in n for m in longest)))


class Phrases:
    """`phrase_pattern(phrases, suffix)` with the same matches, found faster in ASCII text.

    The pattern starts with a lookbehind, case-insensitive, so the regex engine tries it at
    every position. In ASCII text a match starts where the lower-cased text matches one of the
    lower-cased phrases, which a bare alternation finds by skipping in C to the letters phrases
    start with; the pattern is tried only there. (Other text, or non-ASCII phrases, whose case
    folding reaches ASCII letters, use the pattern alone.)
    """

    def __init__(self, phrases: tuple[str, ...] | list[str], suffix: str = "") -> None:
        self.pattern = phrase_pattern(phrases, suffix)
        alts = sorted({p.strip().lower() for p in phrases if p.strip()})
        self.lead = (
            re.compile("|".join(r"\s+".join(map(re.escape, p.split())) for p in alts))
            if alts and all(p.isascii() for p in alts) else None
        )
        # lower-cased ASCII text holding none of them holds no phrase
        self.needles = needles(alts)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        pat = self.pattern
        if pat is None:
            return
        if self.lead is None or not text.isascii():
            yield from pat.finditer(text)
            return
        low = text.lower()
        if any(n in low for n in self.needles):
            yield from gated_finditer(self.lead, pat, low, text)

    def search(self, text: str) -> re.Match[str] | None:
        return next(self.finditer(text), None)


@lru_cache(maxsize=CACHE_MAX)
def norm(text: str) -> str:
    """A comparison key: case-folded words only."""
    return " ".join(words(plain(text)))


_DIGITS = re.compile(r"\d+")
_NOT_DIGIT = bytes(c for c in range(256) if not 0x30 <= c <= 0x39)
_NO_NUMBERS: frozenset[str] = frozenset()


def has_digit(text: str) -> bool:
    r"""Whether `text` has a character `\d` matches (ASCII text: a byte delete, not a scan of
    the regex's Unicode category per character)."""
    if text.isascii():
        return bool(text.encode("ascii").translate(None, _NOT_DIGIT))
    return _DIGITS.search(text) is not None


@lru_cache(maxsize=CACHE_MAX)
def numbers(text: str) -> frozenset[str]:
    """The runs of digits in `text` (memoised: the rules that compare numbers read a field
    once per language pair and rule)."""
    return frozenset(_DIGITS.findall(text)) if has_digit(text) else _NO_NUMBERS


def clear_memos() -> None:
    for f in (words, norm, numbers):
        f.cache_clear()
    clear_text_cache()


def quote(text: str, limit: int = 60) -> str:
    """A short quoted excerpt for messages."""
    t = " ".join(text.split())
    return repr(t if len(t) <= limit else t[: limit - 1].rstrip() + "…")
