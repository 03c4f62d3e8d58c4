"""Test-only readers that follow Moodle's own code, independent of dpassess's writers.

- `read_xml`: question/format/xml/format.php (`import_headers`, `import_multichoice`,
  `import_truefalse`, `import_numerical`, `import_shortanswer`, `import_match`, `import_essay`,
  question/type/ordering/questiontype.php `import_from_xml`, `trans_single`, `getpath(..., istext)` trims, `import_text_with_files` /
  `import_files_as_draft` for each text area's `<file>` elements), over Python's expat-based
  `xml.etree.ElementTree` (not lxml, which the writer uses).
- `read_gift`: question/format.php `readquestions` (blank lines split questions, lines trimmed)
  and question/format/gift/format.php `readquestion` line by line (comment lines, escapedchar_pre
  / escapedchar_post placeholders, `::name::`, first `{` / first `}`, `####` by strrpos,
  `parse_text_with_format`, the `=` -> single rule, `str_replace('=', '~=')`, the weight regex,
  `commentparser`, `split_truefalse_comment`, `extract_idnumber_and_tags_from_comment`, and
  the essay, numerical (`min..max`, `value:tolerance`), match and shortanswer cases).
- `multilang`: filter/multilang's regular expressions, to read one language back.
- `GRADES`: lib/questionlib.php `fraction_options_full`, and `match_grade_options`.
"""

from __future__ import annotations

import base64
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

_RAW = ("0.9000000 0.8333333 0.8000000 0.7500000 0.7000000 0.6666667 0.6000000 0.5000000 "
        "0.4000000 0.3333333 0.3000000 0.2500000 0.2000000 0.1666667 0.1428571 0.1250000 "
        "0.1111111 0.1000000 0.0500000").split()
GRADES = [0.0, 1.0, -1.0, *(float(s) for s in _RAW), *(-float(s) for s in _RAW)]


def match_grade(fraction: float) -> float | None:
    """`match_grade_options($gradeoptionsfull, $grade, 'error')`."""
    for g in GRADES:
        if abs(fraction - g) < 0.00001:
            return g
    return None


def nearest_grade(fraction: float) -> float:
    return min(GRADES, key=lambda g: abs(g - fraction))


@dataclass
class Question:
    qtype: str
    category: str = ""
    name: str = ""
    questiontext: str = ""
    questiontextformat: str = ""
    generalfeedback: str = ""
    idnumber: str | None = None
    tags: list[str] = field(default_factory=list)
    single: int | None = None
    shuffleanswers: int | None = None
    answernumbering: str | None = None
    defaultmark: float = 1.0
    penalty: float | None = None
    answers: list[str] = field(default_factory=list)
    fractions: list[float] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)
    correctanswer: int | None = None
    feedbacktrue: str = ""
    feedbackfalse: str = ""
    answerformats: list[str] = field(default_factory=list)
    #: each text area's draft files, as `import_files_as_draft` creates them: area ->
    #: {filepath + filename: bytes}. Areas: questiontext, generalfeedback, correctfeedback,
    #: partiallycorrectfeedback, incorrectfeedback, answer.<n> (multichoice only: true/false
    #: answers are read without files), feedback.<n>.
    files: dict[str, dict[str, bytes]] = field(default_factory=dict)
    # numerical
    tolerances: list[float] = field(default_factory=list)
    units: list[tuple[float, str]] = field(default_factory=list)  # (multiplier, unit)
    unitgradingtype: int = 0
    unitpenalty: float = 0.1
    showunits: int | None = None
    # shortanswer
    usecase: int = 0
    # match: subquestion texts (empty: a distractor) and their answers
    subquestions: list[str] = field(default_factory=list)
    subanswers: list[str] = field(default_factory=list)
    # essay
    responseformat: str = ""
    responserequired: int = 1
    responsefieldlines: int = 15
    minwordlimit: int | None = None
    maxwordlimit: int | None = None
    graderinfo: str = ""
    responsetemplate: str = ""
    responsetemplateformat: str = ""
    # ordering
    layouttype: str = ""
    selecttype: str = ""
    selectcount: int = 0
    gradingtype: str = ""
    numberingstyle: str | None = None
    #: import_from_xml: `<shownumcorrect>` (None: absent), and the hints it asks to save:
    #: (hint text or None when the file gives none, shownumcorrect, options).
    shownumcorrect: str | None = None
    hints: list[tuple[str | None, int, int]] = field(default_factory=list)


