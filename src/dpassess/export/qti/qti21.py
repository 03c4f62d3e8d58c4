"""A collection in one language -> an IMS content package (zip) of QTI 2.1 items and one test.

Shaped the way Canvas's QTI 2 importer reads packages (see docs/export-qti.md for why each choice
was made) and valid against the QTI 2.1.2 and IMS CP 1.1 schemas. Markdown is rendered by
`dpassess.markup.markdown` and parsed into QTI's XHTML subset by `_xhtml`; the XML is built with lxml.

Identifiers come from ids: item `<item id>-<lang>` (its file `items/<item id>.xml`), test
`<collection id>-<lang>-test`; the same collection gives a byte-identical zip.
"""

from __future__ import annotations

import copy
import io
from collections.abc import Sequence
from functools import lru_cache
from typing import IO, BinaryIO, NamedTuple
from urllib.parse import quote

from lxml import etree

from dpassess.diagnostics import UsageError
from dpassess.export import Collection, ExportResult, ExportWarning, check_lang
from dpassess.export.qti.package import ZipStream
from dpassess.markup.markdown import to_html, to_inline_html, to_plain
from dpassess.markup.media import is_local_image, locate_image, may_show_images
from dpassess.markup.xhtml import (
    PLAIN_PARAGRAPH,
    PLAIN_TEXT,
    QTI_NS,
    XML_LANG,
    append_flow,
    flow_kind,
)
from dpassess.markup.xmlchars import xml_safe
from dpassess.model import Item, ItemType

SUFFIX = ".zip"
MULTI = False
FORMAT = "qti21"

CP_NS = "http://www.imsglobal.org/xsd/imscp_v1p1"
LOM_NS = "http://ltsc.ieee.org/xsd/LOM"
QTIM_NS = "http://www.imsglobal.org/xsd/imsqti_metadata_v2p1"
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"
_SCHEMA_LOCATION = f"{{{XSI_NS}}}schemaLocation"
_QTI_XSD = "http://www.imsglobal.org/xsd/qti/qtiv2p1/imsqti_v2p1p2.xsd"
_QTI_LOCATION = f"{QTI_NS} {_QTI_XSD}"
_CP_LOCATION = " ".join([
    CP_NS, "http://www.imsglobal.org/xsd/imscp_v1p1.xsd",
    LOM_NS, "http://www.imsglobal.org/xsd/imsmd_loose_v1p3p2.xsd",
    QTIM_NS, "http://www.imsglobal.org/xsd/qti/qtiv2p1/imsqti_metadata_v2p1.xsd",
])
TOOL = "dpassess"

#: modalFeedback identifier of the explanation. Canvas maps identifiers matching /general_/ to the
#: question's general ("neutral") feedback; option feedback uses FB1..FBn, which match none of
#: Canvas's patterns (correct, incorrect, wrong, general_, _all, solution), so it stays per answer.
EXPLANATION_ID = "general_feedback"
LOM_STATUS = {"draft": "draft", "reviewed": "final", "retired": "unavailable"}
LOM_DIFFICULTY = {"easy": "easy", "medium": "medium", "hard": "difficult"}

_Q = f"{{{QTI_NS}}}"
_C = f"{{{CP_NS}}}"
_L = f"{{{LOM_NS}}}"
_M = f"{{{QTIM_NS}}}"


