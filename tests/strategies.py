"""Hypothesis strategies for valid items and banks, shared by every test module.

Text is deliberately hostile: XML and GIFT specials, `]]>`, quotes, backslashes, `//` at a line
start, Markdown, non-Latin scripts and 4-byte characters; stems, feedback and explanations may
hold several lines or paragraphs. (Control characters are left to example tests: XML cannot hold
them, so exporters drop them with a warning and no round trip can keep them.)
"""

from __future__ import annotations

import string
from pathlib import Path

import yaml
from hypothesis import strategies as st

from dpassess.bank.write import item_to_yaml
from dpassess.model import BankConfig, Content, Item, ItemType, Option, parse_item

LANGS = ("id", "en")

slug = st.from_regex(r"[a-z][a-z0-9]{0,6}(-[a-z0-9]{1,5}){0,2}", fullmatch=True)
item_slug = st.from_regex(r"[a-z][a-z0-9]{1,6}(-[a-z0-9]{1,5}){0,2}", fullmatch=True)

HOSTILE = [
    "<", ">", "&", "]]>", '"', "'", "\\", "~", "=", "#", "{", "}", ":", "//", "%", "$",
    "`x`", "*em*", "_u_", "<b>", "&amp;", "0.5", "Ω", "漢字", "𝐱", "🙂", "é", "\t",
]

# Printable text without control characters (XML 1.0 cannot carry most of them) and without
# characters that are not round-trippable through normalising readers (CR, lone surrogates).
_alphabet = st.characters(
    blacklist_categories=("Cs", "Cc"), blacklist_characters="\r\x85\u2028\u2029"
)
word = st.one_of(
    st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=8),
    st.sampled_from(HOSTILE),
    st.text(alphabet=_alphabet, min_size=1, max_size=4),
)


@st.composite
def line_text(draw, min_words: int = 1, max_words: int = 8) -> str:
    words = draw(st.lists(word, min_size=min_words, max_size=max_words))
    text = " ".join(words).strip()
    return text or "x"


@st.composite
def block_text(draw, max_words: int = 8) -> str:
    """One line, or up to three paragraphs / lines (Markdown blocks: Moodle's multilang and the
    QTI XHTML must carry the structure)."""
    parts = draw(st.lists(line_text(max_words=max_words), min_size=1, max_size=3))
    seps = [draw(st.sampled_from(["\n\n", "\n"])) for _ in parts[1:]]
    return parts[0] + "".join(sep + p for sep, p in zip(seps, parts[1:], strict=True))


@st.composite
def items(draw, langs: tuple[str, ...] = LANGS, types=tuple(ItemType)) -> Item:
    kind = draw(st.sampled_from(types))
    if kind is ItemType.true_false:
        option_ids = ["true", "false"]
    else:
        option_ids = draw(st.lists(slug, min_size=2, max_size=6, unique=True))
    if kind is ItemType.multiple_response:
        k = draw(st.integers(1, len(option_ids)))
        key = draw(st.permutations(option_ids))[:k]
    else:
        key = [draw(st.sampled_from(option_ids))]
    locked = draw(st.sets(st.sampled_from(option_ids), max_size=1))
    text = {}
    for lang in langs:
        opts = {oid: draw(line_text()) for oid in option_ids}
        fb = {oid: draw(block_text()) for oid in draw(st.sets(st.sampled_from(option_ids)))}
        text[lang] = Content(
            title=draw(st.none() | line_text(max_words=4)),
            stem=draw(block_text(max_words=12)),
            options=opts,
            feedback=fb,
            explanation=draw(st.none() | block_text()),
        )
    return parse_item(dict(
        id=draw(item_slug),
        type=kind,
        topic="/".join(draw(st.lists(slug, min_size=1, max_size=3))),
        difficulty=draw(st.none() | st.sampled_from(["easy", "medium", "hard"])),
        points=draw(st.sampled_from([1.0, 2.0, 0.5, 3.0])),
        tags=tuple(draw(st.lists(slug, max_size=3, unique=True))),
        shuffle=draw(st.booleans()),
        options=tuple(Option(id=o, locked=o in locked) for o in option_ids),
        key=tuple(key),
        text=text,
    ))


def bank_config(bank_id: str = "test-bank", langs: tuple[str, ...] = LANGS) -> BankConfig:
    return BankConfig(
        id=bank_id,
        title={lang: f"Bank {lang}" for lang in langs},
        languages=langs,
        default_language=langs[0],
    )


def write_bank(root: Path, bank_items: list[Item], config: BankConfig | None = None) -> Path:
    """Write a bank folder (bank.yaml + one file per item) and return it."""
    config = config or bank_config()
    root.mkdir(parents=True, exist_ok=True)
    data = config.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data["schema"] = 1
    (root / "bank.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    for n, item in enumerate(bank_items):
        (root / f"{n:05d}-{item.id}.yaml").write_text(item_to_yaml(item), encoding="utf-8")
    return root
