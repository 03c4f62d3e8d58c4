"""What Canvas makes of the QTI export, checked with ports of Canvas's own importer code
(instructure/canvas-lms, gems/plugins/qti_exporter/lib/qti/: html_helper.rb `detect_html` and
`sanitize_html!`, assessment_item_converter.rb, question_type_educated_guesser.rb), and the
package rules Canvas's importer relies on: plain titles, files listed in the manifest, question
ids of their own per form, true/false never shuffled."""

from __future__ import annotations

import html as htmllib
import io
import re
import zipfile
from pathlib import Path
from typing import Any

from lxml import etree

from dpassess.export import Collection
from dpassess.export.qti.qti21 import export
from dpassess.lms import canvas
from dpassess.model import Item, parse_item
from test_export_qti21 import check_package

QTI = "http://www.imsglobal.org/xsd/imsqti_v2p1"
Q = f"{{{QTI}}}"
C = "{http://www.imsglobal.org/xsd/imscp_v1p1}"


# --- a port of HtmlHelper#detect_html (Canvas flavour off, as for any non-Canvas package) ------

_KNOWN_META = {"FORMATTED_TEXT_BLOCK", "flow_1"}


def _children(node: etree._Element) -> list[Any]:
    """Nokogiri's node.children: text nodes and elements, in order."""
    out: list[Any] = []
    if node.text:
        out.append(node.text)
    for child in node:
        out.append(child)
        if child.tail:
            out.append(child.tail)
    return out


def _inner_html(node: etree._Element) -> str:
    parts = [htmllib.escape(node.text or "", quote=False)]
    for child in node:
        copy = etree.fromstring(etree.tostring(child, with_tail=False))
        for el in copy.iter():
            el.tag = etree.QName(el).localname
        etree.cleanup_namespaces(copy)
        parts.append(etree.tostring(copy, encoding=str))
        parts.append(htmllib.escape(child.tail or "", quote=False))
    return "".join(parts)


def canvas_detect_html(node: etree._Element) -> tuple[str, str | None]:
    """(text, html): html is None when Canvas stores the feedback as plain text."""
    while True:  # sanitize_html!(node, remove_extraneous_nodes = true)
        kids = _children(node)
        while kids and isinstance(kids[0], str) and not kids[0].strip():
            kids.pop(0)
        while kids and isinstance(kids[-1], str) and not kids[-1].strip():
            kids.pop()
        if not (len(kids) == 1 and not isinstance(kids[0], str)
                and etree.QName(kids[0]).localname in ("p", "div", "span")):
            break
        child = kids[0]
        if child.attrib and child.get("class") not in _KNOWN_META:
            break
        node = child
    kids = [k for k in _children(node)]
    is_html = not (len(kids) == 1 and isinstance(kids[0], str))
    sanitized = _inner_html(node).strip()
    if is_html:
        return "", sanitized
    return re.sub(r"\s+", " ", sanitized).strip(), None


def canvas_shows(node: etree._Element) -> str:
    """What a student reads: the HTML rendered, or the stored text shown as it is."""
    text, html = canvas_detect_html(node)
    if html is None:
        return text  # shown verbatim: entities stay visible
    return " ".join(htmllib.unescape(re.sub(r"<[^>]+>", "", html)).split())


def test_the_port_reproduces_the_escaped_feedback_canvas_shows():
    plain = etree.fromstring(f'<p xmlns="{QTI}">Fish &amp; chips; 1 &lt; 2.</p>')
    assert canvas_shows(plain) == "Fish &amp; chips; 1 &lt; 2."  # what students read today
    bare_span = etree.fromstring(f'<p xmlns="{QTI}"><span>Fish &amp; chips</span></p>')
    assert canvas_detect_html(bare_span)[1] is None  # an attribute-free span is unwrapped too


