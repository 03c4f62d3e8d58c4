"""Banks, their findings and their assembled forms -> a static site a reviewer opens in a browser.

`gather.py` collects what a page shows of a bank (lint findings, the statistics history, what
each export format warns about); `pages.py` turns that into pages (an index, a page per item,
a page per blueprint's forms, the rule pages) as bytes by relative path. The pages are built
with lxml, need no server, no network and no JavaScript to be read (a small local script adds
filtering to the index), and are the same bytes for the same banks.
"""

from __future__ import annotations

from dpassess.preview.gather import BankView, gather
from dpassess.preview.pages import render_site

__all__ = ["BankView", "gather", "render_site"]
