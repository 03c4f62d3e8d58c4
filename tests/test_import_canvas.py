"""`dpassess import --from canvas`, checked by things outside its code: round trips bank ->
`export -f canvas` -> import -> bank for random items of every type Canvas carries
(tests/strategies.py), each also read by the port of Canvas's own reader (tests/canvas_qti12.py),
which must agree with what the importer read; and a course export written by hand in the shape
Canvas's exporter writes (tests/fixtures/canvas/course-export: the layout and each question's
XML follow canvas-lms `lib/cc/qti/qti_generator.rb` and `qti_items.rb`; numbers as Ruby's
`to_f` writes them, answer ids as Canvas's numeric ids)."""

from __future__ import annotations

import io
import zipfile
from decimal import Decimal
from pathlib import Path

import lxml.html
import pytest
from hypothesis import Phase, assume, given, settings
from hypothesis import strategies as st

from canvas_qti12 import Question, lxml_text, read_package
from conftest import SEED_BANK
from dpassess import load_bank
from dpassess.cli import main
from dpassess.diagnostics import Diagnostic
from dpassess.export import Collection
from dpassess.export.canvas.qti12 import export
from dpassess.export.canvas.richtext import canvas_html
from dpassess.export.qti.package import zip_bytes
from dpassess.importers import InputError, NoLanguage, guess_format, import_file
from dpassess.importers import canvas as reader
from dpassess.lms import canvas as lms
from dpassess.markup.markdown import item_title, to_html, to_inline_html, to_plain
from dpassess.model import (
    ChoiceGap,
    Cloze,
    Description,
    Essay,
    Item,
    Matching,
    MultipleResponse,
    Numerical,
    ShortAnswer,
    ShortAnswerGap,
    SingleChoice,
    TrueFalse,
    parse_item,
)
from strategies import (
    CHOICE_TYPES,
    LANGS,
    cloze_items,
    essay_items,
    items,
    matching_items,
    numerical_items,
    short_answer_items,
)
from test_import_roundtrip import same

FIXTURES = Path(__file__).parent / "fixtures" / "canvas"
BANKS = Path(__file__).parent / "banks"


def collection(its: list[Item]) -> Collection:
    return Collection(id="test-bank", title={la: f"Bank {la}" for la in LANGS}, languages=LANGS,
                      items=its, category="test-bank", default_language=LANGS[0])


def block(md: str | None) -> bytes:
    return same(to_html(md or ""))


def inline(md: str) -> bytes:
    return same(to_inline_html(md))


def plain(md: str) -> str:
    return " ".join(to_plain(md).split())


#: What an export warning says when a text is not written as it is (then the round trip cannot
#: keep it, and the test draws another item).
LOSSY = ("characters XML cannot carry", "dropped: the link is not allowed")


def lossy(warnings: list[Diagnostic]) -> bool:
    return any(any(s in w.message for s in LOSSY) for w in warnings)


