"""Load a bank from disk: `bank.yaml` plus one YAML file per item, every error at once.

Data flows one way: files -> raw data (PyYAML's C loader) -> pydantic models. Positions are not
kept while loading; `positions.locate` recomputes them for the few fields that need one.
"""

from __future__ import annotations

import codecs
import datetime
import difflib
import os
import re
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from dpassess.bank.files import BANK_FILE as BANK_FILE
from dpassess.bank.files import find_banks as find_banks
from dpassess.bank.files import item_files as item_files
from dpassess.bank.positions import locate, locate_in
from dpassess.diagnostics import BankLoadError, Diagnostic, UsageError, format_field
from dpassess.model import (
    ITEM_CLASSES,
    Bank,
    BankConfig,
    Item,
    ItemValueError,
    LoadedItem,
    LoadedStimulus,
    Stimulus,
    UnknownItemType,
    item_class,
)
from dpassess.runtime import parallel
from dpassess.runtime.gcpause import gc_paused
from dpassess.runtime.parallel import chunks, worker_count

#: Largest file accepted. An item file is a few kB; anything this big is a mistake or an attack.
MAX_FILE_BYTES = 1 << 20

_STR, _MAP, _SEQ, _MERGE = (
    f"tag:yaml.org,2002:{t}" for t in ("str", "map", "seq", "merge")
)

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: The safe loader's implicit resolvers, by a plain scalar's first character ('' for the empty
#: scalar), each list followed by those tried on every scalar (PyYAML joins the two per scalar).
_Resolvers = tuple[tuple[str, re.Pattern[str]], ...]
_WILDCARD: _Resolvers = tuple(_Base.yaml_implicit_resolvers.get(None, []))
_RESOLVERS: dict[str, _Resolvers] = {
    first: (*rs, *_WILDCARD) for first, rs in _Base.yaml_implicit_resolvers.items()
    if first is not None
}


#: The tag of each short plain scalar resolved so far. The keys and many values of item files
#: (`options`, `text`, `title`, `opt-0`, `true`) repeat in every file, and a dict look-up costs
#: less than the regular expressions of their first character; the tag depends on the text
#: alone. Bounded: texts longer than _SEEN_TEXT are not kept, nor any after _SEEN_MAX.
_SEEN: dict[str, str] = {}
_SEEN_TEXT, _SEEN_MAX = 64, 1 << 16


def _implicit_tag(value: str) -> str:
    for tag, regexp in _RESOLVERS.get(value[:1], _WILDCARD):
        if regexp.match(value):
            return tag
    return _STR


class _Loader(_Base):  # type: ignore[misc]
    """PyYAML's safe loader with its tag resolution done in fewer steps (about 20% of parsing an
    item file): the same tags, since the safe loader has no path resolvers."""

    def resolve(self, kind: type, value: str, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode:
            if implicit[0]:
                tag = _SEEN.get(value)
                if tag is None:
                    tag = _implicit_tag(value)
                    if len(value) <= _SEEN_TEXT and len(_SEEN) < _SEEN_MAX:
                        _SEEN[value] = tag
                return tag
            return _STR
        return _SEQ if kind is yaml.SequenceNode else _MAP

    def descend_resolver(self, current_node: object, current_index: object) -> None:
        pass  # only path resolvers use it

    def ascend_resolver(self) -> None:
        pass


class DuplicateKeyError(yaml.MarkedYAMLError):
    """A key written twice in one mapping. PyYAML keeps the last value without a word; we refuse.

    `loc` is the field path of the second occurrence (its last step is the key), `first_line` the
    1-based line of the first; `problem_mark` points at the second occurrence.
    """

    def __init__(self, mapping: yaml.Node, first: yaml.Node, second: yaml.Node) -> None:
        key = str(second.value) if isinstance(second, yaml.ScalarNode) else _kind(second)
        super().__init__(
            "while constructing a mapping", first.start_mark,
            f"found duplicate key {key!r}", second.start_mark,
        )
        self.key = key
        self.first_line = first.start_mark.line + 1
        self.loc: list[str | int] = [key]
        #: the node `loc` starts from; each enclosing collection prepends its step as the error rises
        self.node = mapping

    def within(self, node: yaml.Node, step: str | int | None = None) -> DuplicateKeyError:
        if step is None:  # a sequence: find the entry by identity (aliases: the first is built)
            step = next(i for i, x in enumerate(node.value) if x is self.node)
        self.loc.insert(0, step)
        self.node = node
        return self


def _kind(node: yaml.Node) -> str:
    """`mapping`, `sequence` or `scalar`: what a key that is no plain string is."""
    return str(getattr(node, "id", "node"))


def load_yaml(text: str) -> Any:
    """`yaml.load(text, Loader=CSafeLoader)`, same result and errors, about 30% faster.

    The C parser composes the node tree as usual; plain mappings with string keys, sequences and
    strings (nearly all of an item file) are then built directly, and every other node (numbers,
    booleans, dates, merge keys, non-string keys, unknown tags) goes to PyYAML's own safe
    constructor. Aliases give the same shared object, as PyYAML does (recursive ones included).

    Deliberate differences: a key repeated in a mapping (at any depth) raises
    DuplicateKeyError where PyYAML would keep the last value (keys a merge (`<<`) brings in are
    not duplicates: explicit keys override them, as PyYAML defines); `!!set`, `!!omap`,
    `!!pairs` and `!!binary` raise ConstructorError (a set's order would follow the hash seed);
    a number Python cannot build (over 4,300 digits) raises ValueTooLarge at its position.
    """
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        return None if node is None else _build(node, loader, {})
    finally:
        loader.dispose()


#: Tags of collections that build Python sets and ordered pairs: their order would follow the
#: interpreter's hash seed (a set) or they carry nothing an item file needs; refused.
_REFUSED_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("set", "omap", "pairs", "binary"))


class ValueTooLarge(yaml.MarkedYAMLError):
    """A scalar PyYAML cannot build (an integer of more than 4,300 digits)."""


def _scalar(node: yaml.Node, loader: Any) -> Any:
    if node.tag in _REFUSED_TAGS:
        raise yaml.constructor.ConstructorError(
            None, None, f"found unacceptable tag '{node.tag}'", node.start_mark)
    try:
        return loader.construct_object(node, deep=True)
    except ValueError as exc:  # int('9' * 5000): Python's limit on digits
        raise ValueTooLarge(None, None, f"{exc}".split(";")[0], node.start_mark) from None


def _build(node: yaml.Node, loader: Any, memo: dict[int, Any]) -> Any:
    cls, tag = node.__class__, node.tag
    if cls is yaml.ScalarNode:
        return node.value if tag == _STR else _scalar(node, loader)
    done = memo.get(id(node))
    if done is not None:
        return done
    if cls is yaml.MappingNode and tag == _MAP:
        pairs = node.value
        if not all(k.__class__ is yaml.ScalarNode and k.tag == _STR for k, _ in pairs):
            _check_keys(node, loader, set())
            return loader.construct_object(node, deep=True)
        out: dict[str, Any] = {}
        memo[id(node)] = out
        try:
            for k, v in pairs:  # a string value (most of a file) without a call
                out[k.value] = (v.value if v.__class__ is yaml.ScalarNode and v.tag == _STR
                                else _build(v, loader, memo))
        except DuplicateKeyError as exc:
            raise exc.within(node, k.value) from None
        if len(out) != len(pairs):  # a key repeated: the only cost on the usual path
            seen: dict[str, yaml.Node] = {}
            for k, _ in pairs:
                if k.value in seen:
                    raise DuplicateKeyError(node, seen[k.value], k)
                seen[k.value] = k
        return out
    if cls is yaml.SequenceNode and tag == _SEQ:
        seq: list[Any] = []
        memo[id(node)] = seq
        try:
            seq.extend([x.value if x.__class__ is yaml.ScalarNode and x.tag == _STR
                        else _build(x, loader, memo) for x in node.value])
        except DuplicateKeyError as exc:
            raise exc.within(node) from None
        return seq
    if tag in _REFUSED_TAGS:
        raise yaml.constructor.ConstructorError(
            None, None, f"found unacceptable tag '{tag}'", node.start_mark)
    _check_keys(node, loader, set())
    try:
        return loader.construct_object(node, deep=True)
    except ValueError as exc:
        raise ValueTooLarge(None, None, f"{exc}".split(";")[0], node.start_mark) from None


_UNKNOWN = object()


def _key_of(k: yaml.Node, loader: Any) -> Any:
    """The Python key a key node constructs to, or _UNKNOWN (PyYAML then reports any problem)."""
    if k.__class__ is not yaml.ScalarNode:
        return _UNKNOWN  # a collection: unhashable, PyYAML refuses it
    if k.tag == _STR:
        return k.value
    try:
        key = loader.construct_object(k)  # cached: PyYAML reuses this very object
        hash(key)
    except Exception:  # PyYAML raises its own error for it later
        # (its constructor marks a node as under construction and does not unmark it when the
        # construction fails: unmarked here, so that the later error is that error, not
        # "recursive node")
        loader.recursive_objects.pop(k, None)
        return _UNKNOWN
    return key


def _check_keys(node: yaml.Node, loader: Any, done: set[int]) -> None:
    """Raise DuplicateKeyError for a key repeated in any mapping at or below `node`.

    For the nodes PyYAML's constructor builds (merge keys, non-string keys, tags), checked before
    it runs: its merge flattening rewrites the mappings. Keys equal as Python values (`1`, `1.0`,
    `true`) are duplicates too, since the dict keeps only one. Repeated `<<` keys are not: PyYAML
    merges them all.
    """
    if node.__class__ is yaml.ScalarNode or id(node) in done:
        return
    done.add(id(node))
    if isinstance(node, yaml.SequenceNode):
        for i, x in enumerate(node.value):
            try:
                _check_keys(x, loader, done)
            except DuplicateKeyError as exc:
                raise exc.within(node, i) from None
        return
    first: dict[Any, yaml.Node] = {}
    for k, v in node.value:
        if k.tag != _MERGE:
            key = _key_of(k, loader)
            if key is not _UNKNOWN:
                if key in first:
                    raise DuplicateKeyError(node, first[key], k)
                first[key] = k
        try:
            _check_keys(v, loader, done)
        except DuplicateKeyError as exc:
            step = str(k.value) if k.__class__ is yaml.ScalarNode else _kind(k)
            raise exc.within(node, step) from None


def _pos(err: yaml.YAMLError) -> tuple[int, int]:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)


