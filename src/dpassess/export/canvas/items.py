"""One item in one language -> the QTI 1.2 `<item>` of a Canvas quiz, as Canvas's own quiz export
writes it (the question type in `question_type` metadata, the points in `points_possible`, answers
as `respcondition`s setting SCORE to 100, feedback as `itemfeedback`), and a warning for each thing
Canvas cannot carry (wordings in `dpassess.lms.canvas`, shared with lint rule LM008).

`question(...)` is the per-item builder: it knows nothing of the package around the item (the
assembly is `dpassess.export.canvas.qti12`), only the item, its stimulus and its language.

How Canvas reads each part (canvas-lms `gems/plugins/qti_exporter`, after QTIMigrationTool turns
QTI 1.2 into QTI 2): `question_type` picks the converter; each answer is a `respcondition` whose
`setvar SCORE` is 100; a numerical answer is `<or><varequal>v</varequal><and><vargte>v-m</vargte>
<varlte>v+m</varlte></and></or>` (exact, margin = upper - v) or `<and><vargte>lo</vargte>
<varlte>hi</varlte></and>` (range); a short answer's wordings are the `varequal`s of its
condition; a matching question has one `response_lid` per left side with the right sides as its
labels; feedback is `displayfeedback` of an `itemfeedback` (`general_fb`: after any answer,
`general_incorrect_fb`: after a wrong one, `<answer>_fb`: after that answer).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from lxml import etree
from lxml.etree import SubElement
from markdown_it.common.utils import escapeHtml

from dpassess.diagnostics import Diagnostic, warning
from dpassess.export.canvas.richtext import canvas_html, inline, local_refs
from dpassess.export.xmlfast import nsmap
from dpassess.lms import canvas
from dpassess.markup.markdown import item_title, to_plain
from dpassess.markup.sanitize import drop_unsafe_urls
from dpassess.markup.xmlchars import xml_safe
from dpassess.model import (
    ChoiceGap,
    Cloze,
    Description,
    Essay,
    Item,
    Matching,
    MultipleResponse,
    Numerical,
    Ordering,
    ShortAnswer,
    ShortAnswerGap,
    SingleChoice,
    Stimulus,
    TrueFalse,
)
from dpassess.model.items import GAP_REF

FORMAT = "canvas"
QTI12_NS = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
Q = f"{{{QTI12_NS}}}"
RESPONSE = "response1"
GENERAL_FB = "general_fb"
INCORRECT_FB = "general_incorrect_fb"


@dataclass
class Question:
    """An item's `<item>`, the local files its HTML refers to (as written), its warnings."""

    element: etree._Element | None
    files: list[str] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)


def answer_feedback_id(n: int) -> str:
    """The `itemfeedback` of the `n`-th option or answer (1-based): `fb_<n>` matches none of the
    patterns by which Canvas's importer (`AssessmentItemConverter#get_feedback`) files a
    feedback as the question's own (`wrong|incorrect|_IC$`, `correct|_C$`, `solution`,
    `general_|_all`), as an option id could (`correct`, `all`)."""
    return f"fb_{n}"


def number(x: float | Decimal) -> str:
    """A number as Canvas's answer fields read it: `7`, `0.75`, never `7.0` or `1e-05`."""
    d = Decimal(repr(x)) if isinstance(x, float) else x
    text = format(d.normalize(), "f")
    return "0" if text in ("-0", "") else text


