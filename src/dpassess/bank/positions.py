"""Line and column of a field inside a YAML file, computed only when someone asks.

Loading a bank uses the plain C loader, which keeps no positions (composing every file with marks
costs several times the plain load). When an error or a lint finding needs `path:line:col`, the file
is composed once more with marks and the field path (`("text", "id", "options", "a")`) is walked.
"""

from __future__ import annotations

import os
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
