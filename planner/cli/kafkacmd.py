"""`kafka-planner kafka …`: live clusters through the Admin API: export, submit, status, cancel, elect-leaders.

The steps and texts are Kafka's tools' (`planner.adapters.kafka.steps`); this module parses arguments, opens the
session, renders the steps' blocks (`planner.formats.kafka_json`), writes files and prints. kafka-python loads only
inside the commands.
"""

from __future__ import annotations

import os
import sys
from typing import List, Optional

import typer

from planner.adapters.files import read_option_file
from planner.cli.app import app, interrupted
from planner.cli.common import EXIT_CODE, STILL_MOVING, TOPOLOGY_OUTPUT
from planner.model import RATE_HELP, PlannerError, parse_rate, tp_sort_key

kafka_app = typer.Typer(
    no_args_is_help=True,
    help="Live clusters through the Admin API (KRaft, or ZooKeeper-mode 2.4+): export, submit a reassignment, "
    "status, cancel, elect leaders.",
)
app.add_typer(kafka_app, name="kafka")

URL = typer.Argument(..., metavar="KAFKA_URL", help="kafka://host:port[,host:port...] (bootstrap servers)")
COMMAND_CONFIG = typer.Option(
    None,
    "--command-config",
    metavar="FILE",
    help="Client properties, as Kafka's tools take them (security.protocol, sasl.mechanism, "
    "sasl.jaas.config, ssl.truststore.location as PEM...); else "
    "$KAFKA_PLANNER_KAFKA_COMMAND_CONFIG.",
)
TIMEOUT = typer.Option(
    None,
    "--timeout",
    metavar="SECONDS",
    min=0.1,
    help="Bootstrap and request time limit (default $KAFKA_PLANNER_KAFKA_TIMEOUT, else 10).",
)
REASSIGNMENTS = typer.Option(
    ...,
    "--reassignment-json-file",
    metavar="FILE",
    help="Kafka's reassignment JSON (as kafka-reassign-partitions.sh takes); repeat it for a plan's batch files, as "
    "submit takes them.",
)
PRESERVE = typer.Option(False, "--preserve-throttles", help="As Kafka's: do not clear the throttles.")
QUIET = typer.Option(False, "--quiet", "-q", help="No progress or notes on stderr.")


def _session(url: str, command_config: Optional[str], timeout: Optional[float]):
    from planner.adapters.kafka.connection import KafkaSession, load_options

    return KafkaSession(url, load_options(command_config, timeout))


def _out(step) -> None:
    """Print one step of `planner.adapters.kafka.steps`: a line of text, or a block rendered as Kafka's tool does."""
    from planner.adapters.kafka import steps
    from planner.formats import kafka_json as kj

    if isinstance(step, steps.RollbackBlock):
        step = kj.current_assignment_text(step.proposed, step.current)
    elif isinstance(step, steps.PartitionStates):
        step = kj.partition_reassignment_states_text(step.states)
    elif isinstance(step, steps.MoveStates):
        step = kj.replica_move_states_text(step.states)
    sys.stdout.write(step + "\n")
    sys.stdout.flush()


def _reassignment(path: str):
    from planner.formats import kafka_json as kj

    text = read_option_file(path, "--reassignment-json-file")
    return kj.parse_reassignment_json(text, path), kj.parse_log_dir_moves(text, path)


def _reassignments(paths: List[str]):
    """Every file's partitions and log-dir moves together (a plan's batch files, as `submit` reads them)."""
    targets: dict = {}
    log_dirs: dict = {}
    for path in paths:
        proposed, moves = _reassignment(path)
        targets.update(proposed)
        log_dirs.update(moves)
    return targets, log_dirs


@kafka_app.command("export")
def export(
    url: str = URL,
    output: Optional[str] = TOPOLOGY_OUTPUT,
    command_config: Optional[str] = COMMAND_CONFIG,
    timeout: Optional[float] = TIMEOUT,
    quiet: bool = QUIET,
) -> None:
    """Write the live cluster as a topology YAML file, with every partition's size from DescribeLogDirs."""
    from planner.adapters.kafka.snapshot import read_session
    from planner.adapters.topology_yaml import dump_topology

    with _session(url, command_config, timeout) as session:
        snap = read_session(session)
    text = dump_topology(snap.cluster)
    if output:
        _write(output, text, "--output", "")
    else:
        sys.stdout.write(text)
    if not quiet:
        c = snap.cluster
        parts = sum(t.partition_count for t in c.topics)
        if output:
            print(
                f"wrote {output}: {len(c.brokers)} brokers, {len(c.topics)} topics, {parts} partitions", file=sys.stderr
            )
        for note in snap.notes:
            print(f"note: {note}", file=sys.stderr)


