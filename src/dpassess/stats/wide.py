"""A wide answer sheet as teachers type it -> answers: one row per student, one column per
question (headed by its number on the form, or by an item id), a person column and, if the
sheet has one, a form column; letters in upper or lower case, `-` or blank for no answer.

Question numbers and letters are mapped through the form's answer-key file (options are shuffled
per form); a cell is read as the generic layout reads a response (`stats.generic`): letters for
choice items (`A`, `a`, `A;C`, `AC`), number-letter pairs as the paper form prints them for
matching (`1-B, 2-A, 3-C`), the letters in the order put for ordering (`B A C D`), the typed
text for the other types.
"""

from __future__ import annotations

from collections.abc import Iterator

from dpassess.diagnostics import UsageError
from dpassess.model import Bank, MultipleResponse
from dpassess.stats.context import Context, Rows
from dpassess.stats.forms import letter_index
from dpassess.stats.generic import response_of, tokens
from dpassess.stats.responses import Answer
from dpassess.stats.scoring import OMITTED

#: Names of the person column (case-folded), in English and Indonesian.
PERSON = ("person", "name", "student", "nama", "peserta", "siswa", "nis", "nisn", "nim",
          "no. peserta", "nomor peserta", "id")
#: Names of the form column.
FORM = ("form", "paket", "kode", "kode soal", "kode paket", "versi", "tipe", "type")
#: Names of the language column (the language the student read the test in).
LANGUAGE = ("language", "lang", "bahasa")
#: Cells that mean no answer.
NOTHING = ("", "-", "–", "—")


def _question(name: str, bank: Bank) -> bool:
    name = name.strip()
    return (name.isascii() and name.isdigit() and int(name) > 0) or name in bank


def is_wide(header: list[str], bank: Bank) -> bool:
    """A header with question columns (numbers or item ids) and at most a few others, one of
    them naming the person or the first column."""
    questions = sum(1 for h in header if _question(h, bank))
    others = [h.strip().casefold() for h in header if not _question(h, bank)]
    return questions > 0 and 0 < len(others) <= 4 and not {"item", "response"} <= set(others)


def read_wide(first: tuple[int, list[str]], rows: Rows, ctx: Context) -> Iterator[Answer]:
    header_line, header = first
    names = [h.strip() for h in header]
    folded = [n.casefold() for n in names]
    i_person = next((folded.index(n) for n in PERSON if n in folded), None)
    i_form = next((folded.index(n) for n in FORM if n in folded), None)
    i_lang = next((folded.index(n) for n in LANGUAGE if n in folded), None)
    questions = [(i, n) for i, n in enumerate(names) if _question(n, ctx.bank)]
    if i_person is None:
        i_person = next((i for i, n in enumerate(names) if not _question(n, ctx.bank)
                         and i != i_form), None)
    if i_person is None:
        raise UsageError(f"{ctx.problems.path}:{header_line}: a wide answer sheet needs a column "
                         f"naming the student ({', '.join(PERSON[:5])}, ...)")
    used = {i_person, i_form, i_lang, *(i for i, _ in questions)}
    for i, n in enumerate(names):
        if i not in used:
            ctx.problems.warning(header_line, n, f"column {n!r} is not read (a wide sheet has "
                                 "the person, the form and one column per question)")
    width = len(header)
    for line, row in rows:
        ctx.responses.source.rows += 1
        if len(row) != width:
            ctx.problems.error(line, "", f"{len(row)} fields, but the header has {width}")
            continue
        person = row[i_person].strip()
        if not person:
            ctx.problems.error(line, names[i_person], "no person")
            continue
        form = ctx.form(row[i_form].strip() if i_form is not None else "", line)
        if form is None:
            continue
        lang = row[i_lang].strip() if i_lang is not None else ""
        for col, question in questions:
            found = ctx.item(question, form, line, question)
            if found is None:
                continue
            item, order = found
            raw = row[col].strip()
            if raw in NOTHING:
                yield Answer(line, person, item, OMITTED, form, field=question, language=lang)
                continue
            if order and isinstance(item, MultipleResponse) and raw.isascii() \
                    and raw.isalpha() and len(raw) > 1 and raw not in order \
                    and all(letter_index(ch.upper()) is not None for ch in raw):
                raw = ";".join(raw)  # "AC": letters of a multiple-response question
            elif order and item.choice_ids:
                raw = ";".join(tokens(raw))  # "A, C" or "A C"
            response = response_of(item, raw, order, line, ctx)
            if response is not None:
                yield Answer(line, person, item, response, form, field=question, language=lang)
