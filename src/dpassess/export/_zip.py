"""Files in memory -> the bytes of a reproducible zip: sorted entries, fixed time and permissions.

Entries are stored, not deflated: deflate output differs between zlib builds (zlib, zlib-ng), so
only stored entries give the same bytes on every machine. Git and LMS uploads compress anyway.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping

#: The earliest time a zip can record (MS-DOS epoch).
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
_REGULAR_0644 = 0o100644 << 16
_UNIX = 3


def zip_bytes(entries: Mapping[str, bytes]) -> bytes:
    """A zip holding `entries` (archive path -> content), in sorted order."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
            info.compress_type = zipfile.ZIP_STORED
            info.create_system = _UNIX
            info.external_attr = _REGULAR_0644
            zf.writestr(info, entries[name])
    return buf.getvalue()