def _write(path: str, text: str, option: str, tail: str) -> None:
    from planner.adapters.files import write_text_atomic

    try:
        write_text_atomic(path, text)
    except OSError as exc:
        raise PlannerError(f"{option} {path}: cannot write: {exc.strerror or exc}.{tail}") from None


def _write_rollback(path: str):
    """The rollback JSON, written (with the user's umask) before anything changes; never over an existing file."""
    from planner.formats import kafka_json as kj

    def write(current) -> None:
        text = kj.render_reassignment_json(current)
        if os.path.exists(path):
            raise PlannerError(
                f"--rollback-file {path} exists: it may hold the rollback of an earlier submission; "
                "move it away or give another --rollback-file. Nothing was changed."
            )
        _write(path, text + "\n", "--rollback-file", " Nothing was changed.")
        print(f"wrote the rollback JSON to {path}", file=sys.stderr)

    return write


@kafka_app.command("submit")
def submit(
    url: str = URL,
    reassignment_json_file: List[str] = typer.Option(
        ...,
        "--reassignment-json-file",
        metavar="FILE",
        help="Kafka's reassignment JSON; repeat it to submit a plan's batch files one after another (implies --wait).",
    ),
    execute: bool = typer.Option(False, "--execute", help="Change the cluster. Without it: a dry run."),
    additional: bool = typer.Option(
        False, "--additional", help="As Kafka's --additional: submit while a reassignment is in progress."
    ),
    throttle_text: Optional[str] = typer.Option(
        None,
        "--throttle",
        metavar="RATE",
        help=f"Inter-broker replication throttle, as Kafka's --throttle, in {RATE_HELP}.",
    ),
    log_dir_throttle_text: Optional[str] = typer.Option(
        None,
        "--replica-alter-log-dirs-throttle",
        metavar="RATE",
        help="Throttle of moves between log dirs (JBOD), in the units of --throttle.",
    ),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Check the plan against the cluster and print the kafka-reassign-partitions.sh and "
        "kafka-leader-election.sh commands that carry it out, in order (as a plan folder's RUNBOOK.md); "
        "changes nothing.",
    ),
    rollback_file: Optional[str] = typer.Option(
        None,
        "--rollback-file",
        metavar="FILE",
        help="Where the rollback JSON goes before anything changes (default: the first file's name + .rollback.json).",
    ),
    batch_size: Optional[int] = typer.Option(
        None, "--batch-size", min=1, metavar="N", help="Submit N partitions at a time, waiting for each batch."
    ),
    wait: bool = typer.Option(
        False,
        "--wait",
        help="Wait until the reassignment completes, showing progress, then "
        "verify (clearing the throttles as --verify does).",
    ),
    poll: float = typer.Option(2.0, "--poll", metavar="SECONDS", min=0.05, help="How often --wait looks."),
    command_config: Optional[str] = COMMAND_CONFIG,
    timeout: Optional[float] = TIMEOUT,
    quiet: bool = QUIET,
) -> None:
    """Start a reassignment as kafka-reassign-partitions.sh --execute does (Admin API), after its checks.

    Prints the rollback JSON first and writes it to --rollback-file before changing anything. A dry run unless
    --execute.
    """
    from planner.adapters.kafka import steps as ra
    from planner.adapters.kafka.snapshot import read_session

    throttle = parse_rate(throttle_text, "--throttle") if throttle_text is not None else -1
    log_dir_throttle = (
        parse_rate(log_dir_throttle_text, "--replica-alter-log-dirs-throttle")
        if log_dir_throttle_text is not None
        else -1
    )
    if dry_run and (execute or batch_size is not None):
        raise PlannerError(
            "--dry-run prints the commands for the files as given: without --execute and --batch-size (cut a plan "
            "into batch files with the planning commands' --batch-size/--batch-bytes and --output-dir)"
        )
    batches = ra.split_batches([_reassignment(path) for path in reassignment_json_file], batch_size)
    proposed = {tp: r for b, _ in batches for tp, r in b.items()}
    log_dirs = {k: v for _, m in batches for k, v in m.items()}
    wait = wait or len(batches) > 1
    rollback = rollback_file or reassignment_json_file[0] + ".rollback.json"
    with _session(url, command_config, timeout) as session:
        snap = read_session(session)
        whole = ra.Submission(proposed, log_dirs, throttle, log_dir_throttle, additional)
        ra.check_submission(snap, whole)
        _warn_disk_space(snap, proposed, quiet)
        tiered = ra.tiered_topics(snap.cluster, proposed)
        if tiered and not quiet:
            print(
                f"note: remote.storage.enable=true on {', '.join(tiered)}: only local log segments move in a "
                "reassignment (the bytes DescribeLogDirs reports); tiered segments stay in remote storage",
                file=sys.stderr,
            )
        if not execute:
            ra.submit(session, snap, whole, False, _out, _write_rollback(rollback))
            if len(batches) > 1:
                _out(f"Dry run: in {len(batches)} batches of at most {max(len(b) for b, _ in batches)} partitions.")
            if dry_run:
                _out("")
                sys.stdout.write(_runbook_text(snap.cluster, session.kurl.bootstrap, reassignment_json_file, throttle))
            return
        _run_batches(session, snap, batches, whole, rollback, wait, poll, quiet, url, reassignment_json_file)


