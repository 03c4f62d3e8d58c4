"""A small QTI 2.1 response-processing engine, for tests: it runs an assessmentItem's
`responseProcessing` (or the standard template it names) on given responses, as the QTI 2.1
Assessment Test, Section and Item Information Model defines each construct, and returns the
outcome values. No QTI 2.1 engine can be pip-installed (the maintained ones are JavaScript
players); this one covers the constructs a QTI exporter writes and is itself tested against the
spec's standard templates (match_correct, map_response) in tests/test_qti_scoring.py.

Values: None is NULL; a single value is a Python value (identifier and string: str, float,
integer: int, boolean: bool, directedPair/pair: a tuple of two str); a multiple container is a
sorted tuple (a multiset), an ordered container a list.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from lxml import etree

QTI = "http://www.imsglobal.org/xsd/imsqti_v2p1"
Q = f"{{{QTI}}}"

#: The spec's standard templates (imsqti_v2p1/rptemplates/*.xml), restated.
TEMPLATES = {
    "match_correct": f"""<responseProcessing xmlns="{QTI}"><responseCondition><responseIf>
        <match><variable identifier="RESPONSE"/><correct identifier="RESPONSE"/></match>
        <setOutcomeValue identifier="SCORE"><baseValue baseType="float">1</baseValue>
        </setOutcomeValue></responseIf><responseElse><setOutcomeValue identifier="SCORE">
        <baseValue baseType="float">0</baseValue></setOutcomeValue></responseElse>
        </responseCondition></responseProcessing>""",
    "map_response": f"""<responseProcessing xmlns="{QTI}"><responseCondition><responseIf>
        <isNull><variable identifier="RESPONSE"/></isNull><setOutcomeValue identifier="SCORE">
        <baseValue baseType="float">0.0</baseValue></setOutcomeValue></responseIf><responseElse>
        <setOutcomeValue identifier="SCORE"><mapResponse identifier="RESPONSE"/>
        </setOutcomeValue></responseElse></responseCondition></responseProcessing>""",
}


def parse_value(base_type: str, text: str) -> Any:
    text = text.strip()
    if base_type in ("identifier", "string"):
        return text
    if base_type == "float":
        return float(text)
    if base_type == "integer":
        return int(text)
    if base_type == "boolean":
        return text == "true"
    if base_type in ("directedPair", "pair"):
        a, b = text.split()
        return (a, b) if base_type == "directedPair" else tuple(sorted((a, b)))
    raise NotImplementedError(base_type)


class Declaration:
    def __init__(self, el: etree._Element) -> None:
        self.identifier = el.get("identifier", "")
        self.cardinality = el.get("cardinality", "single")
        self.base_type = el.get("baseType", "")
        self.correct = self._values(el.find(Q + "correctResponse"))
        self.default = self._values(el.find(Q + "defaultValue"))
        self.mapping = el.find(Q + "mapping")

    def _values(self, el: etree._Element | None) -> Any:
        if el is None:
            return None
        values = [parse_value(self.base_type, v.text or "") for v in el.findall(Q + "value")]
        return container(self.cardinality, values)


def container(cardinality: str, values: list[Any]) -> Any:
    if cardinality == "single":
        return values[0] if values else None
    if not values:
        return None
    if cardinality == "ordered":
        return list(values)
    return tuple(sorted(values, key=repr))


class Engine:
    """Runs one item's response processing."""

    def __init__(self, item: etree._Element) -> None:
        self.item = item
        self.decls = {d.identifier: d for d in map(Declaration, item.iter(
            Q + "responseDeclaration", Q + "outcomeDeclaration"))}

    def run(self, responses: dict[str, Any]) -> dict[str, Any]:
        """The outcomes after processing `responses` (by response identifier)."""
        self.values: dict[str, Any] = {}
        for ident, decl in self.decls.items():
            if ident in responses:
                value = responses[ident]
                if decl.cardinality == "multiple" and value is not None:
                    value = container("multiple", list(value)) if value else None
                self.values[ident] = value
            else:
                self.values[ident] = decl.default
        processing = self.item.find(Q + "responseProcessing")
        if processing is not None:
            template = processing.get("template", "")
            if template:
                name = template.rstrip("/").rsplit("/", 1)[-1].removesuffix(".xml")
                processing = etree.fromstring(TEMPLATES[name])
            self.rules(list(processing))
        return {k: v for k, v in self.values.items() if k not in responses}

    # --- rules ----------------------------------------------------------------------------------

    def rules(self, rules: list[etree._Element]) -> None:
        for rule in rules:
            if not isinstance(rule.tag, str):
                continue
            name = etree.QName(rule).localname
            if name == "setOutcomeValue":
                self.set(rule.get("identifier", ""), self.eval(rule[0]))
            elif name == "responseCondition":
                for branch in rule:
                    kind = etree.QName(branch).localname
                    if kind == "responseElse":
                        self.rules(list(branch))
                        break
                    if self.eval(branch[0]) is True:
                        self.rules(list(branch)[1:])
                        break
            elif name == "exitResponse":
                raise NotImplementedError(name)
            else:
                raise NotImplementedError(name)

    def set(self, ident: str, value: Any) -> None:
        decl = self.decls[ident]
        if value is not None and decl.base_type == "float" and decl.cardinality == "single":
            value = float(value)
        if value is not None and decl.base_type == "integer" and isinstance(value, float):
            raise TypeError(f"float {value} set to integer {ident}")
        self.values[ident] = value

    # --- expressions ----------------------------------------------------------------------------

    def eval(self, el: etree._Element) -> Any:
        name = etree.QName(el).localname
        kids = [k for k in el if isinstance(k.tag, str)]
        if name == "baseValue":
            return parse_value(el.get("baseType", ""), el.text or "")
        if name == "variable":
            return self.values[el.get("identifier", "")]
        if name == "correct":
            return self.decls[el.get("identifier", "")].correct
        if name == "isNull":
            return _null(self.eval(kids[0]))
        if name == "mapResponse":
            return self.map_response(el.get("identifier", ""))
        args = [self.eval(k) for k in kids]
        if name == "and":
            if any(a is False for a in args):
                return False
            return None if any(a is None for a in args) else True
        if name == "or":
            if any(a is True for a in args):
                return True
            return None if any(a is None for a in args) else False
        if name == "not":
            return None if args[0] is None else not args[0]
        if name == "multiple":
            flat: list[Any] = []
            for a in args:
                if a is None:
                    continue
                flat.extend(a if isinstance(a, tuple) and not _pair(a) else [a])
            return container("multiple", flat)
        if any(_null(a) for a in args):
            return None
        if name == "match":
            a, b = args
            if isinstance(a, tuple) and not _pair(a):
                return Counter(a) == Counter(b)
            return a == b
        if name == "member":
            return args[0] in args[1]
        if name in ("gte", "lte", "gt", "lt"):
            a, b = args
            return {"gte": a >= b, "lte": a <= b, "gt": a > b, "lt": a < b}[name]
        if name == "equal":
            return self.equal(el, *args)
        if name == "stringMatch":
            a, b = args
            if el.get("caseSensitive") == "true":
                return a == b
            return a.lower() == b.lower()
        if name == "patternMatch":
            return re.fullmatch(xsd_regex(el.get("pattern", "")), args[0]) is not None
        if name == "sum":
            return sum(args)
        if name == "product":
            out = 1
            for a in args:
                out *= a
            return out
        if name == "divide":
            return None if args[1] == 0 else args[0] / args[1]
        if name == "subtract":
            return args[0] - args[1]
        if name == "max":
            return max(args)
        if name == "index":
            n = int(el.get("n", "0"))
            seq = args[0]
            return seq[n - 1] if 1 <= n <= len(seq) else None
        raise NotImplementedError(name)

    def equal(self, el: etree._Element, x: float, y: float) -> bool:
        mode = el.get("toleranceMode", "exact")
        if mode == "exact":
            return x == y
        t = [float(v) for v in el.get("tolerance", "0").split()]
        t0, t1 = t[0], t[-1]
        if mode == "absolute":
            lo, hi = y - t0, y + t1
        else:
            lo, hi = y * (1 - t0 / 100), y * (1 + t1 / 100)
        low_ok = x >= lo if el.get("includeLowerBound", "true") == "true" else x > lo
        high_ok = x <= hi if el.get("includeUpperBound", "true") == "true" else x < hi
        return low_ok and high_ok

    def map_response(self, ident: str) -> Any:
        decl = self.decls[ident]
        value = self.values[ident]
        mapping = decl.mapping
        assert mapping is not None, f"{ident} has no mapping"
        default = float(mapping.get("defaultValue", "0"))
        entries = [(parse_value(decl.base_type, e.get("mapKey", "")),
                    float(e.get("mappedValue", "0")), e.get("caseSensitive", "true") == "true")
                   for e in mapping.findall(Q + "mapEntry")]

        def lookup(v: Any) -> float:
            for key, mapped, case in entries:
                if key == v or (not case and isinstance(v, str) and key.lower() == v.lower()):
                    return mapped
            return default

        if value is None:
            total = 0.0 if decl.cardinality != "single" else default
        elif decl.cardinality == "single":
            total = lookup(value)
        else:
            total = sum(lookup(v) for v in set(value))  # each distinct value counted once
        if mapping.get("lowerBound") is not None:
            total = max(total, float(mapping.get("lowerBound", "0")))
        if mapping.get("upperBound") is not None:
            total = min(total, float(mapping.get("upperBound", "0")))
        return total


