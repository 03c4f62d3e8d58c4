"""Numerical, short-answer, matching, essay and ordering items -> their QTI 2.1 `assessmentItem`s
(`textEntryInteraction`, `matchInteraction`, `extendedTextInteraction`, `orderInteraction`),
each scored by response processing written out in full (docs/export-qti.md says what each rule
does and what QTI cannot say)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lxml import etree

from dpassess.export.qti.builder import (
    Builder,
    add_feedback,
    keep_as_is,
    set_score,
    sub,
)
from dpassess.export.qti.names import number
from dpassess.lms import canvas
from dpassess.markup.markdown import to_plain
from dpassess.model import Essay, Matching, Numerical, Ordering, ShortAnswer

RESPONSE = "RESPONSE"


# --- numerical ---------------------------------------------------------------------------------


def numerical(build: Builder, item: Numerical) -> etree._Element:
    """A float typed in a box; the first answer whose tolerance or range holds the number
    earns its fraction of the points (and shows its feedback), as Moodle grades. QTI has no
    units: the number is read in the answers' unit, and a warning says what that leaves out."""
    lang = build.lang
    feedback = item.text[lang].feedback
    if item.units and (item.unit_penalty is not None or len(item.units) > 1):
        others = [u.unit for u in item.units[1:]]
        lost = [f"other units ({', '.join(others)}) are not accepted"] if others else []
        if item.unit_penalty is not None:
            lost.append("the unit penalty is not applied")
        build.warn("units", f"QTI has no units: the response is a plain number in the answers' "
                            f"unit ({item.units[0].unit!r}); {' and '.join(lost)}; say the unit "
                            "in the stem")
    root = build.root()
    best = next(a for a in item.answers if a.fraction == 1)
    lo, hi = best.bounds
    declaration = sub(root, "responseDeclaration", identifier=RESPONSE, cardinality="single",
                      baseType="float")
    sub(sub(declaration, "correctResponse"), "value",
        number(best.value if best.value is not None else (lo + hi) / 2))
    build.declare_scores(root, item.points)
    _answer_declaration(root)
    body = build.body(root)
    width = max(len(number(x)) for a in item.answers if not a.any_other for x in a.bounds)
    sub(keep_as_is(sub(body, "p")), "textEntryInteraction", responseIdentifier=RESPONSE,
        expectedLength=str(max(width, 4)))

    processing = _processing(root, build)
    rule = sub(processing, "responseCondition")
    when = sub(rule, "responseIf")
    sub(sub(when, "isNull"), "variable", identifier=RESPONSE)
    set_score(when, "0")
    for n, answer in enumerate(item.answers, 1):
        if answer.any_other:  # last: every other response, with its feedback
            branch = sub(rule, "responseElse")
        elif answer.value is not None:
            branch = sub(rule, "responseElseIf")
            test = (sub(branch, "equal", toleranceMode="absolute",
                        tolerance=number(answer.tolerance))
                    if answer.tolerance else sub(branch, "equal", toleranceMode="exact"))
            sub(test, "variable", identifier=RESPONSE)
            sub(test, "baseValue", number(answer.value), baseType="float")
        else:
            branch = sub(rule, "responseElseIf")
            both = sub(branch, "and")
            for op, bound in zip(("gte", "lte"), answer.bounds, strict=True):
                test = sub(both, op)
                sub(test, "variable", identifier=RESPONSE)
                sub(test, "baseValue", number(bound), baseType="float")
        set_score(branch, number(answer.fraction * item.points))
        _set_answer(branch, answer.id)
        if feedback.get(answer.id):
            add_feedback(branch, canvas.answer_feedback_id(n))
    if not item.answers[-1].any_other:
        set_score(sub(rule, "responseElse"), "0")
    _answer_feedback(build, root, [a.id for a in item.answers], feedback)
    build.explanation(root)
    return root


# --- short answer ------------------------------------------------------------------------------


