"""KRaft's `StripedReplicaPlacer`, draw for draw.

Source: `metadata/src/main/java/org/apache/kafka/metadata/placement/StripedReplicaPlacer.java` (3.3+; the same logic
lived in `org.apache.kafka.controller` in 3.0–3.2). The controller keeps one `java.util.Random`; every `place()` call
builds a fresh rack list from the usable brokers (registered, not in controlled shutdown), so the only inputs are the
brokers in the controller's iteration order, the random generator's state and, on trunk, the topic's existing
partitions (used when partitions are added: the offsets continue after the last partition instead of being drawn).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from planner.java import JavaRandom, hashmap_order, java_shuffle, string_hash_code, string_sort_key
from planner.model import PlannerError

UsableBroker = tuple[int, "str | None", bool]  # (id, rack or None, fenced)


def invalid_non_positive(rf: int) -> PlannerError:
    return PlannerError(f"Invalid replication factor {rf}: the replication factor must be positive.")


def all_fenced(cordoning: bool = False) -> PlannerError:
    """`cordoning`: the 4.3+ text (KIP-1066), where brokers whose log dirs are all cordoned are not usable."""
    if cordoning:
        return PlannerError("All brokers are currently fenced, or have all their log directories cordoned.")
    return PlannerError("All brokers are currently fenced.")


def too_few(rf: int, total: int, cordoning: bool = False) -> PlannerError:
    tail = " or some brokers have all their log directories cordoned." if cordoning else "."
    return PlannerError(
        f"The target replication factor of {rf} cannot be reached because only {total} broker(s) are registered{tail}"
    )


@dataclass
class BrokerList:
    """Ids with a rotating offset; within one epoch each broker is returned at most once."""

    brokers: list[int] = field(default_factory=list)
    index: int = 0
    offset: int = 0
    epoch: int = 0

    def initialize(self, rnd: JavaRandom) -> None:
        if self.brokers:
            self.brokers.sort()
            self.offset = rnd.next_int(len(self.brokers))

    def initialize_after(self, previous_offset: int) -> None:
        if self.brokers:
            self.brokers.sort()
            self.offset = (previous_offset + 1) % len(self.brokers)

    def next(self, epoch: int) -> int:
        size = len(self.brokers)
        if size == 0:
            return -1
        if self.epoch != epoch:
            self.epoch = epoch
            self.index = 0
            self.offset = (self.offset + 1) % size
        if self.index >= size:
            return -1
        broker = self.brokers[(self.index + self.offset) % size]
        self.index += 1
        return broker


@dataclass
class Rack:
    fenced: BrokerList = field(default_factory=BrokerList)
    unfenced: BrokerList = field(default_factory=BrokerList)

    def next_unfenced(self, epoch: int) -> int:
        return self.unfenced.next(epoch)

    def next(self, epoch: int) -> int:
        b = self.unfenced.next(epoch)
        return b if b >= 0 else self.fenced.next(epoch)


def _rack_hash(rack: str | None) -> int:
    return 0 if rack is None else string_hash_code(rack)  # Optional<String>.hashCode


def _rack_order_key(rack: str | None) -> tuple[int, bytes]:
    return (0, b"") if rack is None else (1, string_sort_key(rack))  # empty first, then String order


class RackList:
    def __init__(
        self,
        rnd: JavaRandom,
        brokers: Sequence[UsableBroker],
        existing: Sequence[Sequence[int]] = (),
        cordoning: bool = False,
    ):
        self.rnd = rnd
        self.cordoning = cordoning
        self.racks: dict[str | None, Rack] = {}
        broker_rack: dict[int, str | None] = {}
        self.total = self.unfenced = 0
        names: list[str | None] = []
        for broker_id, rack_name, fenced in brokers:
            broker_rack[broker_id] = rack_name
            rack = self.racks.get(rack_name)
            if rack is None:
                names.append(rack_name)
                rack = self.racks[rack_name] = Rack()
            if fenced:
                rack.fenced.brokers.append(broker_id)
            else:
                self.unfenced += 1
                rack.unfenced.brokers.append(broker_id)
            self.total += 1
        # java.util.HashMap<Optional<String>, Rack> iteration order drives the random draws.
        self.hash_order = hashmap_order(names, hash_of=_rack_hash)
        for name in self.hash_order:
            rack = self.racks[name]
            previous = _previous_broker_offset(broker_rack, existing, name, rack.unfenced.brokers)
            rack.fenced.initialize(rnd)
            if previous is None:
                rack.unfenced.initialize(rnd)
            else:
                rack.unfenced.initialize_after(previous)
        self.names = sorted(names, key=_rack_order_key)
        previous_rack = _previous_rack_offset(broker_rack, existing, self.names)
        if previous_rack is not None:
            self.offset = (previous_rack + 1) % len(self.names)
        else:
            self.offset = rnd.next_int(len(self.names)) if self.names else 0
        self.epoch = 0

    def shuffle(self) -> None:
        java_shuffle(self.names, self.rnd)
        for name in self.hash_order:
            java_shuffle(self.racks[name].fenced.brokers, self.rnd)
            java_shuffle(self.racks[name].unfenced.brokers, self.rnd)

    def place(self, rf: int) -> list[int]:
        if rf <= 0:
            raise invalid_non_positive(rf)
        if rf > self.total:
            raise too_few(rf, self.total, self.cordoning)
        if self.unfenced == 0:
            raise all_fenced(self.cordoning)
        if self.epoch == self.unfenced and self.unfenced > 1:
            self.shuffle()
            self.epoch = 0
        n_racks = len(self.names)
        if self.offset == n_racks:
            self.offset = 0
        first = self.offset
        while True:
            b = self.racks[self.names[first]].next_unfenced(self.epoch)
            if b >= 0:
                replicas = [b]
                break
            first = (first + 1) % n_racks
        r = self.offset
        for _ in range(1, rf):
            b = -1
            while b < 0:
                if r == first:
                    first = -1
                else:
                    b = self.racks[self.names[r]].next(self.epoch)
                r = (r + 1) % n_racks
            replicas.append(b)
        self.epoch += 1
        self.offset += 1
        return replicas


def _previous_rack_offset(broker_rack, existing, names) -> int | None:
    if not existing:
        return None
    leader = existing[-1][0]
    if leader not in broker_rack:
        return None
    rack = broker_rack[leader]
    return names.index(rack) if rack in names else None


def _previous_broker_offset(broker_rack, existing, rack, unfenced_unsorted: list[int]) -> int | None:
    # Trunk looks the broker up in the rack's unfenced list *before* it is sorted; emulated as written.
    for replicas in reversed(existing):
        for b in replicas:
            if b not in broker_rack:
                continue
            if broker_rack[b] == rack:
                return unfenced_unsorted.index(b) if b in unfenced_unsorted else None
    return None


def place_striped(
    brokers: Sequence[UsableBroker],
    n_partitions: int,
    replication_factor: int,
    rnd: JavaRandom,
    existing: Sequence[Sequence[int]] = (),
    cordoning: bool = False,
) -> dict[int, list[int]]:
    """`StripedReplicaPlacer.place`: partitions numbered from len(existing); validation in Kafka's order.

    `brokers` are the usable ones: a broker whose log dirs are all cordoned is not among them (KIP-1066,
    `ClusterDescriber.usableBrokers`); `cordoning` picks the error texts of the releases that have it (4.3+)."""
    racks = RackList(rnd, brokers, existing, cordoning)
    if replication_factor <= 0:
        raise invalid_non_positive(replication_factor)
    if racks.unfenced == 0:
        raise all_fenced(cordoning)
    if replication_factor > racks.total:
        raise too_few(replication_factor, racks.total, cordoning)
    start = len(existing)
    return {start + i: racks.place(replication_factor) for i in range(n_partitions)}
