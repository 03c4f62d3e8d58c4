"""A collection -> GIFT text, written so Moodle's GIFT importer (qformat_gift, 4.5) reads back
every text, key and grade unchanged.

Each question is one block: a `// [id:…] [tag:…]` comment line, then `::name::[html]stem{`, one
line per answer, `####` general feedback and `}`. Newlines inside texts are written as `\\n`, so a
block never holds a blank line or a line starting with `//` (Moodle would split or drop them), and
every GIFT special (`~ = # { } :` and the backslash) is escaped everywhere, HTML attributes
included. GIFT cannot carry files: each local image is reported and its link kept as written.
See docs/export-moodle.md.

`export(collection, lang)` returns the file's bytes; `export(collection, lang, out)` writes the
same bytes to the binary file `out` a few hundred questions at a time (bounded memory) and
returns the warnings with empty data.
"""

from __future__ import annotations

import io
import re
from typing import BinaryIO, assert_never

from dpassess.export import Collection, ExportResult, ExportWarning
from dpassess.export.moodle.texts import ItemTexts, category_path, grades, local_images
from dpassess.markup.media import may_show_images
from dpassess.model import Item, ItemType

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


#: Blocks joined and written to the file at a time.
_CHUNK = 256


class _Writer:
    """Writes blocks (lists of lines) to `out`, a blank line between blocks."""

    def __init__(self, collection: Collection, lang: str, out: BinaryIO) -> None:
        self.collection = collection
        self.lang = lang
        self.warnings: list[ExportWarning] = []
        self.out = out
        self.pending: list[str] = []
        self.started = False
        self.images = False  # whether the question being written may show images

    def block(self, lines: list[str]) -> None:
        self.pending.append(("\n\n" if self.started else "") + "\n".join(lines))
        self.started = True
        if len(self.pending) >= _CHUNK:
            self.flush()

    def flush(self) -> None:
        self.out.write("".join(self.pending).encode("utf-8"))
        self.pending.clear()

    def check(self, t: ItemTexts, html: str, where: str) -> str:
        # escapedchar_pre/post use `&&058;`-style placeholders: a literal one would be decoded.
        if "&&0" in html:
            t.warn(where, "the text contains '&&0', which Moodle's GIFT reader decodes as an "
                          "escaped character")
        if self.images:
            for src in local_images(html):
                t.warn(where, f"GIFT cannot embed image files: upload {src} to Moodle and fix "
                              "the link, or use Moodle XML")
        return html

    def question(self, item: Item) -> None:
        t = ItemTexts(FORMAT, self.collection, item, self.lang)
        self.images = may_show_images(item, t.langs)
        lang = self.lang
        comment = " ".join([f"[id:{item.id}]", *(f"[tag:{tag}]" for tag in item.tags)])
        stem = self.check(t, t.stem(), f"text.{lang}.stem")
        head = f"::{escape(t.name())}::{'[html]' if stem else ''}{escape(stem)}{{"

        def r(html: str) -> str:
            return rich(html, inherit=bool(stem))

        general = self.check(t, t.explanation(), f"text.{lang}.explanation")
        tail = f"####{r(general)}" if general else ""
        if item.points != 1:
            t.warn("points", f"GIFT cannot set the mark: Moodle gives 1, not {item.points:g}")
        g = grades(item, t.warn)
        match item.type:
            case ItemType.true_false:
                t.check_true_false_words()
                right = item.key[0]
                wrong = "false" if right == "true" else "true"
                fb_right = self.check(t, t.feedback(right), f"text.{lang}.feedback.{right}")
                fb_wrong = self.check(t, t.feedback(wrong), f"text.{lang}.feedback.{wrong}")
                # {TRUE#feedback if wrong#feedback if right} (qformat_gift::writequestion).
                answer = right.upper()
                if fb_wrong or fb_right:
                    answer += f"#{r(fb_wrong)}" if fb_wrong else "#"
                if fb_right:
                    answer += f"#{r(fb_right)}"
                lines = [f"{head}{answer}{tail}}}"]
            case ItemType.single_choice | ItemType.multiple_response:
                t.check_locked()
                single = item.type is ItemType.single_choice
                lines = [head]
                for oid in item.option_ids:
                    grade = g.by_option[oid]
                    # `=` makes Moodle's question single-answer, so multiple-response items
                    # write every grade as ~%n%, full marks included.
                    mark = "=" if single and grade == 1 else (
                        "~" if grade == 0 else f"~%{g.percent(oid)}%")
                    text = self.check(t, t.option(oid), f"text.{lang}.options.{oid}")
                    fb = self.check(t, t.feedback(oid), f"text.{lang}.feedback.{oid}")
                    lines.append(f"\t{mark}{r(text)}" + (f"#{r(fb)}" if fb else ""))
                if tail:
                    lines.append(f"\t{tail}")
                lines.append("}")
            case _ as unreachable:
                assert_never(unreachable)
        self.block([f"// {comment}", *lines])
        self.warnings.extend(t.warnings)


def export(collection: Collection, lang: str, out: BinaryIO | None = None) -> ExportResult:
    """The collection as one GIFT file in `lang` (or every language: `multi`): its bytes, or
    written to `out` (then `data` is empty)."""
    if out is None:
        buf = io.BytesIO()
        warnings = export(collection, lang, buf).warnings
        return ExportResult(buf.getvalue(), warnings)
    fixed = [i.id for i in collection.items if not i.shuffle]
    w = _Writer(collection, lang, out)
    w.warnings.append(ExportWarning(
        FORMAT, None, "shuffle",
        "GIFT cannot set shuffling or answer numbering: Moodle applies the site defaults"
        + (f" (items with shuffle: false: {', '.join(fixed)})" if fixed else "")))
    topic = None
    for item in collection.items:
        if item.topic != topic:
            topic = item.topic
            w.block([f"$CATEGORY: {category_path(collection, topic)}"])
        w.question(item)
    w.pending.append("\n")
    w.flush()
    return ExportResult(b"", w.warnings)
