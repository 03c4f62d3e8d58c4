"""Canvas quiz and question bank exports (QTI 1.2 in Canvas's own profile, a zip) -> items.

Reads what Canvas writes and what `dpassess export -f canvas` writes, as Canvas's own importer
reads it (canvas-lms `gems/plugins/qti_exporter`, restated in tests/canvas_qti12.py):

- the package: a quiz's "Export quiz" zip (`<ident>/<ident>.xml` and `assessment_meta.xml`), or a
  course export (`non_cc_assessments/<ident>.xml.qti` for each quiz and question bank, preferred
  to the Common Cartridge copy `<ident>/assessment_qti.xml` that keeps only five question types),
  or one QTI 1.2 file; the manifest names the files, else every `questestinterop` file is read;
- each `<item>` by its `question_type` metadata (guessed from its responses when absent): choice
  questions, numerical (exact answers with a margin, ranges, precision answers), short answer
  (every wording), matching (pairs and distractors), essay, text only (a description), fill in
  multiple blanks and multiple drop-downs (a cloze), New Quizzes' ordering; points from `points_possible`; the question's
  comments (`general_fb`, `correct_fb`, `general_incorrect_fb`) and each answer's;
- HTML to Markdown: Canvas's equation images (`data-equation-content`) become `$tex$`, files
  named `$IMS-CC-FILEBASE$/<path>` are taken from the package into `img/<item id>/`.

A question type the model cannot hold (calculated, file upload, ...) is skipped with its file,
line and reason; what an item cannot carry is a warning naming the question.
"""

from __future__ import annotations

import contextlib
import html
import posixpath
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from io import BytesIO
from typing import Any
from urllib.parse import unquote

import lxml.html
from lxml import etree
from pydantic import ValidationError

from dpassess.importers.common import (
    DEFAULT_TOPIC,
    MAX_FIELD,
    ImportResult,
    NoLanguage,
    Skip,
    check_size,
    choice_item,
    inline_html,
    lang_code,
    note,
    option_ids,
    slugify,
    title_markdown,
    unique_ids,
    valid_id,
    validation_reason,
    with_titles,
)
from dpassess.importers.html_markdown import html_to_markdown
from dpassess.importers.questions import _Files
from dpassess.importers.safe import MAX_ANSWERS, InputError, line_of, open_zip, parse_xml
from dpassess.lms.canvas import STIMULUS_CLASS
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

CODE = "canvas"
#: Where Canvas keeps a package's files, and how its HTML names them.
FILEBASE = "$IMS-CC-FILEBASE$"
FILES_FOLDER = "web_resources"
#: The Common Cartridge copy of a quiz in a course export (only five question types), and the
#: folder of the full copies Canvas reads back (`CC::CCHelper`).
CC_QTI = "assessment_qti.xml"
NON_CC_FOLDER = "non_cc_assessments"
QTI_EXTENSION = ".xml.qti"
#: The name Canvas gives a question that was never named: not kept as a title.
DEFAULT_NAME = "Question"

#: `question_type`s read, and the Common Cartridge profiles of the CC copy.
_CC_PROFILES = {
    "cc.multiple_choice.v0p1": "multiple_choice_question",
    "cc.multiple_response.v0p1": "multiple_answers_question",
    "cc.true_false.v0p1": "true_false_question",
    "cc.fib.v0p1": "short_answer_question",
    "cc.essay.v0p1": "essay_question",
}
_CHOICE_TYPES = {"multiple_choice_question": ItemType.single_choice,
                 "true_false_question": ItemType.true_false,
                 "multiple_answers_question": ItemType.multiple_response}
_BLANKS = ("fill_in_multiple_blanks_question", "multiple_dropdowns_question")
#: Canvas question types the model has no item for, and why.
_NOT_HELD = {
    "calculated_question": "a calculated (formula) question, whose numbers Canvas draws per "
                           "student: the bank has no such item",
    "file_upload_question": "a file upload question: the bank has no such item",
}
#: `AssessmentItemConverter#get_feedback`: how Canvas files a feedback by its identifier.
_INCORRECT = re.compile(r"wrong|incorrect|_IC$", re.I)
_CORRECT = re.compile(r"correct|_C$", re.I)
_SOLUTION = re.compile(r"solution", re.I)
_NEUTRAL = re.compile(r"general_|_all", re.I)
_OPTION_ID = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")
#: A blank in a blanks question's text: `[name]`.
_BLANK = re.compile(r"\[([^\[\]\s]{1,64})\]")
_DISPLAY = "\\displaystyle "
_EQUATION_PATH = "/equation_images/"


def _local(el: etree._Element) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


def _kids(el: etree._Element | None, name: str) -> list[etree._Element]:
    return [] if el is None else [c for c in el if _local(c) == name]


def _kid(el: etree._Element | None, name: str) -> etree._Element | None:
    return next(iter(_kids(el, name)), None)


def _below(el: etree._Element | None, name: str) -> list[etree._Element]:
    return [] if el is None else [d for d in el.iter() if _local(d) == name]


def _text(el: etree._Element | None) -> str:
    return (el.text or "").strip() if el is not None else ""


# --- the package ------------------------------------------------------------------------------


