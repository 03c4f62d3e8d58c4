"""Target-LMS rules (LM): what a named target would reject, alter or run. Each message names it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import suppress
from functools import lru_cache
from html.parser import HTMLParser

from dpassess.lint.context import ItemContext
from dpassess.lint.registry import Hit, rule
from dpassess.lms import canvas
from dpassess.lms.canvas import QUESTION_TEXT_LIMIT
from dpassess.lms.moodle import (
    GRADE_TOLERANCE,
    MAX_NAME,
    POSITIVE_FRACTIONS,
    is_multilang_name,
    moodle_name,
)
from dpassess.markup import markdown as render
from dpassess.markup.maths import find_maths
from dpassess.markup.parser import parser
from dpassess.markup.sanitize import drop_unsafe_urls
from dpassess.markup.xmlchars import xml_safe
from dpassess.model import (
    ChoiceGap,
    Cloze,
    Item,
    Matching,
    MultipleResponse,
    Numerical,
    Ordering,
    ShortAnswer,
    SingleChoice,
)

#: The choice types whose options may carry `weights`.
_WEIGHTED: tuple[type[SingleChoice | MultipleResponse], ...] = (SingleChoice, MultipleResponse)
_ASTRAL = re.compile(r"[\U00010000-\U0010FFFF]")


@rule(
    "LM001", "astral-character", "warning", target="Moodle",
    key_risk="No: some Moodle databases refuse the character (the question is not saved); nothing "
             "is graded differently.",
    fix="Replace the character (emoji, mathematical letters such as 𝐱) with a BMP character, "
    "Markdown (*x*) or an image; or make sure the Moodle database uses utf8mb4.",
)
def astral_character(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    Finds characters outside the Basic Multilingual Plane (4-byte UTF-8: emoji, 𝐱, 𝔼) in any
    text field.

    ## Why is this bad?
    Moodle sites on MySQL with the legacy `utf8` (3-byte) collation fail the whole import, or
    cut the text at the character, and many sites still run that collation.

    ## Example
    ```yaml
    stem: What is the gradient of 𝐱ᵀ𝐀𝐱?
    ```

    ## Use instead
    ```yaml
    stem: What is the gradient of $x^T A x$?
    ```
    """
    if ctx.joined.isascii() or not _ASTRAL.search(ctx.joined):
        return
    for loc, text in ctx.all_fields():
        m = _ASTRAL.search(text)
        if m:
            yield Hit(
                loc,
                f"[Moodle] 4-byte character {m.group(0)!r} (U+{ord(m.group(0)):X}) breaks imports "
                "into databases without utf8mb4",
            )


@rule(
    "LM002", "moodle-grade", "error", target="Moodle",
    key_risk="Yes: Moodle snaps the grade to its list, and a partly right answer earns another "
             "fraction.",
    fix="Use weights from Moodle's list (100, 90, 83.33, 80, 75, 70, 66.67, 60, 50, 40, 33.33, "
    "30, 25, 20, 16.67, 14.29, 12.5, 11.11, 10, 5, 0 percent, or their negatives).",
    items=_WEIGHTED,
)
def moodle_grade(ctx: ItemContext[SingleChoice | MultipleResponse]) -> Iterator[Hit]:
    """## What it does
    Computes the fraction of the points each option earns (from `weights` of a single-choice
    or multiple-response item, or the default split of a multiple-response item) and checks
    that Moodle accepts it.

    ## Why is this bad?
    Moodle only stores grades from a fixed list; its XML import rounds any other value to the
    nearest one, and its GIFT import refuses the question. A 3-of-11 split (9.09%) silently
    becomes 10%.

    ## Example
    ```yaml
    type: multiple_response
    weights: {a: 0.35, b: 0.65, c: -1}
    ```

    ## Use instead
    ```yaml
    type: multiple_response
    weights: {a: 0.3333333, b: 0.6666667, c: -1}
    ```
    """
    item = ctx.item
    try:
        fractions = item.fractions()
    except ZeroDivisionError:  # no correct option: ST003
        return
    for oid, f in fractions.items():
        if not any(abs(abs(f) - m) < GRADE_TOLERANCE for m in POSITIVE_FRACTIONS):
            loc = ("weights", oid) if item.weights is not None else ("key",)
            yield Hit(loc, f"[Moodle] option {oid!r} earns {f * 100:.4g}%, which Moodle does not accept")
            return


