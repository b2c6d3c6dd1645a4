"""`kafka-planner reassign ...` (Kafka-format reassignment plans) and `kafka-planner failures`."""

from __future__ import annotations

import enum
import gc
import re
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator, List, Optional

import typer

from planner.adapters.files import read_option_file
from planner.adapters.source import load_cluster
from planner.cli.app import app
from planner.cli.common import EXIT_CODE, OFFLINE, STILL_MOVING, TOPOLOGY, note
from planner.model import RATE_HELP, Cluster, PlannerError, parse_id_list, parse_rate, parse_size
from planner.rebalance.goals.budget import Deadline

if TYPE_CHECKING:
    from planner.rebalance.moves import Plan

reassign = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Plan partition reassignments in kafka-reassign-partitions.sh / kafka-leader-election.sh JSON.",
)
app.add_typer(reassign, name="reassign")

OUTPUT_DIR = typer.Option(
    None,
    "--output-dir",
    metavar="DIR",
    help="Write current.json (rollback), proposed.json (or proposed-NNN.json batches), "
    "leader-election.json and plan.txt here.",
)
SIZES = typer.Option(
    None, "--sizes", metavar="FILE", help="Partition sizes: the output of kafka-log-dirs.sh --describe."
)
THROTTLE = typer.Option(
    None,
    "--throttle",
    metavar="BYTES_PER_S",
    help=f"Show the throttle configs Kafka sets for this rate ({RATE_HELP}) and the time the moves take; "
    "the RUNBOOK.md commands pass it to --throttle.",
)
TIME_LIMIT = typer.Option(
    300.0,
    "--time-limit",
    metavar="SECONDS",
    help="Plan for at most this long (wall clock); when the time is up, the best plan found so far, with a note "
    "naming the stage that stopped.",
)
VERBOSE = typer.Option(
    False,
    "--verbose",
    help="Every progress line on stderr whatever the cluster's size, and the search's strategy that made the plan.",
)
NO_RACK_REPAIR = typer.Option(
    False,
    "--no-rack-repair",
    help="Leave rack-unsafe partitions as they are unless they move anyway (default: "
    "repair each with the fewest moves, counted in the lower bound).",
)
BATCH = typer.Option(
    None, "--batch-size", metavar="N", max=2**31 - 1, help="At most N partitions per proposed-NNN.json file."
)
BATCH_BYTES = typer.Option(
    None,
    "--batch-bytes",
    metavar="SIZE",
    help="At most SIZE bytes to copy per proposed-NNN.json file (50GB, 48GiB, 1.5TB; a larger partition goes "
    "alone; with --batch-size, both limits hold).",
)
NO_CANARY = typer.Option(
    False,
    "--no-canary",
    help="Cut the batches in order without a canary (default: when batched, the first batch is the one "
    "partition copying the fewest bytes).",
)
BOOTSTRAP = typer.Option(
    None,
    "--bootstrap-server",
    metavar="HOST:PORT",
    help="The cluster the RUNBOOK.md commands name (default: up to three brokers' host:port from the topology, "
    "else a $BOOTSTRAP variable its first step sets).",
)
EXCLUDE_TOPIC = typer.Option(
    None,
    "--exclude-topic",
    metavar="REGEX",
    help="Never move topics whose whole name matches (still counted as load); repeatable.",
)
EXCLUDE_INTERNAL = typer.Option(
    False, "--exclude-internal", help="Never move __consumer_offsets and __transaction_state (still counted as load)."
)
BYTE_TOLERANCE = typer.Option(
    10.0,
    "--byte-tolerance",
    metavar="PCT",
    help="With sizes: the largest broker may hold at most this many percent above the mean bytes (default 10).",
)
MAX_MOVES = typer.Option(
    None,
    "--max-moves",
    metavar="N",
    max=2**31 - 1,
    help="Cap on optional replica moves (not the moves off brokers outside the list, nor rack "
    "repairs); the summary names the goals the cap left unmet.",
)
NO_LEADER_BALANCE = typer.Option(
    False, "--no-leader-balance", help="Keep preferred leaders as placement leaves them (no reordering goal)."
)
# replace-broker and set-replication-factor take the balancing options as every plan command does (one set of
# options for a script's every plan), checked alike; they change nothing there, and a note on stderr says so
BYTE_TOLERANCE_UNUSED = typer.Option(
    None,
    "--byte-tolerance",
    metavar="PCT",
    help="Checked, changes nothing here (no byte balancing): taken as by every plan command.",
)
NO_LEADER_BALANCE_UNUSED = typer.Option(
    False,
    "--no-leader-balance",
    help="Changes nothing here (no preferred-leader balancing): taken as by every plan command.",
)


