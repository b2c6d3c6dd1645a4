"""The texts Kafka's ZooKeeper-era tools printed: `kafka-reassign-partitions.sh --verify` and
`kafka-preferred-replica-election.sh` (pure functions of a snapshot)."""

from __future__ import annotations

import json
from typing import Iterable, Mapping

from planner.adapters.zk.znodes import ELECTION_PATH, ZkSnapshot
from planner.model import TopicPartition, tp_sort_key


def _tp_legacy(tp: TopicPartition, version: tuple[int, int]) -> str:
    """TopicPartition as the tool printed it: `[t,p]` (TopicAndPartition, ≤1.1), `t-p` from 2.0 on."""
    return f"[{tp.topic},{tp.partition}]" if version < (2, 0) else str(tp)


def verify_lines(
    snapshot: ZkSnapshot, targets: Mapping[TopicPartition, Iterable[int]], version: tuple[int, int]
) -> list[str]:
    """`kafka-reassign-partitions.sh --verify` over ZooKeeper, per Kafka version
    (`core/src/main/scala/kafka/admin/ReassignPartitionsCommand.scala`).

    A partition is in progress while `/admin/reassign_partitions` lists it (Kafka's ZK check) or, 2.4+, while its
    topic znode has adding/removing replicas. Current replicas come from the topic znode (none for a missing
    partition). Partitions are printed sorted by topic, then partition.
    """
    cluster = snapshot.cluster
    current: dict[TopicPartition, tuple[int, ...]] = {}
    moving: set[TopicPartition] = set(snapshot.reassigning or {})
    for p in cluster.partitions():
        current[p.tp] = p.replicas
        if p.adding or p.removing:
            moving.add(p.tp)
    order = sorted((TopicPartition(*tp) for tp in targets), key=tp_sort_key)
    lines = []
    if version < (2, 6):
        lines.append("Status of partition reassignment: ")
        statuses = []
        for tp in order:
            target, cur = tuple(targets[tp]), current.get(tp, ())
            name = _tp_legacy(tp, version)
            if tp in moving:
                statuses.append(f"Reassignment of partition {name} is still in progress")
            elif cur == target:
                statuses.append(f"Reassignment of partition {name} completed successfully")
            else:
                lines.append(
                    f"ERROR: Assigned replicas ({','.join(map(str, cur))}) don't match the list of replicas "
                    f"for reassignment ({','.join(map(str, target))}) for partition {name}"
                )
                statuses.append(f"Reassignment of partition {name} failed")
        return lines + statuses
    if version < (3, 0):
        # 2.6-2.8 over --zookeeper (the option left the tool in 3.0), both with println on stdout before the block:
        # ReassignPartitionsCommand.scala main() for any --zookeeper action, then verifyAssignment(zkClient, ...)
        lines.append("Warning: --zookeeper is deprecated, and will be removed in a future version of Kafka.")
        lines.append(
            "Warning: because you are using the deprecated --zookeeper option, the results may be incomplete.  "
            "Use --bootstrap-server instead for more accurate results."
        )
    lines.append("Status of partition reassignment:")
    done_word = "completed" if version >= (3, 3) else "complete"
    for tp in order:
        target, cur = tuple(targets[tp]), current.get(tp, ())
        if tp in moving:
            lines.append(f"Reassignment of partition {tp} is still in progress.")
        elif cur == target:
            lines.append(f"Reassignment of partition {tp} is {done_word}.")
        else:
            lines.append(
                f"There is no active reassignment of partition {tp}, but replica set is "
                f"{','.join(map(str, cur))} rather than {','.join(map(str, target))}."
            )
    if version >= (3, 0):
        # 3.0+ verifies only through --bootstrap-server: verifyReplicaMoves println()s its block after the partition
        # states, an empty line where no replica moves between log dirs, and ZooKeeper knows none
        # (ReassignPartitionsCommand.scala, tools' ReassignPartitionsCommand.java from 3.5)
        lines.append("")
    return lines


def _sorted_names(tps: Iterable[TopicPartition]) -> list[str]:
    """A partition set as `t-p` names, sorted: Scala keeps a Set's insertion order up to 4 elements and hash order
    beyond, so sorted is the deterministic choice."""
    return [str(tp) for tp in sorted(set(tps), key=tp_sort_key)]


def scala_set(tps: Iterable[TopicPartition]) -> str:
    """`Set(t-0, t-1)`: a Scala Set's toString, as the legacy election tool printed its partition set."""
    return "Set(" + ", ".join(_sorted_names(tps)) + ")"


def tp_list(tps: Iterable[TopicPartition]) -> str:
    """`t-0,t-1`: the election tool's `mkString(",")` of a partition set."""
    return ",".join(_sorted_names(tps))


def election_lines(valid: Iterable[TopicPartition], skipped: Iterable[TopicPartition]) -> list[str]:
    """What `kafka-preferred-replica-election.sh --zookeeper` (2.0-2.8, `PreferredReplicaLeaderElectionCommand`)
    prints once it created the node: the created line, the started line, then one line per partition that does
    not exist (in the input's order)."""
    valid = list(valid)
    return [
        f"Created preferred replica election path with {tp_list(valid)}",
        f"Successfully started preferred replica election for partitions {scala_set(valid)}",
    ] + [f"Skipping preferred replica leader election for partition {tp} since it doesn't exist." for tp in skipped]


def election_in_progress_message(url: str, current: bytes | None) -> str:
    """`PreferredReplicaLeaderElectionCommand`'s text (2.0-2.8) when `/admin/preferred_replica_election` exists:
    the partitions of the election running, `mkString(",")`."""
    try:
        obj = json.loads(current.decode("utf-8")) if current else {}
        tps = [TopicPartition(e["topic"], int(e["partition"])) for e in obj.get("partitions", [])]
        what = tp_list(tps)
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError, RecursionError):
        what = f"{ELECTION_PATH} (unreadable content)"
    return f"Preferred replica leader election currently in progress for {what}. Aborting operation"