def _pair(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) for v in value)


def _null(value: Any) -> bool:
    return value is None or (isinstance(value, (list, tuple)) and not _pair(value)
                             and len(value) == 0) or value == ""


def xsd_regex(pattern: str) -> str:
    """An XML Schema regular expression as Python's `re` reads it (the subset QTI exports
    use: literals, escapes, classes, `.`, `*`): `.` matches anything but line ends."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        out.append("[^\\n\\r]" if c == "." else ("\\$" if c == "$" else c))
        i += 1
    return "".join(out)


class TestSession:
    """Runs an assessmentTest's outcome processing over its items' outcomes, as a QTI 2.1 test
    session does (Assessment Test, Section and Item Information Model, "Outcome Processing"):
    each `assessmentItemRef` is run by its `Engine`, `testVariables` gathers an outcome over
    the items, and `variable` reads a test outcome or, as `<item ref>.<outcome>` (the identifier
    split at its first `.`), an item's outcome. An item ref whose identifier has a `.` cannot be
    referred to that way: the session refuses it (`ValueError`), as a QTI engine does."""

    __test__ = False  # not a pytest class

    def __init__(self, test: etree._Element, items: dict[str, etree._Element]) -> None:
        """`items`: each assessmentItemRef's href (as written) -> its assessmentItem."""
        self.test = test
        self.refs: dict[str, etree._Element] = {}
        for ref in test.iter(Q + "assessmentItemRef"):
            ident = ref.get("identifier", "")
            if "." in ident:
                raise ValueError(f"assessmentItemRef {ident!r}: an identifier with '.' cannot "
                                 f"be referred to as {ident}.SCORE")
            if ident in self.refs:
                raise ValueError(f"assessmentItemRef {ident!r} is not unique")
            self.refs[ident] = items[ref.get("href", "")]
        self.decls = {d.identifier: d for d in map(Declaration, test.iter(Q + "outcomeDeclaration"))}

    def run(self, responses: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """The test's outcomes, with each item given `responses[ref identifier]` (none: its
        correct response where it declares one)."""
        self.item_outcomes: dict[str, dict[str, Any]] = {}
        for ident, item in self.refs.items():
            engine = Engine(item)
            given = responses.get(ident)
            if given is None:
                given = {d.identifier: d.correct for d in engine.decls.values()
                         if d.correct is not None}
            self.item_outcomes[ident] = engine.run(given)
        self.values = {k: d.default for k, d in self.decls.items()}
        processing = self.test.find(Q + "outcomeProcessing")
        for rule in [] if processing is None else processing:
            if not isinstance(rule.tag, str):
                continue
            if etree.QName(rule).localname != "setOutcomeValue":
                raise NotImplementedError(etree.QName(rule).localname)
            self.values[rule.get("identifier", "")] = self.eval(rule[0])
        return self.values

    def variable(self, identifier: str) -> Any:
        """A test outcome, or `<item ref>.<outcome>`: the item's outcome."""
        if identifier in self.values:
            return self.values[identifier]
        ref, dot, name = identifier.partition(".")
        if not dot or ref not in self.item_outcomes:
            raise KeyError(f"no test outcome or item ref for {identifier!r}")
        return self.item_outcomes[ref][name]

    def eval(self, el: etree._Element) -> Any:
        name = etree.QName(el).localname
        if name == "testVariables":
            ident = el.get("variableIdentifier", "")
            return float(sum(o.get(ident) or 0 for o in self.item_outcomes.values()))
        if name == "variable":
            return self.variable(el.get("identifier", ""))
        if name == "baseValue":
            return parse_value(el.get("baseType", ""), el.text or "")
        if name == "sum":
            return float(sum(self.eval(k) for k in el if isinstance(k.tag, str)))
        raise NotImplementedError(name)
