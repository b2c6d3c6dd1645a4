"""`kafka-reassign-partitions.sh --execute / --verify / --cancel` and `kafka-leader-election.sh` over the Admin API,
step by step as `tools/.../reassign/ReassignPartitionsCommand.java` and `LeaderElectionCommand.java` do them, with
their texts. Every step's output goes to `out`: a line of Kafka's text, or a block (the rollback assignment, the
partition states, the log-dir move states) as data that the CLI renders with `planner.formats.kafka_json`.

Steps that change the cluster run only with `execute`; `before_change` gets the rollback assignment before any of
them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from planner.adapters.kafka import admin
from planner.adapters.kafka.connection import KafkaSession, error_name
from planner.adapters.kafka.snapshot import KafkaSnapshot, read_session
from planner.java import hashmap_order
from planner.model import EnvironmentFailure, PlannerError, TopicPartition, tp_hash, tp_sort_key
from planner.rebalance import reassignment as rr
from planner.rebalance.reassignment import LogDirMoveState, PartitionReassignmentState

Assignment = Mapping[TopicPartition, tuple[int, ...]]


@dataclass(frozen=True)
class RollbackBlock:
    """`--execute`'s "Current partition replica assignment" block: the replicas before the plan, and the log dir each
    replica is in where DescribeLogDirs told (Kafka 4.4's tool writes them, `getReplicaToLogDir`; "any" elsewhere)."""

    proposed: Assignment
    current: Assignment
    log_dirs: Mapping[tuple[TopicPartition, int], str] = field(default_factory=dict)


@dataclass(frozen=True)
class PartitionStates:
    """`--verify`'s "Status of partition reassignment" block."""

    states: Mapping[TopicPartition, PartitionReassignmentState]


@dataclass(frozen=True)
class MoveStates:
    """`--verify`'s "Status of replica reassignment" block (log-dir moves)."""

    states: Mapping[tuple[TopicPartition, int], LogDirMoveState]


Step = str | RollbackBlock | PartitionStates | MoveStates
Out = Callable[[Step], None]

YOU_MUST_RUN_VERIFY_PERIODICALLY = (
    "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed."
)


def _plural(n: int) -> str:
    return "" if n == 1 else "s"


def _tps(tps: Iterable[TopicPartition]) -> str:
    return ",".join(str(tp) for tp in sorted(tps, key=tp_sort_key))


@dataclass(frozen=True)
class Submission:
    proposed: dict[TopicPartition, tuple[int, ...]]
    log_dirs: dict[tuple[TopicPartition, int], str]
    throttle: int = -1  # B/s, -1 = none (Kafka's default)
    log_dir_throttle: int = -1
    additional: bool = False


class SubmissionRefused(EnvironmentFailure):
    """The controller refused partitions of a submission; `started`: the partitions whose reassignment it accepted
    (none: it refused all of them, and the throttles this submission set were put back). Exit 1, a failure of the
    environment (issue 32): the planner's own checks before sending (`check_submission`) exit 2."""

    def __init__(self, message: str, started: tuple[TopicPartition, ...] = ()):
        super().__init__(message)
        self.started = tuple(sorted(started, key=tp_sort_key))

    @property
    def nothing_changed(self) -> bool:
        return not self.started


Batch = tuple[dict[TopicPartition, tuple[int, ...]], dict[tuple[TopicPartition, int], str]]  # moves, log-dir moves


def split_batches(files: list[Batch], batch_size: int | None) -> list[Batch]:
    """The batches to submit one after another: the files as given, or one file cut into `batch_size` partitions at
    a time, in topic and partition order (each with its partitions' log-dir moves)."""
    if not batch_size or len(files) != 1:
        return files
    proposed, log_dirs = files[0]
    order = sorted(proposed, key=tp_sort_key)
    cuts = [set(order[i : i + batch_size]) for i in range(0, len(order), batch_size)]
    return [
        ({tp: proposed[tp] for tp in order if tp in cut}, {k: v for k, v in log_dirs.items() if k[0] in cut})
        for cut in cuts
    ]


def check_submission(snap: KafkaSnapshot, sub: Submission) -> None:
    """`executeAssignment`'s checks: an existing reassignment without --additional, unknown brokers, unknown
    topics or partitions (Kafka's texts); then what the controller is known to refuse: a replica added to a broker
    whose log dirs are all cordoned (KIP-1066), refused here so that no partition of the plan starts."""
    if not sub.additional and snap.reassigning:
        raise PlannerError(rr.CANNOT_EXECUTE_BECAUSE_OF_EXISTING)
    rr.validate_reassignment(snap.cluster, sub.proposed, additional=True)
    refusal = rr.cordoned_refusal(snap.cluster, sub.proposed)
    if refusal:
        raise PlannerError(refusal)


def tiered_topics(cluster, proposed: Mapping[TopicPartition, Iterable[int]]) -> list[str]:
    """Topics of the plan with tiered storage (KIP-405): a reassignment copies only their local bytes."""
    names = sorted({tp.topic for tp in proposed if cluster.has_topic(tp.topic)})
    return [n for n in names if cluster.topic(n).config_bool("remote.storage.enable", False)]


def require_writes(session: KafkaSession, sub: Submission) -> None:
    """Refuse before anything changes when the broker lacks a call the submission needs (tansu, noida-db)."""
    session.require(45, "AlterPartitionReassignments", "start a reassignment")
    if sub.throttle >= 0 or sub.log_dir_throttle >= 0:
        session.require(44, "IncrementalAlterConfigs", "set the throttles")
    if sub.log_dirs:
        session.require(34, "AlterReplicaLogDirs", "move replicas between log dirs")


def submit(
    session: KafkaSession,
    snap: KafkaSnapshot,
    sub: Submission,
    execute: bool,
    out: Out,
    before_change: Callable[[Assignment], None],
) -> None:
    """Print the rollback block; with `execute`, hand the rollback assignment to `before_change` (which writes it),
    set the throttles, alter the reassignments, start the log-dir moves."""
    check_submission(snap, sub)
    cluster = snap.cluster
    current = {tp: cluster.topic(tp.topic).partition(tp.partition).replicas for tp in sub.proposed}
    dirs = {
        (tp, r.broker): r.log_dir
        for tp in current
        for r in snap.replicas.get(tp, ())
        if not r.future and r.broker in current[tp]
    }
    out(RollbackBlock(sub.proposed, current, dirs))
    if not execute:
        out(
            f"Dry run: would start the reassignment of {len(sub.proposed)} partition{_plural(len(sub.proposed))}"
            + (f" with a throttle of {sub.throttle} B/s" if sub.throttle >= 0 else "")
            + ". Nothing was changed; add --execute to start it."
        )
        return
    require_writes(session, sub)
    before_change(current)
    previous = throttles_before(snap, sub)
    if sub.throttle >= 0 or sub.log_dir_throttle >= 0:
        out(YOU_MUST_RUN_VERIFY_PERIODICALLY)
        if sub.throttle >= 0:
            moves = rr.move_map(cluster, sub.proposed)
            admin.set_throttles(
                session,
                rr.leader_throttles(moves),
                rr.follower_throttles(moves),
                rr.reassigning_brokers(moves),
                sub.throttle,
            )
            out(f"The inter-broker throttle limit was set to {sub.throttle} B/s")
        if sub.log_dir_throttle >= 0:
            admin.set_log_dir_throttle(session, sorted({b for _, b in sub.log_dirs}), sub.log_dir_throttle)
            out(f"The replica-alter-dir throttle limit was set to {sub.log_dir_throttle} B/s")
    errors = {tp: r for tp, r in admin.alter_reassignments(session, sub.proposed).items() if r[0]}
    if errors:
        refused(session, sub, errors, previous)
    out(f"Successfully started partition reassignment{_plural(len(sub.proposed))} for {_tps(sub.proposed)}")
    if sub.log_dirs:
        execute_moves(session, sub.log_dirs, out)


def throttles_before(snap: KafkaSnapshot, sub: Submission) -> dict[tuple[int, str], dict[str, str | None]]:
    """The throttle configs this submission will set, with their values before it (None: not set)."""
    out: dict[tuple[int, str], dict[str, str | None]] = {}
    cluster = snap.cluster
    if sub.throttle >= 0:
        moves = rr.move_map(cluster, sub.proposed)
        for topic in set(rr.leader_throttles(moves)) | set(rr.follower_throttles(moves)):
            configs = cluster.topic(topic).configs
            out[(admin.TOPIC_RESOURCE, topic)] = {k: configs.get(k) for k in admin.TOPIC_LEVEL_THROTTLES}
        for b in rr.reassigning_brokers(moves):
            rates = snap.broker_throttles.get(b, {})
            out[(admin.BROKER_RESOURCE, str(b))] = {k: rates.get(k) for k in (admin.LEADER_RATE, admin.FOLLOWER_RATE)}
    if sub.log_dir_throttle >= 0:
        for b in sorted({b for _, b in sub.log_dirs}):
            entry = out.setdefault((admin.BROKER_RESOURCE, str(b)), {})
            entry[admin.LOG_DIR_RATE] = snap.broker_throttles.get(b, {}).get(admin.LOG_DIR_RATE)
    return out


def refused(
    session: KafkaSession,
    sub: Submission,
    errors: Mapping[TopicPartition, tuple[int, str | None]],
    previous: Mapping[tuple[int, str], Mapping[str, str | None]],
) -> None:
    """`executeAssignment`'s "Error reassigning partition(s):" with the controller's text per partition, on one
    line. When the controller refused every partition, the throttles this submission set are put back first, so
    that this submission changed nothing (the caller says what earlier batches changed)."""
    lines = [
        f"{tp}: {msg or error_name(code)}"
        for tp, (code, msg) in sorted(errors.items(), key=lambda e: tp_sort_key(e[0]))
    ]
    text = "Error reassigning partition(s): " + "; ".join(lines)
    if len(errors) == len(sub.proposed):
        if sub.throttle >= 0 or sub.log_dir_throttle >= 0:
            admin.restore_configs(session, previous)
        raise SubmissionRefused(text)
    raise SubmissionRefused(text, started=tuple(tp for tp in sub.proposed if tp not in errors))


def execute_moves(session: KafkaSession, moves: Mapping[tuple[TopicPartition, int], str], out: Out) -> None:
    """`executeMoves`: AlterReplicaLogDirs until every replica has started moving (a replica that is not yet on
    its new broker is retried every 100 ms, up to the timeout)."""
    pending = dict(moves)
    deadline = time.monotonic() + session.opts.timeout
    while pending:
        results = admin.alter_replica_log_dirs(session, pending)
        completed = [k for k, code in results.items() if code == 0]
        for tp, broker in sorted(completed, key=lambda k: (tp_sort_key(k[0]), k[1])):
            out(
                f"Successfully started moving log directory to {pending[(tp, broker)]} for replica "
                f"{tp.topic}-{tp.partition} with broker {broker} "
            )
        for k in completed:
            pending.pop(k, None)
        if pending and time.monotonic() >= deadline:
            names = ",".join(
                f"{tp.topic}-{tp.partition}-{b}" for tp, b in sorted(pending, key=lambda k: (tp_sort_key(k[0]), k[1]))
            )
            raise PlannerError(
                f"Timed out before log directory move{_plural(len(pending))} could be started for: {names}"
            )
        if pending:
            time.sleep(0.1)


def move_states(
    snap: KafkaSnapshot, targets: Mapping[tuple[TopicPartition, int], str]
) -> dict[tuple[TopicPartition, int], LogDirMoveState]:
    """`findLogDirMoveStates` from DescribeLogDirs' answer."""
    out: dict[tuple[TopicPartition, int], LogDirMoveState] = {}
    for (tp, broker), target in targets.items():
        found = [r for r in snap.replicas.get(tp, ()) if r.broker == broker]
        current = next((r.log_dir for r in found if not r.future), None)
        future = next((r.log_dir for r in found if r.future), None)
        if not found:
            live = any(d.broker == broker for d in snap.log_dirs)
            out[(tp, broker)] = LogDirMoveState("missing-replica" if live else "missing-log-dir", target)
        elif future is not None:
            out[(tp, broker)] = LogDirMoveState("active", target, current, future)
        elif current == target:
            out[(tp, broker)] = LogDirMoveState("completed", target, current)
        else:
            out[(tp, broker)] = LogDirMoveState("cancelled", target, current)
    return out


def clear_all_throttles(
    session: KafkaSession,
    snap: KafkaSnapshot,
    targets: Mapping[TopicPartition, Iterable[int]],
    out: Out,
    glued: str = "",
) -> None:
    """`clearAllThrottles`: every broker of the cluster and of the targets, every topic of the targets (Java
    HashSet order, as Kafka prints them)."""
    brokers = hashmap_order(list(snap.cluster.online_ids) + [b for r in targets.values() for b in r])
    topics = hashmap_order([tp.topic for tp in targets])
    out(f"{glued}Clearing broker-level throttles on broker{_plural(len(brokers))} {','.join(map(str, brokers))}")
    admin.clear_throttles(session, brokers, [])
    out(f"Clearing topic-level throttles on topic{_plural(len(topics))} {','.join(topics)}")
    admin.clear_throttles(session, [], topics)


# A reassignment that just completed can show, for a moment, as no reassignment with the old replica set: Kafka's tool
# (and this one) read the reassignments from the controller (ListPartitionReassignments) and the replica sets from a
# broker's metadata, which follows the controller's a little later. Kafka's own `--verify` printed "There is no
# active reassignment of partition ..., but replica set is 2,1,4 rather than 2,1." that way in this project's CI, and
# cleared the throttles. `verify` reads again, a few times, while a partition shows that, before printing it.
SETTLE_READS = 4
SETTLE_SECONDS = 0.5


def _settled(
    session: KafkaSession, targets: Mapping[TopicPartition, tuple[int, ...]]
) -> tuple[KafkaSnapshot, dict[TopicPartition, PartitionReassignmentState]]:
    """The cluster and the targets' states, read again (at most `SETTLE_READS` times, `SETTLE_SECONDS` apart) while
    a partition shows no reassignment and a replica set other than its target: a broker's metadata behind the
    controller's. A replica set that stays so (changed by someone else) is shown as Kafka shows it, after them."""
    snap = read_session(session)
    states = rr.reassignment_states(snap.cluster, targets)
    for _ in range(SETTLE_READS):
        if not any(s.done and s.current != s.target for s in states.values()):
            break
        time.sleep(SETTLE_SECONDS)
        snap = read_session(session)
        states = rr.reassignment_states(snap.cluster, targets)
    return snap, states


def verify(
    session: KafkaSession,
    targets: Mapping[TopicPartition, tuple[int, ...]],
    log_dirs: Mapping[tuple[TopicPartition, int], str],
    preserve_throttles: bool,
    out: Out,
) -> bool:
    """`verifyAssignment`: the partition states, the replica moves (an empty line when there are none, as Kafka
    prints them), and, once nothing is moving anywhere, the throttles cleared. True when everything is done."""
    snap, states_now = _settled(session, targets)
    out(PartitionStates(states_now))
    parts_ongoing = bool(snap.reassigning)
    # `verifyReplicaMoves` prints its block with println even when the plan moves no replica between log dirs:
    # an empty line then (ReassignPartitionsCommand.java, and .scala from 2.6)
    states = move_states(snap, log_dirs)
    out(MoveStates(states))
    moves_ongoing = any(s.kind == "active" for s in states.values())
    if not parts_ongoing and not moves_ongoing and not preserve_throttles:
        clear_all_throttles(session, snap, targets, out)
    return not parts_ongoing and not moves_ongoing


def cancel(
    session: KafkaSession,
    targets: Mapping[TopicPartition, tuple[int, ...]],
    log_dirs: Mapping[tuple[TopicPartition, int], str],
    preserve_throttles: bool,
    execute: bool,
    out: Out,
) -> None:
    """`cancelAssignment`: cancel the listed partitions' reassignments (Kafka's own test: no adding replicas, or
    some removing), move log dirs back, clear the throttles."""
    snap = read_session(session)
    active = [
        tp for tp in targets if tp in snap.reassigning and (not snap.reassigning[tp][1] or snap.reassigning[tp][2])
    ]
    if not execute:
        out(
            f"Dry run: would cancel the reassignment of {_tps(active) or 'no partition'}. Nothing was changed; "
            "add --execute to cancel."
        )
        return
    if active:
        session.require(45, "AlterPartitionReassignments", "cancel a reassignment")
        errors = {tp: r for tp, r in admin.alter_reassignments(session, {tp: None for tp in active}).items() if r[0]}
        if errors:
            lines = [
                f"{tp}: {msg or error_name(code)}"
                for tp, (code, msg) in sorted(errors.items(), key=lambda e: tp_sort_key(e[0]))
            ]
            raise PlannerError(
                f"Error cancelling partition reassignment{_plural(len(errors))} for:\n" + "\n".join(lines)
            )
        out(f"Successfully cancelled partition reassignment{_plural(len(active))} for: {_tps(active)}")
    else:
        out("None of the specified partition reassignments are active.")
    moving = {k: s.current_dir for k, s in move_states(snap, log_dirs).items() if s.kind == "active" and s.current_dir}
    glued = ""
    if not moving:
        # Kafka prints this one with System.out.print: the next line follows on the same line
        glued = "None of the specified partition moves are active."
    else:
        execute_moves(session, moving, out)
    if not preserve_throttles:
        clear_all_throttles(session, read_session(session), targets, out, glued)
    elif glued:
        out(glued)


def elect_preferred(session: KafkaSession, partitions: list[TopicPartition], out: Out) -> None:
    """`LeaderElectionCommand` with --election-type PREFERRED: succeeded, no-op and failed partitions, each set in
    Java HashSet order."""
    session.require(43, "ElectLeaders", "elect leaders")
    results = admin.elect_leaders(session, partitions, 0)
    succeeded = [tp for tp, (code, _) in results.items() if code == 0]
    noop = [tp for tp, (code, _) in results.items() if code == 84]
    failed = {tp: r for tp, r in results.items() if r[0] not in (0, 84)}

    def order(tps):
        return hashmap_order(tps, hash_of=tp_hash)

    if succeeded:
        out(
            "Successfully completed leader election (PREFERRED) for partitions "
            + ", ".join(str(tp) for tp in order(succeeded))
        )
    if noop:
        out("Valid replica already elected for partitions " + ", ".join(str(tp) for tp in order(noop)))
    if failed:
        for tp in order(list(failed)):
            code, message = failed[tp]
            out(
                f"Error completing leader election (PREFERRED) for partition: {tp}: "
                f"{admin.java_exception(code, message)}"
            )
        raise PlannerError(f"{len(failed)} replica(s) could not be elected")


@dataclass(frozen=True)
class Progress:
    """How far a batch has copied: partitions still moving, bytes copied of the bytes to copy (DescribeLogDirs), the
    bytes gained since the first look and the seconds since."""

    moving: int
    copied: int
    total: int
    gained: int
    elapsed: float


def bytes_progress(snap: KafkaSnapshot, moving: Iterable[TopicPartition]) -> tuple[int, int]:
    """(bytes copied, bytes to copy) over the adding replicas of the moving partitions (DescribeLogDirs)."""
    copied = total = 0
    for tp in moving:
        p = snap.cluster.topic(tp.topic).partition(tp.partition)
        size = p.size or 0
        for b in p.adding:
            have = [r.size for r in snap.replicas.get(tp, ()) if r.broker == b and not r.future]
            copied += min(max(have, default=0), size)
            total += size
    return copied, total


def wait_for(
    session: KafkaSession, proposed: Iterable[TopicPartition], poll: float, report: Callable[[Progress], None]
) -> float:
    """Read the cluster every `poll` seconds until no partition of `proposed` is reassigning, telling `report` how
    far the copies are at each look; the seconds it took."""
    start, first_copied = time.monotonic(), None
    while True:
        snap = read_session(session)
        moving = [tp for tp in proposed if tp in snap.reassigning]
        if not moving:
            return time.monotonic() - start
        copied, total = bytes_progress(snap, moving)
        if first_copied is None:
            first_copied = copied
        report(Progress(len(moving), copied, total, copied - first_copied, time.monotonic() - start))
        time.sleep(poll)
