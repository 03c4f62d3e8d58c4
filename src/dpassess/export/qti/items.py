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

from dpassess.diagnostics import Diagnostic, warning
from dpassess.export.qti.names import (
    FORMAT,
    QTI_LOCATION,
    QTI_NS,
    QTI_NSMAP,
    SCHEMA_LOCATION,
    TOOL,
    XML_LANG,
    Q,
    item_identifier,
    number,
)
from dpassess.export.xmlfast import copied, nsmap
from dpassess.lms import canvas
from dpassess.markup.markdown import to_html, to_inline_html, to_plain
from dpassess.markup.xhtml import MARKUP, append_flow
from dpassess.markup.xmlchars import xml_safe
from dpassess.model import ChoiceBase, Item, MultipleResponse, SingleChoice, TrueFalse


def assessment_item(item: Item, lang: str, path: str = "") -> tuple[etree._Element, list[Diagnostic]]:
    """The item's assessmentItem in `lang` (the item has text in it), and its warnings; `path`
    is the item's source file, named in the warnings."""
    build = _Builder(item, lang, path)
    match item:
        case SingleChoice():
            root = _single_choice(build, item)
        case MultipleResponse():
            root = _multiple_response(build, item)
        case TrueFalse():
            root = _true_false(build, item)
        case _:
            assert_never(item)
    return root, build.warnings


def _single_choice(build: _Builder, item: SingleChoice) -> etree._Element:
    """One answer, scored by the match_correct template's rule (scaled to the points)."""
    return build.choice_item(item)


def _multiple_response(build: _Builder, item: MultipleResponse) -> etree._Element:
    """Any number of answers: each option's fraction of the points in a mapping (floor 0,
    ceiling the points), scored by the map_response template's rule."""
    return build.choice_item(item, fractions=item.fractions())


def _true_false(build: _Builder, item: TrueFalse) -> etree._Element:
    """A two-choice item: options `true` and `false`, their text in the item's language."""
    return build.choice_item(item)


class _Builder:
    """What every builder needs: the item's content in the language, and its warnings."""

    def __init__(self, item: Item, lang: str, path: str) -> None:
        self.item, self.lang, self.path = item, lang, path
        self.content = item.text[lang]
        self.warnings: list[Diagnostic] = []

    def warn(self, field: str, message: str) -> None:
        self.warnings.append(warning(FORMAT, message, path=self.path, field=field,
                                     item=self.item.id))

    def text(self, field: str, source: str) -> str:
        """`source` without the characters XML cannot carry (a warning names them)."""
        clean, removed = xml_safe(source)
        if removed:
            self.warn(field, f"removed characters XML cannot carry: {removed}")
        return clean

    def flow(self, parent: etree._Element, field: str, html: str) -> bool:
        """Put rendered `html` into `parent` as QTI XHTML (what QTI does not allow is left out,
        with a warning), kept as it is by the pretty printer; True when it is markup (not plain
        text or one plain paragraph)."""
        notes: set[str] = set()
        kind = append_flow(parent, html, notes)
        if parent.text is None:
            parent.text = ""  # see _keep_as_is
        if notes:
            for note in sorted(notes):
                self.warn(field, note)
        return kind is MARKUP

    def choice_item(self, item: ChoiceBase, *, fractions: Mapping[str, float] | None = None
                    ) -> etree._Element:
        """A choiceInteraction item: the key as the correct response, the stem, the options, a
        feedback rule and modal feedback per option that has feedback, and the explanation as
        general feedback. One answer (match_correct), or with `fractions` (each option's
        fraction of the points) any number of them (a mapping, map_response)."""
        lang, content = self.lang, self.content
        multiple = fractions is not None
        feedback = tuple((oid, canvas.answer_feedback_id(n))
                         for n, oid in enumerate(item.option_ids, 1) if content.feedback.get(oid))
        title = to_plain(self.text(f"text.{lang}.title", item.title(lang))) or item.id
        root = etree.Element(Q + "assessmentItem", {
            SCHEMA_LOCATION: QTI_LOCATION, "identifier": item_identifier(item, lang),
            "title": title, "adaptive": "false", "timeDependent": "false", "toolName": TOOL,
            XML_LANG: lang}, nsmap=QTI_NSMAP)
        root.append(_response_declaration(
            tuple(item.key), None if fractions is None else tuple(fractions.items()),
            item.points))
        root.append(_score_declaration("SCORE", item.points))
        root.append(_score_declaration("MAXSCORE", item.points))
        root.append(_feedback_declaration())

        body = SubElement(root, Q + "itemBody")
        self.flow(SubElement(body, Q + "div"), f"text.{lang}.stem",
                  to_html(self.text(f"text.{lang}.stem", content.stem)))
        interaction = SubElement(body, Q + "choiceInteraction", responseIdentifier="RESPONSE",
                                 shuffle="true" if item.shuffle else "false",
                                 maxChoices=str(len(item.options)) if multiple else "1")
        for option in item.options:
            field = f"text.{lang}.options.{option.id}"
            choice = SubElement(interaction, Q + "simpleChoice", identifier=option.id)
            if option.locked:
                choice.set("fixed", "true")
            self.flow(choice, field,
                      to_inline_html(self.text(field, item.option_text(lang, option.id))))

        root.append(_response_processing(multiple, item.points, bool(content.explanation),
                                         feedback))
        for oid, fid in feedback:
            field = f"text.{lang}.feedback.{oid}"
            div = SubElement(_modal_feedback(root, fid), Q + "div")
            markup = self.flow(div, field, to_html(self.text(field, content.feedback[oid])))
            if markup and canvas.keeps_part_of_answer_feedback(div):
                self.warn(field, "Canvas keeps only the first paragraph of option feedback; "
                                 "the package carries all of it")
        if content.explanation:
            field = f"text.{lang}.explanation"
            self.flow(SubElement(_modal_feedback(root, canvas.GENERAL_FEEDBACK_ID), Q + "div"),
                      field, to_html(self.text(field, content.explanation)))
        return root


