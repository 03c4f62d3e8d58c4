"""Behaviour of the export speed-ups (never their speed): the parallel export writes the bytes of
the sequential one, and each fast path gives what the general path gives."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from conftest import ROOT, SEED_BANK, files
from dpassess.bank.load import load_bank
from dpassess.export import EXPORTERS, MULTI, Collection
from dpassess.export.moodle import gift
from dpassess.export.moodle import texts as _moodle
from dpassess.export.runner import FORMAT_DIRS, ExportFile, file_name, write_exports
from dpassess.markup import xhtml as _xhtml

sys.path.insert(0, str(ROOT / "benchmarks"))
import synth


def _exports(collection: Collection, out: Path) -> list[ExportFile]:
    return [ExportFile(collection, fmt, lang, out / FORMAT_DIRS[fmt] / file_name(collection, fmt, lang))
            for fmt in EXPORTERS
            for lang in (*collection.languages, *([MULTI] if EXPORTERS[fmt].multi else []))]


@pytest.mark.parametrize("bank", ["synthetic", "seed"])
def test_parallel_export_equals_sequential(tmp_path: Path, bank: str) -> None:
    root = synth.write(tmp_path / "bank", 60) if bank == "synthetic" else SEED_BANK
    collection = Collection.from_bank(load_bank(root))
    seq = write_exports(_exports(collection, tmp_path / "seq"), jobs=1)
    par = write_exports(_exports(collection, tmp_path / "par"), jobs=2)
    # every format in id and en, and multi where it carries several languages
    n = sum(2 + fmt.multi for fmt in EXPORTERS.values())
    assert len(seq) == n
    assert seq == par  # the same warnings, export by export
    one, two = files(tmp_path / "seq"), files(tmp_path / "par")
    assert len(one) == n
    for name in one:
        assert one[name] == two[name], name


def test_parallel_exports_keep_the_given_order(tmp_path: Path) -> None:
    collection = Collection.from_bank(load_bank(SEED_BANK))
    pairs = [("gift", "en"), ("qti21", "id"), ("moodle-xml", MULTI), ("gift", "id")]
    exports = [ExportFile(collection, f, la, tmp_path / f"{n}-{f}-{la}")
               for n, (f, la) in enumerate(pairs)]
    warnings = write_exports(exports, jobs=2)
    expected = [EXPORTERS[f].export(collection, la) for f, la in pairs]
    assert [e.path.read_bytes() for e in exports] == [r.data for r in expected]
    assert warnings == [r.warnings for r in expected]


# --- fast paths against the general path ----------------------------------------------------

_TEXT = st.text(
    alphabet=st.sampled_from(list("ab c\n\t\"'é漢😀\xa0<>&\r;/p\u2028\x7f\x85\u3000-.")), max_size=12
)


def _flow_general(html: str) -> tuple[bytes, set[str]]:
    parent = etree.Element(_xhtml._Q + "div", nsmap={None: _xhtml.QTI_NS})
    notes: set[str] = set()
    root = _xhtml.parse(html, notes)
    _xhtml.clean(root, _xhtml.FLOW, notes)
    if root.text:
        _xhtml._append_text(parent, len(parent), root.text)
    for child in root:
        parent.append(child)
    return etree.tostring(parent), notes


@given(_TEXT, st.booleans())
def test_qti_flow_fast_path(text: str, paragraph: bool) -> None:
    html = f"<p>{text}</p>" if paragraph else text
    try:
        expected = _flow_general(html)
    except ValueError:  # not XML text: the exporter removes such characters first
        return
    parent = etree.Element(_xhtml._Q + "div", nsmap={None: _xhtml.QTI_NS})
    notes: set[str] = set()
    _xhtml.append_flow(parent, html, notes)
    assert (etree.tostring(parent), notes) == expected


def _multilang_general(texts: tuple[tuple[str, str], ...]) -> tuple[str, frozenset[str]]:
    from lxml import html as lxml_html

    merger = _moodle._Merger(tuple(la for la, _ in texts))
    parsed = {la: lxml_html.fragment_fromstring(h, create_parent="div") for la, h in texts}
    out = etree.Element("div")
    merger.merge(out, {la: _moodle._segments(el) for la, el in parsed.items()})
    return etree.tostring(out, method="html", encoding="unicode")[5:-6], frozenset(merger.problems)


@given(_TEXT, _TEXT, st.booleans())
def test_multilang_fast_path(a: str, b: str, paragraph: bool) -> None:
    texts = (("id", f"<p>{a}</p>" if paragraph else a), ("en", f"<p>{b}</p>" if paragraph else b))
    fast = _moodle._plain_multilang(texts)
    if a == b or fast is None:
        return
    assert (fast, frozenset()) == _multilang_general(texts)


@given(st.text(alphabet=st.sampled_from(list("ab \\~=#{}:\n\r\t<>&é")), max_size=20))
def test_gift_escape_equals_the_translate_table(text: str) -> None:
    table = str.maketrans({
        "\\": "\\\\", "~": "\\~", "=": "\\=", "#": "\\#", "{": "\\{", "}": "\\}", ":": "\\:",
        "\n": "\\n", "\r": "",
    })
    assert gift.escape(text) == text.translate(table)


def test_build_through_the_lint_cache_gives_the_same_result(tmp_path: Path) -> None:
    from dpassess.app.build import build

    items = tmp_path / "items"
    synth.write(items / "synthetic", 40)
    none = tmp_path / "no-blueprints"
    runs = []
    for n, kw in enumerate([{"use_cache": False}, {"cache_dir": tmp_path / "c"},
                            {"cache_dir": tmp_path / "c"}]):
        out = tmp_path / f"out{n}"
        report = build(items, out, none, **kw)
        lines = [line.replace(str(out), "OUT") for line in report.lines]
        runs.append((lines, report.warnings, report.exit_code, files(out)))
    assert any(p.suffix == ".lint" for p in (tmp_path / "c").iterdir())  # the cache was filled
    assert runs[0] == runs[1] == runs[2]