def _unused_options(command: str, why: str, byte_tolerance: Optional[float], no_leader_balance: bool) -> None:
    given = [
        name
        for name, on in (("--byte-tolerance", byte_tolerance is not None), ("--no-leader-balance", no_leader_balance))
        if on
    ]
    if given:
        note(f"{' and '.join(given)} change{'s' if len(given) == 1 else ''} nothing in a {command} plan: {why}")


def _goal_options(
    max_moves: Optional[int],
    exclude_topic: Optional[List[str]],
    exclude_internal: bool,
    byte_tolerance: float,
    no_leader_balance: bool,
    time_limit: float = 300.0,
) -> dict:
    """The goal options of the plans `balance` makes (rebalance, decommission), checked, as its keyword arguments."""

    if max_moves is not None and max_moves < 0:
        raise PlannerError("--max-moves must be at least 0")
    if not 0 <= byte_tolerance <= 1000:
        raise PlannerError(f"--byte-tolerance {byte_tolerance:g}: give a percentage between 0 and 1000")
    for pattern in exclude_topic or ():
        try:
            re.compile(pattern)
        except re.error as exc:
            raise PlannerError(f"--exclude-topic {pattern!r}: not a regular expression ({exc})") from None
    if not time_limit > 0:
        raise PlannerError(f"--time-limit {time_limit:g}: give a number of seconds above 0")
    return {
        "deadline": Deadline(time_limit, time.monotonic),
        "max_moves": max_moves,
        "exclude_topics": tuple(exclude_topic or ()),
        "exclude_internal": exclude_internal,
        "byte_tolerance": byte_tolerance / 100,
        "leaders": not no_leader_balance,
    }


class PlanFormat(str, enum.Enum):
    table = "table"
    kafka = "kafka"
    json = "json"


FORMAT = typer.Option(
    PlanFormat.table,
    "--format",
    help="table: the summary; kafka: current and proposed JSON as --generate prints them; json: both.",
)


def _progress_for(cluster: Cluster, verbose: bool = False):
    # every step's line on a big cluster; on a terminal (stderr), from a thousand partitions, where stages take seconds;
    # with --verbose, always
    partitions = sum(t.partition_count for t in cluster.topics)
    big = verbose or partitions > 20_000 or (partitions > 1_000 and sys.stderr.isatty())

    def say(msg: str) -> None:
        if big:
            print(f"... {msg}", file=sys.stderr, flush=True)

    return say


def _say_strategy(plan: Plan, say: Callable[[str], None]) -> None:
    """--verbose: the progress line naming the search's strategy that made the plan (`goals.search`)."""
    if plan.strategy is not None:
        say(f"strategy: {plan.strategy}")


