"""The Canvas export (QTI 1.2, Canvas's own quiz profile), checked by things outside its code:
the QTI 1.2 schema (tests/schemas/qti12, see PROVENANCE.md there), Canvas's reading of the package
restated from its importer (tests/canvas_qti12.py) and Canvas's grading of numbers and wordings,
and the model the package was made from."""

from __future__ import annotations

import io
import zipfile
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from canvas_qti12 import Question, grades, grades_blank, read_package
from conftest import SEED_BANK
from dpassess import UsageError, load_bank
from dpassess.export import EXPORTERS, Collection
from dpassess.export.canvas.qti12 import export
from dpassess.lms import canvas
from dpassess.markup.markdown import to_plain
from dpassess.model import (
    ChoiceGap,
    Cloze,
    Description,
    Essay,
    Item,
    Matching,
    MultipleResponse,
    Numerical,
    NumericAnswer,
    Ordering,
    ShortAnswer,
    ShortAnswerGap,
    SingleChoice,
    TrueFalse,
    parse_item,
)

BANKS = Path(__file__).parent / "banks"
SCHEMA = Path(__file__).parent / "schemas" / "qti12" / "ims_qtiasiv1p2.xsd"


@pytest.fixture(scope="module")
def qti12_schema() -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(SCHEMA)))


def _bank(name: str) -> Collection:
    return Collection.from_bank(load_bank(SEED_BANK if name == "seed" else BANKS / name))


def _assessment(data: bytes) -> etree._Element:
    z = zipfile.ZipFile(io.BytesIO(data))
    name = next(n for n in z.namelist() if n.count("/") == 1 and n.endswith(".xml")
                and not n.endswith("assessment_meta.xml"))
    return etree.fromstring(z.read(name))


def _expected_type(item: Item, lang: str) -> str:
    match item:
        case TrueFalse():
            words = [to_plain(item.option_text(lang, o)).lower() for o in ("true", "false")]
            return ("true_false_question" if "true" in words[0] and "false" in words[1]
                    else "multiple_choice_question")
        case SingleChoice():
            return "multiple_choice_question"
        case MultipleResponse():
            return "multiple_answers_question"
        case Numerical():
            return "numerical_question"
        case ShortAnswer():
            return "short_answer_question"
        case Matching() | Ordering():
            return "matching_question"
        case Essay():
            return "essay_question"
        case Description():
            return "text_only_question"
        case Cloze():
            kind = canvas.cloze_kind([g.type for g in item.gaps])
            assert kind is not None
            return kind
    raise AssertionError(item.type)


