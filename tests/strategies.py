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

#: The choice types (`items()` draws these unless told otherwise); `any_items()` draws every type.
CHOICE_TYPES = (ItemType.single_choice, ItemType.multiple_response, ItemType.true_false)

LANGS = ("id", "en")

_ALNUM = string.ascii_lowercase + string.digits


def _slug(min_rest: int) -> st.SearchStrategy[str]:
    """`[a-z][a-z0-9]{min_rest,6}(-[a-z0-9]{1,5}){0,2}`, drawn in a few choices (a regex strategy
    draws each character on its own, which made these the costliest part of every item)."""
    return st.builds(lambda head, rest, parts: head + rest + "".join("-" + p for p in parts),
                     st.sampled_from(string.ascii_lowercase),
                     st.text(_ALNUM, min_size=min_rest, max_size=6),
                     st.lists(st.text(_ALNUM, min_size=1, max_size=5), max_size=2))


slug = _slug(0)
item_slug = _slug(1)

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
def _common(draw, kind: ItemType) -> dict:
    """The fields every item type has, drawn."""
    return dict(
        id=draw(item_slug),
        type=kind.value,
        topic="/".join(draw(st.lists(slug, min_size=1, max_size=3))),
        difficulty=draw(st.none() | st.sampled_from(["easy", "medium", "hard"])),
        points=draw(st.sampled_from([1.0, 2.0, 0.5, 3.0])),
        tags=tuple(draw(st.lists(slug, max_size=3, unique=True))),
    )


@st.composite
def _base_text(draw) -> dict:
    return dict(title=draw(st.none() | line_text(max_words=4)),
                stem=draw(block_text(max_words=12)),
                explanation=draw(st.none() | block_text()))


def _drop_none(d: dict) -> dict:
    return {k: v for k, v in d.items() if v is not None}


# Grades every LMS can carry: Moodle's list of fractions holds these exactly.
FRACTIONS = [1.0, 0.5, 0.0, 0.25, 0.1, 0.2, 0.75, 0.9]
# Numbers with a short exact decimal form (every format writes them back unchanged).
number = st.one_of(st.integers(-10**6, 10**6).map(float),
                   st.decimals(-1000, 1000, places=3, allow_nan=False, allow_infinity=False)
                   .map(float))


@st.composite
def _answer_feedback(draw, ids: list[str]) -> dict[str, str]:
    return {aid: draw(block_text()) for aid in draw(st.sets(st.sampled_from(ids)))}


@st.composite
def numerical_items(draw, langs: tuple[str, ...] = LANGS) -> Item:
    """Numerical items: 1-3 answers (values with tolerances or ranges), the first full marks,
    sometimes units."""
    ids = draw(st.lists(slug, min_size=1, max_size=3, unique=True))
    answers, seen = [], set()
    for i, aid in enumerate(ids):
        if draw(st.booleans()):
            lo = draw(number)
            hi = lo + draw(st.sampled_from([0.0, 0.5, 1.0, 10.0]))
            bounds, ans = (lo, hi), {"min": lo, "max": hi}
        else:
            v, tol = draw(number), draw(st.sampled_from([0.0, 0.01, 0.5, 2.0]))
            bounds, ans = (v - tol, v + tol), {"value": v, "tolerance": tol}
        if bounds in seen:
            continue
        seen.add(bounds)
        answers.append({"id": aid, **ans,
                        "fraction": 1.0 if i == 0 else draw(st.sampled_from(FRACTIONS))})
    ids = [a["id"] for a in answers]
    units = draw(st.sampled_from([(), ({"unit": "m"},), ({"unit": "m"}, {"unit": "cm",
                                                                          "multiplier": 100})]))
    data = draw(_common(ItemType.numerical))
    data.update(answers=answers, units=list(units),
                text={lang: _drop_none({**draw(_base_text()),
                                        "feedback": draw(_answer_feedback(ids))})
                      for lang in langs})
    if units:
        data["unit_penalty"] = draw(st.none() | st.sampled_from([0.1, 0.5]))
    return parse_item(_drop_none(data))