def is_canvas_zip(data: bytes) -> bool | None:
    """Whether a zip looks like a Canvas QTI 1.2 export (not a QTI 2.1 package): a `.xml.qti`
    file or an `assessment_meta.xml`, or a manifest naming a QTI 1.2 resource, or (without a
    manifest) a `questestinterop` file. Reads only the directory and a few heads; None for a
    zip that cannot be read (it could be either)."""
    try:
        zf = zipfile.ZipFile(BytesIO(data))
        names = zf.namelist()[:20_000]
        if any(n.endswith((QTI_EXTENSION, "/assessment_meta.xml")) for n in names):
            return True
        if "imsmanifest.xml" in names:
            with zf.open("imsmanifest.xml") as fh:
                head = fh.read(1 << 16)
            return b"imsqti_xmlv1p2" in head and b"imsqti_item_xmlv2p1" not in head
        for n in [n for n in names if n.lower().endswith((".xml", ".qti"))][:50]:
            with zf.open(n) as fh:
                if b"questestinterop" in fh.read(4096):
                    return True
    except Exception:  # a guess: whatever zipfile raises, the zip cannot tell
        return None
    return False


def _documents(files: dict[str, bytes], name: str) -> list[str]:
    """The QTI 1.2 files of a package to read, in the manifest's order: the full copy of each
    quiz and bank (a `.xml.qti` file, or the quiz's own file), never the Common Cartridge copy
    of one that has a full copy."""
    out: dict[str, None] = {}
    if "imsmanifest.xml" in files:
        manifest = parse_xml(files["imsmanifest.xml"], f"{name}:imsmanifest.xml")
        for res in _below(manifest, "resource"):
            kind = res.get("type", "")
            hrefs = [f.get("href", "") for f in _kids(res, "file")] or [res.get("href", "")]
            for href in hrefs:
                path = posixpath.normpath(unquote(href)) if href else ""
                if not path:
                    continue
                if path.startswith(("../", "/")) or path == "..":
                    raise InputError(f"{name}:imsmanifest.xml:{line_of(res)}: file {href!r} "
                                     "points outside the package")
                full = path.endswith(QTI_EXTENSION)
                if not full and not (kind.startswith("imsqti_xmlv1p2") and path.endswith(".xml")):
                    continue
                if path not in files:
                    raise InputError(f"{name}:imsmanifest.xml:{line_of(res)}: file {href!r} is "
                                     "not in the package")
                ident = res.get("identifier", "")
                if (posixpath.basename(path) == CC_QTI
                        and f"{NON_CC_FOLDER}/{ident}{QTI_EXTENSION}" in files):
                    continue  # the Common Cartridge copy: its full copy is read instead
                out.setdefault(path)
    for path in sorted(files):  # full copies the manifest does not list
        if path.endswith(QTI_EXTENSION):
            out.setdefault(path)
    if not out and "imsmanifest.xml" not in files:
        for path in sorted(files):
            if path.lower().endswith(".xml") and b"questestinterop" in files[path][:4096]:
                out.setdefault(path)
    if not out:
        raise InputError(f"{name}: no QTI 1.2 quiz or question bank in the package: not a "
                         "Canvas quiz export")
    return list(out)


@dataclass
class _Package:
    """What the items of one input share: its files, its language, what was read."""

    name: str
    lang: str
    files: dict[str, bytes]
    result: ImportResult
    words: dict[str, tuple[str, str]] = field(default_factory=dict)
    seen_files: set[str] = field(default_factory=set)


def read(data: bytes, name: str, lang: str | None, *,
         true_false_words: Mapping[str, tuple[str, str]] | None = None) -> ImportResult:
    """A Canvas export (a zip, or one QTI 1.2 file) -> items in `lang` (Canvas's exports do not
    say their language)."""
    check_size(data, name)
    if lang is None:
        raise NoLanguage(f"{name}: a Canvas export does not say its language, so it must "
                         "be given")
    code = lang_code(lang)
    if code is None:
        raise InputError(f"{name}: {lang!r} is not a language code (for example en, pt-BR)")
    result = ImportResult()
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        files = open_zip(data, name)
        docs = [(f"{name}:{p}", files[p]) for p in _documents(files, name)]
    else:
        files = {}
        docs = [(name, data)]
    pkg = _Package(name, code, files, result, dict(true_false_words or {}))
    trees = []
    for where, content in docs:
        root = parse_xml(content, where)
        if _local(root) != "questestinterop":
            raise InputError(f"{where}:{line_of(root)}: <{_local(root)}> is not a QTI 1.2 "
                             "document (questestinterop)")
        trees.append((where, root))
    idents = {it.get("ident", "") for _, root in trees for it in _below(root, "item")}
    banks = {b.get("ident", "") for _, root in trees for b in _below(root, "objectbank")}
    copies = refs = 0
    for where, root in trees:
        for el in root.iter():
            match _local(el):
                case "itemref":
                    refs += 1
                case "sourcebank_ref" if _text(el) not in banks:
                    refs += 1  # a question group drawn from a bank the package lacks
                case "item":
                    ref = _meta(el).get("assessment_question_identifierref", "")
                    if ref and ref != el.get("ident") and ref in idents:
                        copies += 1  # a quiz's copy of a bank question in the package
                        continue
                    _read_item(pkg, where, el)
                case _:
                    pass
    if copies:
        result.warnings.append(note(CODE, name, f"{copies} quiz question(s) are copies of "
                                    "question bank questions in the same package: each is "
                                    "read once, from its bank"))
    if refs:
        result.warnings.append(note(CODE, name, f"{refs} question(s) or question group(s) "
                                    "refer to a question bank that is not in the package: "
                                    "their questions are not imported (export the course, "
                                    "which holds its banks)"))
    result.items = unique_ids(result.items)
    return result


