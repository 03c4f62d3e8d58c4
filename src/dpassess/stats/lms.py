"""LMS quiz reports -> answers: Moodle's Responses report download and Canvas's (Classic Quizzes)
Student Analysis report, one row per attempt, matched to items by their text (`stats.text`).

Moodle (4.x, mod/quiz/report/responses, downloaded as CSV): the person's columns ("Last name",
"First name", identity fields such as "ID number", "Email address"), "State", "Started on",
"Completed", "Duration"/"Time taken", "Grade/10.00", then per question slot N "Question N" (the
question summary: question text, ": ", the choices in the attempt's order joined by "; "),
"Response N" (the chosen choices' text joined by "; ", "-" for none) and "Right answer N", each
present if ticked under the report's "Show" options. The download names no question, so each
slot is matched by its question summary, which must be included.

Canvas (app/models/quizzes/quiz_statistics/student_analysis.rb): "name", "id", "sis_id",
"section", "section_id", "section_sis_id", "submitted", "attempt" (some optional), then per
question a column "<question id>: <question text without tags>" with the answer's text
(multiple answers: the chosen answers' texts joined by ",", a comma inside one written "\\,"),
followed by a column of its points headed by the points possible; last "n correct",
"n incorrect", "score". A question a submission did not get has both fields empty.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import assert_never

from dpassess.diagnostics import Severity, UsageError
from dpassess.markup.markdown import to_plain
from dpassess.model import (
    ChoiceItem,
    Cloze,
    Essay,
    GapContent,
    Item,
    Matching,
    MultipleResponse,
    Numerical,
    NumericalGap,
    Ordering,
    ShortAnswer,
    ShortAnswerGap,
    SingleChoice,
    TrueFalse,
    is_scored,
)
from dpassess.stats.context import Context, Rows
from dpassess.stats.generic import parse_score
from dpassess.stats.responses import Answer
from dpassess.stats.scoring import OMITTED, Response
from dpassess.stats.text import MULTI, loose, unique_items

_NUMBERED = re.compile(r"(.+?) ([1-9][0-9]{0,5})")
_CANVAS = re.compile(r"([0-9]{1,18}): (.*)", re.S)
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
#: A Moodle cell with nothing in it.
_NOTHING = ("", "-")
#: Moodle's columns that say who made the attempt, the first one filled wins (the names in
#: English and in Moodle's Indonesian language pack).
MOODLE_IDS = ("ID number", "Nomor ID", "Email address", "Alamat email", "Username",
              "Nama pengguna")
MOODLE_NAMES = (("Last name", "Surname", "Nama belakang"), ("First name", "Nama depan"))
MOODLE_STATE = ("State", "Status")
MOODLE_FINISHED = ("Finished", "Selesai", "")
MOODLE_STARTED = ("Started on", "Dimulai pada", "Mulai pada", "Dimulai")
#: The words of a slot's columns ("Question 1", "Response 1", "Right answer 1") in the languages
#: known here; in any other language the columns are told by their order within a slot.
MOODLE_ROLES = {
    "question": ("question", "pertanyaan", "soal"),
    "response": ("response", "respons", "respon", "jawaban"),
    "right": ("right answer", "jawaban benar", "jawaban yang benar", "kunci jawaban"),
}
#: The role of each column of a slot by its place, when the slot has that many columns.
_BY_PLACE = {3: ("question", "response", "right"), 2: ("question", "response")}
CANVAS_IDS = ("sis_id", "id", "name")
#: How many columns from the left a header's person columns may reach (Moodle's names, identity
#: fields, state and times; Canvas's name, id, sis_id).
_PERSON_COLUMNS = 16
#: Column names only a header row has (a further download's header is told by them).
_HEADER_NAMES = frozenset({*MOODLE_IDS, *(n for names in MOODLE_NAMES for n in names),
                           *MOODLE_STATE, *MOODLE_STARTED, "sis_id", "n correct", "n incorrect"})
#: The separator a multiple-answer response is written with after `_canvas_parts`.
_SEP = "\x1f"
TWICE_HINT = "download one attempt per person"


def _role(word: str) -> str | None:
    w = " ".join(word.casefold().split())
    return next((role for role, names in MOODLE_ROLES.items() if w in names), None)


def moodle_slots(header: list[str]) -> dict[int, dict[str, int]] | None:
    """Slot number -> role (question, response, right) -> column, from a header in any
    interface language: the numbered columns ("<word> N") in runs by slot, each word's role by
    its name if known, else by its place in the slot (Moodle writes question, response, right
    answer in that order). None if the header is no Moodle Responses report."""
    runs: list[tuple[int, list[tuple[str, int]]]] = []
    for i, h in enumerate(header):
        m = _NUMBERED.fullmatch(h.strip())
        if m is None or h.strip().startswith("Q. "):
            continue
        number = int(m.group(2))
        if runs and runs[-1][0] == number and runs[-1][1][-1][1] == i - 1:
            runs[-1][1].append((m.group(1), i))
        else:
            runs.append((number, [(m.group(1), i)]))
    if not runs:
        return None
    words = {w for _, run in runs for w, _ in run}
    known = {w: _role(w) for w in words}
    patterns = {tuple(w for w, _ in run) for _, run in runs}
    roles: dict[str, str] = {}
    if len(patterns) == 1:
        [pattern] = patterns
        by_place = _BY_PLACE.get(len(pattern))
        if len(set(pattern)) == len(pattern) and by_place is not None:
            roles = dict(zip(pattern, by_place, strict=True))
    for w, role in known.items():
        if role is not None:
            roles[w] = role
    if "response" not in roles.values():
        return None
    slots: dict[int, dict[str, int]] = {}
    for number, run in runs:
        for w, col in run:
            if w in roles:
                slots.setdefault(number, {})[roles[w]] = col
    return slots


def is_moodle(header: list[str]) -> bool:
    return moodle_slots(header) is not None


def is_canvas(header: list[str]) -> bool:
    return any(_CANVAS.fullmatch(h) and i + 1 < len(header)
               and _NUMBER.fullmatch(header[i + 1].strip())
               for i, h in enumerate(header))


def _column(header: list[str], *names: str) -> int | None:
    stripped = [h.strip() for h in header]
    for name in names:
        if name in stripped:
            return stripped.index(name)
    return None


def _person(row: list[str], ids: list[int], names: list[int]) -> str:
    for i in ids:
        if row[i].strip():
            return row[i].strip()
    return ", ".join(row[i].strip() for i in names if row[i].strip())


# --- Moodle ------------------------------------------------------------------------------------


@dataclass
class _Slot:
    number: int
    question: int | None = None
    response: int | None = None
    right: int | None = None


def _again(first: list[str], row: list[str], is_header: Callable[[list[str]], bool]) -> bool:
    """Whether `row` is the header of a further download pasted below the first: it starts as
    the first header does, or it names its person columns as Moodle or Canvas do, and it reads
    as a header of that layout."""
    if not row:
        return False
    starts = bool(first) and row[0].strip() == first[0].strip()
    # the person columns come first (a data row is checked in a few steps)
    return ((starts or any(c.strip() in _HEADER_NAMES for c in row[:_PERSON_COLUMNS]))
            and is_header(row))


def _quizzes(first: tuple[int, list[str]], rows: Rows, ctx: Context,
             is_header: Callable[[list[str]], bool],
             read_quiz: Callable[[tuple[int, list[str]], Rows, Context], Iterator[Answer]]
             ) -> Iterator[Answer]:
    """Several quiz downloads one below the other in one file, each with its header row (one
    quiz per form): each is a form of its own, `quiz 1`, `quiz 2`, ... in file order. A file
    of one download has no form."""
    heads: list[tuple[int, list[str]]] = []

    def until_header() -> Rows:
        for line, row in rows:
            if _again(first[1], row, is_header):
                heads.append((line, row))
                return
            yield line, row

    head, quiz = first, 1
    while True:
        form = f"quiz {quiz}" if quiz > 1 else ""
        for answer in read_quiz(head, until_header(), ctx):
            yield replace(answer, form=form) if form else answer
        if not heads:
            return
        head = heads.pop()
        quiz += 1
        if quiz == 2:  # the file has several quizzes: the first one is a form as well
            ctx.responses.rename_form("", "quiz 1")


def read_moodle(first: tuple[int, list[str]], rows: Rows, ctx: Context) -> Iterator[Answer]:
    yield from _quizzes(first, rows, ctx, is_moodle, _read_moodle_quiz)


def _read_moodle_quiz(first: tuple[int, list[str]], rows: Rows,
                      ctx: Context) -> Iterator[Answer]:
    header_line, header = first
    slots: dict[int, _Slot] = {}
    for number, cols in (moodle_slots(header) or {}).items():
        slots[number] = _Slot(number, cols.get("question"), cols.get("response"),
                              cols.get("right"))
    missing = sorted(n for n, s in slots.items() if s.question is None)
    if missing:
        raise UsageError(
            f"{ctx.problems.path}:{header_line}: no 'Question {missing[0]}' column: the download "
            "names no question, so dpassess matches each by its text. In the quiz's Responses "
            "report tick 'Question text' (and 'Response') under 'Show', then download again")
    ids = [i for i in (_column(header, n) for n in MOODLE_IDS) if i is not None]
    names = [i for i in (_column(header, *n) for n in MOODLE_NAMES) if i is not None]
    if not ids and not names:  # another interface language: the name columns come first
        first_slot = min(c for s in slots.values() for c in (s.question, s.response, s.right)
                         if c is not None)
        names = list(range(min(2, first_slot)))
    state = _column(header, *MOODLE_STATE)
    started = _column(header, *MOODLE_STARTED)
    ctx.responses.duplicate_hint = TWICE_HINT
    width = len(header)
    for line, row in rows:
        ctx.responses.source.rows += 1
        if len(row) != width:
            ctx.problems.error(line, "", f"{len(row)} fields, but the header has {width}")
            continue
        person = _person(row, ids, names)
        if not person:
            ctx.problems.error(line, "", "no person: the row has no name, ID number or email")
            continue
        if state is not None and row[state].strip() not in MOODLE_FINISHED:
            ctx.problems.tally(("state",), line, "State", "attempts not finished are analysed "
                               "as they are", example=repr(row[state].strip()))
        answered = False
        attempt = f"{person}\x1f{row[started].strip()}" if started is not None else ""
        for slot in sorted(slots.values(), key=lambda s: s.number):
            answer = _moodle_answer(row, line, person, slot, ctx)
            if answer is not None:
                answered = True
                yield replace(answer, attempt=attempt)
        if not answered:
            _empty(line, ctx)


def _moodle_answer(row: list[str], line: int, person: str, slot: _Slot,
                   ctx: Context) -> Answer | None:
    assert slot.question is not None
    question = row[slot.question].strip()
    given = row[slot.response].strip() if slot.response is not None else ""
    fld = f"Response {slot.number}"
    if question in _NOTHING:
        if given not in _NOTHING:
            ctx.problems.error(line, fld, f"a response without its question (Question "
                               f"{slot.number} is empty)")
        return None  # the attempt did not reach this slot: reported as missing if need be
    matched = ctx.index.by_summary_lang(question)
    item = _one(unique_items(matched), question, line, f"Question {slot.number}", ctx)
    if item is None:
        return None
    langs = {lang for it, lang in matched if it.id == item.id and not lang.startswith(MULTI)}
    lang = next(iter(langs)) if len(langs) == 1 else ""
    answer = _moodle_item_answer(row, line, person, slot, item, given, question, ctx)
    return replace(answer, language=lang) if answer is not None and lang else answer


def _moodle_item_answer(row: list[str], line: int, person: str, slot: _Slot, item: Item,
                        given: str, question: str, ctx: Context) -> Answer | None:
    fld = f"Response {slot.number}"
    if not is_scored(item):  # text only
        return None
    match item:
        case SingleChoice() | MultipleResponse() | TrueFalse():
            return _moodle_choice(row, line, person, slot, item, given, ctx)
        case Numerical() | ShortAnswer():
            typed = OMITTED if slot.response is None or given in _NOTHING else Response(typed=given)
            return Answer(line, person, item, typed, field=fld)
        case Cloze():
            if slot.response is None or given in _NOTHING:
                return Answer(line, person, item, OMITTED, field=fld)
            return Answer(line, person, item, moodle_cloze_response(item, given), field=fld)
        case Matching() | Ordering() | Essay():
            ctx.problems.tally(
                ("moodle-unread", item.id), line, fld,
                f"item {item.id!r} ({item.type.value}): Moodle's Responses report does not say "
                "what the answer earned (no marks per question; an ordering summary shortens "
                "the options), so the item is left out of the analysis; give its scores in a "
                "generic CSV (person,item,response,score)")
            return None
        case _:
            assert_never(item)


def _moodle_choice(row: list[str], line: int, person: str, slot: _Slot, item: ChoiceItem,
                   given: str, ctx: Context) -> Answer | None:
    fld = f"Response {slot.number}"
    if slot.right is not None and row[slot.right].strip() not in _NOTHING:
        right = ctx.index.choices(item, row[slot.right].strip(), "; ")
        if isinstance(right, frozenset) and right != frozenset(item.key):
            ctx.problems.tally(("moodle-key", item.id), line, f"Right answer {slot.number}",
                               f"item {item.id!r}: Moodle's right answer is not the bank's key; "
                               "the bank's key is used", example=repr(row[slot.right].strip()))
    if slot.response is None or given in _NOTHING:
        return Answer(line, person, item, OMITTED, field=fld)
    chosen = ctx.index.choices(item, given, "; ")
    if isinstance(chosen, str):
        ctx.problems.error(line, fld, chosen)
        return None
    return Answer(line, person, item, Response(chosen), field=fld)


def _empty(line: int, ctx: Context) -> None:
    ctx.problems.tally(("empty",), line, "", "rows without any answer (attempts never made or "
                       "emptied) passed over: they are no persons of the analysis")


def _one(items: list[Item], text: str, line: int, fld: str, ctx: Context) -> Item | None:
    """The one item a question text matched; else one error per distinct text (tallied)."""
    if len(items) == 1:
        return items[0]
    shown = text if len(text) <= 60 else text[:57] + "..."
    if items:
        message = (f"{shown!r} matches items {', '.join(i.id for i in items)} (the same "
                   "question text and choices)")
    else:
        message = f"{shown!r} matches no item of bank {ctx.bank.config.id!r}"
    ctx.problems.tally(("question", fld, text), line, fld, message, Severity.error)
    return None


# --- Canvas ------------------------------------------------------------------------------------


def read_canvas(first: tuple[int, list[str]], rows: Rows, ctx: Context) -> Iterator[Answer]:
    yield from _quizzes(first, rows, ctx, is_canvas, _read_canvas_quiz)


def _read_canvas_quiz(first: tuple[int, list[str]], rows: Rows,
                      ctx: Context) -> Iterator[Answer]:
    header_line, header = first
    questions: list[tuple[int, Item, str]] = []  # (column, item, header)
    for i, h in enumerate(header):
        m = _CANVAS.fullmatch(h)
        if m and i + 1 < len(header) and _NUMBER.fullmatch(header[i + 1].strip()):
            item = _one(ctx.index.by_question(m.group(2)), m.group(2), header_line,
                        f"question {m.group(1)}", ctx)
            if item is not None:
                questions.append((i, item, f"{m.group(1)}: {m.group(2)}"[:40]))
    ids = [i for i in (_column(header, n) for n in CANVAS_IDS) if i is not None]
    attempt_cols = [i for i in (_column(header, n) for n in ("id", "attempt", "submitted"))
                    if i is not None]
    ctx.responses.duplicate_hint = ("generate the Student Analysis for the latest attempts, "
                                    "not all attempts")
    width = len(header)
    for line, row in rows:
        ctx.responses.source.rows += 1
        if len(row) != width:
            ctx.problems.error(line, "", f"{len(row)} fields, but the header has {width}")
            continue
        person = _person(row, ids, []) or f"line {line}"  # an anonymous survey names no one
        if not any(row[col].strip() or row[col + 1].strip() for col, _, _ in questions):
            _empty(line, ctx)
        attempt = "\x1f".join(row[i].strip() for i in attempt_cols) if "id" in [
            header[i].strip() for i in attempt_cols] else ""
        for answer in _canvas_answers(row, line, person, questions, ctx):
            yield replace(answer, attempt=attempt)


def _canvas_answers(row: list[str], line: int, person: str,
                    questions: list[tuple[int, Item, str]], ctx: Context) -> Iterator[Answer]:
    for col, item, fld in questions:
        given, points = row[col].strip(), row[col + 1].strip()
        if not given and not points:
            continue  # a question this submission did not get
        ok, score = parse_score(points, item, line, ctx, fld)
        if not ok:
            continue
        if not given:
            yield Answer(line, person, item, OMITTED, score=score, field=fld)
            continue
        if not item.choice_ids:  # a typed answer (or an order, a matching): Canvas's points
            yield Answer(line, person, item, Response(typed=given), score=score, field=fld)
            continue
        chosen = ctx.index.choices(item, _canvas_parts(given), _SEP)
        if isinstance(chosen, str):
            ctx.problems.error(line, fld, chosen)
            continue
        yield Answer(line, person, item, Response(chosen), score=score, field=fld)


def _canvas_parts(text: str) -> str:
    """Canvas's "a,b\\,c" (answers joined by commas, a comma in one escaped) -> "a<SEP>b,c"."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("\\,", i):
            out.append(",")
            i += 2
            continue
        out.append(_SEP if text[i] == "," else text[i])
        i += 1
    return "".join(out)


