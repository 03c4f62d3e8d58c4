"""Safe reading of untrusted input: XML without entities or network, zips without slips or bombs."""

from __future__ import annotations

import re
import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from xml.parsers import expat

from lxml import etree

from dpassess.diagnostics import UsageError

#: Largest input file accepted (bytes), and largest total uncompressed size of a zip.
MAX_INPUT_BYTES = 50 << 20
MAX_ZIP_TOTAL = 200 << 20
MAX_ZIP_ENTRIES = 20_000
MAX_ZIP_RATIO = 200  # uncompressed / compressed, per entry (zip bombs are >1000)
#: Most answers one question may have: options, accepted answers, matching pairs (with the
#: distractors) or things to order. A question with more is skipped with the reason.
MAX_ANSWERS = 1000

# What zipfile raises on damaged archives besides BadZipFile (zlib.error for broken deflate
# data, NotImplementedError for unknown methods, RuntimeError for encrypted entries, ...).
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, EOFError,
               ValueError, OSError, OverflowError)


class InputError(UsageError):
    """Input that cannot be imported; the message names the file and, where known, line."""


def read_input(path: str | Path) -> bytes:
    p = Path(path)
    try:
        if p.is_dir():
            raise InputError(f"{p}: is a directory, not a file to import")
        size = p.stat().st_size
        if size > MAX_INPUT_BYTES:
            raise InputError(f"{p}: file is {size:,} bytes; the limit is {MAX_INPUT_BYTES:,}")
        return p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from exc


def decode_utf8(data: bytes, name: str) -> str:
    """UTF-8 text (a BOM is dropped); a bad byte is reported with its line and column."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        col = exc.start - (before.rfind(b"\n") + 1) + 1
        raise InputError(
            f"{name}:{line}:{col}: not UTF-8: byte 0x{data[exc.start]:02x} cannot be decoded"
        ) from None


class _Prolog(Exception):
    """Raised by the prolog scan's handlers to stop at the document type or the root."""


@dataclass(frozen=True, slots=True)
class Prolog:
    """What an XML document says before its root element, as expat reads it (`readable`:
    False when expat could not read that far, an encoding it does not know)."""

    readable: bool
    encoding: str | None = None
    internal_subset: bool = False


def prolog(data: bytes) -> Prolog:
    """The document's declared encoding and whether its document type declaration has an
    internal subset (`<!DOCTYPE x [ ... ]>`, where entities are declared), read by expat,
    which stops at the declaration or the root element: nothing is expanded or fetched."""
    parser = expat.ParserCreate()
    found: dict[str, object] = {}

    def declaration(version: str, encoding: str | None, standalone: int) -> None:
        found["encoding"] = encoding

    def doctype(name: str, system: str | None, public: str | None, internal: int) -> None:
        found["internal"] = bool(internal)
        raise _Prolog

    def start(name: str, attrs: object) -> None:
        raise _Prolog

    parser.XmlDeclHandler = declaration
    parser.StartDoctypeDeclHandler = doctype
    parser.StartElementHandler = start
    readable = True
    try:
        parser.Parse(data, True)
    except _Prolog:
        pass
    except (expat.ExpatError, LookupError):  # LookupError: an encoding Python does not know
        readable = False
    encoding = found.get("encoding")
    return Prolog(readable, encoding if isinstance(encoding, str) else None,
                  found.get("internal") is True)


def is_utf8(encoding: str | None) -> bool:
    return encoding is None or encoding.lower().replace("_", "-") in ("utf-8", "utf8")


def parse_xml(data: bytes, name: str) -> etree._Element:
    """Parse untrusted XML: no DTD loading, no entity expansion, no network, no huge trees.

    A document type declaration with an internal subset, where entities are declared, is
    refused (billion laughs, XXE; entities expanded into attributes); a plain `<!DOCTYPE x>`,
    or one naming an external DTD, is read without loading it. An entity reference that
    cannot be resolved (undeclared, or declared in a DTD not loaded) is an error: its text
    would be lost, and so would the text after it."""
    refused = InputError(f"{name}: entity declarations are not accepted (the document type "
                         "declaration has an internal subset)")
    head = prolog(data)
    if head.internal_subset:
        raise refused
    if is_utf8(head.encoding) and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        decode_utf8(data, name)  # a bad byte named by line and column
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=False,
        remove_pis=True,
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        line, col = exc.position if exc.position else (1, 1)
        msg = str(exc.msg or exc).split(", line ")[0]
        raise InputError(f"{name}:{line}:{col}: invalid XML: {msg}") from None
    dtd: Any = root.getroottree().docinfo.internalDTD  # lxml-stubs omit DTD's iterators
    if dtd is not None and (any(True for _ in dtd.iterentities())
                            or any(True for _ in dtd.iterelements())):
        raise refused
    for entry in parser.error_log:
        if "UNDECLARED_ENTITY" in entry.type_name:
            raise InputError(f"{name}:{entry.line}:{entry.column}: {entry.message.strip()}: an "
                             "entity that is not declared in the document cannot be read "
                             "(write the character itself)")
    for ref in root.iter(etree.Entity):
        raise InputError(f"{name}:{line_of(ref)}: entity reference {ref.text} cannot be read "
                         "(write the character itself)")
    return root


def line_of(el: etree._Element) -> int:
    """The line of a parsed element in its document (0 when unknown)."""
    line: int | None = el.sourceline  # type: ignore[assignment]  # lxml-stubs leave it untyped
    return line or 0


def safe_member_name(name: str) -> PurePosixPath:
    """The member's relative path, or InputError if it would leave the target folder."""
    if "\\" in name or "\x00" in name:
        raise InputError(f"zip entry {name!r}: backslashes and NUL are not allowed in names")
    p = PurePosixPath(name)
    if p.is_absolute() or any(part == ".." for part in p.parts) or re.match(r"^[A-Za-z]:", name):
        raise InputError(f"zip entry {name!r} would be written outside the target folder")
    return p


def open_zip(data: bytes, name: str) -> dict[str, bytes]:
    """All regular members of a zip, read in memory with size, count, ratio and path checks."""
    import io

    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except _ZIP_ERRORS as exc:
        raise InputError(f"{name}: not a zip file ({exc})") from None
    infos = zf.infolist()
    if len(infos) > MAX_ZIP_ENTRIES:
        raise InputError(f"{name}: {len(infos):,} entries; the limit is {MAX_ZIP_ENTRIES:,}")
    total = 0
    out: dict[str, bytes] = {}
    for info in infos:
        if info.is_dir():
            continue
        safe_member_name(info.filename)
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise InputError(f"{name}: zip entry {info.filename!r} is a symbolic link")
        total += info.file_size
        if total > MAX_ZIP_TOTAL:
            raise InputError(f"{name}: more than {MAX_ZIP_TOTAL:,} bytes uncompressed")
        if info.compress_size and info.file_size / info.compress_size > MAX_ZIP_RATIO:
            raise InputError(f"{name}: zip entry {info.filename!r} is a compression bomb")
        try:
            with zf.open(info) as fh:
                content = fh.read(info.file_size + 1)
        except _ZIP_ERRORS as exc:  # a damaged entry: bad CRC, header, compressed data
            raise InputError(f"{name}: zip entry {info.filename!r} cannot be read ({exc})"
                             ) from None
        if len(content) != info.file_size:
            raise InputError(f"{name}: zip entry {info.filename!r} is not the size it declares")
        if info.filename in out:  # zipfile would give the last one, unzip tools the first
            raise InputError(f"{name}: zip entry {info.filename!r} appears twice (which one "
                             "is meant cannot be told)")
        out[info.filename] = content
    return out