def _runbook_text(cluster, bootstrap: str, files: List[str], throttle: int) -> str:
    """`kafka submit --dry-run`'s steps: each file a batch, as a plan folder's RUNBOOK.md orders them; the rollback
    and election files of the plan folder the first file sits in (current.json, leader-election.json), when there."""
    from planner.formats.runbook import Batch, Runbook, render_text
    from planner.rebalance.batches import copied_bytes
    from planner.rebalance.throttle import throttle_for

    book_batches = []
    for path in files:
        proposed, _ = _reassignment(path)
        sizes = [copied_bytes(cluster, tp, new) for tp, new in proposed.items()]
        total = None if any(x is None for x in sizes) else sum(x or 0 for x in sizes)
        seconds = throttle_for(cluster, proposed, throttle).seconds if throttle > 0 else None
        book_batches.append(Batch(path, len(proposed), total, seconds))
    folder = os.path.dirname(files[0])
    rollback, election = os.path.join(folder, "current.json"), os.path.join(folder, "leader-election.json")
    book = Runbook(
        bootstrap=bootstrap,
        batches=tuple(book_batches),
        rollback=rollback if os.path.isfile(rollback) else None,
        election=election if os.path.isfile(election) else None,
        throttle=throttle if throttle >= 0 else None,
        canary=False,
    )
    return render_text(book)


def _warn_disk_space(snap, proposed, quiet: bool) -> None:
    """A plan that copies more bytes to a broker than its log dirs report usable (DescribeLogDirs usableBytes,
    KIP-827), counting only the dirs that take new replicas (not cordoned, KIP-1066), as the plans do: say so, per
    broker. Log dirs that report nothing are left out; a broker reporting none is not judged."""
    from planner.model import human_bytes
    from planner.rebalance.reassignment import short_of_space

    for broker, incoming, free in short_of_space(snap.cluster, proposed, snap.cluster.usable_bytes()):
        if not quiet:
            print(
                f"warning: broker {broker} would receive {human_bytes(incoming)} of new replicas but its log dirs "
                f"report {human_bytes(free)} usable (DescribeLogDirs): the copies would fill its disks",
                file=sys.stderr,
            )


