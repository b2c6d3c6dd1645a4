"""`kafka-topics.sh --describe` output, byte for byte per Kafka version
(`tools/src/main/java/org/apache/kafka/tools/TopicCommand.java`; before 3.7
`core/src/main/scala/kafka/admin/TopicCommand.scala`), plus table and JSON renderings.

Selection (which topics and partitions are shown) is computed once by `select`; the three renderers format that result.
Version differences emulated:
* < 2.4: `Topic:{t}\\tPartitionCount:{n}...` (no spaces), `Configs:` without trailing space, leader -1 printed as `-1`
  (the ZooKeeper path of those releases), `\\tMarkedForDeletion:true` on the header.
* 2.4 – 2.7: spaced labels, `Configs: `, `Leader: none`, `\\tMarkedForDeletion: true` on header and partition lines.
* 2.5+: replication factor and under-replication count an in-progress reassignment (replicas − adding).
* 2.6+: `\\tAdding Replicas: …\\tRemoving Replicas: …` on partitions being reassigned.
* 2.8+: `\\tTopicId: {id}` when the topic has an id (the AdminClient path: no MarkedForDeletion).
* 3.8+: `\\tElr: …\\tLastKnownElr: …` always; `N/A` for a ZooKeeper-mode cluster.
* 4.1+ (KRaft): brokers offline are fenced as a controller with eligible leader replicas (KIP-966) does it: an ISR
  below min.insync.replicas keeps its fenced members in `Elr`, a partition that loses its last ISR member has an
  empty `Isr` and its last leader in `LastKnownElr` (`planner.leadership.elr_partition_state`).
Topic order: sorted by name through `--zookeeper` (gone in 3.0); through the AdminClient (`--bootstrap-server`, the
only way from 3.0 on) in the iteration order of the HashMaps `DescribeTopicsResult.allTopicNames()` builds
(`admin_client_order`), as Kafka's `TopicCommandTest.testDescribeUnderMinIsrPartitionsMixed` expects
(`under-min-isr-topic` before `offline-topic`). Partitions by id.

2.2 – 2.3 through `--bootstrap-server` (`admin_client`): TopicCommand's AdminClientTopicService prints the pre-2.4
header (no MarkedForDeletion), `Leader: none` and an empty `Isr:` for a partition without a live leader (the brokers'
MetadataCache of those releases answered LEADER_NOT_AVAILABLE with an empty ISR; 2.4 sends the ISR), its filters count
that empty ISR, and topics come in the order of the HashMaps DescribeTopicsResult.all() builds.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from planner.java import hashmap_order, sorted_java
from planner.leadership import LeaderState, topic_states
from planner.model import NO_LEADER, Cluster, ObservedState, Partition, PlannerError, Topic, TopicPartition

NEWEST = (4, 1)
ELR_BY_DEFAULT = (4, 1)  # the first release whose new KRaft clusters enable eligible.leader.replicas.version=1
KNOWN_VERSIONS = (
    (0, 8),
    (0, 9),
    (0, 10),
    (0, 11),
    (1, 0),
    (1, 1),
    *((2, n) for n in range(9)),
    *((3, n) for n in range(10)),
    (4, 0),
    (4, 1),
)  # Apache Kafka's releases, major.minor


def parse_version(text: str | None) -> tuple[int, int]:
    if not text:
        return NEWEST
    m = re.fullmatch(r"\s*(\d+)\.(\d+)(?:\.\d+)?\s*", text)
    if not m:
        raise PlannerError(f"--kafka-version {text!r}: expected a Kafka version such as 2.3, 2.8.1 or 3.8")
    version = (int(m.group(1)), int(m.group(2)))
    if version < (0, 8):
        raise PlannerError(f"--kafka-version {text!r}: kafka-topics --describe is modelled from 0.8 on")
    if version not in KNOWN_VERSIONS:
        raise PlannerError(
            f"--kafka-version {text!r}: not a Kafka release; known: {', '.join(f'{a}.{b}' for a, b in KNOWN_VERSIONS)}"
        )
    return version


@dataclass(frozen=True)
class DescribeOptions:
    topics: tuple[str, ...] = ()  # regexes (Kafka's IncludeList: comma = alternative, full match)
    under_replicated: bool = False
    unavailable: bool = False
    under_min_isr: bool = False
    at_min_isr: bool = False
    with_overrides: bool = False
    exclude_internal: bool = False
    version: tuple[int, int] = NEWEST
    admin_client: bool = False  # 2.2 – 2.3 `--bootstrap-server` (AdminClientTopicService); see the module's text
    admin_order: bool = False  # topics in the AdminClient's HashMap order (`--bootstrap-server`, every 3.0+ tool)

    @property
    def describe_configs(self) -> bool:
        return not (self.under_replicated or self.unavailable or self.under_min_isr or self.at_min_isr)


class PartitionRow(NamedTuple):
    partition: Partition
    state: LeaderState


@dataclass(frozen=True)
class TopicSection:
    topic: Topic
    header: bool
    rows: tuple[PartitionRow, ...] = field(default=())


def _topic_filter(patterns: tuple[str, ...]):
    if not patterns:
        return lambda name: True
    compiled = []
    for p in patterns:
        # TopicFilter.IncludeList (core/src/main/scala/kafka/utils/TopicFilter.scala, later server-common's
        # TopicFilter.java):
        # trim, comma = alternative, spaces dropped, surrounding quotes stripped ("property files may bring quotes")
        regex = re.sub(r"[\"']+$", "", re.sub(r"^[\"']+", "", p.strip().replace(",", "|").replace(" ", "")))
        try:
            compiled.append(re.compile(regex))
        except re.error:
            raise PlannerError(f"{regex} is an invalid regex.") from None  # TopicFilter's text
    return lambda name: any(c.fullmatch(name) for c in compiled)


def _replication_factor(p: Partition, version: tuple[int, int]) -> int:
    return p.replication_factor if version >= (2, 5) else len(p.replicas)


ADMIN_CLIENT_VERSIONS = ((2, 2), (2, 3))  # kafka-topics had --bootstrap-server from 2.2; alike from 2.4


def admin_client_order(names: list[str]) -> list[str]:
    """The topic order of TopicCommand's describe through the AdminClient (2.2 – 2.3's AdminClientTopicService,
    2.4+'s TopicService, the 3.7+ Java port `tools/.../TopicCommand.java` `describeTopic`): `getTopics` sorts the
    names, then KafkaAdminClient.describeTopics (`handleDescribeTopicsByNamesWithDescribeTopicPartitionsApi` in
    3.8+, `handleDescribeTopicsByNames` before) puts them in a `new HashMap<>(n)`, returns a copy of it
    (`new HashMap<>(map)`: capacity for n / 0.75 + 1) that DescribeTopicsResult keeps, whose `all()` /
    `allTopicNames()` puts them in a third `new HashMap<>(n)` whose values() the tool iterates."""
    n = len(names)
    first = hashmap_order(sorted_java(names), initial_capacity=n)
    copied = hashmap_order(first, initial_capacity=int(n / 0.75 + 1))
    return hashmap_order(copied, initial_capacity=n)


def _leaderless(st: LeaderState, live: frozenset[int]) -> bool:
    return not st.has_leader or st.leader not in live


def shown_isr(st: LeaderState, live: frozenset[int], opts: DescribeOptions) -> tuple[int, ...]:
    """The ISR as the tool prints it: empty through 2.2 – 2.3's --bootstrap-server when no live leader."""
    return () if opts.admin_client and _leaderless(st, live) else tuple(st.isr)