class _Build:
    def __init__(self, item: Item, lang: str, path: str, identifier: str,
                 stimulus: Stimulus | None) -> None:
        self.item, self.lang, self.path = item, lang, path
        self.identifier, self.stimulus = identifier, stimulus
        self.warnings: list[Diagnostic] = []
        self.files: list[str] = []

    def warn(self, fld: str, message: str) -> None:
        self.warnings.append(warning(FORMAT, message, path=self.path, field=fld,
                                     item=self.item.id))

    def html(self, fld: str, source: str, *, block: bool = True) -> str:
        clean, removed = xml_safe(source)
        if removed:
            self.warn(fld, f"characters XML cannot carry removed: {removed!r}")
        html = canvas_html(clean)
        html, dropped = drop_unsafe_urls(html)
        for d in dropped:
            self.warn(fld, f"{d} dropped: the link is not allowed")
        for ref in local_refs(html):
            if ref not in self.files:
                self.files.append(ref)
        return html if block else inline(html)

    def plain(self, fld: str, source: str) -> str:
        text = to_plain(xml_safe(source)[0])
        if "$" in source or "\\(" in source:
            self.warn(fld, "Canvas shows this text as plain text (a menu entry): its formula "
                           "shows as TeX")
        return text


def question(item: Item, lang: str, *, identifier: str, path: str = "",
             stimulus: Stimulus | None = None) -> Question:
    """The item's `<item>` in `lang` (None, with a warning, for a type Canvas cannot take)."""
    b = _Build(item, lang, path, identifier, stimulus)
    content = item.text[lang]
    el = etree.Element(Q + "item", nsmap=nsmap({None: QTI12_NS}))
    el.set("ident", identifier)
    el.set("title", item_title(item, lang) or item.id)
    meta = SubElement(SubElement(el, Q + "itemmetadata"), Q + "qtimetadata")
    presentation = etree.Element(Q + "presentation")
    material = SubElement(presentation, Q + "material")
    stem = b.html(f"text.{lang}.stem", content.stem)
    if stimulus is not None and lang in stimulus.text:
        shared = stimulus.text[lang]
        head = f"<h3>{escapeHtml(xml_safe(shared.title)[0])}</h3>" if shared.title else ""
        stem = (f'<div class="{canvas.STIMULUS_CLASS}">{head}'
                f"{b.html(f'stimulus.text.{lang}', shared.text)}</div>{stem}")
    if len(stem) > canvas.QUESTION_TEXT_LIMIT:
        b.warn(f"text.{lang}.stem", f"the question text is {len(stem):,} characters of HTML; "
               f"Canvas replaces a text over {canvas.QUESTION_TEXT_LIMIT:,}")
    SubElement(material, Q + "mattext", texttype="text/html").text = stem
    processing = etree.Element(Q + "resprocessing")
    outcomes = SubElement(processing, Q + "outcomes")
    SubElement(outcomes, Q + "decvar", maxvalue="100", minvalue="0", varname="SCORE",
               vartype="Decimal")
    feedback: list[tuple[str, str]] = []  # (ident, HTML)
    answer_ids: list[str] = []
    explanation = content.explanation
    if explanation:
        _display(processing, GENERAL_FB, other=True)
        feedback.append((GENERAL_FB, b.html(f"text.{lang}.explanation", explanation)))

    match item:
        case TrueFalse() | SingleChoice() | MultipleResponse():
            kind = _choice(b, item, presentation, processing, feedback, answer_ids)
        case Numerical():
            kind = _numerical(b, item, presentation, processing, feedback)
        case ShortAnswer():
            kind = _short_answer(b, item, presentation, processing, feedback)
        case Matching():
            kind = _matching(b, item, presentation, processing, answer_ids)
        case Ordering():
            kind = _ordering(b, item, presentation, processing, answer_ids)
        case Essay():
            kind = _essay(b, item, presentation, processing)
        case Description():
            kind = "text_only_question"
        case Cloze():
            cloze_kind = _cloze(b, item, material, presentation, processing, answer_ids)
            if cloze_kind is None:
                return Question(None, [], b.warnings)
            kind = cloze_kind
        case _:  # a type this export does not know (yet): never an error question
            b.warn("type", f"Canvas quizzes have no {item.type.value} question this export "
                           "can write; not exported")
            return Question(None, [], b.warnings)

    _field(meta, "question_type", kind)
    _field(meta, "points_possible",
           "0" if isinstance(item, Description) else number(item.points))
    _field(meta, "original_answer_ids", ",".join(answer_ids))
    _field(meta, "assessment_question_identifierref", f"{identifier}_ref")
    el.append(presentation)
    if len(processing) > 1:  # a text-only question has nothing to score: no resprocessing
        el.append(processing)
    for ident, html in feedback:
        fb = SubElement(el, Q + "itemfeedback", ident=ident)
        mat = SubElement(SubElement(fb, Q + "flow_mat"), Q + "material")
        SubElement(mat, Q + "mattext", texttype="text/html").text = html
    return Question(el, b.files, b.warnings)


