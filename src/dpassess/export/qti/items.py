"""One item in one language -> its QTI 2.1 `assessmentItem` element, with a warning for each
thing QTI (or Canvas, which reads it) does not carry as written.

A builder per item type, chosen by `assessment_item`; each writes the item's elements in the
order the QTI 2.1.2 schema defines: the response and outcome declarations, the body (the stem
and the interaction), the response processing, the modal feedback. Markdown is rendered by
`dpassess.markup.markdown` and parsed into QTI's XHTML subset by `dpassess.markup.xhtml`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import assert_never

from lxml import etree
from lxml.etree import SubElement

from dpassess.diagnostics import Diagnostic
from dpassess.export.qti.builder import (
    Builder,
    add_feedback,
    element,
    set_score,
)
from dpassess.export.qti.cloze import cloze
from dpassess.export.qti.names import Q, item_identifier, number
from dpassess.export.qti.typed import essay, matching, numerical, ordering, short_answer
from dpassess.export.xmlfast import copied
from dpassess.lms import canvas
from dpassess.markup.maths import MathsMode
from dpassess.model import (
    ChoiceBase,
    Cloze,
    Description,
    Essay,
    Item,
    Matching,
    MultipleResponse,
    Numerical,
    Ordering,
    ShortAnswer,
    SingleChoice,
    Stimulus,
    TrueFalse,
)


def assessment_item(item: Item, lang: str, path: str = "", *, identifier: str | None = None,
                    stimulus: Stimulus | None = None, maths: MathsMode = "mathml",
                    held: list[bytes] | None = None) -> tuple[etree._Element, list[Diagnostic]]:
    """The item's assessmentItem in `lang` (the item has text in it), and its warnings; `path`
    is the item's source file, named in the warnings; `identifier` its identifier in the
    package (by default `names.item_identifier`); `stimulus` the stimulus it is read with;
    `maths` how formulas are written (MathML with the TeX as annotation, or TeX between
    delimiters for players that run MathJax). With `held`, the children that do not depend
    on the text are placeholders, their bytes appended to `held`: `xmlfast.spliced(root,
    held)` writes the item."""
    build = Builder(item, lang, path, identifier or item_identifier(item, lang), stimulus, maths,
                    held)
    match item:
        case SingleChoice():
            root = _single_choice(build, item)
        case MultipleResponse():
            root = _multiple_response(build, item)
        case TrueFalse():
            root = _true_false(build, item)
        case Numerical():
            root = numerical(build, item)
        case ShortAnswer():
            root = short_answer(build, item)
        case Matching():
            root = matching(build, item)
        case Essay():
            root = essay(build, item)
        case Ordering():
            root = ordering(build, item)
        case Cloze():
            root = cloze(build, item)
        case Description():
            root = build.root()
            build.body(root)
        case _:
            assert_never(item)
    return build.finish(root), build.warnings


def _single_choice(build: Builder, item: SingleChoice) -> etree._Element:
    """One answer, scored by the match_correct template's rule (scaled to the points); with
    `weights`, each option's fraction of the points in a mapping (map_response)."""
    if item.weights:
        return _choice_item(build, item, fractions=item.fractions(), shuffle=item.shuffle,
                            multiple=False)
    return _choice_item(build, item, shuffle=item.shuffle)


def _multiple_response(build: Builder, item: MultipleResponse) -> etree._Element:
    """Any number of answers: each option's fraction of the points in a mapping (floor 0,
    ceiling the points), scored by the map_response template's rule. Canvas takes an item with
    one key for a single-choice question (it counts the correct answers): a warning says so."""
    if len(item.key) == 1:
        build.warn("key", "a multiple-response item with one key: Canvas imports it as a "
                          "single-choice question (radio buttons); give it another key, or make "
                          "it single_choice")
    return _choice_item(build, item, fractions=item.fractions(), shuffle=item.shuffle)


def _true_false(build: Builder, item: TrueFalse) -> etree._Element:
    """A two-choice item: options `true` and `false`, their text in the item's language,
    never shuffled (a player would otherwise show "False / True")."""
    return _choice_item(build, item, shuffle=False)


def _choice_item(build: Builder, item: ChoiceBase, *, shuffle: bool,
                 fractions: Mapping[str, float] | None = None, multiple: bool = True
                 ) -> etree._Element:
    """A choiceInteraction item: the key as the correct response, the stem, the options, a
    feedback rule and modal feedback per option that has feedback, and the explanation as
    general feedback. One answer (match_correct), or with `fractions` (each option's
    fraction of the points) any number of them (a mapping, map_response), or one of them
    (`multiple` False: one answer, mapped)."""
    lang, content = build.lang, build.content
    multiple = fractions is not None and multiple
    feedback = tuple((oid, canvas.answer_feedback_id(n))
                     for n, oid in enumerate(item.option_ids, 1) if item.text[lang].feedback.get(oid))
    root = build.root()
    build.constant(root, _response_declaration,
                   tuple(item.key), None if fractions is None else tuple(fractions.items()),
                   item.points, multiple)
    build.declare_scores(root, item.points)

    body = build.body(root)
    interaction = _choice_interaction(shuffle, multiple,
                                      tuple((option.id, option.locked) for option in item.options))
    body.append(interaction)
    for option, choice in zip(item.options, list(interaction), strict=True):
        field = f"text.{lang}.options.{option.id}"
        build.flow(choice, field,
                   build.html(field, item.option_text(lang, option.id), inline=True))

    build.constant(root, _response_processing, fractions is not None, multiple, item.points,
                   bool(content.explanation), feedback)
    for oid, fid in feedback:
        build.feedback(root, fid, f"text.{lang}.feedback.{oid}", item.text[lang].feedback[oid])
    build.explanation(root)
    return root


