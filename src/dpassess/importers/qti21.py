"""QTI 2.1 (an IMS content package zip, or one assessmentItem file) -> items.

Reads choiceInteraction items: dpassess's own packages field for field (ids, topic, tags, status
and difficulty from the manifest's LOM, option ids, locked options, weights from the mapping,
feedback from modalFeedback), and plain QTI 2.1 choice items from other tools as far as they go.
Items with any other interaction are skipped with their file and the reason.
"""

from __future__ import annotations

import copy
import html
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, assert_never
from urllib.parse import unquote

from lxml import etree
from pydantic import ValidationError

from dpassess.diagnostics import Diagnostic
from dpassess.importers.common import (
    DEFAULT_TOPIC,
    ImportResult,
    NoLanguage,
    Skip,
    check_size,
    choice_item,
    clean_tag,
    default_weights,
    inline_html,
    lang_code,
    note,
    number,
    option_id,
    option_ids,
    slugify,
    unique_ids,
    valid_id,
    validation_reason,
    with_titles,
)
from dpassess.importers.html_markdown import html_to_markdown
from dpassess.importers.safe import MAX_ANSWERS, InputError, open_zip, parse_xml
from dpassess.lms import canvas
from dpassess.markup.markdown import plain_title
from dpassess.model import (
    TRUE_FALSE_IDS,
    TRUE_FALSE_WORDS,
    Cloze,
    Content,
    Description,
    Essay,
    Item,
    ItemType,
    Matching,
    Numerical,
    Option,
    Ordering,
    ShortAnswer,
)
from dpassess.model.items import NumericAnswer, OrderingGrading, TextAnswer

CODE = "qti21"
_ESSAY_FORMATS: dict[str, Literal["editor", "plain", "monospaced"]] = {
    "xhtml": "editor", "plain": "plain", "preFormatted": "monospaced",
    "preformatted": "monospaced"}  # (not the XSD's spelling, but unambiguous)
_ChoiceKind = Literal[ItemType.single_choice, ItemType.multiple_response, ItemType.true_false]
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
QTI_NS = "http://www.imsglobal.org/xsd/imsqti_v2p1"
TOOL = "dpassess"
_STATUS = {"draft": "draft", "final": "reviewed", "unavailable": "retired", "revised": "reviewed"}
_DIFFICULTY = {"very easy": "easy", "easy": "easy", "medium": "medium", "difficult": "hard",
               "very difficult": "hard"}
_EXPLANATION = re.compile(r"general|solution|explanation", re.I)
_OPTION_ID = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")


def _local(el: etree._Element) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


def _children(el: etree._Element, name: str) -> list[etree._Element]:
    return [c for c in el if _local(c) == name]


def _first(el: etree._Element | None, *path: str) -> etree._Element | None:
    for name in path:
        if el is None:
            return None
        el = next((c for c in el if _local(c) == name), None)
    return el


def _descendants(el: etree._Element, name: str) -> list[etree._Element]:
    return [d for d in el.iter() if _local(d) == name]


def _text(el: etree._Element | None) -> str:
    return (el.text or "").strip() if el is not None else ""


# --- QTI XHTML -> HTML -> Markdown -----------------------------------------------------------


_VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())


def _str(text: str | bytes) -> str:
    """An attribute's name or value (lxml gives str; its stubs allow bytes)."""
    return text.decode() if isinstance(text, bytes) else text


def _serialise(el: etree._Element, out: list[str]) -> None:
    """`el` (and its tail) as HTML: namespaces dropped, xml:lang written as lang, every
    non-void element closed (libxml2's HTML output leaves `<li></li>` open as `<li>`)."""
    if isinstance(el, etree._Comment):
        out.append(f"<!--{el.text or ''}-->")
    elif _local(el) == "math" and (tex := _tex_of(el)) is not None:
        block = el.get("display") == "block"
        out.append(html.escape(f"\\[{tex}\\]" if block else f"\\({tex}\\)", quote=False))
    elif (_local(el) == "span" and el.get("class") == canvas.KEEP_HTML_CLASS
          and len(el.attrib) == 1):
        # the wrapper that makes Canvas keep a paragraph of plain text as HTML: not the author's
        out.append(html.escape(el.text or "", quote=False))
        for child in el:
            _serialise(child, out)
    elif isinstance(el.tag, str):
        name = _local(el)
        out.append(f"<{name}")
        for raw_key, raw_value in el.attrib.items():
            key, value = _str(raw_key), _str(raw_value)
            if key == XML_LANG:
                key = "lang"
            elif key.startswith("{"):
                continue
            out.append(f' {key}="{html.escape(value)}"')
        out.append(">")
        if name not in _VOID:
            out.append(html.escape(el.text or "", quote=False))
            for child in el:
                _serialise(child, out)
            out.append(f"</{name}>")
    out.append(html.escape(el.tail or "", quote=False))


def _tex_of(math: etree._Element) -> str | None:
    """The TeX a MathML `math` element was made from (its `annotation` in TeX), or None."""
    for ann in _descendants(math, "annotation"):
        if ann.get("encoding", "").lower() in ("application/x-tex", "tex", "latex",
                                                "application/x-latex"):
            return (ann.text or "").strip() or None
    return None


def _html(text: str | None, children: list[etree._Element]) -> str:
    """HTML of flow content: leading text, then each child with its tail."""
    out = [html.escape(text or "", quote=False)]
    for child in children:
        _serialise(child, out)
    return "".join(out)


def _unwrapped(text: str | None, kids: list[etree._Element]
               ) -> tuple[str | None, list[etree._Element]]:
    """Flow content, or the content of its only element when that is a plain `<div>` (the
    wrapper dpassess writes around a stem or a feedback)."""
    shown = [c for c in kids if isinstance(c.tag, str)]
    if (len(shown) == 1 and len(kids) == 1 and _local(shown[0]) == "div"
            and not shown[0].attrib and not (text or "").strip()
            and not (shown[0].tail or "").strip()):
        return shown[0].text, list(shown[0])
    return text, kids


def _markdown(text: str | None, children: list[etree._Element], *, inline: bool) -> str:
    html = _html(*_unwrapped(text, children))
    return html_to_markdown(inline_html(html) if inline else html, inline=inline)


# --- the package ------------------------------------------------------------------------------


@dataclass
class _Meta:
    """What the manifest says about an item (LOM and qtiMetadata)."""

    entry: str = ""
    keywords: list[str] = field(default_factory=list)
    status: str = ""
    difficulty: str = ""
    tool: str = ""


def _meta(resource: etree._Element) -> _Meta:
    m = _Meta()
    meta = _first(resource, "metadata")
    if meta is None:
        return m
    m.tool = _text(_first(meta, "qtiMetadata", "toolName"))
    lom = _first(meta, "lom")
    if lom is None:
        return m
    m.entry = _text(_first(lom, "general", "identifier", "entry"))
    general = _first(lom, "general")
    if general is not None:
        for kw in _children(general, "keyword"):
            for s in _children(kw, "string"):
                if _text(s):
                    m.keywords.append(_text(s))
    m.status = _text(_first(lom, "lifeCycle", "status", "value")).lower()
    m.difficulty = _text(_first(lom, "educational", "difficulty", "value")).lower()
    return m


