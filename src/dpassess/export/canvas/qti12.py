"""A collection in one language -> a zip Canvas imports as a quiz with its questions: QTI 1.2 in
the profile Canvas's own quiz export writes (Classic Quizzes' "Export quiz" and New Quizzes'
item bank import read it), one bank or form per zip:

    imsmanifest.xml                      the package (IMS CC 1.1 content package)
    <quiz id>/<quiz id>.xml              the questions (`questestinterop`, one `assessment`)
    <quiz id>/assessment_meta.xml        the quiz's settings, as Canvas writes them
    web_resources/items/...              images and linked files of the questions

The questions come from `dpassess.export.canvas.items.question` (one item at a time); this module
only assembles the files. Identifiers come from ids (`<bank or form id>__<item id>-<lang>`), so a
re-import updates the same questions; the zip's bytes depend on the collection alone.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import BinaryIO
from urllib.parse import quote

from lxml import etree
from lxml.etree import SubElement

from dpassess.diagnostics import Diagnostic, UsageError
from dpassess.export import (
    Collection,
    Context,
    Format,
    Fragment,
    Fragments,
    languages_of_items,
    nothing_to_export,
)
from dpassess.export.canvas.items import FORMAT as NAME
from dpassess.export.canvas.items import QTI12_NS, Q, question
from dpassess.export.canvas.richtext import FILES_FOLDER, rewrite_refs
from dpassess.export.qti.package import ZipStream
from dpassess.export.xmlfast import ChildStream, nsmap
from dpassess.markup.markdown import plain_title
from dpassess.markup.media import locate_image, read_media
from dpassess.model import Item

XSI = "http://www.w3.org/2001/XMLSchema-instance"
QTI_LOCATION = f"{QTI12_NS} http://www.imsglobal.org/xsd/ims_qtiasiv1p2p1.xsd"
CP_NS = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"
CP = f"{{{CP_NS}}}"
CANVAS_NS = "http://canvas.instructure.com/xsd/cccv1p0"
C = f"{{{CANVAS_NS}}}"


def item_identifier(collection: Collection, item: Item, lang: str) -> str:
    """The question's identifier: the same for the same bank (or form), item and language."""
    return f"{collection.id}__{item.id}-{lang}"


def quiz_identifier(collection: Collection, lang: str) -> str:
    return f"{collection.id}-{lang}"


class _Quiz:
    """One file being written: its questions' section (streamed to `buf`) and the files they
    pack (package path -> bytes)."""

    def __init__(self, collection: Collection, lang: str, options: Mapping[str, str]) -> None:
        self.collection, self.lang = collection, lang
        self.quiz = quiz_identifier(collection, lang)
        self.files: dict[str, bytes] = {}
        self.root, section = _assessment(collection, lang, self.quiz)  # root keeps it alive
        self.buf = io.BytesIO()
        self.stream = ChildStream(self.buf, section, xml_declaration=True)


def _fragment(job: _Quiz, item: Item, context: Context) -> Fragment:
    """The item's `<item>` as bytes of the section (empty: not written) and its warnings; a
    question that packs files is not reusable."""
    collection, lang = job.collection, job.lang
    stimulus = collection.stimuli.get(item.stimulus) if item.stimulus is not None else None
    path = collection.paths.get(item.id, "")
    q = question(item, lang, identifier=item_identifier(collection, item, lang), path=path,
                 stimulus=stimulus)
    warnings = list(q.warnings)
    if q.element is None:
        return Fragment(b"", warnings)
    if q.files:
        _pack(collection, item, lang, q.element, q.files, job.files, warnings)
    return Fragment(job.stream.serialised(q.element), warnings, reusable=not q.files)


def _assemble(job: _Quiz, fragments: Fragments, out: BinaryIO) -> list[Diagnostic]:
    """The Canvas package of the collection in `lang`, written to `out` (a seekable binary
    file), and a warning for each thing Canvas cannot carry."""
    collection, lang, quiz = job.collection, job.lang, job.quiz
    notes: list[Diagnostic] = []
    parts: list[bytes] = []
    points = 0.0
    dropped: list[Diagnostic] = []  # what was said of the items Canvas cannot take
    offered = False
    for item, (langs, missing) in zip(collection.items,
                                      languages_of_items(NAME, collection, lang), strict=True):
        notes.extend(missing)
        if not langs:
            continue
        offered = True
        made = fragments(item)
        notes.extend(made.warnings)
        if made.data:
            parts.append(made.data)
            points += item.points
        else:
            dropped.extend(made.warnings)
    if not parts:
        if not offered:
            raise nothing_to_export(collection, lang)
        # every item has text in `lang`, and Canvas can take none of them: say why
        why = "; ".join(dict.fromkeys(f"{w.item}: {w.message}" for w in dropped))
        raise UsageError(f"{collection.id}: Canvas can take none of the items in {lang!r}, so "
                         f"there is nothing to export ({why})")
    section = f"{quiz}/{quiz}.xml"
    entries = {
        "imsmanifest.xml": _xml(_manifest(collection, lang, quiz, sorted(job.files))),
        section: b"",  # streamed below
        f"{quiz}/assessment_meta.xml": _xml(_meta(collection, lang, quiz, points)),
        **job.files,
    }
    with ZipStream(out) as package:
        for name in sorted(entries):
            if name != section:
                package.add(name, entries[name])
                continue
            # the questions' section, each question's bytes written as they are into the
            # (stored) entry: its head (held in job.buf), the questions, its tail
            stream, head = job.stream, job.buf.getvalue()
            size = len(head) + sum(map(len, parts)) + len(stream.tail)
            with package.open(name, size) as entry:
                entry.write(head)
                stream.out = entry
                for data in parts:
                    stream.write_bytes(data)
                stream.close()
    return notes


