"""A collection -> GIFT text, written so Moodle's GIFT importer (qformat_gift, 4.5) reads back
every text, key and grade unchanged.

Each question is one block: a `// [id:…] [tag:…]` comment line, then `::name::[html]stem{`, one
line per answer, `####` general feedback and `}`. Newlines inside texts are written as `\\n`, so a
block never holds a blank line or a line starting with `//` (Moodle would split or drop them), and
every GIFT special (`~ = # { } :` and the backslash) is escaped everywhere, HTML attributes
included. GIFT cannot carry files: each local image is reported and its link kept as written.
See docs/export-moodle.md.

A builder per item type writes its question's lines. `export(collection, lang)` returns the
file's bytes; `export(collection, lang, out)` writes the same bytes to the binary file `out` one
question at a time (bounded memory) and returns the warnings with empty data.
"""

from __future__ import annotations

import re
from typing import BinaryIO, assert_never

from dpassess.diagnostics import Diagnostic
from dpassess.export import MULTI as ALL_LANGUAGES
from dpassess.export import (
    Collection,
    Context,
    Format,
    Fragment,
    Fragments,
    Job,
    languages_of_items,
    nothing_to_export,
)
from dpassess.export.moodle.cloze import gap_item
from dpassess.export.moodle.images import local_files
from dpassess.export.moodle.texts import (
    ItemTexts,
    accepted_wordings,
    answer_grades,
    category_name,
    category_path,
    check_match,
    grades,
    multilang_glue,
    multilang_maths,
    number,
    premise_html,
    response_text,
)
from dpassess.markup.xmlchars import xml_safe
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
    TrueFalse,
)

NAME = "gift"

# qformat_gift::repchar, plus the backslash first: `\` `~` `=` `#` `{` `}` `:` and newlines.
_ESCAPES = (
    ("\\", "\\\\"), ("~", "\\~"), ("=", "\\="), ("#", "\\#"), ("{", "\\{"), ("}", "\\}"),
    (":", "\\:"), ("\n", "\\n"), ("\r", ""),
)
_SPECIAL = re.compile(r"[\\~=#{}:\n\r]")


def escape(text: str) -> str:
    """`text` with every GIFT special escaped and newlines as `\\n` (one line).

    One `str.replace` per special (the backslash first, so the added ones stay single): much
    faster than `str.translate`, whose multi-character replacements go through a dict per
    character."""
    if _SPECIAL.search(text) is None:
        return text
    for char, escaped in _ESCAPES:
        if char in text:
            text = text.replace(char, escaped)
    return text


def rich(html: str, *, inherit: bool = True) -> str:
    """An answer or feedback text. It inherits the question's `[html]` format, but says `[html]`
    itself when it starts with `[` (Moodle would read `[markdown]…` as a format) or `%` (Moodle
    would read `~%50% off` as a 50% grade), or when there is no format to inherit (`inherit`
    false: the question text is empty, and Moodle writes no `[html]` before an empty text)."""
    return ("" if inherit and html[:1] not in ("[", "%") else "[html]") + escape(html)


def _fragment(job: Job, item: Item, context: Context) -> Fragment:
    """The item's block in languages `context[0]` (a GIFT question reads no other file: it
    cannot embed one)."""
    (langs,) = context
    assert isinstance(langs, tuple)
    t = ItemTexts(NAME, job.collection, item, job.lang, langs)
    return Fragment("\n".join(_question(t, item)).encode("utf-8"), t.warnings)


