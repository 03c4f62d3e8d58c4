"""QTI 2.1 export, checked by things outside our code: the official XSDs (tests/schemas/, see
PROVENANCE.md there), package integrity rules of IMS CP, a reparse of every text field, golden files
and Canvas's own importer rules (restated from instructure/canvas-lms, gems/plugins/qti_exporter).

Golden files: tests/golden/qti21/<lang>/ hold the seed bank's packages unzipped. After a deliberate
change to the output, rewrite them (tests/test_golden.py rewrites them too) and review the diff:

    .venv/bin/python -m pytest tests/test_golden.py tests/test_export_qti21.py --update-goldens
"""

from __future__ import annotations

import io
import posixpath
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import unquote

import lxml.html
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from lxml import etree

from conftest import ROOT, SEED_BANK
from dpassess import UsageError, load_bank
from dpassess.export import EXPORTERS, Collection
from dpassess.export.qti.qti21 import export
from dpassess.lms.canvas import GENERAL_FEEDBACK_ID as EXPLANATION_ID
from dpassess.markup.markdown import to_html, to_plain
from dpassess.markup.media import may_show_images
from dpassess.markup.xmlchars import xml_safe
from dpassess.model import Content, Item, ItemType, Matching, MatchingContent, Option, parse_item
from dpassess.model.items import GAP_REF
from strategies import HOSTILE, any_items, bank_config, items, write_bank

SCHEMAS = Path(__file__).parent / "schemas"
GOLDEN = Path(__file__).parent / "golden" / "qti21"
QTI = "http://www.imsglobal.org/xsd/imsqti_v2p1"
CP = "http://www.imsglobal.org/xsd/imscp_v1p1"
LOM = "http://ltsc.ieee.org/xsd/LOM"
QTIM = "http://www.imsglobal.org/xsd/imsqti_metadata_v2p1"
IMSMD = "http://www.imsglobal.org/xsd/imsmd_v1p2"
Q = f"{{{QTI}}}"
C = f"{{{CP}}}"


# --- validation against the official schemas ----------------------------------------------------


class _NoNetwork(etree.Resolver):
    def resolve(self, url, pubid, context):
        if url and url.split(":", 1)[0] in ("http", "https", "ftp"):
            raise OSError(f"schema import tried the network: {url}")
        return None


def _parser() -> etree.XMLParser:
    p = etree.XMLParser(no_network=True, resolve_entities=False)
    p.resolvers.add(_NoNetwork())
    return p


def _driver(imports: list[tuple[str, str]]) -> etree.XMLSchema:
    """One schema that imports several, so a manifest's LOM and QTI metadata are checked too."""
    doc = "".join(f'<xs:import namespace="{ns}" schemaLocation="{loc}"/>' for ns, loc in imports)
    xsd = f'<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">{doc}</xs:schema>'
    root = etree.fromstring(xsd.encode(), _parser(), base_url=(SCHEMAS / "driver.xsd").as_uri())
    return etree.XMLSchema(root)


_SCHEMAS: dict[str, etree.XMLSchema] = {}


def schema(name: str) -> etree.XMLSchema:
    if name not in _SCHEMAS:
        if name == "qti":
            _SCHEMAS[name] = etree.XMLSchema(
                etree.parse(str(SCHEMAS / "qti21" / "imsqti_v2p1p2.xsd"), _parser()))
        elif name == "cp":  # IMS CP 1.1.4 with IMS MD 1.2, IEEE LOM and QTI metadata
            _SCHEMAS[name] = _driver([
                (CP, "imscp/imscp_v1p1.xsd"), (IMSMD, "imscp/imsmd_v1p2p4.xsd"),
                (QTIM, "qti21/imsqti_metadata_v2p1.xsd"), (LOM, "imscp/imsmd_loose_v1p3p2.xsd")])
        elif name == "cp-profile":  # the QTI 2.1 profile of CP 1.2 (IEEE LOM only)
            _SCHEMAS[name] = _driver([
                (CP, "qti21/qtiv2p1_imscpv1p2_v1p0.xsd"),
                (QTIM, "qti21/imsqti_metadata_v2p1.xsd"), (LOM, "imscp/imsmd_loose_v1p3p2.xsd")])
    return _SCHEMAS[name]


