"""Translation rules (TR): every language complete, faithful in what must not change, really in
its language, and using the bank's glossary."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from dpassess.diagnostics import FieldPath
from dpassess.lint import langid
from dpassess.lint.context import ItemContext
from dpassess.lint.registry import Hit, rule
from dpassess.lint.text import (
    _CODE,
    _IMG,
    has_digit,
    numbers,
    plain,
    quote,
    without_code,
    words,
)
from dpassess.markup.maths import find_maths
from dpassess.model import Item


def _fields(ctx: ItemContext[Item], lang: str) -> dict[FieldPath, str]:
    return ctx.field_map(lang)


def _pairs(ctx: ItemContext[Item]) -> list[tuple[str, str, FieldPath, str, str]]:
    return ctx.pairs


def _label(sub: FieldPath) -> str:
    return ".".join(str(s) for s in sub)


@rule(
    "TR001", "missing-translation", "error",
    key_risk="Yes: students of the missing language get no item, or an empty one.",
    fix="Translate the field into every language the bank requires.",
)
def missing_translation(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    Checks that every language the bank requires is present in the item and that every field
    written in one language (title, feedback per option, explanation) is written in all.

    ## Why is this bad?
    A student taking the Indonesian form sees the English feedback, or none; a multi-language
    Moodle export shows an empty block. The option ids and the key are shared by all
    languages in the item model, so they cannot differ; the text can be missing.

    ## Example
    ```yaml
    text:
      en: {stem: ..., options: ..., explanation: Each replica ...}
      id: {stem: ..., options: ...}
    ```

    ## Use instead
    ```yaml
    text:
      en: {stem: ..., options: ..., explanation: Each replica ...}
      id: {stem: ..., options: ..., explanation: Setiap replika ...}
    ```
    """
    text = ctx.item.text
    for lang in ctx.bank.languages:
        if lang not in text:
            yield Hit(("text",), f"required language {lang!r} is missing")
    have: dict[FieldPath, str] = {}
    for lang in text:
        for sub in _fields(ctx, lang):
            have.setdefault(sub, lang)
    for lang in text:
        mine = _fields(ctx, lang)
        for sub, other in have.items():
            if sub not in mine and sub[0] not in ("options", "answers"):
                loc: FieldPath = ("text", lang, *sub[:1])
                yield Hit(loc, f"{_label(sub)} is written in {other!r} but not in {lang!r}")


