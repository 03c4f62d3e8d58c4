"""A cloze item in one language -> a QTI 2.1 `assessmentItem` with an interaction per gap where
the stem names it: a `textEntryInteraction` for a short-answer or numerical gap, an
`inlineChoiceInteraction` for a choice gap, and a `choiceInteraction` after the stem for a
multiple-response gap (a block interaction cannot sit in a sentence: the stem shows the gap's
number). Each gap has its own response (`RESPONSE_<gap id>`); the response processing adds each
gap's earnings to SCORE, so the item scores the sum of its gaps.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import assert_never

from lxml import etree

from dpassess.export.qti.builder import Builder, add_feedback, keep_as_is, sub
from dpassess.export.qti.names import Q, number
from dpassess.export.qti.typed import wildcard_pattern
from dpassess.lms import canvas
from dpassess.markup.markdown import to_inline_html, to_plain
from dpassess.markup.maths import MATHML_NS
from dpassess.model import (
    ChoiceGap,
    Cloze,
    GapContent,
    MultipleResponseGap,
    NumericalGap,
    ShortAnswerGap,
)
from dpassess.model.items import GAP_REF

#: The tag prefix of a MathML element.
MATHML = f"{{{MATHML_NS}}}"

AnyGap = ShortAnswerGap | NumericalGap | ChoiceGap | MultipleResponseGap


def response_id(gap_id: str) -> str:
    """The identifier of a gap's response variable."""
    return f"RESPONSE_{gap_id}"


def feedback_id(gap_id: str, answer_id: str) -> str:
    """The identifier of the modal feedback for one answer or option of a gap."""
    return f"FB_{gap_id}_{answer_id}"


def cloze(build: Builder, item: Cloze) -> etree._Element:
    """The cloze item (see the module's docstring)."""
    lang = build.lang
    texts = {g.id: item.text[lang].gaps.get(g.id, GapContent()) for g in item.gaps}
    points = {g.id: item.points * item.gap_share(g.id) for g in item.gaps}
    root = build.root()
    for gap in item.gaps:
        root.append(_declaration(build, gap, texts[gap.id], points[gap.id]))
    build.declare_scores(root, item.points)
    body = build.body(root)
    placed = _place(build, item, body, texts)
    for gap in item.gaps:
        if gap.id not in placed:
            build.warn(f"text.{lang}.stem", f"the gap [[{gap.id}]] is not in the stem as "
                                            "written (inside code, a formula or a link?): its "
                                            "interaction follows the stem")
            body.append(_interaction(build, gap, texts[gap.id], block=True))
    processing = sub(root, "responseProcessing")
    if build.content.explanation:
        add_feedback(processing, canvas.GENERAL_FEEDBACK_ID)
    for gap in item.gaps:
        _rules(build, processing, gap, texts[gap.id], points[gap.id])
    for gap in item.gaps:
        for aid, text in texts[gap.id].feedback.items():
            build.feedback(root, feedback_id(gap.id, aid),
                           f"text.{lang}.gaps.{gap.id}.feedback.{aid}", text)
    build.explanation(root)
    return root


def _declaration(build: Builder, gap: AnyGap, text: GapContent, points: float
                 ) -> etree._Element:
    decl = etree.Element(Q + "responseDeclaration", identifier=response_id(gap.id))
    match gap:
        case ShortAnswerGap():
            decl.set("cardinality", "single")
            decl.set("baseType", "string")
            best = next(a for a in gap.answers if a.fraction == 1)
            wordings = text.answers.get(best.id, ())
            if wordings:
                sub(sub(decl, "correctResponse"), "value",
                    build.text(f"text.{build.lang}.gaps.{gap.id}.answers.{best.id}",
                               wordings[0].replace("\\*", "*")))
        case NumericalGap():
            decl.set("cardinality", "single")
            decl.set("baseType", "float")
            best_n = next(a for a in gap.answers if a.fraction == 1)
            lo, hi = best_n.bounds
            sub(sub(decl, "correctResponse"), "value",
                number(best_n.value if best_n.value is not None else (lo + hi) / 2))
        case ChoiceGap():
            decl.set("cardinality", "single")
            decl.set("baseType", "identifier")
            sub(sub(decl, "correctResponse"), "value", gap.key)
            mapping = sub(decl, "mapping", lowerBound="0", upperBound=number(points),
                          defaultValue="0")
            for oid, fraction in gap.fractions().items():
                sub(mapping, "mapEntry", mapKey=oid, mappedValue=number(fraction * points))
        case MultipleResponseGap():
            decl.set("cardinality", "multiple")
            decl.set("baseType", "identifier")
            correct = sub(decl, "correctResponse")
            for oid in gap.key:
                sub(correct, "value", oid)
            mapping = sub(decl, "mapping", lowerBound="0", upperBound=number(points),
                          defaultValue="0")
            for oid, fraction in gap.fractions().items():
                sub(mapping, "mapEntry", mapKey=oid, mappedValue=number(fraction * points))
        case _:
            assert_never(gap)
    return decl


