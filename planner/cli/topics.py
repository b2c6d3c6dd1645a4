"""Topic commands: describe, brokers, create-topic, add-partitions."""

from __future__ import annotations

import enum
import re
import sys
from typing import List, Mapping, Optional

import typer

from planner.adapters.source import load_cluster
from planner.cli.app import app
from planner.cli.common import OFFLINE, TOPOLOGY
from planner.limits import MAX_NEW_PARTITIONS
from planner.model import Cluster, PlannerError, TopicPartition, make_topic
from planner.placement.placer import PLACERS

VERSION = typer.Option(
    None,
    "--kafka-version",
    metavar="V",
    help="Print as this Kafka release's kafka-topics.sh does (e.g. 2.3, 2.7, 3.7, 3.8). Default: newest.",
)


class DescribeFormat(str, enum.Enum):
    kafka = "kafka"
    table = "table"
    json = "json"


class Via(str, enum.Enum):
    zookeeper = "zookeeper"
    bootstrap_server = "bootstrap-server"


class BrokersFormat(str, enum.Enum):
    table = "table"
    json = "json"


class PlacementFormat(str, enum.Enum):
    kafka = "kafka"
    replica_assignment = "replica-assignment"
    json = "json"


# --placer: the choices and their help come from the placer registry (planner/placement/placer.py)
Placer = enum.Enum("Placer", {name: name for name in PLACERS}, type=str)  # type: ignore[misc]
PLACER_HELP = " ".join(f"{name}: {placer.description}." for name, placer in PLACERS.items())


@app.command()
def describe(
    topology: str = TOPOLOGY,
    topic: Optional[List[str]] = typer.Option(
        None, "--topic", help="Topic name or regex (Kafka's include list); repeatable."
    ),
    under_replicated: bool = typer.Option(
        False, "--under-replicated-partitions", help="Only show under-replicated partitions."
    ),
    unavailable: bool = typer.Option(
        False, "--unavailable-partitions", help="Only show partitions whose leader is not available."
    ),
    under_min_isr: bool = typer.Option(
        False,
        "--under-min-isr-partitions",
        help="Only show partitions whose isr count is less than the configured minimum.",
    ),
    at_min_isr: bool = typer.Option(
        False,
        "--at-min-isr-partitions",
        help="Only show partitions whose isr count is equal to the configured minimum.",
    ),
    with_overrides: bool = typer.Option(
        False, "--topics-with-overrides", help="Only show topics with config overrides."
    ),
    exclude_internal: bool = typer.Option(
        False, "--exclude-internal", help="Leave out __consumer_offsets and __transaction_state."
    ),
    offline_brokers: Optional[str] = OFFLINE,
    kafka_version: Optional[str] = VERSION,
    via: Optional[Via] = typer.Option(
        None,
        "--via",
        help="How kafka-topics reached the cluster: zookeeper (its topics sorted by name; up to 2.8) or "
        "bootstrap-server (the AdminClient: topics in its HashMap order; 2.2-2.3 also print Leader: none and an empty "
        "Isr without a live leader). Default: bootstrap-server from 3.0 on (--zookeeper is gone), zookeeper before.",
    ),
    fmt: DescribeFormat = typer.Option(
        DescribeFormat.kafka, "--format", help="kafka: byte-for-byte kafka-topics.sh --describe."
    ),
) -> None:
    """Leaders, replicas and ISR of every partition, exactly as `kafka-topics.sh --describe` prints them."""
    from planner.formats import describe as d

    version = d.parse_version(kafka_version)
    shown = kafka_version or "the newest"
    if via is None:
        via = Via.bootstrap_server if version >= (3, 0) else Via.zookeeper
    if via is Via.zookeeper and version >= (3, 0):
        raise PlannerError(
            f"--via zookeeper: kafka-topics {shown} has no --zookeeper (removed in 3.0); leave --via out or give "
            "--kafka-version 2.8 or earlier"
        )
    if via is Via.bootstrap_server and version < (2, 2):
        raise PlannerError(f"--via bootstrap-server: kafka-topics has --bootstrap-server from 2.2 on, not {shown}")
    admin_client = via is Via.bootstrap_server and version in d.ADMIN_CLIENT_VERSIONS
    cluster = load_cluster(topology, offline_brokers)
    opts = d.DescribeOptions(
        topics=tuple(topic or ()),
        under_replicated=under_replicated,
        unavailable=unavailable,
        under_min_isr=under_min_isr,
        at_min_isr=at_min_isr,
        with_overrides=with_overrides,
        exclude_internal=exclude_internal,
        version=version,
        admin_client=admin_client,
        admin_order=via is Via.bootstrap_server and fmt is DescribeFormat.kafka,  # table and json: sorted
    )
    sections = d.select(cluster, opts)
    if fmt is DescribeFormat.kafka:
        text = d.render_kafka(cluster, sections, version, admin_client)
    elif fmt is DescribeFormat.table:
        text = d.render_table(cluster, sections)
    else:
        text = d.render_json(sections)
    sys.stdout.write(text)


