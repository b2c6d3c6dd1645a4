"""Changing a topic's replication factor with as few replica moves as possible."""

from __future__ import annotations

from collections import Counter

from planner.leadership import topic_states
from planner.model import Cluster, Partition, PlannerError, TopicPartition
from planner.rebalance.moves import Plan, names_offline, rack_count, rack_safe
from planner.rebalance.notes import Note, in_progress_note, offline_note, rackless_notes


def set_replication_factor(cluster: Cluster, topic: str, rf: int, max_moves: int | None = None) -> Plan:
    """Replicas on brokers that are not online leave every partition of the topic first (a live broker replaces
    them where the list falls short of `rf`, with a note; a lost preferred leader is replaced by the replica leading
    least). Then add replicas on online brokers (not those whose log dirs are all cordoned, KIP-1066) of racks the
    partition does not use yet, holding fewest replicas of this topic (so the topic spreads within 1 per broker), then
    fewest overall (appended, so the preferred leader stays), or remove replicas: out-of-ISR ones first, then those
    sharing a rack with another replica, then the most loaded; the preferred leader goes last. Kafka's --execute
    refuses a reassignment naming a broker that is not online ("Unknown broker id"), so no new list names one.

    `max_moves` caps the replicas added (removing one copies nothing): a partition whose additions do not fit keeps
    its list, named in a note, and the plan says the new replication factor was left unmet; a second plan takes the
    next partitions (Kafka takes partitions of one topic at different replication factors).
    """
    online = _check_replication_factor(cluster, topic, rf)
    t = cluster.topic(topic)
    counts = _ReplicaCounts(cluster, topic, online)
    proposed = {}
    need = copied = 0
    skipped = []
    offline = []
    less_safe: list[tuple[TopicPartition, int, int]] = []
    unsafe: list[TopicPartition] = []  # raised to a list the racks' brokers left rack-unsafe (`_ReplicaCounts.blocked`)
    capped: list[TopicPartition] = []
    replaced: list[tuple[TopicPartition, list[int]]] = []  # partitions whose replicas on dead brokers were replaced
    capped_need = capped_bytes = 0  # what the partitions the cap leaves would add: in the bounds all the same
    live = cluster.online_ids
    leads = Counter(q.replicas[0] for q in cluster.partitions())  # preferred leaders per broker, and of the topic
    tleads = Counter(q.replicas[0] for q in t.partitions)
    for p, stt in zip(t.partitions, topic_states(cluster, t)):
        if p.adding or p.removing:  # the controller is moving it: its list is not the topic's to change now
            skipped.append(p.tp)
            continue
        reps = list(p.replicas)
        # on a cluster that lost a broker, a replica on a broker that is not online leaves the list first and, where
        # that leaves fewer than `rf`, a live one takes its place along with the change (as an operator replaces
        # it: the new list may not name it, Kafka's --execute says "Unknown broker id"), so every partition of the
        # topic reaches the new factor on live brokers: raised, lowered, or already at it (a topic of mixed factors)
        dead = [b for b in reps if b not in live]
        if dead:
            reps = [b for b in reps if b in live]
            counts.drop(dead)
        added = 0
        if len(reps) < rf and max_moves is not None and need + rf - len(reps) > max_moves:
            capped.append(p.tp)
            capped_need += rf - len(reps)
            capped_bytes += (rf - len(reps)) * (p.size or 0)
            counts.drop(dead, back=True)
            continue
        if len(reps) < rf:
            added = counts.add_replicas(p.tp, reps, rf)
        elif len(reps) > rf:
            counts.remove_replicas(reps, rf, set(stt.isr))
        if dead and p.replicas[0] in dead:  # its preferred leader was lost: the replica leading least takes over
            _lead_from(reps, p.replicas[0], leads, tleads)
        if tuple(reps) != p.replicas and names_offline(reps, live):  # Kafka's --execute would refuse the plan
            counts.undo(p, reps)
            offline.append(p.tp)
            continue
        need += added
        copied += added * (p.size or 0)  # every replica added copies the partition: the bytes bound
        if tuple(reps) != p.replicas:
            proposed[p.tp] = tuple(reps)
            if dead and added:
                replaced.append((p.tp, dead))
            before, after = _racks(p.replicas, counts.rack_of), _racks(reps, counts.rack_of)
            # fewer racks than the new list could keep of the old one (RF 3 -> 2 leaving two racks loses no safety):
            # the out-of-ISR or offline replicas removed first were of racks no other replica holds
            if counts.n_racks and after < min(before, len(reps), counts.n_racks):
                less_safe.append((p.tp, before, after))
            if p.tp in counts.blocked and not rack_safe(reps, counts.rack_of, counts.n_racks):
                unsafe.append(p.tp)
    return Plan(
        before=cluster,
        proposed=proposed,
        goal=f"set-replication-factor {topic} {rf}",
        lower_bound=need + capped_need,
        bytes_lower_bound=copied + capped_bytes if any(p.size is not None for p in t.partitions) else None,
        brokers=tuple(online),
        notes=_notes(less_safe, skipped)
        + _replaced_notes(replaced)
        + rackless_notes(cluster, online)
        + _unsafe_notes(unsafe, counts)
        + ((offline_note(offline),) if offline else ())
        + (
            (Note("replication-factor", "capped", len(capped), partitions=tuple(capped), values=(rf,)),)
            if capped
            else ()
        )
        + _spread_notes(cluster.with_assignment(proposed), topic, online, capped=bool(capped)),
        unmet=("replication-factor",) if capped else (),
    )