@contextmanager
def _loaded(topology: str, offline_brokers: Optional[str], sizes: Optional[str]) -> Iterator[Cluster]:
    """The cluster a plan command plans on, with Python's cyclic garbage collector running less often until the
    command ends (also on an error).

    The loaded cluster and the planning state are millions of long-lived objects, and each pass of the collector
    over them finds little: 6.8 s of about 84 s CPU of the 1M rebalance and decommission. The loaded cluster is
    frozen out of its passes (`gc.freeze`) and collections come every 200,000 allocations instead of 700, for the
    loading and rendering around the goals (`goals.balance` pauses the collector while they run: they make no
    reference cycles). Not off for the whole command: a structure dropped inside a reference cycle is freed at the
    next collection (off, before the topic goal lost its one cycle, the 100k decommission peaked at 386 MiB)."""
    threshold = gc.get_threshold()
    gc.set_threshold(200_000, 20, 20)
    try:
        cluster = load_cluster(topology, offline_brokers)
        if sizes:
            from planner.formats.kafka_json import parse_log_dirs_json
            from planner.rebalance.moves import with_sizes

            cluster = with_sizes(cluster, parse_log_dirs_json(read_option_file(sizes, "--sizes"), sizes))
        gc.freeze()
        yield cluster
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def _check_output_dir(output_dir: Optional[str]) -> None:
    """An --output-dir names a folder, and this command holds it from now until it ends (a second planner writing
    the same folder refuses: `files.lock_folder`)."""
    if output_dir is not None and not output_dir.strip():
        raise PlannerError("--output-dir must name a folder (it is empty)")
    if output_dir is not None:
        from planner.adapters.files import lock_folder

        lock_folder(output_dir)


def _say_written(written: list, anything: bool) -> None:
    print(f"wrote {', '.join(str(p) for p in written)}", file=sys.stderr)
    if not anything:
        print(
            "nothing to reassign: no replica list changes, so no current.json or proposed.json "
            "(Kafka refuses an empty list: Partition reassignment list cannot be empty)",
            file=sys.stderr,
        )


def _write_plan_files(output_dir: str, files: dict) -> list:
    """Swap the plan's files into the folder as one set (files of an earlier plan that this one does not write go)."""
    from planner.adapters.files import replace_folder
    from planner.formats.plan import plan_folder_keep

    return replace_folder(output_dir, files, plan_folder_keep(output_dir, files))


@dataclass(frozen=True)
class Carry:
    """How a plan is to be carried out: the options every planning command shares."""

    throttle: Optional[str] = None
    batch_size: Optional[int] = None
    batch_bytes: Optional[str] = None
    no_canary: bool = False
    bootstrap: Optional[str] = None


def _bootstrap(cluster: Cluster, given: Optional[str]) -> str:
    if given is not None:
        if not given.strip():
            raise PlannerError("--bootstrap-server is empty: give host:port")
        return given.strip()
    known = [f"{b.host}:{b.port}" for b in cluster.brokers if b.host and b.port and b.id in cluster.online_ids]
    return ",".join(known[:3]) if known else "$BOOTSTRAP"


def _emit(plan, output_dir: Optional[str], fmt: PlanFormat, carry: Carry) -> None:
    from planner.formats import plan as render
    from planner.formats.kafka_json import generate_output_text
    from planner.rebalance.execution import batch_figures, execution, summary_figures

    _check_output_dir(output_dir)
    throttle = parse_rate(carry.throttle, "--throttle") if carry.throttle is not None else None
    if carry.batch_size is not None and carry.batch_size <= 0:
        raise PlannerError("--batch-size must be at least 1")
    batch_bytes = parse_size(carry.batch_bytes, "--batch-bytes") if carry.batch_bytes is not None else None
    bootstrap = _bootstrap(plan.before, carry.bootstrap)
    batched = carry.batch_size is not None or batch_bytes is not None
    canary = not carry.no_canary
    # the batches in order and the partitions to elect only where they are written or listed (the folder, the JSON,
    # a batched summary; about 2 s of CPU at 1M partitions), the summary only where it is (the folder, the table)
    ex = (
        execution(plan, throttle, carry.batch_size, batch_bytes, canary)
        if output_dir is not None or fmt is PlanFormat.json or batched
        else None
    )
    figures = batch_figures(ex) if ex is not None and (batched or output_dir is not None) else None
    rate, count = (
        (ex.throttle, len(ex.batches)) if ex is not None else summary_figures(plan, throttle, carry.batch_size)
    )
    canary_shown = canary and count > 1
    summary = (
        render.render_plan_text(plan, rate, count, figures, canary_shown)
        if output_dir is not None or fmt is PlanFormat.table
        else ""
    )
    if output_dir is not None:
        assert ex is not None and figures is not None
        book = render.plan_runbook(ex, figures, bootstrap, canary_shown)
        written = _write_plan_files(output_dir, render.plan_files(ex, summary, book))
    if fmt is PlanFormat.table:
        sys.stdout.write(summary)
    elif fmt is PlanFormat.kafka:
        sys.stdout.write(generate_output_text(plan.current, plan.proposed))
    else:
        assert ex is not None
        sys.stdout.write(render.render_plan_json(plan, ex.throttle, ex.elect))
    sys.stdout.flush()
    if output_dir is not None:
        _say_written(written, bool(plan.proposed))