def _syntax_error(path: str, text: str, exc: yaml.YAMLError) -> Diagnostic:
    """A YAML syntax error at what caused it, not only where the parser gave up.

    PyYAML's `context_mark` is the cause when its context is a scalar or a flow collection
    being scanned (a quote or bracket opened and never closed: the parser gives up at the end
    of the file). A block mapping's context is only where the mapping starts; there, a quoted
    string that ran over several lines up to where the parser gave up is the usual cause (an
    unclosed quote swallowed the next keys until the next quote), and is named instead. The
    message keeps PyYAML's own two sentences and the place it gave up."""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None) or ""
    start = getattr(exc, "context_mark", None)
    end = getattr(exc, "problem_mark", None)
    if end is None:
        line, col = _pos(exc)
        return Diagnostic(path, line, col, "", f"invalid YAML: {problem}")
    gave_up = f"at line {end.line + 1}, column {end.column + 1}"
    if (context and start is not None and not context.startswith("while parsing a block")
            and (start.line, start.column) < (end.line, end.column)):
        return Diagnostic(path, start.line + 1, start.column + 1, "",
                          f"invalid YAML: {context} here, {problem} {gave_up}")
    quote = _runaway_quote(text, end.line)
    if quote is not None:
        return Diagnostic(
            path, quote[0] + 1, quote[1] + 1, "",
            f"invalid YAML: the quoted string opened here runs on to line {end.line + 1}, "
            f"where the parser gave up ({context + ': ' if context else ''}{problem} {gave_up})",
            help="Close the quote where the text ends (a quote inside the text is written twice "
            "in single quotes, or escaped \\\" in double quotes).")
    return Diagnostic(path, end.line + 1, end.column + 1, "", f"invalid YAML: {problem}")