def select(cluster: Cluster, opts: DescribeOptions) -> list[TopicSection]:
    allowed = _topic_filter(opts.topics)
    topics = [t for t in cluster.topics if allowed(t.name) and not (opts.exclude_internal and t.internal)]
    if opts.admin_client or opts.admin_order:
        order = {name: i for i, name in enumerate(admin_client_order([t.name for t in topics]))}
        topics.sort(key=lambda t: order[t.name])
    if opts.admin_client:
        pass  # 2.2 – 2.3: no "does not exist" check on this path: nothing matched prints nothing
    elif opts.topics and not topics:
        shown = ",".join(opts.topics)
        if opts.version[:2] == (3, 7):
            shown = f"Optional[{shown}]"  # the 3.7 Java port printed the Optional
        raise PlannerError(f"Topic '{shown}' does not exist as expected")
    live = cluster.online_ids
    # KIP-966: a KRaft controller of 4.1+ tracks eligible leader replicas (eligible.leader.replicas.version=1, the
    # default for new clusters from 4.1; 3.8 - 4.0 print the lists but leave the feature off): brokers going offline
    # leave ELR, LastKnownElr and possibly an empty ISR (planner.leadership.elr_partition_state)
    elr = cluster.mode == "kraft" and opts.version >= ELR_BY_DEFAULT
    sections = []
    for t in topics:
        if opts.with_overrides:
            if t.configs:
                sections.append(TopicSection(t, header=True))
            continue
        states = topic_states(cluster, t, elr=elr)
        rows = []
        for p, st in zip(t.partitions, states):
            if opts.describe_configs or _matches(p, st, t, live, opts):
                rows.append(PartitionRow(p, st))
        if opts.describe_configs or rows:
            sections.append(TopicSection(t, header=opts.describe_configs, rows=tuple(rows)))
    return sections


