"""A one-line progress display on stderr for long commands: stage names -> a status line.

Shown only when stderr is a terminal and not in CI (`CI` set) or with `TERM=dumb`; piped
output and CI logs get nothing. The line is cleared when the work ends.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


def wanted() -> bool:
    """Whether a progress line may be drawn: stderr is a terminal, outside CI."""
    stream = sys.stderr
    return (hasattr(stream, "isatty") and stream.isatty() and not os.environ.get("CI")
            and os.environ.get("TERM") != "dumb")


@contextmanager
def progress() -> Iterator[Callable[[str], None]]:
    """Yields `show(stage)`: draws "dpassess: <stage>… <seconds>" over the previous stage
    (nothing when `wanted()` is false); the line is erased when the block ends."""
    if not wanted():
        yield lambda stage: None
        return
    start = time.monotonic()
    drawn = False

    def show(stage: str) -> None:
        nonlocal drawn
        sys.stderr.write(f"\r\x1b[2Kdpassess: {stage}… {time.monotonic() - start:.1f} s")
        sys.stderr.flush()
        drawn = True

    try:
        yield show
    finally:
        if drawn:
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()