def _runaway_quote(text: str, line: int) -> tuple[int, int] | None:
    """(line, column) of the start of the last quoted scalar that spans several lines and
    ends on `line` (0-based), scanned up to the error (linear, by PyYAML's own scanner)."""
    found = None
    try:
        for tok in yaml.scan(text, Loader=yaml.SafeLoader):
            if tok.start_mark.line > line:
                break
            if (isinstance(tok, yaml.ScalarToken) and tok.style in ('"', "'")
                    and tok.end_mark.line == line and tok.start_mark.line < line):
                found = (tok.start_mark.line, tok.start_mark.column)
    except yaml.YAMLError:
        pass
    return found


def read_yaml(path: str) -> tuple[Any, list[Diagnostic]]:
    """Parse one YAML file with the safe C loader. Returns (data, diagnostics).

    Only regular files are read (a named pipe would block, a device never ends)."""
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            kind = ("a named pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
                    else "a device")
            return None, [Diagnostic(path, 1, 1, "", f"is {kind}, not a regular file: not read")]
        with open(path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            size = os.path.getsize(path)
            return None, [
                Diagnostic(path, 1, 1, "", f"file is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}")
            ]
    except IsADirectoryError:
        return None, [Diagnostic(path, 1, 1, "", "is a directory, not a YAML file")]
    except OSError as exc:
        return None, [Diagnostic(path, 1, 1, "", f"cannot read: {exc.strerror or exc}")]
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return None, [Diagnostic(path, 1, 1, "", "is UTF-16 (it starts with a UTF-16 byte-order "
                                 "mark): save it as UTF-8")]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        col = exc.start - (before.rfind(b"\n") + 1) + 1
        return None, [
            Diagnostic(path, line, col, "", f"not UTF-8: byte 0x{raw[exc.start]:02x} cannot be decoded")
        ]
    try:
        data = load_yaml(text)
    except DuplicateKeyError as exc:
        line, col = _pos(exc)
        msg = f"duplicate key {exc.key!r} (first at line {exc.first_line})"
        return None, [Diagnostic(path, line, col, format_field(exc.loc), msg)]
    except ValueTooLarge as exc:
        line, col = _pos(exc)
        return None, [Diagnostic(path, line, col, "", f"number too large: {exc.problem}")]
    except yaml.constructor.ConstructorError as exc:
        line, col = _pos(exc)
        m = re.search(r"'([^']+)'", str(exc.problem or ""))
        tag = (m.group(1) if m else "").replace("tag:yaml.org,2002:", "!!")
        msg = f"YAML tag {tag} not allowed (only plain data is accepted)"
        return None, [Diagnostic(path, line, col, "", msg)]
    except yaml.YAMLError as exc:
        return None, [_syntax_error(path, text, exc)]
    if data is None:
        return None, [Diagnostic(path, 1, 1, "", "empty file")]
    if not isinstance(data, dict):
        return None, [
            Diagnostic(path, 1, 1, "", f"expected a mapping of fields, found {type(data).__name__}")
        ]
    return data, []


def _fields_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> list[str]:
    """Field names accepted by the (sub)model at `loc`, for 'did you mean' hints."""
    current: Any = model
    key_next = False  # the step after a mapping field (text: {en: ...}) is a key, not a field
    for step in loc[:-1]:
        if key_next or isinstance(step, int):
            key_next = False
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
        f = current.model_fields.get(step) or next(
            (v for v in current.model_fields.values() if v.alias == step), None
        )
        if f is None:
            return []
        ann = f.annotation
        args = (ann, *get_args(ann), *(a for x in get_args(ann) for a in get_args(x)))
        key_next = any(get_origin(a) in (dict, Mapping) for a in (ann, *get_args(ann)))
        current = next((a for a in args if isinstance(a, type) and issubclass(a, BaseModel)),
                       None)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return [f.alias or n for n, f in current.model_fields.items()]
    return []


#: What YAML makes of an unquoted word that is not a string (YAML 1.1: `yes`, `on`, `~` too).
_YAML_READS = ((bool, "a boolean"), (int, "a number"), (float, "a number"),
               (datetime.date, "a date"), (type(None), "null"))


def _scalar_text(node: yaml.Node | None, loc: tuple[str | int, ...]) -> str | None:
    """The text written in the file for the scalar at `loc` (None if there is none)."""
    for step in loc:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode)
                         and k.value == str(step)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            node = node.value[step]
        else:
            return None
    return node.value if isinstance(node, yaml.ScalarNode) else None