def _field(meta: etree._Element, label: str, entry: str) -> None:
    f = SubElement(meta, Q + "qtimetadatafield")
    SubElement(f, Q + "fieldlabel").text = label
    SubElement(f, Q + "fieldentry").text = entry


def _condition(processing: etree._Element, *, last: bool) -> tuple[etree._Element, etree._Element]:
    cond = SubElement(processing, Q + "respcondition", {"continue": "No" if last else "Yes"})
    return cond, SubElement(cond, Q + "conditionvar")


def _display(processing: etree._Element, ident: str, *, other: bool = False,
             equal: str | None = None) -> None:
    cond, var = _condition(processing, last=False)
    if other:
        SubElement(var, Q + "other")
    else:
        SubElement(var, Q + "varequal", respident=RESPONSE).text = equal
    SubElement(cond, Q + "displayfeedback", feedbacktype="Response", linkrefid=ident)


def _score(cond: etree._Element, value: str = "100", action: str = "Set") -> None:
    SubElement(cond, Q + "setvar", action=action, varname="SCORE").text = value


def _labels(parent: etree._Element, ident: str, choices: Iterable[tuple[str, str]],
            *, multiple: bool = False, plain: bool = False) -> None:
    lid = SubElement(parent, Q + "response_lid", ident=ident,
                     rcardinality="Multiple" if multiple else "Single")
    render = SubElement(lid, Q + "render_choice")
    for cid, text in choices:
        label = SubElement(render, Q + "response_label", ident=cid)
        SubElement(SubElement(label, Q + "material"), Q + "mattext",
                   texttype="text/plain" if plain else "text/html").text = text
    return None


def _choice(b: _Build, item: TrueFalse | SingleChoice | MultipleResponse,
            presentation: etree._Element, processing: etree._Element,
            feedback: list[tuple[str, str]], answer_ids: list[str]) -> str:
    lang = b.lang
    content = item.text[lang]
    multiple = isinstance(item, MultipleResponse)
    ids = [o.id for o in item.options]
    choices = [(oid, b.html(f"text.{lang}.options.{oid}", item.option_text(lang, oid),
                            block=False)) for oid in ids]
    _labels(presentation, RESPONSE, choices, multiple=multiple)
    answer_ids.extend(ids)
    for n, oid in enumerate(ids, 1):
        if oid in content.feedback:
            _display(processing, answer_feedback_id(n), equal=oid)
            feedback.append((answer_feedback_id(n), b.html(f"text.{lang}.feedback.{oid}",
                                                           content.feedback[oid])))
    weights = getattr(item, "weights", None)
    if weights and any(w not in (0, 1) or (w == 1) != (o in item.key)
                       for o, w in weights.items()):
        b.warn("weights", "Canvas grades this question its own way: the weights are not "
                          "carried (only the key is)")
    cond, var = _condition(processing, last=True)
    if multiple:
        conj = SubElement(var, Q + "and")
        for oid in ids:
            if oid in item.key:
                SubElement(conj, Q + "varequal", respident=RESPONSE).text = oid
            else:
                SubElement(SubElement(conj, Q + "not"), Q + "varequal",
                           respident=RESPONSE).text = oid
        if len(item.key) == 1:
            b.warn("key", "one key: Canvas reads a multiple-answers question with one right "
                          "answer as it is (check boxes), so students may tick more")
    else:
        SubElement(var, Q + "varequal", respident=RESPONSE).text = item.key[0]
    _score(cond)
    if isinstance(item, TrueFalse):
        words = [to_plain(text).lower() for _, text in choices]
        if not ("true" in words[0] and "false" in words[1]):
            b.warn("type", "Canvas keeps a true/false question only when its answers read "
                           f"'True' and 'False': in {lang!r} it is a multiple-choice question "
                           f"with the answers {to_plain(choices[0][1])!r} and "
                           f"{to_plain(choices[1][1])!r}, graded the same")
        return "true_false_question"
    return "multiple_answers_question" if multiple else "multiple_choice_question"


