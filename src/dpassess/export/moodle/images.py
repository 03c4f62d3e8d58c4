"""Local files in a Moodle text (images, and linked files such as a PDF or a recording) -> the
files Moodle XML embeds beside it (as Moodle's own exporter, `qformat_xml::write_files`, does),
or the list GIFT warns about (it cannot carry files).

A local image (`![d](img/x.png)`) or linked file (`[notes](notes.pdf)`, `<a href="a.mp3">`), a
file beside the item, is embedded in the file area of the element holding the text: the text
refers to `@@PLUGINFILE@@/<name>` and the element gets a `<file name path="/"
encoding="base64">` after its `<text>`. A file that cannot be embedded keeps its `src` or
`href`, with a warning.
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

_LINK_TAG = re.compile(r"<a\s", re.IGNORECASE)
#: The attribute of each element that refers to a file.
_REFERS = {"img": "src", "a": "href"}


def may_link_files(texts: str) -> bool:
    """False when Markdown or HTML `texts` can link no file (True may be a false alarm)."""
    return "](" in texts or "]:" in texts or (
        "<" in texts and _LINK_TAG.search(texts) is not None)


def image_fragment(html: str) -> etree._Element | None:
    """`html` parsed as a fragment under a `<div>` when it has an `<img>` or a link, else
    None."""
    if not has_img_tag(html) and _LINK_TAG.search(html) is None:
        return None
    root: etree._Element = lxml_html.fragment_fromstring(html, create_parent="div")
    return root


def _refs(root: etree._Element) -> list[tuple[etree._Element, str, str]]:
    """(element, attribute, value) of each local image and linked file, in document order."""
    out = []
    for el in root.iter("img", "a"):
        attr = _REFERS[str(el.tag)]
        value = el.get(attr)
        if value and is_local_image(value):
            out.append((el, attr, value))
    return out


def local_files(html: str) -> list[tuple[bool, str]]:
    """(is an image, `src` or `href`) of each local image `html` shows and each local file it
    links, in document order."""
    root = image_fragment(html)
    return [] if root is None else [(attr == "src", value) for _, attr, value in _refs(root)]


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
        for el, attr, src in _refs(root):
            what = "image" if attr == "src" else "linked file"
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
                    el.set(attr, "@@PLUGINFILE@@/" + quote(name, safe=""))
                    continue
            shows = "a broken image" if what == "image" else "a broken link"
            warn(f"{what} {src!r} {problem}; not embedded, the link is written as it is and "
                 f"shows {shows} in Moodle")
        if not area.files:
            return html, {}
        return etree.tostring(root, method="html", encoding="unicode")[5:-6], area.files

    def _base64(self, local: Path) -> str:
        data = self.read.get(local)
        if data is None:
            data = self.read[local] = base64.b64encode(read_media(local)).decode("ascii")
        return data
