"""Bank rules (BK): duplicates, enemies, and cues visible only across items (key positions,
key length, a test-wise strategy), each tested against chance.

They read each item through its features (`BankContext.features`, made by
`dpassess.lint.features`: normalised stems and answers, content words, key positions and option
lengths), never the item itself, so that the lint cache can keep the features of an unchanged
item and run these rules without loading it."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain, repeat
from typing import NamedTuple, assert_never

from dpassess.lint.context import BankContext
from dpassess.lint.registry import Hit, bank_rule
from dpassess.lint.stats import binom_sf, chi2_sf, z_score
from dpassess.lint.text import norm
from dpassess.lint.words import (
    ABSOLUTE,
    ABSOLUTE_STATEMENT,
    ALL_NONE,
    LETTER_NOUNS,
    NEGATIVE,
    STOPWORDS,
)
from dpassess.model import (
    ChoiceBase,
    Cloze,
    Description,
    Essay,
    Item,
    Matching,
    Numerical,
    Ordering,
    ShortAnswer,
)
from dpassess.runtime.records import ItemFeatures

ALPHA = 0.01
#: Longest cycle looked for: longer ones are not something test takers can learn.
MAX_PERIOD = 8


class _Choice(NamedTuple):
    """A single-choice item as the key-cue rules read it: its id, the number of its options,
    the key's position among them, and per language the visible length of each option and
    whether it has absolute terms (`dpassess.runtime.records.ChoiceFeatures`)."""

    id: str
    k: int
    key: int
    lengths: dict[str, tuple[int, ...]]
    absolute: dict[str, tuple[bool, ...]]


def _choice_items(bctx: BankContext) -> list[_Choice]:
    """Single-choice items with a valid key and three or more options, in authoring order
    (found once per lint run: four rules read them)."""
    return bctx.shared(_find_choice_items)


def _find_choice_items(bctx: BankContext) -> list[_Choice]:
    return [_Choice(f.id, f.choice.k, f.choice.key, dict(f.choice.lengths),
                    dict(f.choice.absolute))
            for f in bctx.features if f.choice is not None]


@bank_rule(
    "BK001", "duplicate-item", "warning",
    key_risk="No: a form may show the question twice; each copy is graded right.",
    fix="Remove one of the two items, or make them ask different things.",
)
def duplicate_item(bctx: BankContext) -> Iterator[Hit]:
    """## What it does
    Finds two items of a bank with the same stem and the same options (ignoring case,
    punctuation, Markdown and option order) in some language.

    ## Why is this bad?
    A form may draw both copies; the copy also doubles the item's weight in any statistic over
    the bank and usually means an edit was made to one copy only.

    ## Example
    `01-sync.yaml` and `09-sync-copy.yaml` both ask "Which operation keeps replicas in sync?"
    with the same four options.

    ## Use instead
    Keep one file; list a variant that must not share a form with it under `enemies`.
    """
    # Options are compared only where another item has the same stem (few items).
    feats = bctx.features
    stems = Counter((s.lang, s.stem) for f in feats for s in f.stems)
    seen: dict[tuple[str, bytes, bytes], str] = {}
    for f in feats:
        for s in f.stems:
            if not s.stem or stems[s.lang, s.stem] == 1:
                continue
            first = seen.setdefault((s.lang, s.stem, s.answers), f.id)
            if first != f.id:
                yield Hit(("text", s.lang, "stem"), f"duplicates item {first!r} ({s.lang!r})",
                          item_id=f.id)
                break


def _answers(item: Item, lang: str) -> tuple[str, ...]:
    """What an item offers or accepts in `lang`, normalised and sorted: two items with the same
    stem and these are duplicates."""
    match item:
        case ChoiceBase() | Ordering():
            texts = list(item.text[lang].options.values())
        case Matching():
            m = item.text[lang]
            texts = [f"{m.premises[p]} -> {m.responses.get(p, '')}" for p in item.pairs]
            texts += [m.responses[d] for d in item.distractors if d in m.responses]
        case ShortAnswer():
            texts = [w for ws in item.text[lang].answers.values() for w in ws]
        case Numerical():
            return tuple(sorted(f"{lo!r}..{hi!r}" for lo, hi in (a.bounds for a in item.answers)))
        case Cloze():
            c = item.text[lang]
            texts = [f"{gid}:{w}" for gid, g in c.gaps.items()
                     for ws in (*g.answers.values(), tuple(g.options.values())) for w in ws]
            texts += [f"{g.id}:{lo!r}..{hi!r}" for g in item.gaps if g.type == "numerical"
                      for lo, hi in (a.bounds for a in g.answers)]
        case Essay() | Description():
            texts = []
        case _:
            assert_never(item)
    return tuple(sorted(map(norm, texts)))


MIN_STEM_WORDS = 5


@bank_rule(
    "BK002", "near-duplicate-item", "warning",
    key_risk="No: near-duplicates give each other away.",
    fix="Merge the two items, or declare them `enemies` so that no form holds both.",
)
def near_duplicate_item(bctx: BankContext) -> Iterator[Hit]:
    """## What it does
    Finds items whose stems differ by at most one content word (one word changed, added or
    removed, ignoring function words, case and word order), in some language. Stems of fewer
    than five content words are not compared. Items that list each other as `enemies` pass.

    ## Why is this bad?
    Near-duplicates on one form give away each other's answers; across forms they make one
    form easier than another. The check is linear in the bank size (each stem is indexed by
    its content words with one left out), so it runs on banks of any size.

    ## Example
    "What does each GPU hold in standard data parallelism?" and "What does every GPU hold in
    standard data parallelism?"

    ## Use instead
    Keep one, or declare `enemies: [dp-gpu-holds]` in the other.
    """
    # Each stem is indexed by its content-word multiset and by that multiset minus each word
    # (in stem order), as sums of word hashes (O(words) per stem): the first item of each key,
    # and the later ones apart (few: only near-duplicates share a key). The items under the
    # stem's keys are candidates, in key order, each key's first item first; each is confirmed
    # on the words (found again from the other item's stem: keeping every stem's words would
    # add about 15 MiB at 10,000 items to the peak of a lint run, for the few candidates there
    # are). The first that is confirmed and no enemy is named, so an enemy that came first
    # under a key hides no other item.
    index: dict[str, dict[int, str]] = defaultdict(dict)
    later: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    feats = bctx.features
    by_id = {f.id: f for f in feats}
    for f in feats:
        iid = f.id
        for s in f.stems:
            ws = s.words
            if ws is None:  # fewer than MIN_STEM_WORDS content words
                continue
            lang = s.lang
            hs = list(map(hash, ws))
            full = sum(hs)
            keys = [full, *map(full.__sub__, dict.fromkeys(hs))]
            firsts = list(map(index[lang].setdefault, keys, repeat(iid)))
            if firsts.count(iid) == len(firsts):  # no other stem has any of these keys
                continue
            more = later[lang]
            shared = [(k, first) for k, first in zip(keys, firsts, strict=True) if first != iid]
            # read lazily: the first candidate nearly always confirms (a bank written from one
            # template puts every stem under one key: reading all would be quadratic)
            candidates = (o for k, first in shared for o in chain((first,), more.get(k, ())))
            other = next((
                o for o in _unique(candidates)
                if o not in f.enemies and iid not in by_id[o].enemies
                and _one_word_apart(ws, _words_of(by_id[o], lang))
            ), None)
            for k, _ in shared:
                more[k].append(iid)
            if other is not None:
                yield Hit(
                    ("text", lang, "stem"),
                    f"the stem nearly repeats item {other!r} ({lang!r}): {s.quoted}",
                    item_id=iid,
                )
                break


def _words_of(f: ItemFeatures, lang: str) -> tuple[str, ...]:
    """The content words of an item's stem in `lang` (one it was indexed under)."""
    return next(s.words or () for s in f.stems if s.lang == lang)