# --- Moodle XML ---------------------------------------------------------------------------------

def _trans_single(name: str | None) -> int:
    name = (name or "").strip()
    return 0 if name == "false" or not name or name == "0" else 1


#: qformat_xml::trans_format: a text's format name -> the FORMAT_ Moodle stores (named here
#: without the prefix); any other name, with a debugging notice, is HTML.
_XML_FORMATS = {"moodle_auto_format": "moodle", "html": "html", "plain_text": "plain",
                "wiki_like": "wiki", "markdown": "markdown"}
#: qformat_xml::get_format, its inverse.
_FORMAT_NAMES = {v: k for k, v in _XML_FORMATS.items()}


def _trans_format(name: str) -> str:
    return _XML_FORMATS.get(name.strip(), "html")


def _text(el: ET.Element | None) -> str:
    if el is None:
        return ""
    t = el.find("text")
    return ((t.text if t is not None else "") or "").strip()


def _path(el: ET.Element, tag: str) -> str | None:
    """`getpath($el, ['#', tag, 0, '#'])`: the child's text, None when it is missing."""
    child = el.find(tag)
    return None if child is None else (child.text or "")


def _draft_files(el: ET.Element | None) -> dict[str, bytes]:
    """`import_files_as_draft`: each `<file>` child of a text area; a second file with the same
    path and name is skipped (`debugging('Duplicate file in XML: ...')`)."""
    out: dict[str, bytes] = {}
    if el is None:
        return out
    for f in el.findall("file"):
        fullpath = (f.get("path") or "/").strip() + (f.get("name") or "").strip()
        if fullpath not in out:
            out[fullpath] = base64.b64decode(f.text or "")
    return out


def _keep_files(qo: Question, area: str, el: ET.Element | None) -> None:
    files = _draft_files(el)
    if files:
        qo.files[area] = files