def check_question(item: Item, lang: str, q: Question) -> None:
    """What Canvas keeps of `item` in `lang` is what the bank says (less what the export
    warned about)."""
    content = item.text[lang]
    assert q.question_type == _expected_type(item, lang), q.import_error
    assert not q.import_error
    assert q.points == (0 if isinstance(item, Description) else item.points)
    if content.explanation:
        assert _head(content.explanation) in _text(q.neutral_comments)
    match item:
        case TrueFalse() | SingleChoice() | MultipleResponse():
            ids = [o.id for o in item.options]
            assert [a.weight > 0 for a in q.answers] == [o in item.key for o in ids]
            for oid, a in zip(ids, q.answers, strict=True):
                fb = content.feedback.get(oid)
                assert (_head(fb) in _text(a.comments)) if fb else not a.comments
        case Numerical():
            kept = [a for a in item.answers if a.fraction == 1 and not a.any_other]
            assert len(q.answers) == len(kept)
            for mine, theirs in zip(kept, q.answers, strict=True):
                if mine.value is not None:
                    assert theirs.kind == "exact_answer"
                    assert theirs.exact == mine.value
                    assert theirs.margin == pytest.approx(mine.tolerance, abs=1e-12)
                else:
                    assert theirs.kind == "range_answer"
                    assert (theirs.start, theirs.end) == (mine.min, mine.max)
                fb = content.feedback.get(mine.id)
                assert (_head(fb) in _text(theirs.comments)) if fb else \
                    not theirs.comments
                lo, hi = _ends(mine)
                assert grades(q, lo) and grades(q, hi) and grades(q, (lo + hi) / 2)
            other = next((a for a in item.answers if a.any_other), None)
            if other is not None and content.feedback.get(other.id):
                assert _head(content.feedback[other.id]) in _text(q.incorrect_comments)
        case ShortAnswer():
            wordings = []
            for a in item.answers:
                if a.fraction != 1:
                    continue
                for w in content.answers.get(a.id, ()):
                    if "*" not in w and w.strip().lower() not in [x.lower() for x in wordings]:
                        wordings.append(w.strip())
            assert [a.text for a in q.answers] == wordings
            for w in wordings:
                assert grades(q, w.upper()) and grades(q, f"  {w} ")
        case Matching():
            pairs = {to_plain(content.premises[p]): to_plain(content.responses[p])
                     for p in item.pairs}
            assert {_seen(a.html): a.right for a in q.answers} == pairs
            assert sorted(t for _, t in q.matches) == sorted(
                to_plain(content.responses[r]) for r in (*item.pairs, *item.distractors))
            assert len({m for m, _ in q.matches}) == len(q.matches)
        case Ordering():
            assert {_seen(a.html): a.right for a in q.answers} == {
                to_plain(content.options[o]): str(n) for n, o in enumerate(item.options, 1)}
        case Essay() | Description():
            assert q.answers == []
        case Cloze():
            for gap in item.gaps:
                assert f"[{gap.id}]" in _text(q.text)
                gc = content.gaps[gap.id]
                mine = [a for a in q.answers if a.blank_id == gap.id]
                if isinstance(gap, ShortAnswerGap):
                    wordings: list[str] = []
                    for ga in gap.answers:
                        for w in gc.answers.get(ga.id, ()) if ga.fraction == 1 else ():
                            if "*" not in w and w.strip().lower() not in [
                                    x.lower() for x in wordings]:
                                wordings.append(w.strip())
                    assert [a.text for a in mine] == wordings
                    assert all(a.weight == 100 for a in mine)
                    for w in wordings:
                        assert grades_blank(q, gap.id, f" {w.upper()} ")
                    assert not grades_blank(q, gap.id, "no such wording at all")
                else:
                    assert isinstance(gap, ChoiceGap)
                    assert [a.text for a in mine] == [to_plain(gc.options[o])
                                                      for o in gap.options]
                    for oid, a in zip(gap.options, mine, strict=True):
                        assert grades_blank(q, gap.id, a.ident) == (oid == gap.key)


def _ends(answer: NumericAnswer) -> tuple[Decimal, Decimal]:
    """The answer's ends as the numbers a student types (decimal: `0.001 + 0.008` is `0.009`,
    where the model's float `bounds` says 0.009000000000000001)."""
    if answer.value is not None:
        v, t = Decimal(repr(answer.value)), Decimal(repr(answer.tolerance))
        return v - t, v + t
    return Decimal(repr(answer.min)), Decimal(repr(answer.max))


def _seen(html: str) -> str:
    """What a student reads in `html`: its text, each equation image as its TeX between
    `\\(` `\\)` (as `to_plain` writes a formula)."""
    root = etree.fromstring(f"<div>{html}</div>", etree.HTMLParser())
    for img in root.xpath("//img[@class='equation_image']"):
        tex = img.get("data-equation-content", "")
        img.tail = f"\\({tex}\\)" + (img.tail or "")
    return " ".join(str(root.xpath("string()")).split())


def _head(source: str) -> str:
    """The start of a text's visible words, up to its first formula (an image in Canvas)."""
    return " ".join(to_plain(source).split("\\(")[0].split("\\[")[0].split())[:20]


def _text(html: str) -> str:
    from canvas_qti12 import lxml_text

    return " ".join(lxml_text(html).split())


