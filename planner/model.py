"""The core's immutable types: brokers, partitions, topics, a cluster.

Everything the planner computes is a pure function over these frozen dataclasses. Adapters
(`planner.adapters.topology_yaml`, `planner.adapters.zk`) build them; renderers read them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Iterable, Iterator, Mapping, NamedTuple, overload

from planner.java import int32, string_hash_code, string_sort_key

NO_LEADER = -1

ONLINE = "online"
OFFLINE = "offline"
FENCED = "fenced"
BROKER_STATES = (ONLINE, OFFLINE, FENCED)

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


class PlannerError(Exception):
    """Bad input or an impossible request. The CLI prints the message on one line and exits 2.

    Where Kafka has a text for the case, the message is Kafka's text.
    """


class EnvironmentFailure(PlannerError):
    """What the environment failed to do, not what the user gave: a cluster or ZooKeeper unreachable, a request the
    controller refused. The CLI exits 1 for it (2 for any other `PlannerError`: bad input or usage)."""

    exit_code = 1


def not_utf8(where: str, exc: UnicodeDecodeError) -> PlannerError:
    """A file that is not UTF-8 text: which byte, where, and what to do."""
    return PlannerError(
        f"{where}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); save it as UTF-8"
    )


class TopicPartition(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:  # Kafka's TopicPartition.toString
        return f"{self.topic}-{self.partition}"


def tp_sort_key(tp: TopicPartition) -> tuple[bytes, int]:
    """Kafka's `TopicPartitionComparator` / `compareTopicPartitions`: topic (String.compareTo), then partition."""
    return string_sort_key(tp.topic), tp.partition


def tp_hash(tp: TopicPartition) -> int:
    """`TopicPartition.hashCode`: 31 * (31 + partition) + topic.hashCode()."""
    return int32(31 * (31 + tp.partition) + string_hash_code(tp.topic))


@dataclass(frozen=True)
class Broker:
    id: int
    rack: str | None = None
    host: str | None = None
    port: int | None = None
    state: str = ONLINE  # online | offline | fenced
    cordoned: bool = False  # every log dir cordoned (KIP-1066, `cordoned.log.dirs`): keeps its replicas, gets no new
    # bytes free for new replicas in its log dirs that are not cordoned, and the size of all its log dirs
    # (DescribeLogDirs v4+, KIP-827); None when not reported. No plan copies more bytes onto it than `usable_bytes`.
    usable_bytes: int | None = None
    total_bytes: int | None = None

    @property
    def online(self) -> bool:
        """Alive and able to lead (a fenced KRaft broker is registered but not active)."""
        return self.state == ONLINE

    @property
    def label(self) -> str:
        """The state as tables print it: `online`, `fenced`, ... with `, cordoned` when every log dir is."""
        return f"{self.state}, cordoned" if self.cordoned else self.state

    @property
    def placeable(self) -> bool:
        """Can take new replicas: online and not cordoned (KIP-1066: the controller's `usableBrokers` leaves out a
        broker whose log dirs are all cordoned, and a reassignment onto it is refused)."""
        return self.state == ONLINE and not self.cordoned


@dataclass(frozen=True)
class ObservedState:
    """Leader and ISR as a cluster reported them (topology `state:` or a ZooKeeper state znode)."""

    leader: int  # NO_LEADER (-1) when the partition has no leader
    isr: tuple[int, ...]
    leader_epoch: int | None = None
    elr: tuple[int, ...] | None = None  # KIP-966 eligible leader replicas (KRaft 3.8+); None = unknown
    last_known_elr: tuple[int, ...] | None = None


class _TopicPartitionOnce:
    """`Partition.tp`: its TopicPartition, made on first use and kept in the partition's own attributes (as
    `functools.cached_property` keeps it, without the lock it takes on every first use: about 0.4 s of CPU over the
    700,000 partitions a 1M plan changes)."""

    @overload
    def __get__(self, p: None, owner: type | None = None) -> _TopicPartitionOnce: ...
    @overload
    def __get__(self, p: Partition, owner: type | None = None) -> TopicPartition: ...
    def __get__(self, p: Partition | None, owner: type | None = None) -> TopicPartition | _TopicPartitionOnce:
        if p is None:
            return self
        tp = p.__dict__["tp"] = TopicPartition(p.topic, p.id)  # frozen: not through __setattr__
        return tp


@dataclass(frozen=True)
class Partition:
    topic: str
    id: int
    replicas: tuple[int, ...]  # first = preferred leader
    adding: tuple[int, ...] = ()  # in-progress reassignment (KIP-455)
    removing: tuple[int, ...] = ()
    observed: ObservedState | None = None
    size: int | None = None  # bytes on one replica, when known

    tp = _TopicPartitionOnce()  # made once per partition: plans and their figures key every partition by it

    @property
    def replication_factor(self) -> int:
        """RF as Kafka counts it during a reassignment: replicas minus adding (2.5+)."""
        if self.adding or self.removing:
            return len(self.replicas) - len(self.adding)
        return len(self.replicas)


