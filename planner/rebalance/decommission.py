"""Decommissioning brokers and replacing one broker by another, from the current assignment."""

from __future__ import annotations

from typing import Callable, Sequence

from planner.model import Cluster, PlannerError, TopicPartition, human_bytes
from planner.rebalance.goals import balance, check_brokers, excluded
from planner.rebalance.moves import Plan, names_offline, rack_count, rack_safe
from planner.rebalance.notes import Note, in_progress_note, offline_note, rackless_notes
from planner.rebalance.reassignment import short_of_space


def decommission(
    cluster: Cluster,
    brokers: Sequence[int],
    progress: Callable[[str], None] | None = None,
    rack_repair: bool = True,
    **options,
) -> Plan:
    """Move every replica off `brokers` onto the remaining online brokers, then the goals over those (`balance`,
    whose keyword `options` it takes: max_moves, exclude_topics, exclude_internal, byte_tolerance, leaders);
    rack-unsafe partitions are repaired unless `rack_repair` is False."""
    gone = set(check_brokers(cluster, brokers, "--brokers"))
    if not gone:
        raise PlannerError("--brokers: give at least one broker id to decommission")
    remaining = [b for b in sorted(cluster.online_ids) if b not in gone]
    # the partitions the plan may move: not those mid-reassignment (their lists hold the adding replicas too) nor
    # those of excluded topics, which stay where they are (a note names what they keep on the brokers)
    parts = list(cluster.partitions())
    moving, left = excluded(parts, options.get("exclude_topics", ()), options.get("exclude_internal", False))
    movable = [p for i, p in enumerate(parts) if i not in moving and i not in left]
    max_rf = max((len(p.replicas) for p in movable), default=0)
    if max_rf > len(remaining):
        worst = next(p for p in movable if len(p.replicas) == max_rf)
        raise PlannerError(
            f"cannot decommission broker(s) {','.join(map(str, sorted(gone)))}: {worst.tp} has replication factor "
            f"{max_rf} but only {len(remaining)} online broker(s) would remain"
        )
    return balance(
        cluster, brokers=remaining, goal="decommission", progress=progress, rack_repair=rack_repair, **options
    )