def _matches(p: Partition, st: LeaderState, t: Topic, live: frozenset[int], opts: DescribeOptions) -> bool:
    min_isr = t.config_int("min.insync.replicas", 1)
    if opts.admin_client:
        return _matches_admin_client(p, st, min_isr, live, opts)
    if opts.under_replicated and _replication_factor(p, opts.version) - len(st.isr) > 0:
        return True
    if opts.unavailable and (not st.has_leader or st.leader not in live):
        return True
    if opts.under_min_isr and (not st.has_leader or len(st.isr) < min_isr):
        return True
    if opts.at_min_isr and len(st.isr) == min_isr:
        return True
    return False


def _matches_admin_client(p: Partition, st: LeaderState, min_isr: int, live: frozenset[int], opts) -> bool:
    """2.2 – 2.3 AdminClientTopicService's DescribeOptions: sizes of the ISR as printed, no leader check for min ISR."""
    isr = shown_isr(st, live, opts)
    return (
        (opts.under_replicated and len(isr) < len(p.replicas))
        or (opts.unavailable and _leaderless(st, live))
        or (opts.under_min_isr and len(isr) < min_isr)
        or (opts.at_min_isr and len(isr) == min_isr)
    )


# ---------------------------------------------------------------------------------------------------------
# kafka-topics text


def _ids(ids) -> str:
    return ",".join(map(str, ids))


def _configs(t: Topic) -> str:
    return ",".join(f"{k}={v}" for k, v in t.configs.items())


def header_line(t: Topic, version: tuple[int, int], admin_client: bool = False) -> str:
    rf = _replication_factor(t.partitions[0], version) if t.partitions else 0
    marked = t.marked_for_deletion and not admin_client  # AdminClientTopicService never says MarkedForDeletion
    return _header_text(t.name, t.topic_id, t.partition_count, rf, _configs(t), marked, version)


def _header_text(
    name: str, topic_id: str | None, count: int, rf: int, configs: str, marked: bool, version: tuple[int, int]
) -> str:
    if version < (2, 4):
        line = f"Topic:{name}\tPartitionCount:{count}\tReplicationFactor:{rf}\tConfigs:{configs}"
        return line + ("\tMarkedForDeletion:true" if marked else "")
    shown_id = (
        f"\tTopicId: {topic_id}" if version >= (2, 8) and topic_id and topic_id != "AAAAAAAAAAAAAAAAAAAAAA" else ""
    )
    line = f"Topic: {name}{shown_id}\tPartitionCount: {count}\tReplicationFactor: {rf}\tConfigs: {configs}"
    if version < (2, 8) and marked:
        line += "\tMarkedForDeletion: true"
    return line


