"""Maths on the printed forms: every formula of the maths bank and of the authoring docs prints
as maths in the PDF, never as its TeX source. The oracle is the PDF's own text, read back by
pypdf, against the text of the MathML that latex2mathml (an independent converter) gives for
the same TeX: what the formula shows may be there, TeX syntax may not."""

from __future__ import annotations

import io
import itertools
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from conftest import ROOT
from dpassess.assemble import assemble_problem
from dpassess.assemble.output import collection
from dpassess.assemble.paper import Paper, compile_pdf
from dpassess.assemble.problem import resolve
from dpassess.bank.load import load_bank
from dpassess.markup.maths import find_maths, tex_problem, tex_to_mathml
from dpassess.markup.typst_maths import tex_to_typst, typst_problem
from dpassess.model.blueprint import Blueprint

pypdf = pytest.importorskip("pypdf")
typst = pytest.importorskip("typst")

MATHS_BANK = ROOT / "tests" / "banks" / "maths"
DOCS = [ROOT / "docs" / "maths.md", ROOT / "docs" / "authoring.md"]


def pdf_pages(data: bytes) -> list[str]:
    return [page.extract_text() for page in pypdf.PdfReader(io.BytesIO(data)).pages]


def tex_left_in(tex: str, shown: str) -> list[str]:
    """The pieces of TeX source in `shown` (the PDF's text of the formula `tex`): a backslash,
    a command's name, or a brace, caret, underscore or ampersand that the formula's MathML
    does not show."""
    mathml = "".join(tex_to_mathml(tex).itertext())
    left = ["\\"] if "\\" in shown else []
    left += [f"\\{name}" for name in re.findall(r"\\([A-Za-z]+)", tex)
             if re.search(rf"(?<![A-Za-z]){name}(?![A-Za-z])", shown) and name not in mathml]
    left += [c for c in "{}^_&" if c in shown and c not in mathml]
    return left


def bank_formulas() -> list[tuple[str, bool]]:
    bank = load_bank(MATHS_BANK)
    found: list[tuple[str, bool]] = []
    for item in bank.items:
        for text in _strings(item.model_dump()["text"]):
            found += [(m.tex, m.display) for m in find_maths(text)]
    return found


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def docs_formulas() -> list[tuple[str, bool]]:
    """Every formula the docs show: in their prose, code spans and code blocks (the examples
    an author copies), that the maths lint accepts."""
    found: list[tuple[str, bool]] = []
    md = MarkdownIt("commonmark")
    for doc in DOCS:
        texts = []
        for block in md.parse(doc.read_text(encoding="utf-8")):
            if block.type in ("fence", "code_block"):
                texts.append(block.content)
            texts += [t.content for t in block.children or () if t.type in ("code_inline", "text")]
        for text in texts:
            found += [(m.tex, m.display) for m in find_maths(text) if tex_problem(m.tex) is None]
    return found


def test_the_sources_hold_the_formulas_that_printed_as_tex():
    """The collections are what they should be: the docs' examples and the bank's matrix,
    decimal comma and x-bar among them."""
    docs = {tex for tex, _ in docs_formulas()}
    bank = {tex for tex, _ in bank_formulas()}
    assert {r"\frac{1}{2}", r"\sum_{i=1}^{n} i", r"3/\sqrt{4} = 1{,}5"} <= docs
    assert any(r"\begin{pmatrix}" in x for x in bank) and any(r"\bar" in x for x in bank)
    assert len(docs) >= 10 and len(bank) >= 30