def _not_a_string(err: dict[str, Any], written: str | None) -> str | None:
    """'`true` is read by YAML as a boolean: ...' where text (an id, an option id) was expected.

    For string fields, the key (one option id or a list of them) and option list entries (an
    option id stands for `{id: ...}`), when YAML turned the unquoted word into something else.
    """
    kind, loc, value = err["type"], tuple(err["loc"]), err["input"]
    if not (
        kind == "string_type"
        or (kind == "tuple_type" and loc == ("key",))
        or (kind == "model_type" and len(loc) == 2 and loc[0] == "options")
    ):
        return None
    what = next((name for t, name in _YAML_READS if isinstance(value, t)), None)
    if what is None:
        return None
    if written is None:  # a mapping key, or no file to read: what YAML would write back
        written = yaml.safe_dump(value).removesuffix("\n...\n").strip()
    if value is None and not written:
        return "no value given" + (": write the option id, key: <id>" if loc == ("key",) else "")
    option = loc[0] in ("key", "options", "weights") or (
        loc[-1] == "[key]" and ("options" in loc or "feedback" in loc)
    )
    thing = "the option id" if option else "it"
    quoted = '"' + written.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if loc and loc[-1] == "[key]":
        example = f"{quoted}: ..."
    elif loc and isinstance(loc[-1], str):
        example = f"{loc[-1]}: {quoted}"
    else:
        example = quoted
    return f"`{written}` is read by YAML as {what}: write {thing} in quotes, {example}"


