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
from planner.model import PlannerError, TopicPartition


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

    def sort_partitions_by_rack_consumers(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        """Stable sort: partitions with the fewest same-rack consumers first (when some member has a rack)."""
        if not self.consumers_by_partition:
            return partitions
        return sorted(partitions, key=lambda tp: self.consumers_by_partition.get(tp, 0))

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


class _ConstrainedAssignmentBuilder:
    """AbstractStickyAssignor.ConstrainedAssignmentBuilder, method by method: `under` and `exact` are
    unfilledMembersWithUnderMinQuotaPartitions / ...WithExactlyMinQuotaPartitions, `revoked` maybeRevokedPartitions,
    `out` the assignment (in the HashMap order of `owned`)."""

    def __init__(self, members: Sequence[Member], topics: Mapping[str, int], owned, multiple, rack: _RackInfo):
        self.topics = topics
        self.owned = owned
        self.multiple = multiple
        self.rack = rack
        total = sum(topics.values())
        count = len(members)
        self.min_q, self.max_q = total // count, -(-total // count)
        self.expected_over = total % count  # expectedNumMembersWithOverMinQuotaPartitions
        self.cur_over = 0  # currentNumMembersWithOverMinQuotaPartitions
        self.under: list[str] = []
        self.exact: list[str] = []
        self.revoked: dict[TopicPartition, str] = {}  # partition -> the member that gave it up
        self.out: dict[str, list[TopicPartition]] = {}
        self.assigned: set[TopicPartition] = set()
        self.transferring: dict[TopicPartition, str] = {}

    def build(self) -> StickyResult:
        self._assign_owned_partitions()
        unassigned = [tp for tp in all_partitions(self.topics) if tp not in self.assigned]
        self.under.sort(key=string_sort_key)
        self.exact.sort(key=string_sort_key)
        unassigned = self.rack.sort_partitions_by_rack_consumers(unassigned)
        unassigned = self._assign_rack_aware_round_robin(unassigned)
        self._assign_round_robin(unassigned)
        return StickyResult(assignment=self.out, transferring=self.transferring, uniform=True)

    def _assign_owned_partitions(self) -> None:
        """Reassign previously owned partitions (on the member's racks), up to the quota each member may keep."""
        for mid in self.owned:  # HashMap order, as built by _claims
            mine = [tp for tp in self._owned_on_racks(mid) if tp not in self.multiple]
            self._keep_owned(mid, mine)
            self.assigned.update(self.out[mid])

    def _owned_on_racks(self, mid: str) -> list[TopicPartition]:
        """The member's owned partitions its rack matches, by (partition, topic); the others may be revoked."""
        for tp in self.owned[mid]:
            if self.rack.mismatch(mid, tp):
                self.revoked[tp] = mid
        return sorted(
            (tp for tp in self.owned[mid] if not self.rack.mismatch(mid, tp)),
            key=lambda tp: (tp.partition, string_sort_key(tp.topic)),
        )

    def _keep_owned(self, mid: str, mine: list[TopicPartition]) -> None:
        if len(mine) < self.min_q:  # keep them all, the member is unfilled
            self.out[mid] = list(mine)
            self.under.append(mid)
        elif len(mine) >= self.max_q and self.cur_over < self.expected_over:  # keep maxQuota, revoke the rest
            self._one_more_over_min_quota()
            self.out[mid] = mine[: self.max_q]
            self.revoked.update((tp, mid) for tp in mine[self.max_q :])
        else:  # keep minQuota, revoke the rest; it may still take one more
            self.out[mid] = mine[: self.min_q]
            self.revoked.update((tp, mid) for tp in mine[self.min_q :])
            if self.cur_over < self.expected_over:
                self.exact.append(mid)

    def _one_more_over_min_quota(self) -> None:
        """One more member at maxQuota; once there are as many as expected, no member at minQuota may grow."""
        self.cur_over += 1
        if self.cur_over == self.expected_over:
            self.exact.clear()

    def _assign_rack_aware_round_robin(self, unassigned: list[TopicPartition]) -> list[TopicPartition]:
        """Round-robin within racks up to the quotas; the partitions left for assignRoundRobin."""
        if not self.rack.consumer_rack:
            return unassigned
        left: list[TopicPartition] = []
        next_index = 0
        for tp in unassigned:
            chosen = None
            index = self.rack.next_consumer(tp, self.under, next_index)
            if index >= 0:
                chosen = self.under[index]
                next_index = self._fill_under_min_quota(chosen, index)
            elif self.exact:
                chosen = self._rack_consumer_at_min_quota(tp)
            if chosen is None:
                left.append(tp)
            else:
                self._assign_new_partition(tp, chosen)
        return left

    def _fill_under_min_quota(self, chosen: str, index: int) -> int:
        """`chosen` (at `index` of `under`) takes one more partition: at minQuota it leaves `under` (and joins `exact`
        if it may still grow). The index the next search starts from."""
        count = len(self.out[chosen]) + 1
        if count >= self.min_q:
            self.under.remove(chosen)
            if count < self.max_q and self.cur_over < self.expected_over:
                self.exact.append(chosen)
        else:
            index += 1
        return index % len(self.under) if self.under else 0

    def _rack_consumer_at_min_quota(self, tp: TopicPartition) -> str | None:
        """The first member at minQuota on one of the partition's racks (None: none); at maxQuota it is filled."""
        first = self.rack.next_consumer(tp, self.exact, 0)
        if first < 0:
            return None
        chosen = self.exact[first]
        if len(self.out[chosen]) + 1 == self.max_q:
            self.exact.pop(first)
            self._one_more_over_min_quota()
        return chosen

    def _assign_round_robin(self, unassigned: list[TopicPartition]) -> None:
        """Round-robin over the unfilled members up to maxQuota, otherwise minQuota."""
        cursor = 0  # position of the next member in `under` (a Java iterator over the linked list)
        for tp in unassigned:
            if cursor < len(self.under):
                mid = self.under[cursor]
                from_under = True
            elif not self.under and not self.exact:
                raise AssertionError("No more unfilled consumers to be assigned.")
            elif not self.under:
                mid = self.exact.pop(0)
                from_under = False
            else:
                cursor = 0
                mid = self.under[0]
                from_under = True
            n = self._assign_new_partition(tp, mid)
            if n == self.min_q:
                if from_under:
                    self.under.pop(cursor)  # iterator.remove(): the cursor now points at the next member
                self.exact.append(mid)
            else:
                if from_under:
                    cursor += 1
                if n == self.max_q:
                    self.cur_over += 1

    def _assign_new_partition(self, tp: TopicPartition, mid: str) -> int:
        """Give `tp` to `mid`; it transfers ownership if another member gave it up or several claimed it."""
        self.out[mid].append(tp)
        if (tp in self.revoked and self.revoked[tp] != mid) or tp in self.multiple:
            self.transferring[tp] = mid
        return len(self.out[mid])


def _constrained(
    members: Sequence[Member], topics: Mapping[str, int], owned, multiple, rack: _RackInfo | None = None
) -> StickyResult:
    return _ConstrainedAssignmentBuilder(members, topics, owned, multiple, rack or _RackInfo({}, {}, {})).build()


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


class NeverSettles(PlannerError):
    """The cooperative rebalances never end: a round starts from the same ownership as an earlier one, so Kafka's
    CooperativeStickyAssignor hands out the same rounds again and again (`result`: the last round, `rounds` done,
    `cycle`: the first and last rebalance that repeat; None when `max_rounds` ran out first)."""

    def __init__(self, message: str, result: StickyResult, rounds: int, cycle: tuple[int, int] | None = None):
        super().__init__(message)
        self.result = result
        self.rounds = rounds
        self.cycle = cycle


def cooperative_converged(
    members: Sequence[Member],
    partitions_per_topic: Mapping[str, int],
    partition_racks: Mapping[TopicPartition, frozenset[str]] | None = None,
    max_rounds: int = 20,
) -> tuple[StickyResult, int]:
    """Rebalance again and again, each member owning what the previous round gave it (one generation later), until
    no partition is being revoked, as Kafka's cooperative protocol does. Returns the final result and the rounds.

    Raises `NeverSettles` when a round would start from the ownership an earlier round started from: Kafka's assignor
    then repeats those rounds forever. With racks and mixed subscriptions this happens: GeneralAssignmentBuilder can
    give a rack-matched member a partition in its rack-aware pass, balance it away again and move another member's
    partition instead, every rebalance (AbstractStickyAssignor.java, trunk of September 2024, does exactly this)."""
    current = list(members)
    gen = max([m.generation for m in members if m.generation is not None] + [0])
    started: dict[tuple, int] = {}  # the ownership each round started from -> that round
    withheld: list[dict[TopicPartition, str]] = []
    result = StickyResult(assignment={})
    for rounds in range(1, max_rounds + 1):
        state = _ownership(current)
        if state in started:
            raise _never_settles(started[state], rounds - 1, withheld, result)
        started[state] = rounds
        result = cooperative_first_round(current, partitions_per_topic, partition_racks)
        if not result.transferring:
            return result, rounds
        withheld.append(result.transferring)
        gen += 1
        current = [replace(m, owned=tuple(result.assignment[m.id]), generation=gen) for m in current]
    raise NeverSettles(
        f"cooperative-sticky does not settle within {max_rounds} rebalances for this group", result, max_rounds
    )


def _ownership(members: Sequence[Member]) -> tuple:
    """What a round's result depends on besides the metadata: owned partitions (in order) and generations relative to
    the newest."""
    top = max([m.generation for m in members if m.generation is not None] + [0])
    return tuple(
        (m.id, m.owned, None if m.generation is None else top - m.generation, m.topics, m.rack, m.instance_id)
        for m in members
    )


def _never_settles(
    first: int, last: int, withheld: list[dict[TopicPartition, str]], result: StickyResult
) -> NeverSettles:
    """Rebalances `first`..`last` repeat forever: the partitions they withhold, and from whom."""
    moving = sorted({(tp, mid) for w in withheld[first - 1 : last] for tp, mid in w.items()})
    text = ", ".join(f"{tp}->{mid}" for tp, mid in moving)
    return NeverSettles(
        f"cooperative-sticky never settles for this group: Kafka's CooperativeStickyAssignor repeats rebalances "
        f"{first}-{last} forever, withholding {text} in turn",
        result,
        last,
        (first, last),
    )
