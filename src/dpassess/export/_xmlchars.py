"""Characters XML 1.0 cannot hold: every writer of XML or XHTML strips them and says which.
And text and attribute values escaped exactly as libxml2 (lxml) writes them, for the writers
that write XML as text (Moodle XML; QTI items and manifest resources from templates)."""

from __future__ import annotations

import re

# XML 1.0 Char production; anything else cannot be written to an XML file at all.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def not_xml(text: str) -> bool:
    """Whether `text` has a character XML 1.0 cannot carry."""
    return _NOT_XML.search(text) is not None


def xml_safe(text: str) -> tuple[str, str]:
    """`text` without characters XML 1.0 cannot carry, and a note naming the ones removed
    (`"U+0001, U+FFFE"`; empty when nothing was removed)."""
    if _NOT_XML.search(text) is None:  # nearly always: one scan, no list
        return text, ""
    bad = sorted(set(_NOT_XML.findall(text)))
    return _NOT_XML.sub("", text), ", ".join(f"U+{ord(c):04X}" for c in bad)


_TEXT_SPECIAL = re.compile("[&<>\r]")


def escape_text(text: str) -> str:
    """Text content as libxml2 (lxml) writes it: `&` `<` `>` and CR escaped, nothing else."""
    if _TEXT_SPECIAL.search(text) is None:
        return text
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("\r", "&#13;"))


_ATTR_SPECIAL = re.compile('[&<>"\r\n\t]')


def escape_attr(value: str) -> str:
    """An attribute value as libxml2 writes it (between double quotes)."""
    if _ATTR_SPECIAL.search(value) is None:
        return value
    return (value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("\r", "&#13;").replace("\n", "&#10;")
            .replace("\t", "&#9;"))
