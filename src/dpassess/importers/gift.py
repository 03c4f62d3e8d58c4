"""GIFT text -> items, read the way Moodle's own `qformat_gift::readquestion` reads it (4.5).

Questions are separated by blank lines; lines starting with `//` are comments (`// [id:…]
[tag:…]` give the idnumber and tags); `$CATEGORY:` sets the category of the questions that follow;
`::name::` names a question; `[html]`, `[moodle]`, `[plain]` and `[markdown]` set a text's format;
`\\` escapes `~ = # { } :` and `\\n` is a newline. Multiple choice (`=` right, `~` wrong, `~%50%`
weighted, `#` feedback, `####` general feedback) and true/false (`{T}`, `{FALSE#wrong#right}`)
become `questions.Question`s, which `questions.Builder` makes into items; every other question
type is skipped with its line and the reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from dpassess.importers.common import ImportResult, Skip, check_size, php_trim
from dpassess.importers.moodle_text import label
from dpassess.importers.questions import (
    MISSING_WORD_GAP,
    Answer,
    Builder,
    Pair,
    Question,
    Text,
)
from dpassess.importers.safe import decode_utf8
from dpassess.model import ItemType

CODE = "gift"

# qformat_gift::escapedchar_pre / escapedchar_post
_ESCAPED = {"\\:": "&&058;", "\\#": "&&035;", "\\=": "&&061;", "\\{": "&&123;", "\\}": "&&125;",
            "\\~": "&&126;", "\\n": "&&010"}
_PRE = re.compile("|".join(re.escape(k) for k in _ESCAPED))
_POST = {v: k[1] if k != "\\n" else "\n" for k, v in _ESCAPED.items()}
_POST_RE = re.compile("|".join(re.escape(k) for k in _POST))
_FORMATS = {"moodle": "moodle", "html": "html", "plain": "plain", "markdown": "markdown"}
_WEIGHT = re.compile(r"%-*([0-9]{1,2})\.?([0-9]*)%")
#: Characters an `[id:…]` / `[tag:…]` comment cannot hold (besides an unescaped `]`).
_NOT_IN_ID = frozenset(chr(c) for c in (*range(0x20), 0x7f))
_NOT_IN_TAG = _NOT_IN_ID | frozenset("<>`")
#: The content of such a comment up to its `]` (or a banned character): other characters,
#: `\]` pairs and lone backslashes; the three never overlap, so nothing backtracks.
_RUNS = {chars: re.compile(r"(?:[^" + re.escape("]\\" + "".join(sorted(chars)))
                           + r"]+|\\]|\\(?!]))*")
         for chars in (_NOT_IN_ID, _NOT_IN_TAG)}
_TRUE_FALSE = ("T", "TRUE", "F", "FALSE")


def _bracketed(text: str, opener: str, banned: frozenset[str], *, nonempty: bool = False
               ) -> list[str]:
    r"""What `re.findall(opener + r"((?:\]|[^\]<banned>])*)]")` finds (`+` for `*` if
    `nonempty`: then only the first match), in linear time: that expression backtracks from
    each opener to the end of the text when no `]` closes it (quadratic on a hostile comment).

    From an opener the content runs to the first `]` not escaped as `\]`; where a banned
    character (or the end) comes first, the expression backtracks to the last `\]` seen,
    whose `\` then ends the content; with none, nothing starts before that point either."""
    out: list[str] = []
    at = 0
    while (start := text.find(opener, at)) != -1:
        begin = start + len(opener)
        m = _RUNS[banned].match(text, begin)
        i = m.end() if m else begin
        escape = text.rfind("\\]", begin, i)
        last_escape = escape + 1 if escape != -1 else -1
        if i < len(text) and text[i] == "]" and not (nonempty and i == start + len(opener)):
            out.append(text[start + len(opener):i])
            at = i + 1
        elif last_escape != -1:
            out.append(text[start + len(opener):last_escape])
            at = last_escape + 1
        else:
            at = max(i, start + 1)
        if nonempty and out:
            break
    return out


def _pre(text: str) -> str:
    text = text.replace("\\\\", "&&092;")
    text = _PRE.sub(lambda m: _ESCAPED[m[0]], text)
    return text.replace("&&092;", "\\")


def _post(text: str) -> str:
    return _POST_RE.sub(lambda m: _POST[m[0]], text)


def _php_empty(text: str) -> bool:
    return text in ("", "0")


def _split(answers: str, sep: str) -> list[str]:
    """explode(sep) with the first part dropped when it trims to PHP's empty, each trimmed."""
    parts = answers.split(sep)
    parts[0] = php_trim(parts[0])
    if _php_empty(parts[0]):
        parts.pop(0)
    return [php_trim(p) for p in parts]


def _weight(part: str, default: float) -> tuple[float, str]:
    """qformat_gift::answerweightparser: a leading `%50%` (or `default`) and the rest."""
    if not _WEIGHT.match(part):
        return default, part
    body = part[1:]
    end = body.find("%")
    raw = body[:end]
    try:
        return float(raw) / 100, body[end + 1:]
    except ValueError:
        raise Skip(f"answer weight %{raw}% is not a number") from None


def _comment(part: str, fmt: str) -> tuple[Text, Text]:
    """qformat_gift::commentparser: the answer and its feedback (after the first `#`)."""
    bits = part.split("#", 1)
    feedback = _text(php_trim(bits[1]), fmt) if len(bits) > 1 else Text("", fmt)
    return _text(php_trim(bits[0]), fmt), feedback


