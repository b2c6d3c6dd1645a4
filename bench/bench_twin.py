"""An offline twin of a cluster of 100 brokers and 20,000 partitions (RF 3) from its `kafka-topics --describe` text.

Figure: `kafka-planner twin --describe FILE -o OUT`'s work in-process (read, parse every line, assemble, write the
topology YAML). Yardstick, measured in the same run on the same cluster: loading the written topology YAML, which every
command that reads the twin then pays. Target: the twin costs no more than twice one load of its result
(ratio = load time / twin time >= 0.5x).
"""

from __future__ import annotations

import os
import tempfile

from bench.report import line, timer

N_BROKERS, N_TOPICS, PARTITIONS, RF = 100, 200, 100, 3


def _cluster():
    from planner.model import Broker, Cluster, ObservedState, Partition, Topic

    brokers = tuple(Broker(b, rack=f"r{b % 5}") for b in range(N_BROKERS))
    topics = []
    for t in range(N_TOPICS):
        name = f"topic-{t:03d}"
        parts = []
        for p in range(PARTITIONS):
            replicas = tuple((t + p + k * 7) % N_BROKERS for k in range(RF))
            observed = ObservedState(replicas[1], replicas[1:]) if p % 10 == 0 else None
            parts.append(Partition(name, p, replicas, observed=observed))
        topics.append(Topic(name, tuple(parts), {"min.insync.replicas": "2"}, topic_id=f"{t:022d}"))
    return Cluster(brokers, tuple(topics))


def run() -> None:
    from planner.adapters.files import write_text_atomic
    from planner.adapters.tool_output import TwinFiles, TwinParsers, build_twin
    from planner.adapters.topology_yaml import dump_topology, load_topology
    from planner.formats import describe as d
    from planner.formats.kafka_json import parse_current_assignment, parse_log_dirs_replicas

    cluster = _cluster()
    parsers = TwinParsers(d.parse_describe, parse_current_assignment, parse_log_dirs_replicas)
    version = d.NEWEST
    text = d.render_kafka(cluster, d.select(cluster, d.DescribeOptions(version=version)), version)
    with tempfile.TemporaryDirectory() as tmp:
        source, out = os.path.join(tmp, "describe.txt"), os.path.join(tmp, "twin.yaml")
        with open(source, "w", encoding="utf-8") as fh:
            fh.write(text)
        with timer() as twin:
            write_text_atomic(out, dump_topology(build_twin(TwinFiles(describe=source), parsers)))
        with timer() as load:
            loaded = load_topology(out)
    same = d.render_kafka(loaded, d.select(loaded, d.DescribeOptions(version=version)), version) == text
    n = N_TOPICS * PARTITIONS
    line(
        f"twin of {n:,} partitions from describe text (round trip {'same' if same else 'DIFFERS'})",
        twin["s"],
        "s",
        load["s"],
        "loading the written topology",
        target="ratio >= 0.5x",
        higher_is_better=False,
    )