def view(item: Item, lang: str) -> dict:
    """The fields of `item` a Canvas package carries, by meaning (docs/import.md): answers by
    position (Canvas keeps no answer ids), only fully right answers (the export warns and leaves
    out the others), no wildcard wordings, no units, no gap feedback or gap points."""
    c = item.text[lang]
    out: dict = {"id": item.id, "type": item.type, "title": " ".join(
        item_title(item, lang).split()) or item.id, "stem": block(c.stem),
        "explanation": block(c.explanation)}
    if not isinstance(item, Description):
        out["points"] = item.points
    match item:
        case SingleChoice() | MultipleResponse() | TrueFalse():
            out["options"] = [o.id for o in item.options]
            out["key"] = sorted(item.key)
            out["texts"] = [inline(item.option_text(lang, o.id)) for o in item.options]
            out["feedback"] = {o: block(f) for o, f in c.feedback.items()}
        case Numerical():
            out["answers"] = [((a.value, a.tolerance) if a.value is not None else (a.min, a.max),
                               block(c.feedback.get(a.id)))
                              for a in item.answers if a.fraction == 1 and not a.any_other]
            out["other"] = [block(c.feedback.get(a.id)) for a in item.answers
                            if a.any_other and c.feedback.get(a.id)]
        case ShortAnswer():
            seen: set[str] = set()
            answers = []
            for a in item.answers:
                if a.fraction != 1:
                    continue
                kept = []
                for w in c.answers[a.id]:
                    if "*" not in w and w.strip().lower() not in seen:
                        seen.add(w.strip().lower())
                        kept.append(w.strip())
                if kept:
                    answers.append((kept, block(c.feedback.get(a.id))))
            out["answers"] = answers
        case Matching():
            out["pairs"] = [(p, inline(c.premises[p]), plain(c.responses[p])) for p in item.pairs]
            out["distractors"] = [plain(c.responses[d]) for d in item.distractors]
        case Essay() | Description():
            pass
        case Cloze():
            gaps = []
            for g in item.gaps:
                gc = c.gaps.get(g.id)
                if isinstance(g, ShortAnswerGap):
                    words: list[str] = []
                    for a in g.answers:
                        for w in (gc.answers.get(a.id, ()) if gc and a.fraction == 1 else ()):
                            if w.strip().lower() not in {x.lower() for x in words}:
                                words.append(w.strip())
                    gaps.append((g.id, words))
                else:
                    assert isinstance(g, ChoiceGap)
                    texts = [plain(gc.options.get(o, "")) if gc else "" for o in g.options]
                    gaps.append((g.id, texts, g.options.index(g.key)))
            out["gaps"] = gaps
        case _:
            raise AssertionError(item.type)
    return out


# --- the importer agrees with Canvas's own reader ----------------------------------------------


def html_text(html: str) -> str:
    return " ".join(lxml_text(html).split())


def canvas_text(md: str) -> str:
    """The visible text of `md` as Canvas shows it (formulas are images: no text)."""
    return html_text(canvas_html(md))


def agrees(q: Question, item: Item) -> None:
    """What Canvas makes of the question (tests/canvas_qti12.py) is what the importer read:
    its type, points, right answers, margins and ranges, wordings, pairs and blanks."""
    lang = next(iter(item.text))
    c = item.text[lang]
    assert q.question_type != "Error", q.import_error
    if not isinstance(item, Description):
        assert q.points == item.points
    match item:
        case TrueFalse():
            assert q.question_type in ("true_false_question", "multiple_choice_question")
            right = [html_text(a.html) for a in q.answers if a.weight]
            assert right == [canvas_text(item.option_text(lang, item.key[0]))]
        case SingleChoice() | MultipleResponse():
            assert q.question_type == ("multiple_answers_question"
                                       if isinstance(item, MultipleResponse)
                                       else "multiple_choice_question")
            right = sorted(html_text(a.html) for a in q.answers if a.weight)
            assert right == sorted(canvas_text(item.option_text(lang, k)) for k in item.key)
            assert [html_text(a.html) for a in q.answers] == [
                canvas_text(item.option_text(lang, o.id)) for o in item.options]
        case Numerical():
            assert q.question_type == "numerical_question"
            theirs = []
            for a in q.answers:
                if a.kind == "exact_answer":
                    theirs.append(("value", a.exact, a.margin or 0.0))
                elif a.kind == "range_answer":
                    theirs.append(("range", a.start, a.end))
                else:
                    theirs.append(("precision",))
            ours = [("value", a.value, a.tolerance) if a.value is not None
                    else ("range", a.min, a.max) for a in item.answers if not a.any_other]
            assert len(theirs) == len(ours)
            assert [t for t, o in zip(theirs, ours, strict=True) if t != ("precision",)] == [
                o for t, o in zip(theirs, ours, strict=True) if t != ("precision",)]
        case ShortAnswer():
            assert q.question_type == "short_answer_question"
            assert {a.text.lower() for a in q.answers} == {
                w.lower() for ws in c.answers.values() for w in ws}
        case Matching():
            assert q.question_type == "matching_question"
            # Canvas reads a right side's text as HTML: the export escapes it, so `i<n` shows
            shown = lambda md: " ".join(plain(md).split())  # noqa: E731
            assert [(html_text(a.html), a.right) for a in q.answers] == [
                (canvas_text(c.premises[p]), shown(c.responses[p])) for p in item.pairs]
            used = {a.match_id for a in q.answers}
            assert [t for m, t in q.matches if m not in used] == [
                shown(c.responses[d]) for d in item.distractors]
        case Essay():
            assert q.question_type == "essay_question"
        case Description():
            assert q.question_type == "text_only_question"
        case Cloze():
            kinds = {g.type for g in item.gaps}
            assert q.question_type == ("fill_in_multiple_blanks_question"
                                       if kinds == {"short_answer"}
                                       else "multiple_dropdowns_question")
            for g in item.gaps:
                gc = c.gaps[g.id]
                right = sorted(a.text.lower() for a in q.answers
                               if a.blank_id == g.id and a.weight)
                if isinstance(g, ShortAnswerGap):
                    assert right == sorted(w.lower() for ws in gc.answers.values() for w in ws)
                else:
                    assert isinstance(g, ChoiceGap)
                    assert right == [plain(gc.options[g.key]).lower()]
        case _:
            raise AssertionError(item.type)