def _admin_client_line(t: Topic, row: PartitionRow, live: frozenset[int]) -> str:
    """2.2 – 2.3 `--bootstrap-server`: printPartition with markedForDeletion = false."""
    p, st = row.partition, row.state
    if _leaderless(st, live):
        return f"\tTopic: {t.name}\tPartition: {p.id}\tLeader: none\tReplicas: {_ids(p.replicas)}\tIsr: "
    return (
        f"\tTopic: {t.name}\tPartition: {p.id}\tLeader: {st.leader}\tReplicas: {_ids(p.replicas)}\tIsr: {_ids(st.isr)}"
    )


def partition_line(t: Topic, row: PartitionRow, version: tuple[int, int], mode: str, header_shown: bool) -> str:
    p, st = row.partition, row.state
    if st.has_leader:
        leader = str(st.leader)
    else:
        leader = str(NO_LEADER) if version < (2, 4) else "none"
    replicas = _ids(p.replicas)
    isr = replicas if st.isr is p.replicas else _ids(st.isr)
    line = f"\tTopic: {t.name}\tPartition: {p.id}\tLeader: {leader}\tReplicas: {replicas}\tIsr: {isr}"
    if version >= (2, 6) and (p.adding or p.removing):
        line += f"\tAdding Replicas: {_ids(p.adding)}\tRemoving Replicas: {_ids(p.removing)}"
    if version >= (3, 8):
        obs = p.observed
        if mode == "zookeeper":
            line += "\tElr: N/A\tLastKnownElr: N/A"
        else:
            if st.elr is not None:  # computed after brokers went offline (4.1+ KRaft, ELR enabled)
                elr, lke = st.elr, st.last_known_elr or ()
            else:
                elr = obs.elr if obs is not None and obs.elr is not None else ()
                lke = obs.last_known_elr if obs is not None and obs.last_known_elr is not None else ()
            line += f"\tElr: {_ids(elr)}\tLastKnownElr: {_ids(lke)}"
    if t.marked_for_deletion and version < (2, 8):
        if version < (2, 4):
            if not header_shown:
                line += "\tMarkedForDeletion: true"
        else:
            line += "\tMarkedForDeletion: true"
    return line


def render_kafka(
    cluster: Cluster, sections: list[TopicSection], version: tuple[int, int], admin_client: bool = False
) -> str:
    out = []
    for s in sections:
        if s.header:
            out.append(header_line(s.topic, version, admin_client))
        if admin_client:
            out.extend(_admin_client_line(s.topic, r, cluster.online_ids) for r in s.rows)
        else:
            out.extend(partition_line(s.topic, r, version, cluster.mode, s.header) for r in s.rows)
    return "".join(line + "\n" for line in out)


def render_new_topic_kafka(cluster: Cluster, name: str, matrix, version: tuple[int, int]) -> str | None:
    """`render_kafka` of `select(after, --topic name)` for a topic just placed (no state, configs, id or
    reassignment) from its (partitions × RF) replica matrix, rendered at once (`columns.render_rows`): with every
    replica on an online broker the leader is the first replica and the ISR the replicas. None when a replica is on
    a broker that is not online (the per-partition path then runs the elections)."""
    import numpy as np

    from planner.formats.columns import render_rows

    online = np.asarray(sorted(cluster.online_ids), dtype=np.int64)
    if not np.isin(matrix, online).all():
        return None
    count, rf = matrix.shape
    columns = [matrix[:, j] for j in range(rf)]
    replicas: list = []
    for j, column in enumerate(columns):
        replicas += [column] if j == 0 else [",", column]
    tail = ""
    if version >= (3, 8):
        tail = "\tElr: N/A\tLastKnownElr: N/A" if cluster.mode == "zookeeper" else "\tElr: \tLastKnownElr: "
    pieces = [f"\tTopic: {name}\tPartition: ", np.arange(count), "\tLeader: ", columns[0], "\tReplicas: "]
    pieces += replicas + ["\tIsr: "] + replicas + [tail + "\n"]
    return _header_text(name, None, count, rf, "", False, version) + "\n" + render_rows(pieces, count)


