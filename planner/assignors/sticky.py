"""Classic `StickyAssignor` ("sticky") and `CooperativeStickyAssignor` ("cooperative-sticky")
(`clients/src/main/java/org/apache/kafka/clients/consumer/internals/AbstractStickyAssignor.java`).

Uniform subscriptions (every member subscribes the same topics) follow Kafka's current trunk
`ConstrainedAssignmentBuilder` exactly: the claim resolution between generations, the HashMap iteration order of member
ids, the "partitions transferring ownership" that the cooperative assignor withholds for one rebalance (a partition
given back to the member that gave it up is not transferring: `maybeRevokedPartitions`), and the KIP-881 rack-aware
steps when members give a `client.rack` and the replicas' racks make it useful (with the later fix that counts members
filled to maxQuota during the rack pass). Older clients (2.4–3.4) differ in tie-breaking details.

Mixed subscriptions follow Kafka's trunk `GeneralAssignmentBuilder` exactly (`planner.assignors.sticky_general`), and
the cooperative assignor's transferring partitions on that path are `computePartitionsTransferringOwnership`: a
partition newly given to one member that some member reported as owned and does not keep.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

from planner.assignors.group import DEFAULT_GENERATION, Member, all_partitions, subscribed_topics
from planner.assignors.sticky_general import general_assign
from planner.java import hashmap_order, string_sort_key
from planner.model import TopicPartition


@dataclass(frozen=True)
class StickyResult:
    assignment: dict  # member id -> list[TopicPartition]
    transferring: dict = field(default_factory=dict)  # TopicPartition -> new owner (partitions changing owner)
    uniform: bool = (
        True  # True: all subscriptions equal (ConstrainedAssignmentBuilder); False: GeneralAssignmentBuilder
    )


def _claims(members: Sequence[Member], topics: Mapping[str, int]):
    """allSubscriptionsEqual: valid owned partitions per member and the partitions claimed twice in one generation."""
    by_id = {m.id: m for m in members}
    owned: dict[str, list[TopicPartition]] = {}
    owner_of: dict[TopicPartition, str] = {}
    multiple: set[TopicPartition] = set()
    first = None
    equal = True
    for mid in hashmap_order([m.id for m in members]):
        m = by_id[mid]
        subs = set(m.topics)
        if first is None:
            first = subs
        elif subs != first:
            equal = False
        gen = m.generation if m.generation is not None else DEFAULT_GENERATION
        mine: list[TopicPartition] = []
        owned[mid] = mine
        for tp in m.owned:
            if tp.topic not in topics or not 0 <= tp.partition < topics[tp.topic]:
                continue
            other = owner_of.get(tp)
            if other is None:
                mine.append(tp)
                owner_of[tp] = mid
                continue
            other_generation = by_id[other].generation
            other_gen = other_generation if other_generation is not None else DEFAULT_GENERATION
            if gen == other_gen:
                multiple.add(tp)
                if tp in owned[other]:
                    owned[other].remove(tp)
                owner_of[tp] = mid
            elif gen > other_gen:
                mine.append(tp)
                if tp in owned[other]:
                    owned[other].remove(tp)
                owner_of[tp] = mid
    return owned, multiple, equal


@dataclass(frozen=True)
class _RackInfo:
    """AbstractStickyAssignor.RackInfo."""

    consumer_rack: dict  # member -> rack, only when rack-aware assignment is in use
    partition_racks: dict  # TopicPartition -> frozenset of replica racks, only when in use
    consumers_by_partition: dict  # TopicPartition -> members on its racks (whenever some member has a rack)

    def mismatch(self, member: str, tp: TopicPartition) -> bool:
        rack = self.consumer_rack.get(member)
        return rack is not None and rack not in self.partition_racks.get(tp, ())

    def next_consumer(self, tp: TopicPartition, consumers: list[str], first: int) -> int:
        racks = self.partition_racks.get(tp)
        if not racks:
            return -1
        for i in range(len(consumers)):
            index = (first + i) % len(consumers)
            rack = self.consumer_rack.get(consumers[index])
            if rack is not None and rack in racks:
                return index
        return -1


def _rack_info(
    members: Sequence[Member],
    topics: Mapping[str, int],
    partition_racks: Mapping[TopicPartition, frozenset[str]] | None,
) -> _RackInfo:
    consumer_rack = {m.id: m.rack for m in members if m.rack}
    if not consumer_rack:
        return _RackInfo({}, {}, {})
    racks = {tp: frozenset((partition_racks or {}).get(tp, ())) for tp in all_partitions(topics)}
    all_racks = frozenset().union(*racks.values()) if racks else frozenset()
    per_rack: dict[str, int] = {}
    for rack in consumer_rack.values():
        per_rack[rack] = per_rack.get(rack, 0) + 1
    by_partition = {tp: sum(per_rack.get(r, 0) for r in rs) for tp, rs in racks.items()}
    use = bool(set(consumer_rack.values()) & all_racks) and not all(r == all_racks for r in racks.values())
    if use:
        return _RackInfo(consumer_rack, racks, by_partition)
    return _RackInfo({}, {}, by_partition)


def _constrained(  # noqa: C901
    members: Sequence[Member], topics: Mapping[str, int], owned, multiple, rack: _RackInfo | None = None
) -> StickyResult:
    rack = rack or _RackInfo({}, {}, {})
    total = sum(topics.values())
    count = len(members)
    min_q, max_q = total // count, -(-total // count)
    expected_over = total % count
    cur_over = 0
    under: list[str] = []
    exact: list[str] = []
    revoked: dict[TopicPartition, str] = {}  # maybeRevokedPartitions: partition -> the member that gave it up
    out: dict[str, list[TopicPartition]] = {}
    assigned: set[TopicPartition] = set()
    for mid in owned:  # HashMap order, as built by _claims
        for tp in owned[mid]:
            if rack.mismatch(mid, tp):
                revoked[tp] = mid
        mine = sorted(
            (tp for tp in owned[mid] if not rack.mismatch(mid, tp)),
            key=lambda tp: (tp.partition, string_sort_key(tp.topic)),
        )
        mine = [tp for tp in mine if tp not in multiple]
        if len(mine) < min_q:
            out[mid] = list(mine)
            under.append(mid)
        elif len(mine) >= max_q and cur_over < expected_over:
            cur_over += 1
            if cur_over == expected_over:
                exact.clear()
            out[mid] = mine[:max_q]
            revoked.update((tp, mid) for tp in mine[max_q:])
        else:
            out[mid] = mine[:min_q]
            revoked.update((tp, mid) for tp in mine[min_q:])
            if cur_over < expected_over:
                exact.append(mid)
        assigned.update(out[mid])
    unassigned = [tp for tp in all_partitions(topics) if tp not in assigned]
    under.sort(key=string_sort_key)
    exact.sort(key=string_sort_key)
    if rack.consumers_by_partition:  # stable sort: partitions with the fewest same-rack consumers first
        unassigned.sort(key=lambda tp: rack.consumers_by_partition.get(tp, 0))
    transferring: dict[TopicPartition, str] = {}

    def give(tp: TopicPartition, mid: str) -> int:
        out[mid].append(tp)
        if (tp in revoked and revoked[tp] != mid) or tp in multiple:
            transferring[tp] = mid
        return len(out[mid])

    if rack.consumer_rack:  # assignRackAwareRoundRobin
        left: list[TopicPartition] = []
        next_index = 0
        for tp in unassigned:
            chosen = None
            index = rack.next_consumer(tp, under, next_index)
            if index >= 0:
                chosen = under[index]
                count = len(out[chosen]) + 1
                if count >= min_q:
                    under.remove(chosen)
                    if count < max_q and cur_over < expected_over:
                        exact.append(chosen)
                else:
                    index += 1
                next_index = index % len(under) if under else 0
            elif exact:
                first = rack.next_consumer(tp, exact, 0)
                if first >= 0:
                    chosen = exact[first]
                    if len(out[chosen]) + 1 == max_q:
                        exact.pop(first)
                        cur_over += 1
                        if cur_over == expected_over:
                            exact.clear()
            if chosen is None:
                left.append(tp)
            else:
                give(tp, chosen)
        unassigned = left
    cursor = 0  # position of the next member in `under` (a Java iterator over the linked list)
    for tp in unassigned:
        if cursor < len(under):
            mid = under[cursor]
            from_under = True
        elif not under and not exact:
            raise AssertionError("No more unfilled consumers to be assigned.")
        elif not under:
            mid = exact.pop(0)
            from_under = False
        else:
            cursor = 0
            mid = under[0]
            from_under = True
        n = give(tp, mid)
        if n == min_q:
            if from_under:
                under.pop(cursor)  # iterator.remove(): the cursor now points at the next member
            exact.append(mid)
        else:
            if from_under:
                cursor += 1
            if n == max_q:
                cur_over += 1
    return StickyResult(assignment=out, transferring=transferring, uniform=True)


def _added_and_revoked(members: Sequence[Member], assignment) -> dict[TopicPartition, str]:
    """CooperativeStickyAssignor.computePartitionsTransferringOwnership (general path): partitions newly given to a
    member that some member reported as owned (raw `ownedPartitions`, no generation filter) and does not keep."""
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for m in members:
        mine = set(assignment.get(m.id, []))
        owned = set(m.owned)
        for tp in assignment.get(m.id, []):
            if tp not in owned:
                added[tp] = m.id
        revoked.update(tp for tp in m.owned if tp not in mine)
    return {tp: mid for tp, mid in added.items() if tp in revoked}


def assign(
    members: Sequence[Member],
    partitions_per_topic: Mapping[str, int],
    partition_racks: Mapping[TopicPartition, frozenset[str]] | None = None,
) -> StickyResult:
    """The StickyAssignor's (single-round) assignment, with the partitions it moves between owners.
    `partition_racks`: racks of all replicas of each partition (used with members' racks, KIP-881)."""
    topics = subscribed_topics(members, partitions_per_topic)
    if not members:
        return StickyResult(assignment={})
    owned, multiple, equal = _claims(members, topics)
    if equal and topics:
        return _constrained(members, topics, owned, multiple, _rack_info(members, topics, partition_racks))
    if not topics:
        return StickyResult(assignment={m.id: [] for m in members}, uniform=equal)
    assignment = general_assign(members, topics, owned, _rack_info(members, topics, partition_racks))
    return StickyResult(assignment=assignment, transferring=_added_and_revoked(members, assignment), uniform=False)


def cooperative_first_round(
    members: Sequence[Member],
    partitions_per_topic: Mapping[str, int],
    partition_racks: Mapping[TopicPartition, frozenset[str]] | None = None,
) -> StickyResult:
    """CooperativeStickyAssignor: the sticky result minus every partition transferring ownership (withheld until
    its previous owner has revoked it in the follow-up rebalance)."""
    result = assign(members, partitions_per_topic, partition_racks)
    withheld = result.transferring
    return replace(
        result,
        assignment={mid: [tp for tp in tps if withheld.get(tp) != mid] for mid, tps in result.assignment.items()},
    )


def cooperative_converged(
    members: Sequence[Member],
    partitions_per_topic: Mapping[str, int],
    partition_racks: Mapping[TopicPartition, frozenset[str]] | None = None,
    max_rounds: int = 20,
) -> tuple[StickyResult, int]:
    """Rebalance again and again, each member owning what the previous round gave it (one generation later), until
    no partition is being revoked, as Kafka's cooperative protocol does. Returns the final result and the rounds."""
    current = list(members)
    gen = max([m.generation for m in members if m.generation is not None] + [0])
    for rounds in range(1, max_rounds + 1):
        result = cooperative_first_round(current, partitions_per_topic, partition_racks)
        if not result.transferring:
            return result, rounds
        gen += 1
        current = [replace(m, owned=tuple(result.assignment[m.id]), generation=gen) for m in current]
    raise AssertionError("cooperative rebalancing did not converge")  # pragma: no cover - balance guarantees progress
