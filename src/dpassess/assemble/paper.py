"""A form in one language -> the papers a teacher prints: the student form (header, items,
answer sheet) and the answer key (the same grid, filled, and every answer), each as HTML and
as PDF (Typst markup compiled by the `typst` package).

The item text goes Markdown -> HTML (dpassess.markup.markdown) -> lxml nodes, which are put
into the HTML as they are and turned into Typst markup for the PDF (every text a Typst string
literal, so nothing in an item is read as Typst code); maths comes from the Markdown parser as
MathML and is written as Typst maths by `dpassess.markup.typst_maths`. The PDF has no date and
uses only the fonts that ship with Typst: the same form gives the same bytes on any machine.

The HTML and the PDF are two writers on the exports' contract (`dpassess.export.Format`, listed
in `dpassess.export.formats.PAPERS`): `HTML` and `PDF`, whose state is the `Paper`. Each has a
per-item builder (one numbered item of the form, with its stimulus: HTML `<li>` or Typst
markup) and an assembly (header, instructions, the items in form order, the answer sheet,
footer; the key's grid and answer list; the PDF's assembly compiles the Typst). Their fragments
are not cached: a paper's item reads the form (its position, its options' order, the stimulus
note naming the other items) and a PDF is compiled whole.
"""

from __future__ import annotations

import hashlib
import io
import os
import posixpath
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, assert_never

import lxml.html
from lxml.html import HtmlElement
from lxml.html import builder as E

from dpassess.assemble import sheet as sh
from dpassess.assemble.forms import Form, FormItem, letter
from dpassess.assemble.keys import Answer, answer, number
from dpassess.diagnostics import Diagnostic, Severity, UsageError
from dpassess.export import Collection, Context, Format, Fragment, Fragments
from dpassess.markup.htmlnodes import html_nodes
from dpassess.markup.markdown import to_html
from dpassess.markup.maths import TEX_ENCODING, MathsMode, find_maths, tex_problem
from dpassess.markup.media import is_local_image, locate_image, pixel_size, read_media
from dpassess.markup.typst_maths import tex_to_typst, typst_problem
from dpassess.markup.xmlchars import xml_safe
from dpassess.model import (
    Bank,
    ChoiceGap,
    Cloze,
    Description,
    Essay,
    GapContent,
    Item,
    Matching,
    MultipleResponse,
    MultipleResponseGap,
    Numerical,
    Ordering,
    ShortAnswer,
    SingleChoice,
    TrueFalse,
)
from dpassess.model.items import GAP_REF

W: dict[str, dict[str, str]] = {
    "en": {
        "form": "Form", "key": "Answer key", "items": "items", "points": "points",
        "point": "point", "page": "page", "of": "of", "name": "Name",
        "number": "Student number", "class": "Class", "date": "Date",
        "sheet": "Answer sheet", "sheet_help": "Fill in one circle per row",
        "sheet_all": " (all that apply where the item says so)",
        "sheet_other": "; answers to the other items go on the form",
        "use_sheet": "Mark your answers on the answer sheet (the last page).",
        "use_sheet_some": "Mark the answers to the items with lettered options on the answer "
        "sheet (the last page); write the other answers on the form.",
        "on_form": "answer on the form", "no_hand_out": "For the teacher: never hand out.",
        "teacher_only": "Teacher only", "teacher_head": "Teacher only: never hand out",
        "score_one": "Each item is worth 1 point",
        "score_mixed": "Each item is worth 1 point unless marked otherwise",
        "score_same": "Each item is worth {n} points",
        "score_marked": "The points of each item are marked beside it",
        "no_penalty": "a wrong answer takes no points off",
        "essays": "essays are graded by hand",
        "minutes": "Time allowed: {n} minutes", "minute": "Time allowed: 1 minute",
        "read": "Read the following for items {a}–{b}.", "read_one": "Read the following for "
        "item {a}.", "answer": "Answer", "words": "words", "item": "Item",
        "grader": "For the grader", "image": "image",
    },
    "id": {
        "form": "Paket", "key": "Kunci jawaban", "items": "soal", "points": "poin",
        "point": "poin", "page": "halaman", "of": "dari", "name": "Nama",
        "number": "Nomor induk", "class": "Kelas", "date": "Tanggal",
        "sheet": "Lembar jawaban", "sheet_help": "Hitamkan satu lingkaran pada setiap baris",
        "sheet_all": " (semua yang benar bila soal memintanya)",
        "sheet_other": "; jawaban soal lain ditulis di lembar soal",
        "use_sheet": "Tandai jawaban Anda pada lembar jawaban (halaman terakhir).",
        "use_sheet_some": "Tandai jawaban soal berpilihan huruf pada lembar jawaban (halaman "
        "terakhir); tulis jawaban soal lain di lembar soal.",
        "on_form": "jawab di lembar soal", "no_hand_out": "Untuk pengajar: jangan dibagikan.",
        "teacher_only": "Untuk pengajar", "teacher_head": "Untuk pengajar: jangan dibagikan",
        "score_one": "Setiap soal bernilai 1 poin",
        "score_mixed": "Setiap soal bernilai 1 poin kecuali ditandai lain",
        "score_same": "Setiap soal bernilai {n} poin",
        "score_marked": "Poin setiap soal tertera di sampingnya",
        "no_penalty": "jawaban salah tidak mengurangi nilai",
        "essays": "esai dinilai oleh pemeriksa",
        "minutes": "Waktu: {n} menit", "minute": "Waktu: 1 menit",
        "read": "Bacalah teks berikut untuk soal {a}–{b}.", "read_one": "Bacalah teks berikut "
        "untuk soal {a}.", "answer": "Jawaban", "words": "kata", "item": "Soal",
        "grader": "Untuk pemeriksa", "image": "gambar",
    },
}