# ---------------------------------------------------------------------------------------------------------
# Table and JSON


def render_table(cluster: Cluster, sections: list[TopicSection]) -> str:
    from tabulate import tabulate

    rows = []
    moving = any(r.partition.adding or r.partition.removing for s in sections for r in s.rows)
    for s in sections:
        for r in s.rows:
            p, st = r.partition, r.state
            row = [
                s.topic.name,
                p.id,
                st.leader if st.has_leader else "none",
                _ids(p.replicas),
                _ids(st.isr),
                "yes" if len(st.isr) < p.replication_factor else "",
            ]
            if moving:
                row += [_ids(p.adding), _ids(p.removing)]
            rows.append(row)
    headers = ["topic", "partition", "leader", "replicas", "isr", "under-replicated"]
    if moving:
        headers += ["adding", "removing"]
    topics = [
        [s.topic.name, s.topic.partition_count, s.topic.replication_factor, _configs(s.topic)]
        for s in sections
        if s.header
    ]
    parts = []
    if topics:
        parts.append(tabulate(topics, headers=["topic", "partitions", "rf", "configs"], tablefmt="simple"))
    if rows:
        parts.append(tabulate(rows, headers=headers, tablefmt="simple"))
    return "\n\n".join(parts) + "\n" if parts else ""


def describe_data(sections: list[TopicSection]) -> list[dict]:
    result = []
    for s in sections:
        t = s.topic
        result.append(
            {
                "topic": t.name,
                "topic_id": t.topic_id,
                "partition_count": t.partition_count,
                "replication_factor": t.replication_factor,
                "configs": dict(t.configs),
                "marked_for_deletion": t.marked_for_deletion,
                "partitions": [
                    {
                        "partition": r.partition.id,
                        "leader": r.state.leader if r.state.has_leader else None,
                        "replicas": list(r.partition.replicas),
                        "isr": list(r.state.isr),
                        "adding_replicas": list(r.partition.adding),
                        "removing_replicas": list(r.partition.removing),
                        "unclean_leader": r.state.unclean,
                    }
                    for r in s.rows
                ],
            }
        )
    return result


def render_json(sections: list[TopicSection]) -> str:
    return json.dumps({"topics": describe_data(sections)}, indent=2) + "\n"


# ---------------------------------------------------------------------------------------------------------
# Parsing kafka-topics text back (an offline twin of a cluster from what an operator hands over)
#
# Every era `render_kafka` prints is read: the field labels of `TopicCommand` (core/.../admin/TopicCommand.scala up to
# 3.6, tools/.../TopicCommand.java from 3.7: `Topic`, `TopicId`, `PartitionCount`, `ReplicationFactor`, `Configs`,
# `MarkedForDeletion`; partition lines `Partition`, `Leader`, `Replicas`, `Isr`, `Adding Replicas`,
# `Removing Replicas`, `Elr`, `LastKnownElr`), with or without the space after the colon (2.4 added it).

_HEADER_LABELS = ("Topic", "TopicId", "PartitionCount", "ReplicationFactor", "Configs", "MarkedForDeletion")
_PARTITION_LABELS = (
    "Topic",
    "Partition",
    "Leader",
    "Replicas",
    "Isr",
    "Adding Replicas",
    "Removing Replicas",
    "Elr",
    "LastKnownElr",
    "MarkedForDeletion",
)
_FILTER_HINT = (
    "give the whole `kafka-topics --describe` output (without --under-replicated-partitions, "
    "--unavailable-partitions, --under-min-isr-partitions, --at-min-isr-partitions, "
    "--topics-with-overrides)"
)


