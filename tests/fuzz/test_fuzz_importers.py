"""Fuzzing the four importers: structured documents of each format built from its grammar with
hostile text in every slot, and byte mutations of real files (the committed goldens and
fixtures). Property: a reader returns items or refuses with a DpassessError (a message naming
the input), never another exception; and every item it returns exports in every format."""

from __future__ import annotations

import contextlib
import importlib
import io
import zipfile

from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from dpassess.diagnostics import DpassessError
from dpassess.export import EXPORTERS, Collection
from dpassess.importers import READERS
from fuzz.hostile import hostile_text, mutated, seed_files, stop_when_spent

GIFT_SEEDS = seed_files("tests/golden/*/gift/*.txt", "tests/fixtures/moodle/*.gift.txt",
                        "exports/gift/*.txt", "tests/fuzz/corpus/seeds/*.gift.txt")
MXML_SEEDS = seed_files("tests/golden/*/moodle-xml/*.xml", "tests/fixtures/moodle/*.xml",
                        "exports/moodle/*.xml", "tests/fuzz/corpus/seeds/*.moodle.xml")
QTI_SEEDS = seed_files("tests/golden/*/qti21/*/items/*.xml", "tests/fuzz/corpus/seeds/*.qti.xml")


def read(fmt: str, data: bytes) -> None:
    """Import `data`; export what was imported; only DpassessError may come out."""
    stop_when_spent()
    reader = importlib.import_module(READERS[fmt])
    try:
        result = reader.read(data, f"fuzz.{fmt}", "en")
    except DpassessError:
        return
    if not result.items:
        return
    langs = tuple(sorted({lang for it in result.items for lang in it.text}))
    coll = Collection(id="fuzz", title={lang: "Fuzz" for lang in langs}, languages=langs,
                      items=result.items, category="fuzz", default_language=langs[0])
    for name in EXPORTERS:
        for lang in langs:
            with contextlib.suppress(DpassessError):
                EXPORTERS[name].export(coll, lang)


# --- GIFT ----------------------------------------------------------------------------------


@st.composite
def gift_documents(draw: st.DrawFn) -> bytes:
    t = hostile_text
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 30))):
        if draw(st.booleans()):
            parts.append(f"// {draw(t)} [id:{draw(t)}] [tag:{draw(t)}]\n")
        if draw(st.integers(0, 5)) == 0:
            parts.append(f"$CATEGORY: {draw(t)}\n\n")
        name = f"::{draw(t)}::" if draw(st.booleans()) else ""
        fmt = draw(st.sampled_from(["", "[html]", "[markdown]", "[moodle]", "[plain]"]))
        answers = draw(st.one_of(
            st.lists(st.tuples(st.sampled_from(["=", "~", "~%50%", "~%-25%", "=%100%", "%33.3%"]),
                               t, t), max_size=8)
            .map(lambda a: " ".join(f"{m}{x}#{fb}" for m, x, fb in a)),
            st.sampled_from(["T", "F", "TRUE", "FALSE#no#yes", "#3:0.5", "#1..2", "=a -> b =c -> d",
                             "", "#=4:0 =%50%5:1"]),
            t,
        ))
        parts.append(f"{name}{fmt}{draw(t)}{{{answers}}}{draw(t)}\n\n")
    return "".join(parts).encode("utf-8", "surrogatepass")


@given(gift_documents())
def test_gift_documents(data: bytes) -> None:
    read("gift", data)


@given(mutated(GIFT_SEEDS))
def test_gift_mutations(data: bytes) -> None:
    read("gift", data)


# --- Moodle XML ------------------------------------------------------------------------------

QTYPES = ["multichoice", "truefalse", "shortanswer", "numerical", "matching", "essay", "ordering",
          "category", "description", "cloze", "ddwtos", "bogus", ""]


def _safe(text: str) -> str:
    """What lxml lets into a text node (XML 1.0 characters only)."""
    return "".join(ch for ch in text if ch in "\t\n\r" or (" " <= ch <= "\ud7ff")
                   or ("\ue000" <= ch <= "\ufffd") or ch >= "\U00010000")