#: "assessmentItem" as an item file spells it, in UTF-8 (and ASCII-based encodings) or UTF-16.
_ITEM_MARKS = tuple("assessmentItem".encode(e) for e in ("utf-8", "utf-16-le", "utf-16-be"))


def _entries(data: bytes, name: str) -> tuple[list[tuple[str, bytes, _Meta]], int]:
    """(entry name, bytes, manifest metadata) of each item file, in manifest order (a file
    listed again is read once), and how many listings repeated an earlier one."""
    files = open_zip(data, name)
    if "imsmanifest.xml" not in files:
        found = []
        for path in sorted(files):
            head = files[path][:8192]
            if path.lower().endswith(".xml") and any(m in head for m in _ITEM_MARKS):
                found.append((path, files[path], _Meta()))
        if not found:
            raise InputError(f"{name}: no imsmanifest.xml and no assessmentItem files: not a "
                             "QTI 2.1 package")
        return found, 0
    manifest = parse_xml(files["imsmanifest.xml"], f"{name}:imsmanifest.xml")
    out = []
    listed: set[str] = set()
    repeats = 0
    for res in _descendants(manifest, "resource"):
        if not res.get("type", "").startswith("imsqti_item_xmlv2p1"):
            continue
        href = unquote(res.get("href", ""))
        path = posixpath.normpath(href) if href else ""
        if not path or path.startswith(("../", "/")) or path == "..":
            raise InputError(f"{name}:imsmanifest.xml:{res.sourceline}: item href {href!r} "
                             "points outside the package")
        if path not in files:
            raise InputError(f"{name}:imsmanifest.xml:{res.sourceline}: item {href!r} is not "
                             "in the package")
        if path in listed:
            repeats += 1
            continue
        listed.add(path)
        out.append((path, files[path], _meta(res)))
    return out, repeats


# --- one item ---------------------------------------------------------------------------------