def _pack(collection: Collection, item: Item, lang: str, element: etree._Element,
          refs: Sequence[str], files: dict[str, bytes], warnings: list[Diagnostic]) -> None:
    """Put the local files the question's HTML names into `files` (under web_resources/) and
    point the HTML at them; warn about those that cannot be packed (they keep their reference)."""
    found: dict[str, str] = {}
    for ref in refs:
        located = locate_image(ref, collection.paths.get(item.id))
        if isinstance(located, str):
            warnings.append(collection.warning(NAME, item.id, f"text.{lang}",
                                               f"file {ref!r} {located}; not in the package"))
            continue
        path, local = located
        try:
            data = read_media(local)
        except OSError as exc:
            warnings.append(collection.warning(
                NAME, item.id, f"text.{lang}",
                f"file {ref!r}: cannot read {local}: {exc.strerror or exc}; not in the package"))
            continue
        target = f"{FILES_FOLDER}/{path}"
        if files.get(target, data) != data:
            warnings.append(collection.warning(
                NAME, item.id, f"text.{lang}",
                f"file {ref!r}: another item's file is already packed as {target}; rename one "
                "of them (not in the package)"))
            continue
        files[target] = data
        found[ref] = path
    if not found:
        return
    for text in element.iter(Q + "mattext"):
        if text.text and text.get("texttype") == "text/html":
            text.text = rewrite_refs(text.text, found)


def _assessment(collection: Collection, lang: str, quiz: str
                ) -> tuple[etree._Element, etree._Element]:
    root = etree.Element(Q + "questestinterop", nsmap=nsmap({None: QTI12_NS, "xsi": XSI}))
    root.set(f"{{{XSI}}}schemaLocation", QTI_LOCATION)
    title = plain_title(collection.title_in(lang)) or collection.id
    assessment = SubElement(root, Q + "assessment", ident=quiz, title=title)
    meta = SubElement(assessment, Q + "qtimetadata")
    field = SubElement(meta, Q + "qtimetadatafield")
    SubElement(field, Q + "fieldlabel").text = "cc_maxattempts"
    SubElement(field, Q + "fieldentry").text = "1"
    section = SubElement(assessment, Q + "section", ident="root_section")
    return root, section


def _meta(collection: Collection, lang: str, quiz: str, points: float) -> etree._Element:
    """The quiz's settings as Canvas's export writes them (`assessment_meta.xml`): a practice
    quiz, unpublished, answers shuffled unless a form fixes their order."""
    root = etree.Element(C + "quiz", nsmap=nsmap({None: CANVAS_NS, "xsi": XSI}))
    root.set("identifier", quiz)
    root.set(f"{{{XSI}}}schemaLocation",
             f"{CANVAS_NS} https://canvas.instructure.com/xsd/cccv1p0.xsd")
    SubElement(root, C + "title").text = plain_title(collection.title_in(lang)) or collection.id
    shuffle = any(getattr(i, "shuffle", False) for i in collection.items)
    for name, value in (("shuffle_answers", "true" if shuffle else "false"),
                        ("scoring_policy", "keep_highest"), ("quiz_type", "assignment"),
                        ("points_possible", repr(float(points))),
                        ("show_correct_answers", "true"), ("allowed_attempts", "1"),
                        ("one_question_at_a_time", "false"), ("cant_go_back", "false"),
                        ("available", "false")):
        SubElement(root, C + name).text = value
    return root


def _manifest(collection: Collection, lang: str, quiz: str, files: Sequence[str]
              ) -> etree._Element:
    root = etree.Element(CP + "manifest", nsmap=nsmap({None: CP_NS}))
    root.set("identifier", f"{quiz}-manifest")
    meta = SubElement(root, CP + "metadata")
    SubElement(meta, CP + "schema").text = "IMS Content"
    SubElement(meta, CP + "schemaversion").text = "1.1.3"
    SubElement(root, CP + "organizations")
    resources = SubElement(root, CP + "resources")
    res = SubElement(resources, CP + "resource", identifier=quiz, type="imsqti_xmlv1p2")
    SubElement(res, CP + "file", href=f"{quiz}/{quiz}.xml")
    SubElement(res, CP + "dependency", identifierref=f"{quiz}-meta")
    meta_res = SubElement(resources, CP + "resource", identifier=f"{quiz}-meta",
                          type="associatedcontent/imscc_xmlv1p1/learning-application-resource",
                          href=f"{quiz}/assessment_meta.xml")
    SubElement(meta_res, CP + "file", href=f"{quiz}/assessment_meta.xml")
    for n, path in enumerate(files, 1):
        href = quote(path)
        web = SubElement(resources, CP + "resource", identifier=f"{quiz}-file-{n}",
                         type="webcontent", href=href)
        SubElement(web, CP + "file", href=href)
    return root


def _xml(root: etree._Element) -> bytes:
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def _glue(job: _Quiz, item: Item, fragments: Fragments) -> object:
    """What the package's own parts read of `item` (`Format.glue`): its id, languages and
    source path (the warning of a language it lacks), points (the quiz's) and shuffling (the
    quiz's setting)."""
    return (item.id, tuple(item.text), job.collection.paths.get(item.id), item.points,
            getattr(item, "shuffle", False))


#: The format: one Canvas quiz package (zip) per language.
FORMAT = Format(NAME, folder="canvas", suffix=".zip", multi=False, start=_Quiz,
                fragment=_fragment, assemble=_assemble, glue=_glue, zipped=True)
export = FORMAT.export