@rule(
    "TR002", "numbers-differ", "error",
    key_risk="Yes: a number changed in translation changes the question, and the key may be right "
             "for one language only.",
    fix="Use the same numbers in every language (digits, not words).",
)
def numbers_differ(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    Compares the numbers (runs of digits) of each field across languages: the translation
    must use the same numbers as the bank's default language. Thousand and decimal separators
    may differ (1,000.5 and 1.000,5 match).

    ## Why is this bad?
    A number changed in translation changes the question: students of one language answer a
    different item, and the key may be wrong for them.

    ## Example
    ```yaml
    en: {stem: With 8 GPUs and a batch of 32 ...}
    id: {stem: Dengan 4 GPU dan batch 32 ...}
    ```

    ## Use instead
    ```yaml
    en: {stem: With 8 GPUs and a batch of 32 ...}
    id: {stem: Dengan 8 GPU dan batch 32 ...}
    ```
    """
    if not ctx.digits:
        return
    for ref, lang, sub, a, b in _pairs(ctx):
        if a == b:
            continue
        na, nb = numbers(a), numbers(b)
        if na != nb:
            diff = sorted(na ^ nb, key=lambda s: (len(s), s))
            yield Hit(
                ("text", lang, *sub),
                f"{_label(sub)}: numbers differ from {ref!r} ({', '.join(diff)})",
            )


#: A decimal comma in maths (`0,75`, `0{,}75`): written as a point for the comparison, since a
#: language's decimal separator is not a change of the formula.
_DECIMAL_COMMA = re.compile(r"(?<=\d)(?:\{,\}|,)(?=\d)")


def _markup(text: str) -> dict[str, set[str]]:
    return {
        "code": {m.group(2).strip() for m in _CODE.finditer(text)},
        "maths": {_DECIMAL_COMMA.sub(".", " ".join(m.tex.split())) for m in find_maths(text)}
        if _may_hold_maths(text) else set(),
        "images": {m.group(0).split("](", 1)[1][:-1] for m in _IMG.finditer(text)},
    }


_DIFFERS = {"code": "the code differs", "maths": "the maths differs",
            "images": "the images differ"}


def _may_hold_maths(text: str) -> bool:
    return "$" in text or "\\(" in text or "\\[" in text


def _has_markup(text: str) -> bool:
    return "`" in text or "![" in text or _may_hold_maths(text)


@rule(
    "TR003", "markup-differs", "error",
    key_risk="Yes: a formula or code that differs asks a different question in one language.",
    fix="Keep code spans, maths and images identical in every language; translate only prose.",
)
def markup_differs(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    Compares the code spans and blocks, the TeX of the maths (`$...$`, `\\(...\\)`, `$$...$$`,
    `\\[...\\]`: the delimiters and spacing may differ) and image addresses of each field across
    languages; they must be the same in every language (a decimal comma in the maths of a
    language that writes one, `0,75` or `0{,}75`, is the same number as `0.75`).

    ## Why is this bad?
    Code and formulas are not translated; a difference is a typo in one language (a
    different function name, a lost exponent) or an image shown to one group only.

    ## Example
    ```yaml
    en: {stem: What does `no_sync()` skip?}
    id: {stem: Apa yang dilewati oleh `nosync()`?}
    ```

    ## Use instead
    ```yaml
    en: {stem: What does `no_sync()` skip?}
    id: {stem: Apa yang dilewati oleh `no_sync()`?}
    ```
    """
    if not _has_markup(ctx.joined):
        return
    for ref, lang, sub, a, b in _pairs(ctx):
        if not (_has_markup(a) or _has_markup(b)):
            continue
        ma, mb = _markup(a), _markup(b)
        for kind in ma:
            if ma[kind] != mb[kind]:
                missing = sorted(ma[kind] - mb[kind]) or sorted(mb[kind] - ma[kind])
                yield Hit(
                    ("text", lang, *sub),
                    f"{_label(sub)}: {_DIFFERS[kind]} from {ref!r} ({quote(missing[0], 40)})",
                )


@lru_cache(maxsize=256)
def _symbol_pattern(symbol: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(symbol)}(?![\w])")


@rule(
    "TR004", "symbol-missing", "error",
    key_risk="Yes: a renamed symbol leaves the options of one language pointing at nothing.",
    fix="Use each declared symbol (the item's `symbols`) unchanged in every language.",
)
def symbol_missing(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    Checks that each symbol declared in the item's `symbols` (for example `B`, `W`) appears in
    a field in every language where it appears in the default language, and the other way.

    ## Why is this bad?
    Symbols name the quantities the item is about; a translator who renames `W` to `P`
    (pekerja) or drops it leaves students of one language with an unanswerable item.

    ## Example
    ```yaml
    symbols: [B, W]
    en: {options: {a: B multiplied by W}}
    id: {options: {a: B dikali P}}
    ```

    ## Use instead
    ```yaml
    symbols: [B, W]
    en: {options: {a: B multiplied by W}}
    id: {options: {a: B dikali W}}
    ```
    """
    if not ctx.item.symbols:
        return
    for ref, lang, sub, a, b in _pairs(ctx):
        for s in ctx.item.symbols:
            pat = _symbol_pattern(s)
            in_a, in_b = bool(pat.search(a)), bool(pat.search(b))
            if in_a != in_b:
                where = lang if in_a else ref
                yield Hit(
                    ("text", lang, *sub),
                    f"{_label(sub)}: symbol {s!r} is missing in {where!r}",
                )


@rule(
    "TR005", "glossary-not-kept", "warning",
    key_risk="No: an ad-hoc rendering hides the term, but the question is the same.",
    fix="Use the glossary's form of the term (bank.yaml, `glossary`).",
)
def glossary_not_kept(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    For each glossary term the glossary-language text of a field uses, checks that the same
    field in every other language uses the term in an accepted form: unchanged for `keep:
    true` terms (all-reduce, GPU), else one of its `render` forms; and, when the field uses the
    term more than once, that the translation renders it as many times.

    A term is found in the glossary language as written, in its plural (`GPUs`) and in the
    forms its `inflections` list (`sharded`), whole words only: `mean` is not found in
    "meaning". In an English glossary a one-word term that is translated (not `keep`), and
    is not a verb by its ending (`standardize`, `estimate`), is not found where English uses
    the word as a verb: after `to`, a modal or a negation ("to mean",
    "doesn't mean"), in a question with *do* that ends on it ("What does it mean?"), and as
    "it means that"; "the mean", "What is their mean?" and "What does the sample mean tell
    us?" are the term. In Indonesian, a rendering counts with the clitics and particles `-nya`,
    `-lah`, `-kah`, `-pun`, `-ku`, `-mu` (`rata-ratanya`, `simpangan bakunya`), reduplicated
    (`sampel-sampel`) and in its affixed forms (`dibakukan` for `membakukan`: the words'
    roots are compared, by a small rule-based stemmer).

    ## Why is this bad?
    Learners meet the term in lectures, papers and error messages in its established form;
    an ad-hoc translation ("semua pengurangan" for all-reduce) hides what it refers to and
    makes the two language versions test different vocabulary.

    ## Example
    ```yaml
    glossary: [{term: backward pass, keep: true}]
    en: {options: {a: ... with the ongoing backward pass}}
    id: {options: {a: ... dengan proses balik yang sedang berjalan}}
    ```

    ## Use instead
    ```yaml
    id: {options: {a: ... dengan backward pass yang sedang berjalan}}
    ```
    """
    g = ctx.bank.glossary
    if not g or g.language not in ctx.item.text:
        return
    src = ctx.glossary_terms(g.language)
    if not any(f.accepted for f in src.values()):
        return  # no field uses a term
    src_text = _fields(ctx, g.language)
    for lang in ctx.item.text:
        if lang == g.language:
            continue
        mine = ctx.glossary_terms(lang)
        for sub, text in _fields(ctx, lang).items():
            s = src.get(sub)
            if s is None or not s.accepted or sub[0] == "answers":
                continue
            used = s.accepted
            source = src_text[sub]
            if "`" in source or "$" in source or "\\(" in source:
                used &= g.used(without_code(source))  # a term in code is not prose
            t = mine[sub]
            have = t.accepted
            missing = used - have
            inflected: frozenset[int] = frozenset()
            if missing:
                if ctx.may_be_wrong(lang):
                    missing -= {i for i, _ in g.wrong(text, lang)}
                inflected = frozenset(i for i in missing if g.inflected(text, lang, i))
                missing -= inflected
            for i in sorted(missing):
                term = g.terms[i]
                forms = term.accepted(lang)
                if not forms:
                    continue
                yield Hit(
                    ("text", lang, *sub),
                    f"{_label(sub)}: glossary term {term.term!r} is not rendered in {lang!r} "
                    f"(expected {' or '.join(repr(f) for f in forms)})",
                    term=term.term,
                )
            # `repeated` bounds `counts` from above: the count is only read for a term found
            # twice or more.
            if not s.repeated:
                continue
            again = used & (have | inflected) & s.repeated
            if not again:
                continue
            counts = s.counts
            for i in sorted(again):
                n = counts.get(i, 0)
                if n <= 1:
                    continue
                m = t.counts.get(i, 0)
                if m < n:  # inflected renderings count too (`antarnode`, `dibakukan`)
                    m = max(m, g.inflected_count(text, lang, i))
                if m < n:
                    term = g.terms[i]
                    yield Hit(
                        ("text", lang, *sub),
                        f"{_label(sub)}: glossary term {term.term!r} is used {n} times in "
                        f"{g.language!r} but rendered {m} time{'s' if m != 1 else ''} in {lang!r}",
                        "Render every use of the term with the glossary's form (or rephrase "
                        "both languages alike).",
                        term=term.term,
                    )


@rule(
    "TR006", "glossary-wrong-rendering", "error",
    key_risk="Yes: a declared wrong rendering names another concept (\"siaran\" is a radio "
             "broadcast, not the collective).",
    fix="Replace the wrong rendering with the glossary's form of the term.",
)
def glossary_wrong_rendering(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    Finds renderings a glossary term declares `wrong` (for example "semua pengurangan" for
    all-reduce, "siaran" for broadcast), with the clitics of the language (`siarannya`). A
    rendering of two or more words ("interval keyakinan") is an error wherever it appears; a
    one-word rendering is often an ordinary word too, so it is flagged where the
    glossary-language text of the same field uses the term (or the field has no
    glossary-language text): "hasil" is flagged only where it stands for "throughput".

    ## Why is this bad?
    These are known mistranslations, usually from machine translation; "semua pengurangan"
    means "all reductions" and no Indonesian engineer calls the operation that.

    ## Example
    ```yaml
    glossary: [{term: all-reduce, keep: true, wrong: {id: [semua pengurangan]}}]
    id: {options: {a: Dengan tumpang tindih gradien semua pengurangan ...}}
    ```

    ## Use instead
    ```yaml
    id: {options: {a: Dengan menumpangtindihkan all-reduce gradien ...}}
    ```
    """
    g = ctx.bank.glossary
    if not g or not any(ctx.may_be_wrong(lang) for lang in ctx.item.text):
        return
    src = ctx.terms(g.language) if g.language in ctx.item.text else {}
    for lang in ctx.item.text:
        if not ctx.may_be_wrong(lang):
            continue  # no wrong rendering of `lang` anywhere in the item
        for sub, text in _fields(ctx, lang).items():
            hits = g.wrong(text, lang)
            if not hits:
                continue
            used = src[sub] if lang != g.language and sub in src else None
            for i, found in hits:
                if used is not None and i not in used and len(found.split()) == 1:
                    continue  # an ordinary word ("hasil") where the term is not meant
                term = g.terms[i]
                forms = term.accepted(lang) or (term.term,)
                yield Hit(
                    ("text", lang, *sub),
                    f"{_label(sub)}: {found!r} is a wrong rendering of the glossary term "
                    f"{term.term!r} in {lang!r}",
                    f"Write {' or '.join(repr(f) for f in forms)} instead of {found!r}.",
                    term=term.term,
                )


MIN_WORDS = langid.MIN_WORDS
#: Words given to the classifier: its cost grows with the text, its accuracy stops growing.
MAX_PROBE = 24
CONFIDENCE = 0.8


def _identifiable(ctx: ItemContext[Item], lang: str, text: str) -> str | None:
    """The text to identify, or None when fewer than 3 words remain once glossary terms,
    code, maths and symbols are removed."""
    t = ctx.bank.glossary.mask(without_code(text), lang)
    ws = [w for w in words(plain(t)) if not w.isdigit()]
    if ctx.item.symbols:
        syms = {s.lower() for s in ctx.item.symbols}
        ws = [w for w in ws if w not in syms]
    return " ".join(ws[:MAX_PROBE]) if len(ws) >= MIN_WORDS else None


@rule(
    "TR007", "wrong-language", "warning",
    key_risk="No: the text is the right question in a language the student may not read.",
    fix="Translate the text into the language it is filed under (or move it to the right one).",
)
def wrong_language(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    Identifies the language of every text field (py3langid, offline, restricted to the bank's
    languages) and flags fields that read as another of the bank's languages. Strings of fewer
    than three words once glossary terms, code and symbols are removed are skipped.

    ## Why is this bad?
    An untranslated or misfiled field shows students text in a language they may not read;
    reviewers of one language never see it.

    ## Example
    ```yaml
    id:
      feedback: {a: Correct. All-reduce sums the gradients from all GPUs.}
    ```

    ## Use instead
    ```yaml
    id:
      feedback: {a: Benar. All-reduce menjumlahkan gradien dari semua GPU.}
    ```
    """
    guesser = ctx.bank.guesser
    for lang in ctx.item.text:
        base = guesser.base(lang)
        checked = False
        # Fields too short, or whose function words settle their language, are skipped (see
        # docs/lint.md); the others are identified.
        for loc, text in guesser.unsettled(ctx.fields(lang), lang):
            probe = _identifiable(ctx, lang, text)
            if probe is None:
                continue
            if not checked:
                if not guesser.knows(lang):
                    break
                checked = True
            got, p = guesser.guess(probe)
            if got is not None and got != base and p >= CONFIDENCE:
                yield Hit(loc, f"{_label(loc[2:])} reads as {got!r}, not {lang!r} (p={p:.2f})")


@rule(
    "TR008", "identical-text", "warning",
    key_risk="No: an untranslated field is readable by some students only.",
    fix="Translate the field; identical text in two languages is usually a forgotten translation.",
)
def identical_text(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    Flags a field whose text is identical in two languages, when it has three or more words
    once glossary terms, code and symbols are removed (so "All-reduce" or "B × W" pass).

    ## Why is this bad?
    Identical prose in two languages is a translation that was never made; language
    identification can miss it when the text is short or full of technical terms.

    ## Example
    ```yaml
    en: {options: {c: Message size and topology}}
    id: {options: {c: Message size and topology}}
    ```

    ## Use instead
    ```yaml
    en: {options: {c: Message size and topology}}
    id: {options: {c: Ukuran pesan dan topologi}}
    ```
    """
    for ref, lang, sub, a, b in _pairs(ctx):
        if a.strip() == b.strip() and _identifiable(ctx, lang, b) is not None:
            yield Hit(("text", lang, *sub), f"{_label(sub)} is identical to the {ref!r} text")


RATIO = 2.0
MIN_CHARS = 20


@rule(
    "TR009", "length-ratio", "info",
    key_risk="No: a lost or added clause is worth reading, not always wrong.",
    fix="Check the translation for missing or added content.",
)
def length_ratio(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    Reports fields whose translation is more than twice as long, or less than half as long,
    as the default-language text (fields of 20 or more visible characters).

    ## Why is this bad?
    Translations between Indonesian and English differ in length by 10-30%; a field twice as
    long usually carries an added hint, and one half as long lost a clause, so the two groups
    of students answer different items.

    ## Example
    ```yaml
    en: {feedback: {b: Incorrect. Broadcast copies one GPU's data and combines nothing.}}
    id: {feedback: {b: Salah.}}
    ```

    ## Use instead
    ```yaml
    id: {feedback: {b: Salah. Broadcast menyalin data satu GPU dan tidak menggabungkan apa pun.}}
    ```
    """
    for ref, lang, sub, a, b in _pairs(ctx):
        la, lb = len(a), len(b)
        if la >= MIN_CHARS and lb >= MIN_CHARS and 1 / RATIO <= lb / la <= RATIO:
            continue
        la, lb = len(plain(a)), len(plain(b))
        if min(la, lb) < MIN_CHARS and max(la, lb) < MIN_CHARS * RATIO:
            continue
        if la == 0 or lb == 0:
            continue
        r = lb / la
        if r > RATIO or r < 1 / RATIO:
            yield Hit(
                ("text", lang, *sub),
                f"{_label(sub)}: the {lang!r} text is {r:.2f}x as long as the {ref!r} text",
            )


#: A number as written in prose: digits with `.` or `,` between groups (1.000,5; 0.75; 3,14).
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)+(?![\w]|[.,]\d)")
#: Indonesian thousands grouping, with an optional decimal comma: 1.000, 12.500.000, 1.000,5.
_ID_GROUPED = re.compile(r"[1-9]\d{0,2}(?:\.\d{3})+(?:,\d+)?")
#: The languages that write a decimal comma, and the rules' word for it.
DECIMAL_COMMA = ("id",)


@rule(
    "TR010", "decimal-separator", "warning",
    key_risk="No: the number is still readable (ambiguous grouped thousands are not flagged).",
    fix="Write the decimal comma of the language (0,75 in Indonesian); keep a point only "
    "inside code or maths.",
)
def decimal_separator(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    In the text of a language that writes a decimal comma (Indonesian), finds numbers written
    with a decimal point (`0.75`, `1,000.5`) outside code spans and maths. Thousands grouped
    with points (`1.000`, `12.500`) are the language's own and pass.

    ## Why is this bad?
    Indonesian readers read the point as a thousands separator: `1.250` is one thousand two
    hundred and fifty, not one and a quarter, and a student who types the answer to a
    numerical item as the stem writes it may type the wrong separator.

    ## Example
    ```yaml
    id: {stem: Faktor beban tabel itu 0.75. Berapa slot yang terisi?}
    ```

    ## Use instead
    ```yaml
    id: {stem: Faktor beban tabel itu 0,75. Berapa slot yang terisi?}
    ```
    """
    if not ctx.digits:
        return
    for lang in ctx.item.text:
        if lang.split("-")[0] not in DECIMAL_COMMA:
            continue
        for loc, text in ctx.fields(lang):
            if loc[2] == "answers" or "." not in text or not has_digit(text):
                continue
            for m in _NUMBER.finditer(without_code(text)):
                n = m.group(0)
                if "." in n and not _ID_GROUPED.fullmatch(n):
                    yield Hit(loc, f"{_label(loc[2:])}: {n!r} is written with a decimal point in "
                                   f"{lang!r}, which writes a decimal comma")
                    break
