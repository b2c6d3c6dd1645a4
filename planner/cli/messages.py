"""Where messages go: `partition` (producer), `consumers` (group assignors), `coordinator` (group / transaction)."""

from __future__ import annotations

import enum
import sys
from typing import List, Optional

import typer

from planner.adapters.source import load_cluster
from planner.assignors.registry import ASSIGNORS
from planner.cli.app import app
from planner.cli.common import OFFLINE, OPTIONAL_TOPOLOGY, TOPOLOGY, note
from planner.limits import MAX_RECORDS
from planner.model import PlannerError


class OutFormat(str, enum.Enum):
    table = "table"
    tsv = "tsv"
    json = "json"


class GroupFormat(str, enum.Enum):
    table = "table"
    json = "json"


class KeyType(str, enum.Enum):
    string = "string"
    int = "int"
    long = "long"
    short = "short"
    double = "double"
    float = "float"
    boolean = "boolean"
    uuid = "uuid"
    bytes_hex = "bytes-hex"


class Partitioner(str, enum.Enum):
    default = "default"
    legacy_scala = "legacy-scala"


# --strategy: the choices and the default come from the assignor registry (planner/assignors/registry.py)
Strategy = enum.Enum("Strategy", {name: name for name in ASSIGNORS}, type=str)  # type: ignore[misc]
STRATEGY_HELP = f"Repeatable. Default: all of {', '.join(ASSIGNORS)}."


PARTITION_HELP = """Which partition a key lands on (and, with a topology, which broker leads it).

Keyed records: toPositive(murmur2(serialized key)) % (all partitions of the topic), the same from Kafka 0.8.2 to
today; the key is serialized by Kafka's serializer for --key-type. An empty key ("") is a key; only an absent
(null) key is not.

--partitioner legacy-scala: the pre-2.0 Scala producer (kafka.producer.DefaultPartitioner, 0.8.0-1.1):
Utils.abs(key.hashCode) % N on the Java key object, not murmur2.

Keyless records, by producer version (see --null-key-simulation):

\b
 * 0.9 - 2.3: round robin over the partitions that have a leader, from a random start;
 * 2.4 - 3.2 (KIP-480 sticky): one random available partition until a batch is
   complete, then a different random one;
 * 3.3+ (KIP-794 built-in uniform sticky): after batch.size bytes, a random available
   partition (adaptive partitioning weights it by queue lengths).
"""


@app.command(help=PARTITION_HELP)
def partition(
    keys: Optional[List[str]] = typer.Argument(
        None, metavar="KEY", help="Keys, as text of --key-type (after -- if one starts with -)."
    ),
    partitions: Optional[int] = typer.Option(
        None, "--partitions", max=2**31 - 1, help="Number of partitions of the topic."
    ),
    topology: Optional[str] = OPTIONAL_TOPOLOGY,
    topic: Optional[str] = typer.Option(None, "--topic", help="The topic in --topology."),
    key_type: KeyType = typer.Option(KeyType.string, "--key-type", help="Kafka serializer of the key."),
    encoding: str = typer.Option("utf-8", "--encoding", help="key.serializer.encoding for string (and uuid) keys."),
    keys_file: Optional[str] = typer.Option(
        None, "--keys-file", metavar="FILE", help="One key per line (a trailing \\r is dropped); '-' for stdin."
    ),
    summary: bool = typer.Option(
        False, "--summary", help="Per-partition histogram and skew instead of one line per key."
    ),
    partitioner: Partitioner = typer.Option(
        Partitioner.default, "--partitioner", help="default (murmur2, 0.8.2+) or legacy-scala (pre-2.0 Scala producer)."
    ),
    null_key_simulation: bool = typer.Option(
        False, "--null-key-simulation", help="Simulate keyless records under each producer era."
    ),
    records: int = typer.Option(
        100000, "--records", min=1, max=MAX_RECORDS, help="Records to simulate (--null-key-simulation)."
    ),
    batch_size: int = typer.Option(
        16384, "--batch-size", min=1, max=2**31 - 1, help="Records per batch, i.e. batch.size with 1-byte records."
    ),
    seed: int = typer.Option(
        0, "--seed", min=-(2**63), max=2**63 - 1, help="Seed of the simulation's java.util.Random."
    ),
    offline_brokers: Optional[str] = OFFLINE,
    fmt: OutFormat = typer.Option(OutFormat.table, "--format"),
) -> None:
    from planner.cli import partition as command

    command.run(
        keys=list(keys or []),
        partitions=partitions,
        topology=topology,
        topic=topic,
        key_type=key_type.value,
        encoding=encoding,
        keys_file=keys_file,
        summary=summary,
        partitioner=partitioner.value,
        null_key_simulation=null_key_simulation,
        records=records,
        batch_size=batch_size,
        seed=seed,
        offline_brokers=offline_brokers,
        fmt=fmt.value,
    )


