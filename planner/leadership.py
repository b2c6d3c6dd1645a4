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

With KIP-966's eligible leader replicas (`eligible.leader.replicas.version=1`: on by default for new KRaft clusters
from 4.1, `elr_partition_state`), the controller runs `PartitionChangeBuilder.build` once per fenced broker that is
in the partition's ISR (`ReplicationControlManager.handleBrokerFenced` and `handleBrokerInControlledShutdown` both
call `generateLeaderAndIsrUpdates` with it as `brokerToRemove`, so a killed and a cleanly stopped broker end alike
while they are down); the ISR may then become empty, and the fenced members go to the ELR while the ISR is smaller
than `min.insync.replicas`.
"""

from __future__ import annotations

from typing import Callable, Iterable, NamedTuple

from planner.java import hashmap_order
from planner.model import NO_LEADER, Cluster, Partition, Topic

NO_LEADER_CHANGE = -2  # PartitionChangeRecord's "leader unchanged" (metadata's LeaderConstants.NO_LEADER_CHANGE)


class LeaderState(NamedTuple):  # a tuple: a million of them are made per describe of a large cluster
    leader: int  # NO_LEADER (-1) when none
    isr: tuple[int, ...]
    unclean: bool = False  # elected by unclean election
    # KIP-966 (`elr_partition_state`): the ELR and LastKnownElr after the fences; None = not computed (the
    # observed ones stand: no ELR era, or no broker of the partition's ISR went down)
    elr: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None

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
    obs = partition.observed
    if obs is not None and obs.leader == NO_LEADER and not obs.isr and obs.elr and not live.isdisjoint(obs.elr):
        return _elect_from_elr(partition.replicas, obs.elr, obs.last_known_elr or (), live)
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


def _elect_from_elr(
    replicas: tuple[int, ...], elr: tuple[int, ...], last_known_elr: tuple[int, ...], live: frozenset[int]
) -> LeaderState:
    """A leaderless partition with an empty ISR and a live ELR member: KIP-966's controller elects as soon as the
    member is unfenced (`ReplicationControlManager.handleBrokerUnfenced` runs `generateLeaderAndIsrUpdates` over
    `partitionsWithNoLeader`; `PartitionChangeBuilder.isValidNewLeader` takes an ELR member while the ISR is empty):
    the first live ELR member in replica order leads, the ISR becomes [it], it leaves the ELR, LastKnownElr is
    cleared. One `_fence` with no broker removed (-1 is in no ISR)."""
    state, _ = _fence(replicas, (NO_LEADER, (), elr, last_known_elr), NO_LEADER, live.__contains__, False, 1)
    leader, isr, new_elr, lke = state
    return LeaderState(leader, isr, False, new_elr, lke)


def _java_hash_set_capacity(size: int) -> int:
    """`new HashSet<>(collection)`: `new HashMap<>(Math.max((int) (size / .75f) + 1, 16))`."""
    return max(int(size / 0.75) + 1, 16)


_Registration = tuple[int, tuple[int, ...], tuple[int, ...], tuple[int, ...]]  # leader, ISR, ELR, LastKnownElr


def _fence(
    replicas: tuple[int, ...],
    state: _Registration,
    fenced: int,
    acceptable: Callable[[int], bool],
    unclean_enabled: bool,
    min_isr: int,
) -> tuple[_Registration, bool]:
    """One `PartitionChangeBuilder.build()` (metadata/src/main/java/org/apache/kafka/controller/
    PartitionChangeBuilder.java, 4.1+) with `fenced` removed from the ISR and ELR enabled, the record applied:
    ((leader, isr, elr, last_known_elr), unclean?). No reassignment completes by an ISR shrink (not modelled)."""
    leader, isr, elr, lke = state
    target_isr = [r for r in isr if r != fenced]
    # maybePopulateTargetElr: with the ISR below min.insync.replicas, the old ELR and ISR members not in the new ISR,
    # in the iteration order of `candidateSet = new HashSet<>(targetElr)` after the old ISR is added; else none.
    # (The targetLastKnownElr it computes too is never written: with useLastKnownLeaderInBalancedRecovery, always
    # true in the controller, maybeUpdateRecordElr returns before setting it and LastKnownElr holds the last leader.)
    if len(target_isr) >= min_isr:
        target_elr = []
    else:
        in_isr = set(target_isr)
        candidates = hashmap_order([*elr, *isr], initial_capacity=_java_hash_set_capacity(len(elr)))
        target_elr = [r for r in candidates if r not in in_isr]

    # tryElection (electAnyLeader): keep a valid leader; else the first valid replica; else the last known leader;
    # else, with unclean election, the first acceptable replica
    def valid(r: int) -> bool:
        return (r in target_isr or (not target_isr and r in target_elr)) and acceptable(r)

    unclean = False
    if valid(leader):
        new = leader
    else:
        new = next((r for r in replicas if valid(r)), NO_LEADER)
        if new == NO_LEADER and not target_elr and not target_isr and len(lke) == 1 and acceptable(lke[0]):
            new, unclean = lke[0], True  # canElectLastKnownLeader (4.x: only if it is acceptable)
        elif new == NO_LEADER and unclean_enabled:
            new = next((r for r in replicas if acceptable(r)), NO_LEADER)
            unclean = new != NO_LEADER
    record_leader, record_isr = NO_LEADER_CHANGE, None
    if new != leader:
        if new in target_elr:
            target_isr = [new]
            target_elr = [r for r in target_elr if r != new]
        record_leader = new
        if unclean:
            record_isr = [new]
    # maybeUpdateRecordElr: an unclean election clears both lists; LastKnownElr only keeps the last known leader
    if record_isr is not None:
        target_elr = []
    new_elr = tuple(target_elr)
    if record_isr is None and target_isr != list(isr):
        record_isr = target_isr  # the ISR may become empty with ELR enabled
    # maybeUpdateLastKnownLeader (useLastKnownLeaderInBalancedRecovery is always true in the controller; 4.4.0's
    # kafka-metadata jar: the leader lost with no LastKnownElr yet writes it, a new leader clears it)
    new_lke = lke
    if record_leader == NO_LEADER and not lke:
        new_lke = (leader,)
    elif record_leader >= 0 and lke:
        new_lke = ()
    new_leader = leader if record_leader == NO_LEADER_CHANGE else record_leader
    new_isr = isr if record_isr is None else tuple(record_isr)
    return (new_leader, new_isr, new_elr, new_lke), unclean


def elr_partition_state(partition: Partition, live: frozenset[int], unclean_enabled: bool, min_isr: int) -> LeaderState:
    """`partition_state` for a KRaft controller with ELR enabled (KIP-966; the default for new clusters from 4.1):
    the ISR members that are not live are fenced one at a time, in ascending id order (which of several brokers the
    controller fences last decides the LastKnownElr), each by `_fence`; a broker fenced later is still acceptable as a
    leader before its own fence (`ReplicationControlManager.generateLeaderAndIsrUpdates`: isAcceptableLeader excludes
    only `brokerToRemove` and inactive brokers). A partition none of whose ISR members went down is left as observed."""
    obs = partition.observed
    state: _Registration
    if obs is None:
        if live.issuperset(partition.replicas):
            return LeaderState(partition.replicas[0], partition.replicas)
        state = (partition.replicas[0], partition.replicas, (), ())
    elif obs.leader == NO_LEADER and obs.isr:
        # leaderless with an ISR left: a cluster that runs without ELR (an ELR controller empties the ISR when the
        # last leader goes), whose fences are behind it: as before ELR
        return partition_state(partition, live, unclean_enabled)
    else:
        state = (obs.leader, obs.isr, obs.elr or (), obs.last_known_elr or ())
    going = sorted(b for b in set(state[1]) if b not in live)
    if not going:  # no fence touches it (generateLeaderAndIsrUpdates walks the partitions with the broker in the ISR)
        return partition_state(partition, live, unclean_enabled)  # settled as before ELR (e.g. an unclean election)
    unclean = False
    for i, broker in enumerate(going):
        if broker not in state[1]:
            continue  # an unclean election already took it out of the ISR: no change on its fence
        acceptable = live.union(going[i + 1 :]).__contains__
        state, elected_unclean = _fence(partition.replicas, state, broker, acceptable, unclean_enabled, min_isr)
        unclean = unclean or elected_unclean
    leader, isr, elr, lke = state
    return LeaderState(leader, isr, unclean, elr, lke)


def topic_states(cluster: Cluster, topic: Topic, elr: bool = False) -> list[LeaderState]:
    """Every partition's state; `elr`: as a KRaft controller with eligible leader replicas enabled computes it."""
    live = cluster.online_ids
    unclean = topic.config_bool("unclean.leader.election.enable", False)
    if elr:
        # the topic's effective min.insync.replicas (ReplicationControlManager.getTopicEffectiveMinIsr): kafka export
        # writes the cluster-wide value a 4.x controller sets on every topic's configs too
        min_isr = topic.config_int("min.insync.replicas", 1)
        return [elr_partition_state(p, live, unclean, min_isr) for p in topic.partitions]
    return [partition_state(p, live, unclean) for p in topic.partitions]


def cluster_states(cluster: Cluster) -> dict[str, list[LeaderState]]:
    """Leader and ISR of every partition, by topic name (lists indexed by partition id)."""
    return {t.name: topic_states(cluster, t) for t in cluster.topics}