@pytest.mark.parametrize("name", ["seed", "kitchen-sink", "maths"])
def test_every_item_reaches_canvas_with_its_type_points_answers_and_feedback(name, qti12_schema):
    collection = _bank(name)
    for lang in collection.languages:
        result = export(collection, lang)
        assert qti12_schema.validate(_assessment(result.data)), qti12_schema.error_log
        questions = read_package(result.data)
        left_out = {i.id for i in collection.items if isinstance(i, Cloze)
                    and canvas.cloze_kind([g.type for g in i.gaps]) is None}
        said = {(w.item, w.message) for w in result.warnings}
        for i in collection.items:
            if i.id in left_out:
                assert (i.id, canvas.cloze_left_out([g.type for g in i.gaps])) in said
        items = [i for i in collection.items if lang in i.text and i.id not in left_out]
        assert [q.ident for q in questions] == [f"{collection.id}__{i.id}-{lang}" for i in items]
        for item, q in zip(items, questions, strict=True):
            assert q.question_type != "Error"
            check_question(item, lang, q)


def test_the_same_bank_gives_the_same_bytes_with_sorted_entries_and_fixed_times():
    ks = _bank("kitchen-sink")
    a, b = export(ks, "en").data, export(ks, "en").data
    assert a == b
    infos = zipfile.ZipFile(io.BytesIO(a)).infolist()
    assert [i.filename for i in infos] == sorted(i.filename for i in infos)
    assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}


def test_images_are_packed_and_named_as_canvas_stores_them():
    data = export(_bank("kitchen-sink"), "en").data
    z = zipfile.ZipFile(io.BytesIO(data))
    assert "web_resources/items/img/hash-table.png" in z.namelist()
    text = etree.tostring(_assessment(data), encoding="unicode")
    assert "$IMS-CC-FILEBASE$/items/img/hash-table.png" in text
    manifest = etree.fromstring(z.read("imsmanifest.xml"))
    hrefs = {f.get("href") for f in manifest.iter("{*}file")}
    assert {n for n in z.namelist() if n.startswith("web_resources/")} <= hrefs


def test_formulas_are_canvas_equation_images_carrying_their_tex():
    from urllib.parse import unquote

    data = export(_bank("maths"), "en").data
    root = _assessment(data)
    images = []
    for t in root.iter("{*}mattext"):
        if t.text and "equation_image" in t.text:
            frag = etree.fromstring(f"<div>{t.text}</div>", etree.HTMLParser())
            images += frag.xpath("//img[@class='equation_image']")
    assert images
    for img in images:
        tex = img.get("data-equation-content")
        assert img.get("alt") == f"LaTeX: {tex}"
        # Canvas decodes the address twice to get the TeX back
        assert unquote(unquote(img.get("src").removeprefix("/equation_images/")
                               .removesuffix("?scale=1"))) == tex


def test_warnings_name_what_canvas_cannot_carry():
    ks = _bank("kitchen-sink")
    said = {(w.item, w.message) for w in export(ks, "en").warnings}
    assert ("ks-load-factor", canvas.UNITS_NOT_GRADED) in said
    assert ("ks-load-factor", canvas.partial_answer_left_out("percent-slip", 0.5)) in said
    assert ("ks-fifo-name", canvas.wildcard_left_out("list*")) in said
    assert ("ks-growth-ordering", canvas.ORDERING_AS_MATCHING) in said
    assert all(w.code == "canvas" for w in export(ks, "en").warnings)


def test_it_is_registered_with_the_other_formats():
    from dpassess.cli.export import EXPORT_FORMATS
    from dpassess.export.runner import FORMAT_DIRS

    assert "canvas" in EXPORTERS and "canvas" in EXPORT_FORMATS
    assert FORMAT_DIRS["canvas"] == "canvas" and EXPORTERS["canvas"].suffix == ".zip"


