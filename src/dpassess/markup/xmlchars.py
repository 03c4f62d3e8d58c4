"""Characters XML 1.0 cannot hold: every writer of XML or XHTML strips them and says which."""

from __future__ import annotations

import re

# XML 1.0 Char production; anything else cannot be written to an XML file at all.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


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