def assert_valid(name: str, doc: etree._Element, label: str) -> None:
    validator = schema(name)
    if not validator.validate(doc.getroottree()):
        errors = "\n".join(f"{label}:{e.line}:{e.column}: {e.message}" for e in validator.error_log)
        raise AssertionError(f"{label} is not valid against {name}:\n{errors}")


def check_package(data: bytes) -> dict[str, etree._Element]:
    """Validate every XML file of a package and its integrity; return the parsed documents."""
    z = zipfile.ZipFile(io.BytesIO(data))
    names = [i.filename for i in z.infolist()]
    assert "imsmanifest.xml" in names, "imsmanifest.xml must be at the root of the zip"
    docs: dict[str, etree._Element] = {}
    for name in names:
        if name.endswith(".xml"):
            docs[name] = doc = etree.fromstring(z.read(name), _parser())
            ns = etree.QName(doc).namespace
            if ns == QTI:
                assert_valid("qti", doc, name)
            else:
                assert ns == CP, f"{name}: unexpected root {doc.tag}"
                assert_valid("cp", doc, name)
                assert_valid("cp-profile", doc, name)
    manifest = docs["imsmanifest.xml"]
    listed: set[str] = {"imsmanifest.xml"}
    ids = {r.get("identifier") for r in manifest.iter(C + "resource")}
    for res in manifest.iter(C + "resource"):
        href = res.get("href")
        files = [unquote(f.get("href")) for f in res.findall(C + "file")]
        assert href in files, f"resource {res.get('identifier')}: href has no <file>"
        for f in files:
            assert f in names, f"<file href={f!r}> is not in the package"
        listed.update(files)
        for dep in res.findall(C + "dependency"):
            assert dep.get("identifierref") in ids
    assert set(names) == listed, f"files in the zip but not in the manifest: {set(names) - listed}"
    return docs


# --- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def seed() -> Collection:
    return Collection.from_bank(load_bank(SEED_BANK))


def collection_of(*its: Item, langs: tuple[str, ...] = ("id", "en")) -> Collection:
    return Collection(id="test-bank", title={la: f"Bank {la} <&>" for la in langs},
                      languages=langs, items=list(its), category="test-bank")


def item(stem="Which?", *, kind="single_choice", key=("a",), feedback=None, explanation=None,
         options=None, points=1.0, **extra) -> Item:
    options = options or {"a": "Alpha", "b": "Beta", "c": "Gamma"}
    return parse_item(dict(id=extra.pop("id", "it-one"), type=kind, topic="t/u", points=points,
                options=[Option(id=o) for o in options], key=key,
                text={"en": Content(stem=stem, options=options, feedback=feedback or {},
                                    explanation=explanation)}, **extra))


def item_doc(data: bytes, item_id: str = "it-one") -> etree._Element:
    return etree.fromstring(zipfile.ZipFile(io.BytesIO(data)).read(f"items/{item_id}.xml"))


# --- the seed bank --------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["id", "en"])
def test_seed_bank_packages_validate_and_carry_everything(seed, lang):
    result = export(seed, lang)
    assert result.warnings == []
    docs = check_package(result.data)
    assert len([n for n in docs if n.startswith("items/")]) == len(seed.items) == 8
    for it in seed.items:
        doc = docs[f"items/{it.id}.xml"]
        assert doc.get("{http://www.w3.org/XML/1998/namespace}lang") == lang
        assert doc.get("identifier") == f"data-parallelism__{it.id}-{lang}"
        content = it.text[lang]
        feedback = doc.findall(Q + "modalFeedback")
        assert len(feedback) == len(content.feedback) + bool(content.explanation)
        assert [v.text for v in doc.iter(Q + "value") if v.getparent().tag == Q + "correctResponse"] \
            == list(it.key)


def test_same_bank_gives_byte_identical_zips_with_fixed_metadata(seed):
    a, b = export(seed, "en").data, export(seed, "en").data
    assert a == b
    infos = zipfile.ZipFile(io.BytesIO(a)).infolist()
    assert [i.filename for i in infos] == sorted(i.filename for i in infos)
    assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}
    assert {i.external_attr >> 16 for i in infos} == {0o100644}


def test_registry_serves_this_module(seed):
    exp = EXPORTERS["qti21"]
    assert (exp.suffix, exp.multi) == (".zip", False)
    assert exp.export(seed, "id").data == export(seed, "id").data