# --- round trips -------------------------------------------------------------------------------


def texts(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in texts(v)]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in texts(v)]
    return []


def parses_back(md: str) -> bool:
    """Whether the HTML `md` renders to is HTML a parser reads back as it is (Markdown passes
    raw HTML through, `</p> x` included, which no LMS keeps as written)."""
    html = to_html(md)
    if not html.strip():
        return True
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    return same(lxml.html.tostring(root, encoding="unicode")[5:-6]) == same(html)


def round_trip(item: Item, lang: str, *, drawn: bool = True) -> Item:
    """`drawn`: a hypothesis example (one the round trip cannot keep is left out); else a
    hand-written item, which must round-trip."""
    result = export(collection([item]), lang)
    keeps = not lossy(result.warnings) and all(parses_back(t)
                                               for t in texts(item.text[lang].model_dump()))
    if drawn:
        assume(keeps)
    assert keeps
    imported = reader.read(result.data, "export.zip", lang)
    assert imported.skipped == [], [str(s) for s in imported.skipped]
    [back] = imported.items
    assert view(back, lang) == view(item, lang)
    [question] = read_package(result.data)
    agrees(question, back)
    return back


#: Examples are reported as drawn (a failure of these large items shrank for minutes).
NO_SHRINK = settings(phases=[Phase.explicit, Phase.reuse, Phase.generate])
STRATEGIES = {"numerical": numerical_items, "short_answer": short_answer_items,
              "matching": matching_items, "essay": essay_items}


@pytest.mark.parametrize("kind", [t.value for t in CHOICE_TYPES])
@given(data=st.data())
@NO_SHRINK
def test_choice_round_trip(kind, data):
    lang = data.draw(st.sampled_from(LANGS))
    item = data.draw(items((lang,), types=(next(t for t in CHOICE_TYPES if t.value == kind),)))
    round_trip(item, lang)


@pytest.mark.parametrize("kind", sorted(STRATEGIES))
@given(data=st.data())
@NO_SHRINK
def test_round_trip(kind, data):
    lang = data.draw(st.sampled_from(LANGS))
    round_trip(data.draw(STRATEGIES[kind]((lang,))), lang)