@dataclass(frozen=True)
class Topic:
    name: str
    partitions: tuple[Partition, ...]  # ordered by id, ids 0..n-1
    configs: Mapping[str, str] = field(default_factory=dict, hash=False, compare=True)
    topic_id: str | None = None  # Kafka's base64url form, 22 characters
    marked_for_deletion: bool = False

    @property
    def partition_count(self) -> int:
        return len(self.partitions)

    @property
    def replication_factor(self) -> int:
        """RF of the lowest-numbered partition, as `kafka-topics --describe` reports it."""
        return self.partitions[0].replication_factor if self.partitions else 0

    @property
    def internal(self) -> bool:
        return self.name in INTERNAL_TOPICS

    def partition(self, pid: int) -> Partition:
        return self.partitions[pid]

    def config_int(self, name: str, default: int) -> int:
        value = self.configs.get(name)
        return int(value) if value is not None else default

    def config_bool(self, name: str, default: bool) -> bool:
        value = self.configs.get(name)
        return value.strip().lower() == "true" if value is not None else default

    def assignment(self) -> dict[int, tuple[int, ...]]:
        return {p.id: p.replicas for p in self.partitions}


@dataclass(frozen=True)
class Cluster:
    brokers: tuple[Broker, ...]  # ordered by id
    topics: tuple[Topic, ...] = ()  # ordered by name
    name: str | None = None
    mode: str = "kraft"  # "kraft" or "zookeeper": decides what describe prints for ELR (3.8+)

    # -- lookups -------------------------------------------------------------------------------
    @cached_property  # computed once per cluster: callers ask per topic (frozen: the fields cannot change)
    def broker_ids(self) -> tuple[int, ...]:
        return tuple(b.id for b in self.brokers)

    @cached_property
    def online_ids(self) -> frozenset[int]:
        return frozenset(b.id for b in self.brokers if b.online)

    @cached_property
    def placeable_ids(self) -> frozenset[int]:
        """Online brokers that take new replicas (not cordoned, KIP-1066)."""
        return frozenset(b.id for b in self.brokers if b.placeable)

    @cached_property
    def cordoned_ids(self) -> frozenset[int]:
        """Brokers whose log dirs are all cordoned (KIP-1066): their replicas may stay, none may be added."""
        return frozenset(b.id for b in self.brokers if b.cordoned)

    def broker(self, broker_id: int) -> Broker:
        return self._broker_index[broker_id]

    @cached_property
    def _broker_index(self) -> dict[int, Broker]:
        return {b.id: b for b in self.brokers}

    @cached_property
    def _topic_index(self) -> dict[str, Topic]:
        return {t.name: t for t in self.topics}

    def rack_of(self) -> dict[int, str | None]:
        return {b.id: b.rack for b in self.brokers}

    def usable_bytes(self) -> dict[int, int]:
        """Per broker, the bytes its log dirs that take new replicas report usable; brokers reporting none left out."""
        return {b.id: b.usable_bytes for b in self.brokers if b.usable_bytes is not None}

    def has_topic(self, name: str) -> bool:
        return name in self._topic_index

    def topic(self, name: str) -> Topic:
        return self._topic_index[name]

    def partitions(self) -> Iterator[Partition]:
        for t in self.topics:
            yield from t.partitions

    def assignment(self) -> dict[TopicPartition, tuple[int, ...]]:
        return {p.tp: p.replicas for p in self.partitions()}

    # -- derived clusters ------------------------------------------------------------------------
    def with_topic(self, topic: Topic) -> "Cluster":
        """This cluster with `topic` added or replaced."""
        others = [t for t in self.topics if t.name != topic.name]
        return replace(self, topics=tuple(sorted(others + [topic], key=lambda t: t.name)))

    def with_broker_states(self, states: Mapping[int, str]) -> "Cluster":
        """Override broker states, e.g. `--offline-brokers 2,3` → {2: offline, 3: offline}."""
        unknown = sorted(set(states) - set(self.broker_ids))
        if unknown:
            raise PlannerError(
                f"unknown broker id(s) {','.join(map(str, unknown))}: the cluster has brokers "
                f"{','.join(map(str, self.broker_ids))}"
            )
        return replace(self, brokers=tuple(replace(b, state=states.get(b.id, b.state)) for b in self.brokers))

    def with_assignment(self, assignment: Mapping[TopicPartition, Iterable[int]]) -> "Cluster":
        """This cluster after a reassignment and the preferred election that follows it: replica lists replaced;
        moved partitions in the steady state (observed leader and ISR dropped). A partition whose replicas are only
        reordered keeps its ISR, as the controller keeps it (ReplicationControlManager.changePartitionReassignment:
        no replica adding or removing, the new order is written at once), and leads from its new first replica where
        that is in the ISR (the preferred election; else the leader stays)."""
        by_topic: dict[str, dict[int, tuple[int, ...]]] = {}
        for tp, replicas in assignment.items():
            by_topic.setdefault(tp.topic, {})[tp.partition] = tuple(replicas)
        topics = []
        for t in self.topics:
            changes = by_topic.get(t.name)
            if not changes:
                topics.append(t)
                continue
            parts = tuple(
                _reassigned(p, changes[p.id]) if p.id in changes and changes[p.id] != p.replicas else p
                for p in t.partitions
            )
            topics.append(replace(t, partitions=parts))
        return replace(self, topics=tuple(topics))


