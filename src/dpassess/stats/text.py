"""Item texts -> loose keys, to match an LMS's plain-text rendering of a question or an option back
to the item and option it came from.

Moodle's and Canvas's reports carry no item id, only text they made from the exported HTML (tags
dropped, entities decoded, bold perhaps in capitals, choices joined with "; " or ","). A *loose key*
keeps only letters and digits, case-folded: the same for the exported text and for what the LMS
made of it, whatever the markup. A question matches an item when its key is the item's stem (and,
for Moodle, its choices) in one of the bank's languages, and only one item matches; no guessing.
"""

from __future__ import annotations

import html
import itertools
import re
import unicodedata
from collections.abc import Iterable
from typing import assert_never

import lxml.html

from dpassess.markup.markdown import to_html, to_plain
from dpassess.model import (
    TRUE_FALSE_WORDS,
    Bank,
    ChoiceGap,
    Cloze,
    Essay,
    GapContent,
    Item,
    Matching,
    MultipleResponse,
    MultipleResponseGap,
    Numerical,
    Ordering,
    ShortAnswer,
    SingleChoice,
    TrueFalse,
    is_scored,
)
from dpassess.model.items import GAP_REF

#: Most steps one search for a split of a text into option texts may take (linear time).
MAX_STEPS = 10_000
#: Most distinct question texts remembered (a Moodle download repeats each for every attempt).
CACHE = 65_536
#: Stems are looked up by their first HEAD letters and digits (shorter stems whole).
HEAD = 24
#: The "language" of a text Moodle showed with its multilang filter off: every language's text
#: one after the other (`MULTI` + the languages in their order, e.g. "*id+en").
MULTI = "*"
#: Most languages whose orders are tried for a text shown with the multilang filter off.
MAX_ORDERED = 3


def moodle_plain(source: str) -> list[str]:
    """The loose keys Moodle's plain text of a Markdown text may have: its question summary
    writes an image as `[alt text]` (the first key); an LMS that drops images, without it."""
    rendered = to_html(source)
    if "<img" not in rendered:
        return [loose(to_plain(source))]
    frag = _alt_text(lxml.html.fragment_fromstring(rendered, create_parent="div"))
    return list(dict.fromkeys([loose(frag.text_content()), loose(to_plain(source))]))


