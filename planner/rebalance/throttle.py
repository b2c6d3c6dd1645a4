"""Replication throttles for a plan and the time the moves take at a given rate.

Throttles as `tools/src/main/java/org/apache/kafka/tools/reassign/ReassignPartitionsCommand.java` computes them
(`calculateLeaderThrottles`, `calculateFollowerThrottles`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from planner.leadership import cluster_states
from planner.model import Cluster, TopicPartition
from planner.rebalance.reassignment import follower_throttles, leader_throttles, move_map, reassigning_brokers


@dataclass(frozen=True)
class Throttle:
    rate: int  # bytes per second
    leader: dict[str, str]  # topic → leader.replication.throttled.replicas
    follower: dict[str, str]  # topic → follower.replication.throttled.replicas
    brokers: tuple[int, ...]  # brokers that get leader/follower.replication.throttled.rate
    seconds: float | None  # estimated duration; None without sizes


def throttle_for(cluster: Cluster, proposed: Mapping[TopicPartition, tuple[int, ...]], rate: int) -> Throttle:
    """What `kafka-reassign-partitions.sh --execute --throttle RATE` sets, and how long the copy takes.

    Estimate: each new replica copies the partition's size from its current leader; the throttle caps every broker's
    outgoing (leader) and incoming (follower) replication traffic at RATE, so the plan takes as long as the busiest
    broker's larger direction: max over brokers of max(bytes in, bytes out) / RATE.
    """
    moves = move_map(cluster, proposed)
    sizes = {p.tp: p.size for p in cluster.partitions()}
    seconds = None
    if rate > 0 and any(sizes.get(tp) is not None for tp in proposed):
        states = cluster_states(cluster)
        current = cluster.assignment()
        bytes_in: dict[int, int] = {}
        bytes_out: dict[int, int] = {}
        for tp, new in proposed.items():
            size = sizes.get(tp) or 0
            leader = states[tp.topic][tp.partition].leader
            src = leader if leader >= 0 else current[tp][0]
            for b in set(new) - set(current[tp]):
                bytes_in[b] = bytes_in.get(b, 0) + size
                bytes_out[src] = bytes_out.get(src, 0) + size
        busiest = max(list(bytes_in.values()) + list(bytes_out.values()) + [0])
        seconds = busiest / rate
    return Throttle(
        rate, leader_throttles(moves), follower_throttles(moves), tuple(reassigning_brokers(moves)), seconds
    )