def _spread_notes(after: Cluster, topic: str, brokers: list[int], capped: bool = False) -> tuple[Note, ...]:
    """Topics whose replicas per broker spread more than 1 after the change: the topic itself (racks or placement
    prevented an even spread) and the others, which a replication-factor change leaves where they are."""
    wide = []
    for t in after.topics:
        counts = dict.fromkeys(brokers, 0)
        for p in t.partitions:
            for b in p.replicas:
                if b in counts:
                    counts[b] += 1
        if max(counts.values()) - min(counts.values()) > 1:
            wide.append(t.name)
    # where the move cap left partitions unchanged, the cap may be what keeps the topic wide
    kind = "unmet-capped" if capped else "unmet"
    notes = [Note("topic-spread", kind, 1, topics=(topic,))] if topic in wide else []
    others = tuple(t for t in wide if t != topic)
    if others:
        notes.append(Note("topic-spread", "other-topics", len(others), topics=others))
    return tuple(notes)


def _check_replication_factor(cluster: Cluster, topic: str, rf: int) -> list[int]:
    """The online brokers, sorted; Kafka's texts for an unknown topic or an impossible replication factor."""
    if not cluster.has_topic(topic):
        raise PlannerError(
            f"Topic {topic} not found. The topology has topics: {', '.join(t.name for t in cluster.topics) or '(none)'}"
        )
    online = sorted(cluster.online_ids)
    if rf <= 0:
        raise PlannerError("Replication factor must be larger than 0.")
    if rf > len(online):
        raise PlannerError(f"Replication factor: {rf} larger than available brokers: {len(online)}.")
    return online


class _ReplicaCounts:
    """Replicas per broker, overall and of the topic, kept up to date as replicas are added and removed."""

    def __init__(self, cluster: Cluster, topic: str, online: list[int]):
        self.cluster = cluster
        self.online = online
        self.rack_of = cluster.rack_of()
        self.n_racks = rack_count(cluster, online)
        self.counts = {b: 0 for b in cluster.broker_ids}
        self.tcounts = {b: 0 for b in cluster.broker_ids}
        # bytes a broker can still take (its log dirs' usable bytes, DescribeLogDirs): no copy goes beyond them
        self.room = cluster.usable_bytes()
        # per partition whose additions went to a rack it already uses while racks were missing: those racks, and
        # their online brokers, none of which could take the replica (cordoned, or short of usable bytes)
        self.blocked: dict[TopicPartition, tuple[set[str | None], set[int], set[int]]] = {}
        for p in cluster.partitions():
            for b in p.replicas:
                self.counts[b] += 1
                self.tcounts[b] += p.topic == topic

    def add_replicas(self, tp: TopicPartition, reps: list[int], rf: int) -> int:
        """Append replicas up to `rf`: a rack not used yet, fewest of this topic, fewest overall. How many."""
        added = 0
        size = self.cluster.topic(tp.topic).partition(tp.partition).size or 0
        while len(reps) < rf:
            used = {self.rack_of.get(b) for b in reps}
            placeable = [b for b in self.online if b not in reps and b in self.cluster.placeable_ids]
            pool = [b for b in placeable if self.room.get(b, size) >= size]
            if not placeable:
                raise PlannerError(
                    f"cannot add a replica of {tp}: every online broker without one has all its log dirs "
                    f"cordoned (cordoned.log.dirs, KIP-1066): {','.join(map(str, sorted(self.cluster.cordoned_ids)))}"
                )
            if not pool:
                raise PlannerError(
                    f"cannot add a replica of {tp} ({size} B): the log dirs of broker(s) "
                    f"{','.join(map(str, placeable))} report too few usable bytes left for it (DescribeLogDirs)"
                )
            best = min(
                pool,
                key=lambda b: (self.n_racks > 0 and self.rack_of.get(b) in used, self.tcounts[b], self.counts[b], b),
            )
            if self.n_racks and self.rack_of.get(best) in used:
                self._block(tp, reps, pool, size)
            reps.append(best)
            if best in self.room:
                self.room[best] -= size
            self.counts[best] += 1
            self.tcounts[best] += 1
            added += 1
        return added

    def _block(self, tp: TopicPartition, reps: list[int], pool: list[int], size: int) -> None:
        """A replica of `tp` goes to a rack `reps` already uses: record the racks it lacks, none of whose online
        brokers is in `pool` (they have every log dir cordoned, or too few usable bytes for the copy)."""
        used = {self.rack_of.get(b) for b in reps}
        missing = {self.rack_of.get(b) for b in self.online} - used
        if not missing:  # more replicas than racks: every rack holds one already
            return
        racks, closed, full = self.blocked.setdefault(tp, (set(), set(), set()))
        racks.update(missing)
        for b in self.online:
            if self.rack_of.get(b) in missing:
                (closed if b not in self.cluster.placeable_ids else full).add(b)

    def undo(self, p: Partition, reps: list[int]) -> None:
        """Partition p keeps its replicas after all: the counts (and room) as before `reps` was made of them."""
        size = p.size or 0
        for b in set(reps).difference(p.replicas):
            self.counts[b] -= 1
            self.tcounts[b] -= 1
            if b in self.room:
                self.room[b] += size
        for b in set(p.replicas).difference(reps):
            self.counts[b] += 1
            self.tcounts[b] += 1

    def drop(self, dead: list[int], back: bool = False) -> None:
        """Replicas on `dead` brokers leave their partition (or, `back`, return to it)."""
        for b in dead:
            self.counts[b] += 1 if back else -1
            self.tcounts[b] += 1 if back else -1

    def remove_replicas(self, reps: list[int], rf: int, isr: set[int]) -> None:
        """Remove replicas down to `rf`: out of the ISR or offline first, then sharing a rack, then the most loaded;
        the preferred leader last."""
        while len(reps) > rf:
            victim = min(reps, key=lambda b: self._drop_key(b, reps, isr))
            reps.remove(victim)
            self.counts[victim] -= 1
            self.tcounts[victim] -= 1

    def _drop_key(self, b: int, reps: list[int], isr: set[int]) -> tuple:
        rack_of = self.rack_of
        shared = self.n_racks > 0 and sum(1 for x in reps if rack_of.get(x) == rack_of.get(b)) > 1
        in_sync = b in isr and b in self.cluster.online_ids
        return (in_sync, not shared, b == reps[0], -self.tcounts[b], -self.counts[b], -b)