def read_xml(data: bytes) -> list[Question]:
    root = ET.fromstring(data)
    assert root.tag == "quiz"
    out: list[Question] = []
    for q in root.findall("question"):
        qtype = q.get("type")
        if qtype == "category":
            out.append(Question("category", category=_text(q.find("category"))))
            continue
        if qtype == "matching":  # readquestions: 'matching' or 'match' is import_match
            qtype = "match"
        qo = Question(qtype or "")
        qo.name = _text(q.find("name"))
        qt = q.find("questiontext")
        qo.questiontext = _text(qt)
        qo.questiontextformat = _trans_format(qt.get("format", "html")) if qt is not None else ""
        qo.generalfeedback = _text(q.find("generalfeedback"))
        _keep_files(qo, "questiontext", qt)
        _keep_files(qo, "generalfeedback", q.find("generalfeedback"))
        idn = q.find("idnumber")
        qo.idnumber = idn.text if idn is not None else None
        dg = q.find("defaultgrade")
        qo.defaultmark = float(dg.text) if dg is not None and dg.text else 1.0
        pen = q.find("penalty")
        qo.penalty = float(pen.text) if pen is not None and pen.text else None
        tags = q.find("tags")
        qo.tags = [_text(t) for t in tags.findall("tag")] if tags is not None else []
        if qtype == "multichoice":
            s = q.find("single")
            qo.single = _trans_single(s.text if s is not None else "true")
            sh = q.find("shuffleanswers")
            qo.shuffleanswers = _trans_single(sh.text if sh is not None else "false")
            num = q.find("answernumbering")
            qo.answernumbering = (num.text if num is not None else None) or "abc"
            for tag in ("correctfeedback", "partiallycorrectfeedback", "incorrectfeedback"):
                _keep_files(qo, tag, q.find(tag))
            for n, a in enumerate(q.findall("answer")):
                _keep_files(qo, f"answer.{n}", a)
                _keep_files(qo, f"feedback.{n}", a.find("feedback"))
                qo.answers.append(_text(a))
                qo.answerformats.append(a.get("format", ""))
                qo.fractions.append(float(a.get("fraction", "0")) / 100)
                qo.feedback.append(_text(a.find("feedback")))
        elif qtype == "numerical":
            for a in q.findall("answer"):
                text = _text(a) or "*"
                qo.answers.append(text)
                qo.feedback.append(_text(a.find("feedback")))
                qo.tolerances.append(float(_path(a, "tolerance") or 0))
                qo.fractions.append(float(a.get("fraction", "0")) / 100)
            units = q.find("units")
            for u in units.findall("unit") if units is not None else []:
                qo.units.append((float(_path(u, "multiplier") or 1),
                                 (_path(u, "unit_name") or "").strip()))
            qo.unitgradingtype = int(_path(q, "unitgradingtype") or 0)
            qo.unitpenalty = float(_path(q, "unitpenalty") or 0.1)
            show = _path(q, "showunits")
            qo.showunits = int(show) if show else (0 if qo.units else 3)
        elif qtype == "shortanswer":
            qo.usecase = int(_path(q, "usecase") or 0)
            for a in q.findall("answer"):
                qo.answers.append(_text(a))
                qo.feedback.append(_text(a.find("feedback")))
                qo.fractions.append(float(a.get("fraction", "0")) / 100)
        elif qtype == "match":
            sh = q.find("shuffleanswers")
            qo.shuffleanswers = _trans_single(sh.text if sh is not None else "1")
            for sub in q.findall("subquestion"):
                qo.subquestions.append(_text(sub))
                answer = sub.find("answer")
                qo.subanswers.append(_text(answer))
        elif qtype == "essay":
            qo.responseformat = _path(q, "responseformat") or "editor"
            qo.responsefieldlines = int(_path(q, "responsefieldlines") or 15)
            qo.responserequired = int(_path(q, "responserequired") or 1) if _path(
                q, "responserequired") != "0" else 0
            lo, hi = _path(q, "minwordlimit"), _path(q, "maxwordlimit")
            qo.minwordlimit = int(lo) if lo else None
            qo.maxwordlimit = int(hi) if hi else None
            qo.graderinfo = _text(q.find("graderinfo"))
            rt = q.find("responsetemplate")
            qo.responsetemplate = _text(rt)
            # import_essay: the format defaults to the question text's
            default = _FORMAT_NAMES.get(qo.questiontextformat, "unknown")
            qo.responsetemplateformat = _trans_format(
                default if rt is None else rt.get("format", default))
        elif qtype == "ordering":
            qo.layouttype = _path(q, "layouttype") or "VERTICAL"
            qo.selecttype = _path(q, "selecttype") or "RANDOM"
            qo.selectcount = int(_path(q, "selectcount") or 6)
            qo.gradingtype = _path(q, "gradingtype") or "RELATIVE"
            qo.numberingstyle = _path(q, "numberingstyle")
            # the answers' order is the right one (save_question_options numbers them 1, 2, ...)
            for a in q.findall("answer"):
                qo.answers.append(_text(a))
            qo.shownumcorrect = _path(q, "shownumcorrect")
            qo.hints = [(_text(h), int(h.find("shownumcorrect") is not None),
                         int(bool(_path(h, "options")))) for h in q.findall("hint")]
            if qo.shownumcorrect is None:
                # without it, both hint settings are filled for at least DEFAULT_NUM_HINTS (2)
                # hints, whether or not the file gives their texts
                n = max(2, len(qo.hints))
                given = qo.hints + [(None, 0, 0)] * (n - len(qo.hints))
                qo.hints = [(text, 1, 1) for text, _, _ in given]
        elif qtype == "truefalse":
            for n, a in enumerate(q.findall("answer")):
                text = _text(a)
                assert text in ("true", "false"), f"old-style truefalse answer {text!r}"
                fb = _text(a.find("feedback"))
                _keep_files(qo, f"feedback.{n}", a.find("feedback"))
                if text == "true":
                    qo.correctanswer = int(float(a.get("fraction", "0")) == 100)
                    qo.feedbacktrue = fb
                else:
                    qo.correctanswer = int(float(a.get("fraction", "0")) != 100)
                    qo.feedbackfalse = fb
        out.append(qo)
    return out


