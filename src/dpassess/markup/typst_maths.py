"""TeX maths -> Typst maths markup (for the printed forms), through the MathML of
`dpassess.markup.maths`.

The TeX is parsed once, by latex2mathml (the converter the QTI export and the maths lint use),
and the MathML it gives is written as Typst: every TeX that the maths lint accepts has a
presentation tree of a few dozen MathML elements, each with a Typst counterpart (`mfrac` ->
`frac`, `mover` -> `accent` or `attach`, `mtable` -> `mat`...). Symbols are already resolved to
their characters there (`\\sigma` -> σ, `\\mathbf{v}` -> 𝐯), and each character is written as a
Typst escape (`\\u{3C3}`), so nothing in a formula is read as Typst syntax (no `/` fraction, no
`->` shorthand, no comma splitting an argument). What has no counterpart is reported
(`typst_problem`): lint warns about it, and the paper prints that formula as its TeX.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from dpassess.markup.maths import MATHML_NS, MathsError, tex_to_mathml

if TYPE_CHECKING:
    from lxml import etree

#: An empty base for scripts (`{}^{14}C`).
_EMPTY = '""'
_M = "{%s}" % MATHML_NS  # noqa: UP031 - a constant prefix, not formatting


class _NoTypst(Exception):
    """MathML with no Typst counterpart; the message says what."""


@lru_cache(maxsize=16384)
def _convert(tex: str, display: bool) -> tuple[str | None, str | None]:
    try:
        math = tex_to_mathml(tex, display=display)
    except MathsError as exc:
        return None, exc.reason
    try:
        return _Writer().row(list(math)), None
    except _NoTypst as exc:
        return None, str(exc)


def tex_to_typst(tex: str, *, display: bool = False) -> str | None:
    """Typst maths markup (to put between `$` `$`) for the TeX `tex`, or None when it cannot be
    printed as maths (`typst_problem` says why)."""
    return _convert(tex, display)[0]


def typst_problem(tex: str) -> str | None:
    """None when `tex` prints as maths on paper, else why not."""
    return _convert(tex, False)[1]


def _char(c: str) -> str:
    """One character as a Typst escape (a character of its own, never syntax)."""
    return f"\\u{{{ord(c):X}}}"


def _chars(text: str) -> str:
    return "".join(_char(c) for c in text)


def _number(text: str) -> str:
    """Digits as they are (`3`, `1.5`), anything else as escapes."""
    plain = text.replace(".", "", 1)
    return text if plain.isascii() and plain.isdigit() and not text.endswith(".") else _chars(text)


def _string(text: str) -> str:
    """A Typst string literal (upright text in maths)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
    return f'"{escaped}"'


#: Characters of an `mover` / `munder` that Typst draws with a function of its own.
_OVER = {"\u2015": "overline", "\u203e": "overline", "\u23de": "overbrace",
         "\u23b4": "overbracket", "\u23dc": "overparen", "\u2192": "arrow"}
_UNDER = {"\u2015": "underline", "\u203e": "underline", "_": "underline", "\u0332": "underline",
          "\u23df": "underbrace", "\u23b5": "underbracket", "\u23dd": "underparen"}
#: Characters of an `mover` that are accents (TeX's \hat, \bar, \dot...).
_ACCENTS = frozenset("^\u02c6\u0302~\u02dc\u0303\u00af\u02c9\u0304\u02d9\u0307\u00a8\u0308"
                     "\u02da\u030a\u00b4\u02ca\u0301`\u02cb\u0300\u02d8\u0306\u02c7\u030c"
                     "\u20d7\u2190\u2194\u20d6\u20e1")
_OPENERS = frozenset("([{|\u2016\u27e8\u230a\u2308")
_CLOSERS = frozenset(")]}|\u2016\u27e9\u230b\u2309")
#: Operator names whose scripts TeX sets below them in display maths (latex2mathml marks
#: only some of them `movablelimits`).
_LIMITS = frozenset({"lim", "max", "min", "sup", "inf", "det", "gcd", "Pr"})
#: Colours Typst knows by the name TeX uses.
_COLOURS = frozenset({"black", "gray", "silver", "white", "navy", "blue", "aqua", "teal",
                      "purple", "fuchsia", "maroon", "red", "orange", "yellow", "olive", "green",
                      "lime"})
#: Named MathML spaces, in em.
_SPACES = {"veryverythinmathspace": 1 / 18, "verythinmathspace": 2 / 18,
           "thinmathspace": 3 / 18, "mediummathspace": 4 / 18, "thickmathspace": 5 / 18,
           "verythickmathspace": 6 / 18, "veryverythickmathspace": 7 / 18}
#: MathML units Typst lacks, in em (TeX's: 1ex of Computer Modern is 0.43em, 18mu are 1em).
_UNITS = {"ex": 0.43, "px": 0.075, "mu": 1 / 18}