def export(collection: Collection, lang: str, out: BinaryIO | None = None) -> ExportResult:
    """The package for `collection` in `lang`, and a warning for anything it does not carry:
    its bytes, or written to `out` (a seekable binary file; `data` is then empty)."""
    check_lang(FORMAT, collection, lang, multi=MULTI)
    if out is None:
        buf = io.BytesIO()
        warnings = export(collection, lang, buf).warnings
        return ExportResult(buf.getvalue(), warnings)
    items = collection.items
    notes: dict[int, list[ExportWarning]] = {}  # item index -> its warnings, once known
    exported: list[Item] = []
    by_path: dict[str, int] = {}  # item file -> index of the item written there (the last one)
    for i, item in enumerate(items):
        if lang not in item.text:
            notes[i] = [ExportWarning(FORMAT, item.id, "text", f"no {lang!r} text; not exported")]
            continue
        exported.append(item)
        by_path[item_path(item)] = i
    if not exported:
        raise UsageError(f"{collection.id}: no item has {lang!r} text; nothing to export")
    # The manifest comes first in the package (entries are in sorted order) and lists each
    # item's images, so the items that may show one are built first, in item order, to find
    # them (their image files are kept to be packed); so are items whose file a later item
    # replaces (same id), for their warnings. Every other item is built once, when written.
    images: dict[str, bytes] = {}
    media: dict[str, list[str]] = {}  # item id -> package paths of the images it shows
    for i, item in enumerate(items):
        if i in notes:
            continue
        if by_path[item_path(item)] != i or may_show_images(item, (lang,), non_xml=True):
            builder = _ItemBuilder(item, lang)
            media[item.id] = builder.pack_images(builder.build(), collection.paths.get(item.id),
                                                 images)
            notes[i] = builder.warnings
        else:
            media.pop(item.id, None)  # as the last item of an id says: none
    package = ZipStream(out)
    with package.open("imsmanifest.xml") as fh:
        _write_manifest(fh, collection, lang, exported, media)
    trees = _Trees()
    for path in sorted([*by_path, *images]):
        if path in images:
            package.add(path, images[path])
            continue
        i = by_path[path]
        builder = _ItemBuilder(items[i], lang)
        package.add(path, _xml(builder.build(trees)))
        notes.setdefault(i, builder.warnings)
    package.add(test_path(collection), _xml(_test(collection, lang, exported)))
    package.close()
    return ExportResult(b"", [w for i in sorted(notes) for w in notes[i]])


def item_identifier(item: Item, lang: str) -> str:
    return f"{item.id}-{lang}"


def item_path(item: Item) -> str:
    return f"items/{item.id}.xml"


def test_path(collection: Collection) -> str:
    return f"tests/{collection.id}.xml"


def _num(x: float) -> str:
    """A float as QTI writes it: `1`, `0.5`, shortest round-trip form otherwise."""
    return str(int(x)) if x == int(x) else repr(x)


def _sub(parent: etree._Element, tag: str, attrib: dict[str, str] | None = None,
         text: str | None = None) -> etree._Element:
    el = etree.SubElement(parent, tag, attrib)
    if text is not None:
        el.text = text
    return el


# --- items ---------------------------------------------------------------------------------------