# --- what does not depend on the text: built once per distinct arguments, copied ---------------


@copied
def _response_declaration(key: tuple[str, ...], fractions: tuple[tuple[str, float], ...] | None,
                          points: float) -> etree._Element:
    """RESPONSE: the key as the correct response; with `fractions`, several responses, each
    option mapped to its fraction of the points (the sum held between 0 and the points)."""
    response = _element("responseDeclaration", identifier="RESPONSE",
                        cardinality="single" if fractions is None else "multiple",
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
def _score_declaration(identifier: str, points: float) -> etree._Element:
    """SCORE (between 0 and the points, 0 at first) or MAXSCORE (the points)."""
    outcome = _element("outcomeDeclaration", identifier=identifier, cardinality="single",
                       baseType="float")
    if identifier == "SCORE":
        outcome.set("normalMinimum", "0")
        outcome.set("normalMaximum", number(points))
    value = "0" if identifier == "SCORE" else number(points)
    SubElement(SubElement(outcome, Q + "defaultValue"), Q + "value").text = value
    return outcome


@copied
def _feedback_declaration() -> etree._Element:
    """FEEDBACK: the identifiers of the modal feedback to show."""
    return _element("outcomeDeclaration", identifier="FEEDBACK", cardinality="multiple",
                    baseType="identifier")


@copied
def _response_processing(multiple: bool, points: float, explanation: bool,
                         feedback: tuple[tuple[str, str], ...]) -> etree._Element:
    """The scoring rule (written out, not a template reference, so the feedback rules can
    follow it), then a rule per (option, feedback identifier) in `feedback`; the explanation's
    feedback first, shown whatever the response."""
    processing = _element("responseProcessing")
    if explanation:
        _add_feedback(processing, canvas.GENERAL_FEEDBACK_ID)
    if multiple:
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
    _set_score(when, points)
    _set_score(SubElement(rule, Q + "responseElse"), "0")


def _map_response(processing: etree._Element) -> None:
    """SCORE := 0 without a response, else the mapped response (the map_response template's
    rule; the mapping's bounds hold it between 0 and the points)."""
    rule = SubElement(processing, Q + "responseCondition")
    when = SubElement(rule, Q + "responseIf")
    SubElement(SubElement(when, Q + "isNull"), Q + "variable", identifier="RESPONSE")
    _set_score(when, "0")
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
    _add_feedback(when, feedback_id)


def _element(tag: str, **attrib: str) -> etree._Element:
    """A QTI element standing alone (declaring the QTI namespace as the default one)."""
    return etree.Element(Q + tag, attrib, nsmap=_QTI_DEFAULT)


_QTI_DEFAULT = nsmap({None: QTI_NS})


def _set_score(parent: etree._Element, value: str) -> None:
    score = SubElement(parent, Q + "setOutcomeValue", identifier="SCORE")
    SubElement(score, Q + "baseValue", baseType="float").text = value


def _add_feedback(parent: etree._Element, identifier: str) -> None:
    """FEEDBACK := FEEDBACK + {identifier} (the shape Canvas reads an answer's feedback from)."""
    union = SubElement(SubElement(parent, Q + "setOutcomeValue", identifier="FEEDBACK"),
                       Q + "multiple")
    SubElement(union, Q + "variable", identifier="FEEDBACK")
    SubElement(union, Q + "baseValue", baseType="identifier").text = identifier


def _modal_feedback(root: etree._Element, identifier: str) -> etree._Element:
    return _keep_as_is(SubElement(root, Q + "modalFeedback", outcomeIdentifier="FEEDBACK",
                                  identifier=identifier, showHide="show"))


def _keep_as_is(el: etree._Element) -> etree._Element:
    """Keep pretty-printing out of `el`'s content, where added whitespace would show.

    libxml2 indents only inside elements without text children, and not at all below one that
    has some; an empty text node marks `el` so without adding a character to the output.
    """
    if el.text is None:
        el.text = ""
    return el