def _notes(less_safe: list[tuple[TopicPartition, int, int]], skipped: list) -> tuple[Note, ...]:
    """Partitions the change leaves on fewer racks (each with its racks before and after), those mid-reassignment."""
    notes = []
    if less_safe:
        notes.append(
            Note(
                "hard",
                "fewer-racks",
                len(less_safe),
                partitions=tuple(tp for tp, _, _ in less_safe),
                values=tuple(v for _, before, after in less_safe for v in (before, after)),
            )
        )
    if skipped:
        notes.append(in_progress_note(skipped))
    return tuple(notes)


def _lead_from(reps: list[int], lost: int, leads: Counter, tleads: Counter) -> None:
    """The replica of `reps` leading fewest of the topic, then fewest overall, then first in the list, moved to the
    head in place of the lost preferred leader `lost` (the order of the others kept)."""
    head = min(reps, key=lambda b: (tleads[b], leads[b], reps.index(b)))
    reps.remove(head)
    reps.insert(0, head)
    for counter in (leads, tleads):
        counter[lost] -= 1
        counter[head] += 1


def _replaced_notes(replaced: list[tuple[TopicPartition, list[int]]]) -> tuple[Note, ...]:
    """The partitions whose replicas on brokers that are not online were replaced along with the raise, and those
    brokers (`values`)."""
    if not replaced:
        return ()
    dead = sorted({b for _, bs in replaced for b in bs})
    return (
        Note(
            "replication-factor",
            "dead-replaced",
            len(replaced),
            partitions=tuple(tp for tp, _ in replaced),
            values=tuple(dead),
        ),
    )


def _unsafe_notes(unsafe: list[TopicPartition], counts: _ReplicaCounts) -> tuple[Note, ...]:
    """The partitions the change leaves rack-unsafe because no broker of a rack they lack could take a replica: the
    racks (`topics`), then (`values`) how many brokers are cordoned, those brokers and the brokers short of space."""
    if not unsafe:
        return ()
    racks: set[str | None] = set()
    closed: set[int] = set()
    full: set[int] = set()
    for tp in unsafe:
        r, c, f = counts.blocked[tp]
        racks |= r
        closed |= c
        full |= f
    full -= closed
    return (
        Note(
            "replication-factor",
            "rack-unsafe",
            len(unsafe),
            partitions=tuple(unsafe),
            topics=tuple(sorted(str(r) for r in racks)),
            values=(len(closed), *sorted(closed), *sorted(full)),
        ),
    )


def _racks(replicas, rack_of) -> int:
    return len({rack_of.get(b) for b in replicas})
