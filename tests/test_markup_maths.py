"""Maths in Markdown: the TeX comes back exactly through an independent HTML parser (lxml.html),
MathML validates against the W3C MathML 2 schema that QTI 2.1 imports and inside a QTI 2.1 item
against the official QTI XSD, and lint's positions are hand-worked."""

from __future__ import annotations

from pathlib import Path

import lxml.html
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st
from lxml import etree

from dpassess.markup.markdown import to_html, to_inline_html, to_plain
from dpassess.markup.maths import (
    MATHML_NS,
    TEX_ENCODING,
    Maths,
    MathsError,
    Unbalanced,
    find_maths,
    mathml_problems,
    tex_problem,
    tex_to_mathml,
    unbalanced_maths,
)
from dpassess.markup.xhtml import QTI_NS, append_flow

SCHEMAS = Path(__file__).parent / "schemas"
M = f"{{{MATHML_NS}}}"
Q = f"{{{QTI_NS}}}"

# TeX-like text with everything Markdown, HTML and GIFT treat specially.
_TEX_CHARS = "abxyz019 *_{}\\<>&#~=:^[]()'\"|!-+"
tex_like = st.text(alphabet=_TEX_CHARS, min_size=1, max_size=40)


def _text_of(html: str) -> str:
    """What a browser's parser reads from the HTML (lxml.html, not our code)."""
    return str(lxml.html.fragment_fromstring(html, create_parent="div").text_content())


# --- TeX survives Markdown -> HTML -> an HTML parser ---------------------------------------------


@given(tex_like)
@example(r"a*b*c")
@example(r"\frac{a_1}{b_2} < c & d")
@example(r"x \\ y")
@example(r"\{a\}")
@example(r"<b>x</b>")
@example(r"&amp;")
def test_backslash_paren_maths_comes_back_exactly(tex: str) -> None:
    assume(tex.strip() and "\\)" not in tex and not tex.endswith("\\"))
    source = f"Let *w* and \\({tex}\\) be."
    assert find_maths(source) == [Maths(12, 16 + len(tex), tex, False)]
    assert _text_of(to_html(source)) == f"Let w and \\({tex}\\) be."


@given(tex_like)
@example(r"\sum_{i=1}^n x_i")
def test_double_dollar_maths_comes_back_as_display_tex(tex: str) -> None:
    assume(tex.strip() and "$" not in tex and not tex.endswith("\\"))
    source = f"so $${tex}$$ holds"
    assert find_maths(source) == [Maths(3, 7 + len(tex), tex, True)]
    assert _text_of(to_html(source)) == f"so \\[{tex}\\] holds"


@given(tex_like)
def test_dollar_maths_comes_back_as_inline_tex(tex: str) -> None:
    assume(tex == tex.strip() and "$" not in tex and not tex.endswith("\\"))
    source = f"with ${tex}$ here"
    assert find_maths(source) == [Maths(5, 7 + len(tex), tex, False)]
    assert _text_of(to_inline_html(source)) == f"with \\({tex}\\) here"


@given(tex_like)
def test_mathml_annotation_keeps_the_tex(tex: str) -> None:
    assume(tex.strip() and "\\)" not in tex and not tex.endswith("\\"))
    html = to_html(f"\\({tex}\\)", "mathml")
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    if tex_problem(tex) is None:
        xml = etree.fromstring(html.encode())  # well-formed XML, the MathML in its namespace
        annotations = xml.findall(f".//{M}annotation")
        assert [a.text for a in annotations] == [tex]
        assert annotations[0].get("encoding") == TEX_ENCODING
    else:
        assert mathml_problems(f"\\({tex}\\)")
        assert root.text_content() == f"\\({tex}\\)"


def test_the_example_from_the_report_keeps_its_maths() -> None:
    stem = (r"The standard error of the mean is \(\sigma/\sqrt{n}\). With $$n = 4$$ ... "
            "Also a*b*c.")
    assert to_html(stem) == (r"<p>The standard error of the mean is \(\sigma/\sqrt{n}\). "
                             r"With \[n = 4\] ... Also a<em>b</em>c.</p>")


