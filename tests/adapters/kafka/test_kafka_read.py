"""`kafka://` as a TOPOLOGY: the live cluster read through the Admin API (kafka-python) from the fake KRaft cluster."""

from __future__ import annotations

import time

import pytest
from fake_cluster import FakeBroker, FakeCluster, free_port, run_cli, run_here

from planner.adapters import kafka
from planner.adapters.kafka.connection import load_options, options_from_properties, parse_properties, parse_url
from planner.model import FENCED, ONLINE, ObservedState, PlannerError, TopicPartition


def test_snapshot_reads_racks_topics_elr_configs_sizes_and_reassignments(kraft):
    kraft.partition("orders", 1).isr = [2]
    kraft.partition("orders", 1).elr = [3]
    kraft.partition("orders", 1).last_known_elr = []
    kraft.partition("orders", 1).have[3] = 1500  # behind: stays out of the ISR
    kraft.alter_reassignment("orders", 0, [3, 2])
    kraft.step(250)
    kraft.brokers[3].cordoned = ("/var/lib/kafka/data",)
    snap = kafka.read_snapshot(kraft.url, load_options(environ={}))
    c = snap.cluster
    assert (c.name, c.mode) == ("fake-kraft-cluster", "kraft")
    assert [(b.id, b.rack, b.state) for b in c.brokers] == [(1, "a", ONLINE), (2, "b", ONLINE), (3, "c", ONLINE)]
    orders = c.topic("orders")
    assert orders.topic_id == "AAAAAAAAAAAAAAAAAAAREQ"
    assert dict(orders.configs) == {"min.insync.replicas": "2"}
    p0, p1, _ = orders.partitions
    assert (p0.replicas, p0.adding, p0.removing, p0.size) == ((3, 2, 1), (3,), (1,), 1000)
    assert p1.observed == ObservedState(leader=2, isr=(2,), leader_epoch=0, elr=(3,), last_known_elr=())
    assert snap.reassigning == {TopicPartition("orders", 0): ((3, 2, 1), (3,), (1,))}
    assert [(r.broker, r.size, r.offset_lag, r.future) for r in snap.replicas[TopicPartition("orders", 0)]] == [
        (1, 1000, 0, False),
        (2, 1000, 0, False),
        (3, 250, 750, False),
    ]
    assert snap.cordoned == {3: ("/var/lib/kafka/data",)}
    assert [(d.broker, d.cordoned) for d in snap.log_dirs] == [(1, False), (2, False), (3, True)]
    assert snap.notes == (
        "broker 3: every log dir is cordoned (cordoned.log.dirs, KIP-1066): it takes no new replicas",
    )


def test_describe_kafka_url_prints_kafka_topics_text(kraft):
    kraft.partition("orders", 1).isr = [2]
    kraft.partition("orders", 1).elr = [3]
    code, out, err = run_cli("describe", kraft.url, "--topic", "orders")
    assert (code, err) == (0, "")
    assert out == (
        "Topic: orders\tTopicId: AAAAAAAAAAAAAAAAAAAREQ\tPartitionCount: 3\tReplicationFactor: 2\t"
        "Configs: min.insync.replicas=2\n"
        "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\tElr: \tLastKnownElr: \n"
        "\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2\tElr: 3\tLastKnownElr: \n"
        "\tTopic: orders\tPartition: 2\tLeader: 3\tReplicas: 3,1\tIsr: 3,1\tElr: \tLastKnownElr: \n"
    )


def test_fenced_brokers_and_describe_cluster_v0_fallback():
    with FakeCluster([FakeBroker(1, "a"), FakeBroker(2, "b", fenced=True)]) as cluster:
        cluster.add_topic("t", [[1, 2]])
        assert [b.state for b in kafka.read_snapshot(cluster.url, load_options(environ={})).cluster.brokers] == [
            ONLINE,
            FENCED,
        ]
        cluster.max_versions[60] = 0  # kafka-python 3.0.12 raises KeyError 'endpoint_type' here: Metadata instead
        snap = kafka.read_snapshot(cluster.url, load_options(environ={}))
        assert [(b.id, b.rack) for b in snap.cluster.brokers] == [(1, "a"), (2, None)]
        assert (60, 0) in cluster.requests