@reassign.command("generate")
def generate_cmd(
    topology: str = TOPOLOGY,
    topics_file: str = typer.Option(
        ..., "--topics-to-move-json-file", metavar="F", help='{"topics": [{"topic": "foo"}], "version": 1}'
    ),
    broker_list: str = typer.Option(..., "--broker-list", metavar="IDS", help='Brokers to place on, e.g. "0,1,2".'),
    disable_rack_aware: bool = typer.Option(False, "--disable-rack-aware", help="Ignore racks."),
    start_index: Optional[int] = typer.Option(
        None, "--start-index", min=0, max=2**31 - 1, help="Fix AdminUtils' start index (reproducible)."
    ),
    seed: int = typer.Option(
        0,
        "--seed",
        min=-(2**63),
        max=2**63 - 1,
        help="Seed of the java.util.Random drawing start indexes (Kafka: unseeded).",
    ),
    offline_brokers: Optional[str] = OFFLINE,
) -> None:
    """Kafka's --generate: AdminUtils placement of every listed topic on the broker list (moves nearly everything)."""
    from planner.formats.kafka_json import generate_output_text, parse_generate_args
    from planner.rebalance.generate import generate

    cluster = load_cluster(topology, offline_brokers)
    brokers, topics = parse_generate_args(
        read_option_file(topics_file, "--topics-to-move-json-file"), broker_list, topics_file
    )
    current, proposed = generate(
        cluster, brokers, topics, rack_aware=not disable_rack_aware, start_index=start_index, seed=seed
    )
    sys.stdout.write(generate_output_text(current, proposed))


@reassign.command("rebalance")
def rebalance_cmd(
    topology: str = TOPOLOGY,
    broker_list: Optional[str] = typer.Option(
        None, "--broker-list", metavar="IDS", help="Brokers to balance over (default: the online brokers)."
    ),
    topic: Optional[List[str]] = typer.Option(None, "--topic", help="Only balance and move this topic; repeatable."),
    max_moves: Optional[int] = MAX_MOVES,
    exclude_topic: Optional[List[str]] = EXCLUDE_TOPIC,
    exclude_internal: bool = EXCLUDE_INTERNAL,
    byte_tolerance: float = BYTE_TOLERANCE,
    no_leader_balance: bool = NO_LEADER_BALANCE,
    no_rack_repair: bool = NO_RACK_REPAIR,
    time_limit: float = TIME_LIMIT,
    verbose: bool = VERBOSE,
    batch_size: Optional[int] = BATCH,
    batch_bytes: Optional[str] = BATCH_BYTES,
    no_canary: bool = NO_CANARY,
    bootstrap_server: Optional[str] = BOOTSTRAP,
    output_dir: Optional[str] = OUTPUT_DIR,
    sizes: Optional[str] = SIZES,
    throttle: Optional[str] = THROTTLE,
    fmt: PlanFormat = FORMAT,
    offline_brokers: Optional[str] = OFFLINE,
) -> None:
    """Balance replicas and preferred leaders from the current assignment with as few moves as possible."""
    from planner.rebalance.goals import balance

    options = _goal_options(max_moves, exclude_topic, exclude_internal, byte_tolerance, no_leader_balance, time_limit)
    _check_output_dir(output_dir)
    with _loaded(topology, offline_brokers, sizes) as cluster:
        brokers = parse_id_list(broker_list, "--broker-list") if broker_list is not None else None
        say = _progress_for(cluster, verbose)
        plan = balance(cluster, brokers=brokers, topics=topic, progress=say, rack_repair=not no_rack_repair, **options)
        if verbose:
            _say_strategy(plan, say)
        _emit(plan, output_dir, fmt, Carry(throttle, batch_size, batch_bytes, no_canary, bootstrap_server))