def _length(value: str) -> str:
    """A MathML length as Typst em (`0.167em`, `-3mu`, `thinmathspace`...)."""
    v = value.strip()
    sign = -1.0 if v.startswith("negative") else 1.0
    named = _SPACES.get(v.removeprefix("negative"))
    if named is not None:
        return f"{sign * named:.3f}em"
    for unit in ("em", "pt", "mm", "cm", "in", *_UNITS):
        if v.endswith(unit):
            try:
                number = float(v[: -len(unit)])
            except ValueError:
                break
            if unit in _UNITS:
                return f"{number * _UNITS[unit]:.3f}em"
            return f"{number:g}{unit}"
    raise _NoTypst(f"a space of width {value!r}")


class _Writer:
    def row(self, nodes: list[etree._Element]) -> str:
        out: list[str] = []
        i = 0
        while i < len(nodes):
            el = nodes[i]
            # \binom and friends: ( mfrac without a line )
            if (i + 2 < len(nodes) and _name(el) == "mo" and el.text == "("
                    and _name(nodes[i + 1]) == "mfrac"
                    and nodes[i + 1].get("linethickness") in ("0", "0px", "0em")
                    and _name(nodes[i + 2]) == "mo" and nodes[i + 2].text == ")"):
                a, b = self._args(nodes[i + 1], 2)
                out.append(f"binom({a}, {b})")
                i += 3
                continue
            # pmatrix and friends: a table between delimiters, which grow with it
            if (i + 2 < len(nodes) and _name(el) == "mo" and el.text in _OPENERS
                    and _name(nodes[i + 1]) == "mtable" and _name(nodes[i + 2]) == "mo"
                    and nodes[i + 2].text in _CLOSERS):
                out.append(f"lr({_chars(el.text or '')} {self.node(nodes[i + 1])} "
                           f"{_chars(nodes[i + 2].text or '')})")
                i += 3
                continue
            out.append(self.node(el))
            i += 1
        return " ".join(x for x in out if x)

    def node(self, el: etree._Element) -> str:
        name = _name(el)
        kids = list(el)
        match name:
            case "mrow" | "semantics" | "mpadded":
                if name == "semantics":
                    kids = [k for k in kids if _name(k) not in ("annotation", "annotation-xml")]
                fenced = self._fenced(kids)
                if fenced is not None:
                    return fenced
                if len(kids) == 1 and _name(kids[0]) == "mo" and kids[0].text:
                    # a braced operator ({,} in 0{,}5) is an ordinary symbol, as in TeX
                    return f"class(\"normal\", {self.node(kids[0])})"
                return self.row(kids)
            case "mi":
                return self._identifier(el)
            case "mn":
                return _number(el.text or "")
            case "mo":
                text = el.text or ""
                if not text:
                    return ""
                if len(text) > 1 and any(c.isalpha() for c in text):
                    # an operator name; TeX puts the scripts of some below them when displayed
                    below = el.get("movablelimits") == "true" or text in _LIMITS
                    limits = ", limits: #true" if below else ""
                    return f"op({_string(text)}{limits})"
                return _chars(text)
            case "mtext" | "ms":
                return _string(el.text or "") if el.text else ""
            case "mspace":
                if el.get("linebreak") == "newline":
                    return "\\ "
                width = el.get("width")
                return f"#h({_length(width)})" if width else ""
            case "mfrac":
                a, b = self._args(el, 2)
                if el.get("linethickness") in ("0", "0px", "0em"):
                    return f"mat(delim: #none, {a}; {b})"
                return f"frac({a}, {b})"
            case "msqrt":
                return f"sqrt({self.row(kids) or _EMPTY})"
            case "mroot":
                base, index = self._args(el, 2)
                return f"root({index}, {base})"
            case "msub" | "msup" | "msubsup":
                args = self._args(el, 3 if name == "msubsup" else 2)
                scripts = {"msub": ("b",), "msup": ("t",), "msubsup": ("b", "t")}[name]
                attached = ", ".join(f"{k}: {v}" for k, v in zip(scripts, args[1:], strict=True))
                return f"attach({args[0]}, {attached})"
            case "mover" | "munder" | "munderover":
                return self._under_over(el, name)
            case "mstyle":
                return self._style(el)
            case "mtable":
                return self._table(el)
            case "menclose":
                return self._enclose(el)
            case "mphantom":
                return f"#hide[${self.row(kids)}$]"
            case _:
                raise _NoTypst(f"the MathML element <{name}>")

    def _args(self, el: etree._Element, count: int) -> list[str]:
        kids = list(el)
        if len(kids) != count:
            raise _NoTypst(f"<{_name(el)}> with {len(kids)} parts")
        return [self.node(k) or _EMPTY for k in kids]

    def _identifier(self, el: etree._Element) -> str:
        text = el.text or ""
        if text == "&":
            return "&"  # an alignment point (aligned environments)
        if not text:
            return ""
        variant = el.get("mathvariant")
        if len(text) > 1:
            return f"upright({_string(text)})" if variant in (None, "normal") else \
                self._variant(_string(text), variant)
        shown = text if text.isascii() and text.isalpha() else _chars(text)
        return shown if variant is None else self._variant(shown, variant)

    @staticmethod
    def _variant(body: str, variant: str) -> str:
        styles = {"normal": "upright({})", "bold": "bold(upright({}))",
                  "italic": "italic({})", "bold-italic": "bold(italic({}))",
                  "double-struck": "bb({})", "script": "cal({})", "fraktur": "frak({})",
                  "sans-serif": "sans({})", "monospace": "mono({})",
                  "bold-fraktur": "bold(frak({}))", "bold-script": "bold(cal({}))",
                  "bold-sans-serif": "bold(sans({}))",
                  "sans-serif-italic": "italic(sans({}))",
                  "sans-serif-bold-italic": "bold(italic(sans({})))"}
        if variant not in styles:
            raise _NoTypst(f"the maths font {variant!r}")
        return styles[variant].format(body)

    def _fenced(self, kids: list[etree._Element]) -> str | None:
        """`\\left( ... \\right)`, a row between stretchy fences (either may be missing, as in
        `cases`): Typst's `lr`, which scales them."""
        if len(kids) < 2:
            return None
        first, last = kids[0], kids[-1]
        left = _name(first) == "mo" and first.get("form") == "prefix"
        right = _name(last) == "mo" and last.get("form") == "postfix"
        if not (left or right):
            return None
        inner = []
        for k in kids[int(left):len(kids) - int(right)]:
            if _name(k) == "mo" and k.get("fence") == "true" and k.get("stretchy") == "true":
                inner.append(f"mid({_chars(k.text or '')})")  # \\middle
            else:
                inner.append(self.node(k))
        opened = _chars(first.text or "") if left else ""
        closed = _chars(last.text or "") if right else ""
        body = " ".join(x for x in (opened, *inner, closed) if x)
        return f"lr({body})"

    def _under_over(self, el: etree._Element, name: str) -> str:
        kids = list(el)
        base = (self.node(kids[0]) if kids else "") or _EMPTY
        if name in ("mover", "munder") and len(kids) == 2:
            mark = kids[1]
            mark_text = mark.text or "" if _name(mark) == "mo" and not len(mark) else ""
            table = _OVER if name == "mover" else _UNDER
            if mark_text in table:
                return f"{table[mark_text]}({base})"
            if name == "mover" and mark_text in _ACCENTS:
                return f"accent({base}, {_chars(mark_text)})"
        args = self._args(el, 3 if name == "munderover" else 2)
        scripts = {"mover": ("t",), "munder": ("b",), "munderover": ("b", "t")}[name]
        attached = ", ".join(f"{k}: {v}" for k, v in zip(scripts, args[1:], strict=True))
        return f"attach(limits({base}), {attached})"

    def _style(self, el: etree._Element) -> str:
        body = self.row(list(el)) or _EMPTY
        display = el.get("displaystyle")
        if display == "true":
            body = f"display({body})"
        elif display == "false":
            body = f"inline({body})"
        colour = el.get("mathcolor")
        if colour:
            if colour in _COLOURS:
                fill = colour
            elif colour.startswith("#") and len(colour) in (4, 7) and all(
                    c in "0123456789abcdefABCDEF" for c in colour[1:]):
                fill = f"rgb({_string(colour)})"
            else:
                raise _NoTypst(f"the colour {colour!r}")
            body = f"#text(fill: {fill})[${body}$]"
        return body

    def _table(self, el: etree._Element) -> str:
        rows: list[str] = []
        align = ""
        for tr in el:
            if _name(tr) not in ("mtr", "mlabeledtr"):
                raise _NoTypst(f"the MathML element <{_name(tr)}> in a table")
            cells = []
            for td in tr:
                if _name(td) != "mtd":
                    raise _NoTypst(f"the MathML element <{_name(td)}> in a table row")
                cells.append(self.row(list(td)) or "#none")
                align = align or td.get("columnalign", "")
            rows.append(", ".join(cells))
        where = {"left": ", align: #left", "right": ", align: #right"}.get(align, "")
        return f"mat(delim: #none{where}, {'; '.join(rows)})"

    def _enclose(self, el: etree._Element) -> str:
        body = self.row(list(el)) or _EMPTY
        notation = " ".join(sorted((el.get("notation") or "box").split()))
        match notation:
            case "box" | "roundedbox":
                return f"#box(stroke: 0.5pt, inset: 2pt, baseline: 20%, ${body}$)"
            case "updiagonalstrike":
                return f"cancel({body})"
            case "downdiagonalstrike":
                return f"cancel(inverted: #true, {body})"
            case "downdiagonalstrike updiagonalstrike":
                return f"cancel(cross: #true, {body})"
            case "horizontalstrike":
                return f"#strike[${body}$]"
            case _:
                raise _NoTypst(f"the enclosure {notation!r}")


def _name(el: etree._Element) -> str:
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    return tag[len(_M):] if tag.startswith(_M) else tag