@dataclass(frozen=True)
class DescribedTopics:
    """What a `kafka-topics --describe` text says: its topics (ordered by name), and hints about the cluster."""

    topics: tuple[Topic, ...]
    headers: dict[str, int]  # the line (1-based) of each topic's header, for messages naming the file's line
    lines: dict[TopicPartition, int]  # the line of each partition
    elr_shown: bool  # 3.8+ KRaft: Elr/LastKnownElr lists
    elr_na: bool  # 3.8+ ZooKeeper mode (or brokers without DescribeTopicPartitions): `Elr: N/A`
    topic_ids: bool  # 2.8+ with topic ids
    legacy: bool  # a pre-2.8 layout only ZooKeeper-mode Kafka printed (no-space labels, MarkedForDeletion)
    log_lines: tuple[int, ...] = ()  # the lines (1-based) of log4j output skipped

    @property
    def mode(self) -> str:
        """`zookeeper` when the text can only come from a ZooKeeper-mode cluster, `kraft` when only from a KRaft one,
        `unknown` for `Elr: N/A` with topic ids: a 3.8+ client prints it against ZooKeeper-mode brokers and against
        KRaft brokers before 3.8 alike (they lack DescribeTopicPartitions; TopicCommand.java's describe falls back to
        the Metadata API, which carries no ELR)."""
        if self.elr_shown:
            return "kraft"
        if self.legacy or not self.topic_ids:
            return "zookeeper"
        if self.elr_na:
            return "unknown"
        return "kraft"


@dataclass
class _TopicDraft:
    name: str
    line: int
    count: int
    rf: int
    configs: dict[str, str]
    topic_id: str | None
    marked: bool
    parts: dict[int, tuple[Partition, int]] = field(default_factory=dict)


class _Fields:
    """The TAB-separated `Label: value` fields of one line."""

    def __init__(self, items: list[str], source: str, lineno: int, labels: tuple[str, ...]):
        self.source, self.lineno = source, lineno
        self.values: dict[str, str] = {}
        self.spaced = False
        for item in items:
            label, sep, value = item.partition(":")
            if not sep or label not in labels:
                raise self.error(f"unexpected field {item!r} (expected {', '.join(labels)})")
            if label in self.values:
                raise self.error(f"field {label!r} appears twice")
            if value.startswith(" "):
                value, self.spaced = value[1:], True
            self.values[label] = value

    def error(self, message: str) -> PlannerError:
        return PlannerError(f"{self.source}:{self.lineno}: {message}")

    def get(self, label: str) -> str:
        if label not in self.values:
            raise self.error(f"missing field '{label}:'")
        return self.values[label]

    def number(self, label: str, minimum: int = 0) -> int:
        value = self.get(label)
        if not re.fullmatch(r"-?\d+", value) or int(value) < minimum:
            raise self.error(f"{label}: {value!r} is not a number of at least {minimum}")
        return int(value)

    def ids(self, label: str, default: tuple[int, ...] | None = None) -> tuple[int, ...]:
        if label not in self.values and default is not None:
            return default
        value = self.get(label)
        if value == "":
            return ()
        if not re.fullmatch(r"\d+(,\d+)*", value):
            raise self.error(f"{label}: {value!r} is not a comma-separated list of broker ids")
        ids = tuple(int(x) for x in value.split(","))
        dup = sorted({b for b in ids if ids.count(b) > 1})
        if dup:
            raise self.error(f"{label}: broker {','.join(map(str, dup))} listed twice in {value}")
        return ids


def parse_configs(text: str) -> dict[str, str]:
    """`Configs: a=1,cleanup.policy=compact,delete` → {a: 1, cleanup.policy: "compact,delete"}.

    Kafka joins `name=value` pairs with commas without escaping; a piece without `=` continues the previous value
    (list-valued configs such as `cleanup.policy=compact,delete`).
    """
    configs: dict[str, str] = {}
    last: str | None = None
    for piece in text.split(",") if text else ():
        name, sep, value = piece.partition("=")
        if sep and name:
            configs[name] = value
            last = name
        elif last is not None:
            configs[last] += "," + piece
        else:
            raise PlannerError(f"Configs: {text!r} does not start with name=value")
    return configs


