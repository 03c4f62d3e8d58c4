"""Images in item texts, as every exporter finds them: which texts may show one, which `src` is
a file beside the item, and where that file is (QTI packs it, Moodle XML embeds it, GIFT can
only report it)."""

from __future__ import annotations

import posixpath
import re
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
    """For a local image `src` shown by the item whose file is `source`: its path normalised
    under `items/` (the item's folder) and the file, or why there is no file to use ("is
    outside the item's folder", "not found ..."). Reading it is the caller's (an `OSError`)."""
    rel = unquote(src.split("#", 1)[0].split("?", 1)[0])
    path = posixpath.normpath(posixpath.join("items", rel))
    if not path.startswith("items/"):
        return "is outside the item's folder"
    local = Path(source).parent / rel if source else None
    if local is None or not local.is_file():
        return "not found" + (f" at {local}" if local else "")
    return path, local
