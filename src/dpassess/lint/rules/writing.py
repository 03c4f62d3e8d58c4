"""Item-writing flaw rules (WR): cues that let a test-wise student answer without knowing.

After Haladyna, Downing & Rodriguez (2002), the NBME item-writing guide and Moore et al. (2023).
Every rule reads glossary-masked words, so the term `All-reduce` is not the absolute word `all`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise

from dpassess.lint.context import ItemContext, LangView
from dpassess.lint.registry import CHOICE, Hit, rule
from dpassess.lint.text import Phrases, gated_finditer, quote, words
from dpassess.lint.words import (
    ABSOLUTE,
    ABSOLUTE_STATEMENT,
    ALL_NONE,
    CONSONANT_SOUND,
    NEGATIVE,
    STOPWORDS,
    VOWEL_SOUND,
)
from dpassess.model import ChoiceItem, Item, MultipleResponse, SingleChoice, TrueFalse


def _base(lang: str) -> str:
    return lang.split("-")[0]


def key_length_cue(v: LangView, key: str, distractors: list[str], ratio: float) -> tuple[int, int] | None:
    """(key length, longest distractor length) when the key is longest by `ratio`, else None."""
    if key not in v.options or not distractors:
        return None
    k = len(v.options[key])
    d = max(len(v.options[o]) for o in distractors)
    # distractors with no visible text (only an image, say) have no length to compare
    return (k, d) if d and k > d and k >= ratio * d else None


@rule(
    "WR001", "key-is-longest", "warning",
    key_risk="No: a cue lets a guess score; right answers stay right.",
    fix="Shorten the key or give the distractors the same detail, so length does not point to it.",
    items=(SingleChoice,),
)
def key_is_longest(ctx: ItemContext[SingleChoice]) -> Iterator[Hit]:
    """## What it does
    Flags a single-choice item whose key is the longest option by a clear margin: strictly
    longest and at least `key-longest-ratio` (default 1.25) times the longest distractor, in
    characters of visible text, in any language.

    ## Why is this bad?
    Item writers qualify the correct answer until it is unarguable and leave the distractors
    short. "Pick the longest" is the best-known test-wise strategy (Haladyna et al. 2002, rule
    23: keep options about equal in length).

    ## Example
    ```yaml
    options:
      a: Broadcast
      b: All-reduce, which averages the gradients across all GPUs after each backward pass
      c: Scatter
    ```

    ## Use instead
    ```yaml
    options:
      a: Broadcast, which copies one GPU's parameters to the others
      b: All-reduce, which averages the gradients across the GPUs
      c: Scatter, which hands each GPU a different slice of the data
    ```
    """
    if len(ctx.item.key) != 1:
        return
    key, dis, ratio = ctx.item.key[0], ctx.distractors, ctx.config.key_longest_ratio
    for v in ctx.views():
        cue = key_length_cue(v, key, dis, ratio)
        if cue:
            yield Hit(
                ("text", v.lang, "options", key),
                f"the key is the longest option in {v.lang!r}: {cue[0]} characters against "
                f"at most {cue[1]} ({cue[0] / cue[1]:.2f}x)",
            )


_ALL_NONE = {lang: Phrases(p) for lang, p in ALL_NONE.items()}


@rule(
    "WR002", "all-none-of-the-above", "warning",
    key_risk="No: the option is a cue, not a change of the key.",
    fix="Replace the option with a plausible distractor that states a specific claim.",
    items=CHOICE,
)
def all_none_of_the_above(ctx: ItemContext[ChoiceItem]) -> Iterator[Hit]:
    """## What it does
    Finds options such as "all of the above", "none of the above", "semua jawaban benar",
    "tidak ada jawaban yang benar".

    ## Why is this bad?
    "All of the above" is answered by spotting two correct options; "none of the above" tells
    nothing about what the student knows when it is the key. Both break when options are
    shuffled ("above" is no longer above). Haladyna et al. (2002) advise against both.

    ## Example
    ```yaml
    options:
      d: All of the above
    ```

    ## Use instead
    ```yaml
    options:
      d: Reduce-scatter followed by all-gather
    ```
    """
    for v in ctx.views():
        pat = _ALL_NONE.get(_base(v.lang))
        if pat is None or not v.any_option(pat):
            continue
        mask = ctx.bank.glossary.mask
        for oid, text in v.options.items():
            m = pat.search(mask(text, v.lang))
            if m:
                yield Hit(("text", v.lang, "options", oid), f"option {oid!r} is {m.group(0)!r}")


#: The absolute terms of each language with a list (read by `absolute_terms` and by BK007).
ABSOLUTE_TERMS = {lang: Phrases(p) for lang, p in ABSOLUTE.items()}
_ABSOLUTE_STATEMENT = {lang: Phrases(p) for lang, p in ABSOLUTE_STATEMENT.items()}


def absolute_terms(v: LangView, oid: str) -> list[str]:
    """Absolute terms in an option (glossary terms masked)."""
    pat = ABSOLUTE_TERMS.get(_base(v.lang))
    if pat is None or not v.any_option(pat) or oid not in v.options or not pat.search(v.options[oid]):
        return []
    return [m.group(0).lower() for m in pat.finditer(v.bank.glossary.mask(v.options[oid], v.lang))]


@rule(
    "WR003", "absolute-term-cue", "warning",
    key_risk="No: a cue lets a guess score.",
    fix="Drop the absolute word (only, always, never, hanya, selalu...) or state the claim "
    "without it; absolute distractors are eliminated without knowledge.",
    items=CHOICE,
)
def absolute_term_cue(ctx: ItemContext[ChoiceItem]) -> Iterator[Hit]:
    """## What it does
    Flags distractors using absolute terms (English: only, always, never, all, none...;
    Indonesian: hanya, selalu, tidak pernah, semua...) when the key uses none.

    ## Why is this bad?
    Test-wise students know that sweeping claims are usually false and eliminate such options
    without knowing the content (Haladyna et al. 2002, rule 28: avoid specific determiners).
    Glossary terms are masked first: `All-reduce` is not `all`.

    ## Example
    ```yaml
    options:
      a: Message size and topology          # key
      b: Only the random seed and learning rate
    ```

    ## Use instead
    ```yaml
    options:
      a: Message size and topology          # key
      b: The random seed and learning rate
    ```
    """
    if not ctx.item.key:
        return
    for v in ctx.views():
        if any(absolute_terms(v, k) for k in ctx.item.key):
            continue
        all_none = _ALL_NONE.get(_base(v.lang))
        for oid in ctx.distractors:
            if all_none is not None and all_none.search(v.options[oid]):
                continue  # "all of the above": WR002's finding
            found = absolute_terms(v, oid)
            if found:
                yield Hit(
                    ("text", v.lang, "options", oid),
                    f"distractor {oid!r} uses the absolute term {found[0]!r} in {v.lang!r} "
                    "and the key uses none",
                )


_NEG = {
    lang: re.compile(r"(?<![\w'’-])(" + "|".join(map(re.escape, ws)) + r")(?![\w'’-])", re.I)
    for lang, ws in NEGATIVE.items()
}
#: The negative words alone, lower-case ASCII: in an ASCII stem, lower-cased, `_NEG` matches
#: only where one of them starts, and the regex engine skips there in C (see `gated_finditer`;
#: `_NEG` starts with a lookbehind, so alone it is tried at every position).
_NEG_LEAD = {
    lang: re.compile("|".join(map(re.escape, ws)))
    for lang, ws in NEGATIVE.items()
    if all(w.isascii() and w == w.lower() for w in ws)
}
_EMPHASIS = re.compile(
    r"\*\*.+?\*\*|__.+?__|(?<![\w*])\*[^*\n]+\*|(?<![\w_])_[^_\n]+_"
    r"|<(b|strong|em|i|u)\b[^>]*>.*?</\1>",
    re.S | re.I,
)


@rule(
    "WR004", "negative-stem", "warning",
    key_risk="No: a missed negation can make a student answer wrong, but the key is right; the "
             "emphasis makes the question read as graded.",
    fix="Ask the question positively, or emphasise the negative word (NOT, **not**, KECUALI).",
)
def negative_stem(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    Finds negative words in the stem (not, except, least; tidak, kecuali, bukan) that are not
    emphasised in CAPITALS or Markdown bold/italics.

    ## Why is this bad?
    Students read past an unemphasised "not" and answer the opposite question; the item then
    measures reading speed. If a negative stem is needed, the NBME guide asks to emphasise it.

    ## Example
    ```yaml
    stem: Which of these is not a collective operation?
    ```

    ## Use instead
    ```yaml
    stem: Which of these is **NOT** a collective operation?
    ```
    """
    for lang, c in ctx.item.text.items():
        pat = _NEG.get(_base(lang))
        if pat is None:
            continue
        lead = _NEG_LEAD.get(_base(lang))
        found = (
            gated_finditer(lead, pat, c.stem.lower(), c.stem)
            if lead is not None and c.stem.isascii() else pat.finditer(c.stem)
        )
        spans = None  # emphasis, found only once a negative word is
        for m in found:
            word = m.group(1)
            if len(word) > 1 and word.isupper():
                continue
            if spans is None:
                spans = [e.span() for e in _EMPHASIS.finditer(c.stem)]
            if any(a <= m.start() < b for a, b in spans):
                continue
            yield Hit(("text", lang, "stem"), f"negative word {word!r} in the stem is not emphasised")
            break


