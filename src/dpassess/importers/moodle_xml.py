"""Moodle XML (`<quiz>`) -> items, read the way Moodle's own `qformat_xml` reads it (Moodle 4.5).

The second half of this module is what every reader shares: a Moodle question (from this module or
from GIFT) becomes an item through `Builder`, which applies Moodle's text formats and multilang
filter, turns categories into topics, idnumbers into ids, and fractions into a key and weights.
A question the model cannot hold becomes a `Skipped` with its line and the reason.
"""

from __future__ import annotations

import base64
import binascii
import html
import posixpath
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from urllib.parse import quote, unquote

from lxml import etree
from pydantic import ValidationError

from dpassess.importers import ImportResult, Skipped, free_id, slugify
from dpassess.importers.html_markdown import html_to_markdown
from dpassess.importers.safe import MAX_INPUT_BYTES, InputError, decode_utf8, parse_xml
from dpassess.lms.moodle import GRADE_TOLERANCE
from dpassess.markup.markdown import to_plain
from dpassess.model import MAX_TEXT, Content, Item, ItemType, Option, parse_item

#: PHP's trim() characters: Moodle trims with these, never with Unicode whitespace.
PHP_WS = " \t\n\r\0\x0b"
#: Longest raw text field read (characters, all languages together); the model then holds
#: each language's Markdown to `MAX_TEXT`.
MAX_FIELD = 5 * MAX_TEXT
#: Topic of questions that come with no category.
DEFAULT_TOPIC = "imported"
#: Two fractions closer than this are the same grade (Moodle's `match_grade_options`).


def php_trim(text: str) -> str:
    return text.strip(PHP_WS)


# --- a Moodle question, as either reader sees it ---------------------------------------------


@dataclass(frozen=True, slots=True)
class Text:
    """One text field as Moodle stores it: the text and its format; from Moodle XML, also the
    element's name for messages (`area`) and the files embedded in it (name -> bytes)."""

    text: str = ""
    format: str = "html"  # "html" | "moodle" | "plain" | "markdown"
    area: str = ""
    files: tuple[tuple[str, bytes], ...] = ()


@dataclass(frozen=True, slots=True)
class Answer:
    text: Text
    fraction: float
    feedback: Text


@dataclass
class Question:
    """A multichoice or truefalse question (truefalse: answers are `true`, then `false`)."""

    location: str
    qtype: str
    name: str
    stem: Text
    general: Text = Text()
    answers: list[Answer] = field(default_factory=list)
    idnumber: str = ""
    tags: list[str] = field(default_factory=list)
    category: str = ""
    single: bool = True
    shuffle: bool = True
    points: float = 1.0

    def texts(self) -> Iterable[str]:
        yield self.name
        yield self.stem.text
        yield self.general.text
        for a in self.answers:
            yield a.text.text
            yield a.feedback.text


# --- Moodle's multilang filter (filter_multilang\text_filter, "new syntax") -------------------

_SPAN = r'<span(?:\s+lang="[a-zA-Z0-9_-]+"|\s+class="multilang"){2}\s*>.*?</span>'
_GROUP = re.compile(f"{_SPAN}(?:\\s*{_SPAN})+", re.I | re.S)
_SPLIT = re.compile(r'<(?:lang|span)[^>]+lang="([a-zA-Z0-9_-]+)"[^>]*>(.*?)</(?:lang|span)>',
                    re.I | re.S)
_LANG = re.compile(r"([a-z]{2,3})(?:_([a-z]{2}))?")
# A block left with nothing but other languages' spans (the exporter's filler when the
# languages differ in block structure) is dropped, not shown empty.
_EMPTY = "<!--dpassess:no-text-in-this-language-->"
_EMPTY_BLOCK = re.compile(
    rf"<(p|li|ul|ol|h[1-6]|blockquote|pre|div|td|th|dd|dt)\b[^>]*>(?:\s|{_EMPTY})*{_EMPTY}"
    rf"(?:\s|{_EMPTY})*</\1\s*>", re.I)


