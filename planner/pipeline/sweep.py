"""Choosing a partition count from a sweep: pure functions over per-count partition loads."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from planner.model import PlannerError
from planner.pipeline.metrics import Skew, skew

DEFAULT_MAX_SKEW = 1.2


def parse_sweep(text: str | None) -> tuple[int, ...]:
    """`"6,12,24"` → (6, 12, 24): positive, distinct, kept in ascending order."""
    if not text:
        return ()
    counts = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        try:
            value = int(item)
        except ValueError:
            raise PlannerError(f"--sweep {text!r}: {item!r} is not a partition count (use e.g. --sweep 6,12,24,48)") from None
        if value <= 0:
            raise PlannerError(f"--sweep {text!r}: partition counts must be positive, got {value}")
        counts.append(value)
    if not counts:
        raise PlannerError(f"--sweep {text!r}: no partition counts (use e.g. --sweep 6,12,24,48)")
    return tuple(sorted(set(counts)))


@dataclass(frozen=True)
class SweepRow:
    partitions: int
    records: Skew
    bytes: Skew
    within: bool  # records max/mean <= max_skew


@dataclass(frozen=True)
class SweepResult:
    rows: tuple[SweepRow, ...]
    max_skew: float
    recommended: int | None  # the smallest count whose records max/mean <= max_skew; None when none does


def evaluate_sweep(records: Mapping[int, Sequence[int]], bytes_: Mapping[int, Sequence[int]],
                   max_skew: float = DEFAULT_MAX_SKEW) -> SweepResult:
    """`records[n]` / `bytes_[n]`: per-partition loads when the topic has n partitions.

    A count qualifies when its records max/mean is at most `max_skew` (with no keyed records at all every count
    qualifies: nothing is skewed). The recommendation is the smallest qualifying count.
    """
    if max_skew < 1.0:
        raise PlannerError(f"--max-skew {max_skew}: max/mean is never below 1.0; use a value >= 1.0 such as 1.2")
    rows = []
    for n in sorted(records):
        rec = skew(records[n])
        ratio = rec.max_over_mean
        rows.append(SweepRow(n, rec, skew(bytes_[n]), ratio is None or ratio <= max_skew))
    recommended = next((r.partitions for r in rows if r.within), None)
    return SweepResult(tuple(rows), max_skew, recommended)
