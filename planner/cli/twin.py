"""`kafka-planner twin`: a topology YAML assembled from Kafka's own tool output (an offline twin of a cluster)."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from planner.cli.app import app
from planner.cli.common import TOPOLOGY_OUTPUT
from planner.model import PlannerError


@app.command("twin")
def twin(
    describe: Optional[str] = typer.Option(
        None, "--describe", metavar="FILE", help="Output of kafka-topics --describe (any Kafka release)."
    ),
    assignment: Optional[str] = typer.Option(
        None,
        "--assignment",
        metavar="FILE",
        help="kafka-reassign-partitions --generate output (its 'Current partition replica assignment' JSON).",
    ),
    log_dirs: Optional[str] = typer.Option(
        None, "--log-dirs", metavar="FILE", help="Output of kafka-log-dirs --describe: replica sizes."
    ),
    brokers: Optional[str] = typer.Option(
        None,
        "--brokers",
        metavar="FILE",
        help="YAML with a topology's 'brokers:' list (id, rack, host, port, state; optional cluster, mode): "
        "every broker of the cluster.",
    ),
    racks: Optional[str] = typer.Option(
        None,
        "--racks",
        metavar="ID:RACK,...",
        help="Every broker with its rack, e.g. 1:a,2:b,3:c (instead of --brokers).",
    ),
    output: Optional[str] = TOPOLOGY_OUTPUT,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary on stderr."),
) -> None:
    """Build a topology YAML from files an operator can hand over: kafka-topics --describe text, the current
    assignment of kafka-reassign-partitions --generate, kafka-log-dirs --describe, and brokers/racks."""
    from planner.adapters.tool_output import TwinFiles, TwinParsers, build_twin
    from planner.adapters.topology_yaml import dump_topology
    from planner.formats.describe import parse_describe
    from planner.formats.kafka_json import parse_current_assignment, parse_log_dirs_replicas

    parsers = TwinParsers(parse_describe, parse_current_assignment, parse_log_dirs_replicas)
    notes: list[str] = []
    cluster = build_twin(TwinFiles(describe, assignment, log_dirs, brokers, racks), parsers, notes)
    if not quiet:
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    text = dump_topology(cluster)
    if not output:
        sys.stdout.write(text)
        return
    from planner.adapters.files import write_text_atomic

    try:
        write_text_atomic(output, text)
    except OSError as exc:
        raise PlannerError(f"-o {output}: cannot write: {exc.strerror or exc}") from None
    if not quiet:
        parts = sum(t.partition_count for t in cluster.topics)
        print(
            f"wrote {output}: {len(cluster.brokers)} brokers, {len(cluster.topics)} topics, {parts} partitions",
            file=sys.stderr,
        )
