"""What carrying out a plan takes, and the checks of a reassignment someone else wrote: the use cases behind
`kafka-planner reassign ...` that are not a goal of their own.

* `execution(plan, throttle, batch_size)`: the batches to execute in order, the throttle Kafka would set for a rate,
  and the partitions needing a PREFERRED election once the reassignment completes (`summary_figures`: only the
  throttle and how many batches, for a summary);
* `leader_election(cluster, topics, deadline)`: preferred leaders balanced by reordering replica lists (no data moves);
* `check_reassignment(cluster, proposed, source, additional)`: Kafka's `--execute` checks (ReassignPartitionsCommand),
  then what the reassignment changes and the risks it takes (replication-factor changes, partitions made
  rack-unsafe), as data for the CLI to word.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from planner.leadership import partition_state
from planner.model import Cluster, PlannerError, Topic, TopicPartition
from planner.rebalance.batches import batches, copied_bytes
from planner.rebalance.goals.budget import Deadline
from planner.rebalance.goals.preferred_leaders import elect_leaders, leader_bounds
from planner.rebalance.moves import Plan, changed_only, names_offline, rack_count, rack_safe, select_partitions
from planner.rebalance.notes import in_progress_note, offline_note
from planner.rebalance.reassignment import validate_reassignment
from planner.rebalance.throttle import Throttle, throttle_for

Assignment = Mapping[TopicPartition, tuple[int, ...]]


@dataclass(frozen=True)
class Execution:
    plan: Plan
    batches: Sequence[Assignment]  # in execution order; one when not batched, none when nothing changes
    elect: Sequence[TopicPartition]  # the PREFERRED election once the reassignment completes
    throttle: Throttle | None = None


def partitions_to_elect(plan: Plan) -> list[TopicPartition]:
    """Partitions whose leader after the reassignment is not their new preferred leader (need a PREFERRED election).

    When the reassignment completes, the controller keeps the current leader if it is still a replica; otherwise it
    elects the first replica of the new list in the ISR (`PartitionStateMachine.scala`
    reassignPartitionLeaderElection; `PartitionChangeBuilder.java` in KRaft).
    """
    # the leaders of the partitions the plan touches only (a plan of a large cluster leaves many alone)
    online = plan.before.online_ids
    topics: dict[str, tuple[Topic, bool]] = {}
    out = []
    for tp, new in plan.proposed.items():
        if tp.topic not in topics:
            t = plan.before.topic(tp.topic)
            topics[tp.topic] = t, t.config_bool("unclean.leader.election.enable", False)
        t, unclean = topics[tp.topic]
        leader = partition_state(t.partitions[tp.partition], online, unclean).leader
        after = leader if leader in new else next((b for b in new if b in online), -1)
        if after != new[0] and new[0] in online:
            out.append(tp)
    return out


def execution(
    plan: Plan,
    throttle: int | None = None,
    batch_size: int | None = None,
    batch_bytes: int | None = None,
    canary: bool = True,
) -> Execution:
    """How to carry out `plan`: batches of at most `batch_size` partitions and `batch_bytes` bytes to copy (the first
    a one-partition canary unless `canary` is False), the throttle for `throttle` bytes/s."""
    th = throttle_for(plan.before, plan.proposed, throttle) if throttle is not None else None
    parts = batches(plan.before, plan.proposed, batch_size, frozenset(plan.brokers), batch_bytes, canary)
    return Execution(plan, parts, partitions_to_elect(plan), th)


@dataclass(frozen=True)
class BatchFigures:
    partitions: int
    bytes: int | None  # to copy; None when a partition's size is unknown
    seconds: float | None  # at the throttle; None without a throttle or sizes


def batch_figures(ex: Execution) -> list[BatchFigures]:
    """Each batch's partitions, bytes to copy and estimated time at the throttle (`throttle_for`'s estimate)."""
    out = []
    for batch in ex.batches:
        sizes = [copied_bytes(ex.plan.before, tp, new) for tp, new in batch.items()]
        total = None if any(s is None for s in sizes) else sum(s or 0 for s in sizes)
        seconds = throttle_for(ex.plan.before, batch, ex.throttle.rate).seconds if ex.throttle else None
        out.append(BatchFigures(len(batch), total, seconds))
    return out


def batch_count(plan: Plan, batch_size: int | None = None) -> int:
    """How many batches `execution` splits `plan` into by `batch_size` alone without a canary (one when not batched,
    none when nothing changes), without putting its partitions in batch order (about 2 s of CPU at 1M)."""
    n = len(plan.proposed)
    return -(-n // batch_size) if batch_size and batch_size > 0 else min(n, 1)


def summary_figures(
    plan: Plan, throttle: int | None = None, batch_size: int | None = None
) -> tuple[Throttle | None, int]:
    """The throttle and the number of batches `execution` gives unbatched, for a summary that shows only those:
    without the batches' order or the partitions to elect."""
    th = throttle_for(plan.before, plan.proposed, throttle) if throttle is not None else None
    return th, batch_count(plan, batch_size)