def _numerical(item_id: str, answer: dict[str, object]) -> Numerical:
    item = parse_item({"schema": 1, "id": item_id, "type": "numerical", "topic": "t",
                       "answers": [{"id": "a", **answer}], "text": {"en": {"stem": "How much?"}}})
    assert isinstance(item, Numerical)
    return item


_DECIMALS = st.decimals(min_value=-10_000, max_value=10_000, places=3, allow_nan=False,
                        allow_infinity=False)


@given(value=_DECIMALS, tol=st.decimals(min_value=0, max_value=100, places=3),
       lo=_DECIMALS, width=st.decimals(min_value=0, max_value=100, places=3))
def test_numbers_canvas_accepts_are_the_numbers_the_bank_accepts(value, tol, lo, width):
    """Through Canvas's reader and grading: an answer's ends and middle are right, a step past
    either end is wrong, for an exact answer with a margin and for a range."""
    items = [_numerical("exact", {"value": float(value), "tolerance": float(tol)}),
             _numerical("range", {"min": float(lo), "max": float(lo + width)})]
    collection = Collection("n", {"en": "N"}, ("en",), items, "n")
    step = Decimal("0.0005")
    for item, q in zip(items, read_package(export(collection, "en").data), strict=True):
        check_question(item, "en", q)
        (a,) = item.answers
        ends = _ends(a)
        assert grades(q, ends[0]) and grades(q, ends[1])
        assert not grades(q, ends[0] - step) and not grades(q, ends[1] + step)


def test_lint_says_in_the_export_s_words_what_canvas_cannot_carry():
    """LM008's findings on the kitchen-sink bank are, message for message, warnings of the
    Canvas export of the language they name (or of every language)."""
    from dpassess.lint.config import LintConfig
    from dpassess.lint.engine import lint_banks

    bank = load_bank(BANKS / "kitchen-sink")
    found = [f for f in lint_banks([bank], LintConfig(select=("LM008",)), jobs=1)
             if f.code == "LM008"]
    collection = Collection.from_bank(bank)
    by_path = {Path(p).name: i for i, p in collection.paths.items()}
    found_items = [by_path[Path(f.path).name] for f in found]
    assert set(found_items) == {"ks-load-factor", "ks-fifo-name", "ks-growth-ordering",
                                "ks-cloze-hash"}
    said = {lang: {(w.item, w.message) for w in export(collection, lang).warnings}
            for lang in collection.languages}
    for f, item_id in zip(found, found_items, strict=True):
        langs = [f.field.split(".")[1]] if f.field.startswith("text.") else list(said)
        for lang in langs:
            assert (item_id, f.message) in said[lang], f


def test_an_item_type_the_export_does_not_know_is_left_out_with_a_warning():
    """A type added to the model before this export writes it (the path a new type takes) is
    never written as a question Canvas would turn into an error: it is left out, and said."""
    from dpassess.export.canvas.items import question
    from dpassess.model import ContentBase, ItemBase, ItemType

    class NewType(ItemBase):
        pass

    item = NewType.model_construct(id="new-one", topic="t", type=ItemType.essay, points=1.0,
                                   text={"en": ContentBase(stem="Read this.")}, stimulus=None,
                                   tags=(), status=None)
    q = question(item, "en", identifier="c__new-one-en")  # type: ignore[arg-type]
    assert q.element is None
    assert [(w.field, w.code) for w in q.warnings] == [("type", "canvas")]
    assert "not exported" in q.warnings[0].message


def _cloze(item_id: str, gaps: list[dict[str, object]], texts: dict[str, object]) -> Cloze:
    stem = "Fill " + " and ".join(f"[[{g['id']}]]" for g in gaps) + "."
    item = parse_item({"schema": 1, "id": item_id, "type": "cloze", "topic": "t", "points": 4,
                       "gaps": gaps, "text": {"en": {"stem": stem, "gaps": texts}}})
    assert isinstance(item, Cloze)
    return item


