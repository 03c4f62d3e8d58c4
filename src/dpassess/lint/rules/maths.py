"""Mathematics rules (MT): TeX that does not parse, unbalanced delimiters, Markdown emphasis
that an author meant as maths or code (`a*b*c`, `__init__`), and TeX commands that make links,
styles or classes."""

from __future__ import annotations

import re
from collections.abc import Iterator

from dpassess.lint.context import ItemContext
from dpassess.lint.registry import Hit, rule
from dpassess.lint.text import _CODE
from dpassess.markup.markdown import to_inline_html
from dpassess.markup.maths import find_maths, tex_problem, unbalanced_maths
from dpassess.markup.sanitize import ACTIVE_TEX, tex_commands
from dpassess.markup.typst_maths import typst_problem
from dpassess.model import Item


def _label(loc: tuple[str | int, ...]) -> str:
    return ".".join(str(s) for s in loc[2:])


def _may_hold_maths(text: str) -> bool:
    return "$" in text or "\\(" in text or "\\[" in text or "\\)" in text or "\\]" in text


def _where(text: str, at: int) -> str:
    """A 1-based line and column inside a field (`line 2, column 5`, or `column 5`)."""
    line = text.count("\n", 0, at)
    col = at - (text.rfind("\n", 0, at) + 1) + 1
    return f"line {line + 1}, column {col}" if line else f"column {col}"


@rule(
    "MT001", "tex-error", "error",
    key_risk="Yes: students read broken TeX (or red MathJax errors) instead of the formula.",
    fix="Correct the TeX: close every brace, give ^ and _ something to raise or lower, use "
    "commands MathJax knows.",
)
def tex_error(ctx: ItemContext[Item]) -> Iterator[Hit]:
    r"""## What it does
    Parses the TeX of every maths span (`$...$`, `\(...\)`, `$$...$$`, `\[...\]`) and reports
    the first that does not parse, with its position inside the field (the column counts the
    field's own characters, from 1).

    ## Why is this bad?
    MathJax in Moodle and Canvas shows TeX it cannot parse as red error text, and the QTI export
    cannot convert it to MathML: students read `\frac{1}{` instead of the formula.

    ## Example
    ```yaml
    stem: What is $\frac{1}{n$ when n = 4?
    ```

    ## Use instead
    ```yaml
    stem: What is $\frac{1}{n}$ when n = 4?
    ```
    """
    if not _may_hold_maths(ctx.joined):
        return  # no field holds maths
    for loc, text in ctx.all_fields():
        if not _may_hold_maths(text) or loc[2] == "answers":
            continue
        for m in find_maths(text):
            problem = tex_problem(m.tex)
            if problem is not None:
                yield Hit(loc, f"{_label(loc)}: the maths {m.tex[:40]!r} at {_where(text, m.start)} "
                               f"does not parse: {problem}")
                break


@rule(
    "MT002", "unbalanced-maths", "error",
    key_risk="Yes: the rest of the field turns into a formula, or the formula into text.",
    fix="Close the maths with the delimiter it was opened with (\\( with \\), \\[ with \\], $$ "
    "with $$), or write a literal backslash as \\\\.",
)
def unbalanced_maths_rule(ctx: ItemContext[Item]) -> Iterator[Hit]:
    r"""## What it does
    Finds maths delimiters that open and never close, or close what was never opened (`\(`
    without `\)`, `\]` alone, `$$` once), with their position inside the field. A lone `$` is
    a price and never reported.

    ## Why is this bad?
    Everything after an unclosed delimiter is read as maths by MathJax, or the delimiter is
    shown as text: the rest of the stem turns into a formula, or the formula into garbage.

    ## Example
    ```yaml
    stem: The standard error is \(\sigma/\sqrt{n}. What is it for n = 4?
    ```

    ## Use instead
    ```yaml
    stem: The standard error is \(\sigma/\sqrt{n}\). What is it for n = 4?
    ```
    """
    if not _may_hold_maths(ctx.joined):
        return  # no field holds maths
    for loc, text in ctx.all_fields():
        if not _may_hold_maths(text) or loc[2] == "answers":
            continue
        for u in unbalanced_maths(text):
            yield Hit(loc, f"{_label(loc)}: {u.message} (at {_where(text, u.start)})")
            break


@rule(
    "MT004", "maths-prints-as-tex", "warning",
    key_risk="No: the printed form shows the formula's TeX source instead of the formula; the "
    "LMS exports show it as maths.",
    fix="Write the formula with what the printed forms can set (a colour by its name or as "
    "#rrggbb, a space in em, pt or mu), or suppress the rule for items that are never printed.",
)
def maths_prints_as_tex(ctx: ItemContext[Item]) -> Iterator[Hit]:
    r"""## What it does
    Converts every maths span that parses (see MT001) the way `dpassess assemble` prints it in
    the PDF forms, and reports the first that has no printed counterpart, with its position
    inside the field and what cannot be printed. Only a few TeX constructs are such: a colour
    that is neither a basic name nor `#rrggbb`, a space whose width is not a length.

    ## Why is this bad?
    The printed form shows that formula as its TeX source, in a typewriter font: students read
    `\textcolor{darkgreen}{x}` instead of the formula. The LMS exports are not affected.

    ## Example
    ```yaml
    stem: Which term of $\textcolor{darkgreen}{a} + b$ is constant?
    ```

    ## Use instead
    ```yaml
    stem: Which term of $\textcolor{green}{a} + b$ is constant?
    ```
    """
    if not _may_hold_maths(ctx.joined):
        return  # no field holds maths
    for loc, text in ctx.all_fields():
        if not _may_hold_maths(text) or loc[2] == "answers":
            continue
        for m in find_maths(text):
            if tex_problem(m.tex) is not None:
                continue  # MT001 reports it
            problem = typst_problem(m.tex)
            if problem is not None:
                yield Hit(loc, f"{_label(loc)}: the maths {m.tex[:40]!r} at {_where(text, m.start)} "
                               f"prints as TeX source on paper (the PDF forms cannot set "
                               f"{problem})")
                break