def _content(ws: tuple[str, ...], lang: str) -> set[str]:
    stop = STOPWORDS.get(_base(lang), frozenset())
    return {w for w in ws if len(w) >= 4 and w not in stop and not w.isdigit()}


def _may_hold(text: str, ws: set[str]) -> bool:
    """False when none of `ws` can be a word of `text` glossary-masked (`LangView.stem_words`):
    the masked text is pieces of `text` between blanks, so in ASCII text (lower-cased one
    character at a time) each of its words is a substring of `text.lower()`."""
    if not text.isascii():
        return True
    low = text.lower()
    return any(w in low for w in ws)


@rule(
    "WR005", "stem-word-in-key", "warning",
    key_risk="No: a cue lets a guess score.",
    fix="Reword the key (or the stem) so that it does not echo a stem word no distractor uses.",
    items=(SingleChoice,),
)
def stem_word_in_key(ctx: ItemContext[SingleChoice]) -> Iterator[Hit]:
    """## What it does
    Flags a content word of the stem that reappears in the key and in no distractor (a "clang
    association"). Glossary terms and short function words are ignored.

    ## Why is this bad?
    Students match the word and pick the key without understanding (Haladyna et al. 2002,
    rule 31: avoid clang associations).

    ## Example
    ```yaml
    stem: Which collective synchronises gradients?
    options:
      a: The one that synchronises gradients across GPUs   # key
      b: Broadcast from rank zero
    ```

    ## Use instead
    ```yaml
    stem: Which collective synchronises gradients?
    options:
      a: All-reduce                                        # key
      b: Broadcast
    ```
    """
    if len(ctx.item.key) != 1 or not ctx.distractors:
        return
    key = ctx.item.key[0]
    for v in ctx.views():
        if key not in v.option_words:
            continue
        # The key's content words that no distractor uses; the cue is the stem's among them
        # (the stem's words are found only when one of them may be there).
        unshared = _content(v.option_words[key], v.lang)
        for o in ctx.distractors:
            unshared -= set(v.option_words.get(o, ()))
        if not unshared or not _may_hold(v.stem, unshared):
            continue
        in_key = unshared.intersection(v.stem_words)
        if in_key:
            ws = ", ".join(repr(w) for w in sorted(in_key))
            yield Hit(
                ("text", v.lang, "options", key),
                f"the key repeats the stem word{'s' if len(in_key) > 1 else ''} {ws} "
                f"in {v.lang!r}, which no distractor uses",
            )