def _meta(item: etree._Element) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in _below(_kid(item, "itemmetadata"), "qtimetadatafield"):
        label = _text(_kid(f, "fieldlabel"))
        if label and label not in out:
            out[label] = _text(_kid(f, "fieldentry"))
    return out


def _container_title(item: etree._Element) -> str:
    """The title of the quiz or bank that holds the item."""
    for up in item.iterancestors():
        match _local(up):
            case "assessment":
                return up.get("title", "")
            case "objectbank":
                for f in _below(_kid(up, "qtimetadata"), "qtimetadatafield"):
                    if _text(_kid(f, "fieldlabel")) == "bank_title":
                        return _text(_kid(f, "fieldentry"))
                return ""
            case _:
                pass
    return ""


def _read_item(pkg: _Package, where: str, el: etree._Element) -> None:
    ident = el.get("ident") or None
    reader = _ItemReader(pkg, where, el)
    try:
        pkg.result.items.append(reader.read())
    except Skip as exc:
        pkg.result.skipped.append(note(CODE, where, str(exc), line=line_of(el), item=ident))
    except ValidationError as exc:
        pkg.result.skipped.append(note(CODE, where, validation_reason(exc), line=line_of(el),
                                       item=ident))


# --- one question -----------------------------------------------------------------------------


@dataclass
class _Condition:
    """A `respcondition`: the values its test names (`varequal`, not under `not`, by response),
    its numeric tests, what it does to SCORE, the feedback it shows."""

    el: etree._Element
    equal: list[tuple[str, str]]
    score: tuple[str, float] | None
    shows: list[str]
    other: bool

    @property
    def scores(self) -> bool:
        return self.score is not None and self.score[1] > 0


def _conditions(item: etree._Element) -> list[_Condition]:
    out = []
    for proc in _kids(item, "resprocessing"):
        for cond in _kids(proc, "respcondition"):
            var = _kid(cond, "conditionvar")
            equal = [(eq.get("respident", ""), (eq.text or "").strip())
                     for eq in _below(var, "varequal")
                     if not _negated(eq, var)]
            setvar = next((s for s in _kids(cond, "setvar")
                           if s.get("varname", "SCORE") == "SCORE"), None)
            score = None
            if setvar is not None:
                try:
                    value = float(Decimal((setvar.text or "0").strip()))
                except (InvalidOperation, ValueError):
                    raise Skip(f"line {line_of(setvar)}: SCORE {setvar.text!r} is not a "
                               "number") from None
                score = (setvar.get("action", "Set"), value)
            shows = [d.get("linkrefid", "") for d in _kids(cond, "displayfeedback")]
            other = var is not None and any(_local(c) == "other" for c in var)
            out.append(_Condition(cond, equal, score, shows, other))
    return out


def _negated(el: etree._Element, top: etree._Element | None) -> bool:
    """Whether `el` is under a `not` below `top`."""
    for up in el.iterancestors():
        if up is top:
            return False
        if _local(up) == "not":
            return True
    return False