#: pydantic's "Input should be a valid tuple" and the like, said in the file's terms.
_SHAPES = {
    **dict.fromkeys(("tuple_type", "list_type", "set_type", "frozen_set_type"),
                    ("a list", "[a, b] or one '- ' line per entry")),
    **dict.fromkeys(("dict_type", "model_type", "model_attributes_type"),
                    ("a mapping", "one 'name: value' line per entry")),
}


def _found(value: Any) -> str:
    """What YAML made of a value, in words."""
    if value is None:
        return "nothing"
    if isinstance(value, str):
        return f"the text {value!r}"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return next((what for kind, what in _YAML_READS if isinstance(value, kind)), "a value")


#: pydantic's bound errors, in the file's terms.
_BOUNDS = {"greater_than": ("above", "gt"), "greater_than_equal": ("at least", "ge"),
           "less_than": ("below", "lt"), "less_than_equal": ("at most", "le")}


def _message(err: dict[str, Any], model: type[BaseModel], written: str | None = None) -> str:
    kind = err["type"]
    hint = _not_a_string(err, written)
    if hint is not None:
        return hint
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        loc = tuple(err["loc"])
        close = difflib.get_close_matches(str(loc[-1]), _fields_at(model, loc), n=1)
        if len(loc) == 1 and not close:
            owners = [t.value for t, cls in ITEM_CLASSES.items() if loc[0] in cls.model_fields]
            if owners:
                return (f"{loc[0]} is for {' and '.join(owners)} items only"
                        f" (this item is {get_args(model.model_fields['type'].annotation)[0]})")
        return "unknown field" + (f" (did you mean {close[0]!r}?)" if close else "")
    if kind in ("float_parsing", "float_type", "int_parsing", "int_type"):
        return (f"{err['input']!r} is not a number (write it with digits and a decimal point, "
                "e.g. 9.81)")
    bound = _BOUNDS.get(kind)
    if bound is not None:
        word, key = bound
        return f"must be {word} {err['ctx'][key]:g}, found {err['input']!r}"
    if kind == "finite_number":
        return f"{err['input']!r} is not a finite number"
    if kind == "string_too_long":
        return f"text too long (limit {err['ctx']['max_length']:,} characters)"
    if kind == "string_pattern_mismatch":
        loc = tuple(err["loc"])
        if loc and loc[0] == "key":
            return (f"{err['input']!r} is not an option id: keys name options by their ids, "
                    "not by letters")
        return f"{err['input']!r} does not match the pattern {err['ctx']['pattern']}"
    if kind in ("enum", "literal_error"):
        return f"{err['input']!r} is not one of {err['ctx']['expected']}"
    if kind in _SHAPES:
        want, how = _SHAPES[kind]
        return f"expected {want} ({how}), found {_found(err['input'])}"
    msg: str = err["msg"]
    return msg.removeprefix("Value error, ")


def _listed_options(node: yaml.Node | None) -> str:
    """' (options: a, b, c)': the option ids the file lists, for a key that names none."""
    options = None
    if isinstance(node, yaml.MappingNode):
        options = next((v for k, v in node.value if getattr(k, "value", None) == "options"), None)
    if not isinstance(options, yaml.SequenceNode):
        return ""
    ids = [_scalar_text(o, ("id",)) if isinstance(o, yaml.MappingNode) else _scalar_text(o, ())
           for o in options.value]
    return f" (options: {', '.join(i for i in ids if i)})" if any(ids) else ""


