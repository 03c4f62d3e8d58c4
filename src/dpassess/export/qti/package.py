"""Files -> a reproducible zip: fixed time and permissions, stored entries.

Entries are stored, not deflated: deflate output differs between zlib builds (zlib, zlib-ng), so
only stored entries give the same bytes on every machine. Git and LMS uploads compress anyway.
`ZipStream` writes entries one by one to a seekable binary file, in the order given;
`zip_bytes` is the whole zip in memory, entries in sorted order.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Mapping
from typing import IO, BinaryIO

#: The earliest time a zip can record (MS-DOS epoch).
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
_REGULAR_0644 = 0o100644 << 16
_UNIX = 3


def _info(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
    info.compress_type = zipfile.ZIP_STORED
    info.create_system = _UNIX
    info.external_attr = _REGULAR_0644
    return info


class ZipStream:
    """A zip written entry by entry to `out` (a seekable binary file); `close()` writes the
    central directory. The bytes equal `zip_bytes` of the same entries in the same order."""

    def __init__(self, out: BinaryIO) -> None:
        self.zf = zipfile.ZipFile(out, "w", zipfile.ZIP_STORED)
        self._direct = out.seekable()

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
        info.CRC = zlib.crc32(data)
        # (what else writestr checks cannot happen here: the package's names are unique, and
        # zip64 entry counts are allowed)
        assert zf.fp is not None
        info.header_offset = zf.fp.tell()
        zf.fp.write(info.FileHeader(False))
        zf.fp.write(data)
        zf.start_dir = zf.fp.tell()
        zf.filelist.append(info)
        zf.NameToInfo[name] = info

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
