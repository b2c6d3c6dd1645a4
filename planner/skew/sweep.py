"""Choosing a partition count from a sweep: pure functions over per-count partition loads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from planner.model import PlannerError
from planner.skew.imbalance import Skew, skew

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
            raise PlannerError(
                f"--sweep {text!r}: {item!r} is not a partition count (use e.g. --sweep 6,12,24,48)"
            ) from None
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
    lowest: int | None = None  # the count with the lowest records max/mean (the smallest on a tie)
    hot_key_limit: int | None = None  # above this count the top key alone exceeds max_skew (None: no top key given)


def hot_key_limit(top_key_records: int, keyed_records: int, max_skew: float) -> int | None:
    """The largest partition count n at which one key of `top_key_records` can still leave max/mean <= max_skew.

    Its partition holds at least those records and the mean is keyed / n, so max/mean >= top * n / keyed: every count
    above the returned one exceeds `max_skew` whatever the other keys do. Computed with the same float comparison as
    `SweepRow.within`. None when there is no key.
    """
    if top_key_records <= 0 or keyed_records <= 0:
        return None
    n = int(max_skew * keyed_records // top_key_records)
    while n > 0 and top_key_records * n / keyed_records > max_skew:
        n -= 1
    while top_key_records * (n + 1) / keyed_records <= max_skew:
        n += 1
    return n


def evaluate_sweep(
    records: Mapping[int, Sequence[int]],
    bytes_: Mapping[int, Sequence[int]],
    max_skew: float = DEFAULT_MAX_SKEW,
    top_key_records: int | None = None,
) -> SweepResult:
    """`records[n]` / `bytes_[n]`: per-partition loads when the topic has n partitions; `top_key_records`: the
    records of the most frequent key, when known (for `hot_key_limit`).

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
    ranked = [r for r in rows if r.records.max_over_mean is not None]
    lowest = min(ranked, key=lambda r: (r.records.max_over_mean, r.partitions)).partitions if ranked else None
    keyed = sum(next(iter(records.values()), ()))
    limit = hot_key_limit(top_key_records, keyed, max_skew) if top_key_records else None
    return SweepResult(tuple(rows), max_skew, recommended, lowest, limit)