def _unique(values: Iterable[str]) -> Iterator[str]:
    """`values` without repeats, in order, as they are read."""
    seen: set[str] = set()
    for v in values:
        if v not in seen:
            seen.add(v)
            yield v


def _one_word_apart(ws: Sequence[str], others: Sequence[str]) -> bool:
    """Same words, or one word changed, added or removed."""
    a, b = Counter(ws), Counter(others)
    extra, missing = sum((a - b).values()), sum((b - a).values())
    return extra <= 1 and missing <= 1


@bank_rule(
    "BK003", "unknown-enemy", "error",
    key_risk="No, but the assembler cannot keep apart what the author asked it to: an error in the"
             " bank's references.",
    fix="Name existing item ids in `enemies` (and not the item itself).",
)
def unknown_enemy(bctx: BankContext) -> Iterator[Hit]:
    """## What it does
    Checks that every id in an item's `enemies` names another item of the same bank.

    ## Why is this bad?
    Form assembly keeps enemies apart; a misspelt id keeps nothing apart, silently, and the two
    items the author meant to separate can land on one form.

    ## Example
    ```yaml
    id: dp-global-batch
    enemies: [dp-global-batchsize]
    ```

    ## Use instead
    ```yaml
    id: dp-global-batch
    enemies: [dp-gradient-accumulation]
    ```
    """
    ids = {f.id for f in bctx.features}
    for f in bctx.features:
        for i, e in enumerate(f.enemies):
            if e == f.id:
                yield Hit(("enemies", i), "an item cannot be its own enemy", item_id=f.id)
            elif e not in ids:
                yield Hit(("enemies", i), f"enemy {e!r} is not an item of bank {bctx.bank.id!r}",
                          item_id=f.id)