@reassign.command("decommission")
def decommission_cmd(
    topology: str = TOPOLOGY,
    brokers: str = typer.Option(..., "--brokers", metavar="IDS", help="Brokers to empty, e.g. 4,5."),
    max_moves: Optional[int] = MAX_MOVES,
    exclude_topic: Optional[List[str]] = EXCLUDE_TOPIC,
    exclude_internal: bool = EXCLUDE_INTERNAL,
    byte_tolerance: float = BYTE_TOLERANCE,
    no_leader_balance: bool = NO_LEADER_BALANCE,
    no_rack_repair: bool = NO_RACK_REPAIR,
    time_limit: float = TIME_LIMIT,
    verbose: bool = VERBOSE,
    batch_size: Optional[int] = BATCH,
    batch_bytes: Optional[str] = BATCH_BYTES,
    no_canary: bool = NO_CANARY,
    bootstrap_server: Optional[str] = BOOTSTRAP,
    output_dir: Optional[str] = OUTPUT_DIR,
    sizes: Optional[str] = SIZES,
    throttle: Optional[str] = THROTTLE,
    fmt: PlanFormat = FORMAT,
    offline_brokers: Optional[str] = OFFLINE,
) -> None:
    """Move every replica off the given brokers, keeping the rest balanced and rack-safe (repairing unsafe ones)."""
    from planner.rebalance.decommission import decommission

    options = _goal_options(max_moves, exclude_topic, exclude_internal, byte_tolerance, no_leader_balance, time_limit)
    _check_output_dir(output_dir)
    with _loaded(topology, offline_brokers, sizes) as cluster:
        say = _progress_for(cluster, verbose)
        ids = parse_id_list(brokers, "--brokers")
        plan = decommission(cluster, ids, progress=say, rack_repair=not no_rack_repair, **options)
        if verbose:
            _say_strategy(plan, say)
        _emit(plan, output_dir, fmt, Carry(throttle, batch_size, batch_bytes, no_canary, bootstrap_server))


@reassign.command("replace-broker")
def replace_broker_cmd(
    topology: str = TOPOLOGY,
    source: int = typer.Option(..., "--source", metavar="ID", min=0, max=2**31 - 1, help="The broker to empty."),
    target: int = typer.Option(
        ..., "--target", metavar="ID", min=0, max=2**31 - 1, help="The broker that takes its replicas."
    ),
    max_moves: Optional[int] = MAX_MOVES,
    exclude_topic: Optional[List[str]] = EXCLUDE_TOPIC,
    exclude_internal: bool = EXCLUDE_INTERNAL,
    byte_tolerance: Optional[float] = BYTE_TOLERANCE_UNUSED,
    no_leader_balance: bool = NO_LEADER_BALANCE_UNUSED,
    batch_size: Optional[int] = BATCH,
    batch_bytes: Optional[str] = BATCH_BYTES,
    no_canary: bool = NO_CANARY,
    bootstrap_server: Optional[str] = BOOTSTRAP,
    output_dir: Optional[str] = OUTPUT_DIR,
    sizes: Optional[str] = SIZES,
    throttle: Optional[str] = THROTTLE,
    fmt: PlanFormat = FORMAT,
    offline_brokers: Optional[str] = OFFLINE,
) -> None:
    """Move every replica of one broker to another, in the same place of each replica list."""
    from planner.rebalance.decommission import replace_broker

    tolerance = 10.0 if byte_tolerance is None else byte_tolerance
    options = _goal_options(max_moves, exclude_topic, exclude_internal, tolerance, no_leader_balance)
    _unused_options(
        "replace-broker",
        "only the source broker's replicas move, each to its place in the list, so its preferred leaderships go to "
        "the target",
        byte_tolerance,
        no_leader_balance,
    )
    _check_output_dir(output_dir)
    with _loaded(topology, offline_brokers, sizes) as cluster:
        plan = replace_broker(
            cluster,
            source,
            target,
            max_moves=options["max_moves"],
            exclude_topics=options["exclude_topics"],
            exclude_internal=exclude_internal,
        )
        _emit(plan, output_dir, fmt, Carry(throttle, batch_size, batch_bytes, no_canary, bootstrap_server))


