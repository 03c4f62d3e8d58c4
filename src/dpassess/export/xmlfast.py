"""The XML writers' speed helpers: a tree written one child at a time, memoised subtrees, and
children written from bytes serialised once.

lxml copies a subtree several times faster than it builds one element by element, and a file of
10,000 items is better written a question at a time than held whole. None changes what a
builder writes, or how it reads:

- `copied`: a builder of an element from hashable arguments (the parts of an item that do not
  depend on its text: its scoring, its metadata) runs once per distinct arguments; each call
  returns a copy of that element of its own; `serialised(stream, *args)` gives, memoised, the
  bytes of that element as a child of a `ChildStream`'s parent.
- `hold` and `spliced`: a child that does not depend on the text (a QTI item's declarations
  and response processing) is left out of the tree: a placeholder stands there, and `spliced`
  writes the tree with its `serialised` bytes in the placeholder's line. It is then neither
  copied nor serialised again: the bytes are those of the tree holding the child.
- `ChildStream`: Moodle XML writes one `<question>` of `<quiz>` at a time, the QTI manifest one
  `<resource>` at a time, so memory holds one child, never the whole file. `ChildStream(out,
  parent)` writes the document `parent` belongs to up to where a new last child of `parent` would
go; `write(child)` writes `child` there (or a builder adds children to `stream.parent` and
`flush()` writes them); `close()` writes the rest. The bytes are exactly those
of `etree.tostring(root, pretty_print=True)` with every child in place: each child is serialised
inside an empty copy of its ancestors (same tags, same namespace declarations, so libxml2
indents it to the same depth and declares no namespace again), and only those ancestors' lines
are cut away.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Mapping
from functools import lru_cache
from itertools import pairwise
from typing import IO, Generic, ParamSpec, cast

from lxml import etree

P = ParamSpec("P")

_MARK = "dpassess: children go here"


#: lxml's copy of an element and its subtree (lxml-stubs 0.5 does not declare it)
_copy: Callable[[etree._Element], etree._Element] = etree._Element.__copy__  # type: ignore[attr-defined]


class copied(Generic[P]):
    """`build`, memoised: the element it builds from given (hashable) arguments is built once;
    each call returns a copy of its own, which the caller may change and put in a tree (a
    namespace its new ancestors declare is not declared again)."""

    def __init__(self, build: Callable[P, etree._Element]) -> None:
        self.memo = lru_cache(maxsize=4096)(build)
        self._bytes = lru_cache(maxsize=4096)(self._serialise)
        self.__doc__ = build.__doc__

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> etree._Element:
        # lxml's copy copies the whole subtree, as deepcopy does, without deepcopy's memo
        # (called directly: copy.copy only looks the method up)
        return _copy(self.memo(*args, **cast(dict[str, Hashable], kwargs)))

    def serialised(self, stream: ChildStream, *args: P.args, **kwargs: P.kwargs) -> bytes:
        """`stream.serialised(self(*args))`, memoised: the bytes of the element as a child of
        `stream`'s parent (to `hold` in a tree like it, or to write)."""
        return self._bytes(stream, args, tuple(kwargs.items()))

    def _serialise(self, stream: ChildStream, args: tuple[object, ...],
                   kwargs: tuple[tuple[str, object], ...]) -> bytes:
        return stream.serialised(_copy(self.memo(*args, **dict(kwargs))))

    def cache_clear(self) -> None:
        self.memo.cache_clear()
        self._bytes.cache_clear()