@given(data=st.data())
@NO_SHRINK
def test_cloze_round_trip(data):
    """A cloze of typed blanks or of drop-downs (the two Canvas has; drawn as such: filtering
    the clozes of any gaps rejected too many)."""
    lang = data.draw(st.sampled_from(LANGS))
    kind = data.draw(st.sampled_from(["short_answer", "choice"]))
    item = data.draw(cloze_items((lang,), gap_kinds=(kind,)))
    assert lms.cloze_kind([g.type for g in item.gaps]) is not None
    round_trip(item, lang)


def test_description_round_trip():
    item = parse_item({"id": "intro", "type": "description", "topic": "t",
                       "text": {"en": {"stem": "Read **this** first: $x^2$."}}})
    back = round_trip(item, "en", drawn=False)
    assert back.text["en"].stem == "Read **this** first: $x^2$."


def test_numbers_come_back_exactly():
    """Margins and ranges are read in decimal arithmetic, so 0.1 + 0.2 stays 0.1 ± 0.2."""
    item = parse_item({"id": "num", "type": "numerical", "topic": "t", "answers": [
        {"id": "a", "value": 0.1, "tolerance": 0.2}, {"id": "b", "min": 0.3, "max": 0.7}],
        "text": {"en": {"stem": "x?"}}})
    back = round_trip(item, "en", drawn=False)
    assert isinstance(back, Numerical)
    assert [(a.value, a.tolerance, a.min, a.max) for a in back.answers] == [
        (0.1, 0.2, None, None), (None, 0.0, 0.3, 0.7)]


def test_what_canvas_cannot_carry_is_warned_on_export_and_gone_after_import():
    """Partial answers, wildcards and units: the export warns, and the item comes back without
    them (and nothing else lost)."""
    item = parse_item({
        "id": "sa", "type": "short_answer", "topic": "t", "case_sensitive": True,
        "answers": [{"id": "a"}, {"id": "b", "fraction": 0.5}],
        "text": {"en": {"stem": "Name it.", "answers": {"a": ["queue", "qu*"], "b": ["list"]}}}})
    result = export(collection([item]), "en")
    said = " ".join(w.message for w in result.warnings)
    assert "wildcard" in said and "full points" in said and "ignores case" in said
    [back] = reader.read(result.data, "x.zip", "en").items
    assert isinstance(back, ShortAnswer)
    assert [back.text["en"].answers[a.id] for a in back.answers] == [("queue",)]
    assert back.case_sensitive is False


# --- a course export in Canvas's own shape -----------------------------------------------------


def fixture_zip(folder: str = "course-export") -> bytes:
    root = FIXTURES / folder
    return zip_bytes({p.relative_to(root).as_posix(): p.read_bytes()
                      for p in sorted(root.rglob("*")) if p.is_file()})


@pytest.fixture(scope="module")
def course() -> reader.ImportResult:
    return reader.read(fixture_zip(), "quiz.zip", "en")


def by_id(result) -> dict[str, Item]:
    return {i.id: i for i in result.items}


def test_course_export_reads_every_type(course):
    got = {i.id: i.type.value for i in course.items}
    assert got == {
        "hash-lookup": "single_choice", "g22222222222222222222222222222222": "true_false",
        "stable-sorts": "multiple_response", "load-factor": "numerical",
        "fifo-name": "short_answer", "traversal-match": "matching", "amortized-cost": "essay",
        "read-this-first": "description", "colours": "cloze", "array-size": "cloze",
        "heap-order": "single_choice"}
    # the Common Cartridge copy of the quiz is not read: its full copy is
    assert all("Common Cartridge" not in i.text["en"].stem for i in course.items)


def test_types_the_bank_cannot_hold_are_skipped_once_each_with_file_and_line(course):
    skipped = [(s.path, s.line, s.item) for s in course.skipped]
    where = "quiz.zip:non_cc_assessments/gb1a2c3d4e5f60718293a4b5c6d7e8f90.xml.qti"
    assert skipped == [(where, 14, "g" + "11" * 16), (where, 15, "g" + "12" * 16)]
    assert "calculated" in course.skipped[0].message
    assert "file upload" in course.skipped[1].message
    assert not any(w.item in ("g" + "11" * 16, "g" + "12" * 16) for w in course.warnings)