def short_answer(build: Builder, item: ShortAnswer) -> etree._Element:
    """A string typed in a box; the first answer one of whose wordings in the language matches
    earns its fraction of the points (and shows its feedback), as Moodle grades. Wordings
    without `*` are also listed in the response's mapping (caseSensitive as the item says); a
    `*` (any characters, as in Moodle; `\\*` is a literal star) cannot be said in a mapping,
    so those wordings are matched by `patternMatch`."""
    lang = build.lang
    content = item.text[lang]
    case = "true" if item.case_sensitive else "false"
    root = build.root()
    declaration = sub(root, "responseDeclaration", identifier=RESPONSE, cardinality="single",
                      baseType="string")
    best = next(a for a in item.answers if a.fraction == 1)
    first = content.answers[best.id][0]
    sub(sub(declaration, "correctResponse"), "value",
        build.text(f"text.{lang}.answers.{best.id}", _literal(first)))
    mapping = sub(declaration, "mapping", lowerBound="0", upperBound=number(item.points),
                  defaultValue="0")
    for answer in item.answers:
        for k, wording in enumerate(content.answers.get(answer.id, ())):
            if not _is_pattern(wording):
                sub(mapping, "mapEntry", caseSensitive=case,
                    mapKey=build.text(f"text.{lang}.answers.{answer.id}.{k}", _literal(wording)),
                    mappedValue=number(answer.fraction * item.points))
    if not len(mapping):
        declaration.remove(mapping)
    build.declare_scores(root, item.points)
    _answer_declaration(root)
    body = build.body(root)
    width = max(len(w) for ws in content.answers.values() for w in ws)
    sub(keep_as_is(sub(body, "p")), "textEntryInteraction", responseIdentifier=RESPONSE,
        expectedLength=str(min(max(width, 10), 200)))

    processing = _processing(root, build)
    rule = sub(processing, "responseCondition")
    when = sub(rule, "responseIf")
    sub(sub(when, "isNull"), "variable", identifier=RESPONSE)
    set_score(when, "0")
    for n, answer in enumerate(item.answers, 1):
        wordings = content.answers.get(answer.id, ())
        if not wordings:
            continue
        branch = sub(rule, "responseElseIf")
        parent = sub(branch, "or") if len(wordings) > 1 else branch
        for k, wording in enumerate(wordings):
            clean = build.text(f"text.{lang}.answers.{answer.id}.{k}", wording)
            if _is_pattern(clean):
                test = sub(parent, "patternMatch",
                           pattern=wildcard_pattern(clean, item.case_sensitive))
                sub(test, "variable", identifier=RESPONSE)
            else:
                test = sub(parent, "stringMatch", caseSensitive=case)
                sub(test, "variable", identifier=RESPONSE)
                sub(test, "baseValue", _literal(clean), baseType="string")
        set_score(branch, number(answer.fraction * item.points))
        _set_answer(branch, answer.id)
        if content.feedback.get(answer.id):
            add_feedback(branch, canvas.answer_feedback_id(n))
    set_score(sub(rule, "responseElse"), "0")
    _answer_feedback(build, root, [a.id for a in item.answers], content.feedback)
    build.explanation(root)
    return root


def _is_pattern(wording: str) -> bool:
    return "*" in wording.replace("\\*", "")


def _literal(wording: str) -> str:
    """The wording as the student types it (`\\*` is a star)."""
    return wording.replace("\\*", "*")


_XSD_META = frozenset(".\\?*+{}()[]|-^")


def wildcard_pattern(wording: str, case_sensitive: bool) -> str:
    """An XML Schema regular expression (what `patternMatch` reads; it matches the whole
    string) for a Moodle wording: `*` any characters, `\\*` a star, the rest literal; without
    case sensitivity each letter is a class of its two cases."""
    out: list[str] = []
    i = 0
    while i < len(wording):
        c = wording[i]
        if c == "\\" and wording[i + 1:i + 2] == "*":
            out.append("\\*")
            i += 2
            continue
        if c == "*":
            out.append(".*")
        elif c in _XSD_META:
            out.append("\\" + c)
        elif not case_sensitive and len(c.upper()) == 1 and len(c.lower()) == 1 \
                and c.upper() != c.lower():
            out.append(f"[{c.lower()}{c.upper()}]")
        else:
            out.append(c)
        i += 1
    return "".join(out)