def ordering_save_error(qo: Question) -> str | None:
    """What `question_type::save_hints` does with an ordering question's hints: a hint that is
    not empty (a text, or shownumcorrect, or options) is written to `question_hints`; one the
    file gave no text for has no format, and the NOT NULL column `hintformat` fails the
    insert ("Error writing to database"), which ends the import there."""
    for n, (text, shownumcorrect, options) in enumerate(qo.hints):
        empty = not (text or "").strip() and not shownumcorrect and not options
        if not empty and text is None:
            return f"hint {n}: hintformat NULL"
    return None


# --- qtype_numerical grading ------------------------------------------------------------------

_E_NOTATION = re.compile(r"(?:e|E|(?:x|\*|×)10(?:\^|\*\*))([+-]?\d+)")
_NUMBER_AT_START = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?")


def apply_units(qo: Question, response: str) -> tuple[float | None, str | None, float | None]:
    """qtype_numerical_answer_processor::apply_units (units after the number; `.` decimal
    and `,` thousands separators): (value, unit, multiplier)."""
    if not response.strip():
        return None, None, None
    response = _E_NOTATION.sub(r"e\1", response.replace(" ", ""))
    # with a `.` or several `,`, each `,` is a thousands separator; else str_replace([',',
    # '.', ','], ['', '.', '.']) removes the thousands separator first: either way no `,` stays
    response = response.replace(",", "")
    m = _NUMBER_AT_START.match(response)
    if m is None:
        return None, None, None
    unit = response[m.end():]
    units = {name: mult for mult, name in qo.units}
    multiplier = 1 / units[unit] if unit in units else None
    return float(m[0]), unit, multiplier


def grade_numerical(qo: Question, response: str) -> float:
    """qtype_numerical_question::grade_response: the first answer within tolerance of the
    scaled value (or of the value as typed), less the unit penalty when the unit is not
    right (unitgradingtype 1: of the mark; 2: of the question's grade; 0: no penalty)."""
    value, _, multiplier = apply_units(qo, response)
    if value is None:
        return 0.0
    scaled = value * multiplier if multiplier is not None else value

    def within(n: int, x: float) -> bool:
        if qo.answers[n] == "*":
            return True
        # qtype_numerical_answer::get_tolerance_interval, nominal (what import gives)
        mid, tol = float(qo.answers[n]), qo.tolerances[n]
        tol += 1e-14 * max(abs(tol), abs(mid), 1e-14)  # epsilon: 10 ** -ini precision (14)
        return mid - tol <= x <= mid + tol

    for n in range(len(qo.answers)):
        if within(n, scaled) or within(n, value):
            fraction = qo.fractions[n]
            right = multiplier is not None and within(n, multiplier * value)
            if not right and qo.unitgradingtype == 1:
                fraction -= qo.unitpenalty * fraction
            elif not right and qo.unitgradingtype == 2:
                fraction -= qo.unitpenalty
            return max(fraction, 0.0)
    return 0.0


# --- GIFT ----------------------------------------------------------------------------------------

