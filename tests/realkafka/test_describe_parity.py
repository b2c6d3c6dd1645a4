"""`describe kafka://…` byte for byte against Kafka 4.4.0's own `kafka-topics.sh --describe` (TopicCommand) on the
same live cluster: every topic in the tool's HashMap order, `Configs:` as the tool prints them (the KRaft
controller's cluster-level `min.insync.replicas=1` included), `--topic`, and the four partition filters with a broker
stopped (ISR shrunk, ELR filled, a partition without a leader). Then `twin` built from that very text (and
`kafka-log-dirs.sh --describe`) gives back the cluster `kafka export` reads through the Admin API."""

from __future__ import annotations

import time

import pytest
import yaml
from realkafka.real_cluster import LOG_DIRS, TOPICS

from planner.formats.describe import admin_client_order

PREFIX = "test_describe_parity-"
FILLERS = [f"{PREFIX}{c}" for c in "abcdefghijklmnopq"]  # enough names for a HashMap of 32 buckets and more
MIN2 = PREFIX + "min2"  # min.insync.replicas=2
ONLY3 = PREFIX + "only3"  # a partition on broker 3 alone
RF3 = PREFIX + "rf3"
CONFIGS = PREFIX + "configs"
TOPIC_SPECS = {
    MIN2: ([[1, 3], [3, 2], [2, 4]], {"min.insync.replicas": "2"}),
    ONLY3: ([[3], [1]], None),
    RF3: ([[1, 2, 3], [4, 1, 2]], None),
    CONFIGS: (
        [[1, 2, 4]],
        {
            "cleanup.policy": "compact,delete",
            "retention.ms": "86400000",
            "min.insync.replicas": "2",
            "segment.bytes": "1048576",
            "max.message.bytes": "2000000",
        },
    ),
    **{name: ([[1 + i % 4, 1 + (i + 1) % 4]], None) for i, name in enumerate(FILLERS)},
}
ALL = sorted(TOPIC_SPECS)


@pytest.fixture(scope="module")
def topics(real_kafka):
    for name, (assignment, configs) in TOPIC_SPECS.items():
        real_kafka.create_topic(name, assignment, configs)
    yield real_kafka
    real_kafka.delete_topics(*TOPIC_SPECS)


def _tool(cluster, *args: str) -> str:
    rc, out, err = cluster.run_tool(TOPICS, "--bootstrap-server", cluster.bootstrap, "--describe", *args)
    assert rc == 0, err
    return out


def _ours(planner_cli, cluster, *args: str) -> str:
    code, out, err = planner_cli("describe", cluster if isinstance(cluster, str) else cluster.url, *args)
    assert code == 0, err
    return out


def _ours_and_tools(planner_cli, cluster, *args: str) -> tuple[str, str]:
    """Ours, then the tool's, then ours again until ours reads the same twice around the tool's run (the cluster
    settles: an ISR shrinking, ELR filling), so both describe the same state."""
    before = _ours(planner_cli, cluster, *args)
    for _ in range(10):
        theirs = _tool(cluster, *args)
        after = _ours(planner_cli, cluster, *args)
        if after == before:
            return after, theirs
        before = after
    raise AssertionError("the cluster did not settle")


def _header_names(text: str) -> list[str]:
    return [line.split("\t")[0].removeprefix("Topic: ") for line in text.splitlines() if line.startswith("Topic: ")]


def test_every_topic_in_the_tools_order_with_its_configs(topics, planner_cli):
    ours, theirs = _ours_and_tools(planner_cli, topics)
    assert ours == theirs
    names = _header_names(theirs)
    assert set(ALL) <= set(names)
    assert names == admin_client_order(sorted(names))  # the HashMap order, not sorted
    assert names != sorted(names)
    lines = {n: line for line in theirs.splitlines() for n in [line.split("\t")[0][7:]] if line.startswith("Topic: ")}
    # the controller's cluster-level min.insync.replicas=1 (not a default to TopicCommand: isDefault() is false)
    assert lines[FILLERS[0]].endswith("\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: min.insync.replicas=1")
    assert lines[CONFIGS].endswith(
        "\tConfigs: min.insync.replicas=2,cleanup.policy=compact,delete,segment.bytes=1048576,"
        "retention.ms=86400000,max.message.bytes=2000000"  # Config's HashMap order
    )


def test_topic_regex(topics, planner_cli):
    ours, theirs = _ours_and_tools(planner_cli, topics, "--topic", PREFIX + "[a-h]|" + MIN2)
    assert ours == theirs
    assert _header_names(theirs) == admin_client_order(sorted([MIN2, *FILLERS[:8]]))