def _run_batches(
    session, snap, batches, whole, rollback: str, wait: bool, poll: float, quiet: bool, url: str, files: List[str]
) -> None:
    """Submit the batches one after another, waiting for each when `wait`. When it stops after something changed (a
    fault, the controller's refusal, Ctrl-C), the message says which batches completed, which one runs, which were
    not started, and names the commands that finish or revert it (before, a refused batch 2 said "Nothing was
    changed." with batch 1 moved and its throttles still set, and a lost connection said nothing of the plan)."""
    from planner.adapters.kafka import steps as ra
    from planner.adapters.kafka.snapshot import read_session

    current = {tp: snap.cluster.topic(tp.topic).partition(tp.partition).replicas for tp in whole.proposed}
    ra.require_writes(session, whole)
    _write_rollback(rollback)(current)
    total = len(batches)
    at = _Progress(total)
    try:
        for index, (proposed, log_dirs) in enumerate(batches, 1):
            if total > 1:
                _out(f"Batch {index}/{total}: {len(proposed)} partition{'s' if len(proposed) != 1 else ''}")
                snap = read_session(session)
            sub = ra.Submission(
                proposed, log_dirs, whole.throttle, whole.log_dir_throttle, whole.additional or index > 1
            )
            if index > 1:  # the cluster as the earlier batches left it; a refusal here sends nothing
                try:
                    ra.check_submission(snap, sub)
                except PlannerError as exc:
                    text = str(exc).removesuffix(" Nothing was changed.")
                    raise _Stopped(f"{text} Batch {index}/{total} was not submitted") from None
            at.current = "submitting"
            try:
                ra.submit(session, snap, sub, True, _out, lambda _current: None)
            except ra.SubmissionRefused as exc:
                if exc.started:
                    at.current = "running"
                    raise _Stopped(f"{exc} The reassignment of {','.join(map(str, exc.started))} started") from None
                at.current = "refused"
                if at.completed == 0:
                    os.unlink(rollback)  # written by this run a moment ago; nothing to roll back
                    raise PlannerError(
                        f"{exc} Nothing was changed. The rollback JSON {rollback} was removed."
                    ) from None
                raise _Stopped(f"{exc} Nothing of batch {index}/{total} started") from None
            at.current = "running"
            if wait:
                _wait(session, proposed, index, total, poll, quiet)
                at.completed, at.current = index, ""
        if wait:
            ra.verify(session, whole.proposed, whole.log_dirs, False, _out)
    except KeyboardInterrupt:
        print(f"interrupted: {at.where(url, files, rollback)}", file=sys.stderr)
        raise
    except _Stopped as exc:
        raise PlannerError(f"{exc}: {at.where(url, files, rollback)}") from None
    except PlannerError as exc:
        if at.completed == 0 and at.current in ("", "refused"):
            raise
        raise PlannerError(f"{exc}; {at.where(url, files, rollback)}") from None


class _Stopped(PlannerError):
    """A batch refused after something changed: the message goes on with where the submission stands."""


class _Progress:
    """How far a batched submission got: batches completed (waited on until none of their partitions moved), and
    the next batch: "submitting" (its throttles or reassignments may have been sent), "running", "refused" (nothing
    of it started) or "" (not reached)."""

    def __init__(self, total: int):
        self.total = total
        self.completed = 0
        self.current = ""

    def where(self, url: str, files: List[str], rollback: str) -> str:
        total, done = self.total, self.completed
        said = []
        if done:
            said.append(f"batch 1/{total} completed" if done == 1 else f"batches 1-{done}/{total} completed")
        first = done + 1
        if self.current == "running":
            said.append(f"batch {first}/{total} was submitted and is running on the cluster")
            first += 1
        elif self.current == "submitting":
            said.append(f"batch {first}/{total} was being submitted: it may or may not have started")
            first += 1
        if first == total:
            said.append(f"batch {total}/{total} was not started")
        elif first < total:
            said.append(f"batches {first}-{total}/{total} were not started")
        if total == 1:
            said = []  # not in batches: the error says what started
        argv = " ".join(f"--reassignment-json-file {f}" for f in files)
        return (
            "".join(s + "; " for s in said)
            + f"'kafka-planner kafka status {url} {argv}' shows where it stands (and clears the throttles once "
            f"nothing moves), 'kafka-planner kafka cancel {url} {argv} --execute' reverts what is still moving; the "
            f"rollback JSON of the whole plan is in {rollback}"
        )


def _wait(session, proposed, index: int, total: int, poll: float, quiet: bool) -> None:
    """Poll until no partition of the batch is reassigning; a progress line of bytes copied, with an ETA."""
    from planner.adapters.kafka.steps import wait_for

    def report(p) -> None:
        if interrupted():  # Ctrl-C that the client library took for a failed task: stop here all the same
            raise KeyboardInterrupt
        if not quiet:
            print(progress_line(index, total, p), file=sys.stderr, flush=True)

    elapsed = wait_for(session, proposed, poll, report)
    if not quiet:
        print(f"batch {index}/{total}: done in {elapsed:.0f} s", file=sys.stderr)


def progress_line(index: int, batches: int, p) -> str:
    """One look at a batch (`steps.Progress`): a bar, the partitions moving, bytes copied, and the rate and ETA once
    bytes were gained."""
    from planner.formats.tables import bar
    from planner.model import human_bytes

    pct = 100.0 * p.copied / p.total if p.total else 100.0
    line = (
        f"batch {index}/{batches}: [{bar(p.copied if p.total else 1, p.total or 1, 20):20}] {p.moving} "
        f"partition{'s' if p.moving != 1 else ''} moving, {human_bytes(p.copied)} of {human_bytes(p.total)} copied "
        f"({pct:.0f}%)"
    )
    if p.gained > 0 and p.elapsed > 0:
        rate = p.gained / p.elapsed
        line += f", {human_bytes(int(rate))}/s, ETA {max(p.total - p.copied, 0) / rate:.0f} s"
    return line


