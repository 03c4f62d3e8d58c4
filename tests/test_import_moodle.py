"""Files in the shape Moodle's own exporters write (question/format/xml/format.php and
question/format/gift/format.php, Moodle 4.5), written by hand under tests/fixtures/moodle/:
what each question becomes, what is skipped and why, what is warned about; and the CLI."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

from conftest import dpassess as in_process
from dpassess.bank.load import load_banks
from dpassess.diagnostics import Severity
from dpassess.importers import NoLanguage, import_file
from dpassess.importers.gift import read as read_gift
from dpassess.importers.moodle_text import category_topic, select

FIXTURES = Path(__file__).parent / "fixtures" / "moodle"
XML = FIXTURES / "questions.xml"
GIFT = FIXTURES / "questions.gift.txt"


def test_moodle_xml_export():
    r = import_file(XML, "moodle-xml", lang="en")
    where = str(XML)
    assert r.skipped == []
    assert {(d.severity, d.code, d.path) for d in r.skipped + r.warnings} == {
        (Severity.warning, "moodle-xml", where)}
    holds, collectives, averaged, operation, cloze, partial = r.items
    assert cloze.type.value == "cloze" and cloze.text["en"].stem == "[[g1]]"
    assert cloze.text["en"].gaps["g1"].answers == {"a": ("all-reduce",)}
    # partial credit in a single-answer question, as Moodle saves it: the 100% answer is the
    # key, the other earns its grade
    assert partial.type.value == "single_choice" and partial.key == ("a",)
    assert partial.fractions() == {"a": 1.0, "b": 0.5}
    assert operation.type.value == "short_answer" and operation.id == "name-the-operation"
    assert not operation.case_sensitive and [(a.id, a.fraction) for a in operation.answers] == [
        ("a", 1.0)]
    assert operation.text["en"].answers == {"a": ("all-reduce",)}
    assert operation.text["en"].stem == "Which collective averages gradients?"
    assert holds.id == "dp-gpu-holds"
    assert holds.topic == "week-1-parallelism"  # "$course$/top/Default for CS101/" dropped
    assert holds.points == 2 and holds.shuffle and holds.key == ("a",)
    assert holds.tags == ("data-parallelism", "ddp")
    en = holds.text["en"]
    assert en.title == "What each GPU holds"
    assert en.options == {"a": "A full copy of the model", "b": "A slice of the layers",
                          "c": "Only the optimizer state"}
    assert en.feedback == {"a": "Right: every GPU keeps a replica.",
                           "b": "That is pipeline parallelism."}
    assert en.explanation == "The model is replicated; the batch is split."
    assert "<b>data parallelism</b>" in en.stem  # editor HTML with attributes stays HTML

    # multilang spans give the languages
    assert collectives.id == "collectives" and collectives.languages == ("en", "id")
    assert collectives.type.value == "multiple_response" and not collectives.shuffle
    assert collectives.key == ("a", "b")
    assert collectives.weights is None  # 50/50/-100 is the default partial credit
    assert collectives.fractions() == {"a": 0.5, "b": 0.5, "c": -1.0}
    assert collectives.text["id"].title == "Operasi kolektif"
    assert collectives.text["id"].options["c"] == "Backward pass (lintasan mundur)"
    assert collectives.text["en"].feedback == {"c": "A computation, not a communication."}

    # moodle_auto_format: a newline is a line break; an idnumber that is no id is slugged
    assert averaged.id == "q-1-3" and averaged.type.value == "true_false"
    assert averaged.key == ("true",)
    assert averaged.text["en"].stem == "In DDP the gradients are averaged\\\nacross GPUs."
    assert averaged.text["en"].feedback == {"true": "Yes: all-reduce, then divide."}
    holds_at = f"{where}:15: moodle-xml: What each GPU holds"
    assert [str(w) for w in r.warnings] == [
        f"{holds_at}: <correctfeedback> is not carried (the model has per-option feedback and "
        "an explanation)",
        f"{holds_at}: <partiallycorrectfeedback> is not carried (the model has per-option "
        "feedback and an explanation)",
        f"{holds_at}: <incorrectfeedback> is not carried (the model has per-option feedback "
        "and an explanation)",
        f"{holds_at}: 1 hint(s) not carried",
        f"{where}:121: moodle-xml: Gradients are averaged: idnumber 'Q 1.3' is not an item id; "
        "using 'q-1-3'",
        f"{where}: moodle-xml: tag 'Data Parallelism' written as 'data-parallelism'",
    ]


def test_gift_export():
    r = import_file(GIFT, "gift", lang="en")
    assert r.skipped == []
    assert r.summary() == "10 imported, 0 skipped"
    holds, collectives, averaged, operation, match, year, essay, intro, missing, escapes = r.items
    assert intro.type.value == "description"
    assert intro.text["en"].stem == "The following questions are about data parallelism."
    xml_operation = next(i for i in import_file(XML, "moodle-xml", lang="en").items
                         if i.id == "name-the-operation")
    assert operation.answers == xml_operation.answers
    assert operation.text == xml_operation.text  # `#` with nothing after it: no feedback
    assert match.type.value == "matching" and match.pairs == ("a", "b") and not match.distractors
    assert match.text["en"].premises == {"a": "All-reduce", "b": "Broadcast"}
    assert match.text["en"].responses == {"a": "sum everywhere", "b": "one to all"}
    assert year.type.value == "numerical"
    assert [(a.value, a.tolerance, a.fraction) for a in year.answers] == [(2016, 1, 1)]
    assert essay.type.value == "essay" and essay.response_format == "editor"
    assert (essay.lines, essay.response_required) == (15, True)  # Moodle's GIFT defaults
    xml = {i.id: i for i in import_file(XML, "moodle-xml", lang="en").items}
    # the same questions exported both ways give the same items (GIFT has no points/shuffle)
    assert holds.text == xml["dp-gpu-holds"].text | {
        "en": xml["dp-gpu-holds"].text["en"].model_copy(update={
            "stem": "In <b>data parallelism</b>, what does each GPU hold?"})}
    assert (holds.topic, holds.tags, holds.key) == ("week-1-parallelism",
                                                     ("data-parallelism", "ddp"), ("a",))
    assert collectives.weights is None and collectives.key == ("a", "b")
    assert averaged.text["en"] == xml["q-1-3"].text["en"]
    # missing-word format: a cloze item whose one gap is where the answers were; no title
    assert missing.text["en"].stem == "Data parallelism replicates the [[g1]] on every GPU."
    assert missing.text["en"].title is None
    assert missing.gaps[0].key == "a" and missing.text["en"].gaps["g1"].options["a"] == "model"
    # escapes: \: \{ \} \= \# \~ and \n
    assert escapes.text["en"].title == "Escapes : and {braces}"
    assert escapes.text["en"].stem == "What does 1 = 1 mean in C#?"
    assert escapes.text["en"].feedback == {"a": "~ no"}
    assert escapes.key == ("b",)


@pytest.mark.parametrize(("text", "reason"), [
    ("Q{=a ~%-50%b}", "negative credit in a single-answer question"),
    ("Q{~%50%a ~%50%b ~%-200%c}", "answer grade -200% is outside -100%..100%"),
    ("Q{~%0%a ~%0%b}", "no answer earns credit"),
    ("Q{~a}", "at least two answers"),
    ("Q{=a ~b", "missing } around the answers"),
    ("Q}{=a ~b}", "} comes before {"),
    ("$CATEGORY: a\n::q::Q{=a ~b}", "text after $CATEGORY: in the same block"),
    ("Q{#=eight}", "'eight' is not a number (Moodle 4.5 would import it as 'any answer "
                   "is right')"),
    ("Q{#=1:-1}", "tolerance -1 is below 0"),
    ("Q{#=5..1}", "the range 5..1 is empty"),
    ("Q{#=%50%1 =%20%2}", "no answer is worth 100%"),
    ("Q{=%50%Paris =%10%Lyon}", "no answer is worth 100%"),
    ("Q{=a -> 1}", "at least two pairs"),
    ("Q{=a -> 1 =-> 2}", "at least two pairs (this one has 1)"),
    ("Q{=a -> 1 =b}", "matching answer 'b' has no '->'"),
])
def test_gift_questions_moodle_refuses_or_the_model_cannot_hold(text, reason):
    r = read_gift(text.encode(), "q.txt", "en")
    assert len(r.skipped) == 1 and reason in r.skipped[0].message, r.skipped
    assert (r.skipped[0].path, r.skipped[0].line, r.skipped[0].code) == ("q.txt", 1, "gift")


def test_gift_follows_moodles_parser_quirks():
    text = (
        "// comment only\n\n"
        "::T::[markdown]**Bold** stem{\n~%33.33333%[html]<i>a</i>#fb a\n~%33.33333%b\n"
        "~%33.33333%c\n~%-100%d\n####[plain]Look: 1 < 2\n}\n"
        "\n0\n"  # a line holding "0" ends a question, as PHP's empty("0") is true
        "::F::Is it?{F#wrong\\#1#right}\n"
    )
    r = read_gift(text.encode(), "q.txt", "en")
    assert r.skipped == []
    weighted, tf = r.items
    en = weighted.text["en"]
    assert en.stem == "**Bold** stem"  # [markdown] is kept as written
    assert en.options["a"] == "<i>a</i>" and en.feedback == {"a": "fb a"}  # [html]
    assert en.explanation == "Look: 1 < 2"  # [plain]
    assert weighted.weights is None  # 1/3 each right, -1 for the one wrong: the default
    assert tf.key == ("false",) and tf.text["en"].feedback == {"false": "right",
                                                                 "true": "wrong#1"}


def test_gift_without_language_needs_lang():
    with pytest.raises(NoLanguage, match=r"^q\.txt:1: the text has no language spans, so its "
                                         r"language must be given$"):
        read_gift(b"Q{=a ~b}", "q.txt", None)


def test_ids_stay_unique_in_file_order():
    r = read_gift(b"// [id:same]\nA{=a ~b}\n\n// [id:same]\nB{=a ~b}\n", "q.txt", "en")
    assert [i.id for i in r.items] == ["same", "same-2"]
    assert [str(w) for w in r.warnings] == [
        "q.txt:4: gift: id 'same' is used by an earlier question; this one is 'same-2'"]


@pytest.mark.parametrize(("path", "topic"), [
    ("$course$/top/Default for CS101/Week 1/Part A", "week-1/part-a"),
    ("$course$/Default for CS101/Sub", "sub"),  # Moodle before 3.5: no "top"
    ("$course$/top/Default for CS101", "default-for-cs101"),
    ("$system$/top/Bank//with slash", "bank-with-slash"),
    ("Chapter 1/Section A", "chapter-1/section-a"),  # relative: kept whole
    ("", "imported"),
])
def test_category_topic(path, topic):
    assert category_topic(path) == topic


def test_multilang_filter():
    two = '<span lang="en" class="multilang">A</span> <span class="multilang" lang="id">B</span>'
    assert select(two, "id") == "B" and select(two, "en") == "A"
    assert select(two, "fr") == "A"  # Moodle falls back to the first language
    alone = '<span lang="en" class="multilang">A</span>'
    assert select(alone, "id") == alone  # a lone span is no group: shown as it is
    # the exporter's filler: a block holding only another language's (empty) span is dropped
    shapes = ('<p><span lang="id" class="multilang">x</span><span lang="en" class="multilang">'
              '</span></p><ul><li><span lang="id" class="multilang"></span><span lang="en" '
              'class="multilang">y</span></li></ul>')
    assert select(shapes, "id") == "<p>x</p>"
    assert select(shapes, "en") == "<ul><li>y</li></ul>"


# --- the CLI ------------------------------------------------------------------------------------


def dpassess(*args: str) -> subprocess.CompletedProcess[str]:
    """The command in this process (conftest.dpassess)."""
    return in_process(*args)


def test_cli_imports_writes_loadable_files_and_lists_skips(tmp_path):
    bank = tmp_path / "items" / "cs101"
    result = dpassess("import", str(XML), "--from", "moodle-xml", "--bank", str(bank),
                      "--lang", "en")
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("6 imported, 0 skipped\n")
    # numbered in the file's order, which the bank loads them in (19.5)
    assert sorted(p.name for p in bank.glob("*.yaml")) == [
        "01-dp-gpu-holds.yaml", "02-collectives.yaml", "03-q-1-3.yaml",
        "04-name-the-operation.yaml", "05-cloze.yaml",
        "06-partial-credit-in-a-single-answer-question.yaml", "bank.yaml"]
    first = (bank / "01-dp-gpu-holds.yaml").read_text(encoding="utf-8")
    assert first.startswith("# yaml-language-server: $schema=schema/item.schema.json\n")
    assert (bank / "schema" / "item.schema.json").is_file()
    # a bank.yaml skeleton is written (19.9): the bank loads as it is
    assert "note: wrote" in result.stderr and "bank.yaml" in result.stderr
    loaded = load_banks([bank])[0]
    assert loaded.config.id == "cs101" and list(loaded.config.languages) == ["en"]
    assert [i.id for i in loaded] == ["dp-gpu-holds", "collectives", "q-1-3",
                                      "name-the-operation", "cloze",
                                      "partial-credit-in-a-single-answer-question"]
    again = dpassess("import", str(XML), "--from", "moodle-xml", "--bank", str(bank))
    assert again.returncode == 2 and "already exists" in again.stderr  # nothing overwritten
    forced = dpassess("import", str(XML), "--from", "moodle-xml", "--bank", str(bank),
                      "--force")
    assert forced.returncode == 0, forced.stderr  # the same files, not new numbers
    assert len(list(bank.glob("*.yaml"))) == 7


def test_cli_says_a_file_without_language_needs_lang_in_one_sentence(tmp_path):
    gift = tmp_path / "q.gift"
    gift.write_text("Q{=a ~b}\n", encoding="utf-8")
    result = dpassess("import", str(gift), "--from", "gift", "--bank", str(tmp_path / "b"))
    assert result.returncode == 2 and not (tmp_path / "b").exists()
    assert result.stderr == (f"error: {gift}:1: the text has no language spans, so its language "
                             "must be given with --lang (for example --lang en)\n")


def test_cli_exits_1_when_nothing_is_imported_and_names_the_likely_format(tmp_path):
    result = dpassess("import", str(XML), "--from", "qti21", "--bank", str(tmp_path / "b"))
    assert result.returncode == 2 and "looks like moodle-xml, not qti21" in result.stderr
    empty = tmp_path / "empty.gift"
    empty.write_text("// only a comment\n\n::d::A bad {brace.\n", encoding="utf-8")
    result = dpassess("import", str(empty), "--from", "gift", "--bank", str(tmp_path / "b"),
                      "--lang", "en")
    assert result.returncode == 1, result.stderr
    assert "nothing was imported" in result.stderr and not (tmp_path / "b").exists()
    result = dpassess("import", str(XML), "--from", "gift", "--bank", str(tmp_path / "c"),
                      "--lang", "en")
    assert "the file looks like moodle-xml, not gift" in result.stderr


def test_cli_refuses_a_file_of_another_format(tmp_path):
    # GIFT reads a Moodle XML file as one question's text: a junk item, once written with exit 0
    for fmt in ("gift", "qti21"):
        result = dpassess("import", str(XML), "--from", fmt, "--bank", str(tmp_path / fmt),
                          "--lang", "en")
        assert result.returncode == 2, result.stderr
        assert (f"{XML}: the file looks like moodle-xml, not {fmt}; nothing was imported (read "
                "it with --from moodle-xml)") in result.stderr
        assert not (tmp_path / fmt).exists()
    package = tmp_path / "package.zip"
    with zipfile.ZipFile(package, "w") as z:
        z.writestr("imsmanifest.xml", "<manifest/>")
    for fmt in ("gift", "moodle-xml"):
        result = dpassess("import", str(package), "--from", fmt, "--bank", str(tmp_path / fmt),
                          "--lang", "en")
        assert result.returncode == 2 and "looks like qti21, not " + fmt in result.stderr
    # and a GIFT file read as an XML format: the XML error, and the option that reads it
    gift = tmp_path / "quiz.gift"
    gift.write_text("::Q::2 + 2 = {=4 ~5}\n", encoding="utf-8")
    for fmt in ("moodle-xml", "qti21", "canvas"):
        result = dpassess("import", str(gift), "--from", fmt, "--bank", str(tmp_path / fmt),
                          "--lang", "en")
        assert result.returncode == 2, result.stderr
        assert (f"invalid XML: Start tag expected, '<' not found (the file looks like gift, "
                f"not {fmt}: read it with --from gift)") in result.stderr
        assert not (tmp_path / fmt).exists()


def test_cli_true_false_words_for_other_languages(tmp_path):
    src = tmp_path / "ru.gift"
    src.write_text("::Земля::Земля круглая.{T}\n", encoding="utf-8")
    bank = tmp_path / "ru"
    result = dpassess("import", str(src), "--from", "gift", "--bank", str(bank), "--lang", "ru",
                      "--true-false-words", "ru=Верно,Неверно")
    assert result.returncode == 0, result.stderr
    [item] = load_banks([bank])[0]
    assert item.id == "zemlya" and item.text["ru"].title == "Земля"
    assert item.text["ru"].options == {"true": "Верно", "false": "Неверно"}
    assert "transliterated" in result.stderr
    bad = dpassess("import", str(src), "--from", "gift", "--bank", str(tmp_path / "x"),
                   "--lang", "ru", "--true-false-words", "ru=Верно")
    assert bad.returncode == 2 and "LANG=TRUE,FALSE" in bad.stderr
    plain = dpassess("import", str(src), "--from", "gift", "--bank", str(tmp_path / "y"),
                     "--lang", "ru")
    assert plain.returncode == 0 and "show the English words True and False" in plain.stderr


def test_gift_without_blank_lines_between_questions_is_warned():
    r = read_gift(b"::a::One?{T}\n::b::Two?{F}\n", "q.txt", "en")
    assert len(r.items) == 1  # as Moodle reads it: one question holding the rest
    assert [(w.line, w.item) for w in r.warnings] == [(1, "a")]
    assert "is a blank line missing" in r.warnings[0].message


def test_cli_bad_input_exits_2_without_traceback(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_bytes(b"<quiz><question></quiz>")
    result = dpassess("import", str(bad), "--from", "moodle-xml", "--bank", str(tmp_path / "b"))
    assert result.returncode == 2
    assert f"error: {bad}:1:24: invalid XML" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "b").exists()  # nothing half-written


def test_gift_says_what_it_did_with_a_second_pair_of_braces():
    # `{,}` (TeX's decimal comma) is the first pair of braces: Moodle's GIFT reader takes it as
    # the answers, so "-1{,}5" reads "-15"; the warning names the line and what the text became
    r = read_gift(b"// a comment\n::q1::Compute\n$-1{,}5 \\times 2$. {#-3}\n", "q.txt", "en")
    [w] = r.warnings
    assert (w.line, w.item) == (3, "q1")
    assert w.message.startswith("GIFT took '{,}' as the answers (the first { and the next }) "
                                "and the text around it now reads '")
    assert "$-15 \\times 2$. {#-3}'" in w.message and "is a blank line missing" not in w.message
    r = read_gift(b"::q2::Write minus one and a half. {=-1{,}5}\n", "q.txt", "en")
    assert [w.message.split(" (")[0] for w in r.warnings] == ["GIFT took '{=-1{,}' as the answers"]
    assert "half. 5}'" in r.warnings[0].message