_NUMBER = re.compile(r"^\s*([-+−]?\d[\d.,\s]*)\s*(%|[^\W\d_]{1,6}\.?)?\s*$")


def _number(text: str, lang: str) -> float | None:
    m = _NUMBER.match(text)
    if not m:
        return None
    s = m.group(1).replace(" ", "").replace("−", "-")
    if _base(lang) == "id":  # 1.000,5 -> 1,000.5
        s = s.replace(".", "\0").replace(",", ".").replace("\0", ",")
    s = s.replace(",", "")
    try:
        return float(s)
    except ValueError:
        return None


@rule(
    "WR006", "numeric-order", "warning",
    key_risk="No: options out of order slow students down.",
    fix="List numeric options in ascending (or descending) order and set `shuffle: false`.",
    items=CHOICE,
)
def numeric_order(ctx: ItemContext[ChoiceItem]) -> Iterator[Hit]:
    """## What it does
    Checks that an item whose options are all numbers lists them in order and is not shuffled.

    ## Why is this bad?
    Numbers in order let students find their answer and remove a source of error; out of
    order (or shuffled) they make the student search, and extreme values stand out
    (NBME guide: put numeric options in logical order).

    ## Example
    ```yaml
    options: {a: "64", b: "8", c: "512", d: "16"}
    ```

    ## Use instead
    ```yaml
    shuffle: false
    options: {a: "8", b: "16", c: "64", d: "512"}
    ```
    """
    if len(ctx.item.options) < 3:
        return
    for v in ctx.views():
        values = [_number(t, v.lang) for t in v.options.values()]
        if any(x is None for x in values):
            continue
        nums = [x for x in values if x is not None]
        ordered = nums == sorted(nums) or nums == sorted(nums, reverse=True)
        if not ordered:
            yield Hit(("text", v.lang, "options"), "numeric options are not in order")
        elif ctx.item.shuffle:
            yield Hit(("shuffle",), "numeric options are in order but shuffling will undo it")
        return