def replace_broker(
    cluster: Cluster,
    source: int,
    target: int,
    *,
    exclude_topics: Sequence[str] = (),
    exclude_internal: bool = False,
    max_moves: int | None = None,
) -> Plan:
    """Every replica of `source` goes to `target`, in the same position of the replica list (leaders stay leaders).

    Where `target` already holds a replica of the partition, the least-loaded online broker that keeps the partition
    rack-safe takes it instead. No replica goes to a broker whose log dirs are all cordoned (KIP-1066). Partitions of
    excluded topics (`exclude_topics`: regular expressions matching whole names; `exclude_internal`) stay, and at most
    `max_moves` partitions move, in partition order; a note says what stays on `source`. So does a partition with
    another replica on a broker that is not online: Kafka's --execute refuses a list naming one ("Unknown broker id").
    """
    if source == target:
        raise PlannerError(f"--source and --target are the same broker ({source})")
    check_brokers(cluster, [source, target], "replace-broker")
    rack_of = cluster.rack_of()
    online = cluster.online_ids
    if target not in online:
        raise PlannerError(f"--target broker {target} is {cluster.broker(target).state}; pick an online broker")
    if cluster.broker(target).cordoned:
        raise PlannerError(
            f"--target broker {target} has every log dir cordoned (cordoned.log.dirs, KIP-1066) and takes no new "
            "replicas; pick another broker or uncordon it"
        )
    counts = {b: 0 for b in cluster.broker_ids}
    for p in cluster.partitions():
        for b in p.replicas:
            counts[b] += 1
    brokers_after = [b for b in cluster.broker_ids if b != source and b in online]
    n_racks = rack_count(cluster, brokers_after)
    proposed: dict[TopicPartition, tuple[int, ...]] = {}
    unsafe: list[tuple[TopicPartition, int]] = []  # made rack-unsafe, with the broker taking the replica
    held = [p for p in cluster.partitions() if source in p.replicas]
    _, left_out = excluded(held, exclude_topics, exclude_internal)
    skipped = [p.tp for p in held if p.adding or p.removing]
    kept = [p.tp for i, p in enumerate(held) if i in left_out and not (p.adding or p.removing)]
    capped: list[TopicPartition] = []
    offline: list[TopicPartition] = []  # another replica on a broker that is not online: Kafka would refuse the list
    for i, p in enumerate(held):
        if p.adding or p.removing or i in left_out:
            continue
        if names_offline((b for b in p.replicas if b != source), online):
            offline.append(p.tp)
            continue
        if max_moves is not None and len(proposed) >= max_moves:
            capped.append(p.tp)
            continue
        dest = target
        if target in p.replicas:
            others = [b for b in brokers_after if b not in p.replicas and b in cluster.placeable_ids]
            safe = [b for b in others if rack_safe([b if x == source else x for x in p.replicas], rack_of, n_racks)]
            pool = safe or others
            if not pool:
                raise PlannerError(f"cannot move {p.tp} off broker {source}: no other online broker is free")
            dest = min(pool, key=lambda b: (counts[b], b))
        new = tuple(dest if b == source else b for b in p.replicas)
        counts[source] -= 1
        counts[dest] += 1
        if rack_safe(p.replicas, rack_of, n_racks) and not rack_safe(new, rack_of, n_racks):
            unsafe.append((p.tp, dest))
        proposed[p.tp] = new
    _check_space(cluster, proposed)
    lower = len(proposed) + len(capped)  # one move per partition holding `source`, the skipped and excluded left out
    return Plan(
        before=cluster,
        proposed=proposed,
        goal="replace-broker",
        lower_bound=lower,
        brokers=tuple(brokers_after),
        notes=_replace_notes(source, rack_of, unsafe, kept, capped, skipped, offline)
        + rackless_notes(cluster, brokers_after),
        unmet=("empty-source",) if capped else (),
    )


def _replace_notes(
    source: int,
    rack_of: dict,
    unsafe: Sequence[tuple[TopicPartition, int]],
    kept: Sequence[TopicPartition],
    capped: Sequence[TopicPartition],
    skipped: Sequence[TopicPartition],
    offline: Sequence[TopicPartition],
) -> tuple[Note, ...]:
    """replace-broker's notes: the partitions it makes rack-unsafe (each with the broker taking its replica and that
    broker's rack), then what stays on `source` (excluded, capped, mid-reassignment, naming a broker not online)."""
    notes: list[Note] = []
    if unsafe:
        notes.append(
            Note(
                "hard",
                "becomes-unsafe",
                len(unsafe),
                partitions=tuple(tp for tp, _ in unsafe),
                values=tuple(b for _, b in unsafe),
                names=tuple(str(rack_of.get(b)) for _, b in unsafe),
            )
        )
    if kept:
        notes.append(Note("hard", "excluded-kept", len(kept), values=(source,)))
    if capped:
        notes.append(Note("hard", "cap-left", len(capped), values=(source,)))
    if skipped:
        notes.append(in_progress_note(skipped))
    if offline:
        notes.append(offline_note(offline))
    return tuple(notes)


def _check_space(cluster: Cluster, proposed: dict[TopicPartition, tuple[int, ...]]) -> None:
    """No broker receives more bytes of copies than its log dirs report usable (DescribeLogDirs)."""
    usable = {b.id: b.usable_bytes for b in cluster.brokers if b.usable_bytes is not None}
    for broker, incoming, free in short_of_space(cluster, proposed, usable):
        raise PlannerError(
            f"broker {broker} would receive {human_bytes(incoming)} of copies but its log dirs report "
            f"{human_bytes(free)} usable (DescribeLogDirs); free space there or pick another --target"
        )