accepted = st.text(alphabet=string.ascii_letters + string.digits + " éΩ漢-", min_size=1,
                   max_size=12).map(lambda s: " ".join(s.split())).filter(bool)


@st.composite
def short_answer_items(draw, langs: tuple[str, ...] = LANGS) -> Item:
    """Short-answer items: 1-3 answers, the first full marks, 1-3 wordings each per language."""
    ids = draw(st.lists(slug, min_size=1, max_size=3, unique=True))
    case = draw(st.booleans())
    answers = [{"id": aid, "fraction": 1.0 if i == 0 else draw(st.sampled_from(FRACTIONS))}
               for i, aid in enumerate(ids)]
    text = {}
    for lang in langs:
        seen: set[str] = set()
        wordings: dict[str, list[str]] = {}
        for aid in ids:
            mine = []
            for w in draw(st.lists(accepted, min_size=1, max_size=3)):
                norm = w if case else w.casefold()
                if norm not in seen:
                    seen.add(norm)
                    mine.append(w)
            wordings[aid] = mine or [f"{aid} {lang}"]
            seen.add(wordings[aid][0] if case else wordings[aid][0].casefold())
        text[lang] = _drop_none({**draw(_base_text()), "answers": wordings,
                                 "feedback": draw(_answer_feedback(ids))})
    data = draw(_common(ItemType.short_answer))
    data.update(answers=answers, case_sensitive=case, text=text)
    return parse_item(data)


@st.composite
def matching_items(draw, langs: tuple[str, ...] = LANGS) -> Item:
    """Matching items: 2-5 pairs and 0-2 extra responses."""
    ids = draw(st.lists(slug, min_size=2, max_size=7, unique=True))
    n_pairs = draw(st.integers(2, min(5, len(ids))))
    pairs, extra = ids[:n_pairs], ids[n_pairs:n_pairs + 2]
    data = draw(_common(ItemType.matching))
    data.update(pairs=pairs, distractors=extra, shuffle=draw(st.booleans()),
                text={lang: _drop_none({**draw(_base_text()),
                                        "premises": {p: draw(line_text()) for p in pairs},
                                        "responses": {r: draw(line_text())
                                                      for r in (*pairs, *extra)}})
                      for lang in langs})
    return parse_item(data)


@st.composite
def essay_items(draw, langs: tuple[str, ...] = LANGS) -> Item:
    """Essay items: each response format, optional word limits, rubric and template."""
    data = draw(_common(ItemType.essay))
    lo = draw(st.none() | st.integers(1, 100))
    hi = draw(st.none() | st.integers(lo or 1, 500))
    data.update(response_format=draw(st.sampled_from(["editor", "plain", "monospaced"])),
                response_required=draw(st.booleans()), lines=draw(st.integers(1, 40)),
                min_words=lo, max_words=hi,
                text={lang: _drop_none({**draw(_base_text()),
                                        "grader_info": draw(st.none() | block_text()),
                                        "response_template": draw(st.none() | line_text())})
                      for lang in langs})
    return parse_item(_drop_none(data))


GRADINGS = ["all_or_nothing", "absolute_position", "relative_next_exclude_last",
            "relative_next_include_last", "relative_one_previous_and_next",
            "relative_all_previous_and_next", "longest_ordered_subset",
            "longest_contiguous_subset", "relative_to_correct"]


@st.composite
def ordering_items(draw, langs: tuple[str, ...] = LANGS) -> Item:
    """Ordering items: 2-6 options in the right order, any grading."""
    ids = draw(st.lists(slug, min_size=2, max_size=6, unique=True))
    data = draw(_common(ItemType.ordering))
    data.update(options=ids, grading=draw(st.sampled_from(GRADINGS)),
                text={lang: _drop_none({**draw(_base_text()),
                                        "options": {o: draw(line_text()) for o in ids}})
                      for lang in langs})
    return parse_item(data)