#: The instruction for each item type, by language (printed once for each type on the form).
INSTRUCTIONS: dict[str, dict[str, str]] = {
    "en": {
        "single_choice": "Choose the one best answer.",
        "multiple_response": "Choose all that apply.",
        "true_false": "Decide whether the statement is true or false.",
        "numerical": "Write the number in the box.",
        "short_answer": "Write a short answer on the line.",
        "matching": "Write the letter of the matching answer in the box beside each item.",
        "ordering": "Number the entries in the right order, starting at 1.",
        "essay": "Answer in full sentences in the space given.",
        "cloze": "Write the answer to each numbered blank on its line; where the blank's choices "
                 "are listed under the text, circle the letter of each right one.",
    },
    "id": {
        "single_choice": "Pilih satu jawaban yang paling tepat.",
        "multiple_response": "Pilih semua jawaban yang benar.",
        "true_false": "Tentukan apakah pernyataan itu benar atau salah.",
        "numerical": "Tuliskan bilangan jawaban di dalam kotak.",
        "short_answer": "Tuliskan jawaban singkat pada garis.",
        "matching": "Tuliskan huruf pasangan yang cocok di kotak di samping setiap pernyataan.",
        "ordering": "Beri nomor urut pada setiap pilihan, mulai dari 1.",
        "essay": "Jawablah dengan kalimat lengkap pada ruang yang disediakan.",
        "cloze": "Tuliskan jawaban setiap isian bernomor pada garisnya; jika pilihannya "
                 "tercantum di bawah teks, lingkari huruf setiap jawaban yang benar.",
    },
}

CSS = """
body { font-family: serif; max-width: 46em; margin: 2em auto; line-height: 1.4; }
header { border-bottom: 1px solid #000; margin-bottom: 1.5em; }
.fields { display: grid; grid-template-columns: 1fr 1fr; gap: 0.6em 2em; margin: 1em 0; }
.fields span { border-bottom: 1px solid #000; display: block; padding-top: 1.2em; }
ol.items { list-style: none; padding: 0; }
ol.items > li { margin-bottom: 1.2em; break-inside: avoid; }
.stimulus { border: 1px solid #888; padding: 0.5em 1em; margin-bottom: 1em; }
.num { font-weight: bold; margin-right: 0.4em; }
ol.options { list-style-type: upper-alpha; }
.box { display: inline-block; border: 1px solid #000; min-width: 8em; height: 1.6em; }
.small { display: inline-block; border: 1px solid #000; width: 1.6em; height: 1.4em;
         margin-right: 0.5em; vertical-align: middle; }
.line { border-bottom: 1px solid #000; height: 1.8em; }
section.sheet { break-before: page; page-break-before: always; }
.bubble { display: inline-block; width: 1.3em; height: 1.3em; border: 1px solid #000;
          border-radius: 50%; text-align: center; font-size: 0.75em; line-height: 1.3em;
          margin-right: 0.3em; }
.bubble.filled { background: #000; color: #fff; }
table { border-collapse: collapse; }
td, th { border: 1px solid #888; padding: 0.2em 0.6em; text-align: left; vertical-align: top; }
math { font-family: "Latin Modern Math", "STIX Two Math", "Cambria Math", "DejaVu Math TeX Gyre",
       math; }
"""

#: The printed page's footer (browsers that print CSS page margin boxes show it on every page).
PAGE_CSS = """
@page {{ margin: 2cm 2cm 2.4cm; @bottom-left {{ content: "{footer}"; font-size: 9pt; }}
        @bottom-right {{ content: "{page} " counter(page) " {of} " counter(pages);
                         font-size: 9pt; }} }}
"""


def _css_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def words(lang: str) -> dict[str, str]:
    return W.get(lang, W["en"])


# --- what is printed, in either format ------------------------------------------------------


@dataclass
class Paper:
    """One paper: the form (`key=False`) or its key, in one language."""

    form: Form
    lang: str
    title: str
    key: bool
    bank: Bank
    duration: int | None = None  # minutes students have, printed on the cover
    digits: int = 10  # of the student number on the answer sheet
    key_hash: str = "00000000"  # of the form's key file, in the sheet's QR code
    warnings: list[Diagnostic] = field(default_factory=list)
    #: the images the PDF's markup names, by their name in Typst's root folder (the PDF
    #: writer's item builder puts them here; its assembly starts with none)
    images: dict[str, bytes] = field(default_factory=dict)

    @cached_property
    def _by_id(self) -> dict[str, FormItem]:
        return {fi.item.id: fi for fi in self.form.items}

    def form_item(self, item: Item) -> FormItem:
        """The place of `item` on the form."""
        return self._by_id[item.id]

    @property
    def w(self) -> dict[str, str]:
        return words(self.lang)

    @property
    def footer(self) -> str:
        lead = f"{self.w['key']} · {self.w['teacher_only']} · " if self.key else ""
        return f"{lead}{self.w['form']} {self.form.label}"

    def summary(self) -> str:
        """The line under the title: form, items, points, and the time allowed if given."""
        questions = self.form.questions  # a description is no question and has no points
        total = sum(fi.item.points for fi in questions)
        line = (f"{self.w['form']} {self.form.label} · {len(questions)} {self.w['items']} "
                f"· {number(total, self.lang)} {self.w['points']}")
        if self.duration is not None:
            time = self.w["minute"] if self.duration == 1 else self.w["minutes"]
            line += " · " + time.format(n=self.duration)
        return line

    def layout(self) -> sh.Layout:
        """Where the answer sheet's marks and bubbles are."""
        return sh.layout(self.form, self.digits)

    @property
    def sheet(self) -> bool:
        """Whether the form has an answer sheet (it has an item answered by a bubble)."""
        return any(bubbles(fi) for fi in self.form.items)

    def cover(self) -> list[str]:
        """The cover's instructions: one per item type on the form, then where to answer."""
        lines = self.instructions()
        if self.sheet:
            alone = all(bubbles(fi) for fi in self.form.questions)
            lines.append(self.w["use_sheet" if alone else "use_sheet_some"])
        return lines

    def scoring(self) -> str:
        """The scoring rule, saying only what applies to this form."""
        points = {fi.item.points for fi in self.form.questions}
        if points == {1}:
            first = self.w["score_one"]
        elif 1 in points:
            first = self.w["score_mixed"]
        elif len(points) == 1:
            first = self.w["score_same"].format(n=number(points.pop(), self.lang))
        else:
            first = self.w["score_marked"]
        parts = [first, self.w["no_penalty"]]
        if any(isinstance(fi.item, Essay) for fi in self.form.items):
            parts.append(self.w["essays"])
        return "; ".join(parts) + "."

    def sheet_help(self) -> str:
        """How to fill in the answer sheet, saying only what applies to this form."""
        text = self.w["sheet_help"]
        if any(isinstance(fi.item, MultipleResponse) for fi in self.form.items):
            text += self.w["sheet_all"]
        if not all(bubbles(fi) for fi in self.form.questions):
            text += self.w["sheet_other"]
        return text + "."

    def instructions(self) -> list[str]:
        seen: list[str] = []
        for fi in self.form.items:
            if fi.item.type.value not in seen and not isinstance(fi.item, Description):
                seen.append(fi.item.type.value)
        table = INSTRUCTIONS.get(self.lang, INSTRUCTIONS["en"])
        return [table[t] for t in seen]

    def points(self, fi: FormItem) -> str:
        p = fi.item.points
        return "" if p == 1 else f"({number(p, self.lang)} {self.w['points']})"

    def stimulus_note(self, fi: FormItem) -> str:
        members = [x.position for x in self.form.questions if x.source.stimulus == fi.stimulus]
        if not members:  # a set of descriptions alone: no question to name
            return ""
        a, b = members[0], members[-1]
        return (self.w["read_one"] if a == b else self.w["read"]).format(a=a, b=b)

    def answers(self) -> list[tuple[FormItem, Answer]]:
        return [(fi, answer(fi, [self.lang])) for fi in self.form.questions]