def _interaction(build: Builder, gap: AnyGap, text: GapContent, *, block: bool
                 ) -> etree._Element:
    """The gap's interaction (`block`: where the stem could not hold it inline)."""
    lang = build.lang
    rid = response_id(gap.id)
    match gap:
        case ShortAnswerGap():
            width = max((len(w) for ws in text.answers.values() for w in ws), default=10)
            el = etree.Element(Q + "textEntryInteraction", responseIdentifier=rid,
                               expectedLength=str(min(max(width, 5), 200)))
        case NumericalGap():
            width = max((len(number(x)) for a in gap.answers if not a.any_other
                         for x in a.bounds), default=4)
            el = etree.Element(Q + "textEntryInteraction", responseIdentifier=rid,
                               expectedLength=str(max(width, 4)))
        case ChoiceGap():
            if gap.display != "dropdown":
                build.warn(f"gaps.{gap.id}.display",
                           f"a choice gap inside a sentence is a drop-down in QTI: shown as "
                           f"one, not {gap.display}")
            el = etree.Element(Q + "inlineChoiceInteraction", responseIdentifier=rid,
                               shuffle="true" if gap.shuffle else "false")
            for oid in gap.options:
                field = f"text.{lang}.gaps.{gap.id}.options.{oid}"
                choice = sub(el, "inlineChoice", identifier=oid)
                choice.text = _plain(build, field, text.options.get(oid, ""))
        case MultipleResponseGap():
            el = etree.Element(Q + "choiceInteraction", responseIdentifier=rid,
                               shuffle="true" if gap.shuffle else "false",
                               maxChoices=str(len(gap.options)))
            if gap.display == "horizontal":
                el.set("class", "horizontal")
            for oid in gap.options:
                field = f"text.{lang}.gaps.{gap.id}.options.{oid}"
                choice = sub(el, "simpleChoice", identifier=oid)
                build.flow(choice, field,
                           build.html(field, text.options.get(oid, ""), inline=True))
        case _:
            assert_never(gap)
    if block and not isinstance(gap, MultipleResponseGap):
        p = etree.Element(Q + "p")
        keep_as_is(p).append(el)
        return p
    return el


def _plain(build: Builder, field: str, source: str) -> str:
    """An inline choice's text: QTI's inlineChoice holds text only (no maths, no images); what
    else the option's Markdown shows (emphasis, code, maths, an image) is warned about."""
    if re.search(r"<[A-Za-z]", to_inline_html(source)):
        build.warn(field, "a drop-down option in QTI (inlineChoice) holds plain text: its "
                          "formatting, maths or images are left out, its text kept")
    return build.text(field, to_plain(source))


def _place(build: Builder, item: Cloze, body: etree._Element,
           texts: dict[str, GapContent]) -> set[str]:
    """Replace each `[[gap]]` in the body's text by the gap's interaction; the ids placed."""
    gaps = {g.id: g for g in item.gaps}
    placed: set[str] = set()
    blocks: list[tuple[etree._Element, etree._Element]] = []  # (stem div, interaction)

    def make(gid: str, host: etree._Element) -> etree._Element | str:
        gap = gaps.get(gid)
        if gap is None or gid in placed:
            return f"[[{gid}]]"
        placed.add(gid)
        if isinstance(gap, MultipleResponseGap):
            blocks.append((host, _interaction(build, gap, texts[gid], block=True)))
            return f"({item.gaps.index(gap) + 1})"
        return _interaction(build, gap, texts[gid], block=False)

    def in_formula(el: etree._Element | None) -> bool:  # MathML holds no interaction
        return el is not None and el.tag.startswith(MATHML)

    for el in list(body.iter(etree.Element)):  # MathML too: a gap may follow a formula
        if el.text and "[[" in el.text and not in_formula(el):
            parts = re.split(GAP_REF, el.text)
            el.text = parts[0]
            at = 0
            for gid, rest in zip(parts[1::2], parts[2::2], strict=True):
                made = make(gid, el)
                if isinstance(made, str):
                    _append_text(el, at, made + rest)
                else:
                    made.tail = rest
                    el.insert(at, made)
                    at += 1
        if el.tail and "[[" in el.tail and not in_formula(el.getparent()):
            parent = el.getparent()
            assert parent is not None
            parts = re.split(GAP_REF, el.tail)
            el.tail = parts[0]
            prev = el
            for gid, rest in zip(parts[1::2], parts[2::2], strict=True):
                made = make(gid, parent)
                if isinstance(made, str):
                    prev.tail = (prev.tail or "") + made + rest
                else:
                    made.tail = rest
                    prev.addnext(made)
                    prev = made
    for _, interaction in blocks:
        body.append(interaction)
    return placed


