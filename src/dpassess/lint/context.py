"""What the rules read: an item (or a bank) with its precomputed views, built once per bank.

`BankContext` holds what is shared by every item of a bank (glossary patterns, the language
guesser, the settings); `ItemContext` gives per-language views of one item whose derived text
(plain words, glossary-masked words) is computed on first use and reused by every rule. An
`ItemContext[SingleChoice]` is the context of a single-choice item: the choice views (`view`,
`option_ids`, `distractors`) are there for choice items only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar, cast

from dpassess.diagnostics import FieldPath
from dpassess.lint.config import LintConfig
from dpassess.lint.glossary import FieldTerms, Glossary
from dpassess.lint.langid import LanguageGuesser
from dpassess.lint.text import Phrases, has_digit, plain, words
from dpassess.model import (
    Bank,
    ChoiceItem,
    Content,
    Item,
)
from dpassess.runtime.records import ItemFeatures

T = TypeVar("T")
#: The item class of a context.
ItemT = TypeVar("ItemT", bound=Item, covariant=True)


class cached_property(Generic[T]):
    """A value computed on first use and stored on the instance: functools.cached_property
    without its lock (taken on every first access in Python 3.11, a third of the cost of the
    small views here); lint contexts are used by one thread."""

    def __init__(self, fn: Callable[[Any], T]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> T:
        if obj is None:
            return self  # type: ignore[return-value]
        value = obj.__dict__[self.name] = self.fn(obj)
        return value


class BankContext:
    """A bank as the rules read it. `bank.entries` are the items to check; the bank rules read
    every item through `features` (in authoring order), which a caller that keeps them (the
    lint cache) gives, the bank's entries then being only the items that changed."""

    def __init__(self, bank: Bank, config: LintConfig,
                 features: Sequence[ItemFeatures] | None = None,
                 kept: Mapping[str, ItemFeatures] | None = None) -> None:
        self.bank = bank
        self.config = config
        self.languages = bank.config.languages
        self.default_language = bank.config.default_language
        self.glossary = Glossary(bank.config)
        self._shared: dict[Callable[[BankContext], object], object] = {}
        self._features = features
        self._kept = kept or {}

    @property
    def features(self) -> Sequence[ItemFeatures]:
        """What the bank rules read of every item of the bank, in authoring order: when not
        given, made from the bank's entries on first use (while the item rules' workers run),
        but for those `kept` (by file path) from an earlier run."""
        if self._features is None:
            from dpassess.lint.features import item_features

            kept = self._kept
            self._features = [kept[e.path] if e.path in kept else item_features(self, e.item, e.path)
                              for e in self.bank.entries]
        return self._features

    @features.setter
    def features(self, value: Sequence[ItemFeatures]) -> None:
        self._features = value

    def shared(self, make: Callable[[BankContext], T]) -> T:
        """`make(self)`, made on first use and kept with the context: what several bank rules
        read. The value must not refer to the context (lint makes no reference cycles)."""
        if make not in self._shared:
            self._shared[make] = make(self)
        return cast(T, self._shared[make])

    @cached_property
    def guesser(self) -> LanguageGuesser:
        return LanguageGuesser(self.languages)

    def items(self) -> Iterator[ItemContext[Item]]:
        for entry in self.bank.entries:
            yield ItemContext(entry.item, entry.path, self)


class LangView:
    """One language of one choice item, with derived text computed lazily."""

    def __init__(self, ctx: ItemContext[ChoiceItem], lang: str, content: Content) -> None:
        # The item and bank, not `ctx`: no reference cycle, so a view is freed with its item.
        self.item = ctx.item
        self.bank = ctx.bank
        self.option_ids = ctx.option_ids
        self.lang = lang
        self.content = content
        self._any: dict[re.Pattern[str] | Phrases, bool] = {}

    @cached_property
    def options(self) -> dict[str, str]:
        """Plain text of each option, in authoring order (true/false: the language's words)."""
        item, own = self.item, self.content.options
        return {
            oid: plain(own[oid] if oid in own else item.option_text(self.lang, oid))
            for oid in self.option_ids
        }

    @cached_property
    def options_text(self) -> str:
        """The plain options, one per line: a pattern that finds nothing here (a whole-word
        pattern: a line break is not a word character) finds nothing in any option."""
        return "\n".join(self.options.values())

    def any_option(self, pattern: re.Pattern[str] | Phrases) -> bool:
        """Whether `pattern` matches in the plain options (memoised per view and pattern)."""
        hit = self._any.get(pattern)
        if hit is None:
            hit = self._any[pattern] = pattern.search(self.options_text) is not None
        return hit

    @cached_property
    def option_words(self) -> dict[str, tuple[str, ...]]:
        """Lower-case words of each option with glossary terms masked."""
        mask = self.bank.glossary.mask
        return {oid: words(mask(t, self.lang)) for oid, t in self.options.items()}

    @cached_property
    def stem(self) -> str:
        return plain(self.content.stem)

    @cached_property
    def stem_words(self) -> tuple[str, ...]:
        return words(self.bank.glossary.mask(self.stem, self.lang))