def fragments(markdown: str, maths: MathsMode = "tex") -> list[Any]:
    """Markdown -> HTML through dpassess.markup.markdown, parsed into lxml nodes (never
    concatenated): elements, and the leading text if any (as lxml's builder takes them).
    `maths`: how maths is written (see `to_html`)."""
    if not markdown.strip():
        return []
    return [*lxml.html.fragments_fromstring(to_html(markdown, maths))]


def bubbles(fi: FormItem) -> list[str]:
    """The letters of the answer-sheet row of an item (empty: answered on the form)."""
    return [letter(p) for p in range(len(fi.item.choice_ids))]


#: A printed gap: its number and a line to write on.
_BLANK = "**({n})**\u00a0\\_\\_\\_\\_\\_\\_\\_\\_\\_\\_\\_\\_"


def stem_of(it: Item, lang: str) -> str:
    """The stem as printed: a cloze item's gaps as numbered blanks."""
    stem = it.text[lang].stem
    if not isinstance(it, Cloze):
        return stem
    numbers = {g.id: n for n, g in enumerate(it.gaps, 1)}
    return re.sub(GAP_REF, lambda m: _BLANK.format(n=numbers[m.group(1)])
                  if m.group(1) in numbers else m.group(0), stem)


def gap_choices(it: Cloze, lang: str) -> list[tuple[int, list[str]]]:
    """The choice and multiple-response gaps (number, option texts in authoring order),
    printed under the stem as lettered choices."""
    out = []
    for n, gap in enumerate(it.gaps, 1):
        if isinstance(gap, ChoiceGap | MultipleResponseGap):
            content = it.text[lang].gaps.get(gap.id, GapContent())
            out.append((n, [content.options.get(o, "") for o in gap.options]))
    return out


# --- HTML ---------------------------------------------------------------------------------------


T = TypeVar("T")


def _caught(p: Paper, build: Callable[[], T]) -> tuple[T, list[Diagnostic]]:
    """What `build()` returns, and the warnings it added to `p.warnings` (taken out of it)."""
    n = len(p.warnings)
    out = build()
    caught = p.warnings[n:]
    del p.warnings[n:]
    return out, caught


def _no_collection(collection: Collection, lang: str, options: object) -> Paper:
    raise UsageError("a printed paper is written from an assembled form (`dpassess assemble`), "
                     "not from a collection")


def paper_html(p: Paper) -> bytes:
    """The paper as HTML (its warnings added to `p.warnings`)."""
    buf = io.BytesIO()
    p.warnings += HTML.write_state(p, buf)
    return buf.getvalue()


#: The student form's list of items, as the skeleton is written (the items are put in it).
_ITEMS_HTML = b'<ol class="items"></ol>'


def _html_fragment(p: Paper, item: Item, context: Context) -> Fragment:
    """One item of the form (with its stimulus) as the HTML `<li>` the paper holds."""
    li, warnings = _caught(p, lambda: _item_html(p, p.form_item(item)))
    data: bytes = lxml.html.tostring(li, encoding="utf-8", pretty_print=True)
    return Fragment(data.removesuffix(b"\n"), warnings)


def _html_assemble(p: Paper, fragments: Fragments, out: BinaryIO) -> list[Diagnostic]:
    """The paper's HTML: the skeleton (head, header, the key's grid and list or the form's
    empty list of items and its answer sheet) with the items' fragments put in the list as
    lxml writes a list of them (a line break between items, and around them for more than
    one)."""
    items = [] if p.key else [fragments(fi.item) for fi in p.form.items]
    skeleton, warnings = _caught(p, lambda: _html_skeleton(p))
    if not p.key:
        inner = b"\n".join(f.data for f in items)
        if len(items) > 1:
            inner = b"\n" + inner + b"\n"
        head, sep, tail = skeleton.partition(_ITEMS_HTML)
        assert sep, "the student form's skeleton has its list of items"
        skeleton = head + _ITEMS_HTML[:-5] + inner + _ITEMS_HTML[-5:] + tail
    out.write(skeleton)
    return [*(w for f in items for w in f.warnings), *warnings]


