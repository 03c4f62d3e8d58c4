"""What every reader shares, whatever its format: the result of a read and its diagnostics, the
limits on input and text, ids, tags, option names and language codes, and the one place an item
of each type is made from the fields a reader found.

A reader turns one input file into an `ImportResult`. A question the model cannot hold raises
`Skip` inside the reader, which records it as a skipped-question diagnostic and goes on.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from anyascii import anyascii
from pydantic import ValidationError

from dpassess.diagnostics import Diagnostic, Severity
from dpassess.importers.html_markdown import html_to_markdown
from dpassess.importers.safe import MAX_INPUT_BYTES, InputError
from dpassess.lms.moodle import DERIVED_NAME, name_html, shorten_text
from dpassess.markup.markdown import blank_gaps, item_title, plain_title, to_plain
from dpassess.model import (
    MAX_TEXT,
    ContentBase,
    Item,
    ItemType,
    MultipleResponse,
    SingleChoice,
    TrueFalse,
)

#: PHP's trim() characters: Moodle trims with these, never with Unicode whitespace.
PHP_WS = " \t\n\r\0\x0b"
#: Longest raw text field read (characters, all languages together); the model then holds
#: each language's Markdown to `MAX_TEXT`.
MAX_FIELD = 5 * MAX_TEXT
#: Topic of questions that come with no category.
DEFAULT_TOPIC = "imported"


def php_trim(text: str) -> str:
    return text.strip(PHP_WS)


# --- the result of a read ---------------------------------------------------------------------


@dataclass
class ImportResult:
    """The items read from one input, the questions skipped and the warnings (each a
    `Diagnostic` whose `code` is the format), and the files the items refer to."""

    items: list[Item] = field(default_factory=list)
    #: One per question not imported: `message` is the reason.
    skipped: list[Diagnostic] = field(default_factory=list)
    #: What was imported but not carried as written, or could not be imported at all.
    warnings: list[Diagnostic] = field(default_factory=list)
    #: Files the items refer to (images embedded in Moodle XML): path relative to the bank
    #: folder (POSIX, as the items' text writes it) -> bytes.
    files: dict[str, bytes] = field(default_factory=dict)

    def summary(self) -> str:
        s = f"{len(self.items)} imported, {len(self.skipped)} skipped"
        if self.skipped:
            reasons: dict[str, int] = {}
            for sk in self.skipped:
                reasons[sk.message] = reasons.get(sk.message, 0) + 1
            s += " (" + "; ".join(f"{n} {r}" for r, n in sorted(reasons.items())) + ")"
        return s


def note(code: str, path: str, message: str, *, line: int = 0, field: str = "",
         item: str | None = None) -> Diagnostic:
    """A reader's warning (and a skipped question's reason): `code` is the format, `path` the
    input, `item` the question's name or identifier as the input gives it."""
    return Diagnostic(path, line, 0, field, message, code, Severity.warning, item=item)


class Skip(Exception):
    """A question the model cannot hold; the message is the reason."""


class NoLanguage(InputError):
    """Text that does not say its language, read without being told which it is."""


def check_size(data: bytes, name: str) -> None:
    if len(data) > MAX_INPUT_BYTES:
        raise InputError(f"{name}: input is {len(data):,} bytes; the limit is "
                         f"{MAX_INPUT_BYTES:,}")


def number(text: str, what: str) -> float:
    """A finite float from an attribute or element, or Skip naming it."""
    try:
        value = float(text)
    except ValueError:
        raise Skip(f"{what} {text!r} is not a number") from None
    if value != value or abs(value) == float("inf"):
        raise Skip(f"{what} {text!r} is not a number")
    return value


def validation_reason(exc: ValidationError) -> str:
    """The model's objections to the fields a reader found, as a skip reason."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "not a valid item: " + "; ".join(parts)


# --- items -------------------------------------------------------------------------------------


def choice_item(kind: ItemType, weights: dict[str, float] | None, **fields: Any) -> Item:
    """The item of type `kind` with `fields` (`weights` for single choice and multiple
    response). Raises
    pydantic's ValidationError when the fields do not make a valid item."""
    match kind:
        case ItemType.single_choice:
            return SingleChoice(type=kind, weights=weights, **fields)
        case ItemType.multiple_response:
            return MultipleResponse(type=kind, weights=weights, **fields)
        case ItemType.true_false:
            return TrueFalse(type=kind, **fields)
        case _:
            raise ValueError(f"{kind.value} is not a choice type")


def with_titles(item: Item, names: dict[str, str]) -> dict[str, ContentBase]:
    """The item's texts, each titled with its name in `names` (by language; titles are plain
    text) where that is not what the item shows as title anyway (the stem's first line). Raises pydantic's
    ValidationError for a title the model does not hold (longer than `MAX_TEXT`)."""
    out: dict[str, ContentBase] = {}
    for lang, content in item.text.items():
        name = names.get(lang, "")
        shown = item_title(item, lang) or item.id
        # a cloze item's name is made from its stem with each gap a blank (`lms.moodle`)
        stem = blank_gaps(content.stem) if item.type is ItemType.cloze else content.stem
        if name and name != shown and name != moodle_derived_name(stem):
            content = content.model_copy(update={"title": plain_title(name)})
            type(content).model_validate(dict(content))  # the title's length
        out[lang] = content
    return out


