"""An offline twin: a cluster assembled from the files Kafka's own tools print, for operators without access.

Inputs (any of the first two, the rest optional):
* `kafka-topics --describe` text of any era (`planner.formats.describe.parse_describe`): topics, configs, topic ids,
  replicas, leaders, ISR/ELR, reassignments in progress (2.6+);
* the "Current partition replica assignment" JSON of `kafka-reassign-partitions --generate`
  (`planner.formats.kafka_json.parse_current_assignment`): replicas of the topics it covers;
* `kafka-log-dirs --describe` JSON (`planner.formats.kafka_json.parse_log_dirs_replicas`): replica sizes;
* a brokers file (a topology YAML holding only `brokers:`, and optionally `cluster:` / `mode:`) or `--racks 1:a,2:b`:
  what those outputs lack: racks, hosts, brokers with no replicas. When given, it is the whole list of brokers.

Where two inputs disagree the error is one line naming the file and the field. Brokers whose state the inputs imply
are marked down (offline in ZooKeeper mode, fenced in KRaft, as the Admin API shows a stopped broker): a partition
without a leader keeps its last ISR member, which is therefore down (Kafka never empties the ISR, except into the ELR
of KIP-966, whose members are then down too), and with unclean election enabled none of its replicas can be up.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Callable, Mapping, Protocol, Sequence

import yaml

from planner.adapters.files import read_option_file
from planner.adapters.topology_yaml import parse_topology
from planner.model import (
    FENCED,
    NO_LEADER,
    OFFLINE,
    ONLINE,
    Broker,
    Cluster,
    Partition,
    PlannerError,
    Topic,
    TopicPartition,
)


# -- what the parsers of the formats layer give (the CLI passes them in: adapters do not import formats) -----------
class DescribeInput(Protocol):
    """`planner.formats.describe.DescribedTopics`."""

    @property
    def topics(self) -> tuple[Topic, ...]: ...
    @property
    def headers(self) -> Mapping[str, int]: ...
    @property
    def lines(self) -> Mapping[TopicPartition, int]: ...
    @property
    def mode(self) -> str: ...
    @property
    def log_lines(self) -> tuple[int, ...]: ...


class AssignmentEntry(Protocol):
    """`planner.formats.kafka_json.ReassignmentEntry`."""

    @property
    def tp(self) -> TopicPartition: ...
    @property
    def replicas(self) -> tuple[int, ...]: ...


class LogDirReplicaInput(Protocol):
    """`planner.formats.kafka_json.LogDirReplica`."""

    @property
    def broker(self) -> int: ...
    @property
    def tp(self) -> TopicPartition: ...
    @property
    def where(self) -> str: ...


class LogDirsInput(Protocol):
    """`planner.formats.kafka_json.LogDirsReport`."""

    @property
    def brokers(self) -> tuple[int, ...]: ...
    @property
    def replicas(self) -> Sequence[LogDirReplicaInput]: ...
    def sizes(self) -> dict[TopicPartition, int]: ...


@dataclass(frozen=True)
class TwinParsers:
    """The text parsers, each `(text, source) -> parsed`, one error line naming the source on bad input."""

    describe: Callable[[str, str], DescribeInput]
    assignment: Callable[[str, str], Sequence[AssignmentEntry]]
    log_dirs: Callable[[str, str], LogDirsInput]


@dataclass(frozen=True)
class TwinFiles:
    """Paths of the inputs (None: not given) and the `--racks` text."""

    describe: str | None = None
    assignment: str | None = None
    log_dirs: str | None = None
    brokers: str | None = None
    racks: str | None = None


@dataclass(frozen=True)
class _Declared:
    brokers: tuple[Broker, ...]
    source: str  # "--brokers FILE" or "--racks"
    name: str | None = None
    mode: str | None = None


def _ids(ids) -> str:
    return ",".join(str(i) for i in ids)


def _json_list(ids) -> str:
    return json.dumps(list(ids), separators=(",", ":"))


# -- brokers: a brokers file or --racks ----------------------------------------------------------------------------
def parse_racks(text: str) -> tuple[Broker, ...]:
    """`--racks 1:a,2:b,3:c` → brokers 1, 2, 3 in racks a, b, c."""
    brokers: dict[int, Broker] = {}
    for item in (i.strip() for i in text.split(",")):
        bid, sep, rack = item.partition(":")
        if not item:
            continue
        if not sep or not (bid.strip().isascii() and bid.strip().isdigit()) or not rack.strip():
            raise PlannerError(f"--racks {text!r}: {item!r} is not broker:rack (e.g. --racks 1:a,2:b,3:c)")
        if int(bid) in brokers:
            raise PlannerError(f"--racks {text!r}: broker {int(bid)} given twice")
        brokers[int(bid)] = Broker(id=int(bid), rack=rack.strip())
    if not brokers:
        raise PlannerError(f"--racks {text!r}: no brokers (e.g. --racks 1:a,2:b,3:c)")
    return tuple(brokers[b] for b in sorted(brokers))


def _brokers_file(path: str) -> _Declared:
    text = read_option_file(path, "--brokers")
    cluster = parse_topology(text, path)
    if cluster.topics:
        raise PlannerError(f"{path}: topics: a brokers file lists brokers only (and optionally cluster and mode)")
    root = yaml.safe_load(text)
    mode = root.get("mode") if isinstance(root, dict) else None
    return _Declared(cluster.brokers, f"--brokers {path}", cluster.name, cluster.mode if mode else None)


def _declared(files: TwinFiles) -> _Declared | None:
    if files.brokers and files.racks:
        raise PlannerError("--brokers and --racks both given: use one (a brokers file can hold racks too)")
    if files.brokers:
        return _brokers_file(files.brokers)
    if files.racks:
        return _Declared(parse_racks(files.racks), "--racks")
    return None


# -- topics: describe text and the current-assignment JSON ---------------------------------------------------------
def _entry_field(path: str, i: int) -> str:
    return f"{path}: partitions[{i}]"


def _merge_assignment(
    topics: dict[str, Topic],
    described: DescribeInput | None,
    describe_path: str | None,
    entries: Sequence[AssignmentEntry],
    path: str,
) -> None:
    """Check the JSON against the describe text; add the topics only the JSON has."""
    seen: dict[TopicPartition, int] = {}
    new: dict[str, dict[int, tuple[int, ...]]] = {}
    for i, e in enumerate(entries):
        where = _entry_field(path, i)
        if e.tp in seen:
            raise PlannerError(f"{where}: {e.tp} listed twice (also partitions[{seen[e.tp]}])")
        seen[e.tp] = i
        if not e.replicas:
            raise PlannerError(f"{where}.replicas: {e.tp} has no replicas")
        if len(set(e.replicas)) != len(e.replicas):
            raise PlannerError(f"{where}.replicas: {_json_list(e.replicas)} lists a broker twice")
        if e.tp.partition < 0:
            raise PlannerError(f"{where}.partition: {e.tp.partition} is not a partition id")
        topic = topics.get(e.tp.topic)
        if topic is None or described is None:
            new.setdefault(e.tp.topic, {})[e.tp.partition] = e.replicas
            continue
        if e.tp.partition >= topic.partition_count:
            raise PlannerError(
                f"{where}.partition: {e.tp} but {describe_path}:{_header_line(described, topic)} says "
                f"PartitionCount: {topic.partition_count}"
            )
        shown = topic.partitions[e.tp.partition].replicas
        if shown != e.replicas:
            raise PlannerError(
                f"{where}.replicas: {_json_list(e.replicas)} for {e.tp} but {describe_path}:"
                f"{described.lines[e.tp]} says Replicas: {_ids(shown)}"
            )
    for name, parts in new.items():
        topics[name] = _topic_from_json(name, parts, seen, path)


def _header_line(described: DescribeInput, topic: Topic) -> int:
    return described.headers[topic.name]


def _topic_from_json(
    name: str, parts: dict[int, tuple[int, ...]], index: dict[TopicPartition, int], path: str
) -> Topic:
    missing = [p for p in range(len(parts)) if p not in parts]
    if missing:
        last = index[TopicPartition(name, max(parts))]
        raise PlannerError(
            f"{_entry_field(path, last)}.partition: {name}-{max(parts)} but no entry for partition(s) "
            f"{_ids(missing)}: give every partition of topic {name}"
        )
    rf = len(parts[0])
    for p in sorted(parts):
        if len(parts[p]) != rf:
            raise PlannerError(
                f"{_entry_field(path, index[TopicPartition(name, p)])}.replicas: {name}-{p} has "
                f"{len(parts[p])} replicas but {name}-0 has {rf}: the planner needs one replication "
                f"factor per topic"
            )
    return Topic(name=name, partitions=tuple(Partition(name, p, parts[p]) for p in range(len(parts))))


# -- brokers and their states ------------------------------------------------------------------------------------
def _referenced(topics: dict[str, Topic]) -> list[tuple[int, TopicPartition]]:
    return [(b, p.tp) for t in topics.values() for p in t.partitions for b in p.replicas]


def _where(
    tp: TopicPartition, described: DescribeInput | None, files: TwinFiles, entries: Sequence[AssignmentEntry]
) -> str:
    if described is not None and tp in described.lines:
        return f"{files.describe}:{described.lines[tp]}: Replicas"
    i = next(i for i, e in enumerate(entries) if e.tp == tp)
    return f"{_entry_field(str(files.assignment), i)}.replicas"


def _brokers(
    topics: dict[str, Topic],
    declared: _Declared | None,
    described: DescribeInput | None,
    files: TwinFiles,
    entries: Sequence[AssignmentEntry],
) -> tuple[Broker, ...]:
    referenced = _referenced(topics)
    if declared is None:
        return tuple(Broker(id=b) for b in sorted({b for b, _ in referenced}))
    known = {b.id for b in declared.brokers}
    for b, tp in referenced:
        if b not in known:
            raise PlannerError(
                f"{_where(tp, described, files, entries)}: broker {b} of {tp} is not in "
                f"{declared.source} (brokers: {_ids(sorted(known))})"
            )
    return declared.brokers


def _down(topics: dict[str, Topic]) -> set[int]:
    """Brokers the describe text shows to be down (see the module's docstring)."""
    down: set[int] = set()
    for t in topics.values():
        unclean = t.config_bool("unclean.leader.election.enable", False)
        for p in t.partitions:
            if p.observed is not None and p.observed.leader == NO_LEADER:
                down.update(p.observed.isr)
                # KIP-966 (KRaft 4.1+ by default): the last ISR member fenced leaves an empty ISR and moves to the
                # ELR; an ELR member may lead when the ISR is empty (PartitionChangeBuilder.isValidNewLeader) and is
                # elected as soon as it is unfenced (ReplicationControlManager.handleBrokerUnfenced runs an election
                # on every partition with no leader), so a partition still without a leader has every ELR member
                # down (not so LastKnownElr: a broker back from an unclean shutdown leaves the ELR and may be up);
                # with an ISR left, an ELR member may not lead (isValidNewLeader): nothing is known of it
                if not p.observed.isr:
                    down.update(p.observed.elr or ())
                if unclean:
                    down.update(p.replicas)
    return down


# -- sizes from kafka-log-dirs ------------------------------------------------------------------------------------
def _check_log_dirs(report: LogDirsInput, topics: dict[str, Topic], brokers: tuple[Broker, ...], path: str) -> None:
    known = {b.id for b in brokers}
    for i, broker in enumerate(report.brokers):
        if broker not in known:
            raise PlannerError(
                f"{path}: brokers[{i}].broker: unknown broker {broker} (brokers: {_ids(sorted(known))});"
                f" list every broker with --brokers or --racks"
            )
    for r in report.replicas:
        topic = topics.get(r.tp.topic)
        if topic is None:
            continue  # a topic the other inputs leave out (kafka-topics --describe --topic …)
        if r.tp.partition >= topic.partition_count:
            raise PlannerError(
                f"{path}: {r.where}.partition: {r.tp} but topic {topic.name} has {topic.partition_count} partitions"
            )
        if r.broker not in topic.partitions[r.tp.partition].replicas:
            raise PlannerError(
                f"{path}: {r.where}.partition: broker {r.broker} holds {r.tp} but its replicas are "
                f"{_ids(topic.partitions[r.tp.partition].replicas)}"
            )


def _with_sizes(topics: dict[str, Topic], sizes: dict[TopicPartition, int]) -> None:
    for name, t in topics.items():
        parts = tuple(replace(p, size=sizes[p.tp]) if p.tp in sizes else p for p in t.partitions)
        topics[name] = replace(t, partitions=parts)


# -- assembly ---------------------------------------------------------------------------------------------------------
def _describe_notes(described: DescribeInput, path: str, declared: _Declared | None) -> list[str]:
    notes = []
    if described.log_lines:
        n = len(described.log_lines)
        notes.append(
            f"{path}: skipped {n} log line{'s' if n != 1 else ''} of the tool (line "
            f"{_ids(described.log_lines[:10])}{', ...' if n > 10 else ''}), e.g. the WARN a 3.8+ client prints "
            "against brokers without the DescribeTopicPartitions API"
        )
    if described.mode == "unknown" and not (declared and declared.mode):
        notes.append(
            f"{path}: 'Elr: N/A' (a 3.8+ client against ZooKeeper-mode brokers or KRaft brokers before 3.8): the "
            "mode is unknown, written as kraft; give 'mode: zookeeper' in a --brokers file if ZooKeeper runs the "
            "cluster"
        )
    return notes


def build_twin(files: TwinFiles, parsers: TwinParsers, notes: list[str] | None = None) -> Cluster:
    """The cluster the files describe, read with `parsers`; one error line (file and field) on the first conflict.
    What the reading skipped or could not tell (log4j lines, an unknown mode) is appended to `notes`."""
    if not files.describe and not files.assignment:
        raise PlannerError(
            "give --describe FILE (kafka-topics --describe output) and/or --assignment FILE "
            "(kafka-reassign-partitions --generate output)"
        )
    declared = _declared(files)
    described = (
        parsers.describe(read_option_file(files.describe, "--describe"), files.describe) if files.describe else None
    )
    topics: dict[str, Topic] = {t.name: t for t in described.topics} if described else {}
    entries: Sequence[AssignmentEntry] = ()
    if files.assignment:
        entries = parsers.assignment(read_option_file(files.assignment, "--assignment"), files.assignment)
        _merge_assignment(topics, described, files.describe, entries, files.assignment)
    brokers = _brokers(topics, declared, described, files, entries)
    shown = described.mode if described and described.mode != "unknown" else "kraft"
    mode = (declared.mode if declared else None) or shown
    # a broker down: gone from /brokers/ids in ZooKeeper mode (offline); in KRaft it stays registered and the
    # controller fences it (ClusterControlManager), as DescribeCluster shows it until `kafka-cluster.sh unregister`
    down_state = FENCED if mode == "kraft" else OFFLINE
    down = _down(topics)
    brokers = tuple(replace(b, state=down_state) if b.id in down and b.state == ONLINE else b for b in brokers)
    if files.log_dirs:
        report = parsers.log_dirs(read_option_file(files.log_dirs, "--log-dirs"), files.log_dirs)
        _check_log_dirs(report, topics, brokers, files.log_dirs)
        _with_sizes(topics, report.sizes())
    if described is not None and notes is not None:
        notes.extend(_describe_notes(described, str(files.describe), declared))
    return Cluster(
        brokers=brokers,
        topics=tuple(topics[n] for n in sorted(topics)),
        name=declared.name if declared else None,
        mode=mode,
    )
