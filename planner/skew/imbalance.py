"""Skew metrics over per-partition (or per-broker) loads: pure functions, no I/O.

* max/mean: the hottest partition's load relative to a perfectly even spread (1.0 = even);
* coefficient of variation: population standard deviation / mean;
* Gini coefficient: 0 = all equal, (n-1)/n = everything on one partition.

All three are over the loads as given, empty partitions included (a topic of N partitions has N loads). When the total
is zero the metrics are undefined and returned as None.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class Skew:
    n: int
    total: int
    minimum: int
    maximum: int
    mean: float
    max_over_mean: float | None
    cv: float | None
    gini: float | None

    def as_dict(self) -> dict:
        return {
            "n": self.n,
            "total": self.total,
            "min": self.minimum,
            "max": self.maximum,
            "mean": self.mean,
            "max_over_mean": self.max_over_mean,
            "cv": self.cv,
            "gini": self.gini,
        }


def max_over_mean(loads: Sequence[int]) -> float | None:
    total = sum(loads)
    if not loads or total == 0:
        return None
    return max(loads) * len(loads) / total


def coefficient_of_variation(loads: Sequence[int]) -> float | None:
    n = len(loads)
    total = sum(loads)
    if n == 0 or total == 0:
        return None
    # exact integer sum of squared deviations scaled by n^2: sum((n*x - total)^2) / n^2
    ss = sum((n * x - total) ** 2 for x in loads)
    return math.sqrt(ss / n) / total


def gini(loads: Sequence[int]) -> float | None:
    """G = sum_i sum_j |x_i - x_j| / (2 n^2 mean) = (2 sum_i i*x_(i)) / (n * total) - (n + 1) / n, x sorted, i from
    1."""
    n = len(loads)
    total = sum(loads)
    if n == 0 or total == 0:
        return None
    weighted = sum(i * x for i, x in enumerate(sorted(loads), start=1))
    return (2 * weighted - (n + 1) * total) / (n * total)


def skew(loads: Sequence[int]) -> Skew:
    loads = [int(x) for x in loads]
    n = len(loads)
    total = sum(loads)
    return Skew(
        n=n,
        total=total,
        minimum=min(loads) if loads else 0,
        maximum=max(loads) if loads else 0,
        mean=total / n if n else 0.0,
        max_over_mean=max_over_mean(loads),
        cv=coefficient_of_variation(loads),
        gini=gini(loads),
    )