def _text(text: str, default: str) -> Text:
    """qformat_gift::parse_text_with_format: a leading `[format]` sets the format."""
    fmt = default
    if text.startswith("["):
        end = text.find("]")
        # PHP: substr($text, 1, false - 1) when there is no `]`
        name = text[1:end] if end != -1 else text[1:-1]
        if name in _FORMATS:
            fmt = _FORMATS[name]
            text = text[end + 1:] if end != -1 else text[1:]
    return Text(php_trim(_post(text)), fmt)


def _name(text: str) -> tuple[str, str]:
    """A leading `::name::` (the question's name) and the text after it."""
    if text.startswith("::"):
        end = text.find("::", 2)
        if end != -1:
            return php_trim(_post(text[2:end])), php_trim(text[end + 2:])
        return "", text[2:]
    return "", text


def _lines(text: str) -> list[str]:
    """file(): lines split at LF; a file with CR alone (classic Mac) is split at CR."""
    first = text.split("\n", 1)[0]
    if "\r" in first and "\n" not in text:
        return text.split("\r")
    return text.split("\n")


def _blocks(lines: list[str]) -> Iterator[tuple[int, list[str]]]:
    """qformat_default::readquestions: (first line number, trimmed lines) per question; a line
    that trims to nothing (or to "0": PHP's empty()) ends a question."""
    block: list[str] = []
    start = 0
    for n, line in enumerate(lines, 1):
        line = php_trim(line)
        if _php_empty(line):
            if block:
                yield start, block
            block = []
        else:
            if not block:
                start = n
            block.append(line)
    if block:
        yield start, block


def _braces_taken(text: str, start: int, finish: int) -> str:
    """What GIFT did with a question holding more than one pair of braces: the first `{`
    and the first `}` after it are the answers, whatever they were meant to be (TeX's
    `{,}`, a set), and the rest stays in the text."""
    taken = _post(text[start:finish + 1])
    before, after = _post(text[:start]), _post(text[finish + 1:])
    reads = " ".join(f"{'…' if len(before) > 20 else ''}{before[-20:]}{after[:30]}"
                     f"{'…' if len(after) > 30 else ''}".split())
    return (f"GIFT took '{taken}' as the answers (the first {{ and the next }}) and the text "
            f"around it now reads '{reads}': a brace meant as text or maths is written \\{{ "
            f"and \\}} in GIFT")