def test_choice_feedback_points_maths_and_files(course):
    item = by_id(course)["hash-lookup"]
    assert isinstance(item, SingleChoice)
    c = item.text["en"]
    assert item.points == 2.0 and item.key == ("a",)
    assert c.title == "Hash lookup"
    assert c.stem == ("What does a lookup cost in a hash table with load factor $\\alpha$?\n\n"
                      "![growth chart](img/hash-lookup/growth%20chart.png)")
    # its own feedback, else the question's correct / incorrect comments
    assert c.feedback == {"a": "Right.", "b": "That is the worst case.",
                          "c": "Think of the average chain."}
    assert c.explanation == "Chaining keeps chains short."
    png = (FIXTURES / "course-export" / "web_resources" / "Uploaded Media" / "growth chart.png")
    assert course.files == {"img/hash-lookup/growth chart.png": png.read_bytes()}


def test_numerical_answers_as_canvas_writes_them(course):
    item = by_id(course)["load-factor"]
    assert isinstance(item, Numerical)
    got = [(a.value, a.tolerance, a.min, a.max, a.any_other) for a in item.answers]
    assert got == [(0.75, 0.005, None, None, False),  # exact with a margin (an or: = or within)
                   (None, 0.0, 74.0, 76.0, False),  # a range (the bare tests)
                   (0.751, 0.0005, None, None, False),  # a precision answer: 3 digits
                   (None, 0.0, None, None, True)]  # the incorrect comments: any other number
    assert item.text["en"].feedback == {"a1": "Right: 6/8.", "a4": "Divide keys by slots."}
    assert any("precision answer" in w.message for w in course.warnings)


def test_short_answer_every_wording_with_its_feedback(course):
    item = by_id(course)["fifo-name"]
    assert isinstance(item, ShortAnswer)
    c = item.text["en"]
    assert [c.answers[a.id] for a in item.answers] == [("queue",), ("FIFO queue",)]
    assert c.feedback == {"b": "Yes, or just a queue."}


def test_matching_pairs_and_distractors(course):
    item = by_id(course)["traversal-match"]
    assert isinstance(item, Matching)
    c = item.text["en"]
    assert [(c.premises[p], c.responses[p]) for p in item.pairs] == [("BFS", "Queue"),
                                                                      ("DFS", "Stack")]
    assert [c.responses[d] for d in item.distractors] == ["Heap"]


def test_blanks_become_cloze_gaps(course):
    fib, drop = by_id(course)["colours"], by_id(course)["array-size"]
    assert isinstance(fib, Cloze) and isinstance(drop, Cloze)
    assert fib.text["en"].stem == "Roses are [[color1]], violets are [[color2]]."
    assert fib.text["en"].gaps["color1"].answers == {"a": ("red", "crimson")}
    assert drop.text["en"].stem == "The [[size]] of an array is its number of elements."
    gap = drop.gaps[0]
    assert isinstance(gap, ChoiceGap) and gap.key == "a"
    assert drop.text["en"].gaps["size"].options == {"a": "length", "b": "width"}


def test_bank_questions_are_read_once_and_topics_name_the_quiz_or_bank(course):
    assert by_id(course)["heap-order"].topic == "sorting-bank"
    assert by_id(course)["hash-lookup"].topic == "week-3-quiz"
    assert sum(1 for i in course.items if i.id.startswith("heap-order")) == 1
    assert any("copies of question bank questions" in w.message for w in course.warnings)


def test_course_export_agrees_with_canvas_reader(course):
    """Each question the importer read is what Canvas's reader makes of the same XML."""
    data = fixture_zip()
    z = zipfile.ZipFile(io.BytesIO(data))
    from lxml import etree

    from canvas_qti12 import read_item
    questions = {}
    for name in z.namelist():
        if name.endswith(".xml.qti"):
            for el in etree.fromstring(z.read(name)).iter("{*}item"):
                q = read_item(el)
                questions.setdefault(q.title, q)
    for item in course.items:
        title = item.text["en"].title or ""
        q = questions[title] if title else questions["Question"]
        agrees(q, item)


