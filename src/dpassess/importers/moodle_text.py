"""Moodle's text conventions -> the bank's: the multilang filter, the text formats (HTML, Moodle
auto-format, plain, Markdown) as Markdown, question names as plain text, category paths as
topics. Shared by the Moodle XML and GIFT readers, which store text the same way.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_left
from collections.abc import Iterator

from dpassess.importers.common import (
    DEFAULT_TOPIC,
    MAX_FIELD,
    inline_html,
    moodle_lang,
    php_trim,
    to_ascii,
)
from dpassess.importers.html_markdown import html_to_markdown, moodle_maths

# --- Moodle's multilang filter (filter_multilang\text_filter, "new syntax") -------------------

_OPEN = re.compile(r'<span(?:\s+lang="[a-zA-Z0-9_-]+"|\s+class="multilang"){2}\s*>', re.I)
_CLOSE = re.compile(r"</span>", re.I)
_SPACE = re.compile(r"\s*")


def _groups(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each group of adjacent multilang spans, as Moodle's filter regex
    `(<span…>.*?</span>)(\\s*<span…>.*?</span>)+` finds them in well-formed text, in linear
    time: each span ends at the first `</span>` after it (the regex would backtrack to a later
    one only when the first is not followed by another span, in which case its `.*?` rescans
    to the end of the text from every opening: quadratic on an open span)."""
    if "multilang" not in text:
        return
    opens = {m.start(): m.end() for m in _OPEN.finditer(text)}
    closes = [m.start() for m in _CLOSE.finditer(text)]
    at = 0
    for start in sorted(opens):
        if start < at:
            continue
        end, spans, pos = start, 0, start
        while pos in opens:
            k = bisect_left(closes, opens[pos])
            if k == len(closes):
                break
            end, spans = closes[k] + len("</span>"), spans + 1
            pos = m.end() if (m := _SPACE.match(text, end)) else end
        if spans >= 2:
            yield start, end
            at = end
_SPLIT = re.compile(r'<(?:lang|span)[^>]+lang="([a-zA-Z0-9_-]+)"[^>]*>(.*?)</(?:lang|span)>',
                    re.I | re.S)
# A block left with nothing but other languages' spans (the exporter's filler when the
# languages differ in block structure) is dropped, not shown empty.
_EMPTY = "<!--dpassess:no-text-in-this-language-->"
_EMPTY_BLOCK = re.compile(
    rf"<(p|li|ul|ol|h[1-6]|blockquote|pre|div|td|th|dd|dt)\b[^>]*>(?:\s|{_EMPTY})*{_EMPTY}"
    rf"(?:\s|{_EMPTY})*</\1\s*>", re.I)


def languages(text: str) -> list[str]:
    """Moodle language codes of the multilang spans in `text`, in order of appearance."""
    if "multilang" not in text:
        return []
    out: dict[str, None] = {}
    for start, end in _groups(text):
        for code, _ in _SPLIT.findall(text, start, end):
            out.setdefault(moodle_lang(code), None)
    return list(out)


def select(text: str, lang: str) -> str:
    """`text` as Moodle's multilang filter shows it in `lang` (a Moodle code): each group of
    adjacent spans becomes the `lang` one, else the first."""
    if "multilang" not in text:
        return text

    def pick(group: str) -> str:
        found: dict[str, str] = {}
        for code, content in _SPLIT.findall(group):
            found[moodle_lang(code)] = content  # PHP: a repeated key keeps its first place
        if not found:
            return group
        chosen = found.get(lang, next(iter(found.values())))
        if not chosen.strip() and any(v.strip() for v in found.values()):
            return _EMPTY
        return chosen

    parts: list[str] = []
    at = 0
    for start, end in _groups(text):
        parts += [text[at:start], pick(text[start:end])]
        at = end
    out = "".join(parts) + text[at:]
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


def to_markdown(text: str, fmt: str, *, inline: bool) -> str:
    """Markdown that renders to what Moodle shows for `text` in format `fmt`."""
    text = php_trim(text)
    if not text:
        return ""
    if fmt == "markdown":
        return text
    if fmt == "html":
        text = moodle_maths(text)
        return html_to_markdown(inline_html(text) if inline else text, inline=inline)
    # FORMAT_PLAIN is escaped; FORMAT_MOODLE is HTML; both turn newlines into line breaks.
    body = html.escape(text, quote=False) if fmt == "plain" else moodle_maths(text)
    body = body.replace("\n", "<br />\n")
    if not inline and not _HAS_BLOCK.search(body):
        body = f"<p>{body}</p>"
    return html_to_markdown(body, inline=inline)


#: A tag, as strip_tags removes it (a `<` inside ends the scan: linear on `<a<a<a…`).
_TAG = re.compile(r"<[A-Za-z/!?][^<>]*>")


def plain_name(name: str) -> str:
    """A question name as Moodle shows it: tags stripped (PARAM_TEXT), entities decoded."""
    return " ".join(html.unescape(_TAG.sub("", name)).split())


def label(name: str) -> str | None:
    """A question's name as diagnostics name the question (its first language, shortened), or
    None when it has none (or one too long to read)."""
    if len(name) > MAX_FIELD:
        return None
    plain = plain_name(select(name, ""))
    return (plain if len(plain) <= 80 else plain[:77].rstrip() + "...") or None


# --- categories -> topics -----------------------------------------------------------------------


def _ascii_slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", to_ascii(text).lower()).strip("-")


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
