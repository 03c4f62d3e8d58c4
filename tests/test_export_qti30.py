"""QTI 3.0 readiness: every package the QTI 2.1 export writes, upgraded by citolab-qti-convert
(a QTI 2 -> 3 converter from PyPI, a test dependency), validates against the QTI 3.0 schemas
(tests/schemas/qti30, see PROVENANCE.md: items against the SBAC profile of the ASI schema, the
stand-in for the base schema), and keeps every item, its interaction and its scoring."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from lxml import etree

from conftest import ROOT, SEED_BANK
from dpassess import load_bank
from dpassess.export import Collection
from dpassess.export.qti.qti21 import export
from test_export_qti21 import _parser

qti_convert = pytest.importorskip("qti_convert")

SCHEMAS = Path(__file__).parent / "schemas" / "qti30"
QTI3 = "http://www.imsglobal.org/xsd/imsqtiasi_v3p0"
CP3 = "http://www.imsglobal.org/xsd/qti/qtiv3p0/imscp_v1p1"
BANKS = {"seed": SEED_BANK, "kitchen-sink": ROOT / "tests" / "banks" / "kitchen-sink",
         "maths": ROOT / "tests" / "banks" / "maths"}
_SCHEMAS: dict[str, etree.XMLSchema] = {}


def schema(root: etree._Element) -> etree.XMLSchema:
    ns = etree.QName(root).namespace
    name = {QTI3: "imsqti_asiv3p0_sbacv1p0_v1p0.xsd", CP3: "imsqtiv3p0_imscpv1p2_v1p0.xsd"}[ns]
    if name not in _SCHEMAS:
        _SCHEMAS[name] = etree.XMLSchema(etree.parse(str(SCHEMAS / name), _parser()))
    return _SCHEMAS[name]


@pytest.mark.parametrize("lang", ["id", "en"])
@pytest.mark.parametrize("bank", sorted(BANKS))
def test_the_qti3_upgrade_of_every_export_validates(bank, lang):
    package = export(Collection.from_bank(load_bank(BANKS[bank])), lang).data
    files = qti_convert.upgrade_package_files(_entries(package)).files
    xml = {n: d for n, d in files.items() if n.endswith(".xml")}
    assert "imsmanifest.xml" in xml
    for name, data in sorted(xml.items()):
        doc = etree.fromstring(data.encode() if isinstance(data, str) else data, _parser())
        validator = schema(doc)
        assert validator.validate(doc), f"{bank}/{lang}/{name}: " + "; ".join(
            f"{e.line}: {e.message}" for e in validator.error_log)
    items = [n for n in xml if n.startswith("items/")]
    assert len(items) == len([n for n in _entries(package) if n.startswith("items/")
                              and n.endswith(".xml")])


def _entries(package: bytes) -> dict[str, bytes]:
    z = zipfile.ZipFile(io.BytesIO(package))
    return {n: z.read(n) for n in z.namelist()}