# --- the package, the format guess, the command line ------------------------------------------


def test_guess_tells_a_canvas_zip_from_a_qti21_package():
    bank = Collection.from_bank(load_bank(SEED_BANK))
    from dpassess.export import EXPORTERS

    assert guess_format(export(bank, "en").data) == "canvas"
    assert guess_format(fixture_zip()) == "canvas"
    assert guess_format(EXPORTERS["qti21"].export(bank, "en").data) == "qti21"
    assert guess_format(b"<?xml version='1.0'?><questestinterop/>") == "canvas"


def test_a_qti21_package_read_as_canvas_is_refused(tmp_path):
    from dpassess.export import EXPORTERS

    bank = Collection.from_bank(load_bank(SEED_BANK))
    path = tmp_path / "qti.zip"
    path.write_bytes(EXPORTERS["qti21"].export(bank, "en").data)
    with pytest.raises(InputError, match="looks like qti21"):
        import_file(path, "canvas", lang="en")


def test_language_is_required():
    with pytest.raises(NoLanguage):
        reader.read(fixture_zip(), "quiz.zip", None)


@pytest.mark.parametrize(("files", "message"), [
    ({"imsmanifest.xml": b"<manifest/>"}, "no QTI 1.2 quiz"),
    ({"a.xml.qti": b"<questestinterop><item ident='x'>"}, r"a\.xml\.qti:1:\d+: invalid XML"),
    ({"a.xml.qti": b"<assessmentItem/>"}, "not a QTI 1.2 document"),
    ({"imsmanifest.xml": b"<manifest><resources><resource type='imsqti_xmlv1p2'><file "
                         b"href='../x.xml'/></resource></resources></manifest>"}, "outside"),
])
def test_broken_packages_are_clear_errors(files, message):
    with pytest.raises(InputError, match=message):
        reader.read(zip_bytes(files), "quiz.zip", "en")


def test_a_broken_question_is_skipped_with_its_line():
    doc = (b"<questestinterop><assessment ident='q' title='Q'><section ident='s'>\n"
           b"<item ident='i1' title='Bad'><itemmetadata><qtimetadata><qtimetadatafield>"
           b"<fieldlabel>question_type</fieldlabel><fieldentry>numerical_question</fieldentry>"
           b"</qtimetadatafield></qtimetadata></itemmetadata><presentation/><resprocessing>"
           b"<respcondition><conditionvar><varequal respident='response1'>abc</varequal>"
           b"</conditionvar><setvar action='Set' varname='SCORE'>100</setvar></respcondition>"
           b"</resprocessing></item></section></assessment></questestinterop>")
    result = reader.read(doc, "quiz.xml", "en")
    [skip] = result.skipped
    assert (skip.path, skip.line, skip.item) == ("quiz.xml", 2, "i1")
    assert "not a number" in skip.message


def run(argv: list[str], capsys) -> tuple[int, str]:
    """`dpassess argv` as a user runs it (errors become a line and an exit code)."""
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out + out.err


def test_cli_imports_a_canvas_zip(tmp_path, capsys):
    path = tmp_path / "quiz.zip"
    path.write_bytes(fixture_zip())
    bank = tmp_path / "bank"
    code, out = run(["import", str(path), "--from", "canvas", "--lang", "en", "--bank",
                     str(bank)], capsys)
    assert code == 0, out
    assert "11 imported, 2 skipped" in out
    assert (bank / "img" / "hash-lookup" / "growth chart.png").exists()
    assert len(load_bank(bank).items) == 11
    code, out = run(["import", str(path), "--from", "canvas", "--bank", str(tmp_path / "b2")],
                    capsys)
    assert code == 2 and "--lang" in out