def _assemble(job: Job, fragments: Fragments, out: BinaryIO) -> list[Diagnostic]:
    """The collection as one GIFT file in `lang` (or every language: `multi`), written to
    `out`; categories and the warnings about the whole file are written here, each question's
    block is its fragment."""
    collection, lang = job.collection, job.lang
    chosen = [(item, langs, notes) for item, (langs, notes)
              in zip(collection.items, languages_of_items(NAME, collection, lang), strict=True)]
    if lang != ALL_LANGUAGES and not any(langs for _, langs, _ in chosen):
        raise nothing_to_export(collection, lang)
    warnings = _run_warnings(collection, [item for item, langs, _ in chosen if langs])
    warnings += [collection.warning(
        NAME, item.id, "gaps", "a GIFT file of several languages cannot place a gap in each: "
        "left out of it; export one file per language")
        for item, langs, _ in chosen
        if isinstance(item, Cloze) and len(item.gaps) == 1 and len(langs) > 1]
    warnings += multilang_maths(NAME, collection, lang, fragments)
    topic, root = None, category_name(collection, lang)
    for item, langs, notes in chosen:
        warnings += notes
        if not langs or isinstance(item, Ordering) or (
                isinstance(item, Cloze) and (len(item.gaps) > 1 or len(langs) > 1)):
            continue
        if item.topic != topic:
            _write_block(out, [f"$CATEGORY: {category_path(root, item.topic)}"],
                         first=topic is None)
            topic = item.topic
        block = fragments(item, (langs,))
        out.write(b"\n\n")
        out.write(block.data)  # as it is: the runner notes where a fragment lies
        warnings += block.warnings
    out.write(b"\n")
    return warnings


def _run_warnings(collection: Collection, items: list[Item]) -> list[Diagnostic]:
    """The settings GIFT has no syntax for, said once for the file (shuffling kept off, Moodle's
    penalty and numbering), then each item left out (ordering questions, cloze questions of
    several gaps), at the item."""
    out = []
    fixed = [i.id for i in items if isinstance(i, SingleChoice | MultipleResponse | Matching)
             and not i.shuffle]
    if fixed:
        out.append(collection.warning(
            NAME, None, "shuffle",
            "GIFT cannot say to keep the answers in the order this file gives them: Moodle "
            "shuffles them or not by its default question settings, so that order is not kept "
            f"for {_listed(fixed)}; use Moodle XML to keep it"))
    settings = [i.id for i in items if i.lms is not None and i.lms.moodle is not None
                and (i.lms.moodle.penalty is not None or i.lms.moodle.answer_numbering is not None)]
    if settings:
        out.append(collection.warning(
            NAME, None, "lms.moodle",
            f"GIFT cannot carry Moodle's penalty or answer numbering ({_listed(settings)}): "
            "Moodle uses its defaults; use Moodle XML to keep them"))
    for i in items:
        if isinstance(i, Cloze) and len(i.gaps) > 1:
            out.append(collection.warning(
                NAME, i.id, "gaps",
                f"GIFT says a cloze question with one gap only: this one ({len(i.gaps)} gaps) is "
                "left out; use Moodle XML"))
        elif isinstance(i, Ordering):
            out.append(collection.warning(
                NAME, i.id, "type",
                "GIFT has no ordering questions: left out; use Moodle XML (Moodle 4.4 or later)"))
    return out


def _listed(ids: list[str]) -> str:
    """`ids` for a message: every one up to 10, then how many more."""
    shown = ", ".join(ids[:10])
    return shown + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")


def _write_block(out: BinaryIO, lines: list[str], *, first: bool) -> None:
    """A block of lines, after a blank line unless it is the file's first."""
    out.write((("" if first else "\n\n") + "\n".join(lines)).encode("utf-8"))


def _question(t: ItemTexts, item: Item) -> list[str]:
    """The item's block: the `// [id:…] [tag:…]` comment, then the question's lines."""
    comment = " ".join([f"[id:{item.id}]", *(f"[tag:{tag}]" for tag in item.tags)])
    q = _Question(t)
    match item:
        case SingleChoice():
            lines = _choice(q, item, single=True)
        case MultipleResponse():
            lines = _choice(q, item, single=False)
        case TrueFalse():
            lines = _true_false(q, item)
        case Numerical():
            lines = _numerical(q, item)
        case ShortAnswer():
            lines = _short_answer(q, item)
        case Matching():
            lines = _matching(q, item)
        case Essay():
            lines = _essay(q, item)
        case Ordering():  # left out (see _run_warnings)
            lines = []
        case Cloze():
            lines = _missing_word(t, item)
        case Description():
            lines = [f"::{escape(t.name())}::[html]{escape(q.check(t.stem(), 'stem'))}"]
        case _:
            assert_never(item)
    return [f"// {comment}", *lines]