class ChildStream:
    """See the module docstring. `parent` must hold element children only (no text between
    them), as the writers' `<quiz>` and `<resources>` do, and get at least one (lxml writes a
    parent without children as `<parent/>`)."""

    def __init__(self, out: IO[bytes], parent: etree._Element, *,
                 xml_declaration: bool = False) -> None:
        self.out = out
        head, self.tail = _split_at_new_child(parent, xml_declaration)
        out.write(head)
        # the stand-in ancestors: root .. parent, empty, each declaring what the real one does
        chain = [parent, *parent.iterancestors()][::-1]
        self.root = self.parent = etree.Element(chain[0].tag, nsmap=nsmap(chain[0].nsmap))
        for above, real in pairwise(chain):
            own = {p: uri for p, uri in real.nsmap.items() if above.nsmap.get(p) != uri}
            self.parent = etree.SubElement(self.parent, real.tag, nsmap=nsmap(own) or None)
        before, after = _split_at_new_child(self.parent, False)
        self.skip, self.keep = len(before), -len(after)

    def write(self, child: etree._Element) -> None:
        """Write `child` (an element of no other tree) as the parent's next child; it is left
        without a parent."""
        self.parent.append(child)
        self.flush()

    def flush(self) -> None:
        """Write the children put into `self.parent` (a stand-in for the real parent, for a
        builder to add children to), in order, and remove them."""
        self.out.write(self._taken())

    def flushed(self) -> bytes:
        """The bytes `flush()` would write, not written (to keep, and `write_bytes` later):
        the children are removed as by `flush()`."""
        return bytes(self._taken())

    def serialised(self, child: etree._Element) -> bytes:
        """The bytes `write(child)` would write, not written."""
        self.parent.append(child)
        return self.flushed()

    def write_bytes(self, data: bytes) -> None:
        """Write children as `flushed` or `serialised` gave them."""
        self.out.write(data)

    def _taken(self) -> memoryview:
        data = etree.tostring(self.root, encoding="UTF-8", xml_declaration=False,
                              pretty_print=True)
        del self.parent[:]
        return memoryview(data)[self.skip:self.keep]

    def close(self) -> None:
        self.out.write(self.tail)


#: The tag of a placeholder `hold` puts in a tree: none the writers write (no namespace); its
#: attribute `n` is the index of its bytes in `held`.
SPLICE = "dpassess-splice"
_SPLICED = re.compile(rb'<dpassess-splice n="([0-9]+)"/>')


def hold(parent: etree._Element, data: bytes, held: list[bytes]) -> None:
    """Put into `parent` a placeholder for children serialised as `data` (what `ChildStream.
    serialised` gives for a parent like `parent`: same tags above, same namespaces declared),
    appended to `held`; `spliced` writes `data` in its place. `parent` must hold element
    children only (no text: the pretty printer then puts each on a line of its own). When
    `parent`'s last child is the last placeholder put into `held`, `data` joins its bytes."""
    if held and len(parent) and parent[-1].get("n") == str(len(held) - 1) and (
            parent[-1].tag == SPLICE):
        held[-1] += data
        return
    etree.SubElement(parent, SPLICE, n=str(len(held)))
    held.append(data)


def spliced(root: etree._Element, held: list[bytes], *, xml_declaration: bool = False
            ) -> bytes:
    """`root` pretty-printed (UTF-8), each placeholder `hold` put into it written as the bytes
    it holds (`held`): the bytes of the tree with those children in place. (A placeholder is
    an empty element on a line of its own; text never holds its tag: `<` is escaped.)"""
    data = etree.tostring(root, encoding="UTF-8", xml_declaration=xml_declaration,
                          pretty_print=True)
    if not held:
        return data
    parts = _SPLICED.split(data)  # text, index, text, index, ..., text
    if sorted(int(n) for n in parts[1::2]) != list(range(len(held))):
        raise ValueError(f"placeholders written: {parts[1::2]}, held: {len(held)}")
    last = len(parts) - 1
    out = []
    for i in range(0, len(parts), 2):
        part = parts[i]
        start = 0 if i == 0 else part.index(b"\n") + 1  # the rest of a placeholder's line
        end = len(part) if i == last else part.rindex(b"\n") + 1  # a placeholder's indent
        out.append(part[start:end])
        if i < last:
            out.append(held[int(parts[i + 1])])
    return b"".join(out)


def nsmap(mapping: Mapping[str | None, str]) -> Mapping[str, str]:
    """`mapping` as lxml's `nsmap` argument, where None is the default namespace's prefix
    (lxml-stubs 0.5 leaves None out of the argument's type)."""
    return cast("Mapping[str, str]", mapping)


def _split_at_new_child(parent: etree._Element, xml_declaration: bool) -> tuple[bytes, bytes]:
    """The document's bytes before and after the line a new last child of `parent` takes."""
    root = parent.getroottree().getroot()
    mark = etree.Comment(_MARK)
    parent.append(mark)
    try:
        data = etree.tostring(root, encoding="UTF-8", xml_declaration=xml_declaration,
                              pretty_print=True)
    finally:
        parent.remove(mark)
    at = data.rindex(f"<!--{_MARK}-->".encode())  # the rest is end tags: the mark is last
    return data[:data.rindex(b"\n", 0, at) + 1], data[data.index(b"\n", at) + 1:]
