"""QTI 2.1 (an IMS content package zip, or one assessmentItem file) -> items.

Reads choiceInteraction items: dpassess's own packages field for field (ids, topic, tags, status
and difficulty from the manifest's LOM, option ids, locked options, weights from the mapping,
feedback from modalFeedback), and plain QTI 2.1 choice items from other tools as far as they go.
Items with any other interaction are skipped with their file and the reason.
"""

from __future__ import annotations

import html
import posixpath
import re
from dataclasses import dataclass, field
from typing import assert_never
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
    option_ids,
    slugify,
    unique_ids,
    valid_id,
    validation_reason,
    with_titles,
)
from dpassess.importers.html_markdown import html_to_markdown
from dpassess.importers.safe import InputError, decode_utf8, open_zip, parse_xml
from dpassess.model import TRUE_FALSE_IDS, TRUE_FALSE_WORDS, Content, Item, ItemType, Option

CODE = "qti21"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
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


def _entries(data: bytes, name: str) -> list[tuple[str, bytes, _Meta]]:
    """(entry name, bytes, manifest metadata) of each item file, in manifest order."""
    files = open_zip(data, name)
    if "imsmanifest.xml" not in files:
        found = []
        for path in sorted(files):
            if path.lower().endswith(".xml") and b"assessmentItem" in files[path][:4096]:
                found.append((path, files[path], _Meta()))
        if not found:
            raise InputError(f"{name}: no imsmanifest.xml and no assessmentItem files: not a "
                             "QTI 2.1 package")
        return found
    manifest = parse_xml(files["imsmanifest.xml"], f"{name}:imsmanifest.xml")
    out = []
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
        out.append((path, files[path], _meta(res)))
    return out


# --- one item ---------------------------------------------------------------------------------


class _ItemReader:
    """One item file (`where`: the input, or `input:entry` in a package) -> an item; warnings
    go to `warnings`, naming the item by its identifier."""

    def __init__(self, where: str, meta: _Meta, lang: str | None,
                 warnings: list[Diagnostic]) -> None:
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
        body = _first(root, "itemBody")
        if body is None:
            raise Skip("the item has no itemBody")
        interactions = [d for d in body.iter() if _local(d).endswith("Interaction")]
        if len(interactions) != 1:
            raise Skip(f"{len(interactions)} interactions; an item holds exactly one "
                       "choiceInteraction" if interactions else "the item has no interaction")
        inter = interactions[0]
        if _local(inter) != "choiceInteraction":
            raise Skip(f"{_local(inter)} items are not supported yet")
        decl = next((d for d in _children(root, "responseDeclaration")
                     if d.get("identifier") == inter.get("responseIdentifier")), None)
        if decl is None:
            raise Skip(f"no responseDeclaration for {inter.get('responseIdentifier')!r}")
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
        if decl.get("cardinality") == "multiple":
            kind = ItemType.multiple_response
        else:
            kind = ItemType.true_false if tuple(ids) == TRUE_FALSE_IDS else ItemType.single_choice
        weights: dict[str, float] | None = None
        match kind:
            case ItemType.multiple_response:
                key, weights = self._multiple_key(ids, correct, mapping)
            case ItemType.single_choice | ItemType.true_false:
                key = self._single_key(ids, correct, mapping)
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
            titled = with_titles(item, {lang: " ".join(root.get("title", "").split())})
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
                    mapping: tuple[dict[str, float], float] | None) -> list[str]:
        """A single-choice (or true/false) item's key: its one correct response, with no
        credit for the other options."""
        if len(correct) != 1:
            raise Skip(f"a single-choice item needs one correct response, not {len(correct)}")
        if mapping is not None and any(abs(mapping[0].get(o, mapping[1])) > 1e-9
                                       for o in ids if o not in correct):
            raise Skip("partial or negative credit in a single-choice item (the model holds "
                       "partial credit for multiple-response items)")
        return correct

    def _lang(self, root: etree._Element) -> str:
        raw = root.get(XML_LANG)
        if raw:
            code = lang_code(raw)
            if code is None:
                raise Skip(f"xml:lang {raw!r} is not a language code the bank accepts")
            return code
        if self.lang:
            return self.lang
        raise NoLanguage(f"{self.where}: the item has no xml:lang; name its language (for "
                         "example en)")

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

    def _feedback(self, root: etree._Element,
                  to_ours: dict[str, str]) -> tuple[dict[str, str], str]:
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
        if self.meta.tool == TOOL and words:
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


def _built_in_words(kind: ItemType, lang: str) -> dict[str, str]:
    """The option texts an item of type `kind` shows in `lang` when it gives none (an option
    that reads the same is left to them)."""
    match kind:
        case ItemType.true_false:
            return TRUE_FALSE_WORDS.get(lang, TRUE_FALSE_WORDS["en"])
        case ItemType.single_choice | ItemType.multiple_response:
            return {}
        case _:
            assert_never(kind)


def _read_item(data: bytes, where: str, meta: _Meta, lang: str | None,
               result: ImportResult) -> None:
    decode_utf8(data, where)
    root = parse_xml(data, where)
    reader = _ItemReader(where, meta, lang, result.warnings)
    reader.item = root.get("identifier") or None
    try:
        result.items.append(reader.read(root))
    except Skip as exc:
        result.skipped.append(note(CODE, where, str(exc), item=reader.item))


def read(data: bytes, name: str, lang: str | None) -> ImportResult:
    """A QTI 2.1 package (zip) or a single assessmentItem file -> items."""
    check_size(data, name)
    result = ImportResult()
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        for path, content, meta in _entries(data, name):
            _read_item(content, f"{name}:{path}", meta, lang, result)
    else:
        _read_item(data, name, _Meta(), lang, result)
    result.items = unique_ids(result.items)
    return result


__all__ = ["CODE", "read"]