def _canonical(data: bytes) -> bytes:
    return etree.tostring(etree.fromstring(data, _parser()), method="c14n2")


@pytest.mark.parametrize("lang", ["id", "en"])
def test_golden(request, seed, lang):
    z = zipfile.ZipFile(io.BytesIO(export(seed, lang).data))
    folder = GOLDEN / lang
    if request.config.getoption("--update-goldens"):
        shutil.rmtree(folder, ignore_errors=True)
        for name in z.namelist():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(z.read(name))
    on_disk = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert on_disk == sorted(z.namelist()), "run pytest with --update-goldens"
    for name in on_disk:
        assert _canonical(z.read(name)) == _canonical((folder / name).read_bytes()), (
            f"{lang}/{name} differs from the golden file (after a deliberate change: pytest "
            "--update-goldens, then review the diff)")


# --- what Canvas's importer needs (rules restated from canvas-lms qti_exporter) --------------------


def test_manifest_and_test_are_shaped_for_canvas(seed):
    docs = check_package(export(seed, "en").data)
    manifest = docs["imsmanifest.xml"]
    # Qti::Converter.is_qti_2: a QTI 2 namespace declared on the manifest root
    assert QTI in manifest.nsmap.values()
    types = [r.get("type") for r in manifest.iter(C + "resource")]
    assert types == ["imsqti_test_xmlv2p1"] + ["imsqti_item_xmlv2p1"] * 8
    test = docs["tests/data-parallelism.xml"]
    assert {s.get("visible") for s in test.iter(Q + "assessmentSection")} == {"false"}
    for ref in test.iter(Q + "assessmentItemRef"):
        target = posixpath.normpath(posixpath.join("tests", ref.get("href")))
        # Canvas links a quiz question to its item by identifier, not by path
        assert docs[target].get("identifier") == ref.get("identifier")
        assert ref.find(Q + "weight").get("value") == "1"


def _canvas_feedback(doc: etree._Element) -> dict[str, str]:
    """Where Canvas puts each modalFeedback (AssessmentItemConverter#get_feedback,
    #get_feedback_id and ChoiceInteraction#process_response_conditions)."""
    per_answer: dict[str, str] = {}
    for cond in doc.iter(Q + "responseCondition"):
        for branch in cond.iter(Q + "responseIf", Q + "responseElseIf"):
            choice = branch.find(f".//{Q}match/{Q}baseValue[@baseType='identifier']")
            if choice is None:
                choice = branch.find(f".//{Q}member/{Q}baseValue[@baseType='identifier']")
            fb = branch.find(f".//{Q}setOutcomeValue[@identifier='FEEDBACK']")
            if choice is None or fb is None or fb.find(f".//{Q}variable[@identifier='FEEDBACK']") \
                    is None:
                continue
            fid = fb.find(f".//{Q}baseValue[@baseType='identifier']").text.strip()
            if not re.search(r"general_|_all|wrong|incorrect|correct|(_IC$)|(_C$)", fid, re.I):
                per_answer[fid] = choice.text.strip()
    where: dict[str, str] = {}
    for f in doc.iter(Q + "modalFeedback"):
        fid = f.get("identifier")
        if re.search(r"wrong|incorrect|(_IC$)", fid, re.I):
            where[fid] = "incorrect_comments"
        elif re.search(r"correct|(_C$)", fid, re.I):
            where[fid] = "correct_comments"
        elif re.search(r"general_|_all", fid, re.I):
            where[fid] = "neutral_comments"
        elif fid in per_answer:
            where[fid] = f"answer {per_answer[fid]}"
        else:
            where[fid] = "dropped"
    return where


@pytest.mark.parametrize("kind", ["single_choice", "multiple_response"])
def test_canvas_maps_option_feedback_to_its_answer_and_the_explanation_to_general(kind):
    options = {"correct": "Right", "incorrect": "Wrong", "x_all": "All"}  # hostile ids for Canvas
    it = item(kind=kind, key=("correct",), options=options, explanation="Why.",
              feedback={o: f"About {o}." for o in options})
    where = _canvas_feedback(item_doc(export(collection_of(it, langs=("en",)), "en").data))
    assert where == {"FB1": "answer correct", "FB2": "answer incorrect", "FB3": "answer x_all",
                     EXPLANATION_ID: "neutral_comments"}


