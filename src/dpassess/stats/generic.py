"""The generic long CSV -> answers: `person,form,item,response[,score]`, one row per person and
item, in any column order (`form` and `score` optional).

`item` is an item id or a question number of an assembled form; `response` the chosen option ids
separated by `;`, or the form's letters (A, B, ...), or empty for an omitted item. Numbers and
letters are mapped through the form's answer-key file. A numerical, short-answer or essay item's
response is the typed text; an ordering item's its option ids in the order given (`;`); a
matching item's `premise=response` pairs (`;`). `score`, when given, is the score of a typed
answer (required for essays).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import assert_never

from dpassess.diagnostics import Severity, UsageError
from dpassess.model import (
    Cloze,
    Essay,
    Item,
    Matching,
    MultipleResponse,
    Numerical,
    Ordering,
    ShortAnswer,
    SingleChoice,
    TrueFalse,
    is_scored,
)
from dpassess.stats.context import Context, Rows
from dpassess.stats.forms import letter_index
from dpassess.stats.responses import Answer
from dpassess.stats.scoring import OMITTED, Response

COLUMNS = ("person", "form", "item", "response", "score", "language")


def read_generic(first: tuple[int, list[str]], rows: Rows, ctx: Context) -> Iterator[Answer]:
    """`person,form,item,response[,score]` in any column order; `form` and `score` optional.

    Each answer is stored in `ctx.responses` as its row is read (`Responses.put`: no object per
    row); the iterator returned is empty."""
    header_line, header = first
    cols: dict[str, int] = {}
    for i, name in enumerate(header):
        key = name.strip().lower()
        if key in cols:
            raise UsageError(f"{ctx.problems.path}:{header_line}: column {key!r} twice")
        cols[key] = i
        if key not in COLUMNS:
            ctx.problems.warning(header_line, name.strip(), f"column {name.strip()!r} is not read "
                                 f"(the columns are {', '.join(COLUMNS)})")
    i_person, i_item, i_response = cols["person"], cols["item"], cols["response"]
    i_form, i_score, i_lang = cols.get("form"), cols.get("score"), cols.get("language")
    width = len(header)
    # A long file repeats a few forms, items and responses a great many times: each is
    # resolved once (the answers found; a row with an error is checked, and reported, anew),
    # and each (form, item, response) as the row gives them once more, in `seen`.
    forms: dict[str, str] = {}
    items: dict[tuple[str, str], tuple[Item, tuple[str, ...] | None]] = {}
    responses: dict[tuple[str, str, tuple[str, ...] | None], Response] = {}
    seen: dict[tuple[str, str, str], tuple[str, Item, Response]] = {}
    put = ctx.responses.put
    count = 0
    try:
        for line, row in rows:
            count += 1
            if len(row) != width:
                ctx.problems.error(line, "", f"{len(row)} fields, but the header has {width}")
                continue
            person = row[i_person].strip()
            if not person:
                ctx.problems.error(line, "person", "no person")
                continue
            raw = row[i_response]
            cell = (row[i_form] if i_form is not None else "", row[i_item], raw)
            hit = seen.get(cell)
            if hit is None:
                raw_form = cell[0].strip()
                form = forms.get(raw_form)
                if form is None:
                    form = ctx.form(raw_form, line)
                    if form is None:
                        continue
                    forms[raw_form] = form
                raw_item = row[i_item].strip()
                found = items.get((raw_item, form))
                if found is None:
                    found = ctx.item(raw_item, form, line, "item")
                    if found is None:
                        continue
                    items[raw_item, form] = found
                item, order = found
                response = responses.get((item.id, raw, order))
                if response is None:
                    response = response_of(item, raw, order, line, ctx)
                    if response is not None:
                        responses[item.id, raw, order] = response
                if response is not None:
                    seen[cell] = (form, item, response)
            else:
                form, item, response = hit
            ok, given = parse_score(row[i_score], item, line, ctx) if i_score is not None \
                else (True, None)
            if response is not None and ok:
                put(line, person, item, response, form, given,
                    row[i_lang].strip() if i_lang is not None else "", cell)
    finally:
        ctx.responses.source.rows += count
    return iter(())


def response_of(item: Item, raw: str, order: tuple[str, ...] | None, line: int,
              ctx: Context) -> Response | None:
    if not is_scored(item):  # text only: nothing to analyse
        return None
    match item:
        case SingleChoice() | MultipleResponse() | TrueFalse():
            return _choices(item, raw, order, line, ctx)
        case Numerical() | ShortAnswer() | Essay():
            return Response(typed=raw) if raw.strip() else OMITTED
        case Ordering():
            if order and "=" not in raw and not set(_ids(raw)) & set(item.options):
                return _ordering_letters(item, raw, order, line, ctx)
            return _ordering(item, raw, line, ctx)
        case Matching():
            if order and "=" not in raw:
                return _matching_letters(item, raw, order, line, ctx)
            return _matching(item, raw, line, ctx)
        case Cloze():
            return cloze_response(item, raw)
        case _:
            assert_never(item)


def cloze_response(item: Cloze, raw: str) -> Response:
    """A cloze response written `g1=Paris; g2=3.5; g3=b; g4=a,c` (gap id, `=`, the typed text
    or the chosen option ids joined by commas); a gap not named is omitted."""
    kinds = {g.id: g.type for g in item.gaps}
    parts: list[tuple[str, Response]] = []
    for piece in raw.split(";"):
        gid, eq, value = piece.partition("=")
        gid, value = gid.strip(), value.strip()
        if not eq or gid not in kinds or not value:
            continue
        if kinds[gid] in ("choice", "multiple_response"):
            chosen = frozenset(v.strip() for v in value.split(",") if v.strip())
            parts.append((gid, Response(chosen=chosen)))
        else:
            parts.append((gid, Response(typed=value)))
    return Response(parts=tuple(parts))


def _ids(raw: str) -> list[str]:
    return [t for t in (t.strip() for t in raw.split(";")) if t]


def tokens(raw: str) -> list[str]:
    """Tokens separated by ',', ';' or spaces (letters as a paper sheet's answer is typed)."""
    for sep in ",;":
        raw = raw.replace(sep, " ")
    return raw.split()


def _letter(token: str, order: tuple[str, ...]) -> str | None:
    """The id a form's letter (upper or lower case) stands for, None if it is no such letter."""
    idx = letter_index(token.upper()) if token.isascii() and token.isalpha() else None
    return order[idx] if idx is not None and idx < len(order) else None


def _pairs(raw: str) -> list[tuple[str, str]] | None:
    """`1-B, 2-A` -> [("1", "B"), ("2", "A")]; None if a token is not number-letter."""
    out = []
    for token in tokens(raw):
        number, dash, rest = token.partition("-")
        if not dash or not number.strip().isdigit() or not rest.strip():
            return None
        out.append((number.strip(), rest.strip()))
    return out


def _ordering_letters(item: Ordering, raw: str, order: tuple[str, ...], line: int,
                      ctx: Context) -> Response | None:
    """The form's letters in the order the person put them (`B A C D`, `B,A,C,D`, `BACD`), or
    place-letter pairs (`1-B, 2-A, 3-C, 4-D`); `-` or empty: omitted."""
    text = raw.strip()
    if text in ("", "-"):
        return OMITTED
    pairs = _pairs(text)
    if pairs is not None:
        letters = [x for _, x in sorted(pairs, key=lambda p: int(p[0]))]
        if sorted(int(n) for n, _ in pairs) != list(range(1, len(pairs) + 1)):
            letters = []
    else:
        letters = tokens(text)
        if len(letters) == 1 and len(text) == len(order):
            letters = list(text)
    given = [_letter(x, order) for x in letters]
    if len(given) != len(order) or None in given or len(set(given)) != len(given):
        ctx.problems.error(line, "response", f"item {item.id!r} (ordering): give the letters "
                           f"A to {chr(ord('A') + len(order) - 1)} each once, in the order the "
                           "person put them (B A C D, or 1-B, 2-A, ...)")
        return None
    return Response(order=tuple(g for g in given if g is not None))


def _matching_letters(item: Matching, raw: str, order: tuple[str, ...], line: int,
                      ctx: Context) -> Response | None:
    """Premise number - response letter pairs as the paper form prints them (`1-B, 2-A`); a
    premise left out is unanswered; `-` or empty: omitted."""
    text = raw.strip()
    if text in ("", "-"):
        return OMITTED
    pairs = _pairs(text)
    out: dict[str, str] = {}
    for number, x in pairs or [("", "")]:
        n = int(number) if number else 0
        chosen = _letter(x, order)
        if not 1 <= n <= len(item.pairs) or chosen is None:
            ctx.problems.error(line, "response", f"item {item.id!r} (matching): give premise "
                               f"number - response letter pairs (1-B, 2-A; premises 1 to "
                               f"{len(item.pairs)}, letters A to {chr(ord('A') + len(order) - 1)})")
            return None
        premise = item.pairs[n - 1]
        if premise in out:
            ctx.problems.error(line, "response", f"premise {n} matched twice")
            return None
        out[premise] = chosen
    return Response(pairs=tuple(sorted(out.items())))


def _ordering(item: Ordering, raw: str, line: int, ctx: Context) -> Response | None:
    """Every option id once, in the order given, separated by ';'; empty: omitted."""
    given = _ids(raw)
    if not given:
        return OMITTED
    if sorted(given) != sorted(item.options):
        ctx.problems.error(line, "response", f"item {item.id!r} (ordering): give every option "
                           f"once, in the order the person put them ({'; '.join(item.options)})")
        return None
    return Response(order=tuple(given))


def _matching(item: Matching, raw: str, line: int, ctx: Context) -> Response | None:
    """`premise=response` pairs (ids) separated by ';'; a premise left out is unanswered."""
    pairs: dict[str, str] = {}
    responses = set(item.response_ids)
    for token in _ids(raw):
        premise, eq, chosen = (t.strip() for t in token.partition("="))
        if not eq or premise not in item.pairs or chosen not in responses:
            ctx.problems.error(line, "response", f"{token!r}: item {item.id!r} (matching) takes "
                               f"premise=response pairs (premises: {', '.join(item.pairs)}; "
                               f"responses: {', '.join(item.response_ids)})")
            return None
        if premise in pairs:
            ctx.problems.error(line, "response", f"premise {premise!r} matched twice")
            return None
        pairs[premise] = chosen
    return Response(pairs=tuple(sorted(pairs.items()))) if pairs else OMITTED


def _choices(item: Item, raw: str, order: tuple[str, ...] | None, line: int,
             ctx: Context) -> Response | None:
    """Option ids (or a form's letters) separated by ';'; empty: omitted."""
    tokens = [t.strip() for t in raw.split(";")]
    tokens = [t for t in tokens if t]
    if not tokens:
        return OMITTED
    options = ctx.options(item)
    chosen: list[str] = []
    for t in tokens:
        idx = None if t in options else letter_index(t) if order is None or not t.isascii() \
            else letter_index(t.upper())
        if idx is not None:
            if order is None:
                ctx.problems.error(line, "response", f"letter {t!r}: letters need the form's "
                                   "answer-key file (options are shuffled per form); or give "
                                   f"option ids ({', '.join(options)})")
                return None
            if idx >= len(order):
                ctx.problems.tally(("letter", item.id, t), line, "response",
                                   f"letter {t!r} on item {item.id!r}: the question has options "
                                   f"A to {chr(ord('A') + len(order) - 1)} in the form's key "
                                   "(is it the key of this sheet's form?)", Severity.error)
                return None
            oid = order[idx]
        elif t in options:
            oid = t
        else:
            ctx.problems.error(line, "response", f"{t!r} is no option of item {item.id!r} "
                               f"(options: {', '.join(options)})")
            return None
        if oid in chosen:
            ctx.problems.error(line, "response", f"option {oid!r} given twice")
            return None
        chosen.append(oid)
    return Response(frozenset(chosen))


def parse_score(raw: str, item: Item, line: int, ctx: Context,
                fld: str = "score") -> tuple[bool, float | None]:
    """(False, None) after reporting a score that is no number or outside 0 to the item's
    points; (True, None) for an empty field; else (True, the score). A decimal comma is read."""
    text = raw.strip()
    if not text:
        return True, None
    try:
        value = float(text.replace(",", ".") if "." not in text else text)
    except ValueError:
        ctx.problems.error(line, fld, f"score {text!r} is not a number")
        return False, None
    if not 0 <= value <= item.points + 1e-9:
        ctx.problems.error(line, fld, f"score {text} is outside 0 to {item.points:g}, the "
                           f"points of item {item.id!r}")
        return False, None
    return True, value