#: `*` or `_` touching a letter or digit on both sides (`a*b`, `2*3`), or double underscores
#: around a word (`__init__`, a Python name): what Markdown may read as emphasis where an author
#: meant a symbol (`*stable*` and `**only**` are emphasis as meant).
_INTRAWORD = re.compile(r"[^\W_][*_]+[^\W_]|(?<![\w*])__[^\W_]+__(?![\w*])")
_EMPHASIS_TAG = re.compile(r"<(em|strong)>")


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    out, last = [], 0
    for a, b in sorted(spans):
        if a < last:
            continue
        out.append(text[last:a])
        out.append(" " * (b - a))
        last = b
    out.append(text[last:])
    return "".join(out)


@rule(
    "MT003", "accidental-emphasis", "warning",
    key_risk="Yes, but the author may mean the emphasis: Markdown drops the characters, so 2*3*4 "
             "reads as 234 with the 3 in italics; the rule cannot tell, so it warns.",
    fix="Write the expression as maths ($a*b*c$ or $a \\cdot b$) or in a code span "
    "(`snake_case`, `__init__`), or escape the character (\\*).",
)
def accidental_emphasis(ctx: ItemContext[Item]) -> Iterator[Hit]:
    r"""## What it does
    Finds a `*` or `_` between letters or digits (`a*b*c`, `2*3*4`) or double underscores
    around a word (`__init__`) outside code and maths, where Markdown renders emphasis: the
    text is rendered and the finding made only when it holds italics or bold. Emphasis written
    as such (`*not*`, `**only**`) is not reported.

    ## Why is this bad?
    Markdown eats the characters: `a*b*c` is shown as a*b*c with the b in italics and both
    asterisks gone, `__init__` as a bold "init". The item no longer says what the author wrote.

    ## Example
    ```yaml
    stem: What is 2*3*4, and what does __init__ do?
    ```

    ## Use instead
    ```yaml
    stem: What is $2 \cdot 3 \cdot 4$, and what does `__init__` do?
    ```
    """
    joined = ctx.joined
    if "*" not in joined and "_" not in joined:
        return
    for loc, text in ctx.all_fields():
        if ("*" not in text and "_" not in text) or loc[2] in ("title", "answers"):
            continue
        spans = [m.span() for m in _CODE.finditer(text)]
        if _may_hold_maths(text):
            spans += [(m.start, m.end) for m in find_maths(text)]
        prose = _blank(text, spans) if spans else text
        for m in _INTRAWORD.finditer(prose):
            if _makes_emphasis(text, m.start(), m.end()):
                yield Hit(loc, f"{_label(loc)}: Markdown reads {m.group(0)!r} as emphasis and "
                               f"drops the {'asterisks' if '*' in m.group(0) else 'underscores'}")
                break


def _makes_emphasis(text: str, start: int, end: int) -> bool:
    """Whether the `*` and `_` in `text[start:end]` open or close emphasis: the rendered text
    holds fewer <em> and <strong> once they are escaped."""
    emph = len(_EMPHASIS_TAG.findall(to_inline_html(text)))
    if not emph:
        return False
    escaped = re.sub(r"([*_])", r"\\\1", text[start:end])
    return len(_EMPHASIS_TAG.findall(to_inline_html(text[:start] + escaped + text[end:]))) < emph


@rule(
    "MT005", "tex-link-or-style", "error",
    key_risk="No, but the maths carries a link, a style or a class that the exports leave "
    "out: an error for safety, as LM004.",
    fix="Write the link, colour box or style outside the maths (a Markdown link "
    "[text](https://...) next to it), or drop it; \\color{...} is kept.",
)
def tex_link_or_style(ctx: ItemContext[Item]) -> Iterator[Hit]:
    r"""## What it does
    Finds TeX commands in maths that make links, styles, classes or actions: `\href`, `\url`,
    `\style`, `\class`, `\cssId`, `\colorbox`, `\fcolorbox`, `\bbox`, `\htmlClass`,
    `\htmlStyle`, `\htmlId`, `\htmlData`, `\data`, `\toggle`, `\mathtip`, `\texttip`,
    `\unicode` and `\require`.

    ## Why is this bad?
    They become live attributes of the formula (a `javascript:` link, CSS with `url(...)`, a
    class the page's scripts react to) in MathJax and in the MathML of the QTI export, and
    `\require` loads code. The exports keep only the MathML that maths needs and leave these
    out, so the formula also shows differently from what was written.

    ## Example
    ```yaml
    stem: The gradient is $\href{https://example.org}{\nabla L}$ and $\colorbox{yellow}{g}$.
    ```

    ## Use instead
    ```yaml
    stem: The gradient is $\nabla L$ ([definition](https://example.org)) and $\color{orange}{g}$.
    ```
    """
    if not _may_hold_maths(ctx.joined):
        return  # no field holds maths
    for loc, text in ctx.all_fields():
        if "\\" not in text or not _may_hold_maths(text):
            continue
        for m in find_maths(text):
            found = next((name for _, name in tex_commands(m.tex) if name in ACTIVE_TEX), None)
            if found is not None:
                yield Hit(loc, f"{_label(loc)}: the maths at {_where(text, m.start)} uses "
                               f"\\{found}, which makes a link, a style or an action")
                break
