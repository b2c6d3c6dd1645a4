"""Changing a topic's replication factor with as few replica moves as possible."""

from __future__ import annotations

from planner.leadership import topic_states
from planner.model import Cluster, PlannerError
from planner.rebalance.moves import Plan, in_progress_note, rack_count


def set_replication_factor(cluster: Cluster, topic: str, rf: int) -> Plan:  # noqa: C901
    """Add replicas on online brokers (not those whose log dirs are all cordoned, KIP-1066) of racks the partition
    does not use yet, holding fewest replicas of this topic (so the topic spreads within 1 per broker), then fewest
    overall (appended, so the preferred leader stays), or remove replicas: out-of-ISR and offline ones first, then
    those sharing a rack with another replica, then the most loaded; the preferred leader goes last.
    """
    if not cluster.has_topic(topic):
        raise PlannerError(
            f"Topic {topic} not found. The topology has topics: {', '.join(t.name for t in cluster.topics) or '(none)'}"
        )
    online = sorted(cluster.online_ids)
    if rf <= 0:
        raise PlannerError("Replication factor must be larger than 0.")
    if rf > len(online):
        raise PlannerError(f"Replication factor: {rf} larger than available brokers: {len(online)}.")
    t = cluster.topic(topic)
    rack_of = cluster.rack_of()
    n_racks = rack_count(cluster, online)
    counts = {b: 0 for b in cluster.broker_ids}
    tcounts = {b: 0 for b in cluster.broker_ids}
    for p in cluster.partitions():
        for b in p.replicas:
            counts[b] += 1
            tcounts[b] += p.topic == topic
    states = topic_states(cluster, t)
    proposed = {}
    need = 0
    skipped = []
    less_safe = []
    for p, stt in zip(t.partitions, states):
        if p.adding or p.removing:  # the controller is moving it: its list is not the topic's to change now
            skipped.append(p.tp)
            continue
        reps = list(p.replicas)
        if len(reps) < rf:
            while len(reps) < rf:
                used = {rack_of.get(b) for b in reps}
                pool = [b for b in online if b not in reps and b in cluster.placeable_ids]
                if not pool:
                    raise PlannerError(
                        f"cannot add a replica of {p.tp}: every online broker without one has all its log dirs "
                        f"cordoned (cordoned.log.dirs, KIP-1066): {','.join(map(str, sorted(cluster.cordoned_ids)))}"
                    )
                best = min(pool, key=lambda b: (n_racks > 0 and rack_of.get(b) in used, tcounts[b], counts[b], b))
                reps.append(best)
                counts[best] += 1
                tcounts[best] += 1
                need += 1
        elif len(reps) > rf:
            isr = set(stt.isr)
            while len(reps) > rf:

                def drop_key(b: int, reps: list[int] = reps, isr: set[int] = isr) -> tuple:
                    shared = n_racks > 0 and sum(1 for x in reps if rack_of.get(x) == rack_of.get(b)) > 1
                    return (b in isr and b in cluster.online_ids, not shared, b == reps[0], -tcounts[b], -counts[b], -b)

                victim = min(reps, key=drop_key)
                reps.remove(victim)
                counts[victim] -= 1
                tcounts[victim] -= 1
        if tuple(reps) != p.replicas:
            proposed[p.tp] = tuple(reps)
            before, after = _racks(p.replicas, rack_of), _racks(reps, rack_of)
            if n_racks and after < before:
                less_safe.append(f"{p.tp} {before} -> {after}")
    notes = []
    if less_safe:
        notes.append(
            f"{len(less_safe)} partition(s) span fewer racks, so a rack failure can take more of their "
            f"replicas: {', '.join(less_safe[:10])}{' ...' if len(less_safe) > 10 else ''}"
        )
    if skipped:
        notes.append(in_progress_note(skipped))
    return Plan(
        before=cluster,
        proposed=proposed,
        goal=f"set-replication-factor {topic} {rf}",
        lower_bound=need,
        brokers=tuple(online),
        notes=tuple(notes),
    )


def _racks(replicas, rack_of) -> int:
    return len({rack_of.get(b) for b in replicas})