#: HTML elements an author may mean (CommonMark passes raw HTML through).
HTML_TAGS = frozenset(
    """a abbr b bdi bdo blockquote br caption cite code col colgroup dd del details dfn div dl dt
    em figcaption figure h1 h2 h3 h4 h5 h6 hr i img ins kbd li mark ol p pre q rp rt ruby s samp
    small span strong sub summary sup table tbody td tfoot th thead time tr u ul var wbr math mi mn
    mo mrow msup msub mfrac msqrt mtext semantics annotation svg path video audio source
    track picture iframe script style object embed form input button textarea select option
    link meta base""".split()
)
UNSAFE_TAGS = frozenset("script style iframe object embed form input button textarea select link meta base".split())
_TAG_NAME = re.compile(r"</?\s*([A-Za-z][\w:-]*)")
_ATTR = re.compile(r"""\s([^\s=/>"']+)(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?""")
_BOOL_ATTRS = frozenset("hidden disabled checked selected controls autoplay loop muted open".split())


@lru_cache(maxsize=1 << 14)
def _raw_html(source: str) -> tuple[str, ...]:
    """Raw HTML fragments CommonMark passes through (inline and block), in order."""
    out: list[str] = []
    for tok in parser().parse(source):
        if tok.type == "html_block":
            out.append(tok.content.strip())
        for child in tok.children or ():
            if child.type == "html_inline":
                out.append(child.content)
    return tuple(out)


def _eaten(fragment: str) -> bool:
    if fragment.startswith(("<!--", "<?", "<!", "<![CDATA[")):
        return False
    m = _TAG_NAME.match(fragment)
    if not m:
        return False
    if m.group(1).lower() not in HTML_TAGS:
        return True
    head = fragment.split(">", 1)[0][m.end():]
    for a in _ATTR.finditer(head):
        name = a.group(1).lower()
        if "=" not in a.group(0) and name not in _BOOL_ATTRS:
            return True
    return False