class _Question:
    """What the builders of one question share: the item's texts, the head (name and stem up to
    the `{`) and the tail (the general feedback), and the checks of every text."""

    def __init__(self, t: ItemTexts) -> None:
        self.t, self.lang = t, t.lang
        lang = t.lang
        stem = self.check(t.stem(), f"text.{lang}.stem")
        self.inherit = bool(stem)  # answers inherit [html] from a non-empty stem
        name = self.plain(t.name(), f"text.{lang}.title")
        self.named = f"::{escape(name)}::"  # (an escaped name may end in `\:`: not a split)
        self.head = f"{self.named}{'[html]' if stem else ''}{escape(stem)}{{"
        general = self.check(t.explanation(), f"text.{lang}.explanation")
        self.tail = f"####{self.rich(general)}" if general else ""
        if t.item.points != 1:
            t.warn("points", f"GIFT cannot set the mark: Moodle gives 1, not {t.item.points:g}")

    def rich(self, html: str) -> str:
        return rich(html, inherit=self.inherit)

    def close(self, lines: list[str]) -> list[str]:
        """`lines` (the head and the answers) with the general feedback and the `}`."""
        if self.tail:
            lines.append(f"\t{self.tail}")
        lines.append("}")
        return lines

    def plain(self, text: str, field: str) -> str:
        """`text` without the characters XML cannot carry (Moodle keeps its questions in XML
        and HTML, where they cannot be), and a warning naming them."""
        text, removed = xml_safe(text)
        if removed:
            self.t.warn(field, f"removed characters XML cannot carry: {removed}")
        return text

    def check(self, html: str, field: str) -> str:
        """`html`, with a warning for what Moodle's GIFT reader would not read back."""
        html = self.plain(html, field)
        # escapedchar_pre/post use `&&058;`-style placeholders: a literal one would be decoded.
        if "&&0" in html:
            self.t.warn(field, "the text contains '&&0', which Moodle's GIFT reader decodes as "
                               "an escaped character")
        for image, src in local_files(html) if self.t.may_show_images else ():
            self.t.warn(field, f"GIFT cannot embed {'image ' if image else 'linked '}files: "
                               f"upload {src} to Moodle and fix the link, or use Moodle XML")
        return html


def _choice(q: _Question, item: ChoiceBase, *, single: bool) -> list[str]:
    """One answer per line: `=` marks the key of a single-choice item (`single`); otherwise
    every answer carries its grade as `~%n%`, because one `=` makes Moodle's question
    single-answer."""
    t, lang = q.t, q.lang
    g = grades(item, t.warn)
    t.check_locked(item)
    lines = [q.head]
    for oid in item.option_ids:
        grade = g.by_option[oid]
        mark = "=" if single and grade == 1 else ("~" if grade == 0 else f"~%{g.percent(oid)}%")
        text = q.check(t.option(item, oid), f"text.{lang}.options.{oid}")
        feedback = q.check(t.feedback(oid), f"text.{lang}.feedback.{oid}")
        lines.append(f"\t{mark}{q.rich(text)}" + (f"#{q.rich(feedback)}" if feedback else ""))
    if q.tail:
        lines.append(f"\t{q.tail}")
    lines.append("}")
    return lines