@kafka_app.command("status")
def status(
    url: str = URL,
    reassignment_json_file: List[str] = REASSIGNMENTS,
    preserve_throttles: bool = PRESERVE,
    command_config: Optional[str] = COMMAND_CONFIG,
    timeout: Optional[float] = TIMEOUT,
    exit_code: bool = EXIT_CODE,
) -> None:
    """kafka-reassign-partitions.sh --verify: each partition's state; once nothing moves, the throttles cleared.
    With --exit-code: exit 3 while a reassignment or log-dir move is still in progress."""
    from planner.adapters.kafka import steps as ra

    targets, log_dirs = _reassignments(reassignment_json_file)
    with _session(url, command_config, timeout) as session:
        done = ra.verify(session, targets, log_dirs, preserve_throttles, _out)
    if exit_code and not done:
        raise typer.Exit(STILL_MOVING)


@kafka_app.command("cancel")
def cancel(
    url: str = URL,
    reassignment_json_file: List[str] = REASSIGNMENTS,
    execute: bool = typer.Option(False, "--execute", help="Change the cluster. Without it: a dry run."),
    preserve_throttles: bool = PRESERVE,
    command_config: Optional[str] = COMMAND_CONFIG,
    timeout: Optional[float] = TIMEOUT,
) -> None:
    """kafka-reassign-partitions.sh --cancel: revert the listed reassignments to their original replicas."""
    from planner.adapters.kafka import steps as ra

    targets, log_dirs = _reassignments(reassignment_json_file)
    with _session(url, command_config, timeout) as session:
        ra.cancel(session, targets, log_dirs, preserve_throttles, execute, _out)


def _leader(partition) -> int | None:
    return partition.observed.leader if partition.observed is not None else None


def _preferred_electable(cluster, partition) -> bool:
    """A preferred election of `partition` can succeed: its first replica alive (registered, not fenced) and in the
    ISR (`ReplicationControlManager.electLeader`, PartitionChangeBuilder's preferred election)."""
    from planner.leadership import elect_preferred
    from planner.model import NO_LEADER

    isr = partition.observed.isr if partition.observed is not None else partition.replicas
    return elect_preferred(partition.replicas, isr, cluster.online_ids) != NO_LEADER


@kafka_app.command("elect-leaders")
def elect_leaders(
    url: str = URL,
    path_to_json_file: str = typer.Option(
        ..., "--path-to-json-file", metavar="FILE", help='{"partitions": [{"topic": "foo", "partition": 1}, ...]}'
    ),
    execute: bool = typer.Option(False, "--execute", help="Change the cluster. Without it: a dry run."),
    command_config: Optional[str] = COMMAND_CONFIG,
    timeout: Optional[float] = TIMEOUT,
) -> None:
    """kafka-leader-election.sh --election-type PREFERRED over the Admin API. A dry run unless --execute."""
    from planner.adapters.kafka import steps as ra
    from planner.adapters.kafka.snapshot import read_session
    from planner.formats import kafka_json as kj

    wanted = kj.parse_election_json(read_option_file(path_to_json_file, "--path-to-json-file"), path_to_json_file)
    with _session(url, command_config, timeout) as session:
        if not execute:
            cluster = read_session(session).cluster
            parts = {p.tp: p for p in cluster.partitions()}
            moving = sorted(
                (tp for tp in wanted if tp in parts and _leader(parts[tp]) != parts[tp].replicas[0]), key=tp_sort_key
            )
            # what the controller will refuse: a preferred replica not alive and in the ISR, a missing partition
            blocked = [tp for tp in moving if not _preferred_electable(cluster, parts[tp])]
            missing = sorted((tp for tp in wanted if tp not in parts), key=tp_sort_key)
            _out(
                f"Dry run: {len(wanted)} partition(s), {len(moving)} not led by their preferred replica"
                + (f" ({','.join(map(str, moving))})" if moving else "")
                + (
                    f"; {','.join(map(str, blocked))} would fail: the preferred replica is not alive and in the ISR "
                    "(PREFERRED_LEADER_NOT_AVAILABLE)"
                    if blocked
                    else ""
                )
                + (
                    f"; {','.join(map(str, missing))} would fail: no such partition (UNKNOWN_TOPIC_OR_PARTITION)"
                    if missing
                    else ""
                )
                + ". Nothing was changed; add --execute to elect."
            )
            return
        ra.elect_preferred(session, wanted, _out)