_ESC = ["\\:", "\\#", "\\=", "\\{", "\\}", "\\~", "\\n"]
_PH = ["&&058;", "&&035;", "&&061;", "&&123;", "&&125;", "&&126;", "&&010"]
_CHARS = [":", "#", "=", "{", "}", "~", "\n"]
_WEIGHT = re.compile(r"^%\-*([0-9]{1,2})\.?([0-9]*)%")
_FORMATS = {"moodle": "moodle", "html": "html", "plain": "plain", "markdown": "markdown"}


def _pre(s: str) -> str:
    s = s.replace("\\\\", "&&092;")
    for e, p in zip(_ESC, _PH, strict=True):  # PHP str_replace with arrays: one after another
        s = s.replace(e, p)
    return s.replace("&&092;", "\\")


def _post(s: str) -> str:
    for p, c in zip(_PH, _CHARS, strict=True):
        s = s.replace(p, c)
    return s


def _php_trim(s: str) -> str:
    return s.strip(" \t\n\r\0\x0b")


def _with_format(text: str, default: str = "moodle") -> tuple[str, str]:
    fmt = default
    if text.startswith("["):
        end = text.find("]")
        name = text[1:end] if end >= 0 else text[1:-1]
        if name in _FORMATS:
            fmt = _FORMATS[name]
            text = text[end + 1:]
    return _php_trim(_post(text)), fmt


def _comment_ids(comments: str) -> tuple[str, list[str]]:
    m = re.search(r"\[id:((?:\\]|[^\]\[\x00-\x1f\x7f])+)]", comments)
    idnumber = m.group(1).strip().replace("\\]", "]") if m else ""
    tags = [t.strip().replace("\\]", "]")
            for t in re.findall(r"\[tag:((?:\\]|[^\]<>\x00-\x1f\x7f])+)]", comments)]
    return idnumber, tags