def test_a_refused_bootstrap_fails_at_once_in_one_line():
    # nothing listens on the port: the connection is refused at once, no waiting for the timeout; exit 1 (the
    # environment failed, not the input)
    port = free_port()
    start = time.monotonic()
    code, out, err = run_here("describe", f"kafka://127.0.0.1:{port}", env={"KAFKA_PLANNER_KAFKA_TIMEOUT": "10"})
    assert time.monotonic() - start < 2
    assert (code, out) == (1, "")
    assert err == (
        f"error: kafka://127.0.0.1:{port}: connection refused at 127.0.0.1:{port}: no broker listens there (check "
        "the host and port)\n"
    )


def test_sasl_plain_from_the_command_config_and_a_wrong_password(kraft, tmp_path):
    kraft.sasl_users = {"alice": "s3cret-pw"}
    good, bad = tmp_path / "good.properties", tmp_path / "bad.properties"
    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="{}";'
    good.write_text(
        f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config={jaas.format('s3cret-pw')}\n"
    )
    bad.write_text(
        f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config={jaas.format('wrong-pw')}\n"
    )
    snap = kafka.read_snapshot(kraft.url, load_options(str(good), timeout=5))
    assert [t.name for t in snap.cluster.topics] == ["orders", "payments"]
    code, out, err = run_here(
        "describe", kraft.url, env={"KAFKA_PLANNER_KAFKA_COMMAND_CONFIG": str(bad), "KAFKA_PLANNER_KAFKA_TIMEOUT": "2"}
    )
    assert (code, out) == (1, "")  # the cluster refused the credentials (issue 32)
    assert err == (
        f"error: {kraft.url}: SASL authentication failed (Authentication failed: Invalid username or "
        f"password): check the user and password in sasl.jaas.config of "
        f"$KAFKA_PLANNER_KAFKA_COMMAND_CONFIG {bad}\n"
    )
    assert "wrong-pw" not in err and "s3cret" not in repr(load_options(str(good)))


def test_missing_authorization_is_one_line(kraft):
    kraft.fail[46] = 31  # ListPartitionReassignments: CLUSTER_AUTHORIZATION_FAILED
    with pytest.raises(PlannerError) as info:
        kafka.read_snapshot(kraft.url, load_options(environ={}))
    assert str(info.value) == (
        f"{kraft.url}: not authorised to list partition reassignments (ClusterAuthorizationFailedError): grant the "
        "client's principal the ACL (Describe/DescribeConfigs on the cluster and topics; Alter/AlterConfigs to act)"
    )
    del kraft.fail[46]
    kraft.fail[32] = 29  # DescribeConfigs: TOPIC_AUTHORIZATION_FAILED per resource
    with pytest.raises(
        PlannerError,
        match=r"not authorised to describe the configs of topic orders \("
        r"TOPIC_AUTHORIZATION_FAILED\)",
    ):
        kafka.read_snapshot(kraft.url, load_options(environ={}))


def test_urls_and_command_configs():
    assert parse_url("kafka://b1,b2:9093").hosts == (("b1", 9092), ("b2", 9093))
    for url, message in (
        ("kafka://u:p@b1:9092", "do not put credentials in the URL"),
        ("kafka://b1:99999", "'b1:99999' is not host:port"),
        ("kafka://", "expected kafka://host:port"),
    ):
        with pytest.raises(PlannerError, match=message):
            parse_url(url)
    props = parse_properties(
        "# client\nsecurity.protocol = SASL_SSL\nsasl.mechanism: SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
        '    username="bob" password="p\\"w";\n'
    )
    opts = options_from_properties(props, "f")
    assert (opts.security_protocol, opts.sasl_mechanism, opts.username, opts.password) == (
        "SASL_SSL",
        "SCRAM-SHA-512",
        "bob",
        'p"w',
    )
    assert 'p\\"w' not in repr(opts) and 'p"w' not in repr(opts)
    with pytest.raises(PlannerError, match="sasl.mechanism is not set, and its default GSSAPI"):
        options_from_properties({"security.protocol": "SASL_SSL"}, "f")
    with pytest.raises(PlannerError, match=r"^f: the value of ssl.truststore.type is not supported: give a PEM file"):
        options_from_properties(
            {"security.protocol": "SSL", "ssl.truststore.location": "/x.jks", "ssl.truststore.type": "JKS"}, "f"
        )
    with pytest.raises(PlannerError, match=r"^\$KAFKA_PLANNER_KAFKA_TIMEOUT: expected a number of seconds"):
        load_options(environ={"KAFKA_PLANNER_KAFKA_TIMEOUT": "soon"})


