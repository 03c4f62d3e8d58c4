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

import io
import re
from typing import BinaryIO, assert_never

from dpassess.export import MULTI as ALL_LANGUAGES
from dpassess.export import (
    Collection,
    ExportResult,
    check_lang,
    exported_languages,
    nothing_to_export,
)
from dpassess.export.moodle.images import local_images
from dpassess.export.moodle.texts import ItemTexts, category_path, grades
from dpassess.model import ChoiceBase, Item, MultipleResponse, SingleChoice, TrueFalse

SUFFIX = ".txt"
MULTI = True  # supports lang="multi" (Moodle's multilang filter form)
FORMAT = "gift"

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


def export(collection: Collection, lang: str, out: BinaryIO | None = None) -> ExportResult:
    """The collection as one GIFT file in `lang` (or every language: `multi`): its bytes, or
    written to `out` (then `data` is empty)."""
    check_lang(FORMAT, collection, lang, multi=MULTI)
    if out is None:
        buf = io.BytesIO()
        warnings = export(collection, lang, buf).warnings
        return ExportResult(buf.getvalue(), warnings)
    chosen = [(item, *exported_languages(FORMAT, collection, item, lang))
              for item in collection.items]
    if lang != ALL_LANGUAGES and not any(langs for _, langs, _ in chosen):
        raise nothing_to_export(collection, lang)
    fixed = [item.id for item, langs, _ in chosen if langs and not item.shuffle]
    warnings = [collection.warning(
        FORMAT, None, "shuffle",
        "GIFT cannot set shuffling or answer numbering: Moodle applies the site defaults"
        + (f" (items with shuffle: false: {', '.join(fixed)})" if fixed else ""))]
    topic = None
    for item, langs, notes in chosen:
        warnings += notes
        if not langs:
            continue
        if item.topic != topic:
            _write_block(out, [f"$CATEGORY: {category_path(collection, item.topic)}"],
                         first=topic is None)
            topic = item.topic
        t = ItemTexts(FORMAT, collection, item, lang, langs)
        _write_block(out, _question(t, item), first=False)
        warnings += t.warnings
    out.write(b"\n")
    return ExportResult(b"", warnings)


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
        self.head = f"::{escape(t.name())}::{'[html]' if stem else ''}{escape(stem)}{{"
        general = self.check(t.explanation(), f"text.{lang}.explanation")
        self.tail = f"####{self.rich(general)}" if general else ""
        if t.item.points != 1:
            t.warn("points", f"GIFT cannot set the mark: Moodle gives 1, not {t.item.points:g}")

    def rich(self, html: str) -> str:
        return rich(html, inherit=self.inherit)

    def check(self, html: str, field: str) -> str:
        """`html`, with a warning for what Moodle's GIFT reader would not read back."""
        # escapedchar_pre/post use `&&058;`-style placeholders: a literal one would be decoded.
        if "&&0" in html:
            self.t.warn(field, "the text contains '&&0', which Moodle's GIFT reader decodes as "
                               "an escaped character")
        for src in local_images(html) if self.t.may_show_images else ():
            self.t.warn(field, f"GIFT cannot embed image files: upload {src} to Moodle and fix "
                               "the link, or use Moodle XML")
        return html


def _choice(q: _Question, item: ChoiceBase, *, single: bool) -> list[str]:
    """One answer per line: `=` marks the key of a single-choice item (`single`); otherwise
    every answer carries its grade as `~%n%`, because one `=` makes Moodle's question
    single-answer."""
    t, lang = q.t, q.lang
    g = grades(item, t.warn)
    t.check_locked()
    lines = [q.head]
    for oid in item.option_ids:
        grade = g.by_option[oid]
        mark = "=" if single and grade == 1 else ("~" if grade == 0 else f"~%{g.percent(oid)}%")
        text = q.check(t.option(oid), f"text.{lang}.options.{oid}")
        feedback = q.check(t.feedback(oid), f"text.{lang}.feedback.{oid}")
        lines.append(f"\t{mark}{q.rich(text)}" + (f"#{q.rich(feedback)}" if feedback else ""))
    if q.tail:
        lines.append(f"\t{q.tail}")
    lines.append("}")
    return lines


def _true_false(q: _Question, item: TrueFalse) -> list[str]:
    """`{TRUE#feedback if wrong#feedback if right}` (or FALSE), as qformat_gift::writequestion
    writes it."""
    t, lang = q.t, q.lang
    grades(item, t.warn)
    t.check_true_false_words()
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
