"""Files -> a reproducible zip: fixed time and permissions, stored entries.

Entries are stored, not deflated: deflate output differs between zlib builds (zlib, zlib-ng), so
only stored entries give the same bytes on every machine. Git and LMS uploads compress anyway.
`ZipStream` writes entries one by one to a seekable binary file, in the order given;
`zip_bytes` is the whole zip in memory, entries in sorted order.
"""

from __future__ import annotations

import io
import mmap
import struct
import zipfile
import zlib
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from itertools import pairwise
from typing import IO, BinaryIO, cast

#: The earliest time a zip can record (MS-DOS epoch).
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
_REGULAR_0644 = 0o100644 << 16
_UNIX = 3
#: A local header's fixed part (the name follows).
_HEADER = 30
#: A local header's sizes, name length and extra length (after the CRC).
_SIZES = struct.Struct("<IIHH").pack


def _info(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
    info.compress_type = zipfile.ZIP_STORED
    info.create_system = _UNIX
    info.external_attr = _REGULAR_0644
    return info


@lru_cache(maxsize=1)
def _fixed_header() -> bytes:
    """What a stored entry's local header holds before its CRC, whatever its name and bytes:
    the signature, the versions, flags, method and the fixed time."""
    probe = _info("x")
    probe.flag_bits = 0
    probe.CRC = probe.file_size = probe.compress_size = 0
    return probe.FileHeader(False)[:14]


class ZipStream:
    """A zip written entry by entry to `out` (a seekable binary file); `close()` writes the
    central directory. The bytes equal `zip_bytes` of the same entries in the same order."""

    def __init__(self, out: BinaryIO) -> None:
        self.zf = zipfile.ZipFile(out, "w", zipfile.ZIP_STORED)
        self._direct = out.seekable()
        #: The bytes before a fragment in the previous file, when the runner writes it
        #: (`dpassess.export.runner._Sink.before`).
        self._before: Callable[[bytes, int], bytes | None] | None = getattr(
            out, "before", None) if getattr(out, "previous", None) is not None else None
        self._fixed = _fixed_header()

    def add(self, name: str, data: bytes) -> None:
        """Add an entry of `data`. To a seekable file, its header is written once, with the
        CRC and sizes known (the bytes `writestr` leaves after it writes the header, the data,
        and seeks back to write the header again: three times slower for a small entry)."""
        zf = self.zf
        if not self._direct or len(data) * 1.05 > zipfile.ZIP64_LIMIT:
            zf.writestr(_info(name), data)
            return
        info = _info(name)
        info.flag_bits = 0
        info.file_size = info.compress_size = len(data)
        # (what else writestr checks cannot happen here: the package's names are unique, and
        # zip64 entry counts are allowed)
        assert zf.fp is not None
        fp = zf.fp
        header = self._previous_header(name, data)
        if header is not None:
            info.CRC = int.from_bytes(header[14:18], "little")
        else:
            info.CRC = zlib.crc32(data)
            header = info.FileHeader(False)
        info.header_offset = fp.tell()
        fp.write(header)
        fp.write(data)
        zf.start_dir = zf.fp.tell()
        zf.filelist.append(info)
        zf.NameToInfo[name] = info

    def _previous_header(self, name: str, data: bytes) -> bytes | None:
        """The header `data` had in the previous zip of the runner's output file (`before`:
        `data` is a fragment found there), when it was this entry's: the same name, and a
        stored entry of `len(data)` bytes with this package's fixed time and permissions. Its
        CRC is then `data`'s (the previous file is as the runner wrote it), and
        `ZipInfo.FileHeader` would give the same bytes again."""
        before = self._before
        if before is None:
            return None
        encoded = name.encode("ascii", "ignore")
        header = before(data, _HEADER + len(encoded))
        if (header is None or header[:14] != self._fixed or header[_HEADER:] != encoded
                or len(encoded) != len(name)
                or header[18:30] != _SIZES(len(data), len(data), len(encoded), 0)):
            return None
        return header

    def open(self, name: str, size: int = 0) -> IO[bytes]:
        """An entry to write in pieces (close it before adding the next one); `size`, when
        known, is the number of bytes it will hold (what `add` of those bytes writes: the
        same header, zip64 or not, as `writestr`)."""
        info = _info(name)
        info.file_size = size
        return self.zf.open(info, "w")

    def close(self) -> None:
        self.zf.close()

    def abandon(self) -> None:
        """Forget the zip without writing its end: the output is being thrown away (an error
        stopped the export). Without this the ZipFile, when collected, would write its central
        directory to a file already closed, and print `Exception ignored in: ZipFile.__del__`."""
        zf = self.zf
        zf._writing = False  # type: ignore[attr-defined]  # an entry left open by the error
        zf.fp = None  # ZipFile.close (and __del__) then has nothing to write

    def __enter__(self) -> ZipStream:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is None:
            self.close()
        else:
            self.abandon()


def zip_bytes(entries: Mapping[str, bytes]) -> bytes:
    """A zip holding `entries` (archive path -> content), in sorted order."""
    buf = io.BytesIO()
    with ZipStream(buf) as z:
        for name in sorted(entries):
            z.add(name, entries[name])
    return buf.getvalue()


class _Tail:
    """Where zipfile writes a zip's central directory and end records: held in memory, at
    `start` of the file (ZipFile asks where it is, and seeks there)."""

    def __init__(self, start: int) -> None:
        self.pos, self.parts = start, list[bytes]()

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        self.pos += len(data)
        return len(data)

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        if (offset, whence) != (self.pos, 0):
            raise OSError("a zip's end is written in order")
        return self.pos

    def seekable(self) -> bool:
        return True

    def flush(self) -> None:
        pass


def central_directory(infos: list[zipfile.ZipInfo], start: int) -> bytes:
    """The central directory and end records zipfile writes for the entries `infos` (each
    written at its `header_offset`) when they start at offset `start`."""
    tail = _Tail(start)
    zf = zipfile.ZipFile(cast(IO[bytes], tail), "w", zipfile.ZIP_STORED)
    zf.filelist = infos
    zf.NameToInfo = {info.filename: info for info in infos}
    zf.start_dir = start
    zf.close()
    return b"".join(tail.parts)


def splice(previous: mmap.mmap, ranges: Sequence[tuple[int, int, bytes]],
           out: BinaryIO, copy: Callable[[int, int], None]) -> bool:
    """Write to `out` (an empty file, unbuffered) the zip `previous` as `ZipStream` wrote it,
    with each range `(offset, length, data)` of an entry's bytes (sorted, apart) replaced by
    `data`: the entries around copied as they are (`copy(start, count)` copies that many
    bytes of the previous file to `out`), each entry that changed written again (its header
    with its new CRC and size, through `ZipInfo`), and the central directory and end records
    written by zipfile for the entries' new places. The bytes are those `ZipStream` writes for
    the new entries. False, with nothing written, when a range is not inside one entry's
    bytes, or the zip is not one `ZipStream` writes (stored entries, headers as it writes
    them, none of zip64's size)."""
    try:
        with zipfile.ZipFile(cast(IO[bytes], previous)) as zf:  # (a map reads as a file)
            infos, end = zf.infolist(), zf.start_dir
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, struct.error):
        return False
    starts = [info.header_offset for info in infos]
    if any(a >= b for a, b in pairwise(starts)) or (starts and starts[-1] >= end):
        return False
    # each changed entry: (its index, where its bytes start and end, its new bytes)
    changed: dict[int, list[tuple[int, int, bytes]]] = {}
    for offset, length, data in ranges:
        n = bisect_right(starts, offset) - 1
        if n < 0:
            return False
        changed.setdefault(n, []).append((offset, length, data))
    # (entry, header offset, end, its new bytes: ranges of the previous file and new bytes)
    rewritten: list[tuple[int, int, int, list[tuple[int, int] | bytes], int]] = []
    whole = memoryview(previous)
    for n, parts in changed.items():
        info = infos[n]
        h = info.header_offset
        name_length, extra_length = struct.unpack("<HH", previous[h + 26:h + 30])
        start = h + _HEADER + name_length + extra_length
        stop = start + info.compress_size
        if not (info.compress_type == zipfile.ZIP_STORED and not info.flag_bits & 0x08
                and info.file_size == info.compress_size
                and stop == (starts[n + 1] if n + 1 < len(starts) else end)
                and all(start <= o and o + k <= stop for o, k, _ in parts)
                and info.file_size * 1.05 <= zipfile.ZIP64_LIMIT
                and info.FileHeader(False) == previous[h:start]):
            return False
        pieces: list[tuple[int, int] | bytes] = []
        at, size, crc = start, 0, 0
        for offset, length, data in [*sorted(parts, key=lambda p: p[0]), (stop, 0, b"")]:
            pieces += [(at, offset), data]
            crc = zlib.crc32(data, zlib.crc32(whole[at:offset], crc))
            size += offset - at + len(data)
            at = offset + length
        if size * 1.05 > zipfile.ZIP64_LIMIT:
            return False
        rewritten.append((n, h, stop, pieces, crc))
    rewritten.sort(key=lambda r: r[0])
    pos, shift, done = 0, 0, 0
    for n, h, stop, pieces, crc in rewritten:
        for info in infos[done:n]:
            info.header_offset += shift
        copy(pos, h - pos)
        info = infos[n]
        info.header_offset += shift
        old_size = info.file_size
        info.CRC = crc
        info.file_size = info.compress_size = sum(
            p[1] - p[0] if isinstance(p, tuple) else len(p) for p in pieces)
        out.write(info.FileHeader(False))
        for piece in pieces:  # the unchanged bytes copied as they are, the new ones written
            if isinstance(piece, tuple):
                copy(piece[0], piece[1] - piece[0])
            else:
                out.write(piece)
        shift += info.file_size - old_size
        pos, done = stop, n + 1
    for info in infos[done:]:
        info.header_offset += shift
    copy(pos, end - pos)
    out.write(central_directory(infos, end + shift))
    return True
