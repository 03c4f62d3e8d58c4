"""Field path -> (line, column) in an item file, fast: one line scan of block-style YAML.

`dpassess.bank.positions.locate` composes the whole file with marks (about 2 ms a file), which is
more than loading it. Item files are block YAML written by people or by `dpassess.bank.write`, so a
scan of indented keys finds the field in microseconds. Whenever the scan is not sure (flow
style, quoted keys, list steps, a missing field), it falls back to `locate`, so both agree.
"""

from __future__ import annotations

import re

from dpassess.bank.positions import locate
from dpassess.lint.registry import Loc


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _content(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith("#")


def scan(lines: list[str], loc: Loc) -> tuple[int, int] | None:
    """The position of `loc`, or None when a line scan cannot be sure."""
    n = len(lines)
    lo = next((i for i in range(n) if _content(lines[i]) and not lines[i].startswith(("---", "%"))), None)
    if lo is None:
        return None
    ind = _indent(lines[lo])
    if ind or lines[lo].lstrip().startswith(("-", "{", "[")):
        return None
    mark = (lo + 1, ind + 1)
    for depth, step in enumerate(loc):
        if not isinstance(step, str):
            return None
        prefix = " " * ind + step + ":"
        found = None
        for j in range(lo, n):
            line = lines[j]
            if not _content(line):
                continue
            li = _indent(line)
            if li < ind:
                break
            if li == ind and line.startswith(prefix) and (
                len(line) == len(prefix) or line[len(prefix)] in " \t"
            ):
                found = j
                break
        if found is None:
            return None
        mark = (found + 1, ind + 1)
        if depth == len(loc) - 1:
            break
        rest = lines[found][len(prefix):].strip()
        if rest and not rest.startswith("#"):
            return None  # an inline value (scalar, flow collection or block scalar)
        child = next((j for j in range(found + 1, n) if _content(lines[j])), None)
        if child is None or _indent(lines[child]) <= ind or lines[child].lstrip().startswith("-"):
            return None
        lo, ind = child, _indent(lines[child])
    return mark


_KEY = re.compile(r"^( *)([A-Za-z0-9_][\w.-]*):(?:[ \t]+(.*))?$")


def index(lines: list[str]) -> dict[Loc, tuple[int, int]]:
    """(line, column) of every plain key of a block-style YAML file, by its path.

    Sequences, flow collections and block scalars are skipped (their paths are not indexed, so
    a lookup falls back to composing the file).
    """
    out: dict[Loc, tuple[int, int]] = {}
    stack: list[tuple[int, str]] = []
    skip_above: int | None = None  # skip lines indented more than this (block scalar, list)
    for n, raw in enumerate(lines):
        line = raw.rstrip("\r")
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        ind = len(line) - len(line.lstrip(" "))
        if skip_above is not None:
            if ind > skip_above:
                continue
            skip_above = None
        if not out and ind == 0:
            if s.startswith(("---", "%")):
                continue
            out[()] = (n + 1, 1)
        if s.startswith("-"):
            skip_above = ind  # a list entry: opaque (a lookup inside falls back)
            continue
        m = _KEY.match(line)
        while stack and stack[-1][0] >= ind:
            stack.pop()
        if not m:
            continue
        key, value = m.group(2), (m.group(3) or "").strip()
        path = (*(k for _, k in stack), key)
        out.setdefault(path, (n + 1, ind + 1))
        if not value or value.startswith("#"):
            stack.append((ind, key))
        elif value[0] in "|>\"'[{":
            skip_above = ind  # block scalar, quoted or flow value: may run over several lines
    return out


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