def _fib(presentation: etree._Element, *, decimal: bool) -> None:
    resp = SubElement(presentation, Q + "response_str", ident=RESPONSE, rcardinality="Single")
    render = SubElement(resp, Q + "render_fib", fibtype="Decimal") if decimal else \
        SubElement(resp, Q + "render_fib")
    SubElement(render, Q + "response_label", ident="answer1")


def _numerical(b: _Build, item: Numerical, presentation: etree._Element,
               processing: etree._Element, feedback: list[tuple[str, str]]) -> str:
    lang = b.lang
    content = item.text[lang]
    _fib(presentation, decimal=True)
    if item.units:
        b.warn("units", canvas.UNITS_NOT_GRADED)
    for n, a in enumerate(item.answers, 1):
        fb = content.feedback.get(a.id)
        if a.any_other:
            if fb:  # every other number: Canvas's feedback for a wrong answer
                _display(processing, INCORRECT_FB, other=True)
                feedback.append((INCORRECT_FB, b.html(f"text.{lang}.feedback.{a.id}", fb)))
            continue
        if a.fraction != 1:
            b.warn(f"answers.{a.id}", canvas.partial_answer_left_out(a.id, a.fraction))
            continue
        cond, var = _condition(processing, last=True)
        if a.value is not None:
            exact = Decimal(repr(a.value))
            margin = Decimal(repr(a.tolerance))
            alt = SubElement(var, Q + "or")
            SubElement(alt, Q + "varequal", respident=RESPONSE).text = number(exact)
            both = SubElement(alt, Q + "and")
            SubElement(both, Q + "vargte", respident=RESPONSE).text = number(exact - margin)
            SubElement(both, Q + "varlte", respident=RESPONSE).text = number(exact + margin)
        else:
            assert a.min is not None and a.max is not None
            both = SubElement(var, Q + "and")
            SubElement(both, Q + "vargte", respident=RESPONSE).text = number(a.min)
            SubElement(both, Q + "varlte", respident=RESPONSE).text = number(a.max)
        _score(cond)
        if fb:
            SubElement(cond, Q + "displayfeedback", feedbacktype="Response",
                       linkrefid=answer_feedback_id(n))
            feedback.append((answer_feedback_id(n), b.html(f"text.{lang}.feedback.{a.id}", fb)))
    return "numerical_question"


def _short_answer(b: _Build, item: ShortAnswer, presentation: etree._Element,
                  processing: etree._Element, feedback: list[tuple[str, str]]) -> str:
    lang = b.lang
    content = item.text[lang]
    _fib(presentation, decimal=False)
    if item.case_sensitive:
        b.warn("case_sensitive", canvas.CASE_NOT_CARRIED)
    seen: set[str] = set()
    for n, a in enumerate(item.answers, 1):
        wordings = []
        for w in content.answers.get(a.id, ()):
            text = xml_safe(w)[0].strip()
            if "*" in text:
                b.warn(f"text.{lang}.answers.{a.id}", canvas.wildcard_left_out(text))
                continue
            key = text.lower()  # Canvas compares lower-cased, stripped wordings
            if key in seen:
                continue
            seen.add(key)
            wordings.append(text)
        if a.fraction != 1:
            b.warn(f"answers.{a.id}", canvas.partial_answer_left_out(a.id, a.fraction))
            continue
        if not wordings:
            continue
        cond, var = _condition(processing, last=True)
        for text in wordings:
            SubElement(var, Q + "varequal", respident=RESPONSE).text = text
        _score(cond)
        fb = content.feedback.get(a.id)
        if fb:
            SubElement(cond, Q + "displayfeedback", feedbacktype="Response",
                       linkrefid=answer_feedback_id(n))
            feedback.append((answer_feedback_id(n), b.html(f"text.{lang}.feedback.{a.id}", fb)))
    return "short_answer_question"


