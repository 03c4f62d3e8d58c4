"""Typed records of what the caches keep -> plain data (tuples of str, bytes, int, bool, None)
and back, each layout with an explicit version.

A record is a NamedTuple; what is written is `plain(record)`, built of Python's own types only,
so that reading it back (`Cache.load_plain`) never looks up a class or runs code: the
unpickler refuses every global. `*.read(value)` turns plain data back into the record, or None
when it does not have the record's shape (another version, a damaged file): a miss.

The records of `dpassess lint` (`dpassess.lint.incremental`), one per bank file:

- `LintItem`: an item file's content hash, its item-rule findings and the suppressions they
  used, the content hash of the stimulus file it was checked with, and `ItemFeatures`: what
  the bank rules read of the item (normalised stems and answers, content words, the key's
  position and the options' lengths, ids, enemies, suppressions). A warm lint reads these and
  never rebuilds an unchanged item as a model.
- `LintStimulus`: a stimulus file's content hash and id.

And `FileStamp`, what `dpassess build` knows of a file without reading it again (its size,
mtime, inode and content hash); `OutputIndex`, where each item's part (fragment) lies in an
export file the runner wrote, so that the next write of that file copies it from there
(`dpassess.export.runner`); `PreviewPages`, the preview site as last written into a folder
(each page's key and stat, where each index row lies in the index page:
`dpassess.app.preview`).
"""

from __future__ import annotations

import hashlib
import io
import pickle
from collections.abc import Sequence
from typing import Any, NamedTuple

from dpassess.diagnostics import Diagnostic, Severity

#: The layout of every record below; bumped when one changes (a stored value of another
#: layout is a miss; 2: stems and answers as hashes; 3: each item's features hashed, and the
#: bank rules' hits kept).
VERSION = 3