def _html_skeleton(p: Paper) -> bytes:
    w = p.w
    title, _ = xml_safe(p.title)
    body: list[Any] = [E.HEADER(
        E.H1(title),
        E.P(p.summary()),
        *([E.P(E.STRONG(w["no_hand_out"]))] if p.key else
          [E.UL(*(E.LI(t) for t in p.cover())), E.P(p.scoring()), _fields_html(w)]),
    )]
    if p.key:
        if p.sheet:
            body.append(_sheet_html(p, filled=True))
        body.append(_key_list_html(p))
    else:
        body.append(E.OL(E.CLASS("items")))  # the items go here (`_html_assemble`)
        if p.sheet:
            body.append(_sheet_html(p, filled=False))
    page = PAGE_CSS.format(footer=_css_string(p.footer), page=_css_string(w["page"]),
                           of=_css_string(w["of"]))
    doc = E.HTML(E.HEAD(E.META(charset="utf-8"), E.TITLE(title), E.STYLE(CSS + page)),
                 E.BODY(*body), lang=p.lang)
    data: bytes = lxml.html.tostring(doc, doctype="<!DOCTYPE html>", encoding="utf-8",
                                     pretty_print=True)
    return data


def _fields_html(w: dict[str, str]) -> HtmlElement:
    return E.DIV(*(E.LABEL(w[k], E.SPAN()) for k in ("name", "number", "class", "date")),
                 E.CLASS("fields"))


def _nodes(p: Paper, fi: FormItem, markdown: str, field: str, *, stimulus: bool = False
           ) -> list[Any]:
    """`markdown` as HTML nodes with its maths as MathML (`dpassess.markup.htmlnodes`); a
    formula the converter cannot say stays TeX, with the QTI export's warning at the field."""
    nodes, problems = html_nodes(markdown)
    if stimulus and fi.stimulus is not None:
        path = next((e.path for e in p.bank.stimuli if e.stimulus.id == fi.stimulus), "")
        item = fi.stimulus
    else:
        path, item = p.bank.path_of(fi.item.id), fi.item.id
    p.warnings += [Diagnostic(path, 0, 0, field, f"form {p.form.id} ({p.lang}) HTML: {problem}",
                              code="html", severity=Severity.warning, item=item)
                   for problem in problems]
    return nodes


def _item_html(p: Paper, fi: FormItem) -> HtmlElement:
    lang, it = p.lang, fi.item
    parts: list[Any] = []
    if fi.stimulus is not None:
        st = p.bank.stimulus(fi.stimulus).text.get(lang)
        if st is not None:
            parts.append(E.DIV(E.P(E.EM(p.stimulus_note(fi))),
                               *([E.H3(st.title)] if st.title else []), *_nodes(p, fi, st.text, f'text.{lang}.text', stimulus=True),
                               E.CLASS("stimulus")))
    head = [E.SPAN(f"{fi.position}.", E.CLASS("num"))]
    if p.points(fi):
        head.append(E.EM(p.points(fi)))
    if isinstance(it, Description):
        head = []
    parts.append(E.DIV(*head, *_nodes(p, fi, stem_of(it, lang), f'text.{lang}.stem'), E.CLASS("stem")))
    match it:
        case SingleChoice() | MultipleResponse() | TrueFalse():
            parts.append(E.OL(*(E.LI(*_nodes(p, fi, it.option_text(lang, o), f'text.{lang}.options.{o}')) for o in it.option_ids),
                              E.CLASS("options"), type="A"))
        case Numerical():
            parts.append(E.P(f"{p.w['answer']}: ", E.SPAN(E.CLASS("box"))))
        case ShortAnswer():
            parts.append(E.DIV(E.CLASS("line")))
        case Essay():
            limits = _word_limits(it, p.w)
            if limits:
                parts.append(E.P(E.EM(limits)))
            parts += [E.DIV(E.CLASS("line")) for _ in range(it.lines)]
        case Matching():
            content = it.text[lang]
            rows = []
            for n, pid in enumerate(it.pairs):
                right = fi.display[n] if n < len(fi.display) else None
                rows.append(E.TR(
                    E.TD(E.SPAN(E.CLASS("small")), f"{n + 1}. ", *_nodes(p, fi, content.premises[pid], f'text.{lang}.premises.{pid}')),
                    E.TD(*([f"{letter(n)}. ", *_nodes(p, fi, content.responses[right], f'text.{lang}.responses.{right}')] if right
                           else [])),
                ))
            for n in range(len(it.pairs), len(fi.display)):
                rows.append(E.TR(E.TD(), E.TD(f"{letter(n)}. ",
                                              *_nodes(p, fi, content.responses[fi.display[n]],
                                                     f'text.{lang}.responses.{fi.display[n]}'))))
            parts.append(E.TABLE(*rows, E.CLASS("matching")))
        case Ordering():
            order = it.text[lang]
            parts.append(E.UL(*(E.LI(E.SPAN(E.CLASS("small")), f"{letter(n)}. ",
                                     *_nodes(p, fi, order.options[oid], f'text.{lang}.options.{oid}'))
                                for n, oid in enumerate(fi.display)),
                              style="list-style: none"))
        case Cloze():
            for n, texts in gap_choices(it, lang):
                parts.append(E.DIV(E.STRONG(f"({n})"), E.OL(
                    *(E.LI(*_nodes(p, fi, text, f'text.{lang}.gaps')) for text in texts),
                    E.CLASS("options"), type="A")))
        case Description():
            pass
        case _:
            assert_never(it)
    return E.LI(*parts, **({"id": f"q{fi.position}"} if fi.numbered else {}))


def _word_limits(it: Essay, w: dict[str, str]) -> str:
    if it.min_words and it.max_words:
        return f"{it.min_words}–{it.max_words} {w['words']}"
    if it.min_words:
        return f"≥ {it.min_words} {w['words']}"
    if it.max_words:
        return f"≤ {it.max_words} {w['words']}"
    return ""