class _ItemBuilder:
    """One item in one language -> an assessmentItem element, plus warnings."""

    def __init__(self, item: Item, lang: str) -> None:
        self.item = item
        self.lang = lang
        self.content = item.text[lang]
        self.warnings: list[ExportWarning] = []

    def warn(self, field: str, message: str) -> None:
        self.warnings.append(ExportWarning(FORMAT, self.item.id, field, message))

    def text(self, field: str, source: str) -> str:
        clean, removed = xml_safe(source)
        if removed:
            self.warn(field, f"removed characters XML cannot carry: {removed}")
        return clean

    def flow(self, parent: etree._Element, field: str, html: str) -> None:
        notes: set[str] = set()
        append_flow(parent, html, notes)
        _keep_as_is(parent)
        for note in sorted(notes):
            self.warn(field, note)

    def build(self, trees: _Trees | None = None) -> etree._Element:
        """The item's assessmentItem: a copy of its shape's skeleton of its own, or (with
        `trees`) the export's working tree for that shape, filled in place; that one is only
        valid until the next item of the same shape is built into it."""
        item, lang, content = self.item, self.lang, self.content
        multiple = item.type is ItemType.multiple_response
        title = to_plain(self.text(f"text.{lang}.title", item.title(lang))) or item.id
        feedback_ids = tuple(o.id for o in item.options if content.feedback.get(o.id))
        # Everything but the identifiers, the title and the texts depends on a few properties
        # shared by many items: that skeleton is built once per shape, then copied (lxml copies
        # a subtree several times faster than it builds one element by element) or, when
        # streaming, copied once per export and refilled for each item of the shape.
        shape = _Shape(
            multiple, item.points, item.shuffle, tuple((o.id, o.locked) for o in item.options),
            tuple(item.key), tuple(item.fractions().items()) if multiple else (),
            bool(content.explanation), feedback_ids)
        tree = _Tree(shape) if trees is None else trees.get(shape)
        root = tree.root
        root.set("identifier", item_identifier(item, lang))
        root.set("title", title)
        root.set(XML_LANG, lang)
        self.fill(tree.stem, f"text.{lang}.stem", to_html(self.text_of("stem", content.stem)))
        for option, slot in zip(item.options, tree.choices, strict=True):
            oid = option.id
            html = to_inline_html(self.text_of(f"options.{oid}", item.option_text(lang, oid)))
            self.fill(slot, f"text.{lang}.options.{oid}", html)
        # feedback: per option, then the explanation
        for oid, slot in zip(feedback_ids, tree.feedback, strict=True):
            html = to_html(self.text_of(f"feedback.{oid}", content.feedback[oid]))
            if self.fill(slot, f"text.{lang}.feedback.{oid}", html) and _canvas_keeps_part(
                    slot.el):
                self.warn(f"text.{lang}.feedback.{oid}",
                          "Canvas keeps only the first paragraph of option feedback; "
                          "the package carries all of it")
        if content.explanation:
            self.fill(tree.explanation, f"text.{lang}.explanation",
                      to_html(self.text_of("explanation", content.explanation)))
        return root

    def text_of(self, field: str, source: str) -> str:
        """`text` for `text.<lang>.<field>`, its name made only when a warning needs it."""
        clean, removed = xml_safe(source)
        if removed:
            self.warn(f"text.{self.lang}.{field}",
                      f"removed characters XML cannot carry: {removed}")
        return clean

    def fill(self, slot: _Slot, field: str, html: str) -> bool:
        """Make `slot`'s element hold `html` as `flow` appends it to an empty one; True when it
        holds markup (the common shapes, plain text or one plain paragraph, are set directly:
        those `append_flow` appends without parsing)."""
        el = slot.el
        kind = flow_kind(html)
        if kind is PLAIN_TEXT:
            if slot.state is not _EMPTY:
                slot.clear()
            el.text = html  # "" as `_keep_as_is` leaves an empty element
            return False
        if kind is PLAIN_PARAGRAPH:
            p = slot.p
            if slot.state is not _PARAGRAPH:
                if slot.state is not _EMPTY:
                    slot.clear()
                if p is None:
                    p = slot.p = etree.SubElement(el, _Q + "p")
                else:
                    el.append(p)
                el.text = ""
                slot.state = _PARAGRAPH
            p.text = html[3:-4] or None
            return False
        if slot.state is not _EMPTY:
            slot.clear()
        el.text = None
        self.flow(el, field, html)
        slot.state = _MARKUP
        return True

    def pack_images(self, root: etree._Element, source: str | None,
                    files: dict[str, bytes]) -> list[str]:
        """Put the local images `root` shows into `files` (beside the item file, as its `src`
        says) and return their package paths; warn about those that cannot be found."""
        found: list[str] = []
        for img in root.iter(_Q + "img"):
            src = img.get("src", "")
            if not is_local_image(src):
                continue  # a URL or data: URI travels as written
            located = locate_image(src, source)
            if isinstance(located, str):
                self.warn(f"text.{self.lang}", f"image {src!r} {located}; not in the package")
                continue
            path, local = located
            if path.endswith(".xml"):
                self.warn(f"text.{self.lang}", f"image {src!r} names an XML file (the "
                          "package's own files are XML); not in the package")
            else:
                try:
                    data = local.read_bytes()
                except OSError as exc:
                    self.warn(f"text.{self.lang}", f"image {src!r}: cannot read {local}: "
                              f"{exc.strerror or exc}; not in the package")
                    continue
                if files.get(path, data) != data:
                    # items from different folders name different files with the same path
                    self.warn(f"text.{self.lang}", f"image {src!r}: another item's file is "
                              f"already packed as {path}; rename one of them (not in the "
                              "package)")
                    continue
                files[path] = data
                if path not in found:
                    found.append(path)
        return found