@pytest.mark.parametrize("cut", [500, 3000])
def test_cli_broken_zip_is_a_usage_error(tmp_path, capsys, cut):
    broken = tmp_path / "broken.zip"
    broken.write_bytes(fixture_zip()[:cut])
    code, out = run(["import", str(broken), "--from", "canvas", "--lang", "en", "--bank",
                     str(tmp_path / "b3")], capsys)
    assert code == 2, out
    assert str(broken) in out and "internal error" not in out


@pytest.mark.parametrize("name", ["kitchen-sink", "maths", "seed"])
def test_banks_come_back(name):
    """Every question the export writes comes back, of the type Canvas has for it, with the
    points and right answers the export wrote (the fields lost are listed in docs/import.md)."""
    bank = Collection.from_bank(load_bank(SEED_BANK if name == "seed" else BANKS / name))
    for lang in bank.languages:
        data = export(bank, lang).data
        result = reader.read(data, "x.zip", lang)
        questions = read_package(data)
        assert result.skipped == []
        assert len(result.items) == len(questions)
        for q, item in zip(questions, result.items, strict=True):
            agrees(q, item)


def test_decimal_margins_are_exact():
    assert float(Decimal("0.755") - Decimal("0.75")) == 0.005


def test_a_group_drawn_from_a_bank_not_in_the_package_is_reported():
    """Canvas's quiz export writes a question group drawn from a bank as a `section` whose
    `selection` names the bank (`sourcebank_ref`), without its questions."""
    doc = (b"<questestinterop xmlns='http://www.imsglobal.org/xsd/ims_qtiasiv1p2'><assessment "
           b"ident='q' title='Q'><section ident='root_section'><section ident='g' title='G'>"
           b"<selection_ordering><selection><sourcebank_ref>b404</sourcebank_ref>"
           b"<selection_number>2</selection_number></selection></selection_ordering></section>"
           b"</section></assessment></questestinterop>")
    result = reader.read(zip_bytes({"q/q.xml": doc}), "quiz.zip", "en")
    assert result.items == []
    assert ["not in the package" in w.message for w in result.warnings] == [True]


def test_a_shared_stimulus_comes_back_above_the_stem():
    """The export repeats a stimulus in each stem inside `<div class="stimulus">`; the import
    keeps its content as Markdown above the stem (the bank's stimulus file is not rebuilt)."""
    bank = Collection.from_bank(load_bank(BANKS / "kitchen-sink"))
    result = reader.read(export(bank, "en").data, "x.zip", "en")
    item = by_id(result)["ks-probe-next"]
    stem = item.text["en"].stem
    assert stem.startswith("### Linear probing results\n\n")
    assert stem.endswith("In which slot will key 31 be stored?")
    assert "stimulus" not in stem


def test_new_quizzes_ordering_numerical_and_categorization():
    """Questions in the shape New Quizzes' QTI export writes them (an ordered response with the
    right order as the scoring condition's `varequal`s; a margin in percent written as
    `varequal` beside its bounds, no `<or>`): the ordering is an ordering item graded all or
    nothing, the margin the range of its bounds; categorization is skipped."""
    path = FIXTURES / "new-quizzes" / "items.xml.qti"
    result = reader.read(path.read_bytes(), "items.xml.qti", "en")
    order, number = result.items
    from dpassess.model import Ordering

    assert isinstance(order, Ordering)
    c = order.text["en"]
    assert [c.options[o] for o in order.options] == ["subtract 1", "divide by 2", "check $x = 3$"]
    assert order.grading == "all_or_nothing"
    assert c.stem == "Put the steps of solving 2x + 1 = 7 in order.\n\nFirst step on top."
    assert isinstance(number, Numerical)
    assert [(a.min, a.max) for a in number.answers] == [(4.95, 5.05)]
    [skip] = result.skipped
    assert "categorization_question" in skip.message and skip.line > 0
