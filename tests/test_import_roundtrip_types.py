"""Numerical, short-answer, matching, essay, ordering, cloze and description items survive bank -> each format ->
import -> bank, for random items (tests/strategies.py), one language at a time.

"Survive" is every field the format carries, compared by meaning (docs/import.md lists what
each format cannot carry): Markdown by what it renders to, answers and pairs by position (no
format keeps their ids), a range by its bounds where the format writes value and tolerance,
short answers as the list of (wording, fraction, feedback) Moodle grades by. An export that
warns it cannot carry a text as written is left out (`assume`), as in test_import_roundtrip.
"""

from __future__ import annotations

import pytest
from hypothesis import Phase, assume, given, settings
from hypothesis import strategies as st

from dpassess.export import EXPORTERS
from dpassess.markup.markdown import item_title, to_html, to_inline_html, to_plain
from dpassess.model import (
    ChoiceGap,
    Cloze,
    Description,
    Essay,
    Item,
    Matching,
    MultipleResponseGap,
    Numerical,
    NumericalGap,
    Ordering,
    ShortAnswer,
    ShortAnswerGap,
    parse_item,
)
from strategies import (
    LANGS,
    cloze_items,
    description_items,
    essay_items,
    matching_items,
    numerical_items,
    ordering_items,
    short_answer_items,
)
from test_import_roundtrip import collection, lossy, reader, same

STRATEGIES = {"numerical": numerical_items, "short_answer": short_answer_items,
              "matching": matching_items, "essay": essay_items, "ordering": ordering_items,
              "cloze": cloze_items, "description": description_items}
#: What each format cannot carry, by item type (docs/import.md): left out of the comparison.
NOT_CARRIED = {
    "gift": {"points", "units", "unit_penalty", "case_sensitive", "shuffle", "response_format",
             "response_required", "lines", "min_words", "max_words", "grader_info",
             "response_template"},
    "moodle-xml": set(),
    "qti21": {"units", "unit_penalty", "min_words", "max_words"},
}


def block(md: str | None) -> bytes:
    return same(to_html(md or ""))


def inline(md: str) -> bytes:
    return same(to_inline_html(md))


def shown_inline(md: str) -> bytes:
    """`inline(md)`, but nothing for markup that shows nothing (`<p>` alone: an empty
    paragraph, which a QTI choice comes back without); an image or formula always shows."""
    html = to_inline_html(md)
    if not to_plain(md).strip() and not any(tag in html for tag in ("<img", "<math", "<object")):
        return b""
    return same(html)


def template(item: Essay, text: str | None, fmt: str) -> object:
    """A response template by what comes back: for the editor, its visible text (QTI's
    placeholder is plain text, and the Moodle XML import reads an HTML template as its text);
    for plain and monospaced responses, the text itself."""
    if item.response_format != "editor" or not text:
        return text or None
    shown = " ".join(to_plain(text).split())
    if not shown:  # Markdown that shows nothing (`>`: an empty quote) is no template
        return None
    return shown


def view(item: Item, fmt: str, lang: str) -> dict:
    """The fields of `item` that `fmt` carries, by meaning."""
    c = item.text[lang]
    out: dict = {"id": item.id, "type": item.type, "topic": item.topic, "points": item.points,
                 # the name Moodle shows: the title, else the stem's first line as plain text
                 # (runs of spaces and tabs show as one space in every LMS)
                 "title": " ".join(item_title(item, lang).split()) or item.id,
                 "stem": block(c.stem), "explanation": block(c.explanation)}
    match item:
        case Numerical():
            exact = fmt == "gift"  # GIFT writes a range as min..max; the others as value±tol
            out["answers"] = [((a.value, a.tolerance, a.min, a.max) if exact
                               else tuple(float(f"{b:.12g}") for b in a.bounds),
                               a.fraction, block(c.feedback.get(a.id))) for a in item.answers]
            out["units"] = [(u.unit, u.multiplier) for u in item.units]
            out["unit_penalty"] = item.unit_penalty
        case ShortAnswer():
            wordings = [(w, a.fraction, block(c.feedback.get(a.id)))
                        for a in item.answers for w in c.answers[a.id]]
            if fmt == "gift":
                # GIFT cannot say that case matters (the export warns): Moodle, and the import
                # (with a warning), read wordings that differ only in case as one, the first
                seen: set[str] = set()
                wordings = [x for x in wordings if (k := " ".join(x[0].split()).casefold())
                            not in seen and not seen.add(k)]
            out["answers"] = wordings
            out["case_sensitive"] = item.case_sensitive
        case Matching():
            # Moodle shows responses in a menu, as plain text (the export warns when that
            # loses formatting); QTI carries them as inline XHTML
            response = to_plain if fmt in ("moodle-xml", "gift") else shown_inline
            out["pairs"] = [(inline(c.premises[p]), response(c.responses[p])) for p in item.pairs]
            out["distractors"] = [response(c.responses[d]) for d in item.distractors]
            out["shuffle"] = item.shuffle
        case Essay():
            out.update(response_format=item.response_format,
                       response_required=item.response_required, lines=item.lines,
                       min_words=item.min_words, max_words=item.max_words,
                       grader_info=block(c.grader_info),
                       response_template=template(item, c.response_template, fmt))
        case Ordering():
            out["options"] = [inline(c.options[o]) for o in item.options]
            out["grading"] = item.grading
            if fmt == "qti21" and len(item.options) == 2 and item.grading == "relative_to_correct":
                # with two options both score alike (right order: all, swapped: none), so the
                # response processing QTI carries cannot tell them apart
                out["grading"] = "absolute_position"
        case Cloze():
            # a gap's points are its weight: what counts is its share of the item's points
            total = sum(g.points for g in item.gaps)
            out["gaps"] = [_gap(gap, c.gaps.get(gap.id), round(gap.points / total, 7), fmt)
                           for gap in item.gaps]
            if fmt in ("moodle-xml", "gift"):
                # Moodle's mark for a cloze is the sum of its gaps' (whole) weights: other
                # points are not carried, and the export warns so (docs/export-moodle.md)
                out["points"] = sum(g.points for g in item.gaps)
        case Description():
            del out["points"]  # never scored: no format keeps points for it
        case _:
            raise AssertionError(item.type)
    for name in NOT_CARRIED[fmt]:
        out.pop(name, None)
    return out