class _Shape(NamedTuple):
    """What an item's skeleton depends on."""

    multiple: bool
    points: float
    shuffle: bool
    options: tuple[tuple[str, bool], ...]  # (id, locked)
    key: tuple[str, ...]
    fractions: tuple[tuple[str, float], ...]  # multiple response only
    explanation: bool
    feedback: tuple[str, ...]  # ids of the options with feedback


_EMPTY, _PARAGRAPH, _MARKUP = "empty", "paragraph", "markup"


class _Slot:
    """An element of a working tree that holds flow content, and what it holds now: text only
    (`_EMPTY`), the slot's own `<p>` (kept to be reused) or parsed markup."""

    __slots__ = ("el", "p", "state")

    def __init__(self, el: etree._Element) -> None:
        self.el = el
        self.p: etree._Element | None = None
        self.state = _EMPTY

    def clear(self) -> None:
        """Back to no content at all (the text is set by the caller)."""
        if self.state is _PARAGRAPH:
            self.el.remove(self.p)
        else:
            del self.el[:]
        self.state = _EMPTY


class _Tree:
    """A copy of a shape's skeleton and its flow slots: the stem, each choice, each option
    feedback's div, the explanation's div (None without one)."""

    __slots__ = ("choices", "explanation", "feedback", "root", "stem")

    def __init__(self, shape: _Shape) -> None:
        root = self.root = _skeleton(shape).__deepcopy__(None)
        body = root[4]
        self.stem = _Slot(body[0])
        self.choices = [_Slot(choice) for choice in body[1]]
        modals = root[6:]
        self.explanation = _Slot(modals.pop()[0]) if shape.explanation else None
        self.feedback = [_Slot(modal[0]) for modal in modals]


class _Trees:
    """One export's working trees, by shape (at most `_TREES`; the oldest is dropped)."""

    def __init__(self) -> None:
        self.trees: dict[_Shape, _Tree] = {}

    def get(self, shape: _Shape) -> _Tree:
        tree = self.trees.get(shape)
        if tree is None:
            if len(self.trees) >= _TREES:
                del self.trees[next(iter(self.trees))]
            tree = self.trees[shape] = _Tree(shape)
        return tree


_TREES = 256