# A line the tool's log4j configuration prints among the output (config/tools-log4j.properties, tools-log4j2.yaml:
# `[%d] %p %m (%c)%n`), e.g. a 3.8+ client against brokers without DescribeTopicPartitions:
# `[2024-12-19 21:00:58,847] WARN [AdminClient clientId=adminclient-1] The DescribeTopicPartitions API is not
# supported, using Metadata API to describe topics. (org.apache.kafka.clients.admin.KafkaAdminClient)`.
_LOG_LINE = re.compile(r"(\[[^\]]*\]\s+)?(TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\s")
# Where the fields of a line pasted from a terminal start: the tabs became runs of spaces (or one space, at a tab
# stop), so a field starts at a known label after whitespace. Longest labels first ("TopicId" before "Topic").
_LABEL_AT = re.compile(
    r"(?:^|(?<=\s))(?<!Adding )(?<!Removing )(?=(?:"
    + "|".join(re.escape(x) for x in sorted(set(_HEADER_LABELS) | set(_PARTITION_LABELS), key=len, reverse=True))
    + r"):)"
)


def _items(line: str) -> list[str]:
    """The `Label: value` fields of one line: TAB-separated as Kafka prints them, or, when the line holds no TAB
    (pasted from a terminal), cut where a known label starts after whitespace."""
    if "\t" in line:
        return line.split("\t")
    return [item.rstrip() for item in _LABEL_AT.split(line) if item.strip()]


def parse_describe(text: str, source: str) -> DescribedTopics:
    """Topics from `kafka-topics --describe` text of any era `render_kafka` prints, with TABs or as pasted from a
    terminal (runs of spaces); log4j lines among it are skipped and counted. One error line names file:line."""
    drafts: dict[str, _TopicDraft] = {}
    flags = {"elr": False, "na": False, "ids": False, "legacy": False}
    logged: list[int] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r").strip(" \t")
        if not line:
            continue
        if not line.startswith("Topic:"):
            if _LOG_LINE.match(line):
                logged.append(lineno)
                continue
            raise PlannerError(f"{source}:{lineno}: not a line of kafka-topics --describe output: {line[:60]!r}")
        items = _items(line)
        if any(item.partition(":")[0] == "Partition" for item in items):
            _partition(items, source, lineno, drafts, flags)
        else:
            _header(items, source, lineno, drafts, flags)
    if not drafts:
        raise PlannerError(f"{source}: no topics found; expected the output of kafka-topics --describe")
    topics = tuple(_finish(d, source) for d in sorted(drafts.values(), key=lambda d: d.name))
    lines = {TopicPartition(d.name, p): n for d in drafts.values() for p, (_, n) in d.parts.items()}
    headers = {d.name: d.line for d in drafts.values()}
    return DescribedTopics(
        topics, headers, lines, flags["elr"], flags["na"], flags["ids"], flags["legacy"], tuple(logged)
    )


def _header(items: list[str], source: str, lineno: int, drafts: dict[str, _TopicDraft], flags: dict) -> None:
    f = _Fields(items, source, lineno, _HEADER_LABELS)
    name = f.get("Topic")
    if not name:
        raise f.error("Topic: the topic name is empty")
    if name in drafts:
        raise f.error(f"topic {name!r} described twice (also line {drafts[name].line})")
    configs_text = f.get("Configs")
    try:
        configs = parse_configs(configs_text)
    except PlannerError as exc:
        raise f.error(str(exc)) from None
    topic_id = f.values.get("TopicId")
    if topic_id is not None and not re.fullmatch(r"[A-Za-z0-9_-]{22}", topic_id):
        raise f.error(f"TopicId: {topic_id!r} is not a Kafka topic id (22 characters of base64url)")
    marked = f.values.get("MarkedForDeletion")
    if marked not in (None, "true"):
        raise f.error(f"MarkedForDeletion: expected true, got {marked!r}")
    flags["ids"] |= topic_id is not None
    flags["legacy"] |= marked is not None or not f.spaced
    drafts[name] = _TopicDraft(
        name,
        lineno,
        f.number("PartitionCount", 1),
        f.number("ReplicationFactor", 1),
        configs,
        topic_id,
        marked is not None,
    )