def _gap(gap: object, content: object, share: float, fmt: str) -> tuple[object, ...]:
    """A cloze gap by meaning: its kind and share of the points, its answers (wordings, numbers) or options
    by position with their fractions, and each one's feedback."""
    wordings = getattr(content, "answers", {}) or {}
    options = getattr(content, "options", {}) or {}
    feedback = getattr(content, "feedback", {}) or {}

    def fb(i: str) -> bytes:
        return inline(feedback.get(i, ""))

    gift = fmt == "gift"  # GIFT carries neither shuffling nor case (NOT_CARRIED)

    match gap:
        case ShortAnswerGap():
            return ("short_answer", share, None if gift else gap.case_sensitive,
                    [(w, a.fraction, fb(a.id)) for a in gap.answers for w in wordings[a.id]])
        case NumericalGap():
            return ("numerical", share, [(tuple(float(f"{b:.12g}") for b in a.bounds),
                                               a.fraction, fb(a.id)) for a in gap.answers])
        case ChoiceGap():
            # QTI's drop-down holds plain text (the export warns when that loses formatting)
            shown = ((lambda md: " ".join(to_plain(md).split())) if fmt == "qti21" else inline)
            return ("choice", share, gap.display, None if gift else gap.shuffle,
                    [(shown(options[o]), round(gap.fractions()[o], 7), fb(o))
                     for o in gap.options])
        case MultipleResponseGap():
            return ("multiple_response", share, gap.display, None if gift else gap.shuffle,
                    [(inline(options[o]), round(gap.fractions()[o], 7), fb(o))
                     for o in gap.options])
    raise AssertionError(gap)


#: Examples are reported as drawn: these items are large, and a failure shrank for minutes.
NO_SHRINK = settings(phases=[Phase.explicit, Phase.reuse, Phase.generate])


def round_trip(item: Item, fmt: str, lang: str) -> bool:
    """Export, import back and compare; False (nothing compared) when the exporter reports a
    text it cannot carry as written."""
    result = EXPORTERS[fmt].export(collection([item]), lang)
    if lossy(result.warnings):
        return False
    imported = reader(fmt).read(result.data, f"export.{fmt}", lang)
    assert imported.skipped == [], [str(s) for s in imported.skipped]
    [back] = imported.items
    assert view(back, fmt, lang) == view(item, fmt, lang)
    return True


#: The types GIFT writes (it leaves an ordering item and a several-gap cloze out, with a warning)
GIFT_KINDS = {"numerical", "short_answer", "matching", "essay", "cloze", "description"}


@pytest.mark.parametrize("kind", sorted(STRATEGIES))
# Each drawn item goes through every format that takes its type, since drawing it is most of the
# cost; a format that reports a text it cannot carry is passed over for that item, so half again
# as many items as the profile's are drawn.
@settings(NO_SHRINK, max_examples=settings.default.max_examples * 3 // 2)
@given(data=st.data())
def test_round_trip(kind, data):
    lang = data.draw(st.sampled_from(LANGS))
    item = data.draw(STRATEGIES[kind]((lang,)))
    formats = ("moodle-xml", "qti21", *(("gift",) if kind in GIFT_KINDS else ()))
    assume([fmt for fmt in formats if round_trip(item, fmt, lang)])


def _matching(premise: str) -> Item:
    return parse_item({"schema": 1, "id": "m1", "type": "matching", "topic": "t/a",
                       "pairs": ["a", "b"], "text": {"en": {
                           "stem": "Match.", "premises": {"a": premise, "b": "B"},
                           "responses": {"a": "1", "b": "2"}}}})


def _dropdown(option: str) -> Item:
    return parse_item({"schema": 1, "id": "c1", "type": "cloze", "topic": "t/a",
                       "gaps": [{"id": "g1", "type": "choice", "options": ["a", "b"], "key": "a"}],
                       "text": {"en": {"stem": "Pick [[g1]].",
                                       "gaps": {"g1": {"options": {"a": option, "b": "B"}}}}}})


@pytest.mark.parametrize(("fmt", "item"), [
    # a space before a stray end tag, which no parser keeps: the text ends in a space, which
    # no student sees and the importer does not write
    ("qti21", _matching("x </p>")),
    # `</` without a tag name is text (`&lt;/`): Moodle decodes a choice's entities once and
    # keeps it as HTML, where `</ x` would open a comment
    ("moodle-xml", _dropdown("y </ x")),
])
def test_a_text_drawn_once_comes_back_as_it_went(fmt: str, item: Item):
    assert round_trip(item, fmt, "en")
