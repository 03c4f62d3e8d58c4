"""Answers streamed from a responses file -> one compact table of scores and chosen options
(person x item), checked as they arrive.

Nothing per row is kept: each item has three flat arrays indexed by person (score, the chosen
options as a bit mask, the line the answer came from), so a file of a million rows takes about
20 MB. An answer given twice, a person on two forms or a file score that differs from the bank's
key is reported with its line.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from itertools import compress, count
from operator import not_

from dpassess.diagnostics import Severity
from dpassess.model import Bank, Cloze, Item
from dpassess.stats.problems import Problems
from dpassess.stats.scoring import (
    OMITTED,
    Response,
    gap_fraction,
    gradable,
    score,
)

NOT_ANSWERED = math.nan
#: A file's score that differs from the bank's by no more than this is the same score (LMS
#: reports round to two decimals: 0.33 for a third).
SCORE_TOLERANCE = 0.005
#: Most options an item may have here (the chosen ones are a 64-bit mask).
MAX_OPTIONS = 64


@dataclass(frozen=True, slots=True)
class Answer:
    """One person's response to one item, as a reader resolved it (item and option ids)."""

    line: int
    person: str
    item: Item
    response: Response
    form: str = ""
    #: the score the file gives, if it gives one
    score: float | None = None
    #: the column the response came from
    field: str = "response"
    #: only the score is known, not what was answered (a grades report): no distractor figures
    score_only: bool = False
    #: the language the person read the item in, if the file says ("" when unknown)
    language: str = ""
    #: what identifies the attempt across downloads (an LMS's attempt or user id and time)
    attempt: str = ""


class Column:
    """One item's answers, indexed by person."""

    __slots__ = ("bits", "chosen_known", "direct", "forms", "gaps", "graded", "item", "lines",
                 "marks", "omits", "options", "scores", "slots")

    def __init__(self, item: Item) -> None:
        self.item = item
        #: False once an answer came without what was chosen (a grades report's mark)
        self.chosen_known = True
        self.options = item.choice_ids
        self.bits = {oid: 1 << i for i, oid in enumerate(self.options)}
        self.scores = array("d")
        self.marks = array("Q")
        self.lines = array("L")
        self.omits = array("B")
        #: a cloze item's gaps: the fraction of its points each person's answer to it earns
        self.gaps: dict[str, array[float]] = (
            {g.id: array("d") for g in item.gaps} if isinstance(item, Cloze) else {})
        #: each response seen, graded once: (the bank's score, the chosen options' bit mask)
        self.graded: dict[Response, tuple[float, int]] = {}
        #: each response seen by `Responses.put`, by the key its reader gives it: (score, bit
        #: mask, omitted, several marks on an item with one key)
        self.slots: dict[object, tuple[float, int, bool, bool]] = {}
        #: the forms `Responses.put` stored this item on (what it added to `form_items`: a
        #: change of `form_items` by other means must change this too)
        self.forms: set[str] = set()
        #: whether `Responses.put` stores an answer itself (a choice item, not a cloze item)
        self.direct = bool(self.options) and not self.gaps

    def grade(self, response: Response) -> tuple[float, int]:
        """(the score the bank's key gives `response`, its chosen options as a bit mask)."""
        out = self.graded.get(response)
        if out is None:
            mask = 0
            for oid in response.chosen:
                mask |= self.bits[oid]
            out = self.graded[response] = (score(self.item, response), mask)
        return out

    def slot(self, key: object, response: Response) -> tuple[float, int, bool, bool]:
        """`grade` and what `Responses.add` asks of a response, once per `key` (which stands
        for `response`, and is quicker to hash)."""
        out = self.slots.get(key)
        if out is None:
            earned, mask = self.grade(response)
            out = self.slots[key] = (earned, mask, response.omitted,
                                     len(response.chosen) > 1 and self.item.takes_one)
        return out

    def grow(self, n: int) -> None:
        """Room for persons 0 .. n-1 (the new ones not answered)."""
        short = n - len(self.scores)
        if short > 0:
            self.scores.extend(array("d", [NOT_ANSWERED]) * short)
            self.marks.extend(array("Q", [0]) * short)
            self.lines.extend(array("L", [0]) * short)
            self.omits.extend(array("B", [0]) * short)
            for fractions in self.gaps.values():
                fractions.extend(array("d", [NOT_ANSWERED]) * short)

    def chosen(self, person: int) -> frozenset[str]:
        mask = self.marks[person]
        return frozenset(o for o, bit in self.bits.items() if mask & bit)


@dataclass
class Source:
    """Where the responses came from."""

    path: str
    format: str
    bank: str
    sha256: str = ""
    rows: int = 0
    forms: tuple[str, ...] = ()
    #: the one form analysed when the file holds others too (their rows passed over), else ""
    only: str = ""