# --- matching ----------------------------------------------------------------------------------


def premise_id(pair: str) -> str:
    """A premise's choice identifier (`p-<pair id>`; the responses are `r-<id>`: the two sides
    of a pair share its id, and identifiers in an interaction must differ)."""
    return f"p-{pair}"


def response_id(pair: str) -> str:
    return f"r-{pair}"


def matching(build: Builder, item: Matching) -> etree._Element:
    """Premises matched to responses (directed pairs premise -> response); each right pair
    earns an equal share of the points (a mapping, the map_response template's rule). Only the
    responses are shuffled (the premises are fixed), as Moodle does."""
    lang = build.lang
    content = item.text[lang]
    share = item.points / len(item.pairs)
    root = build.root()
    declaration = sub(root, "responseDeclaration", identifier=RESPONSE, cardinality="multiple",
                      baseType="directedPair")
    correct = sub(declaration, "correctResponse")
    for pid in item.pairs:
        sub(correct, "value", f"{premise_id(pid)} {response_id(pid)}")
    mapping = sub(declaration, "mapping", lowerBound="0", upperBound=number(item.points),
                  defaultValue="0")
    for pid in item.pairs:
        sub(mapping, "mapEntry", mapKey=f"{premise_id(pid)} {response_id(pid)}",
            mappedValue=number(share))
    build.declare_scores(root, item.points)
    body = build.body(root)
    interaction = sub(body, "matchInteraction", responseIdentifier=RESPONSE,
                      shuffle="true" if item.shuffle else "false",
                      maxAssociations=str(len(item.pairs)))
    premises = sub(interaction, "simpleMatchSet")
    for pid in item.pairs:
        choice = sub(premises, "simpleAssociableChoice", identifier=premise_id(pid),
                     matchMax="1", fixed="true")
        field = f"text.{lang}.premises.{pid}"
        build.flow(choice, field, build.html(field, content.premises[pid], inline=True))
    responses = sub(interaction, "simpleMatchSet")
    for rid in item.response_ids:
        choice = sub(responses, "simpleAssociableChoice", identifier=response_id(rid),
                     matchMax="1")
        field = f"text.{lang}.responses.{rid}"
        build.flow(choice, field, build.html(field, content.responses[rid], inline=True))
    processing = _processing(root, build)
    rule = sub(processing, "responseCondition")
    when = sub(rule, "responseIf")
    sub(sub(when, "isNull"), "variable", identifier=RESPONSE)
    set_score(when, "0")
    otherwise = sub(sub(rule, "responseElse"), "setOutcomeValue", identifier="SCORE")
    sub(otherwise, "mapResponse", identifier=RESPONSE)
    build.explanation(root)
    return root


# --- essay -------------------------------------------------------------------------------------

_TEXT_FORMAT = {"editor": "xhtml", "plain": "plain", "monospaced": "preformatted"}

#: Characters per word, for the box's expected length from a word limit (a word and a space).
CHARS_PER_WORD = 6