class _ItemReader:
    """One item file (`where`: the input, or `input:entry` in a package) -> an item; warnings
    go to `warnings`, naming the item by its identifier."""

    def __init__(self, where: str, meta: _Meta, lang: str | None,
                 warnings: list[Diagnostic],
                 words: Mapping[str, tuple[str, str]] | None = None) -> None:
        self.words = dict(words or {})
        self.tool = ""  # the item's toolName (dpassess's own items name it)
        self.where = where
        self.meta = meta
        self.lang = lang
        self.warnings = warnings
        self.item: str | None = None

    def warn(self, message: str) -> None:
        self.warnings.append(note(CODE, self.where, message, item=self.item))

    def read(self, root: etree._Element) -> Item:
        if _local(root) != "assessmentItem":
            raise Skip(f"<{_local(root)}> is not an assessmentItem")
        lang = self._lang(root)
        self.tool = root.get("toolName", "")
        body = _first(root, "itemBody")
        if body is None:
            raise Skip("the item has no itemBody")
        bare = sum(1 for m in root.iter() if _local(m) == "math" and _tex_of(m) is None)
        if bare:
            self.warn(f"{bare} MathML formula(s) without a TeX annotation are kept as MathML "
                      "(raw HTML in the text), not as the bank's maths")
        interactions = [d for d in body.iter() if _local(d).endswith("Interaction")]
        if (len(interactions) > 1 or (interactions and _in_text(interactions[0], self.tool))) \
                and all(_local(i) in _GAP_INTERACTIONS for i in interactions):
            return _ClozeReader(self, root, body, interactions, lang).read()
        if not interactions:  # text alone: a description (dpassess writes one so)
            return self._description(root, body, lang)
        if len(interactions) != 1:
            raise Skip(f"{len(interactions)} interactions; an item holds exactly one "
                       "choiceInteraction")
        inter = interactions[0]
        decl = next((d for d in _children(root, "responseDeclaration")
                     if d.get("identifier") == inter.get("responseIdentifier")), None)
        if decl is None:
            raise Skip(f"no responseDeclaration for {inter.get('responseIdentifier')!r}")
        choices_in = sum(1 for d in inter.iter() if _local(d) in _CHOICES)
        answers_in = max(sum(1 for d in decl.iter() if _local(d) in ("value", "mapEntry")),
                         sum(1 for d in root.iter() if _local(d) in _BRANCHES))
        if (count := max(choices_in, answers_in)) > MAX_ANSWERS:
            raise Skip(f"{count:,} {'choices' if choices_in >= answers_in else 'answers'}; "
                       f"the limit is {MAX_ANSWERS:,} per item")
        if _local(inter) != "choiceInteraction":
            return _TypedReader(self, root, body, inter, decl, lang).read()
        choices = _children(inter, "simpleChoice")
        qti_ids = [c.get("identifier", "") for c in choices]
        ids = self._option_ids(qti_ids)
        to_ours = dict(zip(qti_ids, ids, strict=True))
        points = self._points(root, decl)
        cr = _first(decl, "correctResponse")
        correct = [to_ours.get(_text(v), "") for v in _children(cr, "value")] if cr is not None \
            else []
        if "" in correct:
            raise Skip("correctResponse names a choice the interaction does not have")
        mapping = self._mapping(decl, to_ours, points)
        kind: _ChoiceKind
        if decl.get("cardinality") == "multiple":
            kind = ItemType.multiple_response
        else:
            kind = ItemType.true_false if tuple(ids) == TRUE_FALSE_IDS else ItemType.single_choice
        weights: dict[str, float] | None = None
        match kind:
            case ItemType.multiple_response:
                key, weights = self._multiple_key(ids, correct, mapping)
            case ItemType.single_choice | ItemType.true_false:
                key, weights = self._single_key(ids, correct, mapping,
                                                partial=kind is ItemType.single_choice)
            case _:
                assert_never(kind)
        if not key:
            raise Skip("no choice earns credit")

        # texts: the stem is the body around the interaction, with the interaction's prompt
        kids = list(body)
        if inter not in kids:
            raise Skip("the choiceInteraction is nested inside other content")
        at = kids.index(inter)
        prompt = _first(inter, "prompt")
        stem_html = "".join([
            _html(*_unwrapped(body.text, kids[:at])),
            _html(prompt.text, list(prompt)) if prompt is not None else "",
            _html(*_unwrapped(inter.tail, kids[at + 1:])),
        ])
        stem = html_to_markdown(stem_html, inline=False)
        for c in _descendants(inter, "feedbackInline"):
            self.warn("feedbackInline is not carried")
            parent = c.getparent()
            if parent is not None:
                parent.remove(c)
        options: dict[str, str] = {}
        built_in = _built_in_words(kind, lang)
        for oid, choice in zip(ids, choices, strict=True):
            md = _markdown(choice.text, list(choice), inline=True)
            if md != built_in.get(oid):
                options[oid] = md
        if kind is ItemType.true_false and not options and lang not in TRUE_FALSE_WORDS:
            options = dict(zip(TRUE_FALSE_IDS, self.words.get(lang, ("True", "False")),
                               strict=True))
        feedback, explanation = self._feedback(root, to_ours)
        item_id = self._id(root)
        topic, tags = self._topic_and_tags()
        fields = dict(
            id=item_id, topic=topic, points=points, tags=tags,
            status=_STATUS.get(self.meta.status, "draft"),
            difficulty=_DIFFICULTY.get(self.meta.difficulty),
            shuffle=inter.get("shuffle", "false") == "true",
            options=tuple(Option(id=oid, locked=c.get("fixed") == "true")
                          for oid, c in zip(ids, choices, strict=True)),
            key=tuple(key),
        )
        try:
            text = {lang: Content(stem=stem, options=options, feedback=feedback,
                                  explanation=explanation or None)}
            item = choice_item(kind, weights, **fields, text=text)
            titled = with_titles(item, {lang: plain_title(root.get("title", ""))})
            if titled != item.text:
                item = choice_item(kind, weights, **fields, text=titled)
        except ValidationError as exc:
            raise Skip(validation_reason(exc)) from None
        return item

    def _multiple_key(self, ids: list[str], correct: list[str],
                      mapping: tuple[dict[str, float], float] | None
                      ) -> tuple[list[str], dict[str, float] | None]:
        """A multiple-response item's key and weights (None: the model's default): the correct
        response, else the options the mapping gives credit."""
        if mapping is None:
            self.warn("all-or-nothing scoring (no mapping) is not carried: the model gives "
                      "partial credit by default")
            return correct, None
        fractions = {oid: mapping[0].get(oid, mapping[1]) for oid in ids}
        key = correct or [oid for oid in ids if fractions[oid] > 0]
        default = default_weights(ids, key) if key else {}
        if default and all(abs(fractions[o] - default[o]) < 1e-6 for o in ids):
            return key, None
        return key, fractions

    @staticmethod
    def _single_key(ids: list[str], correct: list[str],
                    mapping: tuple[dict[str, float], float] | None, *, partial: bool
                    ) -> tuple[list[str], dict[str, float] | None]:
        """A single-choice (or true/false) item's key: its one correct response; with
        `partial` (single choice), the credit the mapping gives other options as weights."""
        if len(correct) != 1:
            raise Skip(f"a single-choice item needs one correct response, not {len(correct)}")
        others = {} if mapping is None else {
            o: mapping[0].get(o, mapping[1]) for o in ids if o not in correct}
        credited = {o: f for o, f in others.items() if abs(f) > 1e-9}
        if credited and (not partial or any(f < 0 or f > 1 for f in credited.values())):
            raise Skip("credit below 0 or above the key's for another option of a "
                       "single-choice item (the model holds negative credit for "
                       "multiple-response items)" if partial else
                       "partial or negative credit in a true/false item")
        return correct, ({o: round(f, 7) for o, f in credited.items()} or None)

    def _lang(self, root: etree._Element) -> str:
        raw = root.get(XML_LANG)
        if raw:
            code = lang_code(raw)
            if code is None:
                raise Skip(f"xml:lang {raw!r} is not a language code the bank accepts")
            return code
        if self.lang:
            return self.lang
        raise NoLanguage(f"{self.where}: the item has no xml:lang, so its language must "
                         "be given")

    def _option_ids(self, qti_ids: list[str]) -> list[str]:
        lowered = [i.lower() for i in qti_ids]
        if all(_OPTION_ID.match(i) and len(i) <= 32 for i in lowered) \
                and len(set(lowered)) == len(lowered):
            return lowered
        self.warn(f"choice identifiers {qti_ids} are not option ids; the options are named "
                  "a, b, c… in order")
        return option_ids(len(qti_ids))

    def _points(self, root: etree._Element, decl: etree._Element) -> float:
        points = self._declared_points(root, decl)
        if not 0 < points <= 1000:
            raise Skip(f"the item is worth {points:g} points; items are worth more than 0 "
                       "and at most 1000")
        return points

    def _declared_points(self, root: etree._Element, decl: etree._Element) -> float:
        for out in _children(root, "outcomeDeclaration"):
            if out.get("identifier") == "MAXSCORE":
                value = _first(out, "defaultValue", "value")
                if value is not None:
                    return number(_text(value), "MAXSCORE")
        for out in _children(root, "outcomeDeclaration"):
            if out.get("identifier") == "SCORE" and out.get("normalMaximum"):
                return number(out.get("normalMaximum", ""), "SCORE normalMaximum")
        mapping = _first(decl, "mapping")
        if mapping is not None and mapping.get("upperBound"):
            return number(mapping.get("upperBound", ""), "mapping upperBound")
        return 1.0

    def _mapping(self, decl: etree._Element, to_ours: dict[str, str],
                 points: float) -> tuple[dict[str, float], float] | None:
        """(fraction per option, default fraction) from the response mapping."""
        mapping = _first(decl, "mapping")
        if mapping is None:
            return None
        out: dict[str, float] = {}
        for entry in _children(mapping, "mapEntry"):
            oid = to_ours.get(entry.get("mapKey", ""))
            if oid is None:
                raise Skip(f"mapEntry for {entry.get('mapKey')!r}, which is not a choice")
            out[oid] = number(entry.get("mappedValue", ""), "mappedValue") / points
        default = number(mapping.get("defaultValue", "0"), "mapping defaultValue") / points
        return out, default

    def _feedback(self, root: etree._Element, to_ours: dict[str, str],
                  read: set[str] | frozenset[str] = frozenset()) -> tuple[dict[str, str], str]:
        """Per-option feedback and the explanation, from modalFeedback and the rules that show
        each one (dpassess: FEEDBACK gets FBn when RESPONSE matches an option)."""
        shows: dict[str, str | None] = {}  # feedback identifier -> option id, None: always
        rp = _first(root, "responseProcessing")
        if rp is not None:
            for sov in _descendants(rp, "setOutcomeValue"):
                for bv in _descendants(sov, "baseValue"):
                    fid = _text(bv)
                    cond = sov.getparent()
                    if cond is rp or cond is None:
                        shows.setdefault(fid, None)
                        continue
                    test = cond[0] if len(cond) and _local(cond) in (
                        "responseIf", "responseElseIf") else None
                    if test is not None and _local(test) in ("match", "member"):
                        values = [_text(v) for v in _children(test, "baseValue")]
                        if len(values) == 1 and values[0] in to_ours:
                            shows.setdefault(fid, to_ours[values[0]])
        feedback: dict[str, str] = {}
        explanation = ""
        for mf in _children(root, "modalFeedback"):
            fid = mf.get("identifier", "")
            if fid in read:
                continue
            md = _markdown(mf.text, list(mf), inline=False)
            if not md:
                continue
            target = shows.get(fid, "missing")
            if target == "missing":
                target = to_ours.get(fid) or (None if _EXPLANATION.search(fid) else "missing")
            if target == "missing":
                self.warn(f"modalFeedback {fid!r} is not tied to one choice; not carried")
            elif target is None:
                if explanation:
                    self.warn(f"modalFeedback {fid!r}: a second general feedback; not carried")
                else:
                    explanation = md
            elif target in feedback:
                self.warn(f"modalFeedback {fid!r}: a second feedback for {target!r}; not "
                          "carried")
            else:
                feedback[target] = md
        return feedback, explanation

    def _description(self, root: etree._Element, body: etree._Element, lang: str) -> Item:
        """An item with no interaction -> a description (text only), its title and text."""
        stem = html_to_markdown(_html(*_unwrapped(body.text, list(body))), inline=False)
        _, explanation = self._feedback(root, {}, set())
        topic, tags = self._topic_and_tags()
        fields = dict(id=self._id(root), topic=topic, tags=tags,
                      status=_STATUS.get(self.meta.status, "draft"),
                      difficulty=_DIFFICULTY.get(self.meta.difficulty))
        try:
            item = Description.model_validate({
                **fields, "type": "description",
                "text": {lang: {"stem": stem, "explanation": explanation or None}}})
            titled = with_titles(item, {lang: plain_title(root.get("title", ""))})
            if titled != item.text:
                item = item.model_copy(update={"text": titled})
        except ValidationError as exc:
            raise Skip(validation_reason(exc)) from None
        return item

    def _id(self, root: etree._Element) -> str:
        if valid_id(self.meta.entry):
            return self.meta.entry
        ident = root.get("identifier", "")
        lang = root.get(XML_LANG, "")
        if lang and ident.endswith(f"-{lang}") and valid_id(ident[: -len(lang) - 1]):
            return ident[: -len(lang) - 1]
        if valid_id(ident):
            return ident
        return slugify(ident or root.get("title", ""))

    def _topic_and_tags(self) -> tuple[str, tuple[str, ...]]:
        words = list(self.meta.keywords)
        topic = DEFAULT_TOPIC
        if TOOL in (self.meta.tool, self.tool) and words:
            topic = words.pop()
        tags: dict[str, None] = {}
        for w in words:
            t = clean_tag(w)
            if t != w:
                self.warn(f"keyword {w!r} written as tag {t!r}" if t
                          else f"keyword {w!r} has no letters or digits; left out")
            if t:
                tags.setdefault(t, None)
        return topic, tuple(tags)