@pytest.mark.parametrize(("source", "html"), [
    ("costs $5 and $10", "<p>costs $5 and $10</p>"),
    # `$5 to $` cannot close (a space before it), but `$10$` is maths: write `\$` for prices
    ("from $5 to $10$", "<p>from $5 to \\(10\\)</p>"),
    (r"only \$3, not $x$", r"<p>only $3, not \(x\)</p>"),
    (r"a literal \\(x\\)", r"<p>a literal \(x\)</p>"),
    (r"\$x\$", "<p>$x$</p>"),
    ("`$x$` and `\\(y\\)`", r"<p><code>$x$</code> and <code>\(y\)</code></p>"),
    ("$ x $", "<p>$ x $</p>"),
    ("$x$2", "<p>$x$2</p>"),
])
def test_dollars_that_are_not_maths(source: str, html: str) -> None:
    assert to_html(source) == html


def test_display_block_keeps_markdown_syntax_as_tex() -> None:
    source = "Solve:\n\n\\[\n- x < y \\\\\n# 1. z\n\\]\n\nand\n\n$$\n* a * b *\n$$"
    assert to_html(source) == ("<p>Solve:</p>\n<p>\\[- x &lt; y \\\\\n# 1. z\\]</p>\n"
                               "<p>and</p>\n<p>\\[* a * b *\\]</p>")
    spans = find_maths(source)
    assert [s.tex for s in spans] == ["- x < y \\\\\n# 1. z", "* a * b *"]
    assert [source[s.start:s.end] for s in spans] == [
        "\\[\n- x < y \\\\\n# 1. z\n\\]", "$$\n* a * b *\n$$"]


def test_maths_in_lists_and_plain_text() -> None:
    assert to_html("- $a_1$\n- $a_2$") == "<ul>\n<li>\\(a_1\\)</li>\n<li>\\(a_2\\)</li>\n</ul>"
    assert to_plain(r"Luas \(\pi r^2\) *cm*") == r"Luas \(\pi r^2\) cm"


# --- lint's view ---------------------------------------------------------------------------------


def test_find_maths_positions_are_in_the_source() -> None:
    text = "Nilai $x_1$ dan\n\\(y^2\\), lalu `\\(kode\\)` dan \\[z\\]."
    spans = find_maths(text)
    assert [text[s.start:s.end] for s in spans] == ["$x_1$", "\\(y^2\\)", "\\[z\\]"]
    assert [s.display for s in spans] == [False, False, True]
    assert spans[0] == Maths(6, 11, "x_1", False)


def test_unbalanced_delimiters() -> None:
    text = r"a \( b and c \] d `\(` $$e"
    assert unbalanced_maths(text) == [
        Unbalanced(2, 4, r"\( has no closing \)"),
        Unbalanced(13, 15, r"\] closes no \["),
        Unbalanced(23, 25, "$$ has no closing $$"),
    ]
    assert unbalanced_maths("costs $5") == []
    assert unbalanced_maths(r"\(x\) $$y$$") == []


@pytest.mark.parametrize(("tex", "problem"), [
    (r"\frac{1}{2}", None),
    (r"\text{luas} = \pi r^2", None),
    (r"\{a\}", None),
    (r"\frac{1}{", "1 { not closed"),
    ("a}", "a } closes no {"),
    ("x^", "a ^ or _ has nothing to raise or lower"),
    (r"\left( x", r"a \left has no \right"),
    (r"\begin{pmatrix} 1 & 2", r"a \begin{...} has no \end{...}"),
    (r"\fracc{1}{2}", r"\fracc is not a command MathJax or the MathML converter knows"),
])
def test_tex_problem(tex: str, problem: str | None) -> None:
    assert tex_problem(tex) == problem


def test_unconvertible_maths_is_kept_as_tex_and_named() -> None:
    source = r"bad \(\frac{1}{\) good \(x\)"
    html = to_html(source, "mathml")
    assert _text_of(html).startswith(r"bad \(\frac{1}{\) good ")
    assert html.count("<m:math") == 1
    assert mathml_problems(source) == [
        r"the maths '\\frac{1}{' cannot be converted to MathML (1 { not closed); "
        "it is written as TeX between delimiters"]
    with pytest.raises(MathsError):
        tex_to_mathml(r"\frac{1}{")


