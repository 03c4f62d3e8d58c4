"""TeX maths in Markdown text -> maths tokens (markdown-it rules), TeX-delimited HTML or MathML.

Maths is written `$...$` or `\\(...\\)` (inline) and `$$...$$` or `\\[...\\]` (display). Dollars
are parsed by mdit-py-plugins' dollarmath with Pandoc's rule for prices: an opening `$` is followed
by a non-space, a closing `$` follows a non-space and is not followed by a digit, so `$5 and $10`
stays text; `\\$` is a literal dollar. Backslash delimiters are parsed by the rules below (the
texmath plugin's regex takes quadratic time on unclosed `\\(`; these scan each character once).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal, NamedTuple

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline

if TYPE_CHECKING:  # lxml and latex2mathml are imported when MathML is written
    from lxml import etree

MATHML_NS = "http://www.w3.org/1998/Math/MathML"
TEX_ENCODING = "application/x-tex"
_M = "{%s}" % MATHML_NS  # noqa: UP031 - a constant prefix, not formatting

#: How maths is written out: `tex` keeps the TeX inside `\(` `\)` / `\[` `\]` (what MathJax, and
#: so Moodle's and Canvas's maths filters, read); `mathml` writes MathML with the TeX annotated.
MathsMode = Literal["tex", "mathml"]
BlockRule = Callable[[StateBlock, int, int, bool], bool]

#: markdown-it token types that hold maths (display: the `$$` / `\[` forms).
INLINE_TYPES = frozenset({"math_inline"})
DISPLAY_TYPES = frozenset({"math_inline_double", "math_block"})
TYPES = INLINE_TYPES | DISPLAY_TYPES


class Maths(NamedTuple):
    """One maths span of a field's source: `source[start:end]` is the whole span, delimiters
    included; `tex` is what is between the delimiters."""

    start: int
    end: int
    tex: str
    display: bool


@dataclass(frozen=True)
class MathsError(Exception):
    """TeX that cannot be converted to MathML."""

    tex: str
    reason: str

    def __str__(self) -> str:
        return f"the TeX {self.tex!r} cannot be converted to MathML ({self.reason})"


# --- the markdown-it rules for `\( \)` and `\[ \]` -----------------------------------------------


def _closer(src: str, start: int, close: str, memo: dict[str, int]) -> int:
    """Index of the first `close` (`\\)` or `\\]`) at or after `start` whose backslash is not
    itself escaped, or -1. `memo` remembers the last answer, so a text full of unclosed openers
    is scanned once: the answer from `start` holds for every later start up to it."""
    key_from, key_at = f"{close}from", f"{close}at"
    if key_from in memo and memo[key_from] <= start and (memo[key_at] == -1
                                                         or memo[key_at] >= start):
        return memo[key_at]
    pos = start
    found = -1
    while True:
        at = src.find(close, pos)
        if at == -1:
            break
        run = 0
        while at - run - 1 >= 0 and src[at - run - 1] == "\\":
            run += 1
        if run % 2 == 0:
            found = at
            break
        pos = at + 1
    memo[key_from], memo[key_at] = start, found
    return found


def _bracket_inline(state: StateInline, silent: bool) -> bool:
    """`\\(tex\\)` (inline) and `\\[tex\\]` (display) inside a paragraph."""
    src, pos = state.src, state.pos
    if src[pos] != "\\" or pos + 1 >= len(src) or src[pos + 1] not in "([":
        return False
    display = src[pos + 1] == "["
    close = "\\]" if display else "\\)"
    memo: dict[str, int] = state.env.setdefault("_dpassess_maths_memo", {}).setdefault(src, {})
    end = _closer(src, pos + 2, close, memo)
    if end == -1 or end == pos + 2 or end + 2 > state.posMax:
        return False
    if not silent:
        token = state.push("math_inline_double" if display else "math_inline", "math", 0)
        token.content = src[pos + 2:end]
        token.markup = src[pos:pos + 2]
    state.pos = end + 2
    return True


def _bracket_block(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """`\\[` at the start of a line up to an unescaped `\\]` that ends a line: display maths as
    a block, so Markdown block syntax inside (`- `, `#`, `1.`) stays TeX. A blank line ends the
    attempt (TeX has none inside maths); so does a `\\]` followed by more text on its line (the
    paragraph's inline rule reads that)."""
    begin = state.bMarks[start_line] + state.tShift[start_line]
    if state.sCount[start_line] - state.blkIndent >= 4 or not state.src.startswith("\\[", begin):
        return False
    # A failed attempt stopped at line `failed`; every attempt from a line before it fails there
    # too (no closing line in between), which keeps a text of unclosed `\\[` lines linear.
    failed: dict[str, int] = state.env.setdefault("_dpassess_maths_block", {})
    if failed.get(state.src, -1) >= start_line:
        return False
    parts: list[str] = []
    line, start = start_line, begin + 2
    while True:
        text = state.src[start:state.eMarks[line]]
        at = _closer(text, 0, "\\]", {})
        if at != -1:
            if text[at + 2:].strip():
                failed[state.src] = line
                return False
            parts.append(text[:at])
            break
        parts.append(text)
        line += 1
        if line >= end_line or state.isEmpty(line):
            failed[state.src] = line
            return False
        start = state.bMarks[line] + state.tShift[line]
    tex = "\n".join(parts)
    if not tex.strip():
        return False
    if silent:
        return True
    state.line = line + 1
    token = state.push("math_block", "math", 0)
    token.block = True
    token.content = tex
    token.markup = "\\["
    token.map = [start_line, state.line]
    return True


def delimited(tex: str, display: bool) -> str:
    """`tex` between the delimiters the TeX mode writes: `\\(tex\\)` or `\\[tex\\]`."""
    return f"\\[{tex}\\]" if display else f"\\({tex}\\)"


def _alt_text(state: StateCore) -> None:
    """Maths in an image's description becomes its delimited TeX (an `alt` is plain text, and
    markdown-it would leave the maths out)."""
    for block in state.tokens:
        for tok in block.children or ():
            if tok.type == "image":
                for child in tok.children or ():
                    if child.type in TYPES:
                        child.content = delimited(child.content, child.type in DISPLAY_TYPES)
                        child.type = "text"


def _one_display(rule: BlockRule) -> BlockRule:
    """dollarmath's block rule, refused when what it read holds `$$`: it takes a line that opens
    and ends with `$$` as one formula, so `$$a$$ and $$b$$` would be the TeX `a$$ and $$b`
    (TeX ends display maths at the first `$$`); the paragraph's inline rule then reads both."""

    def _rule(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
        count, line = len(state.tokens), state.line
        if not rule(state, start_line, end_line, False):
            return False
        holds_two = any("$$" in t.content for t in state.tokens[count:])
        if silent or holds_two:
            del state.tokens[count:]
            state.line = line
        return not holds_two

    return _rule


def use_maths(md: MarkdownIt) -> MarkdownIt:
    """Add the maths rules to `md` (dollars through dollarmath, then backslash delimiters)."""
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.dollarmath.index import math_block_dollar

    md.use(dollarmath_plugin, allow_labels=False, allow_space=False, allow_digits=False,
           allow_blank_lines=False, double_inline=True)
    md.block.ruler.at("math_block", _one_display(math_block_dollar(
        allow_labels=False, allow_blank_lines=False)))
    md.inline.ruler.before("escape", "math_bracket", _bracket_inline)
    md.block.ruler.before("fence", "math_bracket_block", _bracket_block,
                          {"alt": ["paragraph", "reference", "blockquote", "list"]})
    md.core.ruler.push("math_alt_text", _alt_text)
    return md


# --- TeX -> MathML ---------------------------------------------------------------------------


@lru_cache(maxsize=16384)
def _convert(tex: str, display: bool) -> bytes | str:
    """MathML bytes for `tex` (a `math` element, a `semantics` with the TeX annotated), or the
    reason it cannot be converted."""
    from latex2mathml.converter import convert
    from lxml import etree

    if not tex.strip():
        return "it is empty"
    unpaired = _braces(tex)
    if unpaired:
        return unpaired
    try:
        converted = convert(tex, display="block" if display else "inline")
    except Exception as exc:  # latex2mathml raises many kinds (its own, IndexError, KeyError...)
        return _reason(exc)
    try:
        parsed = etree.fromstring(converted.encode(), etree.XMLParser(resolve_entities=False,
                                                                     no_network=True))
    except etree.XMLSyntaxError as exc:
        return f"the converter wrote malformed MathML: {exc}"
    unknown = _unknown_command(parsed)
    if unknown:
        return unknown
    math = etree.Element(_M + "math", nsmap={"m": MATHML_NS})
    math.set("display", "block" if display else "inline")
    semantics = etree.SubElement(math, _M + "semantics")
    children = list(parsed)
    if len(children) == 1 and etree.QName(children[0]).localname == "mrow":
        semantics.append(children[0])
    else:
        mrow = etree.SubElement(semantics, _M + "mrow")
        for child in children:
            mrow.append(child)
    annotation = etree.SubElement(semantics, _M + "annotation", encoding=TEX_ENCODING)
    annotation.text = tex
    return etree.tostring(math)


_REASONS = {
    "NumeratorNotFoundError": "a fraction has no numerator",
    "DenominatorNotFoundError": "a fraction has no denominator",
    "ExtraLeftOrMissingRightError": "a \\left has no \\right",
    "MissingSuperScriptOrSubscriptError": "a ^ or _ has nothing to raise or lower",
    "DoubleSubscriptsError": "two subscripts on one base (group them with braces)",
    "DoubleSuperscriptsError": "two superscripts on one base (group them with braces)",
    "NoAvailableTokensError": "it ends too early (a command lacks its argument)",
    "InvalidStyleForGenfracError": "\\genfrac has an invalid style",
    "MissingEndError": "a \\begin{...} has no \\end{...}",
    "InvalidAlignmentError": "an array has an invalid column alignment",
    "InvalidWidthError": "a width is not a TeX length",
    "LimitsMustFollowMathOperatorError": "\\limits does not follow an operator",
}


def _reason(exc: Exception) -> str:
    name = type(exc).__name__
    return _REASONS.get(name) or f"it does not parse ({name}{': ' if str(exc) else ''}{exc})"


def _braces(tex: str) -> str | None:
    """Why the braces of `tex` do not pair (`\\{`, `\\}` and `\\\\` are not braces), or None."""
    depth = 0
    i = 0
    while i < len(tex):
        ch = tex[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return "a } closes no {"
        i += 1
    return f"{depth} {{ not closed" if depth else None


def _unknown_command(mathml: etree._Element) -> str | None:
    """latex2mathml writes a command it does not know as its name: the first such name."""
    for el in mathml.iter(_M + "mi", _M + "mo", _M + "mtext"):
        text = el.text or ""
        if len(text) > 1 and text.startswith("\\") and text[1].isalpha():
            return f"{text} is not a command MathJax or the MathML converter knows"
    return None


def tex_to_mathml(tex: str, *, display: bool = False) -> etree._Element:
    """A MathML `math` element (MathML namespace) for `tex`: the converted presentation inside
    `semantics`, with the TeX kept as `annotation encoding="application/x-tex"`. Raises
    `MathsError` when latex2mathml cannot convert it."""
    from lxml import etree

    result = _convert(tex, display)
    if isinstance(result, str):
        raise MathsError(tex, result)
    return etree.fromstring(result)


def tex_problem(tex: str) -> str | None:
    """None when `tex` converts to MathML, else why not (for lint and export diagnostics)."""
    result = _convert(tex, False)
    return result if isinstance(result, str) else None


def mathml_html(tex: str, display: bool) -> str | None:
    """The MathML of `tex` as an XML string to put into HTML, or None if it does not convert."""
    result = _convert(tex, display)
    return None if isinstance(result, str) else result.decode()


# --- maths in a field's source, for lint and for export diagnostics -------------------------------


@lru_cache(maxsize=1)
def _scanner() -> MarkdownIt:
    from dpassess.markup.parser import new_parser  # which imports this module

    return new_parser(join_text=False)  # escapes (`\\(` left unclosed) as tokens of their own


class Unbalanced(NamedTuple):
    """A maths delimiter without its partner: `source[start:end]` is the delimiter."""

    start: int
    end: int
    message: str


def _line_starts(source: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(source):
        if ch == "\n":
            starts.append(i + 1)
    return starts


_NOTHING: tuple[tuple[Maths, ...], tuple[Unbalanced, ...]] = ((), ())


def _scan(source: str) -> tuple[tuple[Maths, ...], tuple[Unbalanced, ...]]:
    """Maths spans and unpaired delimiters of `source`. Text without `$` or `\\` holds neither
    and is not parsed (most text: lint asks for every field)."""
    if "$" not in source and "\\" not in source:
        return _NOTHING
    return _parse_scan(source)


@lru_cache(maxsize=4096)
def _parse_scan(source: str) -> tuple[tuple[Maths, ...], tuple[Unbalanced, ...]]:
    maths: list[Maths] = []
    loose: list[Unbalanced] = []
    starts = _line_starts(source)
    cursor = 0
    for block in _scanner().parse(source):
        if block.map is not None:
            cursor = max(cursor, starts[min(block.map[0], len(starts) - 1)])
        if block.type == "math_block":
            assert block.map is not None
            begin = source.find("\\[" if block.markup == "\\[" else "$$", cursor)
            last = block.map[1] - 1
            end = starts[last + 1] - 1 if last + 1 < len(starts) else len(source)
            end = len(source[:end].rstrip())
            start = begin if begin != -1 else cursor
            maths.append(Maths(start, end, block.content.strip("\n"), True))
            cursor = end
            continue
        for tok in block.children or ():
            if tok.type in TYPES:
                closing = {"\\(": "\\)", "\\[": "\\]"}.get(tok.markup, tok.markup)
                raw = tok.markup + tok.content + closing
                at = source.find(raw, cursor)
                if at == -1:  # split over container prefixes (`> `): the line is the position
                    at, length = cursor, 0
                else:
                    length = len(raw)
                maths.append(Maths(at, at + length, tok.content, tok.type in DISPLAY_TYPES))
                cursor = at + length
            elif tok.type == "code_inline":
                at = source.find(tok.content, cursor)
                cursor = at + len(tok.content) if at != -1 else cursor
            elif tok.type == "text_special" and tok.info == "escape" and tok.content in "()[]":
                raw = "\\" + tok.content
                at = source.find(raw, cursor)
                at = cursor if at == -1 else at
                what = {"(": "\\( has no closing \\)", "[": "\\[ has no closing \\]",
                        ")": "\\) closes no \\(", "]": "\\] closes no \\["}[tok.content]
                loose.append(Unbalanced(at, at + 2, what))
                cursor = at + 2
            elif tok.type == "text" and "$$" in tok.content:
                at = source.find("$$", cursor)
                at = cursor if at == -1 else at
                loose.append(Unbalanced(at, at + 2, "$$ has no closing $$"))
                cursor = at + 2
    return tuple(maths), tuple(loose)


def find_maths(text: str) -> list[Maths]:
    """Every maths span of a field's Markdown source, in order, with positions in `text`
    (`text[start:end]` is the span with its delimiters; a span split by blockquote markers is
    given at its line with `start == end`). Code spans and code blocks hold no maths."""
    return list(_scan(text)[0])


def unbalanced_maths(text: str) -> list[Unbalanced]:
    """Maths delimiters in `text` left without a partner (`\\(` without `\\)`, a stray `\\]`,
    an unclosed `$$`), which are shown as plain text. A lone `$` is not one: it is a price."""
    return list(_scan(text)[1])


def mathml_problems(text: str) -> list[str]:
    """For an exporter writing MathML: one message per maths span of `text` that latex2mathml
    cannot convert (such maths is written as TeX between delimiters instead)."""
    out = []
    for span in _scan(text)[0]:
        reason = _convert(span.tex, span.display)
        if isinstance(reason, str):
            out.append(f"the maths {span.tex!r} cannot be converted to MathML ({reason}); "
                       "it is written as TeX between delimiters")
    return out