def _sheet_html(p: Paper, *, filled: bool) -> HtmlElement:
    w = p.w
    rows = []
    for fi, a in p.answers():
        marks = bubbles(fi)
        if marks:
            cells: list[Any] = [E.SPAN(x, E.CLASS("bubble filled" if filled and x in a.letters
                                                  else "bubble")) for x in marks]
        else:
            cells = [a.words.get(p.lang, "") if filled else E.EM(w["on_form"])]
        rows.append(E.TR(E.TD(str(fi.position)), E.TD(*cells)))
    head = f"{w['key'] if filled else w['sheet']} · {w['form']} {p.form.label}"
    intro = [] if filled else [_fields_html(w), E.P(p.sheet_help())]
    return E.SECTION(E.H2(head), *intro, E.TABLE(*rows), E.CLASS("sheet" if not filled else "grid"))


def _key_list_html(p: Paper) -> HtmlElement:
    w = p.w
    rows = [E.TR(E.TH(w["item"]), E.TH(w["answer"]), E.TH(w["points"]), E.TH("id"))]
    for fi, a in p.answers():
        cell: list[Any] = [a.words.get(p.lang, "")]
        if isinstance(fi.item, Essay):
            info = fi.item.text[p.lang].grader_info if p.lang in fi.item.text else None
            if info:
                cell += [E.BR(), E.EM(f"{w['grader']}: "), *_nodes(p, fi, info, f'text.{p.lang}.grader_info')]
        rows.append(E.TR(E.TD(str(fi.position)), E.TD(*cell), E.TD(number(fi.item.points, p.lang)),
                         E.TD(fi.item.id)))
    return E.SECTION(E.TABLE(*rows), E.CLASS("answers"))


# --- Typst (PDF) ----------------------------------------------------------------------------------


def s(text: str, *, lines: bool = False) -> str:
    """A Typst string literal holding `text` (as content: `#` + this); line breaks become
    spaces unless `lines` (code blocks)."""
    clean, _ = xml_safe(text)
    escaped = clean.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n" if lines else " ")
    return f'"{escaped}"'


def t(text: str) -> str:
    """`text` as Typst markup (a string literal in content)."""
    return f"#{s(text)}" if text else ""


#: The page, the fonts and the helpers every paper uses. Typst lets a tall inline formula (a
#: `\dfrac`, a root over a fraction) reach into the leading by 0.7 of it, which put a numerator
#: on the line or option above; with the formula's own bounds as its text edges, its line makes
#: room for all of it.
PREAMBLE = """#set document(title: {title}, author: (), date: none)
#set page(paper: "a4", margin: (x: 2cm, top: 2cm, bottom: 2.4cm),
  footer: context [#set text(9pt); #{footer} #h(1fr) #{page} #counter(page).display() #{of} \
#counter(page).final().first()])
#set text(lang: {lang}, size: 10.5pt)
#set par(justify: false, leading: 0.6em)
#show math.equation.where(block: false): set text(top-edge: "bounds", bottom-edge: "bounds")
#let bubble(l, f) = box(baseline: 25%, circle(radius: 6.5pt, stroke: 0.6pt,
  fill: if f {{ black }} else {{ none }},
  align(center + horizon, text(7pt, fill: if f {{ white }} else {{ black }}, l))))
#let answerbox(w) = box(width: w, height: 1.1em, stroke: 0.6pt, baseline: 25%)
#let pic(b, alt) = context {{ let w = measure(image(b)).width
  if w > 16cm {{ image(b, width: 16cm, alt: alt) }} else {{ image(b, alt: alt) }} }}
"""


def paper_typst(p: Paper, *, plain: bool = False, files: dict[str, bytes] | None = None
                ) -> str:
    """The paper as Typst markup; the images it shows are put in `files` (name -> bytes),
    which the markup names as files of Typst's root folder (`/img-<hash>.png`). Its warnings
    are added to `p.warnings`."""
    p.images = {} if files is None else files

    def build(item: Item, context: Context = ()) -> Fragment:
        return _typst_fragment(p, item, context)

    source, warnings = _typst_source(p, build, plain=plain)
    p.warnings += warnings
    return source


def _typst_fragment(p: Paper, item: Item, context: Context) -> Fragment:
    """One item of the form (with its stimulus) as Typst markup; `context` is `(plain,)`
    (maths as TeX, images as their description). The images it shows go to `p.images`."""
    plain = bool(context[0]) if context else False
    known = set(p.images)
    conv = _Typst(p, plain, p.images)
    data = _item_typst(p, p.form_item(item), conv).encode("utf-8")
    return Fragment(data, conv.warnings, files=tuple(n for n in p.images if n not in known))


def _typst_source(p: Paper, fragments: Fragments, *, plain: bool
                  ) -> tuple[str, list[Diagnostic]]:
    """The paper as Typst markup, the items' markup from `fragments`, and its warnings."""
    w = p.w
    out = [PREAMBLE.format(title=s(p.title), footer=s(p.footer), page=s(w["page"]),
                           of=s(w["of"]), lang=s(p.lang))]
    conv = _Typst(p, plain, p.images)
    warnings: list[Diagnostic] = []
    heading = (f"#text(16pt, weight: \"bold\")[{t(p.title)}]\n\n"
               f"{t(p.summary())}\n\n")
    if p.key:
        if p.sheet:
            # the filled grid first, on a page of its own laid out as the answer sheet's page,
            # so that the key printed on a transparency lies over a student's sheet; its
            # "teacher only" heading is in the page's top margin, where it moves nothing
            out.append(f"#set page(header: context {{ if counter(page).get().first() == 1 "
                       f"{{ align(center, text(12pt, weight: \"bold\", "
                       f"{s(w['teacher_head'].upper())})) }} }})\n")
            out.append(_sheet_typst(p, filled=True))
            out.append("#pagebreak()\n")
        out.append(f"{heading}#strong[{t(w['no_hand_out'])}]\n\n")
        out.append(_key_list_typst(p, conv))
    else:
        out.append(heading)
        out += [f"- {t(x)}\n" for x in p.cover()]
        out.append(f"\n{t(p.scoring())}\n\n")
        out.append(_fields_typst(w))
        out.append("#line(length: 100%)\n\n")
        for fi in p.form.items:
            fragment = fragments(fi.item, (plain,))
            out.append(fragment.data.decode("utf-8"))
            warnings += fragment.warnings
        if p.sheet:
            out.append("#pagebreak()\n")
            out.append(_sheet_typst(p, filled=False))
    return "".join(out), warnings + conv.warnings