#: The kinds of cloze gap: pydantic names the one it tried in an error's path (`gaps.0.numerical`).
_GAP_TAGS = frozenset({"short_answer", "numerical", "choice", "multiple_response"})


def _untagged(loc: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """`loc` without the gap kind pydantic puts after `gaps.<n>`: the path in the file."""
    if "gaps" not in loc:
        return loc
    out: list[str | int] = []
    for step in loc:
        if (step in _GAP_TAGS and len(out) >= 2 and out[-2] == "gaps"
                and isinstance(out[-1], int)):
            continue
        out.append(step)
    return tuple(out)


def diagnostics_from(exc: ValidationError, path: str, model: type[BaseModel]) -> list[Diagnostic]:
    """Turn a pydantic error into diagnostics with positions (composes the file once)."""
    out: list[Diagnostic] = []
    node = None
    try:
        with open(path, encoding="utf-8") as fh:
            node = yaml.compose(fh, Loader=_Loader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):  # pragma: no cover - read_yaml passed
        node = None
    for err in exc.errors(include_url=False):
        loc = _untagged(tuple(err["loc"]))
        # Model validators only see the whole model: the exception carries the field path.
        inner = err.get("ctx", {}).get("error")
        if isinstance(inner, ItemValueError):
            problems = [(loc + tuple(sub), msg) for sub, msg in inner.problems]
        else:
            message = _message(dict(err), model, _scalar_text(node, loc))
            if loc[:1] == ("key",) and err["type"] == "string_pattern_mismatch":
                message += _listed_options(node)
                if _scalar_text(node, ("key",)) is not None:  # `key: B`, not a list
                    loc = ("key",)
            problems = [(loc, message)]
        for ploc, message in problems:
            line, col = locate_in(node, ploc) if node is not None else (1, 1)
            out.append(Diagnostic(path, line, col, format_field(ploc), message))
    return out


#: What one file of a bank holds: an item, or a stimulus that items are read with.
Parsed = Item | Stimulus


def load_item(path: str) -> tuple[Parsed | None, list[Diagnostic]]:
    """Load and validate one item file (or stimulus file: `type: stimulus`)."""
    data, diags = read_yaml(path)
    if data is None:
        return None, diags
    if data.get("type") == "stimulus":
        try:
            return Stimulus.model_validate(data), []
        except ValidationError as exc:
            return None, diagnostics_from(exc, path, Stimulus)
    try:
        cls = item_class(data)
    except UnknownItemType as exc:
        line, col = locate(path, ("type",))
        return None, [Diagnostic(path, line, col, "type", f"{exc} (or stimulus)")]
    try:
        return cls.model_validate(data), []  # type: ignore[return-value]
    except ValidationError as exc:
        return None, diagnostics_from(exc, path, cls)


def _in_bank(root: Path, files: list[str]) -> tuple[list[str], list[Diagnostic]]:
    """The files that are the bank's own, and a diagnostic for each link that is not read: a
    link to a folder, or to a file outside the bank (an item must not pull in a file from
    elsewhere: a link to /proc/self/environ would otherwise end up in the exports)."""
    real_root = os.path.realpath(root)
    keep: list[str] = []
    refused: list[Diagnostic] = []
    for f in files:
        if not os.path.islink(f):
            keep.append(f)
            continue
        target = os.path.realpath(f)
        if os.path.isdir(target):
            refused.append(Diagnostic(f, 1, 1, "", "is a link to a folder: not read (a bank's "
                                      "folders must be real folders inside it)"))
        elif os.path.commonpath([real_root, target]) != real_root:
            refused.append(Diagnostic(f, 1, 1, "", f"is a link to {target}, outside the bank: "
                                      "not read (copy the file into the bank)"))
        else:
            keep.append(f)
    return keep, refused


#: Below this many files a process pool costs more than it saves.
PARALLEL_MIN_FILES = 1500
#: Most files one worker task parses (a result of ~2 MB pickled).
CHUNK_FILES = 1000


def _load_chunk(files: list[str], chunk: range) -> list[tuple[Parsed | None, list[Diagnostic]]]:
    return [load_item(files[i]) for i in chunk]


def _load_items(
    files: list[str], jobs: int | None
) -> Iterable[tuple[Parsed | None, list[Diagnostic]]]:
    """load_item over `files`, in order; in worker processes when the bank is large (each
    parses a contiguous chunk, so the output does not depend on scheduling)."""
    n_jobs = worker_count(len(files), PARALLEL_MIN_FILES, jobs)
    if n_jobs <= 1:
        return map(load_item, files)
    parts = parallel.run(_load_chunk, files, chunks(len(files), n_jobs, most=CHUNK_FILES), n_jobs)
    return [r for part in parts for r in part]


def load_bank(
    path: str | os.PathLike[str],
    *,
    jobs: int | None = None,
    preloaded: Mapping[str, Parsed] | None = None,
) -> Bank:
    """Load the bank in folder `path` (which holds `bank.yaml`).

    `jobs`: worker processes for parsing (default: one per core for banks of
    PARALLEL_MIN_FILES files or more, else 1). The result does not depend on it.
    `preloaded`: items already parsed from these files (by the lint cache, whose key is the
    file's content), used instead of parsing them again.

    Raises BankLoadError with every problem in every file, or UsageError if `path` is no bank.
    """
    with gc_paused():  # items make no reference cycles; see dpassess.runtime.gcpause
        return _load_bank(path, jobs=jobs, preloaded=preloaded)


def _load_bank(
    path: str | os.PathLike[str],
    *,
    jobs: int | None,
    preloaded: Mapping[str, Parsed] | None,
) -> Bank:
    root = Path(path)
    cfg_path = root / BANK_FILE
    if not cfg_path.is_file():
        if not root.exists():
            raise UsageError(f"{root}: no such file or directory")
        raise UsageError(f"{root}: not a bank folder (no {BANK_FILE})")
    diags: list[Diagnostic] = []
    config: BankConfig | None = None
    data, d = read_yaml(str(cfg_path))
    diags += d
    if data is not None:
        try:
            config = BankConfig.model_validate(data)
        except ValidationError as exc:
            diags += diagnostics_from(exc, str(cfg_path), BankConfig)

    entries: list[LoadedItem] = []
    first_seen: dict[str, str] = {}
    files, refused = _in_bank(root, item_files(root))
    diags += refused
    if preloaded:
        todo = [f for f in files if f not in preloaded]
        fresh = dict(zip(todo, _load_items(todo, jobs), strict=True))
        results: Iterable[tuple[Parsed | None, list[Diagnostic]]] = (
            (preloaded[f], []) if f in preloaded else fresh[f] for f in files
        )
    else:
        results = _load_items(files, jobs)
    stimuli: list[LoadedStimulus] = []
    for f, (item, d) in zip(files, results, strict=True):
        diags += d
        if item is None:
            continue
        if item.id in first_seen:
            line, col = locate(f, ("id",))
            diags.append(
                Diagnostic(f, line, col, "id", f"duplicate id {item.id!r} (also in {first_seen[item.id]})")
            )
            continue
        first_seen[item.id] = f
        if config is not None:
            for lang in config.languages:
                if lang not in item.text:
                    line, col = locate(f, ("text",))
                    diags.append(
                        Diagnostic(f, line, col, "text", f"required language {lang!r} is missing")
                    )
        if isinstance(item, Stimulus):
            stimuli.append(LoadedStimulus(item, f))
        else:
            entries.append(LoadedItem(item, f))
    known = {s.stimulus.id for s in stimuli}
    for e in entries:
        if e.item.stimulus is not None and e.item.stimulus not in known:
            line, col = locate(e.path, ("stimulus",))
            what = "an item, not a stimulus" if e.item.stimulus in first_seen else "no stimulus"
            diags.append(Diagnostic(e.path, line, col, "stimulus",
                                    f"{e.item.stimulus!r} is {what} of this bank"))
    if diags or config is None:
        raise BankLoadError(diags)
    return Bank(config=config, root=root, entries=entries, config_path=str(cfg_path),
                stimuli=stimuli)


def load_banks(paths: Iterable[str | os.PathLike[str]]) -> list[Bank]:
    """Load every bank at or below each path; all load errors of all banks are raised together."""
    banks: list[Bank] = []
    diags: list[Diagnostic] = []
    seen: set[Path] = set()
    for p in paths:
        for root in find_banks(p):
            if root.resolve() in seen:
                continue
            seen.add(root.resolve())
            try:
                banks.append(load_bank(root))
            except BankLoadError as exc:
                diags += exc.diagnostics
    if diags:
        raise BankLoadError(diags)
    return banks