# --- what does not depend on the text: built once per distinct arguments, copied ---------------


@copied
def _choice_interaction(shuffle: bool, multiple: bool, options: tuple[tuple[str, bool], ...]
                        ) -> etree._Element:
    """The choiceInteraction with a simpleChoice per (option id, locked) in `options`, without
    their text; any number of them chosen with `multiple`, else one."""
    interaction = element("choiceInteraction", responseIdentifier="RESPONSE",
                          shuffle="true" if shuffle else "false",
                          maxChoices=str(len(options)) if multiple else "1")
    for oid, locked in options:
        choice = SubElement(interaction, Q + "simpleChoice", identifier=oid)
        if locked:
            choice.set("fixed", "true")
    return interaction


@copied
def _response_declaration(key: tuple[str, ...], fractions: tuple[tuple[str, float], ...] | None,
                          points: float, multiple: bool) -> etree._Element:
    """RESPONSE: the key as the correct response; with `fractions`, each option mapped to its
    fraction of the points (the sum held between 0 and the points), and with `multiple`
    several responses."""
    response = element("responseDeclaration", identifier="RESPONSE",
                        cardinality="multiple" if multiple else "single",
                        baseType="identifier")
    correct = SubElement(response, Q + "correctResponse")
    for oid in key:
        SubElement(correct, Q + "value").text = oid
    if fractions is not None:
        mapping = SubElement(response, Q + "mapping", lowerBound="0", upperBound=number(points),
                             defaultValue="0")
        for oid, fraction in fractions:
            SubElement(mapping, Q + "mapEntry", mapKey=oid, mappedValue=number(fraction * points))
    return response


@copied
def _response_processing(mapped: bool, multiple: bool, points: float, explanation: bool,
                         feedback: tuple[tuple[str, str], ...]) -> etree._Element:
    """The scoring rule (written out, not a template reference, so the feedback rules can
    follow it), then a rule per (option, feedback identifier) in `feedback`; the explanation's
    feedback first, shown whatever the response."""
    processing = element("responseProcessing")
    if explanation:
        add_feedback(processing, canvas.GENERAL_FEEDBACK_ID)
    if mapped:
        _map_response(processing)
    else:
        _match_correct(processing, number(points))
    for oid, fid in feedback:
        _feedback_rule(processing, oid, fid, member=multiple)
    return processing


def _match_correct(processing: etree._Element, points: str) -> None:
    """SCORE := points if the response is the correct one, else 0 (the match_correct
    template's rule, scaled)."""
    rule = SubElement(processing, Q + "responseCondition")
    when = SubElement(rule, Q + "responseIf")
    match = SubElement(when, Q + "match")
    SubElement(match, Q + "variable", identifier="RESPONSE")
    SubElement(match, Q + "correct", identifier="RESPONSE")
    set_score(when, points)
    set_score(SubElement(rule, Q + "responseElse"), "0")


def _map_response(processing: etree._Element) -> None:
    """SCORE := 0 without a response, else the mapped response (the map_response template's
    rule; the mapping's bounds hold it between 0 and the points)."""
    rule = SubElement(processing, Q + "responseCondition")
    when = SubElement(rule, Q + "responseIf")
    SubElement(SubElement(when, Q + "isNull"), Q + "variable", identifier="RESPONSE")
    set_score(when, "0")
    otherwise = SubElement(SubElement(rule, Q + "responseElse"), Q + "setOutcomeValue",
                           identifier="SCORE")
    SubElement(otherwise, Q + "mapResponse", identifier="RESPONSE")


def _feedback_rule(processing: etree._Element, option_id: str, feedback_id: str, *,
                   member: bool) -> None:
    """If `option_id` is chosen (the response, or with `member` among the responses):
    FEEDBACK := FEEDBACK + {feedback_id}."""
    when = SubElement(SubElement(processing, Q + "responseCondition"), Q + "responseIf")
    if member:
        test = SubElement(when, Q + "member")
        SubElement(test, Q + "baseValue", baseType="identifier").text = option_id
        SubElement(test, Q + "variable", identifier="RESPONSE")
    else:
        test = SubElement(when, Q + "match")
        SubElement(test, Q + "variable", identifier="RESPONSE")
        SubElement(test, Q + "baseValue", baseType="identifier").text = option_id
    add_feedback(when, feedback_id)
