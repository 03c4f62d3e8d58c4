"""A cloze item -> Moodle's embedded-answer text (`{1:SHORTANSWER:=Paris#Right~...}`), the
question text of a `multianswer` question, escaped as `qtype_multianswer_extract_question` reads it.

That parser ends an answer at a `~`, `#` or `}` not preceded by `\\`, `&` or `&amp;`, ends a
feedback at a `~` or `}` not preceded by `\\`, reads a leading `=` or `%n%` as the grade, and then
decodes HTML entities (but undoes only `\\}` and `\\#`). So every character it would read as
syntax is written as a numeric character reference (`&#126;` for `~`): the reference holds no
`~` or `}`, its `#` follows `&`, and the entity decoding gives the character back. The rest of
the question text has every `{` that could open an embedded answer (`{1:`, `{:`) or a gap's
placeholder (`{#1}`) written `&#123;`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import assert_never

from dpassess.export.moodle.texts import ItemTexts, midpoint, number
from dpassess.markup.markdown import to_inline_html
from dpassess.model import (
    ChoiceGap,
    Cloze,
    GapContent,
    Item,
    MultipleResponse,
    MultipleResponseGap,
    Numerical,
    NumericalGap,
    ShortAnswer,
    ShortAnswerGap,
    SingleChoice,
)
from dpassess.model.items import GAP_REF

#: What the parser reads as syntax inside an answer or a feedback, and what opens a gap.
_SYNTAX = re.compile(r"[{}~#=%\\\"/:]")
#: In the rest of the text: a `{` that opens an embedded answer or a gap's placeholder.
_OPENER = re.compile(r"\{(?=[0-9]*:|#)")


def _references(text: str) -> str:
    """`text` with each character Moodle's cloze parser reads as syntax written as a numeric
    character reference, which the parser decodes back; `&amp;` as `&#38;` (the parser does not
    end an answer at a `#` after `&amp;`)."""
    return _SYNTAX.sub(lambda m: f"&#{ord(m.group(0))};", text).replace("&amp;", "&#38;")


def escape(text: str) -> str:
    """`text` (plain: a short answer's wording) as the parser reads it back: its one decoding
    of the entities gives `text`."""
    return _references(html.escape(text))


def escape_html(html_text: str) -> str:
    """`html_text` (a choice or a feedback) as the parser reads it back. The parser decodes the
    entities once and Moodle keeps the result as HTML, so each `&` is written `&#38;`: `&lt;`
    as `&#38;lt;`, which gives `&lt;` back (a bare `<` could open a tag or a comment)."""
    return _references(html_text.replace("&", "&amp;"))


def altered(text: str) -> bool:
    """Whether Moodle's parser changes `text` (decoded) whatever the escaping: it replaces
    `\\}` and `\\#` by `}` and `#` after decoding the entities."""
    return "\\}" in text or "\\#" in text


def guard(html_text: str) -> str:
    """Question text around the gaps, with no `{` that Moodle would read as a gap."""
    return _OPENER.sub("&#123;", html_text)


def _grade(fraction: float) -> str:
    """`=` for full marks, `%n%` for part of them (and for none: `%0%`)."""
    return "=" if fraction == 1 else f"%{number(round(fraction * 100, 7))}%"


def embedded(t: ItemTexts, item: Cloze, gap_id: str, lang: str) -> str:
    """One gap as Moodle's embedded answer, in `lang`'s wordings and option texts."""
    gap = item.gap(gap_id)
    content = item.text[lang].gaps.get(gap_id, GapContent())
    where = f"text.{lang}.gaps.{gap_id}"
    weight = round(gap.points)
    if weight != gap.points or weight < 1:
        t.warn(f"gaps.{gap_id}.points", f"Moodle weighs a gap by a whole number: "
                                        f"{gap.points:g} written as {max(weight, 1)}")
    weight = max(weight, 1)

    def fb(aid: str) -> str:
        text = content.feedback.get(aid, "")
        if not text:
            return ""
        html_text = t.safe(f"{where}.feedback.{aid}", to_inline_html(text))
        _check(t, f"{where}.feedback.{aid}", html_text)
        return "#" + escape_html(html_text)

    alts: list[str] = []
    match gap:
        case ShortAnswerGap():
            kind = "SHORTANSWER_C" if gap.case_sensitive else "SHORTANSWER"
            seen: set[str] = set()
            for a in gap.answers:
                for wording in content.answers.get(a.id, ()):
                    w = wording.strip()
                    key = w if gap.case_sensitive else w.casefold()
                    if not w or key in seen:
                        continue
                    seen.add(key)
                    _check(t, f"{where}.answers.{a.id}", w)
                    alts.append(_grade(a.fraction) + escape(w) + fb(a.id))
        case NumericalGap():
            kind = "NUMERICAL"
            for n in gap.answers:
                if n.any_other:
                    value = "*"
                elif n.value is not None:
                    value = number(n.value) + (f":{number(n.tolerance)}" if n.tolerance else "")
                else:
                    assert n.min is not None and n.max is not None
                    mid, tol, exact = midpoint(n.min, n.max)
                    if not exact:
                        t.warn(f"gaps.{gap_id}.answers.{n.id}",
                               f"Moodle holds the range {number(n.min)}..{number(n.max)} as "
                               f"{mid} ± {tol}: a response at either end may be marked wrong")
                    value = f"{mid}:{tol}"
                alts.append(_grade(n.fraction) + value + fb(n.id))
        case ChoiceGap():
            kind = {"dropdown": "MULTICHOICE", "vertical": "MULTICHOICE_V",
                    "horizontal": "MULTICHOICE_H"}[gap.display]
            kind = _shuffled(kind, gap.shuffle)
            fractions = gap.fractions()
            for oid in gap.options:
                alts.append(_grade(fractions[oid]) + _option(t, content, where, oid) + fb(oid))
        case MultipleResponseGap():
            kind = _shuffled("MULTIRESPONSE" if gap.display == "vertical" else "MULTIRESPONSE_H",
                             gap.shuffle)
            # explicit grades: Moodle's default gives a wrong option -1/(right options)
            for oid, fraction in gap.fractions().items():
                alts.append(f"%{number(round(fraction * 100, 7))}%"
                            + _option(t, content, where, oid) + fb(oid))
        case _:
            assert_never(gap)
    return "{" + f"{weight}:{kind}:" + "~".join(alts) + "}"


def _shuffled(kind: str, shuffle: bool) -> str:
    if not shuffle:
        return kind
    return {"MULTICHOICE": "MULTICHOICE_S", "MULTICHOICE_V": "MULTICHOICE_VS",
            "MULTICHOICE_H": "MULTICHOICE_HS", "MULTIRESPONSE": "MULTIRESPONSE_S",
            "MULTIRESPONSE_H": "MULTIRESPONSE_HS"}[kind]


def _option(t: ItemTexts, content: GapContent, where: str, oid: str) -> str:
    html_text = t.safe(f"{where}.options.{oid}", to_inline_html(content.options.get(oid, "")))
    _check(t, f"{where}.options.{oid}", html_text)
    return escape_html(html_text)


def _check(t: ItemTexts, field: str, text: str) -> None:
    if altered(text):
        t.warn(field, "Moodle's cloze parser turns \\} into } and \\# into # in a gap's text, "
                      "however it is written: Moodle stores it changed")


def question_text(t: ItemTexts, item: Cloze, stem_html: str, lang: str,
                  warn: Callable[[str, str], None]) -> str:
    """The stem's HTML with each `[[gap]]` replaced by its embedded answer."""
    found: list[str] = []

    def sub(m: re.Match[str]) -> str:
        gid = m.group(1)
        if gid not in {g.id for g in item.gaps} or gid in found:
            return m.group(0)
        found.append(gid)
        return embedded(t, item, gid, lang)

    text = re.sub(GAP_REF, sub, guard(stem_html))
    for g in item.gaps:
        if g.id not in found:
            warn(f"text.{lang}.stem", f"the gap [[{g.id}]] is not in the stem as written (inside "
                                      "code or a link?): Moodle's question has no such gap")
    return text


def gap_item(item: Cloze, gap_id: str) -> Item:
    """The item of the gap's kind that asks what the gap asks (the cloze's stem, with the gap's
    answers or options and feedback): how a format without cloze questions writes a gap."""
    gap = item.gap(gap_id)
    base = {"id": item.id, "topic": item.topic, "points": item.points, "tags": item.tags,
            "status": item.status, "stimulus": item.stimulus, "lms": item.lms}

    def head(lang: str) -> dict[str, object]:
        c = item.text[lang]
        return {"title": c.title, "stem": c.stem, "explanation": c.explanation}

    def gc(lang: str) -> GapContent:
        return item.text[lang].gaps.get(gap_id, GapContent())

    match gap:
        case ShortAnswerGap():
            return ShortAnswer.model_validate({
                **base, "type": "short_answer", "answers": gap.answers,
                "case_sensitive": gap.case_sensitive,
                "text": {la: {**head(la), "answers": gc(la).answers, "feedback": gc(la).feedback}
                         for la in item.text}})
        case NumericalGap():
            return Numerical.model_validate({
                **base, "type": "numerical", "answers": gap.answers,
                "text": {la: {**head(la), "feedback": gc(la).feedback} for la in item.text}})
        case ChoiceGap():
            return SingleChoice.model_validate({
                **base, "type": "single_choice", "options": list(gap.options), "key": gap.key,
                "weights": gap.weights, "shuffle": gap.shuffle,
                "text": {la: {**head(la), "options": gc(la).options, "feedback": gc(la).feedback}
                         for la in item.text}})
        case MultipleResponseGap():
            return MultipleResponse.model_validate({
                **base, "type": "multiple_response", "options": list(gap.options),
                "key": list(gap.key), "shuffle": gap.shuffle,
                "text": {la: {**head(la), "options": gc(la).options, "feedback": gc(la).feedback}
                         for la in item.text}})
        case _:
            assert_never(gap)