@app.command()
def consumers(
    topology: str = TOPOLOGY,
    group_file: str = typer.Option(..., "--group-file", metavar="GROUP.yaml", help="The group's members (see README)."),
    strategy: Optional[List[Strategy]] = typer.Option(
        None,
        "--strategy",
        help=STRATEGY_HELP,
    ),
    offline_brokers: Optional[str] = OFFLINE,
    fmt: GroupFormat = typer.Option(GroupFormat.table, "--format"),
) -> None:
    """Which consumer reads which partition under each assignment strategy, and which brokers it fetches from."""
    from planner.adapters.files import read_text
    from planner.assignors.evaluation import evaluate_group
    from planner.formats.group_yaml import parse_group
    from planner.formats.messages import group_text

    group = parse_group(read_text(group_file, f"group file {group_file}"), group_file)
    cluster = load_cluster(topology, offline_brokers)
    evaluation = evaluate_group(cluster, group.members, [s.value for s in (strategy or [])])
    _group_notes(evaluation, group_file, topology)
    sys.stdout.write(group_text(group, evaluation.counts, evaluation.results, evaluation.leader_of, fmt.value))


@app.command()
def coordinator(
    ids: List[str] = typer.Argument(..., metavar="GROUP_ID...", help="Consumer group ids (or transactional ids)."),
    transactional: bool = typer.Option(
        False, "--transactional", help="The ids are transactional.id values (__transaction_state)."
    ),
    partitions: Optional[int] = typer.Option(
        None,
        "--partitions",
        max=2**31 - 1,
        help="Partitions of the internal topic. Default: its count in --topology, else 50.",
    ),
    topology: Optional[str] = typer.Option(
        None, "--topology", metavar="TOPOLOGY", help="Also show the coordinator broker."
    ),
    offline_brokers: Optional[str] = OFFLINE,
    fmt: OutFormat = typer.Option(OutFormat.table, "--format"),
) -> None:
    """The __consumer_offsets (or __transaction_state) partition of each id: Utils.abs(id.hashCode()) % partitions,
    and with a topology the broker leading it, i.e. the group (or transaction) coordinator."""
    from planner.coordinator import coordinators, internal_topic
    from planner.formats.messages import coordinator_text

    cluster = None
    if topology:
        cluster = load_cluster(topology, offline_brokers)
        topic_name = internal_topic(transactional)
        actual = cluster.topic(topic_name).partition_count if cluster.has_topic(topic_name) else None
        if partitions is not None and actual is not None and partitions != actual:
            raise PlannerError(
                f"--partitions {partitions} contradicts {topology}: {topic_name} has {actual} "
                f"partitions, and Kafka hashes over the topic's actual partition count; drop --partitions"
            )
    elif offline_brokers:
        raise PlannerError("--offline-brokers needs --topology")
    found = coordinators(list(ids), transactional, partitions, cluster)
    if found.topic_missing:
        note(
            f"{topology} has no {found.topic} topic: Kafka creates it on first use "
            f"(until then FindCoordinator answers COORDINATOR_NOT_AVAILABLE)"
        )
    text = coordinator_text(found.rows, found.topic, found.partitions, transactional, found.with_brokers, fmt.value)
    sys.stdout.write(text)


def _group_notes(evaluation, group_file: str, topology: str) -> None:
    for topic in evaluation.missing:
        why = "Kafka assigns nothing for it until it exists"
        note(f"{group_file}: subscribed topic {topic!r} is not in {topology}; {why}")
    for owned in evaluation.ignored:
        member, tp = owned.member, owned.tp
        if owned.count is None:
            note(f"{group_file}: {member} owns {tp} but does not subscribe {tp.topic}: no strategy keeps it there")
        else:
            note(
                f"{group_file}: {member} owns {tp}, but {tp.topic} has {owned.count} partitions in {topology}: ignored"
            )