def essay(build: Builder, item: Essay) -> etree._Element:
    """A written response in an `extendedTextInteraction` (its format, lines, expected length,
    the response template as placeholder text), never scored by the package: SCORE stays 0
    until a person grades it. The grader's guide is a `rubricBlock` for scorers."""
    lang = build.lang
    content = item.text[lang]
    root = build.root()
    sub(root, "responseDeclaration", identifier=RESPONSE, cardinality="single",
        baseType="string")
    build.declare_scores(root, item.points)
    body = build.body(root)
    attrs = {"responseIdentifier": RESPONSE, "format": _TEXT_FORMAT[item.response_format],
             "expectedLines": str(item.lines)}
    if item.max_words is not None:
        attrs["expectedLength"] = str(item.max_words * CHARS_PER_WORD)
    if item.response_required:
        attrs["minStrings"] = "1"
    if content.response_template:
        field = f"text.{lang}.response_template"
        template = build.text(field, content.response_template)
        # the template is Markdown for the editor, the text itself for plain and monospaced
        # responses (as Moodle XML writes it)
        attrs["placeholderText"] = to_plain(template) if item.response_format == "editor" \
            else template
        build.warn(field, "QTI shows the response template as placeholder text (greyed, gone "
                          "once the student types), not as text to edit")
    sub(body, "extendedTextInteraction", **attrs)
    if item.min_words is not None or item.max_words is not None:
        build.warn("max_words" if item.max_words is not None else "min_words",
                   "QTI 2.1 cannot enforce word limits; the response box only hints at a length"
                   + (f" (about {attrs['expectedLength']} characters)"
                      if "expectedLength" in attrs else ""))
    if content.grader_info:
        field = f"text.{lang}.grader_info"
        block = sub(body, "rubricBlock", view="scorer")
        build.flow(block, field, build.html(field, content.grader_info))
    if content.explanation:
        _processing(root, build)
    build.explanation(root)
    return root


# --- ordering ----------------------------------------------------------------------------------


def ordering(build: Builder, item: Ordering) -> etree._Element:
    """Options put in order (always shuffled); the grading Moodle's ordering type names,
    computed by `ordering_rules` (exactly, but for the longest ordered subset)."""
    lang = build.lang
    content = item.text[lang]
    ids = item.options
    root = build.root()
    declaration = sub(root, "responseDeclaration", identifier=RESPONSE, cardinality="ordered",
                      baseType="identifier")
    correct = sub(declaration, "correctResponse")
    for oid in ids:
        sub(correct, "value", oid)
    build.declare_scores(root, item.points)
    for name in _ordering_outcomes(item.grading, len(ids)):
        outcome = sub(root, "outcomeDeclaration", identifier=name, cardinality="single",
                      baseType="integer")
        sub(sub(outcome, "defaultValue"), "value", "0")
    body = build.body(root)
    interaction = sub(body, "orderInteraction", responseIdentifier=RESPONSE, shuffle="true")
    for oid in ids:
        field = f"text.{lang}.options.{oid}"
        choice = sub(interaction, "simpleChoice", identifier=oid)
        build.flow(choice, field, build.html(field, content.options[oid], inline=True))
    if item.grading == "longest_ordered_subset":
        build.warn("grading", "QTI scores the longest ordered subset as the true longest; "
                              "Moodle's search credits a longer one for some orders (from four "
                              "options on), so a QTI player may give fewer points than Moodle")
    build.warn("type", canvas.ORDERING_IN_QTI21)
    ordering_rules(_processing(root, build), ids, item.grading, item.points)
    build.explanation(root)
    return root


def _ordering_outcomes(grading: str, n: int) -> list[str]:
    if grading == "all_or_nothing":
        return []
    names = ["RAW", *(f"C{j}" for j in range(1, n + 1))]
    if grading in ("longest_ordered_subset", "longest_contiguous_subset"):
        names += [f"L{j}" for j in range(1, n + 1)]
    if grading == "longest_contiguous_subset":
        names += [f"P{j}" for j in range(1, n + 1)]
    return names