@dataclass
class Responses:
    """Every answer of one administration: persons in order of appearance, items by id."""

    source: Source
    problems: Problems
    bank: Bank = field(repr=False)
    persons: list[str] = field(default_factory=list)
    columns: dict[str, Column] = field(default_factory=dict)
    #: items seen on each form (forms by the name the file gives them; "" for none)
    form_items: dict[str, set[str]] = field(default_factory=dict)
    #: what to do about an answer given twice, if the layout suggests a cause
    duplicate_hint: str = ""
    _index: dict[str, int] = field(default_factory=dict, repr=False)
    _form: list[str] = field(default_factory=list, repr=False)
    _first_line: array[int] = field(default_factory=lambda: array("L"), repr=False)
    #: per person: the languages their answers name, with counts; the attempt key
    _languages: list[dict[str, int]] = field(default_factory=list, repr=False)
    _attempts: list[str] = field(default_factory=list, repr=False)
    _form_keys: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return len(self.persons)

    def form_of(self, person: int) -> str:
        return self._form[person]

    def put(self, line: int, person: str, item: Item, response: Response, form: str,
            score: float | None, language: str, key: object) -> None:
        """`add(Answer(line, person, item, response, form, score, language=language))`, without
        the Answer: the generic reader's million rows each cost less. `key`: any hashable
        value that stands for this item and response only (the row's text of them). A choice
        item's answer once its column exists is stored here, with the same checks in the same
        order; any other goes through `add`."""
        col = self.columns.get(item.id)
        if col is None or not col.direct:
            self.add(Answer(line, person, item, response, form, score, language=language))
            return
        idx = self._index.get(person)
        if idx is None:
            idx = self._index[person] = len(self.persons)
            self.persons.append(person)
            self._form.append(form)
            self._first_line.append(line)
            self._languages.append({})
            self._attempts.append("")
        elif self._form[idx] != form:
            self.problems.error(line, "form", f"person {person!r} is on form {form!r} here but on "
                                f"form {self._form[idx]!r} at line {self._first_line[idx]}")
            return
        if language:
            langs = self._languages[idx]
            langs[language] = langs.get(language, 0) + 1
        lines = col.lines
        if idx >= len(lines):
            col.grow(max(idx + 1, 2 * len(lines), 64))  # amortised: room doubles
            lines = col.lines
        if lines[idx]:
            hint = f": {self.duplicate_hint}" if self.duplicate_hint else ""
            self.problems.error(line, "response", f"person {person!r} answers item {item.id!r} "
                                f"again (first at line {lines[idx]}){hint}")
            return
        earned, mask, omitted, several = col.slots.get(key) or col.slot(key, response)
        if score is not None and abs(score - earned) > SCORE_TOLERANCE:
            self.problems.tally(("score", item.id), line, "score",
                                f"item {item.id!r}: the file's score differs from the bank's key; "
                                "the bank's key is used",
                                example=f"{score:g} for {earned:g} at line {line}")
        if several:
            self.problems.tally(("marks", item.id), line, "response",
                                f"item {item.id!r}: several options marked on an item with one "
                                "key; scored 0")
        col.scores[idx] = earned
        col.marks[idx] = mask
        lines[idx] = line
        col.omits[idx] = omitted
        forms = col.forms
        if form not in forms:
            forms.add(form)
            self.form_items.setdefault(form, set()).add(item.id)

    def add(self, a: Answer) -> None:
        """Store one answer, or report why it cannot be stored."""
        p = self.problems
        idx = self._index.get(a.person)
        if idx is None:
            idx = self._index[a.person] = len(self.persons)
            self.persons.append(a.person)
            self._form.append(a.form)
            self._first_line.append(a.line)
            self._languages.append({})
            self._attempts.append(a.attempt)
        elif self._form[idx] != a.form:
            p.error(a.line, "form", f"person {a.person!r} is on form {a.form!r} here but on form "
                    f"{self._form[idx]!r} at line {self._first_line[idx]}")
            return
        if a.language:
            langs = self._languages[idx]
            langs[a.language] = langs.get(a.language, 0) + 1
        col = self.columns.get(a.item.id)
        if col is None:
            if len(a.item.choice_ids) > MAX_OPTIONS:
                p.error(a.line, a.field, f"item {a.item.id!r} has more than {MAX_OPTIONS} options, "
                        "more than the analysis handles")
                return
            col = self.columns[a.item.id] = Column(a.item)
        if idx >= len(col.scores):
            col.grow(max(idx + 1, 2 * len(col.scores), 64))  # amortised: room doubles
        if col.lines[idx]:
            hint = f": {self.duplicate_hint}" if self.duplicate_hint else ""
            p.error(a.line, a.field, f"person {a.person!r} answers item {a.item.id!r} again (first "
                    f"at line {col.lines[idx]}){hint}")
            return
        earned, mask = col.grade(a.response)
        if a.score_only and a.score is not None:
            earned = a.score
            col.chosen_known = False
        elif col.options or a.response.omitted:
            if a.score is not None and abs(a.score - earned) > SCORE_TOLERANCE:
                p.tally(("score", a.item.id), a.line, "score",
                        f"item {a.item.id!r}: the file's score differs from the bank's key; the "
                        "bank's key is used", example=f"{a.score:g} for {earned:g} at line {a.line}")
        elif a.score is not None:  # a typed answer: the grader's (or LMS's) score stands
            if abs(a.score - earned) > SCORE_TOLERANCE and gradable(a.item, a.response):
                p.tally(("score", a.item.id), a.line, "score",
                        f"item {a.item.id!r}: the file's score differs from the item's own "
                        "grading; the file's score is used",
                        Severity.warning, example=f"{a.score:g} for {earned:g} at line {a.line}")
            earned = a.score
        elif not gradable(a.item, a.response):
            p.tally(("no-score", a.item.id), a.line, "score",
                    f"item {a.item.id!r} ({a.item.type.value}) is scored by a grader: give its "
                    "score in the score column", Severity.error)
            return
        if len(a.response.chosen) > 1 and a.item.takes_one:
            p.tally(("marks", a.item.id), a.line, a.field,
                    f"item {a.item.id!r}: several options marked on an item with one key; scored 0")
        col.scores[idx] = earned
        col.marks[idx] = mask
        col.lines[idx] = a.line
        col.omits[idx] = a.response.omitted and not a.score_only
        if isinstance(a.item, Cloze) and not a.score_only:
            for gid, fractions in col.gaps.items():
                fractions[idx] = gap_fraction(a.item, gid, dict(a.response.parts).get(gid, OMITTED))
        self.form_items.setdefault(a.form, set()).add(a.item.id)

    def language_of(self, person: int) -> str:
        """The language a person read the test in (the one most of their answers name; ties
        by name), "" if the file does not say."""
        langs = self._languages[person]
        return min(langs, key=lambda lang: (-langs[lang], lang)) if langs else ""

    def attempt_of(self, person: int) -> str:
        """What identifies the person's attempt across downloads: the LMS's attempt key, else
        the person, their form and its items (the same students on another
        exam of the bank are another administration)."""
        if self._attempts[person]:
            return self._attempts[person]
        form = self._form[person]
        items = self._form_keys.get(form)
        if items is None:
            items = self._form_keys[form] = "\x1f".join(sorted(self.form_items.get(form, ())))
        return f"{self.persons[person]}\x1f{form}\x1f{items}"

    def forms(self) -> list[str]:
        """The forms of the file, by name."""
        return sorted(self.form_items)

    def rename_form(self, old: str, new: str) -> None:
        """Name the form `old` `new` (the first quiz of a file that turns out to hold several)."""
        self._form = [new if f == old else f for f in self._form]
        if old in self.form_items:
            self.form_items[new] = self.form_items.pop(old)
        for col in self.columns.values():  # what `put` remembers it added to form_items
            if old in col.forms:
                col.forms.discard(old)
                col.forms.add(new)
        self._form_keys.clear()

    def only_form(self, form: str) -> Responses:
        """The persons of one form and the items of that form, as a responses set of its own
        (the problems are shared)."""
        keep = [i for i in range(self.n) if self._form[i] == form]
        items = self.form_items.get(form, set())
        sub = Responses(replace(self.source, forms=(form,)), self.problems, self.bank)
        sub.form_items = {form: set(items)}
        sub.duplicate_hint = self.duplicate_hint
        for i in keep:
            sub._index[self.persons[i]] = len(sub.persons)
            sub.persons.append(self.persons[i])
            sub._form.append(form)
            sub._first_line.append(self._first_line[i])
            sub._languages.append(self._languages[i])
            sub._attempts.append(self._attempts[i])
        for item_id, col in self.columns.items():
            if item_id not in items:
                continue
            new = sub.columns[item_id] = Column(col.item)
            new.chosen_known = col.chosen_known
            new.scores = array("d", (col.scores[i] for i in keep))
            new.marks = array("Q", (col.marks[i] for i in keep))
            new.lines = array("L", (col.lines[i] for i in keep))
            new.omits = array("B", (col.omits[i] for i in keep))
        return sub

    def finish(self) -> None:
        """Every column as long as the list of persons; an item a person of its form has no
        answer to is reported (tallied per item) and stays NOT_ANSWERED: not received, left
        out of that item's figures."""
        n = self.n
        for col in self.columns.values():
            col.grow(n)
            del col.scores[n:], col.marks[n:], col.lines[n:], col.omits[n:]
        for col in self.columns.values():
            for idx in self._missing(col):
                form = self._form[idx]
                if col.item.id not in self.form_items.get(form, ()):
                    continue  # an item of another form: the analysis decides
                self.problems.tally(
                    ("missing", col.item.id), self._first_line[idx], "item",
                    f"item {col.item.id!r}: not received by some persons of its form (no row): "
                    "left out of its figures (an empty response is an omission, scored 0)",
                    Severity.warning, example=repr(self.persons[idx]))

    @staticmethod
    def _missing(col: Column) -> Iterator[int]:
        """The persons with no answer in `col` (line 0)."""
        return compress(count(), map(not_, col.lines))