def moodle_derived_name(stem: str) -> str:
    """The name Moodle's formats give a question without a title (the first line of its stem
    as plain text, shortened at a word, as `lms.moodle` writes it), as plain text."""
    lines = stem.strip().splitlines()
    if not lines:
        return ""
    named = shorten_text(name_html(to_plain(lines[0])), DERIVED_NAME)
    return " ".join(html.unescape(named).split())


def default_weights(option_ids: list[str], key: list[str]) -> dict[str, float]:
    """The fractions a multiple-response item earns without `weights` (`MultipleResponse`):
    the key shares +1, the other options share -1."""
    n_right, n_wrong = len(key), len(option_ids) - len(key)
    return {oid: 1 / n_right if oid in key else (-1 / n_wrong if n_wrong else 0.0)
            for oid in option_ids}


# --- ids ---------------------------------------------------------------------------------------

_ID = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")


def to_ascii(text: str) -> str:
    """`text` transliterated to ASCII (`物理` -> `WuLi`, `Руководство` -> `Rukovodstvo`, `é` ->
    `e`), by anyascii's tables."""
    return anyascii(unicodedata.normalize("NFC", text))


def transliterated(text: str) -> bool:
    """Whether `text` has letters or digits that only transliteration keeps in an id."""
    return any(ord(c) > 127 and (c.isalnum()) for c in text)


def valid_id(text: str) -> bool:
    return 2 <= len(text) <= 64 and bool(_ID.match(text))


def slugify(text: str, *, prefix: str = "q", max_len: int = 48) -> str:
    """A stable id slug from text (ASCII, lower case, hyphens); `prefix` when nothing is left."""
    slug = re.sub(r"[^a-z0-9]+", "-", to_ascii(text).lower()).strip("-")[:max_len].strip("-")
    if not slug or not slug[0].isalpha():
        slug = f"{prefix}-{slug}" if slug else prefix
    return slug if len(slug) >= 2 else f"{prefix}-{slug}"


def free_id(item_id: str, seen: set[str], tried: dict[str, int] | None = None) -> str:
    """`item_id`, or `item_id-2`, `-3`... when `seen` has it (`seen` is not changed).

    `tried` (kept by the caller across calls, with `seen` only growing) remembers the last
    suffix tried for each id, so that many items wanting one id cost linear time, not
    quadratic."""
    n = tried.get(item_id, 1) if tried is not None else 1
    new = item_id if n == 1 else f"{item_id[:60]}-{n}"
    while new in seen:
        n += 1
        new = f"{item_id[:60]}-{n}"
    if tried is not None:
        tried[item_id] = n
    return new


def unique_ids(items: list[Item]) -> list[Item]:
    """Make ids unique in input order (`x`, `x-2`, `x-3`), deterministically."""
    seen: set[str] = set()
    tried: dict[str, int] = {}
    out = []
    for item in items:
        new = free_id(item.id, seen, tried)
        seen.add(new)
        out.append(item if new == item.id else item.model_copy(update={"id": new}))
    return out


def option_ids(n: int) -> list[str]:
    """Positional option ids for formats that have none: a, b, ... z, aa, ab, ..."""
    return [option_id(i) for i in range(n)]


def option_id(i: int) -> str:
    """The positional option id of the option at index `i` (0: a, 25: z, 26: aa, ...)."""
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(97 + r) + s
    return s


# --- tags and languages ------------------------------------------------------------------------

_TAG_BAD = re.compile(r"[^a-z0-9._-]+")
_LANG = re.compile(r"([a-z]{2,3})(?:_([a-z]{2}))?")


def clean_tag(tag: str) -> str:
    """A tag as the model accepts it (lower case; runs of other characters become `-`)."""
    out = _TAG_BAD.sub("-", to_ascii(tag).strip().lower())
    return out.lstrip("._-")[:64]


def moodle_lang(code: str) -> str:
    """A language code as Moodle spells it: `pt-BR` -> `pt_br`."""
    return code.lower().replace("-", "_")


def lang_code(code: str) -> str | None:
    """A language code (`en`, Moodle's `pt_br`, xml:lang's `pt-BR`) as the model writes it
    (`en`, `pt-BR`), or None."""
    m = _LANG.fullmatch(moodle_lang(code))
    if not m:
        return None
    return m[1] + (f"-{m[2].upper()}" if m[2] else "")


# --- texts -------------------------------------------------------------------------------------

_ONE_PARAGRAPH = re.compile(r"<p>((?:(?!<p[\s>]|</p>).)*)</p>", re.S)


def inline_html(html: str) -> str:
    """An answer's HTML without the one paragraph editors wrap it in (`render.to_inline_html`
    drops that paragraph too, so the option renders the same)."""
    m = _ONE_PARAGRAPH.fullmatch(html.strip())
    return m[1] if m else html


def title_markdown(plain: str) -> str:
    """Markdown whose plain text (`render.to_plain`) is `plain`."""
    return html_to_markdown(html.escape(plain, quote=False), inline=True)