def match_id(n: int) -> str:
    """The identifier of the `n`-th right side of a matching question: Canvas's importer
    (`AssociateInteraction#get_canvas_matches`) takes the first run of digits of a right side's
    identifier as its match id, so each has its own number and no other digits."""
    return f"match_{n}"


def _pairs(b: _Build, presentation: etree._Element, processing: etree._Element,
           answer_ids: list[str], lefts: list[tuple[str, str]], rights: list[tuple[str, str]],
           correct: dict[str, str]) -> None:
    """A Canvas matching question: one `response_lid` per left side (`response_<id>`), the
    right sides as its labels; each right match adds an equal share of 100."""
    share = number(Decimal(100) / Decimal(len(lefts))) if lefts else "0"
    for lid, text in lefts:
        lid_el = SubElement(presentation, Q + "response_lid", ident=f"response_{lid}")
        SubElement(SubElement(lid_el, Q + "material"), Q + "mattext",
                   texttype="text/html").text = text
        render = SubElement(lid_el, Q + "render_choice")
        for rid, rtext in rights:
            label = SubElement(render, Q + "response_label", ident=rid)
            # Canvas reads a right side as HTML (`AssociateInteraction`), whatever its texttype:
            # escaped, `i<n` shows as written rather than as `i`
            SubElement(SubElement(label, Q + "material"), Q + "mattext",
                       texttype="text/html").text = escapeHtml(rtext)
        answer_ids.append(lid)
    for lid, _ in lefts:
        cond, var = _condition(processing, last=False)
        SubElement(var, Q + "varequal", respident=f"response_{lid}").text = correct[lid]
        _score(cond, share, "Add")


def _matching(b: _Build, item: Matching, presentation: etree._Element,
              processing: etree._Element, answer_ids: list[str]) -> str:
    lang = b.lang
    content = item.text[lang]
    lefts = [(pid, b.html(f"text.{lang}.premises.{pid}", content.premises[pid], block=False))
             for pid in item.pairs]
    right_ids = (*item.pairs, *item.distractors)
    rights = [(match_id(n), b.plain(f"text.{lang}.responses.{rid}", content.responses[rid]))
              for n, rid in enumerate(right_ids, 1)]
    _pairs(b, presentation, processing, answer_ids, lefts, rights,
           {pid: match_id(n) for n, pid in enumerate(item.pairs, 1)})
    return "matching_question"


def _ordering(b: _Build, item: Ordering, presentation: etree._Element,
              processing: etree._Element, answer_ids: list[str]) -> str:
    lang = b.lang
    content = item.text[lang]
    b.warn("type", canvas.ORDERING_AS_MATCHING)
    lefts = [(oid, b.html(f"text.{lang}.options.{oid}", content.options[oid], block=False))
             for oid in item.options]
    # the options in a fixed order that is not the answer: sorted by id
    lefts.sort(key=lambda pair: pair[0])
    rights = [(match_id(n), str(n)) for n in range(1, len(item.options) + 1)]
    _pairs(b, presentation, processing, answer_ids, lefts, rights,
           {oid: match_id(n) for n, oid in enumerate(item.options, 1)})
    return "matching_question"


def _essay(b: _Build, item: Essay, presentation: etree._Element,
           processing: etree._Element) -> str:
    """Graded by hand: no answer sets SCORE (QTI 1.2 wants one condition: any response)."""
    content = item.text[b.lang]
    _fib(presentation, decimal=False)
    SubElement(_condition(processing, last=True)[1], Q + "other")
    if content.grader_info:
        b.warn(f"text.{b.lang}.grader_info", "Canvas's essay question has no place for the "
                                             "grader's guide: not carried")
    if content.response_template:
        b.warn(f"text.{b.lang}.response_template", "Canvas's essay question has no response "
                                                   "template: not carried")
    return "essay_question"