def test_multi_paragraph_option_feedback_warns_that_canvas_keeps_the_first():
    it = item(feedback={"a": "One.\n\nTwo.", "b": "Only one."})
    result = export(collection_of(it, langs=("en",)), "en")
    assert [(w.item, w.field) for w in result.warnings] == [("it-one", "text.en.feedback.a")]
    assert "Canvas" in result.warnings[0].message


# --- scoring ----------------------------------------------------------------------------------------


def test_multiple_response_maps_partial_credit_with_floor_zero():
    it = item(kind="multiple_response", key=("a", "b"), points=2.0)
    doc = item_doc(export(collection_of(it, langs=("en",)), "en").data)
    decl = doc.find(Q + "responseDeclaration")
    assert decl.get("cardinality") == "multiple"
    mapping = decl.find(Q + "mapping")
    assert (mapping.get("lowerBound"), mapping.get("upperBound")) == ("0", "2")
    mapped = {e.get("mapKey"): float(e.get("mappedValue")) for e in mapping}
    assert mapped == {oid: f * 2.0 for oid, f in it.fractions().items()} == {
        "a": 1.0, "b": 1.0, "c": -2.0}
    assert doc.find(f".//{Q}mapResponse") is not None
    assert doc.find(f".//{Q}choiceInteraction").get("maxChoices") == "3"
    assert doc.find(f".//{Q}outcomeDeclaration[@identifier='MAXSCORE']//{Q}value").text == "2"


def test_true_false_is_a_two_choice_item_in_the_language():
    it = parse_item(dict(id="tf", type=ItemType.true_false, topic="t", key=("false",), shuffle=False,
              text={"id": Content(stem="Langit hijau.", options={})}))
    doc = item_doc(export(collection_of(it, langs=("id",)), "id").data, "tf")
    choices = doc.findall(f".//{Q}simpleChoice")
    assert [(c.get("identifier"), c.text) for c in choices] == [("true", "Benar"),
                                                                ("false", "Salah")]
    interaction = doc.find(f".//{Q}choiceInteraction")
    assert (interaction.get("maxChoices"), interaction.get("shuffle")) == ("1", "false")


def test_locked_options_are_fixed_when_shuffling():
    it = parse_item(dict(id="lk", topic="t", key=("a",),
              options=[Option(id="a"), Option(id="b"), Option(id="none", locked=True)],
              text={"en": Content(stem="?", options={"a": "A", "b": "B", "none": "None"})}))
    doc = item_doc(export(collection_of(it, langs=("en",)), "en").data, "lk")
    assert doc.find(f".//{Q}choiceInteraction").get("shuffle") == "true"
    assert {c.get("identifier"): c.get("fixed") for c in doc.iter(Q + "simpleChoice")} == {
        "a": None, "b": None, "none": "true"}


# --- what QTI cannot carry is reported, never dropped silently ---------------------------------------


def test_html_outside_qtis_subset_is_reported_and_its_text_kept():
    it = item(stem="Before <center>kept *text*</center> after", explanation="<p style='x'>E</p>")
    result = export(collection_of(it, langs=("en",)), "en")
    check_package(result.data)
    fields = {(w.item, w.field) for w in result.warnings}
    assert fields == {("it-one", "text.en.stem"), ("it-one", "text.en.explanation")}
    assert any("<center>" in w.message for w in result.warnings)
    stem = item_doc(result.data).find(f"{Q}itemBody/{Q}div")
    assert " ".join("".join(stem.itertext()).split()) == "Before kept text after"
    assert stem.find(f".//{Q}em").text == "text"


def test_characters_xml_cannot_carry_are_reported():
    it = item(stem="bell\x07here")
    result = export(collection_of(it, langs=("en",)), "en")
    assert ("it-one", "text.en.stem") in {(w.item, w.field) for w in result.warnings}
    assert "U+0007" in str(result.warnings)
    check_package(result.data)


