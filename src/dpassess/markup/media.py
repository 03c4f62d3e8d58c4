"""Images in item texts, as every exporter finds them: which texts may show one, which `src` is
a file beside the item, and where that file is (QTI packs it, Moodle XML embeds it, GIFT can
only report it).

A media file is used only when it is a regular file inside the item's folder reached without a
symbolic link: a link is refused wherever it points (inside the bank too), as are FIFOs, devices
and sockets, so an export can never carry a file from outside the bank (`/proc/self/environ`, a
key file). `read_media` opens the file without following a link and checks it again."""

from __future__ import annotations

import os
import posixpath
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote

from dpassess.markup.fields import markdown_texts
from dpassess.markup.xmlchars import has_non_xml
from dpassess.model import Item

_IMG_TAG = re.compile("<img", re.IGNORECASE)
#: A URL scheme (`https:`, `data:`): such a `src` travels as written.
_REMOTE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def may_show_images(item: Item, langs: Sequence[str], *, non_xml: bool = False) -> bool:
    """False when no text of the item in `langs` can render an image (True may be a false
    alarm): `![` (Markdown) or `<img` (HTML), looked for in the texts joined by spaces (which
    make neither) by a substring test and, only when there is a `<`, one plain regex: several
    times faster than a case-insensitive scan of each text. With `non_xml`, a character XML
    cannot carry counts too, for an exporter that removes such characters before rendering
    (`!\\x01[` becomes `![`); the joined text stays printable, so `has_non_xml` answers without a
    regex scan unless some text holds a line break. The options' own texts are enough: the
    true/false words used in place of missing ones show no image."""
    text = " ".join(t for la in langs for _, t in markdown_texts(item.text[la]))
    return ("![" in text or ("<" in text and _IMG_TAG.search(text) is not None)
            or (non_xml and has_non_xml(text)))


def has_img_tag(html: str) -> bool:
    return _IMG_TAG.search(html) is not None


def is_local_image(src: str) -> bool:
    """Whether an `<img src>` names a file beside the item: not a URL (`data:` URIs included),
    an absolute path or a `#fragment`."""
    return not (_REMOTE.match(src) or src.startswith(("/", "#")))


def locate_image(src: str, source: str | None) -> tuple[str, Path] | str:
    """For a local image (or any linked file) `src` shown by the item whose file is `source`: its
    path normalised under `items/` (the item's folder) and the file, or why there is no file to
    use ("is outside the item's folder", "not found ...", "is a symbolic link ...", "is not a
    regular file ..."). Read it with `read_media` (an `OSError` says why it could not be)."""
    rel = unquote(src.split("#", 1)[0].split("?", 1)[0])
    path = posixpath.normpath(posixpath.join("items", rel))
    if not path.startswith("items/") or "\x00" in rel:
        return "is outside the item's folder"
    if not source:
        return "not found"
    folder = Path(source).parent
    local = folder.joinpath(*path.split("/")[1:])
    problem = _not_regular(folder, path.split("/")[1:])
    return problem if problem else (path, local)


def _not_regular(folder: Path, parts: Sequence[str]) -> str | None:
    """Why `folder/parts...` is not a regular file reached without a link, or None."""
    here = folder
    for i, part in enumerate(parts):
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except OSError:
            return f"not found at {folder.joinpath(*parts)}"
        if stat.S_ISLNK(mode):
            return (f"is a symbolic link ({here}); media must be regular files inside the bank "
                    "and links are not followed: copy the file there")
        if i < len(parts) - 1 and not stat.S_ISDIR(mode):
            return f"not found at {folder.joinpath(*parts)}"
        if i == len(parts) - 1 and not stat.S_ISREG(mode):
            return (f"is not a regular file ({here}: {_kind(mode)}); media must be regular "
                    "files inside the bank")
    return None


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a plain file"


_NOFOLLOW = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(
    os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def read_media(local: Path) -> bytes:
    """The bytes of a file `locate_image` returned, opened without following a link (a file
    swapped for a link or a FIFO since is refused, never read). Raises `OSError` with a reason."""
    fd = os.open(local, _NOFOLLOW)
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fh.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(f"{local} is not a regular file ({_kind(mode)})")
        return fh.read()


def pixel_size(data: bytes) -> tuple[int, int] | None:
    """The width and height a PNG, GIF or JPEG file declares in its header (None for another
    format, or a header that cannot be read): read, never decoded, in time linear in the bytes
    before the JPEG frame header."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
    if data.startswith(b"\xff\xd8"):
        at = 2
        while at + 9 <= len(data) and data[at] == 0xFF:
            marker = data[at + 1]
            if marker == 0xFF:  # fill byte
                at += 1
                continue
            if marker in _JPEG_STANDALONE:
                at += 2
                continue
            if marker in _JPEG_FRAMES:
                return (int.from_bytes(data[at + 7:at + 9], "big"),
                        int.from_bytes(data[at + 5:at + 7], "big"))
            at += 2 + int.from_bytes(data[at + 2:at + 4], "big")
    return None


_JPEG_FRAMES = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD,
                          0xCE, 0xCF})
_JPEG_STANDALONE = frozenset({0x01, *range(0xD0, 0xD8)})