def _letters(positions: list[int]) -> str:
    return " ".join(chr(65 + p) for p in positions)


@bank_rule(
    "BK004", "key-position-balance", "warning",
    key_risk="No: a skewed key position is a cue across items.",
    fix="Reorder options in some items so that each position holds the key about equally often.",
)
def key_position_balance(bctx: BankContext) -> Iterator[Hit]:
    """## What it does
    Counts, for single-choice items with the same number of options, how often the key is at
    each position in authoring order, and flags counts that a chi-square test finds unlikely
    under equal chances (p < 0.01). Banks with fewer than two items per position are skipped.

    ## Why is this bad?
    Writers favour middle positions for the key ("hide it in the middle"); students learn the
    preference. Printed forms and exports with `shuffle: false` keep the authoring order.

    ## Example
    Twelve 4-option items with keys at A 1, B 7, C 3, D 1.

    ## Use instead
    Reorder options so the keys spread over A, B, C and D about equally.
    """
    by_k: dict[int, list[int]] = defaultdict(list)
    for c in _choice_items(bctx):
        by_k[c.k].append(c.key)
    for k, pos in sorted(by_k.items()):
        n = len(pos)
        if n < 2 * k:
            continue
        counts = Counter(pos)
        exp = n / k
        chi2 = sum((counts.get(i, 0) - exp) ** 2 / exp for i in range(k))
        p = chi2_sf(chi2, k - 1)
        if p < ALPHA:
            dist = ", ".join(f"{chr(65 + i)} {counts.get(i, 0)}" for i in range(k))
            yield Hit(
                (),
                f"keys of the {n} {k}-option items are unbalanced: {dist} (chi-square p={p:.4f})",
            )