def _readquestion(lines: list[str]) -> Question | None:
    comments = ""
    for i, line in enumerate(lines):
        line = _php_trim(line)
        if line[:2] == "//":
            comments += line + "\n"
            lines[i] = " "
    text = _php_trim("\n".join(lines))
    if text == "":
        return None
    text = _pre(text)
    if text.startswith("$CATEGORY:"):
        return Question("category", category=_php_trim(text[10:]))
    name = None
    if text[:2] == "::":
        text = text[2:]
        end = text.find("::")
        if end >= 0:
            name = _post(text[:end]).strip()
            text = _php_trim(text[end + 2:])
    start, finish = text.find("{"), text.find("}")
    if start < 0 and finish < 0:  # no answers: a description
        qo = Question("description")
        qo.questiontext, qo.questiontextformat = _with_format(text)
        qo.name = name if name is not None else ""
        qo.idnumber, qo.tags = _comment_ids(comments)
        qo.defaultmark = 0.0
        return qo
    if start < 0 or finish < 0:
        raise AssertionError(f"Moodle: braceerror in {text[:80]!r}")
    answertext = _php_trim(text[start + 1:finish])
    if text.endswith("}"):
        questiontext = text[:start] + text[finish + 1:]
    else:  # the missing-word form: the answers' place shown as a blank
        questiontext = text[:start] + "_____" + text[finish + 1:]
    gf = answertext.rfind("####")
    generalfeedback = ""
    if gf >= 0:
        generalfeedback = answertext[gf + 4:]
        answertext = _php_trim(answertext[:gf])
    qo = Question("")
    qo.questiontext, qo.questiontextformat = _with_format(questiontext)
    qo.generalfeedback, _ = _with_format(generalfeedback, qo.questiontextformat)
    qo.name = name if name is not None else ""
    qo.idnumber, qo.tags = _comment_ids(comments)
    fmt = qo.questiontextformat
    if answertext == "":
        qo.qtype = "essay"
        qo.responseformat, qo.responsefieldlines = "editor", 15
        return qo
    if answertext[0] == "#":
        return _gift_numerical(qo, answertext[1:], fmt)
    if "~" in answertext:
        qo.qtype = "multichoice"
        qo.single = 0 if "=" not in answertext else 1
        answers = answertext.replace("=", "~=").split("~")
        answers[0] = _php_trim(answers[0])
        if answers[0] == "" or answers[0] == "0":  # PHP empty()
            answers.pop(0)
        assert len(answers) >= 2, "Moodle: importminerror"
        for answer in answers:
            answer = _php_trim(answer)
            if answer[:1] == "=":
                weight, answer = 1.0, answer[1:]
            elif _WEIGHT.match(answer):
                weight, answer = _weight(answer)
            else:
                weight = 0.0
            bits = answer.split("#", 1)
            qo.answers.append(_with_format(_php_trim(bits[0]), fmt)[0])
            qo.answerformats.append(_with_format(_php_trim(bits[0]), fmt)[1])
            qo.feedback.append(_with_format(_php_trim(bits[1]), fmt)[0] if len(bits) > 1 else "")
            qo.fractions.append(weight)
        return qo
    if "=" in answertext and "->" in answertext:
        qo.qtype = "match"
        for answer in _split_answers(answertext):
            assert "->" in answer, "Moodle: giftmatchingformat"
            marker = answer.find("->")
            qo.subquestions.append(_with_format(answer[:marker], fmt)[0])
            qo.subanswers.append(_php_trim(_post(answer[marker + 2:])))
        assert len(qo.subquestions) >= 2, "Moodle: importminerror"
        return qo
    check = answertext
    hash_at = answertext.find("#")
    if hash_at > 0:
        check = _php_trim(answertext[:hash_at])
    if check not in ("T", "TRUE", "F", "FALSE"):
        qo.qtype = "shortanswer"
        for answer in _split_answers(answertext):
            weight = 1.0
            if _WEIGHT.match(answer):
                weight, answer = _weight(answer)
            bits = answer.split("#", 1)
            qo.answers.append(_with_format(_php_trim(bits[0]), fmt)[0])
            qo.feedback.append(_with_format(_php_trim(bits[1]), fmt)[0] if len(bits) > 1 else "")
            qo.fractions.append(weight)
        assert qo.answers, "Moodle: importminerror"
        return qo
    qo.qtype = "truefalse"
    bits = answertext.split("#", 2)
    ans = _with_format(_php_trim(bits[0]), fmt)[0]
    wrong = _with_format(_php_trim(bits[1]), fmt)[0] if len(bits) > 1 else ""
    right = _with_format(_php_trim(bits[2]), fmt)[0] if len(bits) > 2 else ""
    if ans in ("T", "TRUE"):
        qo.correctanswer, qo.feedbacktrue, qo.feedbackfalse = 1, right, wrong
    else:
        qo.correctanswer, qo.feedbacktrue, qo.feedbackfalse = 0, wrong, right
    qo.penalty = 1
    return qo


def _weight(answer: str) -> tuple[float, str]:
    """`answerweightparser`: the `%n%` grade and the rest of the answer."""
    answer = answer[1:]
    end = answer.find("%")
    return float(answer[:end]) / 100, answer[end + 1:]


def _split_answers(answertext: str) -> list[str]:
    """`explode('=', ...)`, the first piece dropped when empty, each trimmed."""
    answers = answertext.split("=")
    answers[0] = _php_trim(answers[0])
    if answers[0] in ("", "0"):
        answers.pop(0)
    return [_php_trim(a) for a in answers]