def _reassigned(p: Partition, replicas: tuple[int, ...]) -> Partition:
    """Partition p once its reassignment to `replicas` completes (`Cluster.with_assignment`)."""
    seen = p.observed
    if seen is None or p.adding or p.removing or sorted(replicas) != sorted(p.replicas):
        return replace(p, replicas=replicas, adding=(), removing=(), observed=None)
    head = replicas[0] if replicas else NO_LEADER
    return replace(p, replicas=replicas, observed=replace(seen, leader=head if head in seen.isr else seen.leader))


def make_topic(
    name: str,
    assignment: Mapping[int, Iterable[int]],
    configs: Mapping[str, str] | None = None,
    topic_id: str | None = None,
) -> Topic:
    """A topic from a partition → replicas map (partitions ordered by id)."""
    parts = tuple(Partition(topic=name, id=pid, replicas=tuple(assignment[pid])) for pid in sorted(assignment))
    return Topic(name=name, partitions=parts, configs=dict(configs or {}), topic_id=topic_id)


INT32_MAX = 2**31 - 1


def parse_id_list(text: str, what: str = "broker list") -> tuple[int, ...]:
    """`"1,2,3"` → (1, 2, 3); one clear error for anything else."""
    ids = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        try:
            ids.append(int(item))
        except ValueError:
            raise PlannerError(f"{what} {text!r}: {item!r} is not an integer broker id") from None
        if not 0 <= ids[-1] <= INT32_MAX:
            raise PlannerError(f"{what} {text!r}: broker id {item} is outside 0..{INT32_MAX} (a Java int)")
    if not ids:
        raise PlannerError(f"{what} {text!r} names no broker id")
    return tuple(ids)


def human_bytes(n: int | float) -> str:
    """A size as plans and tables print it: `512 B`, `1.5 KiB` ... `2.0 TiB`."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if (abs(n) < 1024 and (unit == "B" or round(abs(n), 1) < 1024)) or unit == "TiB":  # never "1024.0 GiB"
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


_RATE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([KMGT]i?B|B)?\s*(/\s*s(?:ec)?)?\s*", re.IGNORECASE)
_UNITS = {
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
RATE_HELP = (
    "bytes per second: 50000000, 50MB, 48MiB, 1.5GB, 100MiB/s; units case-insensitive, KB/MB/GB/TB are SI "
    "(10^3, 10^6, ...: 50mb = 50MB = 50000000), KiB/MiB/GiB/TiB binary (2^10, 2^20, ...)"
)


def _amount(text: str, what: str, rate: bool) -> int:
    m = _RATE.fullmatch(text)
    if not m or (m.group(3) and not rate):
        example = "50000000, 50MB, 48MiB, 1.5GB, 100MiB/s" if rate else "50000000000, 50GB, 48GiB, 1.5TB"
        kind = "a rate in bytes per second" if rate else "a size in bytes"
        raise PlannerError(
            f"{what} {text!r} is not {kind} (e.g. {example}; KB, MB, GB, TB: 10^3, 10^6, ...; KiB, MiB, GiB, TiB: "
            "2^10, 2^20, ...)"
        )
    from fractions import Fraction

    value = int(Fraction(m.group(1)) * _UNITS[(m.group(2) or "b").lower()])  # whole bytes, rounded down
    if value <= 0:
        if rate:
            raise PlannerError(f"{what} must be at least 1 byte per second (0 would stop the moving replicas)")
        raise PlannerError(f"{what} must be at least 1 byte")
    if value > 2**63 - 1:
        raise PlannerError(f"{what} {text!r} is beyond a Java long of bytes{' per second' if rate else ''}")
    return value


def parse_rate(text: str, what: str) -> int:
    """A throttle in bytes per second (`RATE_HELP`): "50000000", "50MB" (10^6, any case), "48MiB" (2^20), "1.5GB",
    "100MiB/s"; a fraction of a byte is dropped. Kafka's --throttle is a Java long of bytes per second; 0 would stop
    replication of the moving partitions, so it is refused."""
    return _amount(text, what, True)


def parse_size(text: str, what: str) -> int:
    """A number of bytes: "50000000000", "50GB" (10^9, any case), "48GiB" (2^30), "1.5TB"."""
    return _amount(text, what, False)