# --- MathML against the W3C MathML 2 schema and inside QTI 2.1 ---------------------------------

_FORMULAS = [
    r"\frac{a}{b}", r"\sum_{i=1}^{n} x_i", r"\begin{pmatrix}1&2\\3&4\end{pmatrix}",
    r"\text{luas} = \pi r^2", r"x_{ij}^2", r"\sqrt[3]{x}", r"\left(\frac{1}{2}\right)",
    r"\mathbb{R}", r"\bar{x} \pm 1{,}96\,\frac{s}{\sqrt{n}}", r"\int_0^1 f(x)\,dx",
    r"\binom{n}{k}", r"\begin{cases}1 & x>0\\0&\text{lainnya}\end{cases}", r"a < b \land c > d",
]


def _parser() -> etree.XMLParser:
    return etree.XMLParser(no_network=True, resolve_entities=False)


@pytest.fixture(scope="module")
def mathml2() -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(SCHEMAS / "w3" / "mathml2" / "mathml2.xsd"), _parser()))


@pytest.fixture(scope="module")
def qti() -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(SCHEMAS / "qti21" / "imsqti_v2p1p2.xsd"), _parser()))


@pytest.mark.parametrize("tex", _FORMULAS)
@pytest.mark.parametrize("display", [False, True])
def test_mathml_is_valid_mathml2(mathml2: etree.XMLSchema, tex: str, display: bool) -> None:
    math = tex_to_mathml(tex, display=display)
    assert mathml2.validate(etree.ElementTree(math)), mathml2.error_log.last_error
    semantics = math[0]
    assert semantics.tag == f"{M}semantics"
    assert semantics[-1].text == tex and semantics[-1].get("encoding") == TEX_ENCODING


def test_the_mathml_schema_can_fail(mathml2: etree.XMLSchema) -> None:
    bad = etree.fromstring(f'<m:math xmlns:m="{MATHML_NS}"><m:frac/></m:math>'.encode())
    assert not mathml2.validate(etree.ElementTree(bad))


def _item(stem_html: str, choice_html: str, feedback_html: str) -> etree._Element:
    item = etree.Element(Q + "assessmentItem", identifier="m1", title="m", adaptive="false",
                         timeDependent="false", nsmap={None: QTI_NS})
    decl = etree.SubElement(item, Q + "responseDeclaration", identifier="RESPONSE",
                            cardinality="single", baseType="identifier")
    etree.SubElement(etree.SubElement(decl, Q + "correctResponse"), Q + "value").text = "a"
    etree.SubElement(item, Q + "outcomeDeclaration", identifier="SCORE", cardinality="single",
                     baseType="float")
    body = etree.SubElement(item, Q + "itemBody")
    notes: set[str] = set()
    append_flow(etree.SubElement(body, Q + "div"), stem_html, notes)
    interaction = etree.SubElement(body, Q + "choiceInteraction", responseIdentifier="RESPONSE",
                                   shuffle="false", maxChoices="1")
    for oid in ("a", "b"):
        append_flow(etree.SubElement(interaction, Q + "simpleChoice", identifier=oid),
                    choice_html, notes)
    feedback = etree.SubElement(item, Q + "modalFeedback", outcomeIdentifier="FEEDBACK",
                                identifier="a", showHide="show")
    append_flow(feedback, feedback_html, notes)
    assert notes == set()
    return item


