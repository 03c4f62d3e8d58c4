"""Language identification, offline: py3langid's bundled model restricted to the bank's languages.

Why py3langid: its model ships inside the wheel (nothing is downloaded at run time); restricted to
the bank's languages it is a small naive Bayes classifier over byte n-grams; on the seed bank's
176 strings restricted to {id, en} it made no error (docs/lint.md has the measurement). The model
is loaded once per process and language set, only when a string needs identifying, and every
distinct string is identified once. The tables restricted to the bank's languages are kept in a
user cache folder (see "the model cache" below): about 0.13 s to read instead of 0.8 s.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from array import array
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

if TYPE_CHECKING:
    import numpy as np

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
    """The identifier restricted to the languages of `langs` it knows, and those languages: read
    from the model cache when it holds them, else restricted from py3langid's model (and cached)."""
    path = _cached_model_path(langs)
    hit = _read_cached_model(path) if path is not None else None
    _LOADED.add(langs)
    if hit is not None:
        return hit
    import numpy as np
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    full = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    known = tuple(lang for lang in langs if lang in set(full.labels))
    if len(known) < 2:
        ident = None
    else:
        full.set_languages(list(known))
        # A new identifier over the restricted tables only: `set_languages` keeps the 97-language
        # table alive (for a later reset), which this process never needs.
        ident = LanguageIdentifier(np.ascontiguousarray(full.nb_ptc), full.nb_pc, full.nb_classes,
                                   full.tk_nextmove, full.tk_output, norm_probs=True,
                                   tk_row=full.tk_row)
    if path is not None:
        _write_cached_model(path, langs, ident, known)
    return ident, known


# --- the model cache ----------------------------------------------------------------------------
# py3langid's model is one LZMA-compressed file for 97 languages: reading it costs about 1 s of
# CPU and 115 MiB at its peak, on every run that needs it. The tables restricted to a bank's
# languages (the byte n-gram automaton, which every language shares, and two columns of
# per-language weights instead of 97) are kept uncompressed in a user cache folder and read in
# about 0.1 s. Like `__pycache__`, the cache only saves time: a file that is missing,
# unreadable or written for another model is ignored (and rewritten when the folder is
# writable); classification is the same, value for value (tests/test_lint_langid_cache.py).

#: Environment variable naming the model cache folder; set it empty to switch the cache off.
MODEL_CACHE_ENV = "DPASSESS_MODEL_CACHE"
#: Bumped whenever the layout of the cached model files changes.
_MODEL_FORMAT = 2
_TYPECODE = {2: "H", 4: "I", 8: "L"}


def model_cache_dir() -> Path | None:
    """$DPASSESS_MODEL_CACHE (None when set empty), else `$XDG_CACHE_HOME/dpassess`, else
    `~/.cache/dpassess`."""
    env = os.environ.get(MODEL_CACHE_ENV)
    if env is not None:
        return Path(env) if env else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "dpassess"


def _cached_model_path(langs: tuple[str, ...]) -> Path | None:
    """The cache file for `langs` and the installed model (its version, size and mtime), or
    None when there is no cache folder or no model file to key it on."""
    folder = model_cache_dir()
    if folder is None:
        return None
    try:
        from importlib.metadata import version

        from py3langid.langid import MODEL_DIR, MODEL_FILE

        st = os.stat(MODEL_DIR / MODEL_FILE)
        key = f"{_MODEL_FORMAT}|{version('py3langid')}|{st.st_size}|{st.st_mtime_ns}|{','.join(langs)}"
    except Exception:
        return None
    digest = hashlib.blake2b(key.encode(), digest_size=10).hexdigest()
    return folder / f"{_cache_stem(langs)}{digest}.npz"


def _cache_stem(langs: tuple[str, ...]) -> str:
    """The start of the cache file names of `langs` (for every model)."""
    return "langid-" + "_".join(re.sub(r"[^a-z0-9]", "", lang.lower()) for lang in langs) + "-"


def _as_array(values: np.ndarray) -> array[int]:
    import numpy as np

    out = array(_TYPECODE[values.dtype.itemsize])
    out.frombytes(np.ascontiguousarray(values).data.cast("B"))
    return out


def _automaton_path(path: Path) -> Path:
    """The file beside `path` holding the automaton's transition table, as raw bytes: read
    straight into its array (the largest table, 39 MB: through NumPy it would be held twice
    while being converted)."""
    return path.with_suffix(".nextmove")


def _read_cached_model(path: Path) -> tuple[Any, tuple[str, ...]] | None:
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as data:
            known = tuple(str(x) for x in data["known"])
            if len(known) < 2:
                return None, known
            from py3langid.langid import LanguageIdentifier

            nextmove = array(str(data["nextmove_type"]), [0]) * int(data["nextmove_len"])
            size = len(nextmove) * nextmove.itemsize
            with open(_automaton_path(path), "rb") as fh:
                if fh.readinto(memoryview(nextmove).cast("B")) != size or fh.read(1):
                    return None
            ident = LanguageIdentifier(
                data["ptc"], data["pc"], [str(x) for x in data["classes"]], nextmove,
                data["out_feat"].tolist(), norm_probs=True, tk_row=_as_array(data["nextmove_row"]))
            return ident, known
    except Exception:
        return None


def _write_cached_model(path: Path, langs: tuple[str, ...], ident: Any, known: tuple[str, ...]) -> None:
    import numpy as np

    arrays: dict[str, np.ndarray] = {"known": np.array(known, dtype=str)}
    if ident is not None:
        arrays |= {
            "ptc": ident.nb_ptc, "pc": ident.nb_pc, "classes": np.array(ident.nb_classes, dtype=str),
            "nextmove_type": np.array(ident.tk_nextmove.typecode),
            "nextmove_len": np.array(len(ident.tk_nextmove)),
            "nextmove_row": np.frombuffer(ident.tk_row, dtype=f"u{ident.tk_row.itemsize}"),
            "out_feat": np.asarray(ident.tk_output, dtype=np.int32),
        }
    temps: list[str] = []
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # the automaton first: a reader trusts the .npz only, and checks the automaton's size
        def write_tables(fh: BinaryIO) -> None:
            np.savez(fh, allow_pickle=False, **arrays)

        def write_automaton(fh: BinaryIO) -> None:
            ident.tk_nextmove.tofile(fh)

        writes = [(path, write_tables)]
        if ident is not None:
            writes.insert(0, (_automaton_path(path), write_automaton))
        for target, write in writes:
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            temps.append(tmp)
            with os.fdopen(fd, "wb") as fh:
                write(fh)
            os.replace(tmp, target)
            temps.remove(tmp)
        # the files of the same languages for an earlier model (py3langid upgraded or reinstalled)
        keep = {path, _automaton_path(path)}
        for old in path.parent.glob(_cache_stem(langs) + "*"):
            if old not in keep and old.suffix in (".npz", ".nextmove"):
                old.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only or full cache folder: the next run reads the model again
    finally:
        for tmp in temps:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


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
