"""Text, TSV and JSON renderings of partitioner, consumer-group and coordinator results."""
from __future__ import annotations

import json
from typing import Iterable

from planner.model import TopicPartition


def compact(tps: Iterable[TopicPartition]) -> str:
    """[orders-0, orders-1, orders-2, orders-5, pay-1] → "orders 0-2,5; pay 1"."""
    by_topic: dict[str, list[int]] = {}
    for tp in tps:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    parts = []
    for topic, ids in by_topic.items():
        ids = sorted(ids)
        runs, start, prev = [], ids[0], ids[0]
        for i in ids[1:]:
            if i == prev + 1:
                prev = i
                continue
            runs.append(f"{start}-{prev}" if prev > start else str(start))
            start = prev = i
        runs.append(f"{start}-{prev}" if prev > start else str(start))
        parts.append(f"{topic} {','.join(runs)}")
    return "; ".join(parts) if parts else "-"


def dumps(data) -> str:
    return json.dumps(data, indent=2, sort_keys=False) + "\n"
