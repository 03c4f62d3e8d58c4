"""No export writes a link or source whose URL is not http, https, mailto or relative, nor MathML
with links, styles or classes: read back as a browser reads it (the standard library's HTML
parser, entities decoded; the URL's scheme as the WHATWG URL parser finds it, here by hand), and
the QTI packages checked against the official XSDs (tests/schemas)."""

from __future__ import annotations

import io
import zipfile
from html.parser import HTMLParser

import pytest
import yaml
from lxml import etree

from dpassess import load_bank
from dpassess.app.scaffold import init_bank
from dpassess.export import Collection
from dpassess.export.moodle.gift import export as gift
from dpassess.export.moodle.moodle_xml import export as moodle
from dpassess.export.qti.qti21 import export as qti
from test_export_qti21 import check_package

HOSTILE = [
    '<a href="&#106;avascript:alert(1)">a</a>',
    '<a href="&#106avascript&#58alert(2)">b</a>',
    '<a href="java&#x09;script:alert(3)">c</a>',
    '<a href=" JAVASCRIPT:alert(4)">d</a>',
    '<img src="data:image/svg+xml,&lt;svg onload=alert(5)&gt;" alt="e">',
]
#: A comment that a browser ends at `--!>` (so the link after it is live) and the standard
#: library's tokenizer ends at `-->` (so it would not see the link).
COMMENTED = '<!-- x --!> <a href="javascript:alert(8)">h</a> -->'
SAFE = '<a href="https://example.org/x">ok</a> <a href="images/x.png">file</a>'
MATHS = ('$\\href{javascript:alert(6)}{x}$ $\\style{background:url(http://x/)}{y}$ '
         '$\\class{k}{z}$ $\\colorbox{red}{w}$ '
         '<math><mi xlink:href="javascript:alert(7)" style="color:red" class="c">v</mi></math>')


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    root = tmp_path_factory.mktemp("bank") / "b"
    init_bank(root, ["en"])
    for f in root.glob("*.yaml"):
        if f.name != "bank.yaml":
            f.unlink()
    stem = "Which? " + " ".join(HOSTILE) + " " + COMMENTED + " " + SAFE + " " + MATHS
    item = {"id": "hostile", "topic": "t/u", "type": "single_choice", "options": ["a", "b"],
            "key": "a", "text": {"en": {"stem": stem, "options": {"a": HOSTILE[0], "b": "B"}}}}
    (root / "hostile.yaml").write_text(yaml.safe_dump(item), encoding="utf-8")
    return Collection.from_bank(load_bank(root))


class Urls(HTMLParser):
    """Every URL attribute and every attribute of a MathML element, as a browser reads them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.urls: list[str] = []
        self.mathml_attrs: list[str] = []
        self.depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        name = tag.split(":")[-1]
        if name == "math":
            self.depth += 1
        for k, v in attrs:
            if k.split(":")[-1] in ("href", "src", "action", "data", "formaction"):
                self.urls.append(v or "")
            if self.depth and k not in ("display", "encoding", "mathvariant", "stretchy", "fence",
                                        "form", "accent", "xmlns", "xmlns:m", "mathcolor",
                                        "width"):
                self.mathml_attrs.append(f"{tag} {k}")

    def handle_endtag(self, tag: str) -> None:
        if tag.split(":")[-1] == "math":
            self.depth -= 1


def scheme(url: str) -> str | None:
    """The scheme as the WHATWG URL parser reads it (strip C0 and space, drop tab and line
    breaks, letters then letters, digits, + - . up to ':')."""
    v = "".join(c for c in url.strip("".join(map(chr, range(33)))) if c not in "\t\n\r")
    if not v or not v[0].isascii() or not v[0].isalpha():
        return None
    for i, c in enumerate(v):
        if c == ":":
            return v[:i].lower()
        if not (c.isascii() and (c.isalnum() or c in "+-.")):
            return None
    return None


def read(html: str) -> Urls:
    p = Urls()
    p.feed(html)
    p.close()
    return p


def check(html: str) -> None:
    found = read(html)
    assert found.urls, "the safe links are kept"
    assert "https://example.org/x" in found.urls and "images/x.png" in found.urls
    assert {scheme(u) for u in found.urls} <= {None, "http", "https", "mailto"}, found.urls
    assert found.mathml_attrs == []


def test_qti_writes_no_script_url_and_no_live_mathml(collection: Collection) -> None:
    result = qti(collection, "en", maths="mathml")  # raw <math><mi xlink:href> crashed the export (exit 70)
    docs = check_package(result.data)  # valid against the QTI 2.1.2 and MathML 2 XSDs
    xml = zipfile.ZipFile(io.BytesIO(result.data)).read("items/hostile.xml").decode()
    check(xml)
    assert "alert(8)" not in xml
    doc = docs["items/hostile.xml"]
    for el in doc.iter():
        assert not any("href" in str(k) and etree.QName(el).localname != "a" for k in el.attrib)
    fields = {(w.item, w.field) for w in result.warnings if "left out" in w.message}
    assert ("hostile", "text.en.stem") in fields
    assert ("hostile", "text.en.options.a") in fields


@pytest.mark.parametrize("fmt", ["moodle", "gift"])
def test_moodle_and_gift_write_no_script_url(collection: Collection, fmt: str) -> None:
    export = moodle if fmt == "moodle" else gift
    result = export(collection, "en")
    text = result.data.decode()
    if fmt == "moodle":
        root = etree.fromstring(result.data)
        html = "".join(t.text or "" for t in root.iter("text"))
    else:
        html = text.replace("\\", "")  # GIFT escapes = ~ # { } : with a backslash
    assert "alert(8)" not in text
    for command in ("href", "style", "class", "colorbox"):  # MathJax reads the TeX in Moodle
        assert f"\\{command}" not in text
    assert any("\\href, \\style, \\class, \\colorbox" in w.message for w in result.warnings)
    found = read(html)
    assert "https://example.org/x" in found.urls and "images/x.png" in found.urls
    assert {scheme(u) for u in found.urls} <= {None, "http", "https", "mailto"}, found.urls
    warned = [w for w in result.warnings if "only http, https, mailto" in w.message]
    assert {(w.item, w.field) for w in warned} == {("hostile", "text.en.stem"),
                                                   ("hostile", "text.en.options.a")}
    assert len(warned) == 2  # one warning per field


def test_qti_tex_mode_writes_no_tex_link_or_style(collection: Collection) -> None:
    """With `--maths tex` the TeX goes to the player's MathJax as written: the commands that
    make links, styles or actions are written without their backslash, with a warning."""
    result = qti(collection, "en", maths="tex")
    check_package(result.data)
    xml = zipfile.ZipFile(io.BytesIO(result.data)).read("items/hostile.xml").decode()
    for command in ("href", "style", "class", "colorbox"):
        assert f"\\{command}" not in xml
    assert any("\\href" in w.message and w.field == "text.en.stem" for w in result.warnings)