def _gift_numerical(qo: Question, answertext: str, fmt: str) -> Question:
    """The numerical case: `=%n%value:tolerance#feedback` or `=%n%min..max#feedback`."""
    qo.qtype = "numerical"
    wrong = ""
    if "~" in answertext:
        pos = answertext.find("~")
        answertext, wrong = answertext[:pos], answertext[pos:]
    answers = _split_answers(answertext)
    assert answers, "Moodle: giftnonumericalanswers"
    for answer in answers:
        weight = 1.0
        if _WEIGHT.match(answer):
            weight, answer = _weight(answer)
        bits = answer.split("#", 1)
        text = _with_format(_php_trim(bits[0]), fmt)[0]
        qo.feedback.append(_with_format(_php_trim(bits[1]), fmt)[0] if len(bits) > 1 else "")
        qo.fractions.append(weight)
        if text.find("..") > 0:
            marker = text.find("..")
            hi, lo = float(text[marker + 2:].strip()), float(text[:marker].strip())
            ans = (hi + lo) / 2
            tol = hi - ans
        elif text.find(":") > 0:
            marker = text.find(":")
            ans, tol = float(text[:marker].strip()), float(text[marker + 1:].strip())
        else:
            ans, tol = float(text.strip()), 0.0
        qo.answers.append(repr(ans))
        qo.tolerances.append(tol)
    if wrong:
        qo.answers.append("*")
        qo.fractions.append(0.0)
        qo.tolerances.append(0.0)
        bits = wrong.split("#", 1)
        qo.feedback.append(_with_format(_php_trim(bits[1]), fmt)[0] if len(bits) > 1 else "")
    return qo


def read_gift(text: str) -> list[Question]:
    """qformat_default::readdata + readquestions + qformat_gift::readquestion."""
    lines = text.split("\n")  # PHP file() keeps "\n"; trim() removes it again
    out: list[Question] = []
    current: list[str] = []
    for line in [*lines, ""]:
        line = _php_trim(line)
        if line == "" or line == "0":  # PHP empty()
            if current:
                q = _readquestion(current)
                if q is not None:
                    out.append(q)
                current = []
        else:
            current.append(line)
    return out


# --- lib/moodlelib.php shorten_text, for text without tags (a question name) --------------------

_ENT = re.compile(r"&[0-9a-z]{2,8};|&#[0-9]{1,7};|&#x[0-9a-f]{1,6};", re.I)


def shorten_text(text: str, ideal: int = 30, ending: str = "...") -> str:
    """`shorten_text($text, $ideal, false, $ending)` on a text without tags, line by line as
    the PHP (one 'line' of content, as `preg_match_all` gives for tagless text)."""
    if len(text) <= ideal:  # mb_strlen(preg_replace('/<.*?>/', '', $text)) <= $ideal
        return text
    totallength = len(ending)
    contentlength = len(_ENT.sub(" ", text))
    if totallength + contentlength <= ideal:
        return text + ending
    left = ideal - totallength
    entitieslength = 0
    for m in _ENT.finditer(text):
        if m.start() + 1 - entitieslength <= left:
            left -= 1
            entitieslength += len(m.group(0))
        else:
            break
    breakpos = left + entitieslength
    while breakpos > 0:
        char = text[breakpos:breakpos + 1]
        if char and char != "0":  # PHP: if ($char = mb_substr(...)) is false for "0"
            if char == "." or char == " ":
                breakpos += 1
                break
            if len(char.encode("utf-8")) > 2:
                breakpos += 1
                break
        breakpos -= 1
    if breakpos == 0 or breakpos > left + entitieslength:
        breakpos = left + entitieslength
    return text[:breakpos] + ending


# --- filter_multilang ------------------------------------------------------------------------

_SEARCH = re.compile(
    r'(<span(\s+lang="[a-zA-Z0-9_-]+"|\s+class="multilang"){2}\s*>.*?</span>)'
    r'(\s*<span(\s+lang="[a-zA-Z0-9_-]+"|\s+class="multilang"){2}\s*>.*?</span>)+',
    re.I | re.S,
)
_SPLIT = re.compile(r'<(?:lang|span)[^>]+lang="([a-zA-Z0-9_-]+)"[^>]*>(.*?)</(?:lang|span)>',
                    re.I | re.S)