@pytest.mark.parametrize("source", ["bank", "docs"])
def test_every_formula_prints_as_maths(source):
    """Each formula on a page of its own, converted as the forms convert it: no page shows
    TeX source."""
    formulas = sorted(set(bank_formulas() if source == "bank" else docs_formulas()))
    pages = []
    for tex, display in formulas:
        maths = tex_to_typst(tex, display=display)
        assert maths is not None, (tex, typst_problem(tex))
        pages.append(f"$ {maths} $" if display else f"${maths}$")
    pdf = typst.compile(("#set page(width: 16cm, height: auto)\n"
                         + "\n#pagebreak()\n".join(pages)).encode(), ignore_system_fonts=True)
    shown = pdf_pages(pdf)
    assert len(shown) == len(formulas)
    bad = {tex: left for (tex, _), text in zip(formulas, shown, strict=True)
           if (left := tex_left_in(tex, text))}
    assert not bad


@pytest.mark.parametrize(("tex", "printed"), [
    (r"0{,}03", "0,03"),                     # a decimal comma, as docs/maths.md recommends
    (r"1{,}5", "1,5"),
    (r"\bar{x}", "x"),
    (r"\binom{n}{k}", "(nk)"),
    (r"\dfrac{\sigma}{\sqrt{n}}", "σ√n"),
    (r"\mathbf{v} \cdot \hat{\beta}", "v·β"),  # Typst writes \cdot as the middle dot
])
def test_hand_worked_formulas_print_their_symbols(tex, printed):
    import unicodedata

    pdf = typst.compile(f"${tex_to_typst(tex)}$".encode(), ignore_system_fonts=True)
    text = pdf_pages(pdf)[0]
    # math italic and bold letters (𝑥, 𝐯) read as their plain letters
    plain = "".join(unicodedata.normalize("NFKC", c) for c in text if not c.isspace()
                    and unicodedata.category(c) != "Mn")
    assert plain == printed


def test_the_maths_bank_form_prints_no_tex_and_warns_of_none():
    bank = load_bank(MATHS_BANK)
    ids = [i.id for i in bank.items]
    data = {"id": "mx", "bank": ".", "forms": 1, "items": len(ids),
            "statuses": ["draft", "reviewed"], "anchors": ids, "seed": 1}
    a = assemble_problem(resolve(Blueprint.model_validate(data), "<bp>", bank))
    form = a.forms[0]
    for lang in bank.languages:
        paper = Paper(form, lang, collection(a.problem, form).title_in(lang), False, bank)
        text = "\n".join(pdf_pages(compile_pdf(paper)))
        assert "\\" not in text and "frac" not in text and "pmatrix" not in text
        assert not paper.warnings


def test_a_formula_the_paper_cannot_set_is_printed_as_tex_with_a_warning(tmp_path: Path):
    import shutil

    copy = tmp_path / "maths"
    shutil.copytree(MATHS_BANK, copy)
    item = copy / "m01-fraction.yaml"
    item.write_text(item.read_text(encoding="utf-8").replace(
        "stem: What is", "stem: $\\textcolor{darkgreen}{x}$ What is"), encoding="utf-8")
    bank = load_bank(copy)
    data = {"id": "mx", "bank": ".", "forms": 1, "items": 1, "anchors": ["m-fraction"],
            "statuses": ["draft", "reviewed"]}
    a = assemble_problem(resolve(Blueprint.model_validate(data), "<bp>", bank))
    form = a.forms[0]
    paper = Paper(form, "en", collection(a.problem, form).title_in("en"), False, bank)
    text = "\n".join(pdf_pages(compile_pdf(paper)))
    assert "\\textcolor{darkgreen}{x}" in text
    assert [w.message for w in paper.warnings] == [
        "form mx-a: the PDF prints the maths '\\\\textcolor{darkgreen}{x}' as TeX source: the "
        "colour 'darkgreen'"]
    assert paper.warnings[0].path.endswith("m01-fraction.yaml")


def _commands() -> list[str]:
    """Every command latex2mathml knows (its command lists and its symbol table)."""
    from latex2mathml import commands
    from latex2mathml.symbols_parser import SYMBOLS

    names: set[str] = {k for k in SYMBOLS if isinstance(k, str) and k.startswith("\\")}
    for value in vars(commands).values():
        if isinstance(value, str) and value.startswith("\\"):
            names.add(value)
        elif isinstance(value, set | frozenset | list | tuple | dict):
            names |= {x for x in value if isinstance(x, str) and x.startswith("\\")}
    return sorted(n for n in names if not n.startswith(("\\begin", "\\end")))