@bank_rule(
    "BK005", "key-position-pattern", "warning",
    key_risk="No: a key pattern is a cue across items.",
    fix="Reorder options so that key positions in authoring order follow no pattern "
    "(no cycle, no repetition, no long run).",
)
def key_position_pattern(bctx: BankContext) -> Iterator[Hit]:
    """## What it does
    Looks for patterns in the key positions of single-choice items in authoring order: a
    constant step (A B C D A B C D), a repeating period (A C A C), or a long run of one
    position (B B B B B). Each is tested against chance with a binomial test, corrected for
    the number of patterns tried; p < 0.01 is flagged.

    ## Why is this bad?
    Balanced is not enough: a sequence such as A B C D A B C D is perfectly balanced and
    perfectly predictable. Test takers notice cycles after a few items.

    ## Example
    Eight items with keys A B C D A B C D.

    ## Use instead
    Eight items with keys such as C A D B B D A C.
    """
    items = _choice_items(bctx)
    pos = [c.key for c in items]
    ks = [c.k for c in items]
    n = len(pos)
    if n < 5:
        return
    found: list[tuple[float, str]] = []
    # constant step: next = previous + d (mod k)
    steps = [(pos[i + 1] - pos[i]) % ks[i] for i in range(n - 1) if ks[i] == ks[i + 1]]
    if len(steps) >= 4:
        d, c = Counter(steps).most_common(1)[0]
        pbar = sum(1 / k for k in ks) / n
        p = min(1.0, binom_sf(c, len(steps), pbar) * max(ks))
        what = "repeats one position" if d == 0 else f"advances by {d} position(s)"
        found.append((p, f"the key {what} from item to item in {c} of {len(steps)} steps"))
    # repeating period
    periods = range(2, min(n // 2, MAX_PERIOD) + 1)
    for per in periods:
        pairs = [(pos[i], pos[i + per]) for i in range(n - per) if ks[i] == ks[i + per]]
        if len(pairs) < 4:
            continue
        c = sum(a == b for a, b in pairs)
        pbar = sum(1 / k for k in ks) / n
        p = min(1.0, binom_sf(c, len(pairs), pbar) * len(periods))
        found.append((p, f"key positions repeat every {per} items in {c} of {len(pairs)} cases"))
    # longest run of one position
    best, start, run = 1, 0, 1
    for i in range(1, n):
        run = run + 1 if pos[i] == pos[i - 1] else 1
        if run > best:
            best, start = run, i - run + 1
    kbar = sum(ks) / n
    p_run = min(1.0, n * (1 / kbar) ** (best - 1))
    found.append((p_run, f"{best} items in a row (from {items[start].id!r}) have the key at "
                         f"{chr(65 + pos[start])}"))
    p, what = min(found)
    if p < ALPHA:
        seq = f": {_letters(pos)}" if n <= 40 else ""
        yield Hit((), f"key positions in authoring order follow a pattern{seq}; {what} (p={p:.4f})")


@bank_rule(
    "BK006", "key-longest-rate", "warning",
    key_risk="No: a long key is a cue across items.",
    fix="Shorten keys or lengthen distractors until the key is the longest option no more often "
    "than chance.",
)
def key_longest_rate(bctx: BankContext) -> Iterator[Hit]:
    """## What it does
    Counts, per language, the single-choice items whose key is strictly the longest option,
    and tests the count against chance (1/k for an item with k options) with a binomial test;
    p < 0.05 with at least five items is flagged.

    ## Why is this bad?
    Even when no single item crosses the `key-is-longest` margin, a bank whose keys are
    usually the longest option teaches students to pick the longest option.

    ## Example
    Five of eight 4-option items have the longest option as key (chance: two).

    ## Use instead
    Rewrite options until the key is longest in about one item in k.
    """
    items = _choice_items(bctx)
    if len(items) < 5:
        return
    for lang in bctx.languages:
        n = hits = 0
        chance = 0.0
        for c in items:
            if lang not in c.lengths:
                continue
            n += 1
            chance += 1 / c.k
            lengths = list(c.lengths[lang])
            key = lengths.pop(c.key)
            # strictly longest, of distractors with some visible text (`key_length_cue` at 1.0)
            if key > max(lengths) > 0:
                hits += 1
        if n < 5:
            continue
        p = binom_sf(hits, n, chance / n)
        if p < 0.05:
            yield Hit(
                ("languages",),
                f"in {lang!r} the key is the longest option in {hits} of {n} items "
                f"(chance: {chance:.1f}; binomial p={p:.4f})",
            )


#: The options a test-wise student picks once absolute terms are dropped: the longest, and
#: the shortest (keys trimmed against the length cue teach the reverse cue).
_PICKS: tuple[tuple[str, Callable[[Iterable[int]], int]], ...] = (("longest", max),
                                                                  ("shortest", min))
#: One-sided z for p < 0.005: each of the two strategies at half of 1%, so the rule as a whole
#: flags a bank without cues about once in a hundred (Bonferroni).
_TESTWISE_Z = 2.576


@bank_rule(
    "BK007", "testwise-strategy", "warning",
    key_risk="No: a test-wise strategy scores above chance.",
    fix="Remove the cues the strategy uses: absolute terms in distractors, and keys that are "
    "the longest (or the shortest) option more often than chance.",
)
def testwise_strategy(bctx: BankContext) -> Iterator[Hit]:
    """## What it does
    Plays a test-wise student who knows nothing: drop options with absolute terms (unless all
    have them), then pick the longest remaining option (ties split); and, as a second
    student, the shortest. Flags a language where either strategy's expected score is well
    above chance (z >= 2.58, p < 0.005 for each of the two, about p < 0.01 for the pair, and
    at least 1.5 times chance) over five or more items.

    ## Why is this bad?
    The bank then measures test-wiseness, not knowledge: a student who never studied scores
    like one who did on exactly the items that carry the cues. Trimming every key so that it
    is never the longest option only moves the cue: "pick the shortest" then wins.

    ## Example
    On the original seed wording "pick the longest" answers 6 of 8 items correctly; chance is
    2. A bank whose keys were all shortened until each is the shortest option is flagged for
    "pick the shortest".

    ## Use instead
    Fix the cues that `absolute-term-cue` and `key-is-longest` report, and vary the key's
    length (lengthen some keys rather than pad distractors), until both strategies score near
    chance.
    """
    items = _choice_items(bctx)
    if len(items) < 5:
        return
    for lang in bctx.languages:
        scores = dict.fromkeys((name for name, _ in _PICKS), 0.0)
        chance = var = 0.0
        n = 0
        for c in items:
            if lang not in c.lengths:
                continue
            lengths = c.lengths[lang]
            k = len(lengths)
            kept = [i for i, a in enumerate(c.absolute[lang]) if not a] or range(k)
            n += 1
            chance += 1 / k
            var += (1 / k) * (1 - 1 / k)
            for name, pick in _PICKS:
                chosen = pick(lengths[i] for i in kept)
                top = [i for i in kept if lengths[i] == chosen]
                if c.key in top:
                    scores[name] += 1 / len(top)
        if n < 5:
            continue
        # the better strategy only (when the absolute terms leave one option, both win)
        name = max(scores, key=scores.__getitem__)  # "longest" on a tie
        score = scores[name]
        z = z_score(score, chance, var)
        if z >= _TESTWISE_Z and score >= 1.5 * chance:
            yield Hit(
                ("languages",),
                f"in {lang!r} a test-wise strategy (drop absolute terms, pick the {name}) "
                f"scores {score:.1f} of {n} items; chance is {chance:.1f} (z={z:.1f})",
            )


#: The rules that read a word list of the item's language, and that list (a language without
#: one is skipped by the rule).
WORD_LISTS: dict[str, dict[str, object]] = {
    "ST009": dict(LETTER_NOUNS), "WR002": dict(ALL_NONE), "WR003": dict(ABSOLUTE),
    "WR004": dict(NEGATIVE), "WR005": dict(STOPWORDS), "WR008": dict(STOPWORDS),
    "WR010": dict(ABSOLUTE_STATEMENT), "BK007": dict(ABSOLUTE),
}


@bank_rule(
    "BK008", "language-without-word-list", "info",
    key_risk="No: it says which checks did not run.",
    fix="Lint the other rules' findings for this language by review; word lists for more "
    "languages are welcome (src/dpassess/lint/words.py).",
)
def language_without_word_list(bctx: BankContext) -> Iterator[Hit]:
    """## What it does
    Says once per bank, for each language of its items that has no word list, which of the
    selected rules skip that language (the wording rules read lists of absolute, negative
    and function words per language; dpassess has lists for English and Indonesian).

    ## Why is this bad?
    A rule that skips a language silently looks like a rule that passed: an author of a
    French bank would read "no findings" as "no absolute terms".

    ## Example
    A bank with `languages: [en, fr]`.

    ## Use instead
    Nothing to change in the bank: the finding says which checks to do by hand.
    """
    selected = {r.code for r in bctx.config.rules()}
    langs = dict.fromkeys(bctx.languages)
    for f in bctx.features:
        langs.update(dict.fromkeys(f.languages))
    for lang in langs:
        base = lang.split("-")[0]
        skipped = [c for c, lists in WORD_LISTS.items() if c in selected and base not in lists]
        if skipped:
            yield Hit(("languages",), f"no word list for {lang!r}: {', '.join(skipped)} skipped")
