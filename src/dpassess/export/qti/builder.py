"""What every item type's QTI builder shares -> the parts of an `assessmentItem`: its root, its
body (the stimulus, the stem), modal feedback written as Canvas keeps it, the SCORE, MAXSCORE and
FEEDBACK declarations, and the small response-processing rules built from them."""

from __future__ import annotations

import io
from collections.abc import Hashable

from lxml import etree
from lxml.etree import SubElement

from dpassess.diagnostics import Diagnostic, warning
from dpassess.export.qti.names import (
    FORMAT,
    QTI_LOCATION,
    QTI_NS,
    QTI_NSMAP,
    SCHEMA_LOCATION,
    TOOL,
    XML_LANG,
    Q,
    number,
    plain,
)
from dpassess.export.xmlfast import ChildStream, copied, hold, nsmap
from dpassess.lms import canvas
from dpassess.markup.markdown import item_title, to_html, to_inline_html
from dpassess.markup.maths import MATHML_NS, MathsMode, mathml_problems
from dpassess.markup.sanitize import defuse_tex, tex_warning
from dpassess.markup.xhtml import MARKUP, append_flow
from dpassess.markup.xmlchars import xml_safe
from dpassess.model import Item, Stimulus


class Builder:
    """What every builder needs: the item's content in the language, its stimulus (if it is
    read with one), its identifier in the package, and its warnings."""

    def __init__(self, item: Item, lang: str, path: str, identifier: str,
                 stimulus: Stimulus | None = None, maths: MathsMode = "mathml",
                 held: list[bytes] | None = None) -> None:
        self.item, self.lang, self.path = item, lang, path
        #: with a list: the bytes of the children `constant` holds (see there)
        self.held = held
        self.identifier, self.stimulus, self.maths = identifier, stimulus, maths
        self.has_mathml = False
        self.content = item.text[lang]
        self.warnings: list[Diagnostic] = []

    def warn(self, field: str, message: str) -> None:
        self.warnings.append(warning(FORMAT, message, path=self.path, field=field,
                                     item=self.item.id))

    def text(self, field: str, source: str) -> str:
        """`source` without the characters XML cannot carry (a warning names them)."""
        clean, removed = xml_safe(source)
        if removed:
            self.warn(field, f"removed characters XML cannot carry: {removed}")
        return clean

    def html(self, field: str, source: str, *, inline: bool = False) -> str:
        """`source` (Markdown) rendered as HTML, its maths as `self.maths` says (a warning for
        each formula MathML cannot say, which stays TeX)."""
        clean = self.text(field, source)
        html = (to_inline_html if inline else to_html)(clean, self.maths)
        if self.maths == "mathml" and ("$" in clean or "\\" in clean):  # may hold maths
            for problem in mathml_problems(clean):
                self.warn(field, problem)
            if "<m:math" in html:
                self.has_mathml = True
        html, active = defuse_tex(html)  # TeX left for MathJax (tex mode, or not convertible)
        if active:
            self.warn(field, tex_warning(active))
        return html

    def flow(self, parent: etree._Element, field: str, html: str) -> bool:
        """Put rendered `html` into `parent` as QTI XHTML (what QTI does not allow is left out,
        with a warning), kept as it is by the pretty printer; True when it is markup (not plain
        text or one plain paragraph)."""
        notes: set[str] = set()
        kind = append_flow(parent, html, notes)
        if parent.text is None:
            parent.text = ""  # see keep_as_is
        if notes:
            for note in sorted(notes):
                self.warn(field, note)
        return kind is MARKUP

    def root(self) -> etree._Element:
        """The assessmentItem element, its title plain text (the item's id if it has none)."""
        lang = self.lang
        authored = self.item.text[lang].title
        if authored:
            self.text(f"text.{lang}.title", authored)  # warns of what XML cannot carry
        title, active = defuse_tex(item_title(self.item, lang) or self.item.id)
        if active:  # a player may show the title, and run MathJax over it
            self.warn(f"text.{lang}.title", tex_warning(active))
        root = _item_root()
        root.set("identifier", self.identifier)  # (an attribute set again keeps its place)
        root.set("title", title)
        root.set(XML_LANG, lang)
        return root

    def body(self, root: etree._Element) -> etree._Element:
        """The itemBody: the stimulus (a block repeated in each item of its set: QTI 2.1 has no
        shared stimulus), then the stem."""
        lang = self.lang
        body = SubElement(root, Q + "itemBody")
        length = 0  # of the question text Canvas keeps: the stimulus and the stem, as HTML
        if self.stimulus is not None:
            content = self.stimulus.text.get(lang)
            field = f"stimulus {self.stimulus.id}: text.{lang}"
            if content is None:
                self.warn("stimulus", f"stimulus {self.stimulus.id!r} has no text in {lang!r}; "
                                       "the item is written without it")
            else:
                block = SubElement(body, Q + "div", {"class": canvas.STIMULUS_CLASS})
                if content.title:
                    SubElement(block, Q + "h2").text = plain(content.title) or None
                html = self.html(field, content.text)
                length += len(html) + len(content.title or "")
                self.flow(block, field, html)
        elif self.item.stimulus is not None:
            self.warn("stimulus", f"stimulus {self.item.stimulus!r} is not in the collection; "
                                  "the item is written without it")
        html = self.html(f"text.{lang}.stem", self.content.stem)
        length += len(html)
        if length > canvas.QUESTION_TEXT_LIMIT:
            self.warn(f"text.{lang}.stem",
                      f"the question text is about {length:,} characters of HTML; Canvas "
                      f"replaces one over {canvas.QUESTION_TEXT_LIMIT:,} with \"The imported "
                      "question text for this question was too long.\" (shorten it, or move a "
                      "long text into a linked file)")
        self.flow(SubElement(body, Q + "div"), f"text.{lang}.stem", html)
        return body

    def feedback(self, root: etree._Element, identifier: str, field: str, source: str) -> None:
        """A modalFeedback shown when FEEDBACK holds `identifier`: `source` rendered, a
        paragraph of plain text wrapped as Canvas keeps it (`canvas.keep_as_html`); warns if
        Canvas keeps only part of an answer's feedback."""
        block = _modal_feedback(identifier)
        root.append(block)
        div = block[0]
        if not self.flow(div, field, self.html(field, source)):
            return  # plain text, or a paragraph without & < >: Canvas shows it as written
        canvas.keep_as_html(div)
        if (identifier != canvas.GENERAL_FEEDBACK_ID
                and canvas.keeps_part_of_answer_feedback(div)):
            self.warn(field, "Canvas keeps only the first paragraph of option feedback; "
                             "the package carries all of it")

    def explanation(self, root: etree._Element) -> None:
        if self.content.explanation:
            self.feedback(root, canvas.GENERAL_FEEDBACK_ID, f"text.{self.lang}.explanation",
                          self.content.explanation)

    def finish(self, root: etree._Element) -> etree._Element:
        """`root` with the MathML namespace declared once, on it, if it holds maths."""
        if self.has_mathml:
            etree.cleanup_namespaces(root, top_nsmap={"m": MATHML_NS})
        return root

    def constant(self, root: etree._Element, template: copied[...], *args: Hashable) -> None:
        """Append `template(*args)` (a child that does not depend on the text) to `root`; with
        `self.held`, a placeholder for its bytes instead, which `xmlfast.spliced` writes (the
        same bytes, neither copied nor serialised again)."""
        if self.held is None:
            root.append(template(*args))
        else:
            hold(root, template.serialised(_ITEM_CHILD, *args), self.held)

    def declare_scores(self, root: etree._Element, points: float) -> None:
        self.constant(root, score_declaration, "SCORE", points)
        self.constant(root, score_declaration, "MAXSCORE", points)
        self.constant(root, feedback_declaration)


