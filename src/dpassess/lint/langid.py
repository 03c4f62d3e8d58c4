"""Language identification, offline: py3langid's bundled model restricted to the bank's languages.

Why py3langid: its model ships inside the wheel (nothing is downloaded at run time); restricted to
the bank's languages it is a small naive Bayes classifier over byte n-grams; on the seed bank's
176 strings restricted to {id, en} it made no error (docs/lint.md has the measurement). The model
is loaded once per process and language set, only when a string needs identifying, and every
distinct string is identified once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any, TypeVar

from dpassess.lint.words import STOPWORDS

T = TypeVar("T")

#: Guesses kept at most (then the memo starts again): a bound on its memory.
MEMO_MAX = 1 << 16

#: Texts of fewer words are not identified (too little to go on).
MIN_WORDS = 3

# Punctuation -> space, so that `str.split` (C speed) yields words for the screen.
_PUNCT = str.maketrans({c: " " for c in ".,;:!?()[]{}\"'`*_<>/\\|=+#~“”‘’«»…"})
#: The same for ASCII text as bytes (`bytes.translate` is a table lookup a byte), with the
#: separators \x1c-\x1f, which `str.split` splits on and `bytes.split` does not; the table
#: also lower-cases A-Z (what `lower` does to ASCII), so one pass does both.
_SPLIT_B = bytes(c for c in range(128) if c in _PUNCT or c in range(0x1C, 0x20))
_UPPER_B = bytes(range(0x41, 0x5B))
_PUNCT_B = bytes.maketrans(_SPLIT_B + _UPPER_B, b" " * len(_SPLIT_B) + _UPPER_B.lower())


class ModelDeferred(Exception):
    """Raised instead of loading the model by a guesser that defers (in lint's forked workers,
    which would each load it): the rule runs again, with the model, in the parent."""


#: Language sets whose model is loaded in this process.
_LOADED: set[tuple[str, ...]] = set()


@lru_cache(maxsize=8)
def _identifier(langs: tuple[str, ...]) -> tuple[Any, tuple[str, ...]]:
    """py3langid's identifier restricted to the languages of `langs` it knows (None when fewer
    than two), and those languages: read and restricted through its public API alone (about
    0.5 s of CPU and 60 MB more at the peak than reading cached restricted tables, once per
    process that needs it)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    _LOADED.add(langs)
    full = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    known = tuple(lang for lang in langs if lang in set(full.labels))
    if len(known) < 2:
        return None, known
    full.set_languages(list(known))
    return full, known


class LanguageGuesser:
    """Guesses which of a bank's languages a string is in; memoised per distinct string."""

    def __init__(self, languages: tuple[str, ...]) -> None:
        # `pt-BR` -> `pt`: the model knows base languages.
        self._langs = tuple(sorted({lang.split("-")[0] for lang in languages}))
        #: Raise ModelDeferred instead of loading the model (see lint's engine).
        self.defer = False
        self._memo: dict[str, tuple[str | None, float]] = {}
        # Function words only one of the bank's languages has, for the screen.
        self._own: dict[str, frozenset[str]] = {}
        self._others: dict[str, frozenset[str]] = {}
        for lang in self._langs:
            mine = STOPWORDS.get(lang, frozenset())
            rest = frozenset().union(*(STOPWORDS.get(x, frozenset()) for x in self._langs if x != lang))
            self._own[lang] = mine - rest
            self._others[lang] = rest - mine
        self._own_b = {k: frozenset(w.encode() for w in v) for k, v in self._own.items()}
        self._others_b = {k: frozenset(w.encode() for w in v) for k, v in self._others.items()}

    def screen_text(self, text: str, lang: str) -> tuple[int, bool]:
        """(number of words, settled by the screen) for raw text, without a regex pass."""
        ws = text.lower().translate(_PUNCT).split()
        return len(ws), self.screen(ws, lang)

    def screen(self, ws: tuple[str, ...] | list[str], lang: str) -> bool:
        """True when the function words settle that `ws` is in `lang`: at least one of its own
        and three times as many as of the bank's other languages. The screen only accepts;
        everything else goes to the classifier."""
        own = self._own.get(self.base(lang))
        if not own:
            return False
        s = set(ws)
        mine = len(s & own)
        return mine >= 1 and mine >= 3 * len(s & self._others[self.base(lang)])

    def unsettled(self, fields: Iterable[tuple[T, str]], lang: str) -> Iterator[tuple[T, str]]:
        """The `(key, text)` pairs of `fields` that have at least `min_words` words and that
        the screen does not settle as `lang` (what `screen_text` tells, for many texts at
        once)."""
        base = self.base(lang)
        own, others = self._own.get(base), self._others.get(base, frozenset())
        own_b, others_b = self._own_b.get(base), self._others_b.get(base, frozenset())
        punct, punct_b = _PUNCT, _PUNCT_B
        ws: list[bytes] | list[str]
        mine_set: frozenset[bytes] | frozenset[str] | None
        other_set: frozenset[bytes] | frozenset[str]
        for key, text in fields:
            if text.isascii():  # the same words as bytes, split without a dict lookup a char
                ws = text.encode("ascii").translate(punct_b).split()
                mine_set, other_set = own_b, others_b
            else:
                ws = text.lower().translate(punct).split()
                mine_set, other_set = own, others
            if len(ws) < MIN_WORDS:
                continue
            # Settled: at least one own function word and three times as many as of the others
            # (`isdisjoint` stops at the first common word and builds no set: when no word of
            # the other languages is there, one own word settles it).
            if mine_set and not mine_set.isdisjoint(ws) and (
                other_set.isdisjoint(ws)
                or len(mine_set.intersection(ws)) >= 3 * len(other_set.intersection(ws))
            ):
                continue
            yield key, text

    @staticmethod
    def base(lang: str) -> str:
        return lang.split("-")[0]

    def guess(self, text: str) -> tuple[str | None, float]:
        """(base language, probability) for `text`; (None, 0.0) when there is nothing to choose
        between (fewer than two of the bank's languages are known to the model)."""
        hit = self._memo.get(text)
        if hit is None:
            if len(self._langs) < 2:
                hit = (None, 0.0)
            else:
                ident, _ = self._model()
                if ident is None:
                    hit = (None, 0.0)
                else:
                    lang, p = ident.classify(text)
                    hit = (str(lang), float(p))
            if len(self._memo) >= MEMO_MAX:
                self._memo.clear()
            self._memo[text] = hit
        return hit

    def knows(self, lang: str) -> bool:
        if len(self._langs) < 2:
            return False
        return self.base(lang) in self._model()[1]

    @property
    def model_loaded(self) -> bool:
        """Whether this process has loaded the model for the bank's languages."""
        return self._langs in _LOADED

    def load_model(self) -> None:
        """Load the model for the bank's languages now (once per process), deferring or not."""
        _identifier(self._langs)

    def _model(self) -> tuple[Any, tuple[str, ...]]:
        if self.defer and self._langs not in _LOADED:
            raise ModelDeferred
        return _identifier(self._langs)
