"""Line and column of a field inside a YAML file, computed only when someone asks.

Loading a bank uses the plain C loader, which keeps no positions (composing every file with marks
costs several times the plain load). When an error or a lint finding needs `path:line:col`, the
position is found in the text: `find` walks the indented keys of block-style YAML (as people and
`bank.write` write item files) in microseconds; whenever it cannot be sure (flow style, quoted
keys, list steps, a missing field) the file is composed once more with marks and the field path
is walked (`locate`, `locate_in`), so both ways agree. `Locator` reads each file once per run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from functools import lru_cache

import yaml

Loc = Sequence[str | int]

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@lru_cache(maxsize=256)
def _compose_cached(path: str, mtime_ns: int, size: int) -> yaml.Node | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return yaml.compose(fh, Loader=_Loader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None


def _compose(path: str) -> yaml.Node | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _compose_cached(path, st.st_mtime_ns, st.st_size)


def clear_cache() -> None:
    _compose_cached.cache_clear()


def locate(path: str, loc: Loc) -> tuple[int, int]:
    """1-based (line, column) of the field at `loc` in the YAML file at `path`.

    Walks as deep as the file goes: for a missing field this is the mapping that lacks it; for a
    field of a mapping it is its key (where an author looks), for a list entry the entry.
    Returns (1, 1) when the file cannot be composed.
    """
    node = _compose(path)
    if node is None:
        return (1, 1)
    return locate_in(node, loc)


def locate_in(node: yaml.Node, loc: Loc) -> tuple[int, int]:
    mark = node.start_mark
    for step in loc:
        child = None
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == str(step):
                    child, mark = v, k.start_mark
                    break
        elif (
            isinstance(node, yaml.SequenceNode)
            and isinstance(step, int)
            and 0 <= step < len(node.value)
        ):
            child = node.value[step]
            mark = child.start_mark
        if child is None:
            break
        node = child
    return (mark.line + 1, mark.column + 1)


_NEXT = re.compile(r"\n( *)([^\s#])")
_DEDENT: dict[int, re.Pattern[str]] = {}


def find(text: str, loc: Loc) -> tuple[int, int] | None:
    """The position of `loc` in `text` ("\n" + the file), found with `str.find` step by step;
    None when the file is not plain block YAML along the way (the caller then composes it)."""
    m = _NEXT.search(text)
    if m is None or m.group(1) or m.group(2) in "-{[%":
        return None
    pos, ind = 0, 0
    mark = (text.count("\n", 0, m.start() + 1), 1)
    for depth, step in enumerate(loc):
        if not isinstance(step, str):
            return None
        needle = "\n" + " " * ind + step + ":"
        j = text.find(needle, pos)
        while j >= 0 and text[j + len(needle): j + len(needle) + 1] not in ("", " ", "\t", "\r", "\n"):
            j = text.find(needle, j + 1)
        if j < 0:
            return None
        if ind:
            dedent = _DEDENT.get(ind)
            if dedent is None:
                dedent = _DEDENT[ind] = re.compile(r"\n {0,%d}[^\s#]".replace("%d", str(ind - 1)))
            if dedent.search(text, pos, j + 1):
                return None  # left the parent mapping before finding the key
        mark = (text.count("\n", 0, j + 1), ind + 1)
        if depth == len(loc) - 1:
            break
        eol = text.find("\n", j + 1)
        rest = text[j + len(needle): eol if eol >= 0 else len(text)].strip()
        if eol < 0 or (rest and not rest.startswith("#")):
            return None
        m = _NEXT.search(text, eol)
        if m is None or len(m.group(1)) <= ind or m.group(2) == "-":
            return None
        pos, ind = eol, len(m.group(1))
    return mark


class Locator:
    """Positions for one lint run: each file is read once, if a finding needs it."""

    def __init__(self) -> None:
        self._text: dict[str, str | None] = {}

    def __call__(self, path: str, loc: Loc) -> tuple[int, int]:
        if path not in self._text:
            try:
                with open(path, encoding="utf-8") as fh:
                    self._text[path] = "\n" + fh.read()
            except (OSError, UnicodeDecodeError):
                self._text[path] = None
        text = self._text[path]
        if text is not None and "\r" not in text:
            hit = find(text, tuple(loc))
            if hit is not None:
                return hit
        return locate(path, loc)