def _fields_typst(w: dict[str, str]) -> str:
    cells = ", ".join(f"[{t(w[k] + ':')} #box(width: 1fr, line(length: 100%))]"
                      for k in ("name", "number", "class", "date"))
    return f"#grid(columns: (1fr, 1fr), column-gutter: 2em, row-gutter: 1.2em, {cells})\n\n"


def _item_typst(p: Paper, fi: FormItem, conv: _Typst) -> str:
    lang, it = p.lang, fi.item
    out: list[str] = []
    if fi.stimulus is not None:
        st = p.bank.stimulus(fi.stimulus).text.get(lang)
        conv.source = next((e.path for e in p.bank.stimuli if e.stimulus.id == fi.stimulus),
                           None)
        if st is not None:
            title = f"#strong[{t(st.title)}]\n\n" if st.title else ""
            out.append(f"#block(stroke: 0.5pt + gray, inset: 8pt, width: 100%)"
                       f"[#emph[{t(p.stimulus_note(fi))}]\n\n{title}{conv.md(st.text)}]\n")
    conv.source = p.bank.path_of(it.id)
    pts = f" #emph[{t(p.points(fi))}]" if p.points(fi) else ""
    number = "" if isinstance(it, Description) else f"#strong[{t(f'{fi.position}.')}]{pts} "
    body = [f"{number}{conv.md(stem_of(it, lang))}\n"]
    match it:
        case SingleChoice() | MultipleResponse() | TrueFalse():
            cells = ", ".join(f"[{t(letter(n) + '.')}], [{conv.md(it.option_text(lang, o))}]"
                              for n, o in enumerate(it.option_ids))
            body.append(f"#grid(columns: (auto, 1fr), column-gutter: 6pt, row-gutter: 6pt, "
                        f"{cells})\n")
        case Numerical():
            body.append(f"{t(p.w['answer'] + ': ')}#answerbox(5cm)\n")
        case ShortAnswer():
            body.append("#v(0.8em)#line(length: 70%, stroke: 0.5pt)\n")
        case Essay():
            limits = _word_limits(it, p.w)
            if limits:
                body.append(f"#emph[{t(limits)}]\n")
            body.append(f"#for _ in range({it.lines}) {{ v(1.4em); line(length: 100%, "
                        f"stroke: 0.3pt) }}\n")
        case Matching():
            content = it.text[lang]
            grid: list[str] = []
            for n in range(max(len(it.pairs), len(fi.display))):
                left = (f"[#answerbox(1.4em) {t(f'{n + 1}. ')}"
                        f"{conv.md(content.premises[it.pairs[n]])}]") if n < len(it.pairs) else "[]"
                right = (f"[{t(letter(n) + '. ')}{conv.md(content.responses[fi.display[n]])}]"
                         if n < len(fi.display) else "[]")
                grid += [left, right]
            body.append(f"#grid(columns: (1fr, 1fr), column-gutter: 12pt, row-gutter: 8pt, "
                        f"{', '.join(grid)})\n")
        case Ordering():
            order = it.text[lang]
            cells = ", ".join(f"[#answerbox(1.4em) {t(letter(n) + '. ')}"
                              f"{conv.md(order.options[oid])}]"
                              for n, oid in enumerate(fi.display))
            body.append(f"#grid(columns: 1, row-gutter: 8pt, {cells})\n")
        case Cloze():
            for n, texts in gap_choices(it, lang):
                cells = ", ".join(f"[{t(letter(k) + '.')}], [{conv.md(text)}]"
                                  for k, text in enumerate(texts))
                body.append(f"#strong[{t(f'({n})')}]\n#grid(columns: (auto, 1fr), "
                            f"column-gutter: 6pt, row-gutter: 6pt, {cells})\n")
        case Description():
            pass
        case _:
            assert_never(it)
    out.append(f"#block(breakable: false, below: 1.4em)[{''.join(body)}]\n")
    return "".join(out)


def _sheet_typst(p: Paper, *, filled: bool) -> str:
    """The answer sheet (or the key's grid: the same page with the keyed bubbles filled), drawn
    at the places `sh.layout` gives, so that the scanner and a transparency of the key find
    every bubble where the student's sheet has it."""
    w = p.w
    lay = p.layout()
    head = f"{w['key'] if filled else w['sheet']} · {w['form']} {p.form.label}"
    keys = {fi.position: a for fi, a in p.answers()}
    out: list[str] = []
    for page in lay.pages:
        if page.number > 1:
            out.append("#pagebreak()\n")
        out.append(f"#block(width: 100% - {sh.QR_SIZE + 12}pt)[#text(13pt, weight: \"bold\")"
                   f"[{t(head)}]\n\n{_fields_typst(w)}{t(p.sheet_help())}]\n")
        for x, y in lay.marks():
            out.append(_at(x - sh.MARK / 2, y - sh.MARK / 2,
                           f"square(size: {sh.MARK}pt, fill: black)"))
        qr = sh.qr_svg(sh.qr_text(p.form.id, page.number, p.key_hash, p.lang))
        out.append(_at(sh.QR_X, sh.QR_Y, f"image(bytes({s(qr)}), format: \"svg\", "
                       f"width: {sh.QR_SIZE}pt, height: {sh.QR_SIZE}pt)"))
        cols = lay.number_bubbles()
        out.append(_at(sh.MARGIN, sh.NUMBER_TOP, f"text(9pt, {s(w['number'])})"))
        for col in cols:
            x, y = col[0]
            out.append(_at(x - 7, y - 24, "square(size: 14pt, stroke: 0.5pt)"))
            for d, (x, y) in enumerate(col):
                out.append(_bubble(x, y, str(d), False))
        for r in page.rows:
            out.append(_at(r.x - sh.LABEL_W, r.y - 4.5,
                           f"box(width: {sh.LABEL_W - 4}pt, align(right, "
                           f"text(9pt, {s(str(r.position))})))"))
            a = keys[r.position]
            if r.letters:
                for ltr, (x, y) in zip(r.letters, r.bubbles, strict=True):
                    out.append(_bubble(x, y, ltr, filled and ltr in a.letters))
            else:
                text = a.words.get(p.lang, "") if filled else w["on_form"]
                out.append(_at(r.x, r.y - 5.5, f"box(width: 5.5cm, height: 9pt, clip: true, "
                               f"text(8pt, style: \"italic\", {s(text)}))"))
    return "".join(out)