def test_the_admin_api_source_runs_the_same_validation_as_a_topology_file(kraft):
    # one validation for every source (planner/adapters/validate.py): what `kafka export` writes must load back
    kraft.add_topic("payments", [[1, 2, 3]], configs={"min.insync.replicas": "two"})
    with pytest.raises(PlannerError) as bad_config:
        kafka.read_snapshot(kraft.url, load_options(environ={}))
    assert str(bad_config.value) == (
        f"{kraft.url}: topic payments configs: Invalid value two for configuration min.insync.replicas: "
        "Not a number of type INT"
    )
    del kraft.topics["payments"]
    kraft.add_topic("dup", [[1, 1, 2]])
    with pytest.raises(PlannerError) as duplicate:
        kafka.read_snapshot(kraft.url, load_options(environ={}))
    assert str(duplicate.value) == f"{kraft.url}: topic dup: partition 0: duplicate replicas 1 in [1, 1, 2]"
    del kraft.topics["dup"]
    kraft.partition("orders", 0).isr = [1, 2, 3]  # a broker's answer no controller writes: refused as zk:// does
    with pytest.raises(PlannerError) as isr:
        kafka.read_snapshot(kraft.url, load_options(environ={}))
    assert str(isr.value) == f"{kraft.url}: topic orders partition 0: ISR members 3 not among the replicas [1, 2]"
    kraft.partition("orders", 0).isr, kraft.partition("orders", 0).leader = [1, 2], 3
    with pytest.raises(PlannerError) as leader:
        kafka.read_snapshot(kraft.url, load_options(environ={}))
    assert str(leader.value) == f"{kraft.url}: topic orders partition 0: leader 3 not among the replicas [1, 2]"


def test_a_broker_without_describe_topic_partitions_prints_elr_n_a(kraft):
    # kafka-topics 3.8+ prints `Elr: N/A` / `LastKnownElr: N/A` when the partition info has no ELR
    # (tools/.../TopicCommand.java PartitionDescription.printDescription), as the Metadata path gives it
    kraft.max_versions[75] = -1  # DescribeTopicPartitions not advertised (ZooKeeper mode, KRaft before 3.8)
    snap = kafka.read_snapshot(kraft.url, load_options(environ={}))
    assert snap.cluster.mode == "zookeeper"
    assert "the broker lacks DescribeTopicPartitions: ELR and LastKnownElr unknown (read Metadata)" in snap.notes
    code, out, err = run_cli("describe", kraft.url, "--topic", "orders")
    assert (code, err) == (0, "")
    assert (
        out.splitlines()[1]
        == "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\tElr: N/A\tLastKnownElr: N/A"
    )


def test_stale_metadata_beside_the_controllers_reassignment_reads_the_controllers_replicas():
    """Seen on a real Kafka 4.4 cluster: the second batch of a plan read the cluster right after the first was
    started; the metadata answer (from a broker that had not applied it) said replicas [1, 2] while
    ListPartitionReassignments (the controller) said replicas [1, 2, 4], adding [4]. The read keeps the controller's
    consistent set instead of refusing its own snapshot ("adding 4 not among the replicas [1, 2]")."""
    from planner.adapters.kafka.snapshot import build_cluster
    from planner.model import Broker

    topics = [
        {
            "name": "t",
            "partitions": [
                {"partition_index": 0, "leader_id": 1, "replica_nodes": [1, 2], "isr_nodes": [1, 2]},
                {"partition_index": 1, "leader_id": 2, "replica_nodes": [2, 4], "isr_nodes": [2, 4]},
            ],
        }
    ]
    reassigning = {
        TopicPartition("t", 0): ((1, 2, 4), (4,), ()),  # stale metadata: the controller's set is read
        TopicPartition("t", 1): ((2, 4, 1), (1,), (4,)),  # adding 1 not in [2, 4]: the controller's set too
    }
    cluster = build_cluster([Broker(i) for i in (1, 2, 4)], topics, {}, reassigning, {}, "c1")
    got = [(p.replicas, p.adding, p.removing, p.observed.isr) for p in cluster.topics[0].partitions]
    assert got == [((1, 2, 4), (4,), (), (1, 2)), ((2, 4, 1), (1,), (4,), (2, 4))]