def _moodle_lang(code: str) -> str:
    return code.lower().replace("-", "_")


def lang_code(moodle: str) -> str | None:
    """Moodle's language code (`en`, `pt_br`) as the model writes it (`en`, `pt-BR`), or None."""
    m = _LANG.fullmatch(_moodle_lang(moodle))
    if not m:
        return None
    return m[1] + (f"-{m[2].upper()}" if m[2] else "")


def languages(text: str) -> list[str]:
    """Moodle language codes of the multilang spans in `text`, in order of appearance."""
    if "multilang" not in text:
        return []
    out: dict[str, None] = {}
    for group in _GROUP.finditer(text):
        for code, _ in _SPLIT.findall(group[0]):
            out.setdefault(_moodle_lang(code), None)
    return list(out)


def select(text: str, lang: str) -> str:
    """`text` as Moodle's multilang filter shows it in `lang` (a Moodle code): each group of
    adjacent spans becomes the `lang` one, else the first."""
    if "multilang" not in text:
        return text

    def pick(group: re.Match[str]) -> str:
        found: dict[str, str] = {}
        for code, content in _SPLIT.findall(group[0]):
            found[_moodle_lang(code)] = content  # PHP: a repeated key keeps its first place
        if not found:
            return group[0]
        chosen = found.get(lang, next(iter(found.values())))
        if not chosen.strip() and any(v.strip() for v in found.values()):
            return _EMPTY
        return chosen

    out = _GROUP.sub(pick, text)
    if _EMPTY in out:
        while True:
            shorter = _EMPTY_BLOCK.sub(_EMPTY, out)
            if shorter == out:
                break
            out = shorter
        out = out.replace(_EMPTY, "")
    return out


# --- Moodle's text formats -> Markdown ----------------------------------------------------------

_HAS_BLOCK = re.compile(r"<(?:p|div|ul|ol|table|h[1-6]|pre|blockquote|hr|dl)\b", re.I)
_ONE_PARAGRAPH = re.compile(r"<p>((?:(?!<p[\s>]|</p>).)*)</p>", re.S)


def inline_html(html: str) -> str:
    """An answer's HTML without the one paragraph editors wrap it in (`render.to_inline_html`
    drops that paragraph too, so the option renders the same)."""
    m = _ONE_PARAGRAPH.fullmatch(html.strip())
    return m[1] if m else html


def to_markdown(text: str, fmt: str, *, inline: bool) -> str:
    """Markdown that renders to what Moodle shows for `text` in format `fmt`."""
    text = php_trim(text)
    if not text:
        return ""
    if fmt == "markdown":
        return text
    if fmt == "html":
        return html_to_markdown(inline_html(text) if inline else text, inline=inline)
    # FORMAT_PLAIN is escaped; FORMAT_MOODLE is HTML; both turn newlines into line breaks.
    body = html.escape(text, quote=False) if fmt == "plain" else text
    body = body.replace("\n", "<br />\n")
    if not inline and not _HAS_BLOCK.search(body):
        body = f"<p>{body}</p>"
    return html_to_markdown(body, inline=inline)


_TAG = re.compile(r"<[A-Za-z/!?][^>]*>")


def plain_name(name: str) -> str:
    """A question name as Moodle shows it: tags stripped (PARAM_TEXT), entities decoded."""
    return " ".join(html.unescape(_TAG.sub("", name)).split())


def title_markdown(plain: str) -> str:
    """Markdown whose plain text (`render.to_plain`) is `plain`."""
    return html_to_markdown(html.escape(plain, quote=False), inline=True)


# --- ids, tags, topics ------------------------------------------------------------------------

_ID = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")
_TAG_BAD = re.compile(r"[^a-z0-9._-]+")


def valid_id(text: str) -> bool:
    return 2 <= len(text) <= 64 and bool(_ID.match(text))