def _vowel_sound(word: str) -> bool:
    w = word.lower()
    if w.startswith(VOWEL_SOUND):
        return True
    if w.startswith(CONSONANT_SOUND):
        return False
    if len(word) > 1 and word.isupper():  # acronyms read by letter: an MPI, a GPU
        return word[0] in "AEFHILMNORSX"
    return w[:1] in "aeiou"


_ARTICLE_END = re.compile(r"\b(a|an)\s*(?:_{2,}|\.{3}|…)?\s*[:?]?\s*$", re.I)
_FIRST_WORD = re.compile(r"[A-Za-z0-9]+")


@rule(
    "WR007", "article-cue", "warning",
    key_risk="No: a cue lets a guess score.",
    fix="End the stem before the article and start each option with its own 'a' or 'an'.",
    items=CHOICE,
)
def article_cue(ctx: ItemContext[ChoiceItem]) -> Iterator[Hit]:
    """## What it does
    In English, flags a stem ending in "a" or "an" when some options do not fit that article
    ("an" before a consonant sound, "a" before a vowel sound). Indonesian has no articles, so
    the rule checks English text only.

    ## Why is this bad?
    A grammatical mismatch marks an option as wrong without any knowledge (Haladyna et al.
    2002, rule 29: avoid grammatical inconsistencies).

    ## Example
    ```yaml
    stem: Gradients are combined with an
    options: {a: all-reduce, b: broadcast, c: scatter}
    ```

    ## Use instead
    ```yaml
    stem: Which collective combines the gradients?
    options: {a: An all-reduce, b: A broadcast, c: A scatter}
    ```
    """
    for lang in ctx.item.text:
        if _base(lang) != "en":
            continue
        v = ctx.view(lang)
        m = _ARTICLE_END.search(v.stem)
        if not m:
            continue
        want_vowel = m.group(1).lower() == "an"
        bad = []
        for oid, text in v.options.items():
            w = _FIRST_WORD.search(text)
            if w and _vowel_sound(w.group(0)) != want_vowel:
                bad.append(oid)
        if bad:
            yield Hit(
                ("text", lang, "stem"),
                f"the stem ends in {m.group(1)!r}, which does not fit option(s) {', '.join(bad)}",
            )