@rule(
    "LM003", "html-eaten", "error", target="HTML (QTI, Moodle)",
    key_risk="Yes: the browser drops the text, and an option can lose the words that made it "
             "right.",
    fix="Put code in backticks (`List<int>`) or escape the bracket (\\<), so the text is shown.",
)
def html_eaten(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    Finds text that Markdown passes through as raw HTML but that is not meant as HTML, such as
    `List<int>`, `x<y and z>w` or `<T>`: an unknown element, or attributes without values.

    ## Why is this bad?
    Browsers drop unknown tags: students see `List` instead of `List<int>`, and the item no
    longer says what the author wrote. QTI validators reject the element outright.

    ## Example
    ```yaml
    stem: What does Vec<f32> hold when a<b and c>d?
    ```

    ## Use instead
    ```yaml
    stem: What does `Vec<f32>` hold when a \\< b and c \\> d?
    ```
    """
    if "<" not in ctx.joined:
        return
    for loc, text in ctx.all_fields():
        if "<" not in text:
            continue
        for frag in _raw_html(text):
            if _eaten(frag):
                yield Hit(loc, f"{frag[:40]!r} is read as an HTML tag and will not be shown")
                break


_JS_URL = re.compile(r"(?i)(?:\]\(\s*<?|\b(?:href|src|action|formaction)\s*=\s*[\"']?)\s*(?:javascript|vbscript|data:text/html)")
_EVENT = re.compile(r"(?i)<[a-z][^>]*\son[a-z]+\s*=")


@rule(
    "LM004", "unsafe-html", "error", target="all",
    key_risk="No, but the text is refused or stripped by every LMS: an error for safety.",
    fix="Remove the script, event handler or javascript: link; items cannot run code.",
)
def unsafe_html(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    Finds `<script>`, `<iframe>`, `<object>`, `<embed>`, `<style>`, form elements, `on...=`
    event handlers and links or sources whose URL is not `http`, `https`, `mailto` or relative
    (`javascript:`, `vbscript:`, `file:`, `data:` except a PNG, JPEG, GIF or WebP image in
    `<img src>`...) in any text field. A URL is read as a
    browser reads it: character references decoded (`&#106;avascript:`, with or without the
    semicolon), tabs, line breaks and surrounding control characters removed
    (`java&#x09;script:`). The exports leave such a URL out, with a warning.

    ## Why is this bad?
    Moodle strips them or runs them, depending on the site's trust settings; QTI players
    reject the package. Either way students see something else, and an item bank from git is
    a way to get code into every LMS that imports it.

    ## Example
    ```yaml
    stem: Click [here](javascript:alert(1)) <script>track()</script>
    ```

    ## Use instead
    ```yaml
    stem: See [the NCCL documentation](https://docs.nvidia.com/deeplearning/nccl/)
    ```
    """
    j = ctx.joined.lower()
    if "<" not in j and "script" not in j and "data:" not in j and not _may_link(j):
        return
    for loc, text in ctx.all_fields():
        lowered = text.lower()
        if ("<" not in text and "script" not in lowered and "data:" not in lowered
                and not _may_link(text)):
            continue
        why = None
        if _JS_URL.search(text):
            why = "a javascript: URL"
        elif _EVENT.search(text):
            why = "an event handler attribute"
        else:
            for frag in _raw_html(text) if "<" in text else ():
                m = _TAG_NAME.match(frag)
                if m and m.group(1).lower() in UNSAFE_TAGS:
                    why = f"a <{m.group(1).lower()}> element"
                    break
        if why is None and ("<" in text or _may_link(text)):
            # the URLs as a browser reads them: entities decoded, tabs and controls removed
            _, dropped = drop_unsafe_urls(render.to_html(text))
            if dropped:
                why = (f"a URL that is not http, https, mailto or relative ({dropped[0]}; "
                       "exports leave it out)")
        if why:
            yield Hit(loc, f"[all targets] {why}: items must not carry active content")


def _may_link(text: str) -> bool:
    """Whether Markdown `text` may hold a link without `<`: `[x](url)` or `[x]: url`."""
    return "](" in text or "]:" in text


VOID_TAGS = frozenset("area base br col embed hr img input link meta source track wbr".split())


class _Balance(HTMLParser):
    """Tracks open elements of rendered HTML; collects stray, unclosed and cut-off tags."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID_TAGS and tag in HTML_TAGS:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID_TAGS or tag not in HTML_TAGS:
            return
        if tag not in self.stack:
            self.problems.append(f"stray </{tag}>")
            return
        while self.stack:
            top = self.stack.pop()
            if top == tag:
                break
            self.problems.append(f"<{top}> is not closed")


@lru_cache(maxsize=1 << 14)
def _malformed(source: str) -> str | None:
    """What is wrong with the raw HTML of a Markdown text, or None when it is well formed."""
    if not _raw_html(source):
        return None
    parser = _Balance()
    parser.feed(render.to_html(source))
    leftover = parser.rawdata.strip()
    parser.close()
    if leftover.startswith("<"):
        return f"the tag {leftover[:20]!r} is never finished"
    problems = parser.problems + [f"<{t}> is not closed" for t in parser.stack]
    return problems[0] if problems else None


@rule(
    "LM006", "malformed-html", "warning", target="HTML (QTI, Moodle)",
    key_risk="No, usually: browsers repair the markup, though text after it may move.",
    fix="Close the element, remove the stray end tag, or escape the bracket (\\<) or use "
    "backticks when the text is not meant as HTML.",
)
def malformed_html(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    Finds raw HTML in a text field that does not balance: an end tag with no start tag
    (`</p>` in running text), an element that is never closed (`<b>bold`), or a tag cut off
    before its `>` (`<P` on a line of its own starts a raw HTML block in CommonMark).

    ## Why is this bad?
    Browsers and LMS editors repair such HTML each in their own way: the text after a stray
    tag moves, vanishes, or turns bold for the rest of the page, and the exporters cannot
    carry the author's intent (Moodle's multilang form must re-parse the HTML to place its
    language spans).

    ## Example
    ```yaml
    stem: Which call ends the epoch? </p> <b>Choose one
    ```

    ## Use instead
    ```yaml
    stem: Which call ends the epoch? **Choose one.**
    ```
    """
    if "<" not in ctx.joined:
        return
    for loc, text in ctx.all_fields():
        if "<" not in text:
            continue
        why = _malformed(text)
        if why:
            yield Hit(loc, f"malformed raw HTML: {why}")


MOODLE_NAME = MAX_NAME


@rule(
    "LM005", "name-too-long", "warning", target="Moodle",
    key_risk="No: Moodle cuts the name; students do not see it.",
    fix="Shorten the title so that Moodle's name fits in 255 characters (a title is a name, not a "
    "question).",
)
def name_too_long(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    Checks that the question name Moodle gets is at most 255 characters: the title of each
    language as Moodle stores it (plain text, with `&`, `<` and `>` written as `&amp;`, `&lt;`,
    `&gt;`), and, in the multilang export (`-l multi`), the titles of all the bank's languages
    together as `<span lang=".." class="multilang">` spans. An item without a title is named by
    the first line of its stem, which the export cuts at a word to fit, so only titles are
    reported.

    ## Why is this bad?
    Moodle's question name column holds 255 characters: its importer cuts a longer name
    (`clean_question_name`), so the name in the question bank is not the title you wrote, and a
    multilang name cut inside its spans shows raw markup or one language only.

    ## Example
    ```yaml
    title: <a 300-character paragraph>
    ```

    ## Use instead
    ```yaml
    title: Global batch size
    ```
    """
    item = ctx.item
    longest = None
    too_long = False
    for lang, c in item.text.items():
        where = ("text", lang, "title" if c.title else "stem")
        size = len(moodle_name(item, (lang,)))
        if size > MOODLE_NAME:
            too_long = True
            yield Hit(where,
                      f"[Moodle] the name is {size} characters; Moodle cuts names past {MOODLE_NAME}")
        elif longest is None or size > longest[0]:
            longest = (size, where)
    langs = [la for la in ctx.bank.languages if la in item.text]
    if too_long or longest is None or len(langs) < 2:
        return
    size = len(name := moodle_name(item, langs))
    if size > MOODLE_NAME and is_multilang_name(name):
        yield Hit(longest[1],
                  f"[Moodle multilang] the name with every language as spans is {size} characters; "
                  f"Moodle cuts it past {MOODLE_NAME}, breaking the spans")



@rule(
    "LM007", "canvas-question-too-long", "error", target="Canvas",
    key_risk="Yes: Canvas replaces the whole question text, so no answer can be right.",
    fix="Shorten the stem or its shared stimulus, or move a long table or text into a file the "
    "item links to.",
)
def canvas_question_too_long(ctx: ItemContext[Item]) -> Iterator[Hit]:
    """## What it does
    Measures the question text Canvas imports from the QTI export, in each language: the
    item's shared stimulus (its title and text) and its stem as HTML, with its maths as MathML
    (the QTI export's default) and every `&`, `<`, `>` and `"` counted as the entity it is
    written as; reports a text over 16,384 characters.

    ## Why is this bad?
    Canvas's QTI importer keeps 16,384 characters of question HTML; one more and the whole
    question text is replaced by "The imported question text for this question was too long."
    Students get a question with no question (3,277 `&` in a stem are enough).

    ## Example
    A stimulus holding a 400-row table, shared by three items.

    ## Use instead
    A shorter table, or the table as an image or a linked file.
    """
    item = ctx.item
    stimulus = None
    if item.stimulus is not None:
        with suppress(KeyError):  # an unknown stimulus is a load error
            stimulus = ctx.bank.bank.stimulus(item.stimulus)
    for lang, content in item.text.items():
        # as the QTI export measures it: the HTML of the stimulus and of the stem, the title
        # as written (Markdown is cheap to render again: to_html keeps what it rendered)
        size = len(render.to_html(xml_safe(content.stem)[0], "mathml"))
        shared = stimulus.text.get(lang) if stimulus is not None else None
        if shared is not None:
            size += len(render.to_html(xml_safe(shared.text)[0], "mathml"))
            size += len(shared.title or "")
        if size > QUESTION_TEXT_LIMIT:
            yield Hit(("text", lang, "stem"),
                      f"the question text is {size:,} characters of HTML in {lang!r}"
                      f"{' with its stimulus' if shared is not None else ''}; Canvas replaces "
                      f"a text over {QUESTION_TEXT_LIMIT:,}")


#: The item types whose grading a Canvas quiz may not carry in full.
_CANVAS_LIMITED: tuple[type[Numerical | ShortAnswer | Ordering | Cloze], ...] = (
    Numerical, ShortAnswer, Ordering, Cloze)


@rule(
    "LM008", "canvas-cannot-carry", "info", target="Canvas",
    key_risk="Yes, but only in Canvas and only for what the bank gave partial credit or a "
    "wildcard: the key itself is kept, while a partly right answer earns nothing there and a "
    "wording a wildcard stood for is marked wrong.",
    fix="For Canvas, give every accepted answer full points, list the wordings a wildcard "
    "stands for, say the unit in the stem; or accept the change (the export says the same).",
    items=_CANVAS_LIMITED,
)
def canvas_cannot_carry(ctx: ItemContext[Numerical | ShortAnswer | Ordering | Cloze],
                        ) -> Iterator[Hit]:
    """## What it does
    Reports what the Canvas export (`-f canvas`) cannot carry as the bank says it, in the words
    of the export's warnings: graded units of a numerical item, answers worth part of the points
    (or none) of a numerical or short-answer item, short-answer wordings with a `*` wildcard, a
    case-sensitive short answer, an ordering item (written as a matching question), a cloze
    whose gaps are not all short answer or all choice (not exported: Canvas's blanks questions
    take one kind), a cloze whose gaps' points differ (Canvas shares them equally), and the
    feedback of a cloze's gaps (Canvas keeps none per answer of a blank).

    ## Why is this bad?
    Canvas's numerical and short-answer questions give full points for every answer they accept
    and compare a short answer whole and in any case; its quizzes have no units and no ordering
    question. So a partly right answer earns nothing in Canvas, a wording a wildcard stood for
    is marked wrong, and an ordering item is graded pair by pair, position by position.

    ## Example
    A short answer accepting `list*` for half the points; a numerical item with units `%`.

    ## Use instead
    The wordings written out (`list`, `linked list`), full-point answers only, the unit in the
    stem ("in %"), or a single-choice item instead of an ordering. Or keep the item and suppress
    the rule for it when its Canvas form is acceptable.
    """
    item = ctx.item
    if isinstance(item, Ordering):
        yield Hit(("type",), canvas.ORDERING_AS_MATCHING)
        return
    if isinstance(item, Cloze):
        kinds = [g.type for g in item.gaps]
        if canvas.cloze_kind(kinds) is None:
            yield Hit(("gaps",), canvas.cloze_left_out(kinds))
            return
        if len({g.points for g in item.gaps}) > 1:
            yield Hit(("gaps",), canvas.CLOZE_POINTS_EQUAL)
        for lang, cloze_text in item.text.items():
            if any(gc.feedback for gc in cloze_text.gaps.values()):
                yield Hit(("text", lang, "gaps"), canvas.GAP_FEEDBACK_NOT_CARRIED)
        return
    if isinstance(item, Numerical) and item.units:
        yield Hit(("units",), canvas.UNITS_NOT_GRADED)
    if isinstance(item, ShortAnswer):
        if item.case_sensitive:
            yield Hit(("case_sensitive",), canvas.CASE_NOT_CARRIED)
        for lang, content in item.text.items():
            for aid, wordings in content.answers.items():
                for n, wording in enumerate(wordings):
                    if "*" in wording:
                        yield Hit(("text", lang, "answers", aid, n),
                                  canvas.wildcard_left_out(xml_safe(wording)[0].strip()))
    graded: list[tuple[str, float, bool]] = (
        [(a.id, a.fraction, a.any_other) for a in item.answers] if isinstance(item, Numerical)
        else [(a.id, a.fraction, False) for a in item.answers])
    for n, (aid, fraction, any_other) in enumerate(graded):
        if fraction != 1 and not any_other:
            yield Hit(("answers", n, "fraction"), canvas.partial_answer_left_out(aid, fraction))


#: What a drop-down cannot show: maths, images, and any other markup (it shows plain text).
_NOT_PLAIN = re.compile(r"\$|\\\(|\\\[|!\[|<img|<[a-z]|\*\*|`|\[[^\]]*\]\(")


@rule(
    "LM009", "gap-dropdown-markup", "warning", target="Moodle, QTI",
    key_risk="No: the key stays the key, but a student reads raw TeX or a missing image in the "
             "drop-down and may not recognise it.",
    fix="Keep drop-down options plain text; for maths or images use `display: vertical` (radio "
    "buttons in Moodle) or put the formula in the stem.",
    items=(Cloze,),
)
def gap_dropdown_markup(ctx: ItemContext[Cloze]) -> Iterator[Hit]:
    """## What it does
    Finds options of a cloze item's drop-down gaps (`type: choice`, `display: dropdown`, the
    default) that hold maths, an image or other Markdown formatting.

    ## Why is this bad?
    A drop-down list shows plain text: Moodle's cloze menus and QTI's `inlineChoice` cannot show
    a formula, an image, bold or a link. Students see `\\(x^2\\)` as typed, or nothing where
    the image was.

    ## Example
    ```yaml
    text:
      en:
        gaps:
          deriv: {options: {a: "$2x$", b: "$x^2$"}}
    ```

    ## Use instead
    ```yaml
    gaps:
      - {id: deriv, type: choice, display: vertical, options: [a, b], key: a}
    ```
    """
    item = ctx.item
    for gap in item.gaps:
        if not isinstance(gap, ChoiceGap) or gap.display != "dropdown":
            continue
        for lang, content in item.text.items():
            texts = content.gaps.get(gap.id)
            for oid, text in (texts.options.items() if texts else ()):
                if _NOT_PLAIN.search(text):
                    yield Hit(("text", lang, "gaps", gap.id, "options", oid),
                              f"[Moodle, QTI] the drop-down of gap {gap.id!r} shows plain text: "
                              f"{text!r} holds maths, an image or formatting")


@rule(
    "LM010", "matching-response-markup", "warning", target="Moodle",
    key_risk="No: the pairs stay as written, but a student reads raw TeX or loses the formatting "
             "in the menu and may not recognise the right response.",
    fix="Write the response as plain text (χ², √n instead of TeX), or move the formula into the "
    "premise, which Moodle shows as formatted text.",
    items=(Matching,),
)
def matching_response_markup(ctx: ItemContext[Matching]) -> Iterator[Hit]:
    """## What it does
    Finds responses of a matching item (`responses`, the right-hand side) that hold maths, an
    image or other Markdown formatting.

    ## Why is this bad?
    Moodle shows a matching question's responses in a menu next to each premise, as plain text:
    its maths filter does not run there, so students see `\\(\\chi^2\\)` as typed, and bold, code,
    links and images are lost. The Moodle XML and GIFT exports warn about each such response
    too; this rule says it before anything is exported.

    ## Example
    ```yaml
    text:
      en:
        premises: {fit: Goodness of fit, means: Two means}
        responses: {fit: '$\\chi^2$', means: "**t**"}
    ```

    ## Use instead
    ```yaml
        responses: {fit: "χ²", means: "t"}
    ```
    """
    item = ctx.item
    for lang, content in item.text.items():
        for rid, text in content.responses.items():
            if maths := find_maths(text):
                shown = text[maths[0].start:maths[0].end]
                yield Hit(("text", lang, "responses", rid),
                          f"[Moodle] matching responses are shown as plain text in a menu, where "
                          f"the maths filter does not run: {shown!r} is shown as TeX source")
            # inline HTML holds a `<` only in a tag (a text `<` is `&lt;`)
            elif "<" in render.to_inline_html(text) and render.to_plain(text):
                yield Hit(("text", lang, "responses", rid),
                          f"[Moodle] matching responses are shown as plain text in a menu, "
                          f"without formatting or images: {text!r} is shown as "
                          f"{render.to_plain(text)!r}")