class _TypedReader:
    """An item with a textEntryInteraction (numerical for a float response, short answer for a
    string), a matchInteraction, an extendedTextInteraction (essay) or an orderInteraction ->
    an item, read from its declarations and the response processing (the rules dpassess
    writes, and QTI's standard templates)."""

    def __init__(self, reader: _ItemReader, root: etree._Element, body: etree._Element,
                 inter: etree._Element, decl: etree._Element, lang: str) -> None:
        self.r = reader
        self.root = root
        self.inter = inter
        self.decl = decl
        self.lang = lang
        self.points = reader._points(root, decl)
        self.stem, self.rubric = _stem_without(body, inter)
        self.shown: set[str] = set()  # the modalFeedback read as an answer's

    def read(self) -> Item:
        name = _local(self.inter)
        make: Callable[..., Item]
        if name == "textEntryInteraction" and self.decl.get("baseType") in ("float", "integer"):
            make, content = self.numerical()
        elif name == "textEntryInteraction" and self.decl.get("baseType") == "string":
            make, content = self.short_answer()
        elif name == "matchInteraction":
            make, content = self.matching()
        elif name == "extendedTextInteraction":
            make, content = self.essay()
        elif name == "orderInteraction":
            make, content = self.ordering()
        else:
            raise Skip(f"{name} items (response type {self.decl.get('baseType')!r}) are not "
                       "supported")
        if self.rubric and name != "extendedTextInteraction":
            self.r.warn("a rubricBlock is not carried")
        _, explanation = self.r._feedback(self.root, {}, self.shown)
        topic, tags = self.r._topic_and_tags()
        fields = dict(id=self.r._id(self.root), topic=topic, points=self.points, tags=tags,
                      status=_STATUS.get(self.r.meta.status, "draft"),
                      difficulty=_DIFFICULTY.get(self.r.meta.difficulty))
        content.update(stem=self.stem, explanation=explanation or None)
        try:
            item = make(**fields, text={self.lang: content})
            title = plain_title(self.root.get("title", ""))
            titled = with_titles(item, {self.lang: title})
            if titled != item.text:
                item = make(**fields, text=titled)
        except ValidationError as exc:
            raise Skip(validation_reason(exc)) from None
        return item

    # -- the rules that score each answer -------------------------------------------------------
    def branches(self) -> list[tuple[etree._Element, float, str]]:
        """(test, fraction, answer feedback identifier) of each responseIf/ElseIf of the first
        rule on RESPONSE that sets SCORE to a number (a test that the response is empty, or
        that sets 0 with no feedback, is left out)."""
        rp = _first(self.root, "responseProcessing")
        out: list[tuple[etree._Element, float, str]] = []
        if rp is None:
            return out
        for rule in _children(rp, "responseCondition"):
            for branch in rule:
                if _local(branch) not in ("responseIf", "responseElseIf") or not len(branch):
                    continue
                test = branch[0]
                if _local(test) == "isNull":
                    continue
                score = next((_text(_first(sov, "baseValue")) for sov in
                              _children(branch, "setOutcomeValue")
                              if sov.get("identifier") == "SCORE"), None)
                if score is None:
                    continue
                fid = next((_text(bv) for sov in _children(branch, "setOutcomeValue")
                            if sov.get("identifier") == "FEEDBACK"
                            for bv in _descendants(sov, "baseValue")), "")
                out.append((test, number(score, "SCORE") / self.points, fid))
            if out:
                break
        return out

    def otherwise(self) -> str:
        """The feedback identifier that the `responseElse` of the scoring rule (the rule
        `branches` reads) shows when it scores 0: feedback for any other response (dpassess's
        `any_other` answer, Moodle's `*`); "" when there is none."""
        rp = _first(self.root, "responseProcessing")
        for rule in _children(rp, "responseCondition") if rp is not None else ():
            scoring = [b for b in rule if _local(b) in _BRANCHES and len(b)
                       and _local(b[0]) != "isNull"
                       and any(sov.get("identifier") == "SCORE"
                               for sov in _children(b, "setOutcomeValue"))]
            if not scoring:
                continue
            last = rule[-1] if len(rule) else None
            if last is None or _local(last) != "responseElse":
                return ""
            sets = {sov.get("identifier"): sov for sov in _children(last, "setOutcomeValue")}
            try:
                scores_nothing = float(_text(_first(sets.get("SCORE"), "baseValue"))) == 0
            except ValueError:
                scores_nothing = False
            if not scores_nothing or "FEEDBACK" not in sets:
                return ""
            return next((_text(bv) for bv in _descendants(sets["FEEDBACK"], "baseValue")), "")
        return ""

    def answer_feedback(self, fids: list[str]) -> dict[str, str]:
        """The modalFeedback each answer shows (by the answer's id, a, b, c...)."""
        shown = {mf.get("identifier", ""): mf for mf in _children(self.root, "modalFeedback")}
        out = {}
        self.shown.update(fids)
        for aid, fid in zip(option_ids(len(fids)), fids, strict=True):
            mf = shown.get(fid) if fid else None
            if mf is not None and (md := _markdown(mf.text, list(mf), inline=False)):
                out[aid] = md
        return out

    # -- the types ---------------------------------------------------------------------------
    def numerical(self) -> tuple[Callable[..., Item], dict[str, Any]]:
        answers: list[NumericAnswer] = []
        fids: list[str] = []
        for test, fraction, fid in self.branches():
            spec = _numeric_test(test)
            if spec is None:
                raise Skip(f"a <{_local(test)}> rule is not one the importer reads as a "
                           "numerical answer")
            if fraction < 0:
                continue
            answers.append(NumericAnswer.model_validate(
                {"id": option_id(len(answers)),
                 "fraction": round(min(1.0, fraction), 7), **spec}))
            fids.append(fid)
        if not answers:
            values = [_text(v) for v in _descendants(self.decl, "value")]
            if len(values) != 1:
                raise Skip("no rule scores the response and there is not one correct value")
            answers.append(NumericAnswer(id="a", value=number(values[0], "correctResponse")))
            fids.append("")
        # any other number: kept when its feedback says something (as the other importers do)
        other = self.otherwise()
        feedback = self.answer_feedback([*fids, other] if other else fids)
        if option_id(len(answers)) in feedback:
            answers.append(NumericAnswer(id=option_id(len(answers)), any_other=True))
        return (partial(Numerical, type=ItemType.numerical, answers=tuple(answers)),
                {"feedback": feedback})

    def short_answer(self) -> tuple[Callable[..., Item], dict[str, Any]]:
        groups: list[tuple[float, list[str], str]] = []
        cases: set[bool] = set()
        for test, fraction, fid in self.branches():
            words: list[str] = []
            for t in (list(test) if _local(test) == "or" else [test]):
                match _local(t):
                    case "stringMatch":
                        words.append(_text(next((c for c in t if _local(c) == "baseValue"),
                                                None)).replace("*", "\\*"))
                        cases.add(t.get("caseSensitive", "true") == "true")
                    case "patternMatch":
                        word, case = _wildcard(t.get("pattern", ""))
                        words.append(word)
                        cases.add(case)
                    case "match":
                        words.append(_text(next((c for c in t if _local(c) == "baseValue"),
                                                None)).replace("*", "\\*"))
                        cases.add(True)
                    case other:
                        raise Skip(f"a <{other}> rule is not one the importer reads as a "
                                   "short answer")
            if fraction >= 0:
                groups.append((round(min(1.0, max(0.0, fraction)), 7), words, fid))
        if not groups:  # the map_response template: the mapping says it all
            mapping = _first(self.decl, "mapping")
            for entry in [] if mapping is None else _children(mapping, "mapEntry"):
                fraction = round(number(entry.get("mappedValue", "0"), "mappedValue")
                                 / self.points, 7)
                cases.add(entry.get("caseSensitive", "true") == "true")
                word = entry.get("mapKey", "").replace("*", "\\*")
                if groups and groups[-1][0] == fraction:
                    groups[-1][1].append(word)
                else:
                    groups.append((fraction, [word], ""))
        if not groups:
            raise Skip("no rule and no mapping scores the response")
        if len(cases) > 1:
            self.r.warn("some answers are case sensitive and some not; all are read as case "
                        "sensitive")
        ids = option_ids(len(groups))
        return (partial(ShortAnswer, type=ItemType.short_answer,
                        case_sensitive=cases != {False},
                        answers=tuple(TextAnswer(id=aid, fraction=f)
                                      for aid, (f, _, _) in zip(ids, groups, strict=True))),
                {"answers": {aid: tuple(dict.fromkeys(w)) for aid, (_, w, _) in
                             zip(ids, groups, strict=True)},
                 "feedback": self.answer_feedback([fid for _, _, fid in groups])})

    def matching(self) -> tuple[Callable[..., Item], dict[str, Any]]:
        sets = _children(self.inter, "simpleMatchSet")
        if len(sets) != 2:
            raise Skip(f"a matchInteraction with {len(sets)} match sets (two are read)")
        premises, responses = (_children(s, "simpleAssociableChoice") for s in sets)
        p_ids = [c.get("identifier", "") for c in premises]
        r_ids = [c.get("identifier", "") for c in responses]
        right: dict[str, str] = {}
        cr = _first(self.decl, "correctResponse")
        for v in [] if cr is None else _children(cr, "value"):
            p, _, r = _text(v).partition(" ")
            if p not in p_ids or r not in r_ids:
                raise Skip(f"correctResponse pair {_text(v)!r} names a choice the interaction "
                           "does not have")
            if p in right:
                raise Skip(f"premise {p!r} has two right responses (the model holds one)")
            right[p] = r
        if sorted(right) != sorted(p_ids):
            raise Skip("a premise has no right response")
        if len(set(right.values())) != len(right):
            raise Skip("a response is right for two premises (the model gives each pair its "
                       "own response)")
        extra = [r for r in r_ids if r not in right.values()]
        ours = _pair_ids(p_ids, right, extra)
        pair_ids = [ours[p] for p in p_ids]
        by_response = {right[p]: ours[p] for p in p_ids} | {r: ours[r] for r in extra}
        text = {"premises": {ours[p]: _markdown(c.text, list(c), inline=True)
                             for p, c in zip(p_ids, premises, strict=True)},
                "responses": {by_response[r]: _markdown(c.text, list(c), inline=True)
                              for r, c in zip(r_ids, responses, strict=True)}}
        mapping = _first(self.decl, "mapping")
        if mapping is not None:
            values = {number(e.get("mappedValue", "0"), "mappedValue")
                      for e in _children(mapping, "mapEntry")}
            if len(values) > 1:
                self.r.warn("pairs worth different points are not carried: each right pair "
                            "earns an equal share")
        return (partial(Matching, type=ItemType.matching, pairs=tuple(pair_ids),
                        distractors=tuple(ours[r] for r in extra),
                        shuffle=self.inter.get("shuffle", "false") == "true"), text)

    def essay(self) -> tuple[Callable[..., Item], dict[str, Any]]:
        fmt = _ESSAY_FORMATS.get(self.inter.get("format", "plain"), "plain")
        try:
            lines = int(self.inter.get("expectedLines", "15"))
        except ValueError:
            lines = 15
        lines = min(100, max(1, lines))
        if self.inter.get("expectedLength"):
            self.r.warn("expectedLength is not carried (word limits are not QTI's)")
        required = self.inter.get("minStrings", "0") not in ("0", "")
        return (partial(Essay, type=ItemType.essay, response_format=fmt, lines=lines,
                        response_required=required),
                {"grader_info": self.rubric or None,
                 "response_template": self.inter.get("placeholderText") or None})

    def ordering(self) -> tuple[Callable[..., Item], dict[str, Any]]:
        choices = {c.get("identifier", ""): c for c in _children(self.inter, "simpleChoice")}
        cr = _first(self.decl, "correctResponse")
        order = [_text(v) for v in ([] if cr is None else _children(cr, "value"))]
        if sorted(order) != sorted(choices):
            raise Skip("the correctResponse does not put every choice in order")
        ids = self.r._option_ids(order)
        return (partial(Ordering, type=ItemType.ordering, options=tuple(ids),
                        grading=self.ordering_grading(len(ids))),
                {"options": {oid: _markdown(choices[q].text, list(choices[q]), inline=True)
                             for oid, q in zip(ids, order, strict=True)}})

    def ordering_grading(self, n: int) -> OrderingGrading:
        """The grading type whose rules the response processing holds (as dpassess writes
        each); all-or-nothing for QTI's match_correct template or a single match rule."""
        rp = _first(self.root, "responseProcessing")
        outcomes = {o.get("identifier") for o in _children(self.root, "outcomeDeclaration")}
        if rp is None or "RAW" not in outcomes:
            if _first(self.decl, "mapping") is not None:
                self.r.warn("partial credit by mapping is not carried: read as all or nothing")
            return "all_or_nothing"
        sets_raw = [sov for sov in _descendants(rp, "setOutcomeValue")
                    if sov.get("identifier") == "RAW"]
        in_c_rules = any(_descendants(branch, "index") for sov in sets_raw
                         if (branch := sov.getparent()) is not None)
        compares_c = any(_local(t) == "lt" and all(_local(c) == "variable" for c in t)
                         for t in _descendants(rp, "lt"))
        divisor = next((number(_text(_children(d, "baseValue")[-1]), "divisor")
                        for d in _descendants(rp, "divide") if _children(d, "baseValue")), 0.0)
        ends = {_text(_first(t, "baseValue")) for t in _descendants(rp, "match")
                if _children(t, "variable") and _children(t, "baseValue")
                and _children(t, "variable")[0].get("identifier", "").startswith("C")}
        if f"L{n}" in outcomes:
            ordered = any(_local(t) == "and" for t in _descendants(rp, "and"))
            return "longest_ordered_subset" if ordered else "longest_contiguous_subset"
        if in_c_rules:
            return "absolute_position" if divisor == n else "relative_to_correct"
        if compares_c:
            return "relative_all_previous_and_next"
        if "1" in ends and str(n) in ends:
            return "relative_one_previous_and_next"
        if str(n) in ends:
            return "relative_next_include_last"
        return "relative_next_exclude_last"


