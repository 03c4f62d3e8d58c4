"""Local images in a Moodle text -> the files Moodle XML embeds beside it (as Moodle's own
exporter, `qformat_xml::write_files`, does), or the list GIFT warns about (it cannot carry files).

A local image (`![d](img/x.png)`, a file beside the item) is embedded in the file area of the
element holding the text: the text refers to `@@PLUGINFILE@@/<name>` and the element gets a
`<file name path="/" encoding="base64">` after its `<text>`. An image that cannot be embedded
keeps its `src`, with a warning.
"""

from __future__ import annotations

import base64
import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from lxml import etree
from lxml import html as lxml_html

from dpassess.markup.media import has_img_tag, is_local_image, locate_image, read_media


def image_fragment(html: str) -> etree._Element | None:
    """`html` parsed as a fragment under a `<div>` when it has an `<img>`, else None."""
    if not has_img_tag(html):
        return None
    root: etree._Element = lxml_html.fragment_fromstring(html, create_parent="div")
    return root


def local_images(html: str) -> list[str]:
    """The `src` of each local image `html` shows, in document order."""
    root = image_fragment(html)
    if root is None:
        return []
    return [src for img in root.iter("img") if is_local_image(src := img.get("src", ""))]


#: What Moodle's `clean_param($name, PARAM_FILE)` removes from a file name (lib/moodlelib.php:
#: `[[:cntrl:]]|[&<>"`\|\':\\\\/]`); `create_file_from_string` refuses a name that it changes.
_NOT_IN_FILE_NAME = re.compile("[\x00-\x1f\x7f-\x9f&<>\"`|':\\\\/]")


def file_name(rel: str) -> str:
    """The name an image file `rel` (a relative path) gets in a Moodle file area."""
    name = _NOT_IN_FILE_NAME.sub("_", posixpath.basename(rel))
    return name if name not in ("", ".", "..") else "image"


class _Area:
    """The files of one text area (questiontext, an answer, a feedback): name -> base64, in
    the order the text first shows them. Moodle keeps one file per name in an area (a second
    one is dropped as a duplicate), so a different file with a name already used is renamed
    `x-2.png`, `x-3.png`, ...; the same file shown twice is embedded once."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}

    def add(self, name: str, data: str) -> str:
        stem, ext = posixpath.splitext(name)
        n = 1
        while self.files.get(name, data) != data:
            n += 1
            name = f"{stem}-{n}{ext}"
        self.files[name] = data
        return name


class Embedder:
    """Embeds the local images of one export's texts; each image file is read once."""

    def __init__(self) -> None:
        self.read: dict[Path, str] = {}  # image file -> its bytes in base64

    def embed(self, html: str, source: str | None, warn: Callable[[str], None]
              ) -> tuple[str, dict[str, str]]:
        """`html` with each local image it shows referred to as `@@PLUGINFILE@@/<name>`, and
        the files to embed (name -> base64); `source` is the item's file. An image that cannot
        be embedded (outside the item's folder, not found, unreadable) keeps its `src`, and
        `warn` is told why."""
        root = image_fragment(html)
        if root is None:
            return html, {}
        area = _Area()
        for img in root.iter("img"):
            src = img.get("src", "")
            if not is_local_image(src):
                continue  # a URL or data: URI travels as written
            found = locate_image(src, source)
            if isinstance(found, str):
                problem = found
            else:
                path, local = found
                try:
                    name = area.add(file_name(path), self._base64(local))
                except OSError as exc:
                    problem = f"cannot be read: {local}: {exc.strerror or exc}"
                else:
                    img.set("src", "@@PLUGINFILE@@/" + quote(name, safe=""))
                    continue
            warn(f"image {src!r} {problem}; not embedded, the link is written as it is and "
                 "shows a broken image in Moodle")
        if not area.files:
            return html, {}
        return etree.tostring(root, method="html", encoding="unicode")[5:-6], area.files

    def _base64(self, local: Path) -> str:
        data = self.read.get(local)
        if data is None:
            data = self.read[local] = base64.b64encode(read_media(local)).decode("ascii")
        return data