@reassign.command("set-replication-factor")
def set_rf_cmd(
    topology: str = TOPOLOGY,
    topic: str = typer.Option(..., "--topic", help="The topic."),
    replication_factor: int = typer.Option(
        ..., "--replication-factor", metavar="R", max=32767, help="The new replication factor."
    ),
    max_moves: Optional[int] = typer.Option(
        None,
        "--max-moves",
        metavar="N",
        max=2**31 - 1,
        help="Add at most N replicas (whole partitions, in partition order); the summary says the new replication "
        "factor was left unmet.",
    ),
    exclude_topic: Optional[List[str]] = EXCLUDE_TOPIC,
    exclude_internal: bool = EXCLUDE_INTERNAL,
    byte_tolerance: Optional[float] = BYTE_TOLERANCE_UNUSED,
    no_leader_balance: bool = NO_LEADER_BALANCE_UNUSED,
    batch_size: Optional[int] = BATCH,
    batch_bytes: Optional[str] = BATCH_BYTES,
    no_canary: bool = NO_CANARY,
    bootstrap_server: Optional[str] = BOOTSTRAP,
    output_dir: Optional[str] = OUTPUT_DIR,
    sizes: Optional[str] = SIZES,
    throttle: Optional[str] = THROTTLE,
    fmt: PlanFormat = FORMAT,
    offline_brokers: Optional[str] = OFFLINE,
) -> None:
    """Raise or lower a topic's replication factor, keeping replicas rack-safe and brokers balanced."""
    from planner.model import INTERNAL_TOPICS
    from planner.rebalance.replication import set_replication_factor

    tolerance = 10.0 if byte_tolerance is None else byte_tolerance
    options = _goal_options(max_moves, exclude_topic, exclude_internal, tolerance, no_leader_balance)
    # the other topics never move here; the one it changes cannot be excluded
    if exclude_internal and topic in INTERNAL_TOPICS:
        raise PlannerError(f"--topic {topic} is excluded by --exclude-internal: leave one of them out")
    for pattern in options["exclude_topics"]:
        if re.fullmatch(pattern, topic):
            raise PlannerError(f"--topic {topic} is excluded by --exclude-topic {pattern!r}: leave one of them out")
    _unused_options(
        "set-replication-factor",
        "it adds or removes replicas of one topic only, keeping each preferred leader",
        byte_tolerance,
        no_leader_balance,
    )
    _check_output_dir(output_dir)
    with _loaded(topology, offline_brokers, sizes) as cluster:
        plan = set_replication_factor(cluster, topic, replication_factor, max_moves=options["max_moves"])
        _emit(plan, output_dir, fmt, Carry(throttle, batch_size, batch_bytes, no_canary, bootstrap_server))