#: The interactions an item of several reads as a cloze item's gaps.
_GAP_INTERACTIONS = ("textEntryInteraction", "inlineChoiceInteraction", "choiceInteraction")


def _in_text(inter: etree._Element, tool: str) -> bool:
    """Whether the one interaction of an item is a cloze item's gap: an inline choice always
    (it stands in a sentence); a text entry or a block choice when dpassess wrote it as a gap
    (its response named `RESPONSE_<gap>`, where a one-interaction item's is `RESPONSE`).
    Another tool's text entry in a sentence ("g in m/s2: ___") is a numerical or
    short-answer item, as before."""
    if _local(inter) == "inlineChoiceInteraction":
        return True
    return tool == TOOL and inter.get("responseIdentifier", "").startswith("RESPONSE_")


class _GapReader(_TypedReader):
    """One text entry of a cloze item: the rules that score its response (whatever they add to
    SCORE: the full-marks answer's value is the gap's points)."""

    def branches(self) -> list[tuple[etree._Element, float, str]]:
        rid = self.decl.get("identifier")
        rp = _first(self.root, "responseProcessing")
        out: list[tuple[etree._Element, float, str]] = []
        for rule in [] if rp is None else _children(rp, "responseCondition"):
            if not any(_local(v) == "variable" and v.get("identifier") == rid
                       for v in rule.iter()):
                continue
            for branch in rule:
                if _local(branch) not in ("responseIf", "responseElseIf") or not len(branch):
                    continue
                test = branch[0]
                if _local(test) == "isNull":
                    continue
                score = next((_text(bv) for sov in _children(branch, "setOutcomeValue")
                              if sov.get("identifier") == "SCORE"
                              for bv in _descendants(sov, "baseValue")), None)
                if score is None:
                    continue
                fid = next((_text(bv) for sov in _children(branch, "setOutcomeValue")
                            if sov.get("identifier") == "FEEDBACK"
                            for bv in _descendants(sov, "baseValue")), "")
                out.append((test, number(score, "SCORE"), fid))
            if out:
                break
        top = max((v for _, v, _ in out), default=0.0)
        self.points = top if top > 0 else 1.0
        return [(t, v / self.points, f) for t, v, f in out]


