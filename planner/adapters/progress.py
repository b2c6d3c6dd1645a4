"""A progress line on stderr for long steps, only when stderr is a terminal (pipes and files see nothing)."""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

Report = Callable[[int, int], None]


def progress_line(label: str, stream: TextIO | None = None, interval: float = 0.2) -> Report | None:
    """A `report(done, total)` callback that rewrites `label: NN%` in place (at most every `interval` seconds) and
    clears the line when done == total; None when the stream is not a terminal."""
    out = stream if stream is not None else sys.stderr
    if not out.isatty():
        return None
    last = [0.0]

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total:
            out.write("\r\033[K")
            out.flush()
        elif now - last[0] >= interval:
            last[0] = now
            out.write(f"\r{label}: {100 * done // max(total, 1)}%\033[K")
            out.flush()

    return report