def _partition(items: list[str], source: str, lineno: int, drafts: dict[str, _TopicDraft], flags: dict) -> None:
    f = _Fields(items, source, lineno, _PARTITION_LABELS)
    name = f.get("Topic")
    draft = drafts.get(name)
    if draft is None:
        raise f.error(f"partition line of topic {name!r} without its 'Topic: {name}' header line: {_FILTER_HINT}")
    pid = f.number("Partition")
    if pid in draft.parts:
        raise f.error(f"partition {name}-{pid} described twice (also line {draft.parts[pid][1]})")
    leader_text = f.get("Leader")
    leader = NO_LEADER if leader_text in ("none", "-1") else f.number("Leader")
    replicas, isr = f.ids("Replicas"), f.ids("Isr")
    adding, removing = f.ids("Adding Replicas", ()), f.ids("Removing Replicas", ())
    if not replicas:
        raise f.error(f"Replicas: partition {name}-{pid} has no replicas")
    if leader != NO_LEADER and leader not in replicas:
        raise f.error(f"Leader: broker {leader} is not among the Replicas {_ids(replicas)}")
    elr: tuple[int, ...] | None = None
    lke: tuple[int, ...] | None = None
    if f.values.get("Elr") == "N/A":
        flags["na"] = True
    elif "Elr" in f.values:
        flags["elr"] = True
        elr, lke = f.ids("Elr"), f.ids("LastKnownElr")
    lists = (
        ("Isr", isr),
        ("Adding Replicas", adding),
        ("Removing Replicas", removing),
        ("Elr", elr or ()),
        ("LastKnownElr", lke or ()),
    )
    for label, ids in lists:
        outside = [b for b in ids if b not in replicas]
        if outside:
            raise f.error(f"{label}: broker {','.join(map(str, outside))} is not among the Replicas {_ids(replicas)}")
    if f.values.get("MarkedForDeletion", "true") != "true":
        raise f.error(f"MarkedForDeletion: expected true, got {f.values['MarkedForDeletion']!r}")
    if "MarkedForDeletion" in f.values:
        draft.marked = flags["legacy"] = True
    observed = None
    if (leader, isr) != (replicas[0], replicas) or elr or lke:
        observed = ObservedState(leader=leader, isr=isr, elr=elr or None, last_known_elr=lke or None)
    draft.parts[pid] = (
        Partition(topic=name, id=pid, replicas=replicas, adding=adding, removing=removing, observed=observed),
        lineno,
    )


def _finish(d: _TopicDraft, source: str) -> Topic:
    missing = [p for p in range(d.count) if p not in d.parts]
    extra = sorted(p for p in d.parts if p >= d.count)
    if extra:
        line = d.parts[extra[0]][1]
        raise PlannerError(
            f"{source}:{line}: Partition: {d.name}-{extra[0]} but the header (line {d.line}) says "
            f"PartitionCount: {d.count}"
        )
    if missing:
        raise PlannerError(
            f"{source}:{d.line}: PartitionCount: {d.count} but no line for partition(s) "
            f"{_ids(missing)} of {d.name}: {_FILTER_HINT}"
        )
    parts = tuple(d.parts[p][0] for p in range(d.count))
    if parts:
        first = parts[0]
        if d.rf not in (len(first.replicas), first.replication_factor):
            raise PlannerError(
                f"{source}:{d.line}: ReplicationFactor: {d.rf} but partition {d.name}-0 (line {d.parts[0][1]}) lists "
                f"{len(first.replicas)} replicas: a reassignment in progress? kafka-topics before 2.6 does not say "
                f"which replicas are being added; describe with Kafka 2.6 or later"
            )
        for p in parts[1:]:
            if p.replication_factor != first.replication_factor:
                raise PlannerError(
                    f"{source}:{d.parts[p.id][1]}: partition {d.name}-{p.id} has {p.replication_factor} replicas "
                    f"(not counting adding ones) but {d.name}-0 has {first.replication_factor}: the planner needs one "
                    f"replication factor per topic"
                )
    return Topic(name=d.name, partitions=parts, configs=d.configs, topic_id=d.topic_id, marked_for_deletion=d.marked)