def _missing_word(t: ItemTexts, item: Cloze) -> list[str]:
    """A cloze item with one gap, in GIFT's missing-word form (`text before {answers} text
    after`): the gap's answers written as the question of the gap's kind would write them."""
    gap = item.gaps[0]
    lang = t.langs[0]
    try:
        one = gap_item(item, gap.id)
    except ValueError as exc:  # pydantic's ValidationError: e.g. a choice gap of one option
        t.warn(f"gaps.{gap.id}", f"GIFT cannot write this gap as a question: {exc}; left out")
        return []
    gt = ItemTexts(NAME, t.collection, one, t.lang, t.langs)
    q = _Question(gt)
    match one:
        case SingleChoice():
            lines = _choice(q, one, single=True)
        case MultipleResponse():
            lines = _choice(q, one, single=False)
        case Numerical():
            lines = _numerical(q, one)
        case ShortAnswer():
            lines = _short_answer(q, one)
        case _:
            raise AssertionError(one.type)
    t.warnings += gt.warnings
    marker = f"[[{gap.id}]]"
    # the cloze's own name (a name made from the stem shows the gap as a blank)
    assert lines[0].startswith(q.named)
    head = f"::{escape(t.name())}::" + lines[0][len(q.named):]
    if head.rsplit("::", 1)[-1].count(marker) != 1:  # in the stem (the name may show it too)
        t.warn(f"text.{lang}.stem", f"the gap {marker} is not in the stem as written (inside "
                                    "code or a link?): GIFT's question has its answers last")
        return lines
    before, after = head.rsplit(marker, 1)
    # `head` ends in `{` (and, for numerical, `#`): what follows the gap moves after the `}`
    opener = "{#" if head.endswith("{#") else "{"
    after = after[: -len(opener)]
    lines[0] = before + opener
    lines[-1] += after
    return lines


def _true_false(q: _Question, item: TrueFalse) -> list[str]:
    """`{TRUE#feedback if wrong#feedback if right}` (or FALSE), as qformat_gift::writequestion
    writes it."""
    t, lang = q.t, q.lang
    grades(item, t.warn)
    t.check_true_false_words(item)
    right = item.key[0]
    wrong = "false" if right == "true" else "true"
    if_right = q.check(t.feedback(right), f"text.{lang}.feedback.{right}")
    if_wrong = q.check(t.feedback(wrong), f"text.{lang}.feedback.{wrong}")
    answer = right.upper()
    if if_wrong or if_right:
        answer += f"#{q.rich(if_wrong)}" if if_wrong else "#"
    if if_right:
        answer += f"#{q.rich(if_right)}"
    return [f"{q.head}{answer}{q.tail}}}"]


def _numerical(q: _Question, item: Numerical) -> list[str]:
    """`{#` then one answer per line, `=%n%value:tolerance` or `=%n%min..max`, with its
    feedback (Moodle's GIFT writer always gives the grade); the answer for any other number
    last, `~#feedback`, as Moodle writes its `*` answer."""
    t, lang = q.t, q.lang
    g = answer_grades(tuple((a.id, a.fraction) for a in item.answers), t.warn)
    if item.units:
        t.warn("units", "GIFT cannot carry units: Moodle reads the question without them, so "
                        "a response with a unit is not accepted; use Moodle XML")
    lines = [q.head + "#"]
    for a in item.answers:
        feedback = q.check(t.feedback(a.id), f"text.{lang}.feedback.{a.id}")
        if a.any_other:  # last; Moodle's GIFT reader makes it a `*` answer worth 0
            lines.append(f"\t~#{q.rich(feedback)}")
            continue
        if a.value is not None:
            number_ = f"{number(a.value)}:{number(a.tolerance)}"
        else:
            assert a.min is not None and a.max is not None
            number_ = f"{number(a.min)}..{number(a.max)}"
        lines.append(f"\t=%{g.percent(a.id)}%{number_}"
                     + (f"#{q.rich(feedback)}" if feedback else ""))
    return q.close(lines)