FILTERS = [
    "--under-replicated-partitions",
    "--unavailable-partitions",
    "--under-min-isr-partitions",
    "--at-min-isr-partitions",
]


def _wait_for_isr_without(cluster, broker: int, names: list[str], timeout: float = 60.0) -> None:
    admin = cluster.admin()
    try:
        deadline = time.monotonic() + timeout
        while True:
            described = admin.describe_topics(names)
            if all(broker not in p["isr_nodes"] for t in described for p in t["partitions"]):
                return
            assert time.monotonic() < deadline, f"broker {broker} still in an ISR"
            time.sleep(0.3)
    finally:
        admin.close()


def _as_describe_says(topic: dict) -> dict:
    """An exported topic without what kafka-topics --describe does not print: the leader epoch; and an empty ELR
    list, which the twin's parser (planner/formats/describe.py parse_describe) keeps as not given."""
    states = {}
    for p, st in topic.get("state", {}).items():
        st = {k: v for k, v in st.items() if k != "leader_epoch" and not (k.endswith("elr") and v == [])}
        if st != {"leader": topic["assignment"][p][0], "isr": topic["assignment"][p]}:
            states[p] = st
    out = {k: v for k, v in topic.items() if k != "state"}
    if states:
        out["state"] = states
    return out


def test_filters_with_a_broker_stopped_and_the_twin(topics, planner_cli, tmp_path):
    topics.stop_broker(3)
    try:
        _wait_for_isr_without(topics, 3, ALL)
        shown = {}
        for flag in FILTERS:
            ours, theirs = _ours_and_tools(planner_cli, topics, flag, "--topic", PREFIX + ".*")
            assert ours == theirs, flag
            shown[flag] = theirs
        # what the filters found (Kafka's own reading of the same partitions)
        assert (
            f"\tTopic: {ONLY3}\tPartition: 0\tLeader: none\tReplicas: 3\tIsr: \tElr: 3\tLastKnownElr: 3\n"
            in shown["--unavailable-partitions"]
        )
        assert (
            f"\tTopic: {MIN2}\tPartition: 0\tLeader: 1\tReplicas: 1,3\tIsr: 1\tElr: 3\tLastKnownElr: "
            in (shown["--under-min-isr-partitions"])
        )
        assert f"\tTopic: {MIN2}\tPartition: 2\tLeader: 2\tReplicas: 2,4\tIsr: 2,4" in shown["--at-min-isr-partitions"]
        # twin from the tool's describe of everything and kafka-log-dirs' describe: the cluster the Admin API reads
        ours, theirs = _ours_and_tools(planner_cli, topics, "--topic", PREFIX + ".*")
        assert ours == theirs
        (tmp_path / "describe.txt").write_text(theirs)
        rc, log_dirs, err = topics.run_tool(
            LOG_DIRS, "--bootstrap-server", topics.bootstrap, "--describe", "--topic-list", ",".join(ALL)
        )
        assert rc == 0, err
        (tmp_path / "log-dirs.txt").write_text(log_dirs)
        racks = ",".join(f"{b}:{r}" for b, r in topics.brokers.items())
        code, twin, err = planner_cli(
            "twin", "--describe", str(tmp_path / "describe.txt"), "--log-dirs", str(tmp_path / "log-dirs.txt"),
            "--racks", racks, "-q",
        )  # fmt: skip
        assert code == 0, err
        code, _, err = planner_cli("kafka", "export", topics.url, "-o", str(tmp_path / "export.yaml"))
        assert code == 0, err
        exported = yaml.safe_load((tmp_path / "export.yaml").read_text())
        twinned = yaml.safe_load(twin)
        assert [t for t in twinned["topics"] if t["name"].startswith(PREFIX)] == [
            _as_describe_says(t) for t in exported["topics"] if t["name"].startswith(PREFIX)
        ]
        # the brokers: broker 3 fenced in both (the Admin API: DescribeCluster lists it fenced; the twin: the ELR
        # member of the leaderless only3-0, as KIP-966 empties the ISR into the ELR, tool_output._down)
        assert (
            [(b["id"], b["rack"], b.get("state", "online")) for b in twinned["brokers"]]
            == [(b["id"], b["rack"], b.get("state", "online")) for b in exported["brokers"]]
            == [(1, "rack-a", "online"), (2, "rack-b", "online"), (3, "rack-c", "fenced"), (4, "rack-a", "online")]
        )
        # and the other way: each, described again, prints the tool's own text
        (tmp_path / "twin.yaml").write_text(twin)
        assert _ours(planner_cli, str(tmp_path / "twin.yaml")) == theirs
        assert _ours(planner_cli, str(tmp_path / "export.yaml"), "--topic", PREFIX + ".*") == theirs
    finally:
        topics.start_broker(3)
