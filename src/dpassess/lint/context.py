"""What the rules read: an item (or a bank) with its precomputed views, built once per bank.

`BankContext` holds what is shared by every item of a bank (glossary patterns, the language
guesser, the settings); `ItemContext` gives per-language views of one item whose derived text
(plain words, glossary-masked words) is computed on first use and reused by every rule.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property

from ..model import Bank, Content, Item, ItemType
from .config import LintConfig
from .glossary import Glossary
from .langid import LanguageGuesser
from .registry import Loc
from .text import plain, words


class BankContext:
    def __init__(self, bank: Bank, config: LintConfig) -> None:
        self.bank = bank
        self.config = config
        self.languages = bank.config.languages
        self.default_language = bank.config.default_language
        self.glossary = Glossary(bank.config)

    @cached_property
    def guesser(self) -> LanguageGuesser:
        return LanguageGuesser(self.languages)

    def items(self) -> Iterator[ItemContext]:
        for entry in self.bank.entries:
            yield ItemContext(entry.item, entry.path, self)


class LangView:
    """One language of one item, with derived text computed lazily."""

    def __init__(self, ctx: ItemContext, lang: str, content: Content) -> None:
        self.ctx = ctx
        self.lang = lang
        self.content = content

    @cached_property
    def options(self) -> dict[str, str]:
        """Plain text of each option, in authoring order (true/false: the language's words)."""
        item = self.ctx.item
        return {oid: plain(item.option_text(self.lang, oid)) for oid in item.option_ids}

    @cached_property
    def option_words(self) -> dict[str, tuple[str, ...]]:
        """Lower-case words of each option with glossary terms masked."""
        mask = self.ctx.bank.glossary.mask
        return {oid: words(mask(t, self.lang)) for oid, t in self.options.items()}

    @cached_property
    def stem(self) -> str:
        return plain(self.content.stem)

    @cached_property
    def stem_words(self) -> tuple[str, ...]:
        return words(self.ctx.bank.glossary.mask(self.stem, self.lang))


class ItemContext:
    def __init__(self, item: Item, path: str, bank: BankContext) -> None:
        self.item = item
        self.path = path
        self.bank = bank
        self.config = bank.config
        self._views: dict[str, LangView] = {}
        self._maps: dict[str, dict[Loc, str]] = {}

    @property
    def choice(self) -> bool:
        """Single choice: one key among distractors (the length and cue rules apply)."""
        return self.item.type is ItemType.single_choice

    @property
    def distractors(self) -> list[str]:
        return [o for o in self.item.option_ids if o not in self.item.key]

    def view(self, lang: str) -> LangView:
        v = self._views.get(lang)
        if v is None:
            v = self._views[lang] = LangView(self, lang, self.item.text[lang])
        return v

    def views(self) -> Iterator[LangView]:
        for lang in self.item.text:
            yield self.view(lang)

    def fields(self, lang: str) -> Iterator[tuple[Loc, str]]:
        """Every text field of one language with its path in the item file."""
        c = self.item.text[lang]
        base: Loc = ("text", lang)
        if c.title is not None:
            yield (*base, "title"), c.title
        yield (*base, "stem"), c.stem
        for oid, t in c.options.items():
            yield (*base, "options", oid), t
        for oid, t in c.feedback.items():
            yield (*base, "feedback", oid), t
        if c.explanation is not None:
            yield (*base, "explanation"), c.explanation

    def all_fields(self) -> Iterator[tuple[Loc, str]]:
        for lang in self.item.text:
            yield from self.fields(lang)

    def field_map(self, lang: str) -> dict[Loc, str]:
        """Text fields of one language keyed by their path below the language (`("stem",)`)."""
        m = self._maps.get(lang)
        if m is None:
            m = self._maps[lang] = {loc[2:]: text for loc, text in self.fields(lang)}
        return m

    @cached_property
    def reference(self) -> str | None:
        """The language translations are compared with: the bank's default, else the first."""
        if not self.item.text:
            return None
        d = self.bank.default_language
        return d if d in self.item.text else next(iter(self.item.text))

    @cached_property
    def pairs(self) -> list[tuple[str, str, Loc, str, str]]:
        """(reference language, language, field, reference text, text) for shared fields."""
        ref = self.reference
        if ref is None:
            return []
        ref_fields = self.field_map(ref)
        out = []
        for lang in self.item.text:
            if lang == ref:
                continue
            for sub, text in self.field_map(lang).items():
                other = ref_fields.get(sub)
                if other is not None:
                    out.append((ref, lang, sub, other, text))
        return out

    @cached_property
    def joined(self) -> str:
        """Every text field of every language, one per line: one scan tells if a rule can skip."""
        return "\n".join(text for _, text in self.all_fields())
