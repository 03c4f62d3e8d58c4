"""Characters XML 1.0 cannot hold: every writer of XML or XHTML strips them and says which."""

from __future__ import annotations

import re

# Outside the XML 1.0 Char production (#x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] |
# [#x10000-#x10FFFF]); such a character cannot be written to an XML file at all. Written as the
# characters left out (controls, surrogates, U+FFFE, U+FFFF): the same set as the negated
# production (a test compares them over every code point), which takes Python's regex compiler
# 20 times as long to build, at every start-up of a command that writes or checks text.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> tuple[str, str]:
    """`text` without characters XML 1.0 cannot carry, and a note naming the ones removed
    (`"U+0001, U+FFFE"`; empty when nothing was removed)."""
    if text.isprintable() or _NOT_XML.search(text) is None:  # nearly always: no list
        return text, ""
    bad = sorted(set(_NOT_XML.findall(text)))
    return _NOT_XML.sub("", text), ", ".join(f"U+{ord(c):04X}" for c in bad)


def has_non_xml(text: str) -> bool:
    """True when `text` holds a character XML 1.0 cannot carry (what `xml_safe` removes).

    Printable text (no character of Unicode's categories Other or Separator but the space) holds
    none: those are controls (Cc), surrogates (Cs) and noncharacters (Cn, U+FFFE and U+FFFF);
    `str.isprintable` tells that several times faster than the regex scans."""
    return not text.isprintable() and _NOT_XML.search(text) is not None