@lru_cache(maxsize=1024)
def _skeleton(shape: _Shape) -> etree._Element:
    """An assessmentItem without identifier, title, language and texts, for items of `shape`.

    Children, in order: responseDeclaration, 3 outcomeDeclarations, itemBody (stem div,
    choiceInteraction), responseProcessing, a modalFeedback per option feedback, then one for
    the explanation; each modalFeedback holds one div.
    """
    multiple, points = shape.multiple, _num(shape.points)
    root = etree.Element(_Q + "assessmentItem", nsmap={None: QTI_NS, "xsi": XSI_NS})
    root.set(_SCHEMA_LOCATION, _QTI_LOCATION)
    root.set("identifier", "")
    root.set("title", "")
    root.set("adaptive", "false")
    root.set("timeDependent", "false")
    root.set("toolName", TOOL)
    root.set(XML_LANG, "")

    # declarations
    response = _sub(root, _Q + "responseDeclaration", {
        "identifier": "RESPONSE", "cardinality": "multiple" if multiple else "single",
        "baseType": "identifier"})
    correct = _sub(response, _Q + "correctResponse")
    for oid in shape.key:
        _sub(correct, _Q + "value", text=oid)
    if multiple:
        mapping = _sub(response, _Q + "mapping", {
            "lowerBound": "0", "upperBound": points, "defaultValue": "0"})
        for oid, fraction in shape.fractions:
            _sub(mapping, _Q + "mapEntry",
                 {"mapKey": oid, "mappedValue": _num(fraction * shape.points)})
    score = _sub(root, _Q + "outcomeDeclaration", {
        "identifier": "SCORE", "cardinality": "single", "baseType": "float",
        "normalMinimum": "0", "normalMaximum": points})
    _sub(_sub(score, _Q + "defaultValue"), _Q + "value", text="0")
    maxscore = _sub(root, _Q + "outcomeDeclaration", {
        "identifier": "MAXSCORE", "cardinality": "single", "baseType": "float"})
    _sub(_sub(maxscore, _Q + "defaultValue"), _Q + "value", text=points)
    _sub(root, _Q + "outcomeDeclaration", {
        "identifier": "FEEDBACK", "cardinality": "multiple", "baseType": "identifier"})

    # body
    body = _sub(root, _Q + "itemBody")
    _sub(body, _Q + "div")
    interaction = _sub(body, _Q + "choiceInteraction", {
        "responseIdentifier": "RESPONSE", "shuffle": "true" if shape.shuffle else "false",
        "maxChoices": str(len(shape.options)) if multiple else "1"})
    for oid, locked in shape.options:
        choice = _sub(interaction, _Q + "simpleChoice", {"identifier": oid})
        if locked:
            choice.set("fixed", "true")

    # response processing: the rules of the standard templates (match_correct for one
    # answer, map_response for several), written out so the feedback rules can follow them
    rp = _sub(root, _Q + "responseProcessing")
    if shape.explanation:
        _add_feedback(rp, EXPLANATION_ID)
    rp.append(_scoring_rule(multiple, points))
    feedback_ids = {oid: f"FB{n}" for n, (oid, _) in enumerate(shape.options, 1)
                    if oid in shape.feedback}
    for oid, fid in feedback_ids.items():
        rp.append(_feedback_rule(multiple, oid, fid))

    # feedback: per option, then the explanation
    for fid in feedback_ids.values():
        _sub(_modal(root, fid), _Q + "div")
    if shape.explanation:
        _sub(_modal(root, EXPLANATION_ID), _Q + "div")
    return root


def _modal(root: etree._Element, identifier: str) -> etree._Element:
    return _keep_as_is(_sub(root, _Q + "modalFeedback", {
        "outcomeIdentifier": "FEEDBACK", "identifier": identifier, "showHide": "show"}))


@lru_cache(maxsize=64)
def _scoring_prototype(multiple: bool, points: str) -> etree._Element:
    cond = etree.Element(_Q + "responseCondition", nsmap={None: QTI_NS})
    if multiple:  # the rules of the map_response template
        when = _sub(cond, _Q + "responseIf")
        _sub(_sub(when, _Q + "isNull"), _Q + "variable", {"identifier": "RESPONSE"})
        _set_score(when, "0")
        other = _sub(_sub(cond, _Q + "responseElse"), _Q + "setOutcomeValue",
                     {"identifier": "SCORE"})
        _sub(other, _Q + "mapResponse", {"identifier": "RESPONSE"})
    else:  # the rules of the match_correct template, scaled to the item's points
        when = _sub(cond, _Q + "responseIf")
        match = _sub(when, _Q + "match")
        _sub(match, _Q + "variable", {"identifier": "RESPONSE"})
        _sub(match, _Q + "correct", {"identifier": "RESPONSE"})
        _set_score(when, points)
        _set_score(_sub(cond, _Q + "responseElse"), "0")
    return cond


def _scoring_rule(multiple: bool, points: str) -> etree._Element:
    return copy.deepcopy(_scoring_prototype(multiple, points))


@lru_cache(maxsize=2)
def _feedback_prototype(multiple: bool) -> etree._Element:
    cond = etree.Element(_Q + "responseCondition", nsmap={None: QTI_NS})
    when = _sub(cond, _Q + "responseIf")
    if multiple:  # the option is among the chosen ones
        test = _sub(when, _Q + "member")
        _sub(test, _Q + "baseValue", {"baseType": "identifier"})
        _sub(test, _Q + "variable", {"identifier": "RESPONSE"})
    else:  # the option is the chosen one
        test = _sub(when, _Q + "match")
        _sub(test, _Q + "variable", {"identifier": "RESPONSE"})
        _sub(test, _Q + "baseValue", {"baseType": "identifier"})
    _add_feedback(when, "")
    return cond