class _ItemReader:
    def __init__(self, pkg: _Package, where: str, el: etree._Element) -> None:
        self.pkg, self.where, self.el = pkg, where, el
        self.lang = pkg.lang
        self.ident = el.get("ident", "")
        self.meta = _meta(el)
        self.title = el.get("title", "").strip()
        self.id = self._id()
        self.files = _Files(self.id)
        self.feedback = {fb.get("ident", ""): fb for fb in _kids(el, "itemfeedback")}
        self.used_feedback: set[str] = set()

    def warn(self, message: str) -> None:
        self.pkg.result.warnings.append(note(CODE, self.where, message, line=line_of(self.el),
                                             item=self.ident or None))

    # --- identity -------------------------------------------------------------------------

    def _id(self) -> str:
        """The item id: dpassess's own (`<bank>__<id>-<lang>`), else from the question's name,
        else its identifier."""
        ours = self.ident.partition("__")[2]
        if ours.endswith(f"-{self.lang}") and valid_id(ours[: -len(self.lang) - 1]):
            return ours[: -len(self.lang) - 1]
        if self.title and self.title != DEFAULT_NAME:
            return slugify(plain_title(self.title))
        if valid_id(self.ident.lower()):
            return self.ident.lower()
        return slugify(self.ident or "question")

    def _type(self) -> str:
        qtype = self.meta.get("question_type", "")
        if qtype:
            return qtype
        if (profile := self.meta.get("cc_profile", "")) in _CC_PROFILES:
            return _CC_PROFILES[profile]
        presentation = _kid(self.el, "presentation")
        lids = _below(presentation, "response_lid")
        if len(lids) == 1:
            many = lids[0].get("rcardinality", "Single") == "Multiple"
            return "multiple_answers_question" if many else "multiple_choice_question"
        if lids:
            return "matching_question"
        strs = _below(presentation, "response_str")
        if strs:
            fib = _below(strs[0], "render_fib")
            if fib and fib[0].get("fibtype", "").lower() in ("decimal", "integer"):
                return "numerical_question"
            scored = any(c.equal and c.scores for c in _conditions(self.el))
            return "short_answer_question" if scored else "essay_question"
        return "text_only_question"

    # --- texts ----------------------------------------------------------------------------

    def markdown(self, mattext: etree._Element | None, *, inline: bool = False,
                 blanks: dict[str, str] | None = None) -> str:
        """A `mattext` (HTML or plain text) as Markdown: equation images as maths, package files
        as the bank's, `[blank]`s as `[[gap]]` (`blanks`: blank name -> gap id)."""
        if mattext is None:
            return ""
        raw = mattext.text or ""
        if len(raw) > MAX_FIELD:
            raise Skip(f"a text of {len(raw):,} characters; the limit is {MAX_FIELD:,}")
        if mattext.get("texttype", "text/plain").lower() != "text/html":
            raw = html.escape(raw, quote=False).replace("\n", "<br>")
        if not raw.strip():
            return ""
        try:
            root = lxml.html.fragment_fromstring(raw, create_parent="div")
        except (etree.ParserError, ValueError):
            return html_to_markdown(html.escape(raw, quote=False), inline=inline)
        root = _unwrap(root)
        for div in [d for d in root if d.tag == "div" and d.get("class") == STIMULUS_CLASS
                    and len(d.attrib) == 1]:
            _unwrap_element(div)  # the shared stimulus dpassess's export puts above a stem
        for img in list(root.iter("img")):
            tex = _equation(img)
            if tex is not None:
                _replace_with_maths(img, tex)
            elif (src := img.get("src")) is not None:
                img.set("src", self._file(src))
        for a in root.iter("a"):
            if (href := a.get("href")) is not None and href.startswith(FILEBASE):
                a.set("href", self._file(href))
        if blanks is not None:
            _mark_blanks(root, blanks)
        _block_breaks(root)
        inner = html.escape(root.text or "", quote=False) + "".join(
            etree.tostring(c, encoding="unicode", method="html") for c in root)
        return html_to_markdown(inline_html(inner) if inline else inner, inline=inline)

    def _file(self, ref: str) -> str:
        """The bank's path of a file the HTML names as `$IMS-CC-FILEBASE$/<path>` (taken from
        the package), else `ref` as it is."""
        if not ref.startswith(FILEBASE):
            return ref
        path = posixpath.normpath(unquote(ref[len(FILEBASE):].split("?")[0]).lstrip("/"))
        data = None
        for candidate in (f"{FILES_FOLDER}/{path}", path):
            if not candidate.startswith("../") and candidate in self.pkg.files:
                data = self.pkg.files[candidate]
                break
        if data is None:
            self.warn(f"file {ref!r} is not in the package: the reference is kept (a broken "
                      "link)")
            return ref
        link = self.files.link(posixpath.basename(path), data)
        return link

    def feedback_md(self, ident: str) -> str:
        fb = self.feedback.get(ident)
        if fb is None:
            return ""
        self.used_feedback.add(ident)
        texts = _below(fb, "mattext")
        return "\n\n".join(md for t in texts if (md := self.markdown(t)))

    def question_feedback(self) -> dict[str, str]:
        """The question's own comments, by kind (`neutral`, `correct`, `incorrect`), as Canvas
        files them by identifier; feedback named by an answer is the answer's."""
        out: dict[str, str] = {}
        for ident in self.feedback:
            if ident in self.answer_feedback_ids:
                continue
            if _INCORRECT.search(ident):
                kind = "incorrect"
            elif _CORRECT.search(ident):
                kind = "correct"
            elif _SOLUTION.search(ident):
                kind = "solution"
            elif _NEUTRAL.search(ident):
                kind = "neutral"
            else:
                continue
            md = self.feedback_md(ident)
            if md:
                out[kind] = f"{out[kind]}\n\n{md}" if kind in out else md
        return out

    # --- the item -------------------------------------------------------------------------

    def read(self) -> Item:
        qtype = self._type()
        if qtype in _NOT_HELD:
            raise Skip(f"{qtype}: {_NOT_HELD[qtype]}")
        presentation = _kid(self.el, "presentation")
        if presentation is None:
            raise Skip("the question has no presentation")
        labels = len(_below(presentation, "response_label"))
        conds = _conditions(self.el)
        if max(labels, len(conds)) > MAX_ANSWERS:
            raise Skip(f"{max(labels, len(conds)):,} answers; the limit is {MAX_ANSWERS:,} per "
                       "question")
        self.conditions = conds
        self.answer_feedback_ids = {s for c in conds for s in c.shows
                                    if not (_NEUTRAL.search(s) or _CORRECT.search(s)
                                            or _INCORRECT.search(s) or _SOLUTION.search(s))}
        self.presentation = presentation
        self.stem_el = next((t for m in _kids(presentation, "material")
                             for t in _below(m, "mattext")), None)
        topic = slugify(_container_title(self.el), prefix="q") \
            if _container_title(self.el) else DEFAULT_TOPIC
        self.fields: dict[str, Any] = {"id": self.id, "topic": topic}
        if qtype != "text_only_question":
            self.fields["points"] = self._points()
        match qtype:
            case "multiple_choice_question" | "true_false_question" | "multiple_answers_question":
                item = self._choice(_CHOICE_TYPES[qtype])
            case "numerical_question":
                item = self._numerical()
            case "short_answer_question":
                item = self._short_answer()
            case "essay_question":
                item = self._essay()
            case "matching_question":
                item = self._matching()
            case "fill_in_multiple_blanks_question" | "multiple_dropdowns_question":
                item = self._blanks(qtype == "multiple_dropdowns_question")
            case "ordering_question":
                item = self._ordering()
            case "text_only_question":
                item = Description.model_validate({
                    **self.fields, "type": "description",
                    "text": {self.lang: {"stem": self.markdown(self.stem_el)}}})
            case _:
                raise Skip(f"question type {qtype!r} is not one the bank holds")
        for ident in self.feedback:
            if ident not in self.used_feedback and self.feedback_md(ident):
                self.warn(f"feedback {ident!r} is shown by no answer: not carried")
        self.pkg.result.files.update(self.files.written())
        title = "" if self.title == DEFAULT_NAME else plain_title(self.title)
        titled = with_titles(item, {self.lang: title})
        if titled != item.text:
            item = item.model_copy(update={"text": titled})
        return item

    def _points(self) -> float:
        raw = self.meta.get("points_possible", "1") or "1"
        try:
            points = float(Decimal(raw))
        except (InvalidOperation, ValueError):
            raise Skip(f"points_possible {raw!r} is not a number") from None
        if points <= 0:
            self.warn(f"the question is worth {raw} points; items are worth more than 0: "
                      "imported as worth 1 point")
            return 1.0
        if points > 1000:
            raise Skip(f"the question is worth {points:g} points; items are worth at most 1000")
        return points

    def _stem(self) -> str:
        return self.markdown(self.stem_el)

    def _unused_comments(self, comments: dict[str, str], used: set[str]) -> None:
        for kind in ("correct", "incorrect", "solution"):
            if kind in comments and kind not in used:
                self.warn(f"the question's {kind} comments have no place in a "
                          f"{self.fields.get('type', 'question')} item: not carried")

    # --- choice ---------------------------------------------------------------------------

    def _choice(self, kind: ItemType) -> Item:
        lids = _below(self.presentation, "response_lid")
        if len(lids) != 1:
            raise Skip(f"a choice question with {len(lids)} responses (response_lid)")
        labels = _below(lids[0], "response_label")
        idents = [lb.get("ident", "") for lb in labels]
        texts = [self.markdown(next(iter(_below(lb, "mattext")), None), inline=True)
                 for lb in labels]
        rid = lids[0].get("ident", "")
        weight: dict[str, bool] = dict.fromkeys(idents, False)
        answer_fb: dict[str, str] = {}
        for c in self.conditions:
            for resp, value in c.equal:
                if resp and rid and resp != rid:
                    continue
                if value not in weight:
                    raise Skip(f"line {line_of(c.el)}: a condition names answer {value!r}, "
                               "which the question does not have")
                if c.score is not None:
                    weight[value] = c.scores  # the last condition naming an answer wins
                shown = [s for s in c.shows if s in self.answer_feedback_ids]
                if shown and value not in answer_fb:
                    answer_fb[value] = shown[0]
        correct = [i for i in idents if weight[i]]
        if not correct:
            raise Skip("no answer is right (Canvas cannot tell the right answer either)")
        if kind is ItemType.true_false:
            words = [re.sub(r"\s+", " ", t).strip().lower() for t in texts]
            if len(idents) != 2:
                kind = ItemType.single_choice  # as Canvas reads it
            elif "false" in words[0] and "true" in words[1]:
                idents, texts = idents[::-1], texts[::-1]  # the statement's "true" first
        ids = list(TRUE_FALSE_IDS) if kind is ItemType.true_false else self._option_ids(idents)
        to_ours = dict(zip(idents, ids, strict=True))
        key = [to_ours[i] for i in idents if weight[i]]
        if kind is not ItemType.multiple_response and len(key) != 1:
            raise Skip(f"a {'true/false' if kind is ItemType.true_false else 'multiple choice'} "
                       f"question with {len(key)} right answers")
        options: dict[str, str] = dict(zip(ids, texts, strict=True))
        if kind is ItemType.true_false:
            built_in = TRUE_FALSE_WORDS.get(self.lang, {})
            options = {o: t for o, t in options.items() if t != built_in.get(o)}
            if self.lang not in TRUE_FALSE_WORDS and len(options) < 2:
                words_ = self.pkg.words.get(self.lang)
                options = dict(zip(TRUE_FALSE_IDS, words_, strict=True)) if words_ else {
                    o: t for o, t in zip(ids, texts, strict=True)}
        feedback = {to_ours[i]: md for i, fid in answer_fb.items()
                    if (md := self.feedback_md(fid))}
        comments = self.question_feedback()
        used = set()
        for kind_, wanted in (("correct", True), ("incorrect", False)):
            if kind_ in comments:
                for o in ids:
                    if (o in key) == wanted and o not in feedback:
                        feedback[o] = comments[kind_]
                used.add(kind_)
        self._unused_comments(comments, used)
        shuffle = True
        text = {self.lang: Content(stem=self._stem(), options=options, feedback=feedback,
                                   explanation=comments.get("neutral"))}
        try:
            return choice_item(kind, None, **self.fields, shuffle=shuffle,
                               options=tuple(Option(id=o) for o in ids), key=tuple(key),
                               text=text)
        except ValidationError as exc:
            raise Skip(validation_reason(exc)) from None

    def _option_ids(self, idents: list[str]) -> list[str]:
        lowered = [i.lower() for i in idents]
        if all(_OPTION_ID.match(i) and len(i) <= 32 for i in lowered) \
                and len(set(lowered)) == len(lowered):
            return lowered
        return option_ids(len(idents))

    # --- numerical ------------------------------------------------------------------------

    def _numerical(self) -> Item:
        answers: list[dict[str, Any]] = []
        feedback: dict[str, str] = {}
        loose = 0
        for c in self.conditions:
            if not c.scores:
                continue
            answer, strict = _numeric_answer(c.el)
            if answer is None:
                raise Skip(f"line {line_of(c.el)}: a numerical answer that is neither a number "
                           "with a margin nor a range")
            loose += strict
            aid = f"a{len(answers) + 1}"
            answers.append({"id": aid, **answer})
            shown = [s for s in c.shows if s in self.answer_feedback_ids]
            if shown and (md := self.feedback_md(shown[0])):
                feedback[aid] = md
        if not answers:
            raise Skip("no numerical answer is right")
        if loose:
            self.warn(f"{loose} answer(s) exclude an end of their range (a precision answer, "
                      "or a strict bound): read with both ends included")
        comments = self.question_feedback()
        used = set()
        if "incorrect" in comments:
            aid = f"a{len(answers) + 1}"
            answers.append({"id": aid, "any_other": True})
            feedback[aid] = comments["incorrect"]
            used.add("incorrect")
        if "correct" in comments:
            for a in answers:
                if not a.get("any_other") and a["id"] not in feedback:
                    feedback[a["id"]] = comments["correct"]
            used.add("correct")
        self.fields["type"] = "numerical"
        self._unused_comments(comments, used)
        return Numerical.model_validate({
            **self.fields, "answers": answers,
            "text": {self.lang: {"stem": self._stem(), "feedback": feedback,
                                 "explanation": comments.get("neutral")}}})

    # --- short answer and essay -----------------------------------------------------------

    def _short_answer(self) -> Item:
        """Each right condition's wordings, one answer per condition and feedback (Canvas's
        own export tests every wording in one condition and shows each wording's feedback from
        a condition of its own)."""
        wording_fb: dict[str, str] = {}
        for c in self.conditions:
            if not c.scores:
                shown = [s for s in c.shows if s in self.answer_feedback_ids]
                for _, value in c.equal:
                    if shown and value not in wording_fb:
                        wording_fb[value] = shown[0]
        groups: list[tuple[str, list[str]]] = []  # (feedback id, wordings)
        seen: set[str] = set()
        for n, c in enumerate(self.conditions):
            if not c.scores:
                continue
            own = next((s for s in c.shows if s in self.answer_feedback_ids), "")
            for _, value in c.equal:
                if not value or value.lower() in seen:
                    continue
                seen.add(value.lower())
                fid = own or wording_fb.get(value, "")
                tag = f"{n}\x00{fid}"
                if groups and groups[-1][0] == tag:
                    groups[-1][1].append(value)
                else:
                    groups.append((tag, [value]))
        if not groups:
            if any(c.other for c in self.conditions) or not self.conditions:
                return self._essay()
            raise Skip("a short answer question with no right wording")
        answers = []
        words: dict[str, tuple[str, ...]] = {}
        feedback: dict[str, str] = {}
        for aid, (tag, wordings) in zip(option_ids(len(groups)), groups, strict=True):
            answers.append({"id": aid})
            words[aid] = tuple(wordings)
            fid = tag.partition("\x00")[2]
            if fid and (md := self.feedback_md(fid)):
                feedback[aid] = md
        comments = self.question_feedback()
        used = set()
        if "correct" in comments:
            for a in answers:
                feedback.setdefault(a["id"], comments["correct"])
            used.add("correct")
        self.fields["type"] = "short_answer"
        self._unused_comments(comments, used)
        return ShortAnswer.model_validate({
            **self.fields, "answers": answers,
            "text": {self.lang: {"stem": self._stem(), "answers": words, "feedback": feedback,
                                 "explanation": comments.get("neutral")}}})

    def _essay(self) -> Item:
        comments = self.question_feedback()
        self.fields["type"] = "essay"
        self._unused_comments(comments, set())
        return Essay.model_validate({
            **self.fields, "text": {self.lang: {"stem": self._stem(),
                                                "explanation": comments.get("neutral")}}})

    # --- matching -------------------------------------------------------------------------

    def _matching(self) -> Item:
        lids = _below(self.presentation, "response_lid")
        if not lids:
            raise Skip("a matching question with no left side")
        rights = {lb.get("ident", ""): lb for lb in _below(lids[0], "response_label")}
        right_text = {i: _plain(lb) for i, lb in rights.items()}
        lefts = [lid.get("ident", "") for lid in lids]
        names = [i.removeprefix("response_") for i in lefts]
        pair_ids = self._option_ids(names)
        matched: dict[str, str] = {}
        for c in self.conditions:
            if c.score is None or c.score[0] != "Add" or c.score[1] <= 0:
                continue
            for resp, value in c.equal:
                if resp in lefts and value in rights:
                    matched.setdefault(resp, value)
        premises: dict[str, str] = {}
        responses: dict[str, str] = {}
        pairs = []
        for pid, lid, left in zip(pair_ids, lids, lefts, strict=True):
            if left not in matched:
                self.warn(f"left side {left!r} has no right match: left out")
                continue
            prompt = next((t for m in _kids(lid, "material") for t in _below(m, "mattext")), None)
            premises[pid] = self.markdown(prompt, inline=True)
            responses[pid] = title_markdown(right_text[matched[left]])
            pairs.append(pid)
        used = set(matched.values())
        spare = [i for i in rights if i not in used]
        taken = set(pairs)
        distractors = []
        extra = iter(o for o in option_ids(len(pairs) + len(spare) + len(pair_ids) + 1)
                     if o not in taken and o not in pair_ids)
        for r in spare:
            did = next(extra)
            distractors.append(did)
            responses[did] = title_markdown(right_text[r])
        if any(c.shows for c in self.conditions if not c.scores):
            self.warn("feedback on matches is not carried (the bank's matching items have "
                      "none)")
            for c in self.conditions:
                self.used_feedback.update(c.shows)
        comments = self.question_feedback()
        self.fields["type"] = "matching"
        self._unused_comments(comments, set())
        return Matching.model_validate({
            **self.fields, "pairs": pairs, "distractors": distractors,
            "text": {self.lang: {"stem": self._stem(), "premises": premises,
                                 "responses": responses,
                                 "explanation": comments.get("neutral")}}})

    # --- ordering (New Quizzes) ------------------------------------------------------------

    def _ordering(self) -> Item:
        """New Quizzes' ordering question: the options are the labels of one ordered
        `response_lid`; the right order is the `varequal`s of its scoring condition, first on
        top; Canvas gives the points for the whole order only."""
        lids = _below(self.presentation, "response_lid")
        if len(lids) != 1:
            raise Skip(f"an ordering question with {len(lids)} responses (response_lid)")
        labels = _below(lids[0], "response_label")
        idents = [lb.get("ident", "") for lb in labels]
        ids = self._option_ids(idents)
        to_ours = dict(zip(idents, ids, strict=True))
        order = next(([to_ours.get(v, "") for _, v in c.equal] for c in self.conditions
                      if c.scores and c.equal), [])
        if sorted(order) != sorted(ids):
            raise Skip("the right order does not name every option once")
        options = {to_ours[i]: self.markdown(next(iter(_below(lb, "mattext")), None),
                                             inline=True)
                   for i, lb in zip(idents, labels, strict=True)}
        stem = self._stem()
        bottom = [t for m in _kids(self.presentation, "material")[1:]
                  for t in _below(m, "mattext")]
        stem = "\n\n".join(x for x in [stem, *(self.markdown(t) for t in bottom)] if x)
        comments = self.question_feedback()
        self.fields["type"] = "ordering"
        self._unused_comments(comments, set())
        return Ordering.model_validate({
            **self.fields, "options": order, "grading": "all_or_nothing",
            "text": {self.lang: {"stem": stem, "options": options,
                                 "explanation": comments.get("neutral")}}})

    # --- blanks -----------------------------------------------------------------------------

    def _blanks(self, dropdowns: bool) -> Item:
        lids = _below(self.presentation, "response_lid")
        if not lids:
            raise Skip("a blanks question with no blank")
        names = [lid.get("ident", "").removeprefix("response_") for lid in lids]
        gap_ids = self._option_ids(names)
        if not all(len(g) <= 40 for g in gap_ids):
            gap_ids = [f"g{n}" for n in range(1, len(names) + 1)]
        blanks = dict(zip(names, gap_ids, strict=True))
        stem = self.markdown(self.stem_el, blanks=blanks)
        order = re.findall(r"\[\[([A-Za-z][A-Za-z0-9_-]{0,39})\]\]", stem)
        if sorted(order) != sorted(gap_ids):
            raise Skip("the question text does not name each blank once "
                       f"(blanks: {', '.join(names)})")
        right: dict[tuple[str, str], bool] = {}
        for c in self.conditions:
            if c.score is not None and c.score[0] == "Add" and c.score[1] > 0:
                for resp, value in c.equal:
                    right[(resp, value)] = True
        gaps: dict[str, dict[str, Any]] = {}
        texts: dict[str, dict[str, Any]] = {}
        for gid, lid in zip(gap_ids, lids, strict=True):
            labels = _below(lid, "response_label")
            resp = lid.get("ident", "")
            if dropdowns:
                oids = option_ids(len(labels))
                key = [o for o, lb in zip(oids, labels, strict=True)
                       if right.get((resp, lb.get("ident", "")))]
                if len(key) != 1:
                    raise Skip(f"drop-down {gid!r} has {len(key)} right answers, not one")
                gaps[gid] = {"id": gid, "type": "choice", "options": oids, "key": key[0]}
                texts[gid] = {"options": {o: title_markdown(_plain(lb))
                                          for o, lb in zip(oids, labels, strict=True)}}
            else:
                wordings: list[str] = []
                for lb in labels:
                    w = _plain(lb)
                    if w and w.lower() not in {x.lower() for x in wordings}:
                        wordings.append(w)
                if not wordings:
                    raise Skip(f"blank {gid!r} has no answer")
                gaps[gid] = {"id": gid, "type": "short_answer", "answers": [{"id": "a"}]}
                texts[gid] = {"answers": {"a": tuple(wordings)}}
        comments = self.question_feedback()
        self.fields["type"] = "cloze"
        self._unused_comments(comments, set())
        return Cloze.model_validate({
            **self.fields, "gaps": [gaps[g] for g in order],
            "text": {self.lang: {"stem": stem, "gaps": texts,
                                 "explanation": comments.get("neutral")}}})