def test_local_images_are_packaged_and_listed_missing_ones_reported(tmp_path):
    bank = write_bank(tmp_path / "bank", [
        item("See ![chart](img/chart%20one.png)", id="with-image"),
        item("See ![gone](nowhere.png)", id="missing-image"),
    ], bank_config(langs=("en",)))
    (bank / "img").mkdir()
    (bank / "img" / "chart one.png").write_bytes(b"\x89PNG fake")
    result = export(Collection.from_bank(load_bank(bank)), "en")
    docs = check_package(result.data)
    z = zipfile.ZipFile(io.BytesIO(result.data))
    assert z.read("items/img/chart one.png") == b"\x89PNG fake"
    files = [f.get("href") for f in docs["imsmanifest.xml"].iter(C + "file")]
    assert "items/img/chart%20one.png" in files
    assert [(w.item, "nowhere.png" in w.message) for w in result.warnings] == [
        ("missing-image", True)]


def test_same_image_path_from_two_folders_is_not_swapped(tmp_path):
    """Two items in different folders each show `fig.png`: the package keeps the first and
    warns about the second instead of silently showing one item the other's figure."""
    bank = write_bank(tmp_path / "bank", [], bank_config(langs=("en",)))
    for sub in ("a", "b"):
        (bank / sub).mkdir()
        (bank / sub / "fig.png").write_bytes(f"PNG-{sub}".encode())
    for sub in ("a", "b"):
        one = write_bank(tmp_path / f"tmp-{sub}", [item("See ![f](fig.png)", id=f"item-{sub}")],
                         bank_config(langs=("en",)))
        (bank / sub / "q.yaml").write_bytes(next(one.glob("*-item-*.yaml")).read_bytes())
    result = export(Collection.from_bank(load_bank(bank)), "en")
    z = zipfile.ZipFile(io.BytesIO(result.data))
    assert z.read("items/fig.png") == b"PNG-a"
    assert [(w.item, "already packed" in w.message) for w in result.warnings] == [
        ("item-b", True)]


def test_unknown_language_is_a_usage_error_naming_no_cli_flag(seed):
    with pytest.raises(UsageError, match=r"^language 'fr': the collection has id, en$"):
        export(seed, "fr")
    with pytest.raises(UsageError, match=r"^language 'multi' .* not supported by qti21"):
        export(seed, "multi")