@app.command()
def brokers(
    topology: str = TOPOLOGY,
    offline_brokers: Optional[str] = OFFLINE,
    fmt: BrokersFormat = typer.Option(BrokersFormat.table, "--format"),
) -> None:
    """Per-broker load: replicas, preferred and current leaders, topics, bytes; totals and spread."""
    from planner.broker_load import broker_loads
    from planner.formats import tables

    cluster = load_cluster(topology, offline_brokers)
    loads = broker_loads(cluster)
    render = tables.render_brokers_table if fmt is BrokersFormat.table else tables.render_brokers_json
    sys.stdout.write(render(cluster, loads))


# The options each built-in placer reads (planner/placement/policy.py, load_aware.py); one it does not read is an
# error rather than silently ignored (an operator giving --seed expects the placement to depend on it)
_CREATE_OPTIONS = {"kafka": ("--start-index", "--seed"), "kraft": ("--seed",), "load-aware": ()}
_ADD_OPTIONS = {"kafka": (), "kraft": ("--seed",), "load-aware": ()}
_WHY = {
    "load-aware": "its placement is deterministic",
    "kraft": "--start-index is AdminUtils' fixedStartIndex, --placer kafka",
    "kafka": "Kafka's addPartitions starts at partition 0's first replica, without a random draw",
}


def _refuse_unused(command: str, placer: str, uses: Mapping[str, tuple[str, ...]], **given: object) -> None:
    if placer not in uses:
        return  # a placer registered elsewhere: its options are its own business
    for flag, value in given.items():
        if value is not None and flag not in uses[placer]:
            raise PlannerError(f"{command} --placer {placer} does not use {flag} ({_WHY[placer]}); leave it out")


def validate_topic_name(name: str) -> None:
    """Kafka's `Topic.validate` texts (planner.adapters.validate, shared with every cluster source)."""
    from planner.adapters.validate import topic_name_problem

    problem = topic_name_problem(name)
    if problem:
        raise PlannerError(problem)


def _emit(
    before: Cluster,
    after: Cluster,
    topic: str,
    new_ids: list[int],
    fmt: PlacementFormat,
    kafka_version: Optional[str],
    write: Optional[str],
    how: str,
) -> None:
    from planner.formats import describe as d
    from planner.formats.placement import render_load_change

    t = after.topic(topic)
    if fmt is PlacementFormat.kafka:
        version = d.parse_version(kafka_version)
        sections = d.select(after, d.DescribeOptions(topics=(re.escape(topic),), version=version))
        text = d.render_kafka(after, sections, version)
    elif fmt is PlacementFormat.replica_assignment:
        text = ",".join(":".join(map(str, p.replicas)) for p in t.partitions) + "\n"
    else:
        from planner.formats.kafka_json import render_reassignment_json

        text = render_reassignment_json({TopicPartition(topic, p.id): p.replicas for p in t.partitions}) + "\n"
    if write:
        from planner.adapters.files import write_text_atomic
        from planner.adapters.topology_yaml import dump_topology

        write_text_atomic(write, dump_topology(after), "--write")
    sys.stdout.write(text)
    sys.stdout.flush()  # the plan statistics follow the result, on stderr
    sys.stderr.write(f"{how}\n{render_load_change(before, after)}")
    if write:
        sys.stderr.write(f"wrote {write}\n")


@app.command("create-topic")
def create_topic(
    topology: str = TOPOLOGY,
    topic: str = typer.Option(..., "--topic", help="Name of the new topic."),
    partitions: int = typer.Option(..., "--partitions", max=MAX_NEW_PARTITIONS, help="Number of partitions."),
    replication_factor: int = typer.Option(..., "--replication-factor", max=32767, help="Replicas per partition."),
    start_index: Optional[int] = typer.Option(
        None,
        "--start-index",
        max=2**31 - 1,
        help="Kafka's fixedStartIndex (start = shift = I), as the tools' tests use.",
    ),
    disable_rack_aware: bool = typer.Option(
        False, "--disable-rack-aware", help="Ignore racks (Kafka's RackAwareMode.Disabled)."
    ),
    placer: Placer = typer.Option(Placer["kafka"], "--placer", help=PLACER_HELP),
    seed: Optional[int] = typer.Option(
        None,
        "--seed",
        min=-(2**63),
        max=2**63 - 1,
        help="Draw the random start/shift (kafka) or seed the controller's Random (kraft).",
    ),
    offline_brokers: Optional[str] = OFFLINE,
    kafka_version: Optional[str] = VERSION,
    fmt: PlacementFormat = typer.Option(PlacementFormat.kafka, "--format"),
    write: Optional[str] = typer.Option(
        None, "--write", metavar="OUT.yaml", help="Write the topology with the new topic."
    ),
) -> None:
    """Place a new topic as Kafka would; without --start-index/--seed, the start that best balances the cluster."""
    from planner.placement.placer import plan_new_topic

    validate_topic_name(topic)
    _refuse_unused("create-topic", placer.value, _CREATE_OPTIONS, **{"--start-index": start_index, "--seed": seed})
    if start_index is not None and seed is not None:  # the fixed start won and the seed was ignored
        raise PlannerError(
            "--start-index and --seed are alternatives (Kafka's fixed start index, or its random draw); give one"
        )
    cluster = load_cluster(topology, offline_brokers)
    if cluster.has_topic(topic):
        raise PlannerError(f"Topic '{topic}' already exists.")
    assignment, how = plan_new_topic(
        cluster,
        partitions,
        replication_factor,
        placer=placer.value,
        start_index=start_index,
        seed=seed,
        rack_aware=not disable_rack_aware,
    )
    if not _emit_rows(cluster, topic, assignment, fmt, kafka_version, write, how):
        after = cluster.with_topic(make_topic(topic, assignment))
        _emit(cluster, after, topic, sorted(assignment), fmt, kafka_version, write, how)