def ordering_rules(processing: etree._Element, ids: Sequence[str], grading: str,
                   points: float) -> None:
    """SCORE for an ordered RESPONSE of `ids` (listed in the right order), graded as Moodle's
    qtype_ordering `grade_response` does for `grading`, scaled to `points`.

    C<j> is the right place (1..n) of the option the student put at place j; RAW counts what
    the grading counts, out of `most`; SCORE := points * RAW / most. Positions: absolute
    (C<j> = j), relative to correct (n-1-|j-C<j>| each, at least 0); pairs: next (C<j+1> =
    C<j>+1), one previous and next (both neighbours, an end counting as right where the right
    order ends too), all previous and next (2 for each pair in the right relative order);
    subsets, counted if longer than one: the longest increasing subsequence of C (L<j>: the
    longest ending at place j), or the longest run of options right after one another in the
    right order, each placed after the one before (P<k>: where option k was placed; L<k>: the
    run ending at option k).

    Moodle's search for the longest ordered subset is not the longest increasing subsequence:
    for some orders it credits a longer one (a subset it joins across a break); QTI gives the
    true longest, so there it gives less, and `ordering` warns."""
    n = len(ids)
    if grading == "all_or_nothing":
        rule = sub(sub(processing, "responseCondition"), "responseIf")
        match = sub(rule, "match")
        sub(match, "variable", identifier=RESPONSE)
        sub(match, "correct", identifier=RESPONSE)
        set_score(rule, number(points))
        return

    def weight(j: int, k: int) -> int:
        if grading == "absolute_position":
            return int(j == k)
        if grading == "relative_to_correct":
            return max(0, n - 1 - abs(j - k))
        return 0

    for j in range(1, n + 1):
        rule = sub(processing, "responseCondition")
        for k, oid in enumerate(ids, 1):
            branch = sub(rule, "responseIf" if k == 1 else "responseElseIf")
            match = sub(branch, "match")
            sub(sub(match, "index", n=str(j)), "variable", identifier=RESPONSE)
            sub(match, "baseValue", oid, baseType="identifier")
            _set_int(branch, f"C{j}", str(k))
            if grading == "longest_contiguous_subset":
                _set_int(branch, f"P{k}", str(j))
            if weight(j, k):
                _add(branch, "RAW", weight(j, k))
    most = n
    if grading == "relative_to_correct":
        most = n * (n - 1)
    elif grading in ("relative_next_exclude_last", "relative_next_include_last",
                     "relative_one_previous_and_next"):
        pair_weight = 2 if grading == "relative_one_previous_and_next" else 1
        for j in range(1, n):
            _when_next(processing, f"C{j}", f"C{j + 1}", lambda b: _add(b, "RAW", pair_weight))
        most = n - 1
        if grading == "relative_next_include_last":
            _when_is(processing, f"C{n}", n, lambda b: _add(b, "RAW", 1))
            most = n
        elif grading == "relative_one_previous_and_next":
            _when_is(processing, "C1", 1, lambda b: _add(b, "RAW", 1))
            _when_is(processing, f"C{n}", n, lambda b: _add(b, "RAW", 1))
            most = 2 * n
    elif grading == "relative_all_previous_and_next":
        for j in range(1, n + 1):
            for k in range(j + 1, n + 1):
                branch = sub(sub(processing, "responseCondition"), "responseIf")
                test = sub(branch, "lt")
                sub(test, "variable", identifier=f"C{j}")
                sub(test, "variable", identifier=f"C{k}")
                _add(branch, "RAW", 2)
        most = n * (n - 1)
    elif grading in ("longest_ordered_subset", "longest_contiguous_subset"):
        for j in range(1, n + 1):
            _set_int(processing, f"L{j}", "1")
            if grading == "longest_ordered_subset":
                for i in range(1, j):
                    branch = sub(sub(processing, "responseCondition"), "responseIf")
                    both = sub(branch, "and")
                    test = sub(both, "lt")
                    sub(test, "variable", identifier=f"C{i}")
                    sub(test, "variable", identifier=f"C{j}")
                    test = sub(both, "gte")
                    sub(test, "variable", identifier=f"L{i}")
                    sub(test, "variable", identifier=f"L{j}")
                    _set_sum(branch, f"L{j}", f"L{i}", 1)
            elif j > 1:  # the option right after L<j-1>'s last one is placed after it
                branch = sub(sub(processing, "responseCondition"), "responseIf")
                test = sub(branch, "gt")
                sub(test, "variable", identifier=f"P{j}")
                sub(test, "variable", identifier=f"P{j - 1}")
                _set_sum(branch, f"L{j}", f"L{j - 1}", 1)
        longest = sub(processing, "setOutcomeValue", identifier="RAW")
        top = sub(longest, "max")
        for j in range(1, n + 1):
            sub(top, "variable", identifier=f"L{j}")
        _when_below(processing, "RAW", 2, lambda b: _set_int(b, "RAW", "0"))
    score = sub(processing, "setOutcomeValue", identifier="SCORE")
    ratio = sub(score, "divide")
    product = sub(ratio, "product")
    sub(product, "variable", identifier="RAW")
    sub(product, "baseValue", number(float(points)), baseType="float")
    sub(ratio, "baseValue", number(float(most)), baseType="float")