class _PlainUnpickler(pickle.Unpickler):
    """An unpickler of Python's own types only: any class or function is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"a cache record names {module}.{name}: refused")


def dumps(value: object) -> bytes:
    """`value` (plain data) as bytes for `loads`."""
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def loads(data: bytes | memoryview) -> object:
    """Plain data from `dumps`; raises pickle.UnpicklingError (or another error of a damaged
    stream) on anything that would name a class or a function."""
    return _PlainUnpickler(io.BytesIO(data)).load()


def plain(value: object) -> object:
    """A record (or a tuple, list or dict of them) as tuples of Python's own types."""
    if isinstance(value, tuple):  # a NamedTuple too
        return tuple(plain(v) for v in value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


# --- findings ---------------------------------------------------------------------------

#: A Diagnostic as plain data: path, line, col, field, message, code, severity, help, name,
#: item.
FindingRow = tuple[str, int, int, str, str, str, str, str, str, "str | None"]


def finding_row(d: Diagnostic) -> FindingRow:
    return (d.path, d.line, d.col, d.field, d.message, d.code, d.severity.value, d.help,
            d.name, d.item)


def finding(row: Sequence[Any]) -> Diagnostic:
    """The Diagnostic of a row (ValueError or TypeError when it is not one)."""
    path, line, col, field, message, code, severity, help_, name, item = row
    if not (isinstance(path, str) and isinstance(line, int) and isinstance(col, int)
            and isinstance(field, str) and isinstance(message, str) and isinstance(code, str)
            and isinstance(help_, str) and isinstance(name, str)
            and (item is None or isinstance(item, str))):
        raise TypeError("not a finding row")
    return Diagnostic(path, line, col, field, message, code, Severity(severity), help_, name,
                      item)


def findings(rows: object) -> list[Diagnostic] | None:
    """The Diagnostics of a tuple of rows, or None when it is not one."""
    if not isinstance(rows, tuple):
        return None
    try:
        return [finding(r) for r in rows]
    except (TypeError, ValueError):
        return None


# --- what the bank rules read of an item ------------------------------------------------


class SuppressionRecord(NamedTuple):
    """An entry of an item's `suppress` list, as the engine matches findings against it."""

    rule: str
    field: str | None
    term: str | None

    def covers(self, rule: str, field: str, term: str | None = None) -> bool:
        """`dpassess.model.Suppression.covers`."""
        return (rule == self.rule and (self.field is None or self.field == field)
                and (self.term is None or self.term == term))


class StemFeatures(NamedTuple):
    """One language of an item: its stem as the duplicate rules compare it."""

    lang: str
    #: The hash of the stem's case-folded words (BK001: `norm`), empty when it has none.
    stem: bytes
    #: The hash of what the item offers or accepts in this language, normalised and sorted
    #: (BK001).
    answers: bytes
    #: The stem's content words in order (BK002), when there are enough to compare, else None.
    words: tuple[str, ...] | None
    #: The stem as BK002 quotes it.
    quoted: str


class ChoiceFeatures(NamedTuple):
    """A single-choice item with a valid key and three or more options (BK004 to BK007)."""

    #: The number of options, and the key's position among them.
    k: int
    key: int
    #: For each language of the item: the length of each option's visible text, in order.
    lengths: tuple[tuple[str, tuple[int, ...]], ...]
    #: For each language: whether each option has an absolute term (BK007).
    absolute: tuple[tuple[str, tuple[bool, ...]], ...]


class ItemFeatures(NamedTuple):
    """What the bank rules read of one item."""

    id: str
    enemies: tuple[str, ...]
    #: The languages of the item's text, in the file's order.
    languages: tuple[str, ...]
    stems: tuple[StemFeatures, ...]
    choice: ChoiceFeatures | None
    suppress: tuple[SuppressionRecord, ...]


#: The parts of an item's features that the bank rules read, each hashed apart
#: (`features_digest`), so that an edit of one part keeps the hits of the rules that read
#: others: its id, enemies and stems' content words (the near-duplicate rule); its id, enemies,
#: stems and answers (the duplicate and enemy rules); its id, key position and option lengths
#: (the key-cue rules); its languages.
FEATURE_PARTS = ("words", "answers", "choice", "languages")


def _parts(f: ItemFeatures) -> tuple[object, ...]:
    return ((f.id, f.enemies, tuple((s.lang, s.words, s.quoted) for s in f.stems)),
            (f.id, f.enemies, tuple((s.lang, s.stem, s.answers) for s in f.stems)),
            (f.id, f.choice), f.languages)


def features_digest(features: ItemFeatures) -> bytes:
    """16 bytes of hash for each of the `FEATURE_PARTS` of `features` (of each part's plain
    form's repr: equal parts, equal hashes), joined."""
    return b"".join(hashlib.blake2b(repr(plain(part)).encode("utf-8", "surrogatepass"),
                                    digest_size=16).digest() for part in _parts(features))


def _fields(value: object, n: int) -> tuple[Any, ...]:
    """`value` as a tuple of `n` fields (TypeError when it is not one)."""
    if not (isinstance(value, tuple) and len(value) == n):
        raise TypeError(f"not a tuple of {n}")
    return value


# (a word's string is one object in each file read: `dumps` writes a repeated one once)
_stem = StemFeatures._make


def read_features(value: object) -> ItemFeatures:
    """The ItemFeatures of `plain(features)` (TypeError or ValueError when it does not have
    its shape). Only the shape is checked: the values are what `plain` wrote, in a file
    authenticated with the user's key and salted with dpassess's own sources."""
    iid, enemies, languages, stems, choice, suppress = _fields(value, 6)
    if not isinstance(iid, str):
        raise TypeError("no id")
    return ItemFeatures(
        iid, enemies, languages, tuple(map(_stem, stems)),
        None if choice is None else ChoiceFeatures._make(choice),
        tuple(map(SuppressionRecord._make, suppress)))


# --- lint's records of a bank's files ---------------------------------------------------


class LintItem(NamedTuple):
    """An item file as the lint cache keeps it."""

    #: The content hash of the file (`dpassess.runtime.cache.digest`).
    digest: bytes
    #: The stimulus the item names, and the content hash of its file when the item was
    #: checked (an item rule reads it): None when it names none.
    stimulus: tuple[str, bytes] | None
    #: The item rules' findings, and the indices of the suppressions that silenced one.
    findings: tuple[FindingRow, ...]
    used: tuple[int, ...]
    features: ItemFeatures
    #: `features_digest(features)`: a bank rule's hits are kept while the hash of the part it
    #: reads is the same for every item (`BankHits`).
    fdigest: bytes

    @staticmethod
    def read(value: object) -> LintItem | None:
        """The record of `plain(record)`, or None."""
        try:
            tag, digest, stimulus, rows, used, features, fdigest = _fields(value, 7)
            if (tag != ("item", VERSION) or not isinstance(digest, bytes)
                    or not isinstance(fdigest, bytes)):
                return None
            if stimulus is not None:
                sid, sdigest = _fields(stimulus, 2)
                if not (isinstance(sid, str) and isinstance(sdigest, bytes)):
                    return None
            if not (isinstance(rows, tuple) and isinstance(used, tuple)
                    and all(isinstance(i, int) for i in used)):
                return None
            return LintItem(digest, stimulus, rows, used, read_features(features), fdigest)
        except (TypeError, ValueError):
            return None

    def plain(self) -> object:
        return (("item", VERSION), self.digest, plain(self.stimulus), self.findings, self.used,
                plain(self.features), self.fdigest)


class LintStimulus(NamedTuple):
    """A stimulus file as the lint cache keeps it."""

    digest: bytes
    id: str

    @staticmethod
    def read(value: object) -> LintStimulus | None:
        try:
            tag, digest, sid = _fields(value, 3)
        except TypeError:
            return None
        if tag != ("stimulus", VERSION) or not isinstance(digest, bytes) or not isinstance(sid, str):
            return None
        return LintStimulus(digest, sid)

    def plain(self) -> object:
        return (("stimulus", VERSION), self.digest, self.id)


LintRecord = LintItem | LintStimulus

#: A bank rule's hit as plain data: the field path, the message, the help, the item id and
#: the glossary term (`dpassess.lint.registry.Hit`).
HitRow = tuple[tuple[str | int, ...], str, "str | None", "str | None", "str | None"]


class BankHits(NamedTuple):
    """The hits of the bank rules that read only the items' features (by rule code), and the
    keys of the features they were found in: for each of the `FEATURE_PARTS` one hash over
    every item's path and the hash of that part, in authoring order. The same key, the same
    hits: a rule need not run again after an edit that changes no item's part it reads (a
    title, an explanation or feedback: none; a stem: not the key-cue rules)."""

    keys: tuple[bytes, ...]
    hits: dict[str, tuple[HitRow, ...]]

    @staticmethod
    def read(value: object) -> BankHits | None:
        try:
            tag, keys, hits = _fields(value, 3)
        except TypeError:
            return None
        if not (tag == ("bank-hits", VERSION) and isinstance(keys, tuple)
                and len(keys) == len(FEATURE_PARTS) and all(isinstance(k, bytes) for k in keys)
                and isinstance(hits, dict)
                and all(isinstance(c, str) and isinstance(rows, tuple)
                        and all(_is_hit_row(r) for r in rows) for c, rows in hits.items())):
            return None
        return BankHits(keys, hits)

    def plain(self) -> object:
        return (("bank-hits", VERSION), self.keys, plain(self.hits))


def _is_hit_row(row: object) -> bool:
    return (isinstance(row, tuple) and len(row) == 5 and isinstance(row[0], tuple)
            and isinstance(row[1], str) and all(v is None or isinstance(v, str) for v in row[2:]))


def read_lint_record(value: object) -> LintRecord | None:
    """A LintItem or LintStimulus from its plain form, or None."""
    if isinstance(value, tuple) and value and isinstance(value[0], tuple) and value[0]:
        if value[0][0] == "item":
            return LintItem.read(value)
        if value[0][0] == "stimulus":
            return LintStimulus.read(value)
    return None


# --- build's records (for `dpassess.app.build`) -----------------------------------------


class FileStamp(NamedTuple):
    """A file as last read: size, mtime (ns) and inode, and its content hash (read again only
    when one of the first three differs, as git's index does)."""

    size: int
    mtime_ns: int
    inode: int
    digest: bytes

    @staticmethod
    def read(value: object) -> FileStamp | None:
        if (type(value) is tuple and len(value) == 4 and isinstance(value[3], bytes)
                and all(type(v) is int for v in value[:3])):
            return FileStamp(*value)
        return None


class BuiltOutputs(NamedTuple):
    """A group of outputs `dpassess build` wrote (a bank's exports, a blueprint's forms, the
    preview): their key, each file's stamp (size, mtime in ns, inode: outputs are not read back
    to hash them), and the warnings of the run that wrote them."""

    key: bytes
    files: dict[str, tuple[int, int, int]]
    warnings: tuple[FindingRow, ...]

    @staticmethod
    def read(value: object) -> BuiltOutputs | None:
        try:
            key, files, rows = _fields(value, 3)
        except TypeError:
            return None
        if not (isinstance(key, bytes) and isinstance(files, dict) and all(
                isinstance(p, str) and type(st) is tuple and len(st) == 3
                and all(type(v) is int for v in st) for p, st in files.items())
                and findings(rows) is not None):
            return None
        return BuiltOutputs(key, files, rows)


class BuiltBank(NamedTuple):
    """A bank as `dpassess build` last checked it: its content key, the line that says so,
    its lint findings and its exports."""

    key: bytes
    summary: str
    findings: tuple[FindingRow, ...]
    outputs: BuiltOutputs

    @staticmethod
    def read(value: object) -> BuiltBank | None:
        try:
            key, summary, rows, outputs = _fields(value, 4)
        except TypeError:
            return None
        built = BuiltOutputs.read(outputs)
        if not (isinstance(key, bytes) and isinstance(summary, str) and built is not None
                and findings(rows) is not None):
            return None
        return BuiltBank(key, summary, rows, built)


#: The layout of `dpassess build`'s own cache entry (`BuildState`).
BUILD_VERSION = ("build", VERSION)


class BuildState(NamedTuple):
    """What `dpassess build` keeps between runs: the stamp of every file it read (by path),
    each bank it checked (by folder), each blueprint's forms (by blueprint file) and the
    preview."""

    files: dict[str, FileStamp]
    banks: dict[str, BuiltBank]
    forms: dict[str, BuiltOutputs]
    preview: BuiltOutputs | None

    @staticmethod
    def read(value: object) -> BuildState:
        """The state of `plain(state)`; what does not have its shape is left out (a miss)."""
        empty = BuildState({}, {}, {}, None)
        try:
            tag, files, banks, forms, preview = _fields(value, 5)
        except TypeError:
            return empty
        if not (tag == BUILD_VERSION and isinstance(files, dict) and isinstance(banks, dict)
                and isinstance(forms, dict)):
            return empty
        return BuildState(
            {p: st for p, v in files.items() if (st := FileStamp.read(v)) is not None},
            {p: b for p, v in banks.items() if (b := BuiltBank.read(v)) is not None},
            {p: o for p, v in forms.items() if (o := BuiltOutputs.read(v)) is not None},
            BuiltOutputs.read(preview))

    def plain(self) -> object:
        return (BUILD_VERSION, plain(self.files), plain(self.banks), plain(self.forms),
                plain(self.preview))



# --- the preview's record (for `dpassess.app.preview`) ------------------------------------

#: A page of the preview as last written: its key (the hash of what its bytes read), its
#: file's stat (size, mtime and ctime in ns, inode) and the warnings making it gave.
PagePlace = tuple[bytes, int, int, int, int, tuple[FindingRow, ...]]
#: Where an index row lies in the index page: its offset, its length, its warnings.
RowPlace = tuple[int, int, tuple[FindingRow, ...]]


class PreviewPages(NamedTuple):
    """The preview site as last written into one folder: each page's key, stat and warnings
    (a page whose file has another stat now is made again), the stat of the index page and
    where each of its rows lies in it, by the row's key (the rows are taken from the file
    when it is as written)."""

    pages: dict[str, PagePlace]
    index_stat: tuple[int, int, int, int]
    rows: dict[bytes, RowPlace]

    @staticmethod
    def read(value: object) -> PreviewPages | None:
        """The record of `plain(record)`, or None. Each page and row is checked when it is used
        (`page`, `row`)."""
        try:
            tag, pages, index, rows = _fields(value, 4)
        except TypeError:
            return None
        if not (tag == ("preview", VERSION) and isinstance(pages, dict)
                and isinstance(rows, dict) and type(index) is tuple and len(index) == 4
                and all(type(v) is int for v in index)):
            return None
        return PreviewPages(pages, index, rows)

    def plain(self) -> object:
        return (("preview", VERSION), self.pages, self.index_stat, self.rows)

    @staticmethod
    def page(entry: object) -> tuple[bytes, tuple[int, int, int, int], list[Diagnostic]] | None:
        """A page's key, stat and warnings, or None when `entry` is not of that shape."""
        if not (type(entry) is tuple and len(entry) == 6 and type(entry[0]) is bytes
                and type(entry[1]) is int and type(entry[2]) is int and type(entry[3]) is int
                and type(entry[4]) is int):
            return None
        warnings = [] if entry[5] == () else findings(entry[5])
        if warnings is None:
            return None
        return entry[0], entry[1:5], warnings

    @staticmethod
    def row(entry: object, size: int) -> tuple[int, int, list[Diagnostic]] | None:
        """A row's offset, length and warnings in an index page of `size` bytes, or None."""
        if not (type(entry) is tuple and len(entry) == 3 and type(entry[0]) is int
                and type(entry[1]) is int and entry[0] >= 0 and 0 <= entry[1] <= size - entry[0]):
            return None
        warnings = [] if entry[2] == () else findings(entry[2])
        if warnings is None:
            return None
        return entry[0], entry[1], warnings


# --- the export runner's records (for `dpassess.export.runner`) -------------------------

#: Where one fragment lies in an output file: its offset, its length, and the warnings
#: building it gave (finding rows).
FragmentPlace = tuple[int, int, tuple[FindingRow, ...]]


class OutputIndex(NamedTuple):
    """An export file as the runner last wrote it: its stat (size, mtime and ctime in ns,
    inode: a file written, touched or replaced since does not match, and nothing is taken
    from it), for each fragment key the place of its bytes in the file, the facts the
    format asked of its items (`facts`: (item key, name) -> a plain value; they read the item
    only, not the file), and the file's layout by item (`layout`: plain values the runner
    checks when it uses them, or None)."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    #: fragment key (plain values, `dpassess.export.runner.Key`) -> its place.
    places: dict[Any, FragmentPlace]
    facts: dict[Any, Any]
    layout: object = None

    @staticmethod
    def of(st: Any, places: dict[Any, FragmentPlace], facts: dict[Any, Any] | None = None,
           layout: object = None) -> OutputIndex:
        """The index of a file whose `os.stat` is `st`."""
        return OutputIndex(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, places,
                           facts if facts is not None else {}, layout)

    def matches(self, st: Any) -> bool:
        """Whether `st` (`os.stat` of the file now) is the file as indexed."""
        return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino) == self[:4]

    @staticmethod
    def read(value: object) -> OutputIndex | None:
        """The record of `plain(record)`, or None. Each place is checked when it is used
        (`place`), each fact by its user."""
        try:
            tag, size, mtime, ctime, inode, places, facts, layout = _fields(value, 8)
        except TypeError:
            return None
        if not (tag == ("output", VERSION) and all(
                isinstance(v, int) and not isinstance(v, bool) for v in (size, mtime, ctime, inode))
                and isinstance(places, dict) and isinstance(facts, dict)):
            return None
        return OutputIndex(size, mtime, ctime, inode, places, facts, layout)

    def place(self, key: object
              ) -> tuple[int, int, tuple[FindingRow, ...], list[Diagnostic]] | None:
        """Offset, length, warning rows and warnings of the fragment of `key`, or None (not
        there, or not the shape of a place inside the file)."""
        try:
            entry = self.places.get(key)
        except TypeError:  # an unhashable key
            return None
        if type(entry) is not tuple or len(entry) != 3:
            return None
        offset, length, rows = entry
        if not (type(offset) is int and type(length) is int and offset >= 0
                and 0 <= length <= self.size - offset):
            return None
        if rows == ():
            return offset, length, rows, []
        warnings = findings(rows)
        if warnings is None:
            return None
        return offset, length, rows, warnings

    def plain(self) -> object:
        return (("output", VERSION), self.size, self.mtime_ns, self.ctime_ns, self.inode,
                self.places, self.facts, self.layout)