# --- Moodle's Grades report ----------------------------------------------------------------------

_GRADE = re.compile(r"Q\. ?([1-9][0-9]{0,5}) ?/ ?([0-9]{1,9}(?:[.,][0-9]{1,9})?)")
#: A Grades report's row of averages, in English and Indonesian.
_AVERAGE = ("overall average", "rata-rata keseluruhan", "rerata keseluruhan")
GRADES_BLIND = ("Moodle's Grades report gives each question's mark, not the answer: no "
                "distractor analysis (option figures and distractor flags) for its items; "
                "download the Responses report for them")


def is_moodle_grades(header: list[str]) -> bool:
    return any(_GRADE.fullmatch(h.strip()) for h in header)


def read_moodle_grades(first: tuple[int, list[str]], rows: Rows, ctx: Context
                       ) -> Iterator[Answer]:
    """Moodle's quiz Grades report (mod/quiz/report/overview, downloaded as CSV or Excel): per
    attempt a column "Q. N /max" of marks. The report names no question, so slot N is question
    N of the form's answer-key file (the form the quiz was made from)."""
    header_line, header = first
    slots: list[tuple[int, int, float]] = []  # (column, slot, max mark)
    for i, h in enumerate(header):
        m = _GRADE.fullmatch(h.strip())
        if m:
            slots.append((i, int(m.group(1)), float(m.group(2).replace(",", "."))))
    if not ctx.keys:
        raise UsageError(
            f"{ctx.problems.path}:{header_line}: Moodle's Grades report names no question, only "
            "slots 'Q. 1', 'Q. 2', ...: give the answer-key file of the form the quiz was made "
            "from with --form (slot N is its question N), or download the Responses report "
            "(with the question text) instead")
    ids = [i for i in (_column(header, n) for n in MOODLE_IDS) if i is not None]
    names = [i for i in (_column(header, *n) for n in MOODLE_NAMES) if i is not None]
    if not ids and not names:
        names = list(range(min(2, min(c for c, _, _ in slots))))
    started = _column(header, *MOODLE_STARTED)
    state = _column(header, *MOODLE_STATE)
    ctx.responses.duplicate_hint = TWICE_HINT
    ctx.problems.warning(header_line, "", GRADES_BLIND)
    form = ctx.form("", header_line)
    if form is None:
        return
    width = len(header)
    for line, row in rows:
        if len(row) != width:
            if len(row) < width and row and row[0].strip().casefold() in _AVERAGE:
                continue
            ctx.problems.error(line, "", f"{len(row)} fields, but the header has {width}")
            continue
        if any(row[i].strip().casefold() in _AVERAGE for i in range(min(3, width))):
            continue  # the row of averages at the end
        ctx.responses.source.rows += 1
        person = _person(row, ids, names)
        if not person:
            ctx.problems.error(line, "", "no person: the row has no name, ID number or email")
            continue
        if state is not None and row[state].strip() not in MOODLE_FINISHED:
            ctx.problems.tally(("state",), line, header[state].strip(), "attempts not finished "
                               "are analysed as they are", example=repr(row[state].strip()))
        attempt = f"{person}\x1f{row[started].strip()}" if started is not None else ""
        answered = False
        for col, slot, top in slots:
            fld = header[col].strip()
            found = ctx.item(str(slot), form, line, fld)
            if found is None:
                continue
            item, _ = found
            raw = row[col].strip()
            if raw in _NOTHING:
                answered = True
                yield Answer(line, person, item, OMITTED, form, field=fld, attempt=attempt)
                continue
            try:
                mark = float(raw.replace(",", ".") if "." not in raw else raw)
            except ValueError:
                ctx.problems.tally(("ungraded", item.id), line, fld,
                                   f"item {item.id!r}: no mark ({raw!r}); left out for that "
                                   "attempt", example=repr(raw))
                continue
            if not 0 <= mark <= top + 1e-9 or top <= 0:
                ctx.problems.error(line, fld, f"mark {raw} is outside 0 to {top:g}")
                continue
            answered = True
            yield Answer(line, person, item, OMITTED, form, mark / top * item.points, fld,
                         score_only=True, attempt=attempt)
        if not answered:
            _empty(line, ctx)