@st.composite
def moodle_documents(draw: st.DrawFn) -> bytes:
    t = hostile_text.map(_safe)
    quiz = etree.Element("quiz")
    for _ in range(draw(st.integers(1, 20))):
        q = etree.SubElement(quiz, "question", type=draw(st.sampled_from(QTYPES)))
        if draw(st.booleans()):
            etree.SubElement(etree.SubElement(q, "name"), "text").text = draw(t)
        if draw(st.integers(0, 4)) == 0:
            etree.SubElement(etree.SubElement(q, "category"), "text").text = draw(t)
        qt = etree.SubElement(q, "questiontext",
                              format=draw(st.sampled_from(["html", "moodle_auto_format",
                                                           "markdown", "plain_text", "x"])))
        etree.SubElement(qt, "text").text = draw(t)
        for tag in draw(st.lists(st.sampled_from(
                ["single", "shuffleanswers", "answernumbering", "penalty", "defaultgrade",
                 "usecase", "unitpenalty", "responseformat", "gradingtype", "idnumber"]),
                max_size=5)):
            etree.SubElement(q, tag).text = draw(t)
        for _ in range(draw(st.integers(0, 8))):
            a = etree.SubElement(q, draw(st.sampled_from(["answer", "subquestion", "unit"])),
                                 fraction=draw(st.sampled_from(
                                     ["100", "0", "50", "-100", "33.33333", "1e9", "x", ""])))
            etree.SubElement(a, "text").text = draw(t)
            if draw(st.booleans()):
                etree.SubElement(etree.SubElement(a, "feedback"), "text").text = draw(t)
            if draw(st.booleans()):
                etree.SubElement(a, "tolerance").text = draw(st.sampled_from(["0", "-1", "x", "1e400"]))
        if draw(st.booleans()):
            f = etree.SubElement(qt, "file", name=draw(t) or "a.png", encoding="base64")
            f.text = draw(st.sampled_from(["aGVsbG8=", "!!!", ""]))
    return etree.tostring(quiz, xml_declaration=True, encoding="UTF-8")


@given(moodle_documents())
def test_moodle_documents(data: bytes) -> None:
    read("moodle-xml", data)


@given(mutated(MXML_SEEDS))
def test_moodle_mutations(data: bytes) -> None:
    read("moodle-xml", data)


# --- QTI 2.1 ---------------------------------------------------------------------------------

NS = "http://www.imsglobal.org/xsd/imsqti_v2p1"
INTERACTIONS = ["choiceInteraction", "textEntryInteraction", "extendedTextInteraction",
                "matchInteraction", "orderInteraction", "inlineChoiceInteraction", "bogus"]


@st.composite
def qti_items(draw: st.DrawFn) -> bytes:
    t = hostile_text.map(_safe)
    q = f"{{{NS}}}"
    item = etree.Element(q + "assessmentItem", identifier=draw(t) or "i", title=draw(t),
                         adaptive="false", timeDependent="false")
    for _ in range(draw(st.integers(0, 3))):
        rd = etree.SubElement(item, q + "responseDeclaration", identifier="RESPONSE",
                              cardinality=draw(st.sampled_from(["single", "multiple", "ordered",
                                                                "x"])),
                              baseType=draw(st.sampled_from(["identifier", "float", "string",
                                                             "directedPair", "x"])))
        cr = etree.SubElement(rd, q + "correctResponse")
        for _ in range(draw(st.integers(0, 3))):
            etree.SubElement(cr, q + "value").text = draw(t)
    body = etree.SubElement(item, q + "itemBody")
    etree.SubElement(body, q + "p").text = draw(t)
    for _ in range(draw(st.integers(1, 3))):
        inter = etree.SubElement(body, q + draw(st.sampled_from(INTERACTIONS)),
                                 responseIdentifier="RESPONSE",
                                 maxChoices=draw(st.sampled_from(["1", "0", "-1", "x"])))
        etree.SubElement(inter, q + "prompt").text = draw(t)
        for i in range(draw(st.integers(0, 8))):
            etree.SubElement(inter, q + draw(st.sampled_from(
                ["simpleChoice", "simpleAssociableChoice", "inlineChoice"])),
                identifier=draw(st.sampled_from([f"C{i}", "C0", draw(t) or "c"]))).text = draw(t)
    if draw(st.booleans()):
        etree.SubElement(item, q + "responseProcessing", template=draw(st.sampled_from(
            ["http://www.imsglobal.org/question/qti_v2p1/rptemplates/match_correct",
             "http://www.imsglobal.org/question/qti_v2p1/rptemplates/map_response", "x"])))
    return etree.tostring(item, xml_declaration=True, encoding="UTF-8")