class ItemContext(Generic[ItemT]):
    def __init__(self, item: ItemT, path: str, bank: BankContext) -> None:
        self.item = item
        self.path = path
        self.bank = bank
        self.config = bank.config
        self._views: dict[str, LangView] = {}
        self._maps: dict[str, dict[FieldPath, str]] = {}
        self._fields: dict[str, list[tuple[FieldPath, str]]] = {}
        self._wrong: dict[str, bool] = {}
        self._terms: dict[str, dict[FieldPath, frozenset[int]]] = {}
        self._glossary_terms: dict[str, dict[FieldPath, FieldTerms]] = {}

    # --- choice items ---------------------------------------------------------------------

    @cached_property
    def option_ids(self: ItemContext[ChoiceItem]) -> tuple[str, ...]:
        return self.item.option_ids

    @cached_property
    def distractors(self: ItemContext[ChoiceItem]) -> list[str]:
        key = self.item.key
        return [o for o in self.option_ids if o not in key]

    def view(self: ItemContext[ChoiceItem], lang: str) -> LangView:
        v = self._views.get(lang)
        if v is None:
            v = self._views[lang] = LangView(self, lang, self.item.text[lang])
        return v

    def views(self: ItemContext[ChoiceItem]) -> Iterator[LangView]:
        for lang in self.item.text:
            yield self.view(lang)

    # --- every item -----------------------------------------------------------------------

    def release(self) -> None:
        """Drop the derived text once the item is checked."""
        self._views.clear()
        self._maps.clear()
        self._fields.clear()
        self._terms.clear()
        self._glossary_terms.clear()
        self._wrong.clear()

    def fields(self, lang: str) -> list[tuple[FieldPath, str]]:
        """Every text field of one language with its path in the item file (built once)."""
        f = self._fields.get(lang)
        if f is None:
            f = self._fields[lang] = text_fields(self.item, lang)
        return f

    def all_fields(self) -> Iterator[tuple[FieldPath, str]]:
        for lang in self.item.text:
            yield from self.fields(lang)

    def field_map(self, lang: str) -> dict[FieldPath, str]:
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
    def pairs(self) -> list[tuple[str, str, FieldPath, str, str]]:
        """(reference language, language, field, reference text, text) for shared fields (not
        a short answer's accepted wordings: each language lists its own)."""
        ref = self.reference
        if ref is None:
            return []
        ref_fields = self.field_map(ref)
        out = []
        for lang in self.item.text:
            if lang == ref:
                continue
            for sub, text in self.field_map(lang).items():
                if sub[0] == "answers":
                    continue  # accepted wordings are per language, not translations
                other = ref_fields.get(sub)
                if other is not None:
                    out.append((ref, lang, sub, other, text))
        return out

    def glossary_terms(self, lang: str) -> dict[FieldPath, FieldTerms]:
        """The glossary terms of each field of `lang` (`Glossary.fields`: those it renders in
        an accepted form, how many times, those it holds twice), keyed like `field_map`; one
        scan per language."""
        t = self._glossary_terms.get(lang)
        if t is None:
            fields = self.field_map(lang)
            found = self.bank.glossary.fields(list(fields.values()), lang)
            t = self._glossary_terms[lang] = dict(zip(fields, found, strict=True))
        return t

    def terms(self, lang: str) -> dict[FieldPath, frozenset[int]]:
        """Glossary terms each field of `lang` renders in an accepted form (in the glossary
        language: the terms it uses), keyed like `field_map`."""
        t = self._terms.get(lang)
        if t is None:
            t = self._terms[lang] = {sub: f.accepted
                                     for sub, f in self.glossary_terms(lang).items()}
        return t

    def may_be_wrong(self, lang: str) -> bool:
        """Whether a declared wrong rendering of `lang` occurs in a field of `lang`: when not,
        `glossary.wrong(field, lang)` is empty for every field of `lang`."""
        hit = self._wrong.get(lang)
        if hit is None:
            hit = self._wrong[lang] = self.bank.glossary.any_wrong([t for _, t in self.fields(lang)], lang)
        return hit

    @cached_property
    def joined(self) -> str:
        """Every text field of every language, one per line: one scan tells if a rule can skip."""
        return "\n".join([text for lang in self.item.text for _, text in self.fields(lang)])

    @cached_property
    def digits(self) -> bool:
        """Whether a text field of the item has a digit (the number rules skip it when not)."""
        return has_digit(self.joined)


def text_fields(item: Item, lang: str) -> list[tuple[FieldPath, str]]:
    """Every text field of `item` in `lang` with its path in the item file, in file order."""
    c = item.text[lang]
    out: list[tuple[FieldPath, str]] = []
    if c.title is not None:
        out.append((("text", lang, "title"), c.title))
    out.append((("text", lang, "stem"), c.stem))
    out += [(("text", lang, *path), text) for path, text, _ in c.own_texts()]
    if c.explanation is not None:
        out.append((("text", lang, "explanation"), c.explanation))
    return out