@rule(
    "WR008", "repeated-option-opening", "warning",
    key_risk="No: repeated words slow reading.",
    fix="Move the words every option starts with into the stem.",
    items=CHOICE,
)
def repeated_option_opening(ctx: ItemContext[ChoiceItem]) -> Iterator[Hit]:
    """## What it does
    Flags items whose options all start with the same words, when those words include a
    content word (not only "the", "by", "dengan", and not digits: `0.5`, `0.1`, `0.6` share no
    word), unless each option is those words and a number ("Slot 3", "Slot 6").

    ## Why is this bad?
    Repeated words belong in the stem: students read them once instead of four times, and the
    options then differ only where it matters (NBME guide: put as much as possible in the stem).

    ## Example
    ```yaml
    options:
      a: The gradients are averaged
      b: The gradients are broadcast
      c: The gradients are discarded
    ```

    ## Use instead
    ```yaml
    stem: What happens to the gradients after the backward pass? They are...
    options: {a: averaged, b: broadcast, c: discarded}
    ```
    """
    if len(ctx.item.options) < 3:
        return
    for v in ctx.views():
        # unmasked: a glossary term two options start with belongs in the stem too, and masking
        # the terms that tell options apart would make them all "the prefix"
        lists = [words(t) for t in v.options.values()]
        if not all(lists):
            continue
        prefix: list[str] = []
        for group in zip(*lists, strict=False):
            if len(set(group)) != 1:
                break
            prefix.append(group[0])
        if len(prefix) >= min(len(x) for x in lists):
            continue  # an option is the prefix itself: duplicates are another rule
        if all(all(w.isdigit() for w in x[len(prefix):]) for x in lists):
            continue  # a label and a number ("Slot 6", "Rp 100"): nothing to move
        stop = STOPWORDS.get(_base(v.lang), frozenset())
        if any(w not in stop and not w.isdigit() for w in prefix):
            yield Hit(
                ("text", v.lang, "options"),
                f"every option starts with {' '.join(prefix)!r} in {v.lang!r}",
            )


UNEVEN = 3.0


@rule(
    "WR009", "uneven-option-length", "info",
    key_risk="No: uneven options are a cue.",
    fix="Bring the options to a similar length and level of detail.",
    items=CHOICE,
)
def uneven_option_length(ctx: ItemContext[ChoiceItem]) -> Iterator[Hit]:
    """## What it does
    Reports items whose longest option is three or more times as long as the shortest (in
    visible characters), in any language.

    ## Why is this bad?
    Very uneven options draw attention to the odd one out, whichever it is; options should be
    homogeneous in length and content (Haladyna et al. 2002, rule 22).

    ## Example
    ```yaml
    options:
      a: NCCL
      b: A library that implements collectives over NVLink, PCIe and InfiniBand
    ```

    ## Use instead
    ```yaml
    options:
      a: NCCL, NVIDIA's collective communication library
      b: Gloo, a collective library that also runs on CPUs
    ```
    """
    if len(ctx.item.options) < 2:
        return
    for v in ctx.views():
        lengths = {oid: len(t) for oid, t in v.options.items()}
        short = min(lengths, key=lambda o: lengths[o])
        long = max(lengths, key=lambda o: lengths[o])
        if lengths[short] and lengths[long] >= UNEVEN * lengths[short]:
            yield Hit(
                ("text", v.lang, "options", long),
                f"option {long!r} is {lengths[long] / lengths[short]:.1f}x as long as option "
                f"{short!r} in {v.lang!r} ({quote(v.options[short], 30)})",
            )


@rule(
    "WR010", "absolute-statement", "warning",
    key_risk="No: a cue lets a guess score.",
    fix="State the claim without the absolute word (always, never, all, selalu, tidak pernah, "
    "semua...), or make the item a single-choice question.",
    items=(TrueFalse,),
)
def absolute_statement(ctx: ItemContext[TrueFalse]) -> Iterator[Hit]:
    """## What it does
    Flags a true/false statement that uses an absolute term (English: always, never, all,
    none, impossible...; Indonesian: selalu, tidak pernah, semua, mustahil...), glossary
    terms masked. "Only" and "hanya" pass: they state conditions ("only on a sorted list").

    ## Why is this bad?
    Test-wise students answer "false" to sweeping statements without reading them: such
    statements are usually false (Haladyna et al. 2002: avoid specific determiners), so the
    item measures test-wiseness.

    ## Example
    ```yaml
    type: true_false
    text: {en: {stem: All-reduce always needs a ring of GPUs.}}
    ```

    ## Use instead
    ```yaml
    type: true_false
    text: {en: {stem: NCCL can run all-reduce over a tree of GPUs.}}
    ```
    """
    for lang, content in ctx.item.text.items():
        pat = _ABSOLUTE_STATEMENT.get(_base(lang))
        if pat is None or not pat.search(content.stem):
            continue
        m = pat.search(ctx.bank.glossary.mask(content.stem, lang))
        if m:
            yield Hit(("text", lang, "stem"),
                      f"the statement uses the absolute term {m.group(0).lower()!r} in {lang!r}")


