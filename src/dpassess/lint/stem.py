"""Indonesian words -> the roots they may have, by rule (no dictionary), for the glossary rule.

Indonesian builds words by affixes around a root and by reduplication: `rata-ratanya` is
`rata-rata` with the clitic `-nya`; `dibakukan` and `membakukan` are `baku` with `di-...-kan`
and `meN-...-kan`; `men-shard` is the loanword `shard` with a hyphenated prefix. `roots` strips,
in the order of Nazief and Adriani's algorithm (the one PySastrawi implements), particles
(`-lah -kah -tah -pun`), possessive clitics (`-ku -mu -nya`), at most one derivational suffix
(`-kan -an -i`) and up to two prefixes (`di- ke- se- meN- peN- ber- ter- per-`), after a bound
form written onto the word (`antar- pasca- pra- non- ...`: `antarnode`). Without a
dictionary the algorithm cannot tell `menilai` (me- + nilai) from `menulis` (meN- + tulis), so
it keeps every reading: a word has a small set of possible roots, and two words are forms of
one word when their sets meet (`same_word`). A reduplicated word (`rata-rata`,
`sampel-sampel`) has the roots of its halves.

benchmarks/lint_stemmer.py measures this against PySastrawi and Snowball's Indonesian stemmer
on labelled word pairs.
"""

from __future__ import annotations

from functools import lru_cache

PARTICLES = ("lah", "kah", "tah", "pun")
POSSESSIVES = ("nya", "ku", "mu")
SUFFIXES = ("kan", "an", "i")
#: Shortest root left after stripping (`di` + `a` is no word).
MIN_ROOT = 3

#: Prefixes, longest first; for meN- and peN-, the root letter the nasal may have replaced
#: (meN- + tulis = menulis, peN- + sapu = penyapu, meN- + kirim = mengirim).
_PREFIXES: tuple[tuple[str, str], ...] = (
    ("memper", ""), ("diper", ""), ("meng", "k"), ("peng", "k"), ("meny", "s"), ("peny", "s"),
    ("mem", "p"), ("pem", "p"), ("men", "t"), ("pen", "t"), ("ber", ""), ("ter", ""),
    ("per", ""), ("me", ""), ("pe", ""), ("be", ""), ("di", ""), ("ke", ""), ("se", ""),
)
#: Bound forms (PUEBI's *bentuk terikat*), written onto the word they qualify, outside its
#: affixes: antarnode (between nodes), pascapelatihan, prapemrosesan, nonlinier, multi-GPU.
BOUND_FORMS = ("antar", "pasca", "multi", "semi", "anti", "pra", "non", "sub")
#: Prefixes written with a hyphen before a loanword (men-shard, di-shard, antar-node).
_HYPHEN_PREFIXES = frozenset(p for p, _ in _PREFIXES) | {"meng", "peng", *BOUND_FORMS}


def _ends(word: str, endings: tuple[str, ...]) -> list[str]:
    """`word`, and `word` without each of `endings` it has (if a root is left):
    `pengacakan` may be `pengaca` + `-kan` or `pengacak` + `-an`."""
    return [word] + [word[: -len(e)] for e in endings
                     if word.endswith(e) and len(word) - len(e) >= MIN_ROOT]


def _unprefix(word: str, depth: int = 2) -> set[str]:
    """`word` and what it may be once up to `depth` prefixes are removed."""
    out = {word}
    if depth == 0:
        return out
    for p, lost in _PREFIXES:
        if not word.startswith(p) or len(word) - len(p) < MIN_ROOT:
            continue
        rest = word[len(p):]
        out |= _unprefix(rest, depth - 1)
        if lost and rest[0] in "aiueo":
            out.add(lost + rest)  # the nasal replaced the root's first letter
    return out


@lru_cache(maxsize=1 << 14)
def roots(word: str) -> frozenset[str]:
    """The roots a lower-case Indonesian word may have (itself included)."""
    w = word.lower().strip("-")
    if "-" in w:
        head, _, tail = w.partition("-")
        tail_roots = roots(tail)
        if head in _HYPHEN_PREFIXES:
            return tail_roots | {w}  # men-shard, di-shard: a prefixed loanword
        head_roots = roots(head)
        if head_roots & tail_roots:
            return head_roots | tail_roots | {w}  # rata-rata(nya), sampel-sampel
        return frozenset({f"{head}-{r}" for r in tail_roots})
    out: set[str] = set()
    for a in _ends(w, PARTICLES):
        for b in _ends(a, POSSESSIVES):
            for c in _ends(b, SUFFIXES):
                out |= _unprefix(c)
    for bound in BOUND_FORMS:
        if w.startswith(bound) and len(w) - len(bound) >= MIN_ROOT:
            out |= roots(w[len(bound):])
    return frozenset(out)


def same_word(a: str, b: str) -> bool:
    """Whether two lower-case Indonesian words may be forms of one word."""
    return a == b or not roots(a).isdisjoint(roots(b))
