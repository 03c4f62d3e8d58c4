"""Pausing Python's cyclic garbage collector around bulk work that makes no reference cycles.

Loading or linting a bank allocates millions of containers (dicts, models, tuples) that live on;
each allocation burst triggers a collector pass over every object alive, which at 100,000 items
costs seconds and frees nothing. Reference counting still frees everything as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector inside the block (restored after, even on error)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