class _ClozeReader:
    """An item of several text-entry and inline-choice interactions -> a cloze item: a gap per
    interaction (`g1`, `g2`, ... where it stood in the body), each read as the item of its kind
    would be; a gap's points are what its full-marks answer adds to SCORE."""

    def __init__(self, reader: _ItemReader, root: etree._Element, body: etree._Element,
                 interactions: list[etree._Element], lang: str) -> None:
        self.r, self.root, self.body, self.lang = reader, root, body, lang
        self.interactions = interactions

    def read(self) -> Item:
        gaps: list[dict[str, Any]] = []
        texts: dict[str, dict[str, Any]] = {}
        shown: set[str] = set()
        stem, numbers = self._stem()
        for k in sorted(range(len(self.interactions)), key=lambda k: numbers[k]):
            inter = self.interactions[k]
            gid = f"g{numbers[k]}"
            decl = next((d for d in _children(self.root, "responseDeclaration")
                         if d.get("identifier") == inter.get("responseIdentifier")), None)
            if decl is None:
                raise Skip(f"no responseDeclaration for {inter.get('responseIdentifier')!r}")
            if _local(inter) in ("inlineChoiceInteraction", "choiceInteraction"):
                gap, text = self._choice(gid, inter, decl)
                text["feedback"] = self._choice_feedback(decl, text["options"], shown)
            else:
                gr = _GapReader(self.r, self.root, self.body, inter, decl, self.lang)
                if decl.get("baseType") in ("float", "integer"):
                    make, content = gr.numerical()
                    kind = "numerical"
                elif decl.get("baseType") == "string":
                    make, content = gr.short_answer()
                    kind = "short_answer"
                else:
                    raise Skip(f"a text entry of response type {decl.get('baseType')!r} is not "
                               "a gap the model holds")
                shown |= gr.shown
                kw = make.keywords if isinstance(make, partial) else {}
                gap = {"id": gid, "type": kind, "points": gr.points,
                       "answers": list(kw.get("answers", ()))}
                if kind == "short_answer":
                    gap["case_sensitive"] = kw.get("case_sensitive", False)
                text = {k: v for k, v in content.items() if k in ("answers", "feedback")}
            gaps.append(gap)
            texts[gid] = text
        _, explanation = self.r._feedback(self.root, {}, shown)
        topic, tags = self.r._topic_and_tags()
        fields = dict(id=self.r._id(self.root), topic=topic, tags=tags,
                      points=self.r._declared_points(self.root, self.root),
                      status=_STATUS.get(self.r.meta.status, "draft"),
                      difficulty=_DIFFICULTY.get(self.r.meta.difficulty))
        try:
            return Cloze.model_validate({
                **fields, "type": "cloze", "gaps": gaps,
                "text": {self.lang: {"stem": stem, "gaps": texts,
                                     "explanation": explanation or None}}})
        except ValidationError as exc:
            raise Skip(validation_reason(exc)) from None

    def _stem(self) -> tuple[str, list[int]]:
        """The stem with each gap named `[[g<n>]]`, and each interaction's gap number n (in
        document order): gaps are numbered in the order the text shows them, a block choice
        interaction where the text shows its number `(n)` (as dpassess writes it: a block
        cannot sit in a sentence), else after the text."""
        body = copy.deepcopy(self.body)
        marks = [d for d in body.iter() if _local(d) in _GAP_INTERACTIONS]
        blocks: list[int] = []  # block interactions, in document order
        for k, el in enumerate(marks):
            if _local(el) == "choiceInteraction":
                blocks.append(k)
                prompt = _first(el, "prompt")
                if prompt is not None:
                    _remove(prompt)
                _remove(el)
                continue
            el.tail = f"[[gap-at-{k}]]" + (el.tail or "")
            _remove(el)
        for p in [d for d in body.iter() if _local(d) == "p"]:
            if not len(p) and not (p.text or "").strip():
                _remove(p)
        stem = html_to_markdown(_html(*_unwrapped(body.text, list(body))), inline=False)
        inline = [k for k in range(len(marks)) if k not in blocks]
        numbers = [0] * len(marks)
        at, last = 0, []  # where the text is read up to; blocks the text shows nowhere
        for n in range(1, len(marks) + 1):
            token = f"[[gap-at-{inline[0]}]]" if inline else ""
            pi = stem.find(token, at) if inline else -1
            marker = f"({n})"
            pm = stem.find(marker, at) if blocks and stem.count(marker) == 1 else -1
            if pm != -1 and (pi == -1 or pm < pi):
                numbers[blocks.pop(0)] = n
                stem = stem[:pm] + f"[[g{n}]]" + stem[pm + len(marker):]
                at = pm
            elif inline:
                numbers[inline.pop(0)] = n
                stem = stem.replace(token, f"[[g{n}]]", 1)
                at = max(pi, 0)
            else:
                numbers[blocks.pop(0)] = n
                last.append(n)
        for n in last:
            stem += f"\n\n[[g{n}]]"
        return stem, numbers

    def _choice_feedback(self, decl: etree._Element, options: dict[str, str],
                         shown: set[str]) -> dict[str, str]:
        """The feedback of each option: a rule that adds a feedback identifier to FEEDBACK when
        the gap's response is (or holds) the option, and its modalFeedback."""
        rid = decl.get("identifier")
        qti_to_ours = {oid: oid for oid in options}
        bodies = {mf.get("identifier", ""): mf for mf in _children(self.root, "modalFeedback")}
        rp = _first(self.root, "responseProcessing")
        out: dict[str, str] = {}
        for rule in [] if rp is None else _children(rp, "responseCondition"):
            branch = _first(rule, "responseIf")
            if branch is None or not len(branch) or _local(branch[0]) not in ("match", "member"):
                continue
            test = branch[0]
            if not any(_local(v) == "variable" and v.get("identifier") == rid for v in test):
                continue
            value = next((_text(v) for v in test if _local(v) == "baseValue"), "")
            fid = next((_text(bv) for sov in _children(branch, "setOutcomeValue")
                        if sov.get("identifier") == "FEEDBACK"
                        for bv in _descendants(sov, "baseValue")), "")
            oid = qti_to_ours.get(value.lower()) or qti_to_ours.get(value)
            mf = bodies.get(fid)
            if oid and mf is not None and (md := _markdown(mf.text, list(mf), inline=False)):
                out[oid] = md
                shown.add(fid)
        return out

    def _choice(self, gid: str, inter: etree._Element, decl: etree._Element
                ) -> tuple[dict[str, Any], dict[str, Any]]:
        block = _local(inter) == "choiceInteraction"
        choices = _children(inter, "simpleChoice" if block else "inlineChoice")
        qti_ids = [c.get("identifier", "") for c in choices]
        ids = self.r._option_ids(qti_ids)
        to_ours = dict(zip(qti_ids, ids, strict=True))
        cr = _first(decl, "correctResponse")
        key = [to_ours.get(_text(v), "") for v in _children(cr, "value")] if cr is not None \
            else []
        multiple = block and decl.get("cardinality") == "multiple"
        if not key or "" in key or (len(key) != 1 and not multiple):
            raise Skip(f"choice {inter.get('responseIdentifier')!r}: its correctResponse names "
                       "no choice of it" + ("" if multiple else ", or several"))
        mapping = _first(decl, "mapping")
        points = number(mapping.get("upperBound", "1"), "upperBound") \
            if mapping is not None and mapping.get("upperBound") else 1.0
        if multiple:
            fractions = {to_ours.get(e.get("mapKey", ""), ""): round(
                number(e.get("mappedValue", "0"), "mappedValue") / (points or 1.0), 7)
                for e in ([] if mapping is None else _children(mapping, "mapEntry"))}
            fractions.pop("", None)
            mr = {"id": gid, "type": "multiple_response", "options": ids, "key": key,
                  "shuffle": inter.get("shuffle") == "true", "points": points or 1.0,
                  "display": "horizontal" if "horizontal" in inter.get("class", "")
                  else "vertical"}
            right, wrong = len(key), len(ids) - len(key)
            default = {o: (1 / right if o in key else (-1 / wrong if wrong else 0.0)) for o in ids}
            if fractions and any(abs(fractions.get(o, 0.0) - default[o]) > 1e-6 for o in ids):
                mr["weights"] = fractions
            options = {to_ours[c.get("identifier", "")]: _markdown(c.text, list(c), inline=True)
                       for c in choices}
            return mr, {"options": options}
        weights = {}
        for entry in [] if mapping is None else _children(mapping, "mapEntry"):
            oid = to_ours.get(entry.get("mapKey", ""))
            value = number(entry.get("mappedValue", "0"), "mappedValue") / (points or 1.0)
            if oid and oid != key[0] and value > 0:
                weights[oid] = round(value, 7)
        gap = {"id": gid, "type": "choice", "options": ids, "key": key[0],
               "shuffle": inter.get("shuffle") == "true", "weights": weights or None,
               "points": points or 1.0, "display": "vertical" if block else "dropdown"}
        options = {to_ours[c.get("identifier", "")]: _markdown(c.text, list(c), inline=True)
                   for c in choices}
        return gap, {"options": options}