def _plain(label: etree._Element) -> str:
    """A label's text as Canvas shows it in a menu or a typed answer: plain, stripped."""
    t = next(iter(_below(label, "mattext")), None)
    if t is None:
        return ""
    raw = t.text or ""
    if t.get("texttype", "text/plain").lower() == "text/html" and raw.strip():
        with contextlib.suppress(etree.ParserError, ValueError):
            raw = lxml.html.fragment_fromstring(raw, create_parent="div").text_content()
    return " ".join(raw.split())


# --- numbers ----------------------------------------------------------------------------------


def _dec(el: etree._Element | None) -> Decimal | None:
    if el is None:
        return None
    try:
        d = Decimal((el.text or "").strip())
    except InvalidOperation:
        raise Skip(f"line {line_of(el)}: {el.text!r} is not a number") from None
    if not d.is_finite():
        raise Skip(f"line {line_of(el)}: {el.text!r} is not a number")
    return d


def _numeric_answer(cond: etree._Element) -> tuple[dict[str, float] | None, int]:
    """A numerical answer from a condition (Canvas's `NumericInteraction`): `<or>` an exact
    value (`varequal`) and its margin (`varlte` - value), `<and>` (or the bare tests) a range;
    and whether an end is strict (`vargt`, `varlt`: Canvas's precision answers)."""
    var = _kid(cond, "conditionvar")
    if var is None:
        return None, 0
    alt = _kid(var, "or")
    scope = alt if alt is not None else var
    exact = _dec(next(iter(_below(scope, "varequal")), None))
    lo_el = next(iter(_below(scope, "vargte") + _below(scope, "vargt")), None)
    hi_el = next(iter(_below(scope, "varlte") + _below(scope, "varlt")), None)
    lo, hi = _dec(lo_el), _dec(hi_el)
    strict = int(any(e is not None and _local(e) in ("vargt", "varlt") for e in (lo_el, hi_el)))
    if exact is not None and (alt is not None or (lo is None and hi is None)):
        if hi is not None:
            margin = hi - exact
        elif lo is not None:
            margin = exact - lo
        else:
            margin = Decimal(0)
        if margin < 0:
            return None, 0
        return {"value": float(exact), "tolerance": float(margin)}, strict
    if lo is not None and hi is not None and lo <= hi:
        return {"min": float(lo), "max": float(hi)}, strict
    return None, 0