#: A number at the start of an option (after a currency sign or an opening bracket): `24 GB`,
#: `8,25 GB`, `-1.5`, `$3`, `(2) ...`; its separators are read as the option's language writes
#: them (`markup.numformat.SEPARATORS`; other languages: a point).
_LEADING_NUMBER = re.compile(r"\s*[(\[$€£]?\s*([-−]?\d+(?:[.,\u00a0\u202f]\d+)*)(?![\w])")


#: The items whose options may be quantities (a true/false item's are words).
_NUMBERED: tuple[type[SingleChoice | MultipleResponse], ...] = (SingleChoice, MultipleResponse)


def _written(text: str) -> str:
    """The number an option starts with, as written."""
    m = _LEADING_NUMBER.match(text)
    return m.group(1) if m else ""


def _leading_number(text: str, lang: str) -> float | None:
    from dpassess.markup.numformat import SEPARATORS

    m = _LEADING_NUMBER.match(text)
    if m is None:
        return None
    point, group = SEPARATORS.get(lang.split("-")[0], (".", ","))
    raw = m.group(1).replace("−", "-").replace("\u00a0", "").replace("\u202f", "")
    raw = raw.replace(group, "").replace(point, ".")
    try:
        return float(raw)
    except ValueError:  # "1.2.3": not one number
        return None


@rule(
    "WR011", "numeric-options-unordered", "info",
    key_risk="No: the order of the options costs time, not marks.",
    fix="List the options in numerical order (ascending or descending) and set `shuffle: "
    "false`, so every form prints them in that order.",
    items=_NUMBERED,
)
def numeric_options_unordered(ctx: ItemContext[SingleChoice | MultipleResponse]) -> Iterator[Hit]:
    """## What it does
    Finds a choice item whose options all start with a number (`24 GB`, `8,25 GB`, `3`) and
    either are not listed in numerical order, ascending or descending, in the default
    language, or are listed in order but shuffled on the forms (`shuffle` is true, the
    default). Numbers are read as each language writes them (`8,25` in Indonesian).

    ## Why is this bad?
    Numeric options belong in numerical order (Haladyna et al. 2002; the NBME item-writing
    guide): a student then finds a computed value without hunting, and no option stands out
    by its place. Shuffled, "8.25 / 3 / 24 GB" reads as noise and costs time.

    ## Example
    ```yaml
    options: [all-sharded, replicated, optimizer-sharded]   # 3 GB, 24 GB, 8.25 GB
    ```

    ## Use instead
    ```yaml
    options: [replicated, optimizer-sharded, all-sharded]   # 24 GB, 8.25 GB, 3 GB
    shuffle: false
    ```
    """
    item = ctx.item
    if len(item.options) < 3:
        return
    lang = ctx.bank.default_language
    if lang not in item.text:
        return
    texts = item.text[lang].options
    ids = [o.id for o in item.options]
    values = [_leading_number(texts.get(o, ""), lang) for o in ids]
    if any(v is None for v in values):
        return
    numbers = [v for v in values if v is not None]
    steps = list(pairwise(numbers))
    ordered = all(a <= b for a, b in steps) or all(a >= b for a, b in steps)
    if not ordered:
        yield Hit(("options",), f"the options are numbers, listed out of numerical order in "
                                f"{lang!r}: {' / '.join(_written(texts[o]) for o in ids)}")
    elif item.shuffle:
        yield Hit(("shuffle",) if "shuffle" in item.model_fields_set else ("options",),
                  "the options are numbers in numerical order, but `shuffle` is on: the forms "
                  "print them in a random order",
                  "Set `shuffle: false`: the assembler balances the key positions around it.")
