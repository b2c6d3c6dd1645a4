"""Consumer assignors: one small interface and one registry (cf. Kafka's ConsumerPartitionAssignor and the
group coordinator's ConsumerGroupPartitionAssignor; one module per assignor as kafka-python has them).

An `Assignor` runs over a group's members, the subscribed topics' partition counts, the racks of each partition's
replicas and the topic ids, and gives a `StrategyResult`. The CLI builds its `--strategy` choices, their default and
the descriptions it prints from `ASSIGNORS`, in registration order; `register_assignor` adds one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Protocol, Sequence

from planner.assignors import range as range_assignor
from planner.assignors import roundrobin, server_range, sticky, uniform
from planner.assignors.group import Member
from planner.model import PlannerError, TopicPartition, tp_sort_key

Racks = Mapping[TopicPartition, frozenset[str]]


@dataclass(frozen=True)
class StrategyResult:
    strategy: str
    assignment: dict  # member id -> sorted list[TopicPartition]
    exact: bool  # Kafka's exact result (False: see `note`)
    first_round: dict | None = None  # cooperative-sticky: what the first rebalance hands out
    withheld: dict = field(default_factory=dict)  # cooperative-sticky: TopicPartition -> new owner, for a later round
    rounds: int = 1
    note: str | None = None  # why the result is not exactly Kafka's, when it is not
    never_settles: str | None = None  # cooperative-sticky: why the rebalances never end (`assignment`: the last one)

    @property
    def counts(self) -> dict:
        return {m: len(v) for m, v in self.assignment.items()}

    @property
    def spread(self) -> int:
        c = list(self.counts.values())
        return max(c) - min(c) if c else 0


class Assignor(Protocol):
    name: str
    description: str

    def run(
        self, members: Sequence[Member], counts: dict[str, int], racks: Racks, topic_ids: dict[str, str] | None
    ) -> StrategyResult: ...


def _tidy(members: Sequence[Member], assignment: Mapping[str, list[TopicPartition]]) -> dict:
    """Every member, in the group's order, with its partitions in Java's TopicPartition order."""
    return {m.id: sorted(assignment.get(m.id, []), key=tp_sort_key) for m in members}


class RangeAssignor:
    name = "range"
    description = "classic RangeAssignor (client side; KIP-881 rack-aware when racks apply)"

    def run(self, members, counts, racks, topic_ids) -> StrategyResult:
        return StrategyResult(self.name, _tidy(members, range_assignor.assign(members, counts, racks)), True)


class RoundRobinAssignor:
    name = "roundrobin"
    description = "classic RoundRobinAssignor"

    def run(self, members, counts, racks, topic_ids) -> StrategyResult:
        return StrategyResult(self.name, _tidy(members, roundrobin.assign(members, counts)), True)


class StickyAssignor:
    name = "sticky"
    description = "classic StickyAssignor (eager)"

    def run(self, members, counts, racks, topic_ids) -> StrategyResult:
        r = sticky.assign(members, counts, racks)
        return StrategyResult(self.name, _tidy(members, r.assignment), True, withheld=dict(r.transferring))


class CooperativeStickyAssignor:
    name = "cooperative-sticky"
    description = "classic CooperativeStickyAssignor"

    def run(self, members, counts, racks, topic_ids) -> StrategyResult:
        first = sticky.cooperative_first_round(members, counts, racks)
        never = None
        try:
            converged, rounds = sticky.cooperative_converged(members, counts, racks)
        except sticky.NeverSettles as exc:  # Kafka's rebalances repeat forever for this group
            converged, rounds, never = exc.result, exc.rounds, str(exc)
        return StrategyResult(
            self.name,
            _tidy(members, converged.assignment),
            True,
            first_round=_tidy(members, first.assignment),
            withheld=dict(first.transferring),
            rounds=rounds,
            never_settles=never,
        )


class UniformAssignor:
    name = "uniform"
    description = "KIP-848 server-side UniformAssignor (group.consumer.assignors default)"

    def run(self, members, counts, racks, topic_ids) -> StrategyResult:
        note = uniform.inexact_note(members, counts, topic_ids)
        assignment = _tidy(members, uniform.assign(members, counts, topic_ids))
        return StrategyResult(self.name, assignment, note is None, note=note)


class ServerRangeAssignor:
    name = "server-range"
    description = "KIP-848 server-side RangeAssignor (3.9+, stateless)"

    def run(self, members, counts, racks, topic_ids) -> StrategyResult:
        return StrategyResult(self.name, _tidy(members, server_range.assign(members, counts)), True)


ASSIGNORS: dict[str, Assignor] = {}


def register_assignor(assignor: Assignor) -> None:
    ASSIGNORS[assignor.name] = assignor


def get_assignor(name: str) -> Assignor:
    try:
        return ASSIGNORS[name]
    except KeyError:
        raise PlannerError(f"unknown strategy {name!r}: use one of {', '.join(ASSIGNORS)}") from None


for _assignor in (
    RangeAssignor(),
    RoundRobinAssignor(),
    StickyAssignor(),
    CooperativeStickyAssignor(),
    UniformAssignor(),
    ServerRangeAssignor(),
):
    register_assignor(_assignor)