# --- HTML -------------------------------------------------------------------------------------


def _unwrap(root: etree._Element) -> etree._Element:
    """The content of the one `<div>` Canvas wraps a question's text in."""
    while (len(root) == 1 and root[0].tag == "div" and not root[0].attrib
           and not (root.text or "").strip() and not (root[0].tail or "").strip()):
        root = root[0]
    return root


_BLOCKS = frozenset("address article aside blockquote dd div dl dt figcaption figure footer h1 "
                    "h2 h3 h4 h5 h6 header hr li main nav ol p pre section table tbody td tfoot "
                    "th thead tr ul".split())


def _block_breaks(root: etree._Element) -> None:
    """A line break between blocks where the HTML has none (`<p>a</p><p>b</p>`), as the bank's
    Markdown renders them: the same page, and Markdown that reads the same."""
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        kids = [c for c in el if isinstance(c.tag, str)]
        if kids and kids[0].tag in _BLOCKS and not (el.text or "").strip():
            el.text = "\n"
        if el is not root and el.tag in _BLOCKS and not (el.tail or "").strip():
            el.tail = "\n"


def _unwrap_element(el: etree._Element) -> None:
    """Put `el`'s content in its place."""
    parent = el.getparent()
    if parent is None:
        return
    at = parent.index(el)
    text, tail = el.text or "", el.tail or ""
    kids = list(el)
    prev = el.getprevious()
    if prev is not None:
        prev.tail = (prev.tail or "") + text
    else:
        parent.text = (parent.text or "") + text
    parent.remove(el)
    for n, kid in enumerate(kids):
        parent.insert(at + n, kid)
    if kids:
        kids[-1].tail = (kids[-1].tail or "") + tail
    elif prev is not None:
        prev.tail = (prev.tail or "") + tail
    else:
        parent.text = (parent.text or "") + tail