def _feedback_rule(multiple: bool, option_id: str, feedback_id: str) -> etree._Element:
    """If `option_id` is chosen: FEEDBACK := FEEDBACK + {feedback_id}. Copied from a prototype:
    lxml copies a subtree faster than it builds one element by element."""
    rule = copy.deepcopy(_feedback_prototype(multiple))
    option, feedback = rule.iter(_Q + "baseValue")
    option.text, feedback.text = option_id, feedback_id
    return rule


def _set_score(parent: etree._Element, value: str) -> None:
    s = _sub(parent, _Q + "setOutcomeValue", {"identifier": "SCORE"})
    _sub(s, _Q + "baseValue", {"baseType": "float"}, value)


def _add_feedback(parent: etree._Element, identifier: str) -> None:
    """FEEDBACK := FEEDBACK + {identifier} (the shape Canvas reads an answer's feedback from)."""
    s = _sub(parent, _Q + "setOutcomeValue", {"identifier": "FEEDBACK"})
    m = _sub(s, _Q + "multiple")
    _sub(m, _Q + "variable", {"identifier": "FEEDBACK"})
    _sub(m, _Q + "baseValue", {"baseType": "identifier"}, identifier)


def _canvas_keeps_part(div: etree._Element) -> bool:
    """Canvas reads an answer's feedback from the first <p> inside it (else the first <div>)."""
    if next(div.iter(_Q + "p"), None) is None:
        return False
    only_p = len(div) == 1 and div[0].tag == _Q + "p" and not (div[0].tail or "").strip()
    return not (only_p and not (div.text or "").strip())


# --- the test ------------------------------------------------------------------------------------


def _test(collection: Collection, lang: str, items: Sequence[Item]) -> etree._Element:
    base = f"{collection.id}-{lang}"
    root = etree.Element(_Q + "assessmentTest", nsmap={None: QTI_NS, "xsi": XSI_NS})
    root.set(_SCHEMA_LOCATION, _QTI_LOCATION)
    root.set("identifier", f"{base}-test")
    root.set("title", _plain(collection.title_in(lang)) or collection.id)
    root.set("toolName", TOOL)
    for name in ("SCORE", "MAXSCORE"):
        out = _sub(root, _Q + "outcomeDeclaration",
                   {"identifier": name, "cardinality": "single", "baseType": "float"})
        _sub(_sub(out, _Q + "defaultValue"), _Q + "value", text="0")
    part = _sub(root, _Q + "testPart", {"identifier": f"{base}-part",
                                         "navigationMode": "nonlinear",
                                         "submissionMode": "individual"})
    # visible="false": Canvas turns a visible titled section into an extra text-only question
    section = _sub(part, _Q + "assessmentSection", {
        "identifier": f"{base}-section", "title": root.get("title"), "visible": "false"})
    # Each item's reference is a copy of one prototype (faster than two elements built).
    # Canvas takes a quiz question's points from the first weight of its item reference;
    # the test's outcome processing uses no weights, so other systems score by SCORE alone.
    proto = _sub(section, _Q + "assessmentItemRef", {"identifier": "", "href": ""})
    _sub(proto, _Q + "weight", {"identifier": "points", "value": ""})
    section.remove(proto)
    for item in items:
        ref = proto.__deepcopy__(None)
        ref.set("identifier", item_identifier(item, lang))
        ref.set("href", "../" + item_path(item))
        ref[0].set("value", _num(item.points))
        section.append(ref)
    processing = _sub(root, _Q + "outcomeProcessing")
    for name in ("SCORE", "MAXSCORE"):
        total = _sub(_sub(processing, _Q + "setOutcomeValue", {"identifier": name}), _Q + "sum")
        _sub(total, _Q + "testVariables", {"variableIdentifier": name})
    return root