def _emit_rows(
    cluster: Cluster,
    topic: str,
    assignment: Mapping[int, list[int]],
    fmt: PlacementFormat,
    kafka_version: Optional[str],
    write: Optional[str],
    how: str,
) -> bool:
    """`_emit` for a large Kafka placement (`bulk.Rows`, a replica matrix): the same bytes, rendered and counted from
    the matrix instead of a partition object per row. False when the per-partition path must run."""
    from planner.formats import describe as d
    from planner.formats.kafka_json import render_reassignment_json_matrix
    from planner.formats.placement import render_load_change_added, render_replica_assignment
    from planner.placement.bulk import Rows

    if not isinstance(assignment, Rows):
        return False
    matrix = assignment.matrix
    if fmt is PlacementFormat.kafka:
        text = d.render_new_topic_kafka(cluster, topic, matrix, d.parse_version(kafka_version))
        if text is None:
            return False
    elif fmt is PlacementFormat.replica_assignment:
        text = render_replica_assignment(matrix)
    else:
        text = render_reassignment_json_matrix(topic, matrix, assignment.first_pid) + "\n"
    if write:
        from planner.adapters.files import write_text_atomic
        from planner.adapters.topology_yaml import dump_topology

        write_text_atomic(write, dump_topology(cluster.with_topic(make_topic(topic, assignment))), "--write")
    sys.stdout.write(text)
    sys.stdout.flush()  # the plan statistics follow the result, on stderr
    sys.stderr.write(f"{how}\n{render_load_change_added(cluster, matrix)}")
    if write:
        sys.stderr.write(f"wrote {write}\n")
    return True


@app.command("add-partitions")
def add_partitions(
    topology: str = TOPOLOGY,
    topic: str = typer.Option(..., "--topic", help="The existing topic."),
    partitions: int = typer.Option(
        ..., "--partitions", max=MAX_NEW_PARTITIONS, help="The new total number of partitions."
    ),
    disable_rack_aware: bool = typer.Option(
        False, "--disable-rack-aware", help="Ignore racks (Kafka's RackAwareMode.Disabled)."
    ),
    placer: Placer = typer.Option(Placer["kafka"], "--placer", help=PLACER_HELP),
    seed: Optional[int] = typer.Option(
        None, "--seed", min=-(2**63), max=2**63 - 1, help="Seed of the controller's Random (kraft)."
    ),
    offline_brokers: Optional[str] = OFFLINE,
    kafka_version: Optional[str] = VERSION,
    fmt: PlacementFormat = typer.Option(PlacementFormat.kafka, "--format"),
    write: Optional[str] = typer.Option(
        None, "--write", metavar="OUT.yaml", help="Write the topology with the new partitions."
    ),
) -> None:
    """Add partitions to a topic with Kafka's rule (start from partition 0's leader, continue the shift)."""
    from dataclasses import replace

    from planner.model import Partition
    from planner.placement.placer import place_new_partitions

    _refuse_unused("add-partitions", placer.value, _ADD_OPTIONS, **{"--seed": seed})
    cluster = load_cluster(topology, offline_brokers)
    if not cluster.has_topic(topic):
        raise PlannerError(f"Topic '{topic}' does not exist as expected")
    assignment, how = place_new_partitions(
        cluster, topic, partitions, rack_aware=not disable_rack_aware, placer=placer.value, seed=seed
    )
    t = cluster.topic(topic)
    added = tuple(Partition(topic=topic, id=p, replicas=tuple(r)) for p, r in sorted(assignment.items()))
    after = cluster.with_topic(replace(t, partitions=t.partitions + added))
    _emit(cluster, after, topic, sorted(assignment), fmt, kafka_version, write, how)