def _equation(img: etree._Element) -> str | None:
    """The TeX of one of Canvas's equation images (`data-equation-content`, else the alt text
    `LaTeX: ...`, else the image's address), or None for another image."""
    tex = img.get("data-equation-content")
    if tex is not None:
        return tex
    src = img.get("src", "")
    classes = (img.get("class") or "").split()
    if "equation_image" not in classes and _EQUATION_PATH not in src:
        return None
    alt = img.get("alt", "")
    if alt.startswith("LaTeX: "):
        return alt[len("LaTeX: "):]
    if _EQUATION_PATH in src:
        return unquote(unquote(src.split(_EQUATION_PATH, 1)[1].split("?")[0]))
    return None


def _replace_with_maths(img: etree._Element, tex: str) -> None:
    """Put the formula in place of its image, as the bank's HTML writes maths: `\\(tex\\)`, or
    `\\[tex\\]` for one shown in display style."""
    display = tex.startswith(_DISPLAY)
    tex = tex[len(_DISPLAY):] if display else tex
    text = f"\\[{tex}\\]" if display else f"\\({tex}\\)"
    text += img.tail or ""
    parent = img.getparent()
    if parent is None:
        return
    prev = img.getprevious()
    if prev is not None:
        prev.tail = (prev.tail or "") + text
    else:
        parent.text = (parent.text or "") + text
    parent.remove(img)


def _mark_blanks(root: etree._Element, blanks: dict[str, str]) -> None:
    """Each `[name]` of a blank in the text as the gap's `[[id]]`."""
    def fix(text: str | None) -> str | None:
        if not text or "[" not in text:
            return text
        return _BLANK.sub(lambda m: f"[[{blanks[m[1]]}]]" if m[1] in blanks else m[0], text)

    for el in root.iter():
        if isinstance(el.tag, str):
            el.text = fix(el.text)
        if el is not root:
            el.tail = fix(el.tail)


__all__ = ["CODE", "is_canvas_zip", "read"]