# --- what does not depend on the text: built once per distinct arguments, copied ---------------


@copied
def _item_root() -> etree._Element:
    """An assessmentItem without content: `Builder.root` sets its identifier, title and
    language (copying it is several times faster than building it: its namespaces)."""
    return etree.Element(Q + "assessmentItem", {
        SCHEMA_LOCATION: QTI_LOCATION, "identifier": "", "title": "", "adaptive": "false",
        "timeDependent": "false", "toolName": TOOL, XML_LANG: ""}, nsmap=QTI_NSMAP)


@copied
def _modal_feedback(identifier: str) -> etree._Element:
    """A modalFeedback shown when FEEDBACK holds `identifier`, its content kept as it is, holding
    an empty div (the feedback's content goes there)."""
    block = keep_as_is(etree.Element(Q + "modalFeedback", outcomeIdentifier="FEEDBACK",
                                     identifier=identifier, showHide="show", nsmap=_QTI_DEFAULT))
    SubElement(block, Q + "div")
    return block


@copied
def score_declaration(identifier: str, points: float) -> etree._Element:
    """SCORE (between 0 and the points, 0 at first) or MAXSCORE (the points)."""
    outcome = element("outcomeDeclaration", identifier=identifier, cardinality="single",
                      baseType="float")
    if identifier == "SCORE":
        outcome.set("normalMinimum", "0")
        outcome.set("normalMaximum", number(points))
    value = "0" if identifier == "SCORE" else number(points)
    SubElement(SubElement(outcome, Q + "defaultValue"), Q + "value").text = value
    return outcome


@copied
def feedback_declaration() -> etree._Element:
    """FEEDBACK: the identifiers of the modal feedback to show."""
    return element("outcomeDeclaration", identifier="FEEDBACK", cardinality="multiple",
                   baseType="identifier")


#: What an assessmentItem's children are serialised in: an item's root, its namespaces.
_ITEM_CHILD = ChildStream(io.BytesIO(), etree.Element(Q + "assessmentItem", nsmap=QTI_NSMAP))


def element(tag: str, **attrib: str) -> etree._Element:
    """A QTI element standing alone (declaring the QTI namespace as the default one)."""
    return etree.Element(Q + tag, attrib, nsmap=_QTI_DEFAULT)


_QTI_DEFAULT = nsmap({None: QTI_NS})


def sub(parent: etree._Element, tag: str, text: str | None = None, **attrib: str
        ) -> etree._Element:
    """A QTI child of `parent`, with `text`."""
    child = SubElement(parent, Q + tag, attrib)
    if text is not None:
        child.text = text
    return child


def set_score(parent: etree._Element, value: str) -> None:
    score = SubElement(parent, Q + "setOutcomeValue", identifier="SCORE")
    SubElement(score, Q + "baseValue", baseType="float").text = value


def add_feedback(parent: etree._Element, identifier: str) -> None:
    """FEEDBACK := FEEDBACK + {identifier} (the shape Canvas reads an answer's feedback from)."""
    union = SubElement(SubElement(parent, Q + "setOutcomeValue", identifier="FEEDBACK"),
                       Q + "multiple")
    SubElement(union, Q + "variable", identifier="FEEDBACK")
    SubElement(union, Q + "baseValue", baseType="identifier").text = identifier


def keep_as_is(el: etree._Element) -> etree._Element:
    """Keep pretty-printing out of `el`'s content, where added whitespace would show.

    libxml2 indents only inside elements without text children, and not at all below one that
    has some; an empty text node marks `el` so without adding a character to the output.
    """
    if el.text is None:
        el.text = ""
    return el
