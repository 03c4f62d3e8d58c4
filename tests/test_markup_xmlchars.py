"""The characters writers strip: exactly those outside XML 1.0's Char production."""

from __future__ import annotations

from dpassess.markup.xmlchars import has_non_xml, xml_safe


def _is_xml_char(c: int) -> bool:
    """XML 1.0 (Fifth Edition) section 2.2, production [2]: #x9 | #xA | #xD | [#x20-#xD7FF] |
    [#xE000-#xFFFD] | [#x10000-#x10FFFF]."""
    return (c in (0x9, 0xA, 0xD) or 0x20 <= c <= 0xD7FF or 0xE000 <= c <= 0xFFFD
            or 0x10000 <= c <= 0x10FFFF)


def test_every_code_point_is_kept_or_stripped_as_the_xml_spec_says():
    every = "".join(map(chr, range(0x110000)))
    kept, note = xml_safe(every)
    assert kept == "".join(ch for ch in every if _is_xml_char(ord(ch)))
    stripped = [c for c in range(0x110000) if not _is_xml_char(c)]
    assert note == ", ".join(f"U+{c:04X}" for c in stripped)
    for c in (0x0, 0x8, 0x9, 0xB, 0x1F, 0x20, 0xD7FF, 0xD800, 0xDFFF, 0xE000, 0xFFFD, 0xFFFE,
              0xFFFF, 0x10000, 0x10FFFF):
        assert has_non_xml(f"a{chr(c)}b") is not _is_xml_char(c), hex(c)