def test_cli_unwritable_output_exits_2_without_a_partial_zip(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = blocker / "bank.zip"
    r = subprocess.run([sys.executable, "-m", "dpassess", "export", "--format", "qti21",
                        "--lang", "en", "--out", str(out), str(SEED_BANK)],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and str(out) in r.stderr
    assert list(tmp_path.iterdir()) == [blocker]


# --- properties --------------------------------------------------------------------------------------


def _text(el: etree._Element) -> str:
    return " ".join("".join(el.itertext()).split())


def _expected(source: str) -> str:
    """What a reader sees of `source`: the renderer's output as plain text."""
    return to_plain(xml_safe(source)[0])


@given(st.lists(items(), min_size=1, max_size=3, unique_by=lambda i: i.id), st.sampled_from(
    ["id", "en"]))
def test_any_valid_items_export_to_a_valid_package_with_text_intact(its, lang):
    check_package(export(collection_of(*its), lang).data)  # formulas as MathML
    result = export(collection_of(*its), lang, maths="tex")  # formulas as TeX text, to compare
    docs = check_package(result.data)
    assert export(collection_of(*its), lang, maths="tex").data == result.data
    for it in its:
        doc = docs[f"items/{it.id}.xml"]
        content = it.text[lang]
        title = doc.get("title")
        if content.title:  # plain text as written: only line breaks and tabs become spaces
            assert title == (re.sub(r"[\t\n\r\v\f\x85\u2028\u2029]+", " ",
                                    xml_safe(content.title)[0]).strip() or it.id)
        else:  # the start of the stem's first line, as the reader sees it
            first = next(line for line in content.stem.splitlines() if line.strip())
            assert title == it.id or _expected(first).startswith(title.removesuffix("...")), title
        assert _text(doc.find(f"{Q}itemBody/{Q}div")) == _expected(content.stem)
        choices = {c.get("identifier"): c for c in doc.iter(Q + "simpleChoice")}
        assert list(choices) == list(it.option_ids)
        for oid, choice in choices.items():
            assert _text(choice) == _expected(it.option_text(lang, oid))
        modal = {f.get("identifier"): f for f in doc.iter(Q + "modalFeedback")}
        for n, oid in enumerate(it.option_ids, 1):
            if content.feedback.get(oid):
                assert _text(modal[f"FB{n}"]) == _expected(content.feedback[oid])
        if content.explanation:
            assert _text(modal[EXPLANATION_ID]) == _expected(content.explanation)


@given(st.lists(st.sampled_from(HOSTILE), min_size=1, max_size=12))
@example(["Q _u_", "\n\n<? QI //"])  # an unclosed processing instruction hides the rest
@example(["a", "\n\n<!-- b"])
def test_hostile_text_comes_back_as_the_renderer_shows_it(words):
    source = " ".join(words)
    it = item(stem=source, options={"a": source, "b": "x"}, feedback={"a": source},
              explanation=source)
    result = export(collection_of(it, langs=("en",)), "en")
    doc = item_doc(result.data)
    html = lxml.html.fragment_fromstring(
        to_html(source), create_parent="div")
    seen = " ".join(html.text_content().split())
    for el in (doc.find(f"{Q}itemBody/{Q}div"), doc.find(f".//{Q}simpleChoice"),
               *doc.iter(Q + "modalFeedback")):
        assert _text(el) == seen == _expected(source)


# --- items in a package are independent ----------------------------------------------------------

_FLOW_TEXTS = st.sampled_from([
    "", "Plain text", "Two\n\nparagraphs", "*emphasis* and `code`", "a & b < c", "x\r\ny",
    "- a\n- b", "<span>raw</span> html", "<br>", "<p>para</p>", "Dollar $ sign", "1. one",
    "![img](a.png)", "tab\there", "bad \x01 char", "<table><tr><td>c</td></tr></table>",
])


@given(st.lists(st.tuples(_FLOW_TEXTS, _FLOW_TEXTS, _FLOW_TEXTS, _FLOW_TEXTS), min_size=2,
                max_size=6))
def test_each_item_file_is_what_the_item_exported_alone_gives(texts):
    """Items of one scoring shape share memoised parts: each item file must still be exactly
    its own, whatever came before it."""
    its = [parse_item(dict(id=f"it{n}", type="single_choice", topic="t",
                           options=[Option(id="a"), Option(id="b")], key=("a",),
                           text={"en": Content(stem=stem or "Q", options={"a": option, "b": feedback},
                                               feedback={"a": feedback, "b": option or "fb"},
                                               explanation=explanation or "why")}))
           for n, (stem, option, feedback, explanation) in enumerate(texts)]
    together = zipfile.ZipFile(io.BytesIO(export(collection_of(*its, langs=("en",)), "en").data))
    for it in its:
        alone = export(collection_of(it, langs=("en",)), "en")
        path = f"items/{it.id}.xml"
        assert together.read(path) == zipfile.ZipFile(io.BytesIO(alone.data)).read(path)


# What an image needs in a source: `![` (Markdown) or `<img` (HTML), or (for QTI, which removes
# them before rendering, so that `!\x01[` becomes `![`) a character XML cannot carry.
_SHOWS_IMAGE = re.compile("!\\[|<img", re.IGNORECASE)
_MAY_SHOW_IMAGE = re.compile(
    "!\\[|<img|[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]", re.IGNORECASE)

_SCREEN_TEXTS = st.text(st.sampled_from(["!", "[", "<", "i", "I", "m", "M", "g", "G", "\n", "x",
                                         "\x01", "\ufffe", "\u0130", "\u0131", "\x0b"]),
                        max_size=12)


@given(_SCREEN_TEXTS, _SCREEN_TEXTS, _SCREEN_TEXTS, _SCREEN_TEXTS)
def test_image_screen_finds_what_the_pattern_finds_in_any_text(stem, option, feedback,
                                                               explanation):
    it = parse_item(dict(id="it", type="single_choice", topic="t", options=[Option(id="a"), Option(id="b")],
              key=("a",), text={"en": Content(stem=stem or "Q", options={"a": option, "b": "B"},
                                              feedback={"b": feedback},
                                              explanation=explanation or None)}))
    content = it.text["en"]
    texts = [content.stem, content.explanation or "", *content.feedback.values(),
             *(it.option_text("en", o.id) for o in it.options)]
    expected = any(_MAY_SHOW_IMAGE.search(t) for t in texts)
    assert may_show_images(it, ("en",), non_xml=True) == expected  # as qti21 asks
    assert may_show_images(it, ("en",)) == any(_SHOWS_IMAGE.search(t) for t in texts)


@given(st.text(st.characters(codec=None), max_size=20)
       | st.text(st.sampled_from(["a", " ", "\n", "\t", "\r", "\x00", "\x1f", "\x7f", "\x85",
                                  "\xa0", "\u2028", "\ud7ff", "\ue000", "\ufffd", "\ufffe",
                                  "\uffff", "\U0001f600", "\U0010ffff", "\u200b", "\ud800"]), max_size=8))
def test_non_xml_screen_agrees_with_the_xml_char_production(text):
    from dpassess.markup import xmlchars as _xmlchars

    assert _xmlchars.has_non_xml(text) == (_xmlchars._NOT_XML.search(text) is not None)
    clean, removed = _xmlchars.xml_safe(text)
    assert clean == _xmlchars._NOT_XML.sub("", text)
    assert bool(removed) == (clean != text)


@given(st.lists(any_items(), min_size=1, max_size=4, unique_by=lambda i: i.id),
       st.sampled_from(["id", "en"]))
@example([Matching(type=ItemType.matching, id="a000", topic="a", pairs=("p", "q"), distractors=(), text={
    "id": MatchingContent(stem="0", premises={"p": "0", "q": "1"}, responses={"p": "0", "q": "1"}),
    "en": MatchingContent(stem="0 0 \U00063e30$i$", premises={"p": "0", "q": "1"},
                          responses={"p": "0", "q": "1"})})], "en")  # maths in a stem
def test_items_of_every_type_export_to_a_valid_package(its, lang):
    check_package(export(collection_of(*its), lang).data)  # formulas as MathML
    docs = check_package(export(collection_of(*its), lang, maths="tex").data)  # to compare
    for it in its:
        doc = docs[f"items/{it.id}.xml"]
        assert doc.get("identifier") == f"test-bank__{it.id}-{lang}"
        div = doc.find(f"{Q}itemBody/{Q}div")
        stem = it.text[lang].stem
        if it.type is ItemType.cloze:  # each gap an interaction, read here as one word
            for el in div.iter(f"{Q}textEntryInteraction", f"{Q}inlineChoiceInteraction"):
                tail = el.tail
                el.clear()
                el.text, el.tail = " GAP ", tail
            number = {g.id: n for n, g in enumerate(it.gaps, 1)}
            block = {g.id for g in it.gaps if g.type == "multiple_response"}  # shown as `(n)`
            shown = {g: f" ({number[g]}) " if g in block else " GAP " for g in number}
            stem = re.sub(GAP_REF, lambda m, s=shown: s[m[1]], stem)
        assert _text(div) == " ".join(_expected(stem).split())


# --- the test session: item outcomes referred to as <item ref>.SCORE ------------------------------


@pytest.mark.parametrize("bank", ["seed", "kitchen-sink", "maths"])
def test_a_qti_test_session_resolves_every_item_score(bank):
    """A QTI engine's test session refers to an item's outcome as `<item ref>.SCORE`, split at
    the first `.` (tests/qti_engine.py's TestSession): every identifier must be dot-free, unique
    and resolve to its item; the test's SCORE and MAXSCORE are the sum over the items."""
    from qti_engine import TestSession

    root = SEED_BANK if bank == "seed" else Path(__file__).parent / "banks" / bank
    collection = Collection.from_bank(load_bank(root))
    for lang in collection.languages:
        z = zipfile.ZipFile(io.BytesIO(export(collection, lang).data))
        test = etree.fromstring(z.read(f"tests/{collection.id}.xml"))
        items = {"../" + n: etree.fromstring(z.read(n)) for n in z.namelist()
                 if n.startswith("items/") and n.endswith(".xml")}
        session = TestSession(test, items)
        outcomes = session.run({})
        refs = list(session.refs)
        assert len(refs) == len(items)
        assert all(session.refs[r].get("identifier") == r for r in refs)
        # a text-only item (a description) declares no score: testVariables passes it over
        scored = [r for r in refs if "SCORE" in session.item_outcomes[r]]
        assert len(refs) - len(scored) == sum(
            1 for it in collection.items if it.type.value == "description")
        per_item = [session.variable(f"{r}.SCORE") for r in scored]
        assert outcomes["SCORE"] == pytest.approx(sum(per_item))
        assert outcomes["MAXSCORE"] == pytest.approx(
            sum(session.variable(f"{r}.MAXSCORE") for r in scored))
        assert outcomes["SCORE"] > 0