#: One part of Moodle's summary of a cloze response (qtype_multianswer's `subqresponse`:
#: "part 1: Paris; part 2: 3.5"); linear.
_PART = re.compile(r"(?:^|; )part (\d{1,4}): ")


def moodle_cloze_response(item: Cloze, given: str) -> Response:
    """A cloze response as Moodle's Responses report shows it, "part 1: Paris; part 2: 3.5;
    part 3: Beta": each part the gap of that number (typed text, or the text of the option(s)
    chosen, matched to the gap's option ids in any language)."""
    marks = list(_PART.finditer(given))
    parts: list[tuple[str, Response]] = []
    for n, m in enumerate(marks):
        end = marks[n + 1].start() if n + 1 < len(marks) else len(given)
        index = int(m.group(1)) - 1
        if not 0 <= index < len(item.gaps):
            continue
        gap, value = item.gaps[index], given[m.end():end].strip()
        if isinstance(gap, ShortAnswerGap | NumericalGap):
            parts.append((gap.id, Response(typed=value)))
            continue
        texts: dict[str, str] = {}
        for content in item.text.values():
            for oid, text in content.gaps.get(gap.id, GapContent()).options.items():
                texts.setdefault(loose(to_plain(text)), oid)
        chosen = {texts[loose(v)] for v in value.split("; ") if loose(v) in texts}
        if not chosen and loose(value) in texts:
            chosen = {texts[loose(value)]}
        parts.append((gap.id, Response(chosen=frozenset(chosen))))
    return Response(parts=tuple(parts))