def _at(x: float, y: float, content: str) -> str:
    """`content` placed with its top-left corner at (x, y) points of the page."""
    return (f"#place(top + left, dx: {x - sh.MARGIN:.2f}pt, dy: {y - sh.MARGIN:.2f}pt, "
            f"{content})\n")


def _bubble(x: float, y: float, label: str, filled: bool) -> str:
    return _at(x - sh.RADIUS, y - sh.RADIUS, f"bubble({s(label)}, "
               f"{'true' if filled else 'false'})")


def _key_list_typst(p: Paper, conv: _Typst) -> str:
    w = p.w
    cells = [f"[#strong[{t(x)}]]" for x in (w["item"], w["answer"], w["points"], "id")]
    for fi, a in p.answers():
        cell = t(a.words.get(p.lang, ""))
        if isinstance(fi.item, Essay) and p.lang in fi.item.text:
            info = fi.item.text[p.lang].grader_info
            conv.source = p.bank.path_of(fi.item.id)
            if info:
                cell += f" #linebreak() #emph[{t(w['grader'] + ': ')}] {conv.md(info)}"
        cells += [f"[{t(str(fi.position))}]", f"[{cell}]", f"[{t(number(fi.item.points, p.lang))}]",
                  f"[{t(fi.item.id)}]"]
    return (f"#v(1em)#table(columns: (2.5em, 1fr, auto, auto), inset: 5pt, stroke: 0.4pt, "
            f"{', '.join(cells)})\n")


class _Typst:
    """Markdown -> Typst markup (through the HTML the exports use)."""

    def __init__(self, p: Paper, plain: bool, files: dict[str, bytes]) -> None:
        self.p = p
        self.plain = plain  # maths as TeX, images as their description
        self.files = files  # the images shown, by their name in Typst's root folder
        self.source: str | None = None  # the file of the item (or stimulus) being converted
        self.warnings: list[Diagnostic] = []

    def md(self, markdown: str) -> str:
        """Markdown as Typst markup. Maths comes as the MathML elements of the HTML (the TeX in
        their annotation), found by the Markdown parser; TeX that does not convert to MathML
        stays text, with a warning (lint reports it as MT001)."""
        if not self.plain:
            for span in find_maths(markdown):
                problem = tex_problem(span.tex)
                if problem is not None:
                    self._tex_warning(span.tex, problem)
        return "".join(self.node(n) for n in fragments(markdown, "mathml")).strip()

    def children(self, el: HtmlElement) -> str:
        out = [self.text(el.text or "")]
        for child in el:
            out.append(self.node(child))
        return "".join(out)

    def node(self, n: Any) -> str:
        if isinstance(n, str):
            return self.text(n)
        out = self.element(n)
        return out + self.text(n.tail or "")

    def element(self, el: HtmlElement) -> str:
        tag = el.tag if isinstance(el.tag, str) else ""
        inner = self.children
        match tag:
            case "p" | "div":
                return f"{inner(el)}\n\n"
            case "strong" | "b":
                return f"#strong[{inner(el)}]"
            case "em" | "i":
                return f"#emph[{inner(el)}]"
            case "code":
                return f"#raw({s(el.text_content())})"
            case "pre":
                return f"#raw(block: true, {s(el.text_content().rstrip(), lines=True)})\n\n"
            case "br":
                return "#linebreak()"
            case "sub":
                return f"#sub[{inner(el)}]"
            case "sup":
                return f"#super[{inner(el)}]"
            case "ul" | "ol":
                items = ", ".join(f"[{inner(li)}]" for li in el if li.tag == "li")
                fn = "list" if tag == "ul" else "enum"
                return f"#{fn}({items})\n\n" if items else ""
            case "table":
                rows = [r for r in el.iter("tr")]
                width = max((len(r) for r in rows), default=1)
                cells = []
                for r in rows:
                    for c in r:
                        body = inner(c)
                        cells.append(f"[#strong[{body}]]" if c.tag == "th" else f"[{body}]")
                    cells += ["[]"] * (width - len(r))
                return (f"#table(columns: {width}, inset: 4pt, stroke: 0.4pt, "
                        f"{', '.join(cells)})\n\n")
            case "img":
                return self.image(el.get("src") or "", el.get("alt") or "")
            case "math" | "m:math":  # MathML, as lxml's HTML parser names it
                tex = next((x.text or "" for x in el.iter() if isinstance(x.tag, str)
                            and x.tag.endswith("annotation")
                            and x.get("encoding") == TEX_ENCODING), el.text_content())
                return self.maths(tex, block=el.get("display") == "block")
            case _:
                return inner(el)

    def image(self, src: str, alt: str) -> str:
        """The image from the bank (a regular file beside the item, never through a link: see
        `markup.media`), or its description with a warning saying why not."""
        why = "is not a file in the bank"
        if self.plain:
            why = "could not be typeset"
        elif is_local_image(src):
            found = locate_image(src, self.source)
            if isinstance(found, str):
                why = found
            else:
                try:
                    data = read_print_image(found[1])
                except OSError as exc:
                    why = str(exc)
                else:
                    # a file of Typst's root, not a byte-array literal: the literal of a 20 MB
                    # image took 46 s and 3.6 GB to compile
                    name = f"img-{hashlib.sha256(data).hexdigest()[:24]}{_suffix(src)}"
                    self.files[name] = data
                    return f"#box(pic({s('/' + name)}, {s(alt)}))"
        self.warnings.append(Diagnostic(
            self.source or "", 0, 0, "", f"form {self.p.form.id}: the PDF shows image {src!r} "
            f"as its description: it {why}", severity=Severity.warning))
        shown = "[" + self.p.w["image"] + ": " + (alt or src) + "]"
        return f"#box(stroke: 0.5pt, inset: 3pt)[{t(shown)}]"

    def text(self, text: str) -> str:
        return t(text)

    def maths(self, tex: str, *, block: bool) -> str:
        if self.plain:
            return f"#raw({s(tex)})"
        typ = tex_to_typst(tex, display=block)
        if typ is None:
            self._tex_warning(tex, typst_problem(tex) or "")
            return f"#raw({s(tex)})"
        return f"$ {typ} $" if block else f"${typ}$"

    def _tex_warning(self, tex: str, why: str) -> None:
        self.warnings.append(Diagnostic(
            self.source or "", 0, 0, "", f"form {self.p.form.id}: the PDF prints the maths "
            f"{tex[:60]!r} as TeX source: {why}", severity=Severity.warning))