def _cloze(b: _Build, item: Cloze, material: etree._Element, presentation: etree._Element,
           processing: etree._Element, answer_ids: list[str]) -> str | None:
    """A cloze as Canvas's blanks question (`canvas.cloze_kind`), or None (warned) when its
    gaps cannot be one. The question text names each gap as `[id]`; each blank is a
    `response_lid` `response_<id>` whose labels are its answers (typed wordings or options);
    a blank's right answers add an equal share of 100 to SCORE."""
    lang = b.lang
    content = item.text[lang]
    kinds = [g.type for g in item.gaps]
    kind = canvas.cloze_kind(kinds)
    if kind is None:
        b.warn("gaps", canvas.cloze_left_out(kinds))
        return None
    if len({g.points for g in item.gaps}) > 1:
        b.warn("gaps", canvas.CLOZE_POINTS_EQUAL)
    if any(gc.feedback for gc in content.gaps.values()):
        b.warn(f"text.{lang}.gaps", canvas.GAP_FEEDBACK_NOT_CARRIED)
    stem = material[0]
    stem.text = re.sub(GAP_REF, r"[\1]", stem.text or "")
    share = number(Decimal(100) / Decimal(len(item.gaps)))
    n = 0
    for gap in item.gaps:
        gc = content.gaps.get(gap.id)
        where = f"text.{lang}.gaps.{gap.id}"
        lid = SubElement(presentation, Q + "response_lid", ident=f"response_{gap.id}")
        SubElement(SubElement(lid, Q + "material"), Q + "mattext").text = gap.id
        render = SubElement(lid, Q + "render_choice")
        right: list[str] = []  # the idents of the right labels
        if isinstance(gap, ShortAnswerGap):
            if gap.case_sensitive:
                b.warn(f"gaps.{gap.id}.case_sensitive", canvas.CASE_NOT_CARRIED)
            seen: set[str] = set()
            for a in gap.answers:
                if a.fraction != 1:
                    b.warn(f"gaps.{gap.id}.answers.{a.id}",
                           canvas.partial_answer_left_out(a.id, a.fraction))
                    continue
                for w in (gc.answers.get(a.id, ()) if gc else ()):
                    text = xml_safe(w)[0].strip()
                    if "*" in text:
                        b.warn(f"{where}.answers.{a.id}", canvas.wildcard_left_out(text))
                        continue
                    if text.lower() in seen:
                        continue
                    seen.add(text.lower())
                    n += 1
                    _blank_label(render, f"{gap.id}_{n}", text)
                    answer_ids.append(f"{gap.id}_{n}")
                    right.append(f"{gap.id}_{n}")
        else:
            assert isinstance(gap, ChoiceGap)
            if gap.weights and any(w != 0 for o, w in gap.weights.items() if o != gap.key):
                b.warn(f"gaps.{gap.id}.weights", "Canvas grades a drop-down right or wrong: "
                       "the weights of the other options are not carried (only the key is)")
            for oid in gap.options:
                n += 1
                ident = f"{gap.id}_{n}"
                text = b.plain(f"{where}.options.{oid}", gc.options.get(oid, "") if gc else "")
                _blank_label(render, ident, text)
                answer_ids.append(ident)
                if oid == gap.key:
                    right.append(ident)
        for ident in right:
            cond, var = _condition(processing, last=False)
            SubElement(var, Q + "varequal", respident=f"response_{gap.id}").text = ident
            _score(cond, share, "Add")
    return kind


def _blank_label(render: etree._Element, ident: str, text: str) -> None:
    label = SubElement(render, Q + "response_label", ident=ident)
    SubElement(SubElement(label, Q + "material"), Q + "mattext",
               texttype="text/plain").text = text
