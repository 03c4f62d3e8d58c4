"""An item -> what the bank rules read of it (`dpassess.runtime.records.ItemFeatures`).

The bank rules (`rules/bank.py`) compare items through these features only, so that the lint
cache can keep them per item file and a warm lint runs the bank rules without rebuilding an
unchanged item as a model. They depend on the item and the bank file (its languages and
glossary), which every lint cache key covers.
"""

from __future__ import annotations

import hashlib
from sys import intern

from dpassess.lint.context import BankContext, ItemContext
from dpassess.lint.rules.bank import MIN_STEM_WORDS, _answers
from dpassess.lint.rules.writing import ABSOLUTE_TERMS, absolute_terms
from dpassess.lint.text import norm, plain, quote
from dpassess.lint.words import STOPWORDS
from dpassess.model import Item, SingleChoice
from dpassess.runtime.records import (
    ChoiceFeatures,
    ItemFeatures,
    StemFeatures,
    SuppressionRecord,
)


def _hash(text: str) -> bytes:
    """A 16-byte hash of `text`: what the duplicate rule compares (a stem and its answers kept
    whole would add tens of MiB to a large bank's lint)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def item_features(bctx: BankContext, item: Item, path: str) -> ItemFeatures:
    """What the bank rules read of `item` (of the bank `bctx`, in file `path`)."""
    stems = []
    for lang, c in item.text.items():
        stop = STOPWORDS.get(lang.split("-")[0], frozenset())
        stem = norm(c.stem)
        ws = [w for w in stem.split() if w not in stop]  # its content words
        enough = len(ws) >= MIN_STEM_WORDS
        stems.append(StemFeatures(lang, _hash(stem) if stem else b"",
                                  _hash(repr(_answers(item, lang))),
                                  tuple(map(intern, ws)) if enough else None,
                                  quote(c.stem, 50) if enough else ""))
    return ItemFeatures(
        item.id, tuple(item.enemies), tuple(item.text), tuple(stems),
        _choice(bctx, item, path),
        tuple(SuppressionRecord(s.rule, s.field, s.term) for s in item.suppress),
    )


def _choice(bctx: BankContext, item: Item, path: str) -> ChoiceFeatures | None:
    """A single-choice item with a valid key and three or more options: the key's position,
    and in each of the bank's languages the options' visible lengths and absolute terms."""
    if not (isinstance(item, SingleChoice) and len(item.options) >= 3 and len(item.key) == 1):
        return None
    ids = item.option_ids
    if item.key[0] not in ids:
        return None
    lengths = []
    absolute = []
    for lang in bctx.languages:
        if lang not in item.text:
            continue
        options = item.text[lang].options
        texts = tuple(plain(options[o]) for o in ids)
        lengths.append((lang, tuple(map(len, texts))))
        # Whether each option has absolute terms (`absolute_terms`, on a view made only when
        # the language's list matches in some option: a view masks glossary terms first).
        pat = ABSOLUTE_TERMS.get(lang.split("-")[0])
        if pat is None or pat.search("\n".join(texts)) is None:
            flags = (False,) * len(texts)
        else:
            v = ItemContext(item, path, bctx).view(lang)
            flags = tuple(bool(absolute_terms(v, o)) for o in ids)
        absolute.append((lang, flags))
    return ChoiceFeatures(len(ids), ids.index(item.key[0]), tuple(lengths), tuple(absolute))