def _short_answer(q: _Question, item: ShortAnswer) -> list[str]:
    """One accepted wording per line, `=%n%wording#feedback`; every language's wordings in a
    file of several. The answers hold `=`, so a `->` anywhere in them would make Moodle read a
    matching question: feedback writes it `-&gt;`, and a wording holding it is left out."""
    t, lang = q.t, q.lang
    g = answer_grades(tuple((a.id, a.fraction) for a in item.answers), t.warn)
    if item.case_sensitive:
        t.warn("case_sensitive", "GIFT cannot say that case matters: Moodle compares the "
                                 "answers case-insensitively; use Moodle XML")
    lines = [q.head]
    for aid, wording in accepted_wordings(t, item):
        if "->" in wording:
            t.warn(f"text.{lang}.answers.{aid}",
                   f"{wording!r} holds '->', which makes Moodle read the question as matching: "
                   "left out of the GIFT file (use Moodle XML)")
            continue
        feedback = q.check(t.feedback(aid), f"text.{lang}.feedback.{aid}").replace("->", "-&gt;")
        wording = q.plain(wording, f"text.{lang}.answers.{aid}")
        text = ("[moodle]" if wording.startswith("[") else "") + escape(wording)
        lines.append(f"\t=%{g.percent(aid)}%{text}" + (f"#{q.rich(feedback)}" if feedback else ""))
    return q.close(lines)


def _matching(q: _Question, item: Matching) -> list[str]:
    """`=premise -> response` per pair, `= -> response` per extra response (Moodle keeps a
    subquestion without text as a distractor). The first `->` ends the premise, so one inside
    the premise's HTML is written `-&gt;`; the response is plain text, as Moodle stores it."""
    t, lang = q.t, q.lang
    check_match(t, item)  # shuffling: said once for the file (_run_warnings)
    lines = [q.head]
    for rid in item.response_ids:
        premise = ""
        if rid in item.pairs:
            html = premise_html(t, item, rid)
            premise = q.rich(q.check(html, f"text.{lang}.premises.{rid}").replace("->", "-&gt;"))
        response = q.plain(response_text(t, item, rid), f"text.{lang}.responses.{rid}")
        lines.append(f"\t={premise} -> {escape(response)}")
    return q.close(lines)


def _essay(q: _Question, item: Essay) -> list[str]:
    """`{}` (with the general feedback inside): GIFT has nothing else for an essay, so the
    response settings, the grader's guide and the template are reported, once, if set."""
    t = q.t
    lost = [name for name, lost in (
        ("response_format", item.response_format != "editor"),
        ("response_required", not item.response_required),
        ("lines", item.lines != 15),
        ("min_words", item.min_words is not None),
        ("max_words", item.max_words is not None),
        ("grader_info", any(item.text[la].grader_info for la in t.langs)),
        ("response_template", any(item.text[la].response_template for la in t.langs)),
    ) if lost]
    if lost:
        t.warn(lost[0], f"GIFT cannot carry an essay's {', '.join(lost)}: Moodle uses an "
                        "editor of 15 lines, a response required, no word limits, no grader "
                        "information and no template; use Moodle XML")
    return [f"{q.head}{q.tail}}}"]


def _glue(job: Job, item: Item, fragments: Fragments) -> object:
    """What the file's own parts read of `item` (`Format.glue`): besides what a Moodle XML
    file's read (`multilang_glue`), its type, gaps, shuffling and Moodle settings (which
    questions are left out, the warnings of the settings GIFT cannot carry)."""
    moodle = item.lms.moodle if item.lms is not None else None
    return (*multilang_glue(job.collection, item, job.lang, fragments), type(item).__name__,
            len(item.gaps) if isinstance(item, Cloze) else None,
            item.shuffle if isinstance(item, SingleChoice | MultipleResponse | Matching) else None,
            moodle is not None and (moodle.penalty is not None
                                    or moodle.answer_numbering is not None))


#: The format: one GIFT text file per language, and one of every language (`multi`).
FORMAT = Format(NAME, folder="gift", suffix=".txt", multi=True, start=Job, fragment=_fragment,
                assemble=_assemble, glue=_glue)
export = FORMAT.export