def _stem_without(body: etree._Element, inter: etree._Element) -> tuple[str, str]:
    """The stem (the body without the interaction, the paragraph left empty around it, and the
    rubric blocks) and the scorers' rubric, as Markdown."""
    body = copy.deepcopy(body)
    target = next(d for d in body.iter() if _local(d) == _local(inter))
    prompt = _first(target, "prompt")
    if prompt is not None:  # the prompt is part of the stem, where the interaction was
        prompt.tag = etree.QName(QTI_NS, "p").text
        prompt.tail = None
        target.addprevious(prompt)
    _remove(target)
    rubric = []
    for block in [d for d in body.iter() if _local(d) == "rubricBlock"]:
        if block.get("view", "") in ("scorer", "tutor"):
            rubric.append(_markdown(block.text, list(block), inline=False))
        _remove(block)
    for p in [d for d in body.iter() if _local(d) == "p"]:
        if not len(p) and not (p.text or "").strip():
            _remove(p)
    stem = html_to_markdown(_html(*_unwrapped(body.text, list(body))), inline=False)
    return stem, "\n\n".join(r for r in rubric if r)


def _remove(el: etree._Element) -> None:
    """Take `el` out of its parent, keeping its tail text where it was."""
    parent = el.getparent()
    if parent is None:
        return
    tail = el.tail or ""
    last = el.getnext() is None
    prev = el.getprevious()
    if prev is not None:
        prev.tail = (prev.tail or "") + tail
        if last:
            prev.tail = prev.tail.rstrip()
    else:
        parent.text = (parent.text or "") + tail
        if last:
            parent.text = parent.text.rstrip()
    parent.remove(el)