@st.composite
def cloze_items(draw, langs: tuple[str, ...] = LANGS,
                gap_kinds: tuple[str, ...] = ("short_answer", "numerical", "choice",
                                              "multiple_response")) -> Item:
    """Cloze items: 1-4 gaps of any kind (of `gap_kinds`), each named once in every language's
    stem (between drawn lines), with their wordings, options and feedback per language."""
    kinds = draw(st.lists(st.sampled_from(gap_kinds), min_size=1, max_size=4))
    gaps: list[dict] = []
    per_lang: dict[str, dict[str, dict]] = {lang: {} for lang in langs}
    for n, kind in enumerate(kinds, 1):
        gid = f"g{n}"
        gap: dict = {"id": gid, "type": kind, "points": float(draw(st.integers(1, 3)))}
        if kind == "short_answer":
            gap["answers"] = [{"id": "a"}, {"id": "b", "fraction": 0.5}][:draw(st.integers(1, 2))]
            for lang in langs:
                per_lang[lang][gid] = {"answers": {
                    a["id"]: [f"{draw(accepted)} {a['id']}{lang}"] for a in gap["answers"]}}
        elif kind == "numerical":
            value = draw(number)
            gap["answers"] = [{"id": "a", "value": value,
                               "tolerance": draw(st.sampled_from([0.0, 0.5]))}]
        else:
            options = draw(st.lists(slug, min_size=2, max_size=4, unique=True))
            gap["options"] = options
            gap["key"] = options[0] if kind == "choice" else options[:draw(st.integers(1, 2))]
            for lang in langs:
                per_lang[lang][gid] = {"options": {o: f"{draw(line_text(max_words=3))} {o}"
                                                   for o in options}}
        ids = [a["id"] for a in gap.get("answers", ())] or gap["options"]
        for lang in langs:  # feedback on some answers or options
            feedback = {i: draw(line_text(max_words=4)) for i in draw(st.sets(st.sampled_from(ids)))}
            if feedback:
                per_lang[lang].setdefault(gid, {})["feedback"] = feedback
        gaps.append(gap)
    text = {}
    for lang in langs:
        parts = [draw(line_text(max_words=5)) for _ in range(len(kinds) + 1)]
        stem = parts[0] + "".join(f" [[g{n}]] {p}" for n, p in enumerate(parts[1:], 1))
        text[lang] = {"stem": stem, "gaps": per_lang[lang]}
    data = draw(_common(ItemType.cloze))
    data.update(gaps=gaps, text=text)
    return parse_item(data)


@st.composite
def description_items(draw, langs: tuple[str, ...] = LANGS) -> Item:
    """Description items: a title and a text per language, nothing to answer."""
    data = draw(_common(ItemType.description))
    data["text"] = {lang: _drop_none({"title": draw(st.none() | line_text(max_words=4)),
                                      "stem": draw(block_text(max_words=12))})
                    for lang in langs}
    return parse_item(data)


#: The strategy of each type that is not a choice type.
OTHER_TYPES = {
    ItemType.numerical: numerical_items, ItemType.short_answer: short_answer_items,
    ItemType.matching: matching_items, ItemType.essay: essay_items,
    ItemType.ordering: ordering_items, ItemType.cloze: cloze_items,
    ItemType.description: description_items,
}


def any_items(langs: tuple[str, ...] = LANGS) -> st.SearchStrategy[Item]:
    """Items of every type."""
    return st.one_of(items(langs), *(make(langs) for make in OTHER_TYPES.values()))


#: A short plain word: texts for tests that never read them (assembly), a fifth of the cost of
#: drawing hostile text.
plain_text = st.text(string.ascii_lowercase, min_size=1, max_size=10)


@st.composite
def items(draw, langs: tuple[str, ...] = LANGS, types=CHOICE_TYPES, *, plain: bool = False
          ) -> Item:
    """Choice items (single choice, multiple response, true/false); `plain` draws every text as
    one short word, for tests that never read the texts."""
    line = (lambda **_: plain_text) if plain else line_text
    block = (lambda **_: plain_text) if plain else block_text
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
        opts = {oid: draw(line()) for oid in option_ids}
        fb = {oid: draw(block()) for oid in draw(st.sets(st.sampled_from(option_ids)))}
        text[lang] = Content(
            title=draw(st.none() | line(max_words=4)),
            stem=draw(block(max_words=12)),
            options=opts,
            feedback=fb,
            explanation=draw(st.none() | block()),
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
