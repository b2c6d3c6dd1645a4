"""One line per figure: the figure, its yardstick measured in the same run, the ratio and the target."""

from __future__ import annotations

import time
from contextlib import contextmanager


def line(
    name: str,
    value: float,
    unit: str,
    yardstick: float | None = None,
    yardstick_name: str = "",
    target: str = "",
    higher_is_better: bool = True,
) -> None:
    text = f"   {name}: {value:,.3f} {unit}"
    if yardstick is not None and yardstick > 0:
        ratio = value / yardstick if higher_is_better else yardstick / value if value else float("inf")
        text += f"  | yardstick {yardstick_name}: {yardstick:,.3f} {unit}  | ratio {ratio:.2f}x"
    if target:
        text += f"  | target {target}"
    print(text, flush=True)


@contextmanager
def timer():
    box = {}
    start = time.perf_counter()
    yield box
    box["s"] = time.perf_counter() - start