@pytest.mark.parametrize("hand_html", [False, True])
def test_mathml_inside_a_qti_item_is_xsd_valid(qti: etree.XMLSchema, hand_html: bool) -> None:
    stem = ("Hitung $\\frac{a}{b}$ jika:\n\n$$\n\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}\n$$\n\n"
            "> kutipan \\(x_1\\)\n\n- butir $\\sum_i x_i$")
    if hand_html:  # raw HTML in the text sends the tolerant HTML path
        stem += "\n\nbaris<br>baru $y$"
    item = _item(to_html(stem, "mathml"), to_inline_html(r"\(\sqrt{2}\)", "mathml"),
                 to_html(r"Karena \[x = \frac{-b}{2a}\]", "mathml"))
    assert qti.validate(etree.ElementTree(item)), qti.error_log.last_error
    annotations = [a.text for a in item.iter(f"{M}annotation")]
    assert annotations[:3] == [r"\frac{a}{b}", r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", "x_1"]
    assert len(annotations) == (8 if hand_html else 7)


def test_maths_in_an_image_description_stays_in_its_alt_text() -> None:
    html = to_html(r"![luas \(\pi r^2\) & $$x$$](img/a.png)")
    img = lxml.html.fragment_fromstring(html, create_parent="div").find(".//img")
    assert img is not None and img.get("alt") == r"luas \(\pi r^2\) & \[x\]"
    assert 'alt="luas \\(\\pi r^2\\)"' in to_html(r"![luas \(\pi r^2\)](a.png)", "mathml")


def test_maths_binds_tighter_than_emphasis_and_links() -> None:
    """As code spans do in CommonMark: a delimiter inside maths is TeX."""
    assert to_html(r"*a \(b* c\)") == r"<p>*a \(b* c\)</p>"
    assert to_html(r"[a \(x](u) y\)") == r"<p>[a \(x](u) y\)</p>"
    assert to_html(r"[\(x\)](u) **$y$**") == r'<p><a href="u">\(x\)</a> <strong>\(y\)</strong></p>'


_word = st.text(alphabet="abcdefghij.,;?!-", min_size=1, max_size=8)
_safe_tex = st.text(alphabet="abxy019 +-*_^{}<>&=:~#|", min_size=1, max_size=12).filter(
    lambda t: t == t.strip())


@st.composite
def _texts_with_maths(draw: st.DrawFn) -> tuple[str, list[Maths]]:
    """A paragraph of words and maths spans, and the spans as built (the oracle)."""
    source, spans = "", []
    for _ in range(draw(st.integers(1, 6))):
        if source:
            source += draw(st.sampled_from([" ", "\n"]))
        if draw(st.booleans()):
            source += draw(_word)
            continue
        tex = draw(_safe_tex)
        opener, closer, display = draw(st.sampled_from(
            [("$", "$", False), ("\\(", "\\)", False), ("$$", "$$", True), ("\\[", "\\]", True)]))
        spans.append(Maths(len(source), len(source) + len(opener + tex + closer), tex, display))
        source += opener + tex + closer
    return source, spans


@given(_texts_with_maths())
def test_find_maths_finds_exactly_the_spans_written(case: tuple[str, list[Maths]]) -> None:
    source, spans = case
    assert find_maths(source) == spans
    assert unbalanced_maths(source) == []
    text = _text_of(to_html(source))
    assert text.count("\\(") + text.count("\\[") == len(spans)
    pos = 0
    for s in spans:
        piece = f"\\[{s.tex}\\]" if s.display else f"\\({s.tex}\\)"
        found = text.find(piece, pos)
        assert found != -1, (piece, text)
        pos = found + len(piece)


@st.composite
def _blocks_with_maths(draw: st.DrawFn) -> tuple[str, list[Maths]]:
    """Paragraphs (from `_texts_with_maths`), display blocks on lines of their own, list items."""
    source, spans = "", []
    for _ in range(draw(st.integers(1, 4))):
        if source:
            source += "\n\n"
        kind = draw(st.sampled_from(["paragraph", "block", "item"]))
        if kind == "block":
            tex = draw(_safe_tex)
            opener, closer = draw(st.sampled_from([("$$", "$$"), ("\\[", "\\]")]))
            raw = f"{opener}\n{tex}\n{closer}"
            spans.append(Maths(len(source), len(source) + len(raw), tex, True))
            source += raw
            continue
        prefix = "- " if kind == "item" else ""
        text, inner = draw(_texts_with_maths())
        text = text.replace("\n", " ")
        spans += [m._replace(start=m.start + len(source) + len(prefix),
                             end=m.end + len(source) + len(prefix)) for m in inner]
        source += prefix + text
    return source, spans


@given(_blocks_with_maths())
def test_find_maths_over_blocks(case: tuple[str, list[Maths]]) -> None:
    source, spans = case
    assert find_maths(source) == spans
    assert unbalanced_maths(source) == []
    text = _text_of(to_html(source))
    assert text.count("\\(") + text.count("\\[") == len(spans)