def _plain(markdown: str) -> str:
    return to_plain(xml_safe(markdown)[0])


# --- the manifest --------------------------------------------------------------------------------


_MANIFEST_NSMAP = {None: CP_NS, "imsqti": QTI_NS, "lom": LOM_NS, "qtim": QTIM_NS, "xsi": XSI_NS}


def _write_manifest(out: IO[bytes], collection: Collection, lang: str, items: Sequence[Item],
                    media: dict[str, list[str]]) -> None:
    """Write the manifest to `out`: its head (metadata and the test's resource), then each
    item's resource, serialised under a manifest of its own (same namespaces, same depth) and
    written without that wrapper's lines: exactly the bytes of the whole tree serialised at
    once. Resources of one shape are refilled into one working tree (`_ResourceTree`)."""
    base = f"{collection.id}-{lang}"
    # The imsqti_v2p1 namespace on the root is how Canvas tells QTI 2 from QTI 1.2: without it
    # Canvas runs its 1.2 converter and imports zero questions without an error.
    root = etree.Element(_C + "manifest", nsmap=_MANIFEST_NSMAP)
    root.set(_SCHEMA_LOCATION, _CP_LOCATION)
    root.set("identifier", f"{base}-package")
    meta = _sub(root, _C + "metadata")
    _sub(meta, _C + "schema", text="QTIv2.1 Package")
    _sub(meta, _C + "schemaversion", text="1.0.0")
    _sub(root, _C + "organizations")
    resources = _sub(root, _C + "resources")

    test_href = test_path(collection)
    test = _sub(resources, _C + "resource", {
        "identifier": f"{base}-test", "type": "imsqti_test_xmlv2p1", "href": test_href})
    lom = _sub(_sub(test, _C + "metadata"), _L + "lom")
    _lom_general(lom, collection.category, f"{collection.id}-test",
                 _plain(collection.title_in(lang)) or collection.id, lang, ())
    _sub(test, _C + "file", {"href": test_href})
    for item in items:
        _sub(test, _C + "dependency", {"identifierref": item_identifier(item, lang)})
    head = _xml(root)
    assert head.endswith(_RESOURCES_END)
    out.write(head[:-len(_RESOURCES_END)])
    del root, test, head

    trees: dict[tuple, _ResourceTree] = {}
    for item in items:
        href = item_path(item)
        content = item.text[lang]
        has_feedback = bool(content.explanation) or any(content.feedback.values())
        keywords = (*item.tags, item.topic)
        shape = (collection.category, lang, has_feedback, len(keywords), item.status.value,
                 item.difficulty.value if item.difficulty is not None else None)
        paths = media.get(item.id)
        if paths:  # a tree of its own, for its <file>s
            tree = _ResourceTree(_resource_skeleton(*shape))
        else:
            tree = trees.get(shape)
            if tree is None:
                if len(trees) >= _TREES:
                    del trees[next(iter(trees))]
                tree = trees[shape] = _ResourceTree(_resource_skeleton(*shape))
        res = tree.res
        res.set("identifier", item_identifier(item, lang))
        res.set("href", href)
        tree.entry.text = item.id
        tree.title.text = _plain(item.title(lang)) or item.id
        for word, keyword in zip(keywords, tree.keywords, strict=True):
            keyword.text = word
        tree.file.set("href", href)
        for path in paths or ():  # Canvas imports every listed <file>, images too
            _sub(res, _C + "file", {"href": quote(path)})
        _write_resources(out, tree.resources)
    out.write(_RESOURCES_END)


_RESOURCES_END = b"  </resources>\n</manifest>\n"
_RESOURCES_START = b"<resources>\n"