def _item(**text: Any) -> Item:
    en = {"stem": "Which?", "options": {"a": "A", "b": "B"}, **text}
    return parse_item({"id": "it", "topic": "t/u", "options": ["a", "b"], "key": "a",
                       "text": {"en": en}})


def _doc(it: Item, collection_id: str = "bank") -> etree._Element:
    data = export(Collection(id=collection_id, title={"en": "B"}, languages=("en",),
                             items=[it], category=collection_id), "en").data
    docs = check_package(data)
    return docs[f"items/{it.id}.xml"]


def _feedback(doc: etree._Element, identifier: str) -> etree._Element:
    modal = doc.find(f"{Q}modalFeedback[@identifier='{identifier}']")
    assert modal is not None
    return modal


def test_plain_feedback_with_special_characters_reaches_students_as_written():
    source = "Fish & chips; 1 < 2 > 0."
    doc = _doc(_item(feedback={"a": source, "b": "Plain words."}, explanation=source))
    # answer feedback: attach_feedback_values reads the modalFeedback's first p
    answer = _feedback(doc, "FB1").find(f".//{Q}p")
    assert canvas_detect_html(answer)[1] is not None
    assert canvas_shows(answer) == source
    # general feedback: get_feedback reads the modalFeedback itself
    assert canvas_shows(_feedback(doc, canvas.GENERAL_FEEDBACK_ID)) == source
    # feedback Canvas reads right as plain text is left alone
    other = _feedback(doc, "FB2").find(f".//{Q}p")
    assert canvas_detect_html(other) == ("Plain words.", None)
    assert other.find(Q + "span") is None


# --- 17.4: Canvas's question text limit ------------------------------------------------------------


def test_question_text_over_canvas_limit_warns_at_export():
    limit = canvas.QUESTION_TEXT_LIMIT
    assert limit == 16_384
    fits = "a" * (limit - len("<p></p>"))  # one paragraph of exactly the limit
    def warned(stem: str) -> list[str]:
        result = export(Collection(id="b", title={"en": "B"}, languages=("en",),
                                   items=[_item(stem=stem)], category="b"), "en")
        return [w.message for w in result.warnings if "Canvas replaces" in w.message]
    assert warned(fits) == []
    assert len(warned(fits + "a")) == 1
    assert len(warned("&" * 3277)) == 1  # entities count as written: &amp; is five


# --- 17.5 and 17.7 ---------------------------------------------------------------------------------


def test_multiple_response_with_one_key_warns_canvas_makes_it_single_choice():
    it = parse_item({"id": "mr", "type": "multiple_response", "topic": "t/u",
                     "options": ["a", "b", "c"], "key": ["a"],
                     "text": {"en": {"stem": "?", "options": {"a": "A", "b": "B", "c": "C"}}}})
    result = export(Collection(id="b", title={"en": "B"}, languages=("en",), items=[it],
                               category="b"), "en")
    assert [(w.item, w.field) for w in result.warnings] == [("mr", "key")]
    assert "single" in result.warnings[0].message


def test_true_false_is_never_shuffled():
    it = parse_item({"id": "tf", "type": "true_false", "topic": "t/u", "key": "true",
                     "shuffle": True, "text": {"en": {"stem": "Water is wet."}}})
    doc = _doc(it)
    assert doc.find(f".//{Q}choiceInteraction").get("shuffle") == "false"
    assert [c.get("identifier") for c in doc.iter(Q + "simpleChoice")] == ["true", "false"]


# --- 17.6: every form's questions have identifiers of their own ----------------------------------