@reassign.command("elect-leaders")
def elect_leaders_cmd(
    topology: str = TOPOLOGY,
    topic: Optional[List[str]] = typer.Option(None, "--topic", help="Only these topics; repeatable."),
    output_dir: Optional[str] = OUTPUT_DIR,
    fmt: PlanFormat = FORMAT,
    offline_brokers: Optional[str] = OFFLINE,
    bootstrap_server: Optional[str] = BOOTSTRAP,
    time_limit: float = TIME_LIMIT,
) -> None:
    """Balance preferred leaders by reordering replica lists (no data moves); list the partitions to elect."""
    from planner.formats import plan as render
    from planner.formats.kafka_json import generate_output_text, render_election_json
    from planner.rebalance.execution import batch_figures, leader_election

    _check_output_dir(output_dir)
    deadline = _goal_options(None, None, False, 10.0, False, time_limit)["deadline"]  # --time-limit checked
    cluster = load_cluster(topology, offline_brokers)
    ex = leader_election(cluster, topic, deadline)
    plan = ex.plan
    summary = (
        render.render_plan_text(plan) + f"Partitions to elect (current leader is not preferred): {len(ex.elect)}\n"
    )
    if output_dir is not None:
        # RUNBOOK.md as the other plans write it: the reordering (no data moves, no throttle), --verify, the
        # election, the rollback
        book = render.plan_runbook(ex, batch_figures(ex), _bootstrap(cluster, bootstrap_server), False)
        written = _write_plan_files(output_dir, render.plan_files(ex, summary, book))
    if fmt is PlanFormat.table:
        sys.stdout.write(summary)
    elif fmt is PlanFormat.kafka:
        if plan.proposed:
            sys.stdout.write(generate_output_text(plan.current, plan.proposed) + "\n")
        sys.stdout.write(render_election_json(ex.elect) + "\n")
    else:
        sys.stdout.write(render.render_plan_json(plan, elect=ex.elect))
    sys.stdout.flush()
    if output_dir is not None:
        _say_written(written, bool(plan.proposed))


@reassign.command("check-execute")
def check_execute_cmd(
    topology: str = TOPOLOGY,
    reassignment_file: str = typer.Option(..., "--reassignment-json-file", metavar="F"),
    additional: bool = typer.Option(
        False, "--additional", help="As Kafka's --additional: allow while a reassignment is in progress."
    ),
    leaving_brokers: Optional[str] = typer.Option(
        None,
        "--leaving-brokers",
        metavar="IDS",
        help="Brokers the reassignment empties (a decommission): the summary's figures are over the others, and "
        "a replica left on them is warned of.",
    ),
    offline_brokers: Optional[str] = OFFLINE,
) -> None:
    """The checks kafka-reassign-partitions.sh --execute makes on a reassignment JSON against the topology (its
    order, its messages), then a summary. (Kafka's --verify is `reassign verify`.)"""
    from planner.formats import plan as render
    from planner.formats.kafka_json import parse_log_dir_moves, parse_reassignment_json
    from planner.rebalance.execution import check_reassignment

    cluster = load_cluster(topology, offline_brokers)
    text = read_option_file(reassignment_file, "--reassignment-json-file")
    proposed = parse_reassignment_json(text, reassignment_file)
    leaving = parse_id_list(leaving_brokers, "--leaving-brokers") if leaving_brokers is not None else ()
    checked = check_reassignment(cluster, proposed, reassignment_file, additional=additional, leaving=leaving)
    for broker, kept in checked.left_on_leaving:
        print(f"warning: leaving broker {broker} still holds {kept} replica(s) after the reassignment", file=sys.stderr)
    for tp, old, new in checked.rf_changes:
        print(f"warning: {tp} changes replication factor {old} -> {new}", file=sys.stderr)
    for tp, replicas, racks in checked.made_rack_unsafe:
        print(
            f"warning: {tp} becomes rack-unsafe: replicas {','.join(map(str, replicas))} in racks "
            f"{','.join(map(str, racks))}",
            file=sys.stderr,
        )
    moves = parse_log_dir_moves(text, reassignment_file)
    if moves:
        note(f"{len(moves)} replica log-dir move(s); Kafka applies them with --bootstrap-server only")
    text_out = render.render_plan_text(checked.plan)
    if checked.unchanged:
        text_out += f"({checked.unchanged} listed partition(s) already have the proposed replica list)\n"
    sys.stdout.write(text_out)