def multilang(text: str, lang: str) -> str:
    """What filter_multilang shows a user whose language is `lang` (parent: en)."""
    def one(m: re.Match[str]) -> str:
        found = _SPLIT.findall(m.group(0))
        if not found:
            return m.group(0)
        by_lang: dict[str, str] = {}
        for code, content in found:
            by_lang[code.lower().replace("-", "_")] = content
        for candidate in (lang, "en"):
            if candidate in by_lang:
                return by_lang[candidate]
        return next(iter(by_lang.values()))

    return _SEARCH.sub(one, text)


# --- the oracle itself, checked against facts of Moodle's importer (issue 5) -------------------


def test_oracle_facts_of_moodles_gift_importer():
    # `=%50%x` is still 100%; a question is single-answer only if some `=` is present.
    [q] = read_gift("::n::q{=%50%a ~b}")
    assert q.fractions == [1.0, 0.0] and q.single == 1
    [q] = read_gift("::n::q{~%50%a ~%50%b}")
    assert q.single == 0 and q.fractions == [0.5, 0.5]
    # An unescaped `=` in an HTML attribute creates extra answers, marked correct.
    [q] = read_gift('::n::q{~<span lang="en">a</span> =b}')
    assert len(q.answers) == 3 and q.fractions[1] == 1.0
    # A blank line splits a question in two; a line starting with `//` is removed.
    assert len(read_gift("::a::x{T}\n\n::b::y{F}")) == 2
    [q] = read_gift("::n::[html]<p>a\n// b</p>\n{T}")
    assert q.questiontext == "<p>a"
    # The first unescaped `{` starts the answers; escaped ones stay text.
    [q] = read_gift("::n::a \\{b\\} c{TRUE}")
    assert q.questiontext == "a {b} c"
    # T/F/TRUE/FALSE are case-sensitive: `{true}` is a short-answer question.
    [q] = read_gift("::n::q{true}")
    assert q.qtype == "shortanswer" and q.answers == ["true"] and q.fractions == [1.0]
    # Numerical: a range is held as its middle and half-width; `=` answers default to 100%.
    [q] = read_gift("::n::q{#=%50%2..4#f =1.5:0.1}")
    assert q.qtype == "numerical" and q.answers == ["3.0", "1.5"]
    assert q.tolerances == [1.0, 0.1] and q.fractions == [0.5, 1.0] and q.feedback == ["f", ""]
    # Matching: `=` and `->`; an empty premise is a distractor. `->` in a short answer's text
    # makes it a matching question.
    [q] = read_gift("::n::q{=a -> 1 =b -> 2 = -> 3}")
    assert q.qtype == "match" and q.subquestions == ["a", "b", ""]
    assert q.subanswers == ["1", "2", "3"]
    try:
        read_gift("::n::q{=x->y =z}")
    except AssertionError as e:
        assert "giftmatchingformat" in str(e)  # read as matching, then refused
    else:
        raise AssertionError("'->' in a short answer read as short answer")
    # Essay: empty braces (the general feedback inside is not an answer).
    [q] = read_gift("::n::q{####g}")
    assert q.qtype == "essay" and q.generalfeedback == "g"
    # Grades need 5 decimals: 33.3% is not in the list, 33.33333% is.
    assert match_grade(0.333) is None and match_grade(0.3333333) == 0.3333333


def test_oracle_facts_of_moodles_xml_importer():
    xml = (b"<quiz><question type='multichoice'><name><text>n</text></name>"
           b"<questiontext format='html'><text>q</text></questiontext>"
           b"<single>False</single><answer fraction='100'><text>a</text></answer>"
           b"<answer fraction='0'><text>b</text></answer></question></quiz>")
    [q] = read_xml(xml)
    assert q.single == 1  # only "false", "" or "0" are false
    assert q.shuffleanswers == 0  # a missing <shuffleanswers> means no shuffling


def test_oracle_multilang_filter():
    text = '<p><span lang="id" class="multilang">satu</span> <span class="multilang" lang="en">one</span></p>'
    assert multilang(text, "id") == "<p>satu</p>"
    assert multilang(text, "en") == "<p>one</p>"
    assert multilang(text, "fr") == "<p>one</p>"  # parent language en