def compile_pdf(p: Paper) -> bytes:
    """The paper as PDF bytes (its warnings added to `p.warnings`; see `_pdf_assemble`)."""
    buf = io.BytesIO()
    p.warnings += PDF.write_state(p, buf)
    return buf.getvalue()


def _pdf_assemble(p: Paper, fragments: Fragments, out: BinaryIO) -> list[Diagnostic]:
    """The paper as PDF: its Typst markup (`_typst_source`) compiled. When Typst refuses the
    converted maths or an image, the maths is printed as its TeX source and images as their
    description instead (with a warning); other errors are bugs and raise. The images are
    files in a temporary root folder that Typst reads (the markup names them by a hash of
    their bytes: the PDF does not depend on the folder), and nothing outside it. One Typst
    compiler serves every paper of the process (`_typst`): its fonts are read once, not once
    a paper (the PDFs are the same bytes)."""
    import typst

    p.images = {}
    source, warnings = _typst_source(p, fragments, plain=False)
    files = p.images
    compiler = _typst()
    with tempfile.TemporaryDirectory(prefix="dpassess-typst-") as root:
        for name, content in files.items():
            (Path(root) / name).write_bytes(content)
        try:
            data = compiler.compile(input=source.encode("utf-8"), root=root)
        except typst.TypstError:
            warnings.append(Diagnostic(
                "", 0, 0, "", f"form {p.form.id} ({p.lang}): the PDF prints the maths as TeX "
                "source and images as their description (Typst could not typeset them)",
                severity=Severity.warning))
            p.images = {}
            plain, more = _typst_source(p, fragments, plain=True)
            warnings += more
            data = compiler.compile(input=plain.encode("utf-8"), root=root)
    assert isinstance(data, bytes), "a PDF compiled to no file is one document's bytes"
    out.write(data)
    return warnings


#: The printed paper as HTML: a writer on the exports' contract, whose state is the `Paper`.
HTML: Format[Paper] = Format(name="paper-html", folder="", suffix=".html", multi=False,
                             start=_no_collection, fragment=_html_fragment,
                             assemble=_html_assemble)
#: The printed paper as PDF (Typst): its context is `(plain,)` (see `_typst_fragment`).
PDF: Format[Paper] = Format(name="paper-pdf", folder="", suffix=".pdf", multi=False,
                            start=_no_collection, fragment=_typst_fragment,
                            assemble=_pdf_assemble)


#: This process's Typst compiler and the process it was made in (a forked child makes its own).
_COMPILER: tuple[int, Any] | None = None


def typst_started() -> bool:
    """Whether this process has made its Typst compiler (and so started Typst's threads)."""
    return _COMPILER is not None and _COMPILER[0] == os.getpid()


def _typst() -> Any:
    """One `typst.Compiler` per process, with Typst's own fonts only (never the system's: the
    PDFs are the same on every machine). Made on first use."""
    global _COMPILER
    import typst

    if _COMPILER is None or _COMPILER[0] != os.getpid():
        _COMPILER = (os.getpid(), typst.Compiler(ignore_system_fonts=True))
    return _COMPILER[1]


#: Largest image file put in a printed form, in bytes and in pixels (width x height, as its
#: header says): Typst decodes every image whole, about 4 bytes a pixel, once per paper. A larger
#: image is printed as its description, with a warning naming the item and the file.
MAX_PRINT_IMAGE_BYTES = 10 << 20
MAX_PRINT_IMAGE_PIXELS = 25_000_000


def read_print_image(path: Path) -> bytes:
    """The image file's bytes (`read_media`), or OSError saying why it is too large to print."""
    try:
        size = path.lstat().st_size
    except OSError:
        size = 0  # read_media says why
    if size > MAX_PRINT_IMAGE_BYTES:
        raise OSError(f"is {size:,} bytes; a printed form holds images up to "
                      f"{MAX_PRINT_IMAGE_BYTES:,} bytes (make it smaller)")
    data = read_media(path)
    if len(data) > MAX_PRINT_IMAGE_BYTES:
        raise OSError(f"is {len(data):,} bytes; a printed form holds images up to "
                      f"{MAX_PRINT_IMAGE_BYTES:,} bytes (make it smaller)")
    dims = pixel_size(data)
    if dims is not None and dims[0] * dims[1] > MAX_PRINT_IMAGE_PIXELS:
        raise OSError(f"is {dims[0]:,} x {dims[1]:,} pixels; a printed form holds images up "
                      f"to {MAX_PRINT_IMAGE_PIXELS:,} pixels (scale it down)")
    return data


def _suffix(src: str) -> str:
    """The image's extension as Typst reads it (lower case), or none."""
    ext = posixpath.splitext(src.split("#", 1)[0].split("?", 1)[0])[1].lower()
    return ext if re.fullmatch(r"\.[a-z0-9]{1,5}", ext) else ""