def leader_election(cluster: Cluster, topics: Sequence[str] | None, deadline: Deadline | None = None) -> Execution:
    """Preferred leaders balanced by reordering replica lists (no data moves), and the partitions to elect;
    partitions mid-reassignment are left as they are, with a note. `deadline`: the time budget (`budget.Deadline`);
    where it runs out, the reordering found so far, with a note naming the stage."""
    deadline = deadline if deadline is not None else Deadline()
    proposed, elect = elect_leaders(cluster, topics, deadline)
    bounds = leader_bounds(cluster, proposed, topics, deadline)
    late = deadline.note()
    parts = select_partitions(cluster, topics)
    skipped = [p.tp for p in parts if p.adding or p.removing]
    offline = [p.tp for p in parts if not (p.adding or p.removing) and names_offline(p.replicas, cluster.online_ids)]
    plan = Plan(
        before=cluster,
        proposed=proposed,
        goal="elect-leaders (reorder replica lists, no data movement)",
        lower_bound=0,
        brokers=tuple(sorted(cluster.online_ids)),
        notes=((in_progress_note(skipped),) if skipped else ())
        + ((offline_note(offline),) if offline else ())
        + ((late,) if late is not None else ()),
        leader_bounds=bounds,
    )
    return Execution(plan, [proposed] if proposed else [], elect)


@dataclass(frozen=True)
class Checked:
    plan: Plan  # the partitions whose replica list changes
    unchanged: int  # listed partitions that already have the proposed list
    rf_changes: tuple[tuple[TopicPartition, int, int], ...]  # (partition, old RF, new RF)
    made_rack_unsafe: tuple[tuple[TopicPartition, tuple[int, ...], tuple[str | None, ...]], ...]  # replicas, racks
    left_on_leaving: tuple[tuple[int, int], ...] = ()  # (leaving broker, replicas it still holds after the moves)


def check_reassignment(
    cluster: Cluster, proposed: Assignment, source: str, *, additional: bool = False, leaving: Sequence[int] = ()
) -> Checked:
    """Kafka's `--execute` checks (its order, its texts), then what the reassignment changes and what it risks.
    `leaving`: brokers being emptied (a decommission): the figures are over the other online brokers."""
    validate_reassignment(cluster, proposed, additional=additional)
    unknown = sorted(set(leaving) - set(cluster.broker_ids))
    if unknown:
        raise PlannerError(
            f"--leaving-brokers: unknown broker(s) {','.join(map(str, unknown))} (brokers: "
            f"{','.join(map(str, cluster.broker_ids))})"
        )
    current = cluster.assignment()
    rack_of = cluster.rack_of()
    n_racks = rack_count(cluster, sorted(cluster.online_ids))
    rf_changes, unsafe = [], []
    for tp, new in proposed.items():
        old = current[tp]
        if len(new) != len(old):
            rf_changes.append((tp, len(old), len(new)))
        if rack_safe(old, rack_of, n_racks) and not rack_safe(new, rack_of, n_racks):
            unsafe.append((tp, tuple(new), tuple(rack_of.get(b) for b in new)))
    plan = Plan(
        before=cluster,
        proposed=changed_only(current, proposed),
        goal=f"check-execute {source}: valid",
        brokers=tuple(sorted(set(cluster.online_ids) - set(leaving))),
    )
    after = {**current, **proposed}
    kept = {b: sum(1 for r in after.values() if b in r) for b in sorted(set(leaving))}
    return Checked(
        plan,
        len(proposed) - len(plan.proposed),
        tuple(rf_changes),
        tuple(unsafe),
        tuple((b, n) for b, n in kept.items() if n),
    )