def test_a_cloze_of_typed_gaps_or_of_drop_downs_is_canvas_s_blanks_question(qti12_schema):
    """All short-answer gaps: fill in multiple blanks, each blank taking its gap's full-point
    wordings; all choice gaps: multiple drop-downs, each blank's right option the key; read back
    by Canvas's reader and graded blank by blank. Unequal gap points are said."""
    typed = _cloze("typed", [
        {"id": "a", "type": "short_answer", "points": 3,
         "answers": [{"id": "x"}, {"id": "y", "fraction": 0.5}]},
        {"id": "b2", "type": "short_answer", "answers": [{"id": "z"}]}],
        {"a": {"answers": {"x": ["Hash table", "hash TABLE", "map*"], "y": ["dict"]},
               "feedback": {"x": "Right."}},
         "b2": {"answers": {"z": ["queue"]}}})
    menus = _cloze("menus", [
        {"id": "m", "type": "choice", "options": ["p", "q"], "key": "q"},
        {"id": "n", "type": "choice", "options": ["r", "s", "t"], "key": "r"}],
        {"m": {"options": {"p": "stack", "q": "queue & co"}, "feedback": {"p": "No: LIFO."}},
         "n": {"options": {"r": "O(1)", "s": "O(n)", "t": "O(log n)"}}})
    described = parse_item({"schema": 1, "id": "intro", "type": "description", "topic": "t",
                            "text": {"en": {"stem": "Read the code below."}}})
    items = [described, typed, menus]
    collection = Collection("c", {"en": "C"}, ("en",), items, "c")
    result = export(collection, "en")
    assert qti12_schema.validate(_assessment(result.data)), qti12_schema.error_log
    questions = read_package(result.data)
    assert [q.question_type for q in questions] == [
        "text_only_question", "fill_in_multiple_blanks_question", "multiple_dropdowns_question"]
    for item, q in zip(items, questions, strict=True):
        check_question(item, "en", q)
    said = {(w.item, w.message) for w in result.warnings}
    assert ("typed", canvas.CLOZE_POINTS_EQUAL) in said
    assert ("menus", canvas.CLOZE_POINTS_EQUAL) not in said
    assert ("typed", canvas.wildcard_left_out("map*")) in said
    assert ("typed", canvas.partial_answer_left_out("y", 0.5)) in said
    assert ("typed", canvas.GAP_FEEDBACK_NOT_CARRIED) in said
    assert ("menus", canvas.GAP_FEEDBACK_NOT_CARRIED) in said
    typed_q = questions[1]
    assert grades_blank(typed_q, "a", "hash table") and not grades_blank(typed_q, "a", "dict")
    assert not grades_blank(typed_q, "b2", "hash table")


def test_a_matching_right_side_with_markup_characters_shows_as_written():
    """Canvas reads a right side as HTML whatever its texttype: `i<n` must not become `i`."""
    item = parse_item({"id": "mm", "type": "matching", "topic": "t", "pairs": ["a", "b"],
                       "text": {"en": {"stem": "Match.", "premises": {"a": "up", "b": "down"},
                                       "responses": {"a": "i<n", "b": "i>0 & x"}}}})
    collection = Collection(id="c", title={"en": "C"}, languages=("en",), items=[item],
                            category="c", default_language="en")
    (q,) = read_package(export(collection, "en").data)
    assert q.matches == [(1, "i<n"), (2, "i>0 & x")]


def test_a_file_of_items_canvas_cannot_take_says_why_not_that_they_lack_text():
    bank = load_bank(BANKS / "kitchen-sink")
    cloze = next(it for it in bank.items if it.id == "ks-cloze-hash")  # mixed gap kinds
    collection = Collection(id="c", title={"en": "C"}, languages=("en",), items=[cloze],
                            category="c", default_language="en")
    with pytest.raises(UsageError) as caught:
        export(collection, "en")
    message = str(caught.value)
    assert "Canvas can take none of the items" in message and "ks-cloze-hash" in message
    assert "text" not in message.split("(")[0]  # not "no item has 'en' text"