def test_every_command_the_maths_lint_accepts_prints_through_typst():
    """Each command, with two arguments, one, or none (the first form the maths lint accepts),
    converts, and Typst typesets them all, inline and displayed. The few that do not convert
    are named by `typst_problem` (lint's MT004), never by a Typst error."""
    formulas, refused = [], {}
    for name in _commands():
        tex = next((x for x in (name + "{x}{y}", name + " x", name)
                    if tex_problem(x) is None), None)
        if tex is None:
            continue
        maths = tex_to_typst(tex)
        if maths is None:
            refused[tex] = typst_problem(tex)
        else:
            formulas.append(f"${maths}$ $ {maths} $")
    assert len(formulas) > 1000
    typst.compile("\n".join(formulas).encode(), ignore_system_fonts=True)
    # what stays TeX on paper: a colour or a width that is not one (the arguments are x and y)
    assert set(refused.values()) <= {"the colour 'x'", "a space of width 'x'",
                                     "<munderover> with 0 parts"}, refused
    assert len(refused) <= 10


def test_what_the_markdown_parser_reads_as_maths_is_maths_and_nothing_else():
    """The paper takes maths from the Markdown parser (as the exports do), not by searching the
    rendered text again: an escaped backslash before a bracket and prices stay text, and TeX
    that does not parse is printed as it is, with a warning."""
    from dpassess.assemble.paper import _Typst

    bank = load_bank(MATHS_BANK)
    data = {"id": "mx", "bank": ".", "forms": 1, "items": 1, "anchors": ["m-fraction"],
            "statuses": ["draft", "reviewed"]}
    a = assemble_problem(resolve(Blueprint.model_validate(data), "<bp>", bank))
    p = Paper(a.forms[0], "en", "T", False, bank)
    conv = _Typst(p, plain=False, files={})
    literal = conv.md(r"Write \\(a\\) for a bracket; it costs \$5 or $10.")
    pdf = typst.compile(literal.encode(), ignore_system_fonts=True)
    assert " ".join(pdf_pages(pdf)[0].split()) == \
        r"Write \(a\) for a bracket; it costs $5 or $10."
    assert not conv.warnings
    broken = conv.md(r"Is \(\frac{1}{\) right?")
    pdf = typst.compile(broken.encode(), ignore_system_fonts=True)
    assert r"\(\frac{1}{\)" in pdf_pages(pdf)[0]
    assert [w.message for w in conv.warnings] == [
        "form mx-a: the PDF prints the maths '\\\\frac{1}{' as TeX source: 1 { not closed"]


_PIECES = [r"\frac", r"\dfrac", r"\sqrt", r"\bar", r"\hat", r"\overline", r"\binom", r"\mathbf",
           r"\text", r"\left(", r"\right)", r"\sum", r"\lim", r"\sigma", r"\{", r"\}", r"\,",
           r"\\", r"\begin{pmatrix}", r"\end{pmatrix}", r"\begin{cases}", r"\end{cases}",
           r"\operatorname", r"\color", r"\mathrm", r"\infty", r"\to", r"\cdot", r"\#", r"\$",
           r"\%", r"\&", "{", "}", "^", "_", "&", "x", "n", "2", "0.5", "{,}", ",", ";", "/",
           "'", '"', "#", "(", ")", "[", "]", "|", "<", ">", "=", "-", "+", "*", "!", ":", " ",
           "é", "σ", "@", "~", "`", "?", "red", "ab"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=14))