def _set_int(parent: etree._Element, name: str, value: str) -> None:
    sub(sub(parent, "setOutcomeValue", identifier=name), "baseValue", value, baseType="integer")


def _set_sum(parent: etree._Element, name: str, var: str, plus: int) -> None:
    """name := var + plus."""
    total = sub(sub(parent, "setOutcomeValue", identifier=name), "sum")
    sub(total, "variable", identifier=var)
    sub(total, "baseValue", str(plus), baseType="integer")


def _add(parent: etree._Element, name: str, plus: int) -> None:
    _set_sum(parent, name, name, plus)


def _when_next(processing: etree._Element, first: str, then: str, do: Callable[[etree._Element], None]) -> None:
    """If `then` = `first` + 1 (the option at the next place is the right next one): `do`."""
    branch = sub(sub(processing, "responseCondition"), "responseIf")
    test = sub(branch, "match")
    sub(test, "variable", identifier=then)
    total = sub(test, "sum")
    sub(total, "variable", identifier=first)
    sub(total, "baseValue", "1", baseType="integer")
    do(branch)


def _when_is(processing: etree._Element, name: str, value: int, do: Callable[[etree._Element], None]) -> None:
    branch = sub(sub(processing, "responseCondition"), "responseIf")
    test = sub(branch, "match")
    sub(test, "variable", identifier=name)
    sub(test, "baseValue", str(value), baseType="integer")
    do(branch)


def _when_below(processing: etree._Element, name: str, value: int, do: Callable[[etree._Element], None]) -> None:
    branch = sub(sub(processing, "responseCondition"), "responseIf")
    test = sub(branch, "lt")
    sub(test, "variable", identifier=name)
    sub(test, "baseValue", str(value), baseType="integer")
    do(branch)


# --- shared ------------------------------------------------------------------------------------

#: The outcome naming the answer a typed response matched (by its id), as Moodle's question
#: engine records it: the answers' ids travel in the package, for feedback and for import.
ANSWER = "ANSWER"


def _answer_declaration(root: etree._Element) -> None:
    sub(root, "outcomeDeclaration", identifier=ANSWER, cardinality="single",
        baseType="identifier")


def _set_answer(branch: etree._Element, answer_id: str) -> None:
    sub(sub(branch, "setOutcomeValue", identifier=ANSWER), "baseValue", answer_id,
        baseType="identifier")


def _processing(root: etree._Element, build: Builder) -> etree._Element:
    """The item's responseProcessing, the explanation's feedback rule first (shown whatever
    the response)."""
    processing = sub(root, "responseProcessing")
    if build.content.explanation:
        add_feedback(processing, canvas.GENERAL_FEEDBACK_ID)
    return processing


def _answer_feedback(build: Builder, root: etree._Element, ids: Sequence[str],
                     feedback: dict[str, str]) -> None:
    """A modalFeedback for each answer that has feedback (`FB<n>`, n its place)."""
    for n, aid in enumerate(ids, 1):
        if feedback.get(aid):
            build.feedback(root, canvas.answer_feedback_id(n), f"text.{build.lang}.feedback.{aid}",
                           feedback[aid])