@reassign.command("verify")
def verify_cmd(
    topology: str = TOPOLOGY,
    reassignment_file: str = typer.Option(..., "--reassignment-json-file", metavar="F"),
    offline_brokers: Optional[str] = OFFLINE,
    exit_code: bool = EXIT_CODE,
) -> None:
    """Kafka's --verify: what `kafka-reassign-partitions.sh --verify` prints for this JSON against the topology
    (in progress = the partition has adding/removing replicas in the topology). The --execute checks: check-execute."""
    from planner.formats.kafka_json import parse_reassignment_entries, partition_reassignment_states_text
    from planner.rebalance.reassignment import reassignment_states

    cluster = load_cluster(topology, offline_brokers)
    entries = parse_reassignment_entries(
        read_option_file(reassignment_file, "--reassignment-json-file"), reassignment_file
    )
    states = reassignment_states(cluster, {e.tp: e.replicas for e in entries})
    # verifyAssignment prints the partitions' states, then verifyReplicaMoves prints the log-dir moves' states with
    # println: an empty line when the file moves no replica between log dirs (ReassignPartitionsCommand.java; a
    # topology knows no log dirs, so the moves' states are not shown)
    sys.stdout.write(partition_reassignment_states_text(states) + "\n\n")
    if exit_code and not all(s.done for s in states.values()):
        raise typer.Exit(STILL_MOVING)


@reassign.command("list")
def list_cmd(topology: str = TOPOLOGY, offline_brokers: Optional[str] = OFFLINE) -> None:
    """What `kafka-reassign-partitions.sh --list` prints: the reassignments in progress in the topology."""
    from planner.formats.kafka_json import current_reassignments_text

    sys.stdout.write(current_reassignments_text(load_cluster(topology, offline_brokers)) + "\n")


@reassign.command("apply")
def apply_cmd(
    topology: str = TOPOLOGY,
    reassignment_file: str = typer.Option(..., "--reassignment-json-file", metavar="F"),
    write: str = typer.Option(..., "--write", metavar="OUT.yaml", help="The topology after the reassignment."),
    offline_brokers: Optional[str] = OFFLINE,
) -> None:
    """Write the topology as it will be once the reassignment completes (what-if chains)."""
    from planner.adapters.files import write_text_atomic
    from planner.adapters.topology_yaml import dump_topology
    from planner.formats.kafka_json import parse_reassignment_json
    from planner.rebalance.reassignment import validate_reassignment

    cluster = load_cluster(topology, offline_brokers)
    proposed = parse_reassignment_json(
        read_option_file(reassignment_file, "--reassignment-json-file"), reassignment_file
    )
    validate_reassignment(cluster, proposed, additional=True)
    from planner.rebalance.moves import after_reassignment

    after = after_reassignment(cluster, proposed)
    write_text_atomic(write, dump_topology(after), "--write")
    print(f"wrote {write} ({len(proposed)} partition(s) reassigned)", file=sys.stderr)


class FailuresFormat(str, enum.Enum):
    table = "table"
    json = "json"


@app.command("failures")
def failures_cmd(
    topology: str = TOPOLOGY,
    max_failed: int = typer.Option(
        1, "--max-failed-brokers", metavar="K", min=1, max=64, help="Every set of up to K brokers."
    ),
    by_rack: bool = typer.Option(False, "--by-rack", help="Each rack failing as a whole instead."),
    top: Optional[int] = typer.Option(20, "--top", metavar="N", min=0, help="Show the N worst sets (0: all)."),
    fmt: FailuresFormat = typer.Option(FailuresFormat.table, "--format"),
    offline_brokers: Optional[str] = OFFLINE,
) -> None:
    """Partitions left leaderless / under min.insync.replicas when brokers (or racks) fail; worst sets first."""
    from planner.formats.plan import render_failures_json, render_failures_table
    from planner.rebalance.failures import broker_failures, rack_failures

    cluster = load_cluster(topology, offline_brokers)
    say = _progress_for(cluster)
    impacts = rack_failures(cluster) if by_rack else broker_failures(cluster, max_failed, top or None, say)
    if by_rack and top:
        impacts = impacts[:top]
    n = sum(t.partition_count for t in cluster.topics)
    if fmt is FailuresFormat.table:
        sys.stdout.write(render_failures_table(impacts, n))
    else:
        sys.stdout.write(render_failures_json(impacts))