def test_forms_and_the_bank_never_share_a_question_identifier():
    its = [_item(), parse_item({"id": "it2", "topic": "t/u", "options": ["a", "b"],
                                "key": "b", "text": {"en": {"stem": "?", "options": {
                                    "a": "A", "b": "B"}}}})]
    idents: dict[str, set[str]] = {}
    for cid in ("bank", "exam-a", "exam-b"):
        c = Collection(id=cid, title={"en": cid}, languages=("en",), items=its, category=cid)
        data = export(c, "en").data
        assert export(c, "en").data == data  # stable
        docs = check_package(data)
        items = {d.get("identifier") for n, d in docs.items() if n.startswith("items/")}
        refs = {r.get("identifier") for r in docs[f"tests/{cid}.xml"].iter(
            Q + "assessmentItemRef")}
        resources = {r.get("identifier") for r in docs["imsmanifest.xml"].iter(C + "resource")
                     if r.get("type") == "imsqti_item_xmlv2p1"}
        assert items == refs == resources == {f"{cid}__it-en", f"{cid}__it2-en"}
        idents[cid] = items
    assert not (idents["bank"] & idents["exam-a"]) and not (idents["exam-a"] & idents["exam-b"])


# --- 17.1: titles are plain text ---------------------------------------------------------------------


def test_titles_are_plain_text_exactly_as_written():
    title = "Use `dict[k]` with *args and __init__ & 2*3*4 <b>"
    doc = _doc(_item(title=title))
    assert doc.get("title") == title
    data = export(Collection(id="b", title={"en": "Bank *one* & `two`"}, languages=("en",),
                             items=[_item(title=title)], category="b"), "en").data
    z = zipfile.ZipFile(io.BytesIO(data))
    manifest = etree.fromstring(z.read("imsmanifest.xml"))
    lom_titles = [s.text for s in manifest.iter("{http://ltsc.ieee.org/xsd/LOM}string")
                  if s.getparent().tag.endswith("title")]
    assert lom_titles == ["Bank *one* & `two`", title]
    test = etree.fromstring(z.read("tests/b.xml"))
    assert test.get("title") == "Bank *one* & `two`"


# --- 17.2: linked local files are packed and listed ------------------------------------------------


def test_linked_local_files_are_packed_and_listed_missing_ones_warned(tmp_path):
    (tmp_path / "notes.pdf").write_bytes(b"%PDF-1.4 notes")
    (tmp_path / "audio").mkdir()
    (tmp_path / "audio" / "a.mp3").write_bytes(b"ID3 sound")
    it = _item(stem='Read [the notes](notes.pdf), hear <a href="audio/a.mp3">this</a>, '
                    "see [gone](missing.pdf) and [the web](https://example.org/x.pdf).")
    c = Collection(id="b", title={"en": "B"}, languages=("en",), items=[it], category="b",
                   paths={"it": str(tmp_path / "it.yaml")})
    result = export(c, "en")
    docs = check_package(result.data)  # every file listed, every listed file present
    z = zipfile.ZipFile(io.BytesIO(result.data))
    assert z.read("items/notes.pdf") == b"%PDF-1.4 notes"
    assert z.read("items/audio/a.mp3") == b"ID3 sound"
    files = [f.get("href") for r in docs["imsmanifest.xml"].iter(C + "resource")
             if r.get("identifier") == "b__it-en" for f in r.iter(C + "file")]
    assert files == ["items/it.xml", "items/notes.pdf", "items/audio/a.mp3"]
    assert [w.message for w in result.warnings] == [
        f"linked file 'missing.pdf' not found at {tmp_path / 'missing.pdf'}; not in the "
        "package"]


def test_an_ordering_item_warns_that_canvas_makes_it_an_error_question():
    """Canvas's QTI 2.1 importer has no converter for orderInteraction (its guesser and
    `create_instructure_question` name none): the question becomes an "Error" question. The
    package stays valid (no interactionType hint), so the export says so, naming the item."""
    from dpassess import load_bank
    from dpassess.lms.canvas import ORDERING_IN_QTI21

    ks = Collection.from_bank(load_bank(Path(__file__).parent / "banks" / "kitchen-sink"))
    for lang in ks.languages:
        said = [w for w in export(ks, lang).warnings if w.message == ORDERING_IN_QTI21]
        assert [w.item for w in said] == ["ks-growth-ordering"]
        assert said[0].field == "type"