def test_any_tex_the_maths_lint_accepts_prints_or_is_named(pieces):
    """TeX put together from pieces (commands, braces, scripts, Typst's own syntax characters):
    whatever the maths lint accepts either converts to Typst maths that Typst typesets, or is
    one of the formulas `typst_problem` names. No Typst error, whatever the TeX holds."""
    tex = "".join(pieces)
    if tex_problem(tex) is not None:
        return
    maths = tex_to_typst(tex)
    if maths is None:
        assert typst_problem(tex)
        return
    typst.compile(f"${maths}$ $ {maths} $".encode(), ignore_system_fonts=True)


#: A stem with a tall formula on each of its two lines, and options that are tall formulas,
#: every part in letters of its own (math italic in the PDF): `\\` is a hard line break.
TALL = r"""schema: 1
id: tall
type: single_choice
topic: t
options: [a, b, c, d]
key: a
shuffle: false
text:
  en:
    stem: "$\\dfrac{p}{q}$ is on the first line of the stem,\\\n$\\dfrac{r}{s}$ is on the second."
    options:
      a: $\dfrac{a}{\sqrt{b}}$
      b: $\dfrac{c}{d}$
      c: $\sqrt{\dfrac{e}{f}}$
      d: $\dfrac{g}{k}$
"""


def _glyph_heights(pdf: bytes) -> dict[str, tuple[float, float]]:
    """Each math italic letter of page 1 (as its plain letter) -> the lowest bottom and the
    highest top of its glyphs' boxes, in PDF points (y upwards), as pdfium reads them."""
    import unicodedata

    pdfium = pytest.importorskip("pypdfium2")
    page = pdfium.PdfDocument(pdf)[0]
    text = page.get_textpage()
    out: dict[str, tuple[float, float]] = {}
    n, count = 0, text.count_chars()
    while n < count:
        unit = pdfium.raw.FPDFText_GetUnicode(text, n)
        if 0xD800 <= unit < 0xDC00:  # a UTF-16 surrogate pair: one character, two indices
            unit = 0x10000 + ((unit - 0xD800) << 10) + (
                pdfium.raw.FPDFText_GetUnicode(text, n + 1) - 0xDC00)
        if 0x1D400 <= unit <= 0x1D7FF:
            _, bottom, _, top = text.get_charbox(n)
            letter = unicodedata.normalize("NFKC", chr(unit))
            low, high = out.get(letter, (bottom, top))
            out[letter] = (min(low, bottom), max(high, top))
        n += 2 if unit >= 0x10000 else 1
    return out


def test_tall_inline_maths_never_runs_into_the_line_above_or_below(tmp_path: Path):
    """Display-style fractions in a stem's lines and in the options take the room they need:
    the glyphs of each line (or option) end above the highest glyph of the next. (Typst lets
    a tall inline formula reach into the leading; in the options' grid that put a numerator
    on the option above.)"""
    (tmp_path / "bank.yaml").write_text(
        "schema: 1\nid: tall\ntitle: {en: Tall}\nlanguages: [en]\ndefault_language: en\n",
        encoding="utf-8")
    (tmp_path / "01-tall.yaml").write_text(TALL, encoding="utf-8")
    bank = load_bank(tmp_path)
    data = {"id": "tx", "bank": ".", "forms": 1, "items": 1, "anchors": ["tall"],
            "statuses": ["draft", "reviewed"]}
    a = assemble_problem(resolve(Blueprint.model_validate(data), "<bp>", bank))
    paper = Paper(a.forms[0], "en", "Tall", False, bank)
    glyphs = _glyph_heights(compile_pdf(paper))
    assert not paper.warnings
    lines = ["pq", "rs", "ab", "cd", "ef", "gk"]  # top to bottom: the stem's two lines, A-D
    assert set(glyphs) == set("".join(lines))
    for upper, lower in itertools.pairwise(lines):
        bottom = min(glyphs[c][0] for c in upper)
        top = max(glyphs[c][1] for c in lower)
        assert bottom > top, (upper, lower, bottom, top)