def _alt_text(frag: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """Each image of `frag` followed by its alt text in brackets, as Moodle's plain text has it."""
    for img in frag.iter("img"):
        alt = img.get("alt") or ""
        img.tail = (f" [{alt}] " if alt else " ") + (img.tail or "")
    return frag


def _blocks(source: str) -> list[str]:
    """The loose keys of a Markdown text's top-level blocks (paragraphs, lists, ...)."""
    rendered = to_html(source)
    if not rendered.strip():
        return []
    frag = _alt_text(lxml.html.fragment_fromstring(rendered, create_parent="div"))
    out = [loose(el.text_content()) for el in frag]
    return [b for b in out if b] or [loose(frag.text_content())]


def multilang_keys(sources: list[str]) -> list[str]:
    """The loose keys of one text in several languages (in this order) as Moodle shows it with
    the multilang filter off: each block's languages one after the other (a block the same in
    every language once), or each language's whole text after the other's."""
    keys = {"".join(moodle_plain(s)[0] for s in sources),
            "".join(moodle_plain(s)[-1] for s in sources)}
    blocks = [_blocks(s) for s in sources]
    if len({len(b) for b in blocks}) == 1:
        keys.add("".join(parts[0] if len(set(parts)) == 1 else "".join(parts)
                         for parts in zip(*blocks, strict=True)))
    return sorted(keys)


def loose(text: str) -> str:
    """Letters and digits of `text` only, case-folded, entities decoded (NFKC)."""
    text = unicodedata.normalize("NFKC", html.unescape(text)).casefold()
    return "".join(ch for ch in text if ch.isalnum())


def _option_texts(item: Item, lang: str) -> dict[str, str]:
    return {oid: loose(to_plain(item.option_text(lang, oid))) for oid in item.choice_ids}


def _extra_words(item: Item) -> dict[str, set[str]]:
    """Words an LMS shows for an option that are not the item's own text (the built-in words
    of a true/false item's options)."""
    out: dict[str, set[str]] = {}
    if isinstance(item, TrueFalse):
        for words in TRUE_FALSE_WORDS.values():
            for oid, word in words.items():
                out.setdefault(loose(word), set()).add(oid)
    return out


def split(key: str, parts: dict[str, set[str]], *, use_all: frozenset[str] | None = None
          ) -> list[frozenset[str]]:
    """The ways (at most two) to write `key` as a concatenation of distinct `parts` (text ->
    option ids it may stand for). With `use_all`, every one of those options exactly once."""
    found: list[frozenset[str]] = []
    steps = 0
    by_first: dict[str, list[tuple[str, str]]] = {}
    for text, oids in parts.items():
        if text:
            for oid in sorted(oids):
                by_first.setdefault(text[0], []).append((text, oid))

    def walk(pos: int, used: frozenset[str]) -> None:
        nonlocal steps
        if len(found) > 1 or steps > MAX_STEPS:
            return
        steps += 1
        if pos == len(key):
            if (use_all is None or used == use_all) and used not in found:
                found.append(used)
            return
        for text, oid in by_first.get(key[pos], ()):
            if oid not in used and key.startswith(text, pos):
                walk(pos + len(text), used | {oid})

    walk(0, frozenset())
    return found


def _summary_stem(item: Item, lang: str) -> str:
    """The stem as Moodle's summary of the question shows it: a cloze item's gaps as `_____`
    (typed) or `{option; option}` (choices, in authoring order), as qtype_multianswer's
    get_question_summary writes them."""
    stem = item.text[lang].stem
    if not isinstance(item, Cloze):
        return stem
    gaps = {g.id: g for g in item.gaps}

    def bit(m: re.Match[str]) -> str:
        gap = gaps.get(m.group(1))
        if gap is None:
            return m.group(0)
        if isinstance(gap, ChoiceGap | MultipleResponseGap):
            texts = item.text[lang].gaps.get(gap.id, GapContent()).options
            return "{" + "; ".join(texts.get(o, "") for o in gap.options) + "}"
        return " "

    return re.sub(GAP_REF, bit, stem)


class TextIndex:
    """The loose keys of every item's stem and options, in every language of the bank."""

    def __init__(self, bank: Bank) -> None:
        self.bank = bank
        self._stems: dict[str, list[tuple[Item, str]]] = {}
        self._options: dict[str, dict[str, dict[str, str]]] = {}  # item -> lang -> option -> key
        self._lookup: dict[str, dict[str, set[str]]] = {}  # item -> key -> option ids
        for item in bank:
            langs = self._options[item.id] = {}
            lookup = self._lookup[item.id] = _extra_words(item)
            for lang in item.text:
                for stem in self._stem_keys(item, lang):
                    self._stems.setdefault(stem, []).append((item, lang))
                langs[lang] = _option_texts(item, lang)
                for oid, key in langs[lang].items():
                    lookup.setdefault(key, set()).add(oid)
            if 1 < len(item.text) <= MAX_ORDERED:
                for order in itertools.permutations(item.text):
                    multi = MULTI + "+".join(order)
                    for stem in multilang_keys([self._stem_source(item, la) for la in order]):
                        self._stems.setdefault(stem, []).append((item, multi))
                    langs[multi] = {oid: "".join(dict.fromkeys(langs[la][oid] for la in order))
                                    for oid in langs[order[0]]}
                    for oid, key in langs[multi].items():
                        lookup.setdefault(key, set()).add(oid)
        self._heads: dict[str, list[str]] = {}
        for stem in self._stems:
            self._heads.setdefault(stem[:HEAD], []).append(stem)
        self._short = sorted({len(k) for k in self._stems if len(k) < HEAD})
        self._summaries: dict[str, list[tuple[Item, str]]] = {}

    def _stem_source(self, item: Item, lang: str) -> str:
        """The Markdown of the question text as the Moodle export writes it: a stimulus's text
        before the stem."""
        stem = _summary_stem(item, lang)
        if item.stimulus is None:
            return stem
        try:
            stimulus = self.bank.stimulus(item.stimulus)
        except KeyError:
            return stem
        content = stimulus.text.get(lang) or next(iter(stimulus.text.values()))
        return content.text + "\n\n" + stem

    def _stem_keys(self, item: Item, lang: str) -> list[str]:
        """The stem's loose keys: as written, with the stimulus before it, images as alt text."""
        keys = moodle_plain(_summary_stem(item, lang))
        if item.stimulus is not None:
            keys += moodle_plain(self._stem_source(item, lang))
        return [k for k in dict.fromkeys(keys) if k]

    def by_question(self, text: str) -> list[Item]:
        """Items whose stem is `text` (Canvas: the question text alone)."""
        return _unique(item for item, _ in self._stems.get(loose(text), ()))

    def by_summary(self, text: str) -> list[Item]:
        """Items whose stem followed by all their choices is `text` (Moodle's question summary:
        "stem: choice; choice; ..." in the attempt's order; a true/false question: the stem)."""
        return unique_items(self.by_summary_lang(text))

    def by_summary_lang(self, text: str) -> list[tuple[Item, str]]:
        """`by_summary` with the language each item matched in (`MULTI`... for a text shown
        with the multilang filter off)."""
        cached = self._summaries.get(text)
        if cached is not None:
            return cached
        key = loose(text)
        stems = [stem for stem in self._heads.get(key[:HEAD], ()) if key.startswith(stem)]
        stems += [key[:n] for n in self._short if n <= len(key) and key[:n] in self._stems]
        found: list[tuple[Item, str]] = []
        for stem in stems:
            for item, lang in self._stems[stem]:
                if self._all_choices(item, lang, key[len(stem):]):
                    found.append((item, lang))
        pairs = dict.fromkeys((item.id, lang) for item, lang in found)
        result = [(self.bank.get(i), lang) for i, lang in pairs]
        if len(self._summaries) >= CACHE:
            self._summaries.clear()
        self._summaries[text] = result
        return result

    def _all_choices(self, item: Item, lang: str, rest: str) -> bool:
        if lang.startswith(MULTI) and isinstance(item, Matching | Ordering):
            return rest == ""
        if not is_scored(item):  # text only: nothing to choose
            return rest == ""
        match item:
            case TrueFalse():
                return rest == ""
            case SingleChoice() | MultipleResponse():
                options = self._options[item.id][lang]
                parts: dict[str, set[str]] = {}
                for oid, key in options.items():
                    parts.setdefault(key, set()).add(oid)
                return len(split(rest, parts, use_all=frozenset(options))) == 1
            case Numerical() | ShortAnswer() | Essay() | Cloze():
                return rest == ""
            case Matching():
                # Moodle: "stem {premise; ...} -> {response; ...}", each side in the attempt's
                # order: every premise and every response once
                content = item.text[lang]
                return _all_of(rest, {**{f"p:{k}": v for k, v in content.premises.items()},
                                      **{f"r:{k}": v for k, v in content.responses.items()}})
            case Ordering():
                return rest == "" or _all_of(rest, item.text[lang].options)
            case _:
                assert_never(item)

    def choices(self, item: Item, text: str, separator: str) -> frozenset[str] | str:
        """The option ids that `text` names (one option's text, or several joined by
        `separator`), else why not (a message)."""
        lookup = self._lookup[item.id]
        key = loose(text)
        hit = lookup.get(key)
        if hit is not None:
            if len(hit) == 1:
                return frozenset(hit)
            return f"{text!r} is the text of options {', '.join(sorted(hit))} of item {item.id!r}"
        parts = [loose(p) for p in text.split(separator)] if separator in text else []
        if parts and all(len(lookup.get(p, ())) == 1 for p in parts):
            chosen = frozenset(o for p in parts for o in lookup[p])
            if len(chosen) == len(parts):
                return chosen
        ways = split(key, lookup)
        if len(ways) == 1:
            return ways[0]
        if ways:
            return f"{text!r} names options of item {item.id!r} in more than one way"
        return f"{text!r} is no option of item {item.id!r}"


def _all_of(rest: str, texts: dict[str, str]) -> bool:
    """Whether `rest` is every one of `texts` (Markdown by id) once, in one order only."""
    parts: dict[str, set[str]] = {}
    for tid, text in texts.items():
        parts.setdefault(loose(to_plain(text)), set()).add(tid)
    return len(split(rest, parts, use_all=frozenset(texts))) == 1


def _unique(items: Iterable[Item]) -> list[Item]:
    return list({item.id: item for item in items}.values())


def unique_items(matched: Iterable[tuple[Item, str]]) -> list[Item]:
    """The items of (item, language) matches, each once."""
    return _unique(item for item, _ in matched)