def _append_text(el: etree._Element, at: int, text: str) -> None:
    """`text` after the first `at` children of `el` (in `el.text` when `at` is 0)."""
    if at == 0:
        el.text = (el.text or "") + text
    else:
        child = el[at - 1]
        child.tail = (child.tail or "") + text


def _rules(build: Builder, processing: etree._Element, gap: AnyGap, text: GapContent,
           points: float) -> None:
    """SCORE := SCORE + what the gap's response earns (and the feedback of the answer it
    matched)."""
    rid = response_id(gap.id)
    lang = build.lang
    match gap:
        case ChoiceGap() | MultipleResponseGap():
            when = sub(sub(sub(processing, "responseCondition"), "responseIf"), "not")
            sub(sub(when, "isNull"), "variable", identifier=rid)
            branch = when.getparent()
            assert branch is not None
            _add_score(branch, lambda parent: sub(parent, "mapResponse", identifier=rid))
            for oid in gap.options:
                if text.feedback.get(oid):
                    fb = sub(sub(processing, "responseCondition"), "responseIf")
                    if isinstance(gap, ChoiceGap):
                        test = sub(fb, "match")
                        sub(test, "variable", identifier=rid)
                        sub(test, "baseValue", oid, baseType="identifier")
                    else:
                        test = sub(fb, "member")
                        sub(test, "baseValue", oid, baseType="identifier")
                        sub(test, "variable", identifier=rid)
                    add_feedback(fb, feedback_id(gap.id, oid))
        case ShortAnswerGap():
            rule = sub(processing, "responseCondition")
            when = sub(rule, "responseIf")
            sub(sub(when, "isNull"), "variable", identifier=rid)
            case = "true" if gap.case_sensitive else "false"
            for a in gap.answers:
                wordings = text.answers.get(a.id, ())
                if not wordings:
                    continue
                branch = sub(rule, "responseElseIf")
                parent = sub(branch, "or") if len(wordings) > 1 else branch
                for k, wording in enumerate(wordings):
                    clean = build.text(f"text.{lang}.gaps.{gap.id}.answers.{a.id}.{k}", wording)
                    if "*" in clean.replace("\\*", ""):
                        test = sub(parent, "patternMatch",
                                   pattern=wildcard_pattern(clean, gap.case_sensitive))
                        sub(test, "variable", identifier=rid)
                    else:
                        test = sub(parent, "stringMatch", caseSensitive=case)
                        sub(test, "variable", identifier=rid)
                        sub(test, "baseValue", clean.replace("\\*", "*"), baseType="string")
                _add_points(branch, a.fraction * points)
                if text.feedback.get(a.id):
                    add_feedback(branch, feedback_id(gap.id, a.id))
        case NumericalGap():
            rule = sub(processing, "responseCondition")
            when = sub(rule, "responseIf")
            sub(sub(when, "isNull"), "variable", identifier=rid)
            for n in gap.answers:
                if n.any_other:
                    branch = sub(rule, "responseElse")
                elif n.value is not None:
                    branch = sub(rule, "responseElseIf")
                    test = (sub(branch, "equal", toleranceMode="absolute",
                                tolerance=number(n.tolerance))
                            if n.tolerance else sub(branch, "equal", toleranceMode="exact"))
                    sub(test, "variable", identifier=rid)
                    sub(test, "baseValue", number(n.value), baseType="float")
                else:
                    branch = sub(rule, "responseElseIf")
                    both = sub(branch, "and")
                    for op, bound in zip(("gte", "lte"), n.bounds, strict=True):
                        test = sub(both, op)
                        sub(test, "variable", identifier=rid)
                        sub(test, "baseValue", number(bound), baseType="float")
                _add_points(branch, n.fraction * points)
                if text.feedback.get(n.id):
                    add_feedback(branch, feedback_id(gap.id, n.id))
        case _:
            assert_never(gap)


def _add_points(branch: etree._Element, value: float) -> None:
    if value:
        _add_score(branch, lambda parent: sub(parent, "baseValue", number(value),
                                              baseType="float"))


def _add_score(branch: etree._Element, term: Callable[[etree._Element], object]) -> None:
    """SCORE := SCORE + term(parent)."""
    total = sub(sub(branch, "setOutcomeValue", identifier="SCORE"), "sum")
    sub(total, "variable", identifier="SCORE")
    term(total)
