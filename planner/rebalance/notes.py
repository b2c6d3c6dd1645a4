"""Which notes does every kind of plan share?

`Note` (data the renderer words, never formatted here), and the notes of partitions left as they are because they are
mid-reassignment or would name an offline broker, and of a plan that ignores racks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from planner.model import Cluster, TopicPartition
from planner.rebalance.moves import rackless


@dataclass(frozen=True)
class Note:
    """Something the summary must tell: `goal` (its name), `kind` (what happened), `count` (how many), the partitions
    or topics concerned, figures (`values`) the renderer words (never formatted here), and names it prints as they
    are (`names`: racks)."""

    goal: str
    kind: str
    count: int = 0
    partitions: tuple[TopicPartition, ...] = ()
    topics: tuple[str, ...] = ()
    values: tuple[float, ...] = ()
    names: tuple[str, ...] = ()


def in_progress_note(tps: Iterable[TopicPartition]) -> Note:
    """Partitions mid-reassignment (adding or removing replicas), which a plan leaves as they are."""
    parts = tuple(sorted(tps))
    return Note("hard", "in-progress", len(parts), partitions=parts)


def offline_note(tps: Iterable[TopicPartition]) -> Note:
    """Partitions a plan leaves as they are because their new replica list would name a broker that is not online:
    Kafka's `--execute` refuses a reassignment naming one (`moves.names_offline`)."""
    parts = tuple(sorted(tps))
    return Note("hard", "offline", len(parts), partitions=parts)


def rackless_notes(cluster: Cluster, brokers: Sequence[int]) -> tuple[Note, ...]:
    """The note of a plan over brokers some of which have no rack while others have one (`moves.rackless`): it
    ignores racks."""
    missing = rackless(cluster, brokers)
    return (Note("hard", "rackless", len(missing), values=missing),) if missing else ()