def _zip(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return buf.getvalue()


@given(st.lists(qti_items(), min_size=1, max_size=5), st.booleans())
def test_qti_packages(items: list[bytes], manifest: bool) -> None:
    entries = {f"items/i{n}.xml": data for n, data in enumerate(items)}
    if manifest:
        res = "".join(f'<resource identifier="r{n}" type="imsqti_item_xmlv2p1" '
                      f'href="items/i{n}.xml"/>' for n in range(len(items)))
        entries["imsmanifest.xml"] = (
            '<manifest xmlns="http://www.imsglobal.org/xsd/imscp_v1p1"><resources>'
            f"{res}</resources></manifest>").encode()
    read("qti21", _zip(entries))


@given(mutated(QTI_SEEDS))
def test_qti_mutations(data: bytes) -> None:
    read("qti21", _zip({"items/item.xml": data}))


# --- Canvas (QTI 1.2) --------------------------------------------------------------------------

CANVAS_SEEDS = seed_files("tests/fixtures/canvas/**/*.xml.qti",
                          "tests/fuzz/corpus/seeds/*.canvas.xml")
QTI12 = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
CANVAS_TYPES = ["multiple_choice_question", "true_false_question", "multiple_answers_question",
                "numerical_question", "short_answer_question", "essay_question",
                "matching_question", "fill_in_multiple_blanks_question",
                "multiple_dropdowns_question", "text_only_question", "calculated_question",
                "file_upload_question", "bogus", ""]


@st.composite
def canvas_documents(draw: st.DrawFn) -> bytes:
    """A questestinterop of Canvas questions: any type, hostile texts and idents, any mix of
    labels, conditions (equal, ranges, not, other, scores) and feedback."""
    t = hostile_text.map(_safe)
    q = f"{{{QTI12}}}"
    root = etree.Element(q + "questestinterop", nsmap={None: QTI12})
    holder = etree.SubElement(root, q + draw(st.sampled_from(["assessment", "objectbank"])),
                              ident="a", title=draw(t))
    section = etree.SubElement(holder, q + "section", ident="root_section")
    for _ in range(draw(st.integers(1, 8))):
        item = etree.SubElement(section, q + "item", ident=draw(t) or "i", title=draw(t))
        meta = etree.SubElement(etree.SubElement(item, q + "itemmetadata"), q + "qtimetadata")
        for label, value in (("question_type", draw(st.sampled_from(CANVAS_TYPES))),
                             ("points_possible", draw(st.sampled_from(
                                 ["1.0", "0", "-2", "x", "1e400", "2000", draw(t)])))):
            if draw(st.integers(0, 5)):
                f = etree.SubElement(meta, q + "qtimetadatafield")
                etree.SubElement(f, q + "fieldlabel").text = label
                etree.SubElement(f, q + "fieldentry").text = value
        pres = etree.SubElement(item, q + "presentation")
        etree.SubElement(etree.SubElement(pres, q + "material"), q + "mattext",
                         texttype=draw(st.sampled_from(["text/html", "text/plain"]))).text = (
            draw(t) + draw(st.sampled_from(["", "[b1]", '<img class="equation_image" alt="LaTeX: x">',
                                            '<img src="$IMS-CC-FILEBASE$/../x.png">',
                                            '<img data-equation-content="\\frac{">'])))
        lids = [draw(st.sampled_from(["response1", "response_b1", draw(t)]))
                for _ in range(draw(st.integers(0, 3)))]
        for lid in lids:
            el = etree.SubElement(pres, q + draw(st.sampled_from(["response_lid", "response_str"])),
                                  ident=lid)
            render = etree.SubElement(el, q + "render_choice")
            for n in range(draw(st.integers(0, 5))):
                lb = etree.SubElement(render, q + "response_label",
                                      ident=draw(st.sampled_from([str(n), "1", draw(t)])))
                etree.SubElement(etree.SubElement(lb, q + "material"), q + "mattext").text = draw(t)
        proc = etree.SubElement(item, q + "resprocessing")
        for _ in range(draw(st.integers(0, 5))):
            cond = etree.SubElement(proc, q + "respcondition")
            var = etree.SubElement(cond, q + "conditionvar")
            for _ in range(draw(st.integers(0, 3))):
                tag = draw(st.sampled_from(["varequal", "vargte", "varlte", "vargt", "other",
                                            "or", "and", "not"]))
                test = etree.SubElement(var, q + tag, respident=draw(st.sampled_from(
                    [*lids, "response1"])))
                test.text = draw(st.sampled_from(["1", "0.5", "x", "1e999", "NaN", draw(t)]))
            if draw(st.booleans()):
                etree.SubElement(cond, q + "setvar", action=draw(st.sampled_from(["Set", "Add"])),
                                 varname="SCORE").text = draw(st.sampled_from(
                                     ["100", "50.00", "0", "-1", "x"]))
            if draw(st.booleans()):
                etree.SubElement(cond, q + "displayfeedback", linkrefid=draw(st.sampled_from(
                    ["general_fb", "correct_fb", "general_incorrect_fb", "1_fb", draw(t)])))
        for ident in draw(st.lists(st.sampled_from(["general_fb", "1_fb", "correct_fb", "x"]),
                                   max_size=3)):
            fb = etree.SubElement(item, q + "itemfeedback", ident=ident)
            etree.SubElement(etree.SubElement(etree.SubElement(fb, q + "flow_mat"), q + "material"),
                             q + "mattext", texttype="text/html").text = draw(t)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


@given(canvas_documents(), st.booleans())
def test_canvas_packages(doc: bytes, manifest: bool) -> None:
    entries = {"non_cc_assessments/q.xml.qti": doc}
    if manifest:
        entries["imsmanifest.xml"] = (
            b'<manifest xmlns="http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"><resources>'
            b'<resource identifier="q" type="imsqti_xmlv1p2"><file href="non_cc_assessments/'
            b'q.xml.qti"/></resource></resources></manifest>')
    read("canvas", _zip(entries))


@given(mutated(CANVAS_SEEDS))
def test_canvas_mutations(data: bytes) -> None:
    read("canvas", _zip({"non_cc_assessments/q.xml.qti": data}))
