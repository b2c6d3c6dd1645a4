"""Leaders and ISR from replicas, broker states and observed state (KRaft:
`metadata/src/main/java/org/apache/kafka/controller/PartitionChangeBuilder.java`; ZooKeeper era:
`core/src/main/scala/kafka/controller/PartitionStateMachine.scala` `PartitionLeaderElectionAlgorithms`).

A partition starts from its observed state (topology `state:` or ZooKeeper), or, when none is given, from the
steady state Kafka reaches: ISR = the replicas in replica order, leader = the preferred (first) replica.
Then the brokers that are not online (offline, or fenced in KRaft) are applied the way the controller does:
* dead members leave the ISR, relative order kept;
* if the leader is dead (or there is none), offline election: the first replica in assignment order that is alive
  and in the ISR; else, with `unclean.leader.election.enable=true`, the first alive replica (ISR becomes [leader]);
  else no leader (-1), and the ISR keeps its last member (Kafka never writes an empty ISR).
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

from planner.model import NO_LEADER, Cluster, Partition, Topic


class LeaderState(NamedTuple):  # a tuple: a million of them are made per describe of a large cluster
    leader: int  # NO_LEADER (-1) when none
    isr: tuple[int, ...]
    unclean: bool = False  # elected by unclean election

    @property
    def has_leader(self) -> bool:
        return self.leader != NO_LEADER


def elect_offline(
    replicas: Iterable[int], isr: Iterable[int], live: frozenset[int] | set[int], unclean_enabled: bool
) -> tuple[int, bool]:
    """ZK `PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection` → (leader or -1, unclean?)."""
    replicas = tuple(replicas)
    isr_set = set(isr)
    for r in replicas:
        if r in live and r in isr_set:
            return r, False
    if unclean_enabled:
        for r in replicas:
            if r in live:
                return r, True
    return NO_LEADER, False


def elect_reassign(target: Iterable[int], isr: Iterable[int], live: frozenset[int] | set[int]) -> int:
    """`reassignPartitionLeaderElection`: first replica of the target list alive and in the ISR, else -1."""
    isr_set = set(isr)
    return next((r for r in target if r in live and r in isr_set), NO_LEADER)


def elect_preferred(replicas: Iterable[int], isr: Iterable[int], live: frozenset[int] | set[int]) -> int:
    """`preferredReplicaPartitionLeaderElection`: the assignment head if alive and in the ISR, else -1."""
    head = next(iter(replicas), NO_LEADER)
    return head if head in live and head in set(isr) else NO_LEADER


def elect_controlled_shutdown(
    replicas: Iterable[int], isr: Iterable[int], live: frozenset[int] | set[int], shutting_down: Iterable[int]
) -> int:
    """`controlledShutdownPartitionLeaderElection`: first replica alive, in the ISR and not shutting down, else -1."""
    isr_set, going = set(isr), set(shutting_down)
    return next((r for r in replicas if r in live and r in isr_set and r not in going), NO_LEADER)


def partition_state(partition: Partition, live: frozenset[int], unclean_enabled: bool = False) -> LeaderState:
    if partition.observed is None and live.issuperset(partition.replicas):  # steady state, every replica alive
        return LeaderState(partition.replicas[0], partition.replicas)
    if partition.observed is not None:
        leader, isr = partition.observed.leader, partition.observed.isr
    else:
        leader, isr = partition.replicas[0], partition.replicas
    alive_isr = tuple(b for b in isr if b in live)
    if leader != NO_LEADER and leader in live:
        # A live leader shrinks the ISR to live members; it stays in it itself.
        return LeaderState(leader, alive_isr if alive_isr else (leader,))
    new_leader, unclean = elect_offline(partition.replicas, isr, live, unclean_enabled)
    if new_leader == NO_LEADER:
        # The last ISR member stays when everything is gone (leader -1, ISR never empty).
        kept = alive_isr or (isr[-1:] if isr else ())
        return LeaderState(NO_LEADER, kept)
    if unclean:
        return LeaderState(new_leader, (new_leader,), unclean=True)
    return LeaderState(new_leader, alive_isr)


def topic_states(cluster: Cluster, topic: Topic) -> list[LeaderState]:
    live = cluster.online_ids
    unclean = topic.config_bool("unclean.leader.election.enable", False)
    return [partition_state(p, live, unclean) for p in topic.partitions]


def cluster_states(cluster: Cluster) -> dict[str, list[LeaderState]]:
    """Leader and ISR of every partition, by topic name (lists indexed by partition id)."""
    return {t.name: topic_states(cluster, t) for t in cluster.topics}