def option_ids(n: int) -> list[str]:
    """Positional option ids for formats that have none: a, b, ... z, aa, ab, ..."""
    out = []
    for i in range(n):
        s = ""
        i += 1
        while i:
            i, r = divmod(i - 1, 26)
            s = chr(97 + r) + s
        out.append(s)
    return out


def _ascii_slug(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


def clean_tag(tag: str) -> str:
    """A tag as the model accepts it (lower case; runs of other characters become `-`)."""
    ascii_text = unicodedata.normalize("NFKD", tag).encode("ascii", "ignore").decode()
    out = _TAG_BAD.sub("-", ascii_text.strip().lower())
    return out.lstrip("._-")[:64]


def category_topic(path: str) -> str:
    """A Moodle category path as a topic.

    `$course$/top/<root>/a/b` (as Moodle and dpassess export) gives `a/b`: the context, `top` and
    the context's root category (Moodle's "Default for ...", dpassess's bank) are left out. A path
    without a `$context$` prefix is relative (`Chapter 1/Part A` gives `chapter-1/part-a`).
    `//` in a name is a literal slash, as in Moodle's `split_category_path`.
    """
    parts = [php_trim(p.replace("//", "/")) for p in re.split(r"(?<!/)/(?!/)", path)]
    if parts and re.fullmatch(r"\$[a-z]+\$", parts[0]):
        parts = parts[1:]
        if parts and parts[0] == "top":
            parts = parts[1:]
        if len(parts) > 1:
            parts = parts[1:]
    segments = [s for s in (_ascii_slug(plain_name(p)) for p in parts) if s]
    return "/".join(segments) or DEFAULT_TOPIC


# --- embedded files (a Moodle file area per text) -> image files beside the items ------------

#: Folder, relative to the bank folder (and so to each item's file), of the files imported from
#: Moodle XML: `img/<item id>/<file name>`.
IMAGE_DIR = "img"
#: A reference to a file of the text's area, as Moodle writes it: the name URL-escaped.
_REF = re.compile(r"@@PLUGINFILE@@/([^\"'\s<>?#()]*)")
#: Characters left out of a written file name: control characters, folder separators, and
#: what Windows refuses.
_NOT_IN_NAME = re.compile(r'[\x00-\x1f\x7f-\x9f/\\:*?"<>|]')
_MAX_NAME_BYTES = 120


def file_name(name: str) -> str:
    """`name` as a file name safe to write in one folder: no folder separators, no `..`, no
    leading dot, no control characters; the extension is kept."""
    name = _NOT_IN_NAME.sub("_", unicodedata.normalize("NFC", name))
    name = re.sub(r"\.{2,}", ".", name).strip(" ").rstrip(". ")
    if name.startswith("."):
        name = "image" + name
    stem, ext = posixpath.splitext(name)
    if len(ext) > 16:
        stem, ext = name, ""
    while stem and len((stem + ext).encode("utf-8")) > _MAX_NAME_BYTES:
        stem = stem[:-1]
    return (stem.rstrip(". ") or "image") + ext


class _Files:
    """The files one item's texts show, written under `img/<item id>/` in the order the texts
    first show them: a name (compared case-folded, for case-insensitive file systems) holds one
    file; the same bytes under the same name are written once, different bytes are renamed
    `x-2.png`, `x-3.png`, ..."""

    def __init__(self, item_id: str) -> None:
        self.folder = f"{IMAGE_DIR}/{item_id}"
        self.files: dict[str, tuple[str, bytes]] = {}

    def link(self, name: str, data: bytes) -> str:
        """The relative, URL-escaped path the text refers to the file by."""
        name = file_name(name)
        stem, ext = posixpath.splitext(name)
        n = 1
        while (got := self.files.get(name.casefold())) is not None and got[1] != data:
            n += 1
            name = f"{stem}-{n}{ext}"
        self.files[name.casefold()] = (name, data)
        return f"{self.folder}/{quote(name, safe='')}"

    def written(self) -> dict[str, bytes]:
        return {f"{self.folder}/{name}": data for name, data in self.files.values()}


# --- Moodle question -> item --------------------------------------------------------------------


def validation_reason(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "not a valid item: " + "; ".join(parts)


class Skip(Exception):
    """A question the model cannot hold; the message is the reason."""


def number(text: str, what: str) -> float:
    """A finite float from an attribute or element, or Skip naming it."""
    try:
        value = float(text)
    except ValueError:
        raise Skip(f"{what} {text!r} is not a number") from None
    if value != value or abs(value) == float("inf"):
        raise Skip(f"{what} {text!r} is not a number")
    return value


class Builder:
    """Questions of one file -> items: languages, texts, key and weights, ids, topics, tags.

    `lang` is the language of text without multilang spans; without it, such text is taken to be
    in every language the file's spans use (as Moodle shows it), else it is an error.
    """

    def __init__(self, name: str, lang: str | None) -> None:
        self.name = name
        self.lang = lang
        self.result = ImportResult()
        self._pending: list[tuple[Question, str]] = []  # (question, topic)
        self._file_langs: dict[str, None] = {}
        self._tag_notes: dict[str, str] = {}
        self._topic = ""  # the category path in force
        self._ids: set[str] = set()  # ids of the items built so far
        self._renamed: list[tuple[str, str, str]] = []  # (location, id, id given)

    def warn(self, where: str, message: str) -> None:
        self.result.warnings.append(f"{where}: {message}")

    def skip(self, where: str, reason: str) -> None:
        self.result.skipped.append(Skipped(where, reason))

    # questions arrive in file order; categories set the topic of those that follow
    def category(self, path: str) -> None:
        self._topic = path

    def question(self, q: Question) -> None:
        for text in q.texts():
            if len(text) > MAX_FIELD:
                self.skip(q.location, f"a text field is {len(text):,} characters; the limit is "
                                      f"{MAX_FIELD:,}")
                return
        self._pending.append((q, self._topic))

    def note_languages(self, text: str) -> None:
        """Languages used by text outside questions (a category's info) count for the file."""
        if len(text) <= MAX_FIELD:
            for code in languages(text):
                self._file_langs.setdefault(code, None)

    def finish(self) -> ImportResult:
        langs_by_q = []
        for q, _ in self._pending:
            langs: dict[str, None] = {}
            for text in q.texts():
                for code in languages(text):
                    langs.setdefault(code, None)
            langs_by_q.append(list(langs))
            for code in langs:
                self._file_langs.setdefault(code, None)
        topics: dict[str, str] = {}
        first = next(iter(self._file_langs), "")
        for (q, path), langs in zip(self._pending, langs_by_q, strict=True):
            if path not in topics:
                topics[path] = category_topic(select(path, first))
            try:
                self.result.items.append(self._item(q, topics[path], langs))
            except Skip as exc:
                self.skip(q.location, str(exc))
        for original, tag in sorted(self._tag_notes.items()):
            self.warn(self.name, f"tag {original!r} written as {tag!r}" if tag
                      else f"tag {original!r} has no letters or digits; left out")
        for loc, old, new in self._renamed:
            self.warn(loc, f"id {old!r} is used by an earlier question; this one is {new!r}")
        return self.result

    # -- one question -----------------------------------------------------------------------
    def _languages(self, q: Question, langs: list[str]) -> list[tuple[str, str]]:
        """(model code, Moodle code) of each language the question is written in."""
        if not langs:
            if self.lang is not None:
                return [(self.lang, _moodle_lang(self.lang))]
            langs = list(self._file_langs)
        if not langs:
            raise InputError(f"{q.location}: the text has no language spans; name its language "
                             "with --lang (for example --lang en)")
        out = []
        for code in langs:
            model = lang_code(code)
            if model is None:
                raise Skip(f"language {code!r} is not a language code the bank accepts "
                           "(like en, id or pt_br)")
            out.append((model, code))
        return out

    def _item(self, q: Question, topic: str, langs_found: list[str]) -> Item:
        langs = self._languages(q, langs_found)
        answers = q.answers
        weights: dict[str, float] | None = None
        if q.qtype == "truefalse":
            kind = ItemType.true_false
            ids = ["true", "false"]
            key = ["true" if answers[0].fraction == 1 else "false"]
        else:
            kept = [a for a in answers if php_trim(a.text.text)]
            if len(kept) < len(answers):
                self.warn(q.location, f"{len(answers) - len(kept)} blank answer(s) left out "
                                      "(Moodle drops blank answers too)")
            answers = kept
            if len(answers) < 2:
                raise Skip("a multiple-choice question needs at least two answers")
            ids = option_ids(len(answers))
            fractions = [a.fraction for a in answers]
            for f in fractions:
                if not -1 - GRADE_TOLERANCE <= f <= 1 + GRADE_TOLERANCE:
                    raise Skip(f"answer grade {f * 100:g}% is outside -100%..100%")
            fractions = [max(-1.0, min(1.0, f)) for f in fractions]
            if q.single:
                kind = ItemType.single_choice
                full = [i for i, f in enumerate(fractions) if abs(f - 1) < GRADE_TOLERANCE]
                if len(full) != 1:
                    raise Skip("a single-answer question needs exactly one answer worth 100% "
                               f"(this one has {len(full)})")
                if any(abs(f) >= GRADE_TOLERANCE for i, f in enumerate(fractions)
                       if i != full[0]):
                    raise Skip("partial or negative credit in a single-answer question (the "
                               "model holds partial credit for multiple-answer questions)")
                key = [ids[full[0]]]
            else:
                kind = ItemType.multiple_response
                key = [oid for oid, f in zip(ids, fractions, strict=True) if f > 0]
                if not key:
                    raise Skip("no answer earns credit")
                weights = dict(zip(ids, fractions, strict=True))
                n_right, n_wrong = len(key), len(ids) - len(key)
                default = {oid: 1 / n_right if oid in key else (-1 / n_wrong if n_wrong else 0.0)
                           for oid in ids}
                if all(abs(weights[o] - default[o]) < GRADE_TOLERANCE for o in ids):
                    weights = None
        names = {model: plain_name(select(q.name, code)) for model, code in langs}
        plain_first = next(iter(names.values()))
        if not plain_first:  # images do not show in plain text: the links do not matter here
            plain_first = to_plain(to_markdown(select(q.stem.text, langs[0][1]), q.stem.format,
                                               inline=False))
        wanted, id_note = self._id(q, plain_first)
        item_id = free_id(wanted, self._ids)  # taken once the item is built
        files = _Files(item_id)
        stem, general = self._link(q, q.stem, files), self._link(q, q.general, files)
        answers = [Answer(self._link(q, a.text, files), a.fraction,
                          self._link(q, a.feedback, files)) for a in answers]
        text: dict[str, Content] = {}
        for model, code in langs:
            def md(t: Text, inline: bool, code: str = code) -> str:
                return to_markdown(select(t.text, code), t.format, inline=inline)

            options = {} if kind is ItemType.true_false else {
                oid: md(a.text, True) for oid, a in zip(ids, answers, strict=True)}
            feedback = {oid: fb for oid, a in zip(ids, answers, strict=True)
                        if (fb := md(a.feedback, False))}
            try:
                text[model] = Content(stem=md(stem, False), options=options, feedback=feedback,
                                      explanation=md(general, False) or None)
            except ValidationError as exc:
                raise Skip(validation_reason(exc)) from None
        if id_note:
            self.warn(q.location, id_note)
        tags = self._tags(q.tags)
        try:
            extra = {"weights": weights} if kind is ItemType.multiple_response else {}
            item = parse_item(dict(id=item_id, type=kind, topic=topic, points=q.points,
                                   tags=tags, shuffle=q.shuffle,
                                   options=[Option(id=o) for o in ids], key=key, text=text,
                                   **extra))
            titled = {}
            for model, content in item.text.items():
                name = names[model]
                shown = " ".join(to_plain(item.title(model)).split()) or item.id
                if name and name != shown:
                    content = content.model_copy(update={"title": title_markdown(name)})
                titled[model] = content
            item = parse_item({**item.model_dump(by_alias=True), "text": titled})
        except ValidationError as exc:
            raise Skip(validation_reason(exc)) from None
        self._ids.add(item_id)
        if item_id != wanted:
            self._renamed.append((q.location, wanted, item_id))
        self.result.files.update(files.written())
        return item

    def _id(self, q: Question, fallback: str) -> tuple[str, str]:
        """The question's id, and a note when its idnumber had to be rewritten."""
        idnumber = php_trim(q.idnumber)
        if idnumber:
            if valid_id(idnumber):
                return idnumber, ""
            new = slugify(idnumber)
            return new, f"idnumber {idnumber!r} is not an item id; using {new!r}"
        return slugify(fallback), ""

    def _link(self, q: Question, t: Text, files: _Files) -> Text:
        """`t` with each `@@PLUGINFILE@@/<name>` that names a file of its area pointing at
        that file, written under `files`. A reference to a file the area does not hold keeps
        its link, and a file no reference shows is not written; both are warned about."""
        if not t.area or (not t.files and "@@PLUGINFILE@@" not in t.text):
            return t
        embedded = dict(t.files)
        shown: dict[str, None] = {}
        missing: dict[str, None] = {}

        def link(m: re.Match[str]) -> str:
            name = unquote(html.unescape(m[1]))
            data = embedded.get(name)
            if data is None:
                missing.setdefault(name, None)
                return m[0]
            shown.setdefault(name, None)
            return files.link(name, data)

        text = _REF.sub(link, t.text)
        for name in missing:
            self.warn(q.location, f"{t.area}: the text shows file {name!r}, which the area "
                                  "does not hold (or which could not be read); the link is "
                                  "kept (a broken image)")
        for name in embedded:
            if name not in shown:
                self.warn(q.location, f"{t.area}: embedded file {name!r} is not shown by the "
                                      "text; not imported")
        return replace(t, text=text)

    def _tags(self, raw: list[str]) -> tuple[str, ...]:
        out: dict[str, None] = {}
        for tag in raw:
            tag = php_trim(tag)
            if not tag:
                continue
            clean = clean_tag(tag)
            if clean != tag:
                self._tag_notes[tag] = clean
            if clean:
                out.setdefault(clean, None)
        return tuple(out)


# --- the Moodle XML reader ----------------------------------------------------------------------

#: qformat_xml::trans_format
_FORMATS = {"moodle_auto_format": "moodle", "html": "html", "plain_text": "plain",
            "wiki_like": "moodle", "markdown": "markdown"}
_SKIPPED_TYPES = {
    "shortanswer": "short-answer", "numerical": "numerical", "description": "description",
    "matching": "matching", "match": "matching", "cloze": "cloze (embedded answers)",
    "multianswer": "cloze (embedded answers)", "essay": "essay", "calculated": "calculated",
    "calculatedsimple": "calculated", "calculatedmulti": "calculated multichoice",
    "ddwtos": "drag and drop", "gapselect": "select missing words", "ddimageortext": "drag and drop",
    "ddmarker": "drag and drop", "randomsamatch": "random short-answer matching",
}
_ENCODING = re.compile(rb"""^\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")


class _Reader:
    def __init__(self, builder: Builder, name: str) -> None:
        self.b = builder
        self.name = name

    def where(self, el: etree._Element) -> str:
        return f"{self.name}:{el.sourceline or 0}"

    def text_of(self, el: etree._Element | None, where: str) -> str:
        """The `<text>` child's content, trimmed (qformat_xml::getpath with istext)."""
        if el is None:
            return ""
        t = el.find("text")
        if t is None:
            return ""
        if len(t):
            self.b.warn(where, f"<{el.tag}><text> holds XML elements; read as HTML (Moodle "
                               "expects HTML escaped or in CDATA)")
            inner = (t.text or "") + "".join(
                etree.tostring(c, encoding="unicode", with_tail=True) for c in t
                if isinstance(c.tag, str))
            return php_trim(inner)
        return php_trim(t.text or "")

    def field(self, el: etree._Element | None, default: str, where: str, area: str) -> Text:
        """A text with its format and files (qformat_xml::import_text_with_files)."""
        if el is None:
            return Text("", default, area)
        raw = el.get("format")
        fmt = default if raw is None else _FORMATS.get(php_trim(raw))
        if fmt is None:
            self.b.warn(where, f"unknown text format {raw!r}; read as HTML (as Moodle does)")
            fmt = "html"
        return Text(self.text_of(el, where), fmt, area, self.files(el, where, area))

    def files(self, el: etree._Element, where: str, area: str) -> tuple[tuple[str, bytes], ...]:
        """The `<file>`s of a text area (qformat_xml::import_files_as_draft): name -> bytes.
        A file that cannot be read is left out with a warning naming it."""
        out: dict[str, bytes] = {}
        for f in el.findall("file"):
            name = f.get("name", "")
            path, encoding = f.get("path", "/"), f.get("encoding", "base64")
            problem = None
            if not name:
                problem = "has no name"
            elif path != "/":
                problem = f"is in folder {path!r} (only files at '/' are imported)"
            elif encoding != "base64":
                problem = f"is encoded as {encoding!r}, not base64"
            else:
                try:
                    data = base64.b64decode("".join((f.text or "").split()), validate=True)
                except (binascii.Error, ValueError):
                    problem = "is not valid base64"
            if problem is None and out.get(name, data) != data:
                problem = "has the name of an earlier file of the area (Moodle keeps the first)"
            if problem is not None:
                self.b.warn(where, f"{area}: embedded file {name!r} {problem}; not imported")
                continue
            out[name] = data
        return tuple(out.items())

    def unused_files(self, el: etree._Element | None, where: str, area: str) -> None:
        """Warn about the files of an element whose text is not carried."""
        for f in [] if el is None else el.findall("file"):
            self.b.warn(where, f"{area}: embedded file {f.get('name', '')!r} is not imported "
                               "(this text is not carried)")

    def value(self, q: etree._Element, tag: str, default: str) -> str:
        el = q.find(tag)
        return default if el is None else php_trim(el.text or "")

    def read(self, root: etree._Element) -> None:
        for q in root:
            if not isinstance(q.tag, str):
                continue
            where = self.where(q)
            if q.tag != "question":
                self.b.warn(where, f"<{q.tag}> is not a <question>; left out")
                continue
            qtype = q.get("type", "")
            if qtype == "category":
                self.b.category(self.text_of(q.find("category"), where))
                self.b.note_languages(self.text_of(q.find("info"), where))
            elif qtype in ("multichoice", "truefalse"):
                try:
                    self.b.question(self.question(q, qtype, where))
                except Skip as exc:
                    self.b.skip(where, str(exc))
            else:
                label = _SKIPPED_TYPES.get(qtype, repr(qtype))
                self.b.skip(where, f"{label} questions are not supported yet")

    def question(self, q: etree._Element, qtype: str, where: str) -> Question:
        name_el = q.find("name")
        if name_el is None or name_el.find("text") is None:
            raise Skip("the question has no <name><text> (Moodle refuses it too)")
        stem = self.field(q.find("questiontext"), "html", where, "questiontext")
        fmt = stem.format
        general = self.field(q.find("generalfeedback"), fmt, where, "generalfeedback")
        points = number(self.value(q, "defaultgrade", "1"), "defaultgrade")
        if not 0 < points <= 1000:
            raise Skip(f"defaultgrade {points:g}: an item is worth more than 0 and at most "
                       "1000 points")
        tags = [self.text_of(t, where) for t in q.findall("tags/tag")]
        tags += [self.text_of(t, where) for t in q.findall("coursetags/tag")]
        for tag in ("correctfeedback", "partiallycorrectfeedback", "incorrectfeedback"):
            if self.text_of(q.find(tag), where):
                self.b.warn(where, f"<{tag}> is not carried (the model has per-option feedback "
                                   "and an explanation)")
            self.unused_files(q.find(tag), where, tag)
        if q.findall("hint"):
            self.b.warn(where, f"{len(q.findall('hint'))} hint(s) not carried")
        answers_el = q.findall("answer")
        if not answers_el:
            raise Skip("the question has no <answer>")
        common = dict(location=where, qtype=qtype, name=self.text_of(name_el, where), stem=stem,
                      general=general, idnumber=self.value(q, "idnumber", ""), tags=tags,
                      points=points)
        if qtype == "truefalse":
            return Question(**common, answers=self._truefalse(answers_el, fmt, where))
        answers = []
        for n, a in enumerate(answers_el, 1):
            fraction = number(a.get("fraction", "0"), "fraction") / 100
            answers.append(Answer(self.field(a, fmt, where, f"answer {n}"), fraction,
                                  self.field(a.find("feedback"), fmt, where,
                                             f"answer {n} feedback")))
        single = self.value(q, "single", "true") not in ("false", "", "0")
        shuffle = self.value(q, "shuffleanswers", "false") not in ("false", "", "0")
        return Question(**common, answers=answers, single=single, shuffle=shuffle)

    def _truefalse(self, answers: list[etree._Element], fmt: str, where: str) -> list[Answer]:
        """qformat_xml::import_truefalse: answers named `true`/`false` (else true, then false)."""
        correct_true: bool | None = None
        feedback = {"true": Text("", fmt), "false": Text("", fmt)}
        for n, a in enumerate(answers):
            word = self.text_of(a, where)
            if word not in ("true", "false"):
                word = "true" if n == 0 else "false"
                self.b.warn(where, f"true/false answer {self.text_of(a, where)!r} is taken to be "
                                   f"{word!r} by its position (old Moodle export)")
            try:
                full = float(a.get("fraction", "0")) == 100
            except ValueError:
                full = False
            correct_true = full if word == "true" else not full
            self.unused_files(a, where, f"answer {n + 1}")
            feedback[word] = self.field(a.find("feedback"), fmt, where, f"answer {n + 1} feedback")
        assert correct_true is not None
        return [Answer(Text("true"), 1.0 if correct_true else 0.0, feedback["true"]),
                Answer(Text("false"), 0.0 if correct_true else 1.0, feedback["false"])]



def check_size(data: bytes, name: str) -> None:
    if len(data) > MAX_INPUT_BYTES:
        raise InputError(f"{name}: input is {len(data):,} bytes; the limit is "
                         f"{MAX_INPUT_BYTES:,}")


def read(data: bytes, name: str, lang: str | None) -> ImportResult:
    """A Moodle XML file -> items (multichoice and truefalse); other questions are skipped."""
    check_size(data, name)
    m = _ENCODING.match(data)
    if m and m[1].lower().replace(b"_", b"-") not in (b"utf-8", b"utf8"):
        raise InputError(f"{name}:1: the file declares encoding {m[1].decode()!r}; Moodle XML "
                         "is UTF-8")
    decode_utf8(data, name)
    root = parse_xml(data, name)
    if root.tag != "quiz":
        raise InputError(f"{name}:{root.sourceline or 1}: not Moodle XML: the root element is "
                         f"<{root.tag}>, not <quiz>")
    builder = Builder(name, lang)
    _Reader(builder, name).read(root)
    return builder.finish()


__all__: list[str] = ["Answer", "Builder", "Question", "Skip", "Text", "read"]
