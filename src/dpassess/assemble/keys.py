"""A form item -> its key: letters, ids and words per language for every item type (the key
files and the printed key are made from it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, assert_never

from dpassess.assemble.forms import FormItem, letter
from dpassess.markup.numformat import format_number
from dpassess.model import (
    ChoiceGap,
    Cloze,
    Essay,
    GapContent,
    Matching,
    MultipleResponse,
    MultipleResponseGap,
    Numerical,
    NumericalGap,
    NumericAnswer,
    Ordering,
    ShortAnswer,
    ShortAnswerGap,
    SingleChoice,
    TrueFalse,
    is_scored,
)

#: What the key says of an essay, by language.
BY_HAND = {"en": "graded by hand", "id": "dinilai oleh pemeriksa"}


def number(value: float, lang: str) -> str:
    """`value` as a reader of `lang` writes it (decimal comma in Indonesian)."""
    try:
        return format_number(int(value) if float(value).is_integer() else value, lang,
                             grouping=False)
    except ValueError:
        return f"{value:g}"


@dataclass(frozen=True)
class Answer:
    """What a form item's key says: letters (choice; matching: one per premise; ordering: the
    shown letters in the right order), the ids they stand for, the ids in the order shown,
    and the key in words (per language), with the type's data for scripts."""

    letters: list[str]
    ids: list[str]
    shown: list[str]
    words: dict[str, str]
    data: dict[str, Any]


def answer(fi: FormItem, langs: Sequence[str]) -> Answer:
    it = fi.item
    if not is_scored(it):  # text only: nothing to key
        return Answer([], [], [], {la: "" for la in langs}, {"not_scored": True})
    match it:
        case SingleChoice() | MultipleResponse() | TrueFalse():
            words = {la: ", ".join(fi.key_letters) for la in langs}
            return Answer(fi.key_letters, fi.key_ids, list(it.option_ids), words, {})
        case Numerical():
            data: dict[str, Any] = {"answers": [a.model_dump(exclude_defaults=False) for a in it.answers],
                    "units": [u.model_dump() for u in it.units], "unit_penalty": it.unit_penalty}
            return Answer([], [a.id for a in it.answers if a.fraction == 1], [],
                          {la: _numbers(it, la) for la in langs}, data)
        case ShortAnswer():
            fractions = {a.id: a.fraction for a in it.answers}
            data = {"case_sensitive": it.case_sensitive, "fractions": fractions,
                    "wordings": {la: {k: list(v) for k, v in it.text[la].answers.items()}
                                 for la in langs if la in it.text}}
            words = {}
            for la in langs:
                if la not in it.text:
                    continue
                parts = [" / ".join(it.text[la].answers.get(a.id, ())) + _share(a.fraction, la)
                         for a in it.answers]
                words[la] = "; ".join(parts)
            return Answer([], [a.id for a in it.answers if a.fraction == 1], [], words, data)
        case Matching():
            shown = list(fi.display)
            letters = [letter(shown.index(pid)) for pid in it.pairs]
            words = {la: ", ".join(f"{n + 1}-{x}" for n, x in enumerate(letters)) for la in langs}
            return Answer(letters, list(it.pairs), shown, words, {})
        case Ordering():
            shown = list(fi.display)
            letters = [letter(shown.index(oid)) for oid in it.options]
            return Answer(letters, list(it.options), shown,
                          {la: " ".join(letters) for la in langs}, {"grading": it.grading})
        case Essay():
            return Answer([], [], [], {la: BY_HAND.get(la, BY_HAND["en"]) for la in langs},
                          {"graded_by_hand": True})
        case Cloze():
            return _cloze(it, langs)
        case _:
            assert_never(it)


def _cloze(it: Cloze, langs: Sequence[str]) -> Answer:
    """Each gap's key, numbered as the form prints the gaps: `(1) Paris; (2) 3.5 ± 0.1;
    (3) b; (4) a, c` (a choice gap's options are lettered in authoring order)."""
    words: dict[str, str] = {}
    gaps: dict[str, Any] = {}
    for la in langs:
        if la not in it.text:
            continue
        parts = []
        for n, gap in enumerate(it.gaps, 1):
            content = it.text[la].gaps.get(gap.id, GapContent())
            match gap:
                case ShortAnswerGap():
                    text = "; ".join(" / ".join(content.answers.get(a.id, ()))
                                     + _share(a.fraction, la) for a in gap.answers)
                case NumericalGap():
                    text = _number_answers(gap.answers, la)
                case ChoiceGap():
                    text = letter(gap.options.index(gap.key))
                case MultipleResponseGap():
                    text = ", ".join(letter(gap.options.index(k)) for k in gap.key)
                case _:
                    assert_never(gap)
            parts.append(f"({n}) {text}")
        words[la] = "; ".join(parts)
    for gap in it.gaps:
        gaps[gap.id] = {"type": gap.type, "points": gap.points,
                        **gap.model_dump(include={"answers", "options", "key"},
                                         exclude_defaults=False)}
    return Answer([], [g.id for g in it.gaps], [], words, {"gaps": gaps})


def _share(fraction: float, lang: str) -> str:
    return "" if fraction == 1 else f" ({number(round(fraction * 100, 2), lang)}%)"


def _numbers(it: Numerical, lang: str) -> str:
    out = _number_answers(it.answers, lang)
    if it.units:
        out += " [" + ", ".join(u.unit for u in it.units) + "]"
    return out


def _number_answers(answers: Sequence[NumericAnswer], lang: str) -> str:
    parts = []
    for a in answers:
        if a.any_other:  # feedback for the numbers no answer accepts
            continue
        if a.value is not None:
            text = number(a.value, lang)
            if a.tolerance:
                text += f" ± {number(a.tolerance, lang)}"
        else:
            assert a.min is not None and a.max is not None
            text = f"{number(a.min, lang)} … {number(a.max, lang)}"
        parts.append(text + _share(a.fraction, lang))
    return "; ".join(parts)