class _Reader:
    def __init__(self, builder: Builder) -> None:
        self.b = builder
        self.lead = 0

    def block(self, start: int, lines: list[str]) -> None:
        comments = "".join(line + "\n" for line in lines if line.startswith("//"))
        joined = "\n".join(" " if line.startswith("//") else line for line in lines)
        text = php_trim(joined)
        if not text:
            return
        # lines before the text (comments): the brace warning names the line of its brace
        self.lead = joined[:joined.find(text[0])].count("\n")
        text = _pre(text)
        if text.startswith("$CATEGORY:"):
            category = php_trim(text[10:])
            if "\n" in category:
                category = category.split("\n", 1)[0]
                self.b.skip("text after $CATEGORY: in the same block (Moodle reads it as part of "
                            "the category name): put a blank line after it", line=start)
            self.b.category(_post(php_trim(category)), line=start)
            return
        name, text = _name(text)
        try:
            question = self.question(start, name, text, comments)
        except Skip as exc:
            self.b.skip(str(exc), line=start, item=label(name))
            return
        self.b.question(question)

    def question(self, line: int, name: str, text: str, comments: str) -> Question:
        start, finish = text.find("{"), text.find("}")
        if start == -1 and finish == -1:  # no answers: a description (text only)
            idnumber, tags = self.id_and_tags(comments)
            return Question(line, ItemType.description, name, _text(text, "moodle"), Text(), [],
                            idnumber, tags)
        if start == -1 or finish == -1:
            raise Skip("missing " + ("{" if start == -1 else "}") + " around the answers")
        if finish < start:
            raise Skip("} comes before { (escape a literal brace as \\} )")
        answers = php_trim(text[start + 1:finish])
        after = text[finish + 1:]
        if "::" in after:
            self.b.warn("text after the answers holds '::': is a blank line missing before the "
                        "next question? (Moodle reads the rest as part of this one)",
                        line=line, item=label(name))
        elif "{" in after or "}" in after:
            self.b.warn(_braces_taken(text, start, finish), line=line + self.lead + text[:start].count("\n"),
                        item=label(name))
        missing_word = not text.endswith("}")
        if not missing_word:
            stem_text = text[:start] + text[finish + 1:]
        else:  # the missing-word format: a cloze gap where the answers were (Moodle: _____)
            stem_text = text[:start] + f"[[{MISSING_WORD_GAP}]]" + text[finish + 1:]
        general = ""
        gf = answers.rfind("####")
        if gf != -1:
            general = answers[gf + 4:]
            answers = php_trim(answers[:gf])
        stem = _text(stem_text, "moodle")
        idnumber, tags = self.id_and_tags(comments)

        def made(kind: ItemType, choices: list[Answer]) -> Question:
            return Question(line, kind, name, stem, _text(general, stem.format), choices,
                            idnumber, tags, missing_word=missing_word)

        if answers == "":
            return made(ItemType.essay, [])
        if answers[0] == "#":
            return made(ItemType.numerical, self.numerical(answers[1:], stem.format))
        if "~" in answers:
            return made(*self.multichoice(answers, stem.format))
        if "=" in answers and "->" in answers:
            question = made(ItemType.matching, [])
            question.pairs = self.matching(answers, stem.format)
            return question
        check = answers
        if answers.find("#") > 0:
            check = php_trim(answers[:answers.find("#")])
        if check not in _TRUE_FALSE:
            return made(ItemType.short_answer, self.short_answer(answers, stem.format))
        return made(ItemType.true_false, self.truefalse(answers, stem.format))

    @staticmethod
    def id_and_tags(comments: str) -> tuple[str, list[str]]:
        """qformat_gift::extract_idnumber_and_tags_from_comment."""
        ids = _bracketed(comments, "[id:", _NOT_IN_ID, nonempty=True)
        idnumber = php_trim(ids[0]).replace("\\]", "]") if ids else ""
        tags = [php_trim(t).replace("\\]", "]")
                for t in _bracketed(comments, "[tag:", _NOT_IN_TAG)]
        return idnumber, tags

    @staticmethod
    def numerical(answers: str, fmt: str) -> list[Answer]:
        """`{#=%50%3:1 =2..4#feedback ~#wrong}`: value:tolerance or min..max per answer; what
        follows `~` is the feedback for any other number (Moodle's `*` answer)."""
        wrong = ""
        if (pos := answers.find("~")) != -1:
            answers, wrong = answers[:pos], answers[pos:]
        out = []
        for part in _split(answers, "="):
            weight, part = _weight(part, 1.0)
            text, feedback = _comment(part, fmt)
            raw = text.text
            if raw.find("..") > 0:
                low, high = raw.split("..", 1)
                out.append(Answer(Text("", fmt), weight, feedback,
                                  range=(php_trim(low), php_trim(high))))
            elif raw.find(":") > 0:
                value, tolerance = raw.split(":", 1)
                out.append(Answer(Text(php_trim(value), fmt), weight, feedback,
                                  tolerance=php_trim(tolerance)))
            else:
                out.append(Answer(text, weight, feedback))
        if not out:
            raise Skip("a numerical question needs at least one answer")
        if wrong:
            out.append(Answer(Text("*", fmt), 0.0, _comment(wrong, fmt)[1]))
        return out

    @staticmethod
    def short_answer(answers: str, fmt: str) -> list[Answer]:
        """`{=Paris =%50%paris#feedback}`: every answer is right unless weighted."""
        out = []
        for part in _split(answers, "="):
            weight, part = _weight(part, 1.0)
            text, feedback = _comment(part, fmt)
            out.append(Answer(text, weight, feedback))
        if not out:
            raise Skip("a short-answer question needs at least one answer")
        return out

    @staticmethod
    def matching(answers: str, fmt: str) -> list[Pair]:
        """`{=premise -> answer =-> distractor}`: the premise ends at the first `->`."""
        parts = _split(answers, "=")
        if len(parts) < 2:
            raise Skip("a matching question needs at least two pairs")
        out = []
        for part in parts:
            marker = part.find("->")
            if marker == -1:
                raise Skip(f"matching answer {_post(part)!r} has no '->'")
            out.append(Pair(_text(part[:marker], fmt), php_trim(_post(part[marker + 2:]))))
        return out

    @staticmethod
    def multichoice(answers: str, fmt: str) -> tuple[ItemType, list[Answer]]:
        """With an `=` answer: single choice; only `~` answers (weighted): multiple response."""
        kind = ItemType.single_choice if "=" in answers else ItemType.multiple_response
        parts = answers.replace("=", "~=").split("~")
        parts[0] = php_trim(parts[0])
        if _php_empty(parts[0]):
            parts.pop(0)
        if len(parts) < 2:
            raise Skip("a multiple-choice question needs at least two answers")
        out = []
        for part in parts:
            part = php_trim(part)
            if part.startswith("="):
                weight, part = 1.0, part[1:]
            else:
                weight, part = _weight(part, 0.0)
            text, feedback = _comment(php_trim(part), fmt)
            out.append(Answer(text, weight, feedback))
        return kind, out

    @staticmethod
    def truefalse(answers: str, fmt: str) -> list[Answer]:
        """`{TRUE#feedback if wrong#feedback if right}` (qformat_gift::split_truefalse_comment)."""
        bits = answers.split("#", 2)
        word = _text(php_trim(bits[0]), fmt).text
        wrong = _text(php_trim(bits[1]), fmt) if len(bits) > 1 else Text("", fmt)
        right = _text(php_trim(bits[2]), fmt) if len(bits) > 2 else Text("", fmt)
        if word in ("T", "TRUE"):
            return [Answer(Text("true"), 1.0, right), Answer(Text("false"), 0.0, wrong)]
        return [Answer(Text("true"), 0.0, wrong), Answer(Text("false"), 1.0, right)]


def read(data: bytes, name: str, lang: str | None, *,
         true_false_words: Mapping[str, tuple[str, str]] | None = None) -> ImportResult:
    """A GIFT file -> items (multiple choice and true/false); other questions are skipped."""
    check_size(data, name)
    text = decode_utf8(data, name)
    builder = Builder(CODE, name, lang, true_false_words)
    reader = _Reader(builder)
    for start, lines in _blocks(_lines(text)):
        reader.block(start, lines)
    return builder.finish()


__all__ = ["CODE", "read"]
