"""Canvas's reading of a QTI 1.2 quiz package, restated in Python as a test oracle (no code
copied): what a Canvas course gets from `Import Course Content -> QTI .zip file`.

Canvas runs QTIMigrationTool (instructure/QTIMigrationTool, `lib/imsqtiv1.py`) to turn QTI 1.2
into QTI 2 and then its own converters (instructure/canvas-lms,
`gems/plugins/qti_exporter/lib/qti/*.rb`). The steps restated here, each on the QTI 1.2 the tool
reads (its translation is one to one for what they look at):

- the package: the manifest's `imsqti_xmlv1p2` resource names the assessment file;
- `AssessmentItemConverter#parse_instructure_metadata`: `question_type` (copied by the tool into
  `instructureMetadata`) is kept when it is one of `AssessmentQuestion::ALL_QUESTION_TYPES`;
  `points_possible` is `max(value, 0)`, default 1;
- `create_instructure_question`: the converter by type (`matching_question` -> the Canvas
  matching reader, numerical -> `NumericInteraction`, short answer/essay ->
  `ExtendedTextInteraction`, choice types -> `ChoiceInteraction`, `text_only_question` -> none);
  any failure or unknown type: an "Error" question;
- `ChoiceInteraction`: every label an answer of weight 0; a condition's `varequal` (not under
  `not`) gets the weight its SCORE gives (100 when > 0), in document order (the last condition
  naming an answer wins); the first feedback named for an answer is its comment; a
  `true_false_question` needs two answers whose texts say "true" and "false", else it becomes a
  multiple choice question; no correct answer is an import error;
- `NumericInteraction#get_canvas_answers`: a condition with `or`: an exact answer
  (`varequal`), margin = `varlte` - exact (decimal arithmetic); with `vargt` (strict) and
  both bounds ending in 5 and equally far from it: a precision answer; a condition with `and`
  only: a range answer (`vargte`..`varlte`);
- `ExtendedTextInteraction`: each `varequal` of any condition is an answer (the same text
  once); no answer makes it an essay question;
- `AssociateInteraction#get_canvas_matches/answers`: the right sides are the labels of the
  first `response_lid`; a right side's match id is the first run of digits of its identifier;
  each `response_lid` is a left side, matched to the right side its condition names when that
  condition adds to SCORE;
- `FillInTheBlank#process_canvas` (fill in multiple blanks, multiple drop-downs): each
  `response_lid` is a blank whose id is its ident less the `response_` prefix; each of its
  labels is an answer of that blank (its text stripped); in a fill in multiple blanks
  question every label is a right answer (weight 100); in a multiple drop-downs question each
  starts at 0 and the label a condition's `varequal` names, in a condition that adds to SCORE
  (`sum` after the tool), is right; no answer gets feedback of its own (no
  `attach_feedback_values`), only the question's comments are read; the blanks stay
  `[blank_id]` in the question text;
- `get_feedback`: an `itemfeedback` whose ident matches `wrong|incorrect|_IC$` is the incorrect
  comments, else `correct|_C$` the correct comments, else `solution` the example solution,
  else `general_|_all` the neutral comments; `attach_feedback_values`: an answer's comment is
  the feedback its condition displays.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from lxml import etree

ALL_QUESTION_TYPES = {
    "multiple_choice_question", "true_false_question", "short_answer_question",
    "fill_in_multiple_blanks_question", "multiple_answers_question",
    "multiple_dropdowns_question", "matching_question", "numerical_question",
    "calculated_question", "essay_question", "file_upload_question", "text_only_question",
}
CP = "{http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1}"


@dataclass
class Answer:
    text: str = ""
    html: str = ""
    weight: int = 0
    comments: str = ""
    feedback_id: str | None = None
    # numerical
    kind: str = ""
    exact: float | None = None
    margin: float | None = None
    start: float | None = None
    end: float | None = None
    # matching
    left: str = ""
    match_id: int | None = None
    right: str = ""
    # fill in multiple blanks / multiple drop-downs
    blank_id: str = ""
    ident: str = ""


@dataclass
class Question:
    ident: str
    title: str
    question_type: str
    points: float
    text: str
    answers: list[Answer] = field(default_factory=list)
    matches: list[tuple[int, str]] = field(default_factory=list)
    neutral_comments: str = ""
    correct_comments: str = ""
    incorrect_comments: str = ""
    import_error: str = ""


def _local(el: etree._Element) -> str:
    return etree.QName(el).localname


def _find(el: etree._Element, name: str) -> etree._Element | None:
    return next(el.iter(f"{{*}}{name}"), None)


def _all(el: etree._Element, name: str) -> list[etree._Element]:
    return list(el.iter(f"{{*}}{name}"))


def read_package(data: bytes) -> list[Question]:
    """The questions Canvas makes of the package `data`, in order."""
    z = zipfile.ZipFile(io.BytesIO(data))
    manifest = etree.fromstring(z.read("imsmanifest.xml"))
    hrefs = [f.get("href", "") for r in manifest.iter(CP + "resource")
             if r.get("type") == "imsqti_xmlv1p2" for f in r.iter(CP + "file")]
    questions = []
    for href in hrefs:
        doc = etree.fromstring(z.read(href))
        for item in _all(doc, "item"):
            questions.append(read_item(item))
    return questions


def read_item(item: etree._Element) -> Question:
    meta: dict[str, str] = {}
    for f in _all(item, "qtimetadatafield"):
        label, entry = _find(f, "fieldlabel"), _find(f, "fieldentry")
        if label is not None and entry is not None:
            meta[(label.text or "").strip()] = (entry.text or "").strip()
    qtype = meta.get("question_type", "")
    points = 1.0
    if "points_possible" in meta:
        points = max(float(meta["points_possible"]), 0.0)
    presentation = _find(item, "presentation")
    assert presentation is not None
    stem = next((m for m in presentation if _local(m) == "material"), None)
    text = "" if stem is None else "".join(t.text or "" for t in _all(stem, "mattext"))
    q = Question(item.get("ident", ""), item.get("title", ""),
                 qtype if qtype in ALL_QUESTION_TYPES else "", points, text)
    feedback = {fb.get("ident", ""): "".join(t.text or "" for t in _all(fb, "mattext"))
                for fb in _all(item, "itemfeedback")}
    conditions = _all(item, "respcondition")
    try:
        match q.question_type:
            case "multiple_choice_question" | "true_false_question" | "multiple_answers_question":
                _choice(q, presentation, conditions)
            case "numerical_question":
                _numerical(q, conditions)
            case "short_answer_question" | "essay_question":
                _text(q, conditions)
            case "matching_question":
                _matching(q, presentation, conditions)
            case "fill_in_multiple_blanks_question" | "multiple_dropdowns_question":
                _blanks(q, presentation, conditions)
            case "text_only_question":
                pass
            case _:
                raise ValueError(f"no converter for question type {qtype!r}")
    except Exception as exc:  # Canvas: "There was an error exporting an assessment question"
        q.question_type = "Error"
        q.import_error = str(exc)
        return q
    for a in q.answers:
        if a.feedback_id in feedback:
            a.comments = feedback[a.feedback_id]
    _question_feedback(q, feedback)
    return q


def _feedback_id(cond: etree._Element) -> str | None:
    shown = _find(cond, "displayfeedback")
    return None if shown is None else shown.get("linkrefid")


def _score(cond: etree._Element) -> tuple[str, float] | None:
    setvar = next((s for s in _all(cond, "setvar") if s.get("varname", "SCORE") == "SCORE"), None)
    if setvar is None:
        return None
    return setvar.get("action", "Set"), float((setvar.text or "0").strip())


def _negated(el: etree._Element) -> bool:
    return any(_local(a) == "not" for a in el.iterancestors())


def _choice(q: Question, presentation: etree._Element, conditions: list[etree._Element]) -> None:
    by_id: dict[str, Answer] = {}
    for label in _all(presentation, "response_label"):
        html = "".join(t.text or "" for t in _all(label, "mattext"))
        a = Answer(text=re.sub(r"\s+", " ", lxml_text(html)).strip(), html=html)
        by_id[label.get("ident", "")] = a
        q.answers.append(a)
    for cond in conditions:
        score = _score(cond)
        weight = 100 if score is not None and score[1] > 0 else 0
        for eq in _all(cond, "varequal"):
            if _negated(eq):
                continue
            a = by_id[(eq.text or "").strip()]
            a.weight = weight
            if a.feedback_id is None:
                a.feedback_id = _feedback_id(cond)
    correct = sum(1 for a in q.answers if a.weight > 0)
    if correct == 0:
        q.import_error = "The importer couldn't determine the correct answers for this question."
    if q.question_type == "true_false_question":
        true = next((a for a in q.answers if re.search("true", a.text, re.I)), None)
        false = next((a for a in q.answers if a is not true and re.search("false", a.text, re.I)),
                     None)
        if len(q.answers) != 2 or true is None or false is None:
            q.question_type = "multiple_choice_question"


def lxml_text(html: str) -> str:
    if not html.strip():
        return ""
    return etree.fromstring(f"<div>{html}</div>", etree.HTMLParser()).xpath("string()")


def _dec(text: str | None) -> Decimal:
    try:
        return Decimal((text or "").strip())
    except InvalidOperation:
        return Decimal(0)


def _numerical(q: Question, conditions: list[etree._Element]) -> None:
    for cond in conditions:
        var = _find(cond, "conditionvar")
        assert var is not None
        alt = _find(var, "or")
        a = Answer(weight=100, feedback_id=_feedback_id(cond))
        if alt is not None:
            exact_node = _find(alt, "varequal")
            if exact_node is None:
                continue
            exact = (exact_node.text or "").strip()
            lower, upper = _find(alt, "vargt"), _find(alt, "varlte")
            if (lower is not None and upper is not None
                    and re.sub(r"[0.]", "", lower.text or "").endswith("5")
                    and re.sub(r"[0.]", "", upper.text or "").endswith("5")
                    and _dec(exact) - _dec(lower.text) == _dec(upper.text) - _dec(exact)):
                a.kind = "precision_answer"
            else:
                a.kind = "exact_answer"
                a.exact = float(exact)
                if upper is not None:
                    a.margin = float(_dec(upper.text) - _dec(exact))
            q.answers.append(a)
        elif (both := _find(var, "and")) is not None or (both := _bare_bounds(var)) is not None:
            a.kind = "range_answer"
            lo, hi = _find(both, "vargte"), _find(both, "varlte")
            if lo is not None:
                a.start = float(_dec(lo.text))
            if hi is not None:
                a.end = float(_dec(hi.text))
            if lo is not None or hi is not None:
                q.answers.append(a)


def _bare_bounds(var: etree._Element) -> etree._Element | None:
    """The bounds of a range Canvas's own export writes without `and` (`vargte` and `varlte`
    right in the conditionvar, which QTI 1.2 reads as both; QTIMigrationTool writes them into
    one `and`)."""
    return var if any(_local(c) in ("vargte", "varlte") for c in var) else None


def _text(q: Question, conditions: list[etree._Element]) -> None:
    for cond in conditions:
        for eq in _all(cond, "varequal"):
            text = eq.text or ""
            existing = next((a for a in q.answers if a.text == text), None)
            if existing is None and text != "":
                q.answers.append(Answer(text=text, weight=100, feedback_id=_feedback_id(cond)))
            elif existing is not None and existing.feedback_id is None:
                existing.feedback_id = _feedback_id(cond)
    q.question_type = "short_answer_question" if q.answers else "essay_question"


def _matching(q: Question, presentation: etree._Element, conditions: list[etree._Element]
              ) -> None:
    lids = [r for r in presentation if _local(r) == "response_lid"]
    if not lids:
        raise ValueError("a matching question with no left side")
    ids: dict[str, int] = {}
    taken: set[int] = set()
    for label in _all(lids[0], "response_label"):
        ident = label.get("ident", "")
        digits = re.search(r"\d+", ident)
        mid = int(digits.group()) if digits else 100_000 + len(taken)
        ids[ident] = mid
        taken.add(mid)
        q.matches.append((mid, lxml_text("".join(t.text or "" for t in _all(label, "mattext")))
                          .strip()))
    answers: dict[str, Answer] = {}
    for lid in lids:
        prompt = next((m for m in lid if _local(m) == "material"), None)
        html = "" if prompt is None else "".join(t.text or "" for t in _all(prompt, "mattext"))
        a = Answer(left=lxml_text(html).strip(), html=html)
        answers[lid.get("ident", "")] = a
        q.answers.append(a)
    for cond in conditions:
        for eq in _all(cond, "varequal"):
            a2 = answers.get(eq.get("respident", ""))
            if a2 is None:
                continue
            a2.feedback_id = _feedback_id(cond)
            score = _score(cond)
            if score is not None and score[0] == "Add" and (eq.text or "").strip() in ids:
                a2.match_id = ids[(eq.text or "").strip()]
    right = dict(q.matches)
    for a in q.answers:
        if a.match_id is not None:
            a.right = right[a.match_id]


def _question_feedback(q: Question, feedback: dict[str, str]) -> None:
    for ident, html in feedback.items():
        if re.search(r"wrong|incorrect|_IC$", ident, re.I):
            q.incorrect_comments = html
        elif re.search(r"correct|_C$", ident, re.I):
            q.correct_comments = html
        elif re.search(r"solution", ident, re.I):
            pass
        elif re.search(r"general_|_all", ident, re.I):
            q.neutral_comments = html


def grades(q: Question, response: Any) -> bool:
    """Whether Canvas's quiz grading takes `response` for right (numerical: a number;
    short answer: a string), as `Quizzes::QuizQuestion::NumericalQuestion` and
    `ShortAnswerQuestion` do: an exact answer within its margin (ends included), a range with
    its ends, a short answer equal to a wording stripped and lower-cased."""
    if q.question_type == "numerical_question":
        x = Decimal(str(response))
        for a in q.answers:
            if a.kind == "exact_answer" and a.exact is not None:
                margin = Decimal(str(a.margin or 0))
                if abs(x - Decimal(str(a.exact))) <= margin:
                    return True
            if (a.kind == "range_answer" and a.start is not None and a.end is not None
                    and Decimal(str(a.start)) <= x <= Decimal(str(a.end))):
                return True
        return False
    if q.question_type == "short_answer_question":
        given = str(response).strip().lower()
        return any(a.text.strip().lower() == given for a in q.answers)
    raise ValueError(q.question_type)


def _blanks(q: Question, presentation: etree._Element, conditions: list[etree._Element]) -> None:
    by_ref: dict[tuple[str, str], Answer] = {}
    dropdowns = q.question_type == "multiple_dropdowns_question"
    for lid in (r for r in presentation if _local(r) == "response_lid"):
        blank = lid.get("ident", "").removeprefix("response_")
        for label in _all(lid, "response_label"):
            ident = label.get("ident", "")
            text = "".join(t.text or "" for t in _all(label, "mattext")).strip()
            a = Answer(text=text, blank_id=blank, ident=ident, weight=0 if dropdowns else 100)
            by_ref[(f"response_{blank}", ident)] = a
            q.answers.append(a)
    if not dropdowns:
        return
    for cond in conditions:
        score = _score(cond)
        if score is None or score[0] != "Add":  # the tool's `sum`: Add to SCORE
            continue
        eq = _find(cond, "varequal")
        a2 = None if eq is None else by_ref.get((eq.get("respident", ""),
                                                 (eq.text or "").strip()))
        if a2 is not None:
            a2.weight = 100


def grades_blank(q: Question, blank: str, response: str) -> bool:
    """Whether Canvas takes `response` for right in `blank`: a typed wording equal to a right
    answer's, stripped and lower-cased (fill in multiple blanks); the ident of a right answer
    (multiple drop-downs)."""
    right = [a for a in q.answers if a.blank_id == blank and a.weight > 0]
    if q.question_type == "fill_in_multiple_blanks_question":
        given = response.strip().lower()
        return any(a.text.strip().lower() == given for a in right)
    if q.question_type == "multiple_dropdowns_question":
        return any(a.ident == response for a in right)
    raise ValueError(q.question_type)