class _ResourceTree:
    """A copy of an item resource's skeleton, alone in a `_resources_wrapper`, refilled for each
    item of its shape: its identifier, hrefs, LOM entry, title and keywords."""

    __slots__ = ("entry", "file", "keywords", "res", "resources", "title")

    def __init__(self, skeleton: etree._Element) -> None:
        self.resources = _resources_wrapper()
        res = self.res = skeleton.__deepcopy__(None)
        self.resources.append(res)
        general = res[0][1][0]
        self.entry = general[0][1]
        self.title = general[1][0]
        self.keywords = [keyword[0] for keyword in general[3:]]
        self.file = res[1]


def _resources_wrapper() -> etree._Element:
    """An empty `<resources>` inside a manifest with the real one's namespaces."""
    return _sub(etree.Element(_C + "manifest", nsmap=_MANIFEST_NSMAP), _C + "resources")


def _write_resources(out: IO[bytes], resources: etree._Element) -> None:
    """Write the resources in `resources` (from `_resources_wrapper`) as they sit in the
    manifest: two levels deep, indented by libxml2 as in the whole tree."""
    if not len(resources):
        return
    data = etree.tostring(resources.getparent(), encoding="UTF-8", xml_declaration=False,
                          pretty_print=True)
    start = data.index(_RESOURCES_START) + len(_RESOURCES_START)
    assert data.endswith(_RESOURCES_END)
    out.write(memoryview(data)[start:-len(_RESOURCES_END)])


@lru_cache(maxsize=1024)
def _resource_skeleton(catalog: str, lang: str, has_feedback: bool, keywords: int, status: str,
                       difficulty: str | None) -> etree._Element:
    """An item's manifest resource without identifier, href, entry, title and keyword texts,
    built in a manifest with the same namespaces (so a copy moved into the real manifest
    declares none of its own)."""
    manifest = etree.Element(_C + "manifest", nsmap=_MANIFEST_NSMAP)
    res = _sub(manifest, _C + "resource", {
        "identifier": "", "type": "imsqti_item_xmlv2p1", "href": ""})
    meta = _sub(res, _C + "metadata")
    qm = _sub(meta, _M + "qtiMetadata")  # before the LOM, as the QTI 2.1 CP profile orders them
    _sub(qm, _M + "timeDependent", text="false")
    _sub(qm, _M + "interactionType", text="choiceInteraction")
    _sub(qm, _M + "feedbackType", text="nonadaptive" if has_feedback else "none")
    _sub(qm, _M + "solutionAvailable", text="true")
    _sub(qm, _M + "toolName", text=TOOL)
    lom = _sub(meta, _L + "lom")
    _lom_general(lom, catalog, "", "", lang, ("",) * keywords)
    _lom_vocab(_sub(lom, _L + "lifeCycle"), "status", LOM_STATUS[status])
    if difficulty is not None:
        _lom_vocab(_sub(lom, _L + "educational"), "difficulty", LOM_DIFFICULTY[difficulty])
    _sub(res, _C + "file", {"href": ""})
    return res


def _lom_general(lom: etree._Element, catalog: str, entry: str, title: str, lang: str,
                 keywords: Sequence[str]) -> None:
    general = _sub(lom, _L + "general")
    ident = _sub(general, _L + "identifier")
    _sub(ident, _L + "catalog", text=catalog)
    _sub(ident, _L + "entry", text=entry)
    _sub(_sub(general, _L + "title"), _L + "string", {"language": lang}, title)
    _sub(general, _L + "language", text=lang)
    for word in keywords:
        _sub(_sub(general, _L + "keyword"), _L + "string", {"language": lang}, word)


def _lom_vocab(parent: etree._Element, name: str, value: str) -> None:
    el = _sub(parent, _L + name)
    _sub(el, _L + "source", text="LOMv1.0")
    _sub(el, _L + "value", text=value)


# --- serialisation -------------------------------------------------------------------------------


def _xml(root: etree._Element) -> bytes:
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def _keep_as_is(el: etree._Element) -> etree._Element:
    """Keep pretty-printing out of `el`'s content, where added whitespace would show.

    libxml2 indents only inside elements without text children, and not at all below one that
    has some; an empty text node marks `el` so without adding a character to the output.
    """
    if el.text is None:
        el.text = ""
    return el