def _numeric_test(test: etree._Element) -> dict[str, float] | None:
    """A numerical answer's value and tolerance, or range, from a rule's test."""
    def value(el: etree._Element | None) -> float | None:
        if el is None or not _children(el, "baseValue"):
            return None
        return number(_text(_children(el, "baseValue")[0]), "baseValue")

    match _local(test):
        case "equal" | "match":
            v = value(test)
            if v is None:
                return None
            mode = test.get("toleranceMode", "exact")
            tol = [number(t, "tolerance") for t in test.get("tolerance", "0").split()] or [0.0]
            low, high = tol[0], tol[-1]
            if mode == "exact" or (low == high == 0):
                return {"value": v, "tolerance": 0.0}
            if mode == "absolute" and low == high:
                return {"value": v, "tolerance": low}
            if mode == "absolute":
                return {"min": v - low, "max": v + high}
            if mode == "relative":
                return {"min": v * (1 - low / 100), "max": v * (1 + high / 100)}
            return None
        case "and":
            bounds = {_local(t): value(t) for t in test}
            least, most = bounds.get("gte"), bounds.get("lte")
            if len(test) == 2 and least is not None and most is not None:
                return {"min": least, "max": most}
            return None
        case _:
            return None


_WILDCARD = re.compile(r"\.\*|\\(.)|\[(.)(.)\]|(.)", re.S)


def _wildcard(pattern: str) -> tuple[str, bool]:
    """A Moodle wording (`*` any characters, `\\*` a star) from the patternMatch pattern
    dpassess writes for it, and whether it is case sensitive (Skip for any other pattern)."""
    out = []
    folded = False
    for m in _WILDCARD.finditer(pattern):
        if m[0] == ".*":
            out.append("*")
        elif m[1] is not None:
            out.append("\\*" if m[1] == "*" else m[1])
        elif m[2] is not None:
            if m[2].upper() != m[3] or m[2] == m[3]:
                raise Skip(f"patternMatch {pattern!r} is not a wording the importer reads")
            out.append(m[2])
            folded = True
        elif m[4] in "?+{}()[]|^$.":
            raise Skip(f"patternMatch {pattern!r} is not a wording the importer reads")
        else:
            out.append(m[4])
    return "".join(out), not folded


def _pair_ids(premises: list[str], right: dict[str, str], extra: list[str]) -> dict[str, str]:
    """Our id for each premise (its pair) and each distractor response: `x` for dpassess's
    `p-x`/`r-x`, else a, b, c... in order."""
    ours = {p: p[2:] for p in premises if p.startswith("p-") and right[p] == f"r-{p[2:]}"}
    ours |= {r: r[2:] for r in extra if r.startswith("r-")}
    if len(ours) == len(premises) + len(extra) and all(
            _OPTION_ID.match(i) and len(i) <= 32 for i in ours.values()) \
            and len(set(ours.values())) == len(ours):
        return ours
    return dict(zip([*premises, *extra], option_ids(len(premises) + len(extra)), strict=True))


def _built_in_words(kind: _ChoiceKind, lang: str) -> dict[str, str]:
    """The option texts an item of type `kind` shows in `lang` when it gives none (an option
    that reads the same is left to them)."""
    match kind:
        case ItemType.true_false:
            return TRUE_FALSE_WORDS.get(lang, {})
        case ItemType.single_choice | ItemType.multiple_response:
            return {}
        case _:
            assert_never(kind)


#: What the answer cap counts: the choices of an interaction, the branches of response
#: processing (one per typed answer).
_CHOICES = frozenset({"simpleChoice", "simpleAssociableChoice"})
_BRANCHES = frozenset({"responseIf", "responseElseIf"})


def _read_item(data: bytes, where: str, meta: _Meta, lang: str | None,
               result: ImportResult, words: Mapping[str, tuple[str, str]] | None) -> None:
    root = parse_xml(data, where)
    reader = _ItemReader(where, meta, lang, result.warnings, words)
    reader.item = root.get("identifier") or None
    try:
        result.items.append(reader.read(root))
    except Skip as exc:
        result.skipped.append(note(CODE, where, str(exc), item=reader.item))


def read(data: bytes, name: str, lang: str | None, *,
         true_false_words: Mapping[str, tuple[str, str]] | None = None) -> ImportResult:
    """A QTI 2.1 package (zip) or a single assessmentItem file -> items."""
    check_size(data, name)
    result = ImportResult()
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        entries, repeats = _entries(data, name)
        if repeats:
            result.warnings.append(note(CODE, f"{name}:imsmanifest.xml", f"{repeats} item "
                                        "resource(s) list a file listed before; each file is "
                                        "read once"))
        for path, content, meta in entries:
            _read_item(content, f"{name}:{path}", meta, lang, result, true_false_words)
    else:
        _read_item(data, name, _Meta(), lang, result, true_false_words)
    result.items = unique_ids(result.items)
    return result


__all__ = ["CODE", "read"]
