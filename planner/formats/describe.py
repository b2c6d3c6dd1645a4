"""`kafka-topics.sh --describe` output, byte for byte per Kafka version (kafka-facts §3), plus table and JSON renderings.

Selection (which topics and partitions are shown) is computed once by `select`; the three renderers format that result.
Version differences emulated:
* < 2.4: `Topic:{t}\\tPartitionCount:{n}...` (no spaces), `Configs:` without trailing space, leader -1 printed as `-1`
  (the ZooKeeper path of those releases), `\\tMarkedForDeletion:true` on the header.
* 2.4 – 2.7: spaced labels, `Configs: `, `Leader: none`, `\\tMarkedForDeletion: true` on header and partition lines.
* 2.5+: replication factor and under-replication count an in-progress reassignment (replicas − adding).
* 2.6+: `\\tAdding Replicas: …\\tRemoving Replicas: …` on partitions being reassigned.
* 2.8+: `\\tTopicId: {id}` when the topic has an id (the AdminClient path: no MarkedForDeletion).
* 3.8+: `\\tElr: …\\tLastKnownElr: …` always; `N/A` for a ZooKeeper-mode cluster.
Topics are sorted by name (the ZooKeeper tool's order; the AdminClient tool prints a HashMap order), partitions by id.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from planner.model import NO_LEADER, Cluster, Partition, PlannerError, Topic
from planner.leadership import LeaderState, topic_states

NEWEST = (4, 1)


def parse_version(text: str | None) -> tuple[int, int]:
    if not text:
        return NEWEST
    m = re.fullmatch(r"\s*(\d+)\.(\d+)(?:\.\d+)?\s*", text)
    if not m:
        raise PlannerError(f"--kafka-version {text!r}: expected a Kafka version such as 2.3, 2.8.1 or 3.8")
    version = (int(m.group(1)), int(m.group(2)))
    if version < (0, 8):
        raise PlannerError(f"--kafka-version {text!r}: kafka-topics --describe is modelled from 0.8 on")
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

    @property
    def describe_configs(self) -> bool:
        return not (self.under_replicated or self.unavailable or self.under_min_isr or self.at_min_isr)


@dataclass(frozen=True)
class PartitionRow:
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
        try:
            compiled.append(re.compile(p.strip().replace(",", "|")))
        except re.error as exc:
            raise PlannerError(f"--topic {p!r} is not a valid regular expression: {exc}") from None
    return lambda name: any(c.fullmatch(name) for c in compiled)


def _replication_factor(p: Partition, version: tuple[int, int]) -> int:
    return p.replication_factor if version >= (2, 5) else len(p.replicas)


def select(cluster: Cluster, opts: DescribeOptions) -> list[TopicSection]:
    allowed = _topic_filter(opts.topics)
    topics = [
        t for t in cluster.topics if allowed(t.name) and not (opts.exclude_internal and t.internal)
    ]
    if opts.topics and not topics:
        shown = ",".join(opts.topics)
        if opts.version[:2] == (3, 7):
            shown = f"Optional[{shown}]"  # the 3.7 Java port printed the Optional
        raise PlannerError(f"Topic '{shown}' does not exist as expected")
    live = cluster.online_ids
    sections = []
    for t in topics:
        if opts.with_overrides:
            if t.configs:
                sections.append(TopicSection(t, header=True))
            continue
        states = topic_states(cluster, t)
        rows = []
        for p, st in zip(t.partitions, states):
            if opts.describe_configs or _matches(p, st, t, live, opts):
                rows.append(PartitionRow(p, st))
        if opts.describe_configs or rows:
            sections.append(TopicSection(t, header=opts.describe_configs, rows=tuple(rows)))
    return sections


def _matches(p: Partition, st: LeaderState, t: Topic, live: frozenset[int], opts: DescribeOptions) -> bool:
    min_isr = t.config_int("min.insync.replicas", 1)
    if opts.under_replicated and _replication_factor(p, opts.version) - len(st.isr) > 0:
        return True
    if opts.unavailable and (not st.has_leader or st.leader not in live):
        return True
    if opts.under_min_isr and (not st.has_leader or len(st.isr) < min_isr):
        return True
    if opts.at_min_isr and len(st.isr) == min_isr:
        return True
    return False


# ---------------------------------------------------------------------------------------------------------
# kafka-topics text


def _ids(ids) -> str:
    return ",".join(str(i) for i in ids)


def _configs(t: Topic) -> str:
    return ",".join(f"{k}={v}" for k, v in t.configs.items())


def header_line(t: Topic, version: tuple[int, int]) -> str:
    rf = _replication_factor(t.partitions[0], version) if t.partitions else 0
    if version < (2, 4):
        line = f"Topic:{t.name}\tPartitionCount:{t.partition_count}\tReplicationFactor:{rf}\tConfigs:{_configs(t)}"
        return line + ("\tMarkedForDeletion:true" if t.marked_for_deletion else "")
    topic_id = f"\tTopicId: {t.topic_id}" if version >= (2, 8) and t.topic_id and t.topic_id != "AAAAAAAAAAAAAAAAAAAAAA" else ""
    line = f"Topic: {t.name}{topic_id}\tPartitionCount: {t.partition_count}\tReplicationFactor: {rf}\tConfigs: {_configs(t)}"
    if version < (2, 8) and t.marked_for_deletion:
        line += "\tMarkedForDeletion: true"
    return line


def partition_line(t: Topic, row: PartitionRow, version: tuple[int, int], mode: str, header_shown: bool) -> str:
    p, st = row.partition, row.state
    if st.has_leader:
        leader = str(st.leader)
    else:
        leader = str(NO_LEADER) if version < (2, 4) else "none"
    line = f"\tTopic: {t.name}\tPartition: {p.id}\tLeader: {leader}\tReplicas: {_ids(p.replicas)}\tIsr: {_ids(st.isr)}"
    if version >= (2, 6) and (p.adding or p.removing):
        line += f"\tAdding Replicas: {_ids(p.adding)}\tRemoving Replicas: {_ids(p.removing)}"
    if version >= (3, 8):
        obs = p.observed
        if mode == "zookeeper":
            line += "\tElr: N/A\tLastKnownElr: N/A"
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


def render_kafka(cluster: Cluster, sections: list[TopicSection], version: tuple[int, int]) -> str:
    out = []
    for s in sections:
        if s.header:
            out.append(header_line(s.topic, version))
        out.extend(partition_line(s.topic, r, version, cluster.mode, s.header) for r in s.rows)
    return "".join(line + "\n" for line in out)


# ---------------------------------------------------------------------------------------------------------
# Table and JSON


def render_table(cluster: Cluster, sections: list[TopicSection]) -> str:
    from tabulate import tabulate

    rows = []
    moving = any(r.partition.adding or r.partition.removing for s in sections for r in s.rows)
    for s in sections:
        for r in s.rows:
            p, st = r.partition, r.state
            row = [s.topic.name, p.id, st.leader if st.has_leader else "none", _ids(p.replicas), _ids(st.isr),
                   "yes" if len(st.isr) < p.replication_factor else ""]
            if moving:
                row += [_ids(p.adding), _ids(p.removing)]
            rows.append(row)
    headers = ["topic", "partition", "leader", "replicas", "isr", "under-replicated"]
    if moving:
        headers += ["adding", "removing"]
    topics = [[s.topic.name, s.topic.partition_count, s.topic.replication_factor, _configs(s.topic)]
              for s in sections if s.header]
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
        result.append({
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
        })
    return result


def render_json(sections: list[TopicSection]) -> str:
    return json.dumps({"topics": describe_data(sections)}, indent=2) + "\n"
