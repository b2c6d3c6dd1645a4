"""Reading a live cluster from a real ZooKeeper server: describe zk://… byte for byte, export round trip, the
decoders."""

from __future__ import annotations

import pytest
from zk_support import run_cli

from planner.adapters import zk
from planner.adapters.topology_yaml import load_topology
from planner.model import NO_LEADER, OFFLINE, ONLINE, ObservedState, PlannerError, TopicPartition

T = "\t"

DESCRIBE_2_3 = (
    "Topic:doomed\tPartitionCount:1\tReplicationFactor:1\tConfigs:\tMarkedForDeletion:true\n"
    "\tTopic: doomed\tPartition: 0\tLeader: 2\tReplicas: 2\tIsr: 2\n"
    "Topic:legacy\tPartitionCount:2\tReplicationFactor:3\tConfigs:\n"
    "\tTopic: legacy\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\n"
    "\tTopic: legacy\tPartition: 1\tLeader: 2\tReplicas: 2,3,1\tIsr: 2,1\n"
    "Topic:modern\tPartitionCount:2\tReplicationFactor:2\tConfigs:\n"
    "\tTopic: modern\tPartition: 0\tLeader: -1\tReplicas: 5,1\tIsr: 5\n"
    "\tTopic: modern\tPartition: 1\tLeader: 1\tReplicas: 1,5\tIsr: 1\n"
    "Topic:moving\tPartitionCount:2\tReplicationFactor:4\tConfigs:cleanup.policy=compact,segment.bytes=104857600\n"
    "\tTopic: moving\tPartition: 0\tLeader: 1\tReplicas: 3,4,1,2\tIsr: 1,2,3\n"
    "\tTopic: moving\tPartition: 1\tLeader: 4\tReplicas: 4,3\tIsr: 4,3\n"
)

DESCRIBE_2_7 = (
    "Topic: doomed\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \tMarkedForDeletion: true\n"
    "\tTopic: doomed\tPartition: 0\tLeader: 2\tReplicas: 2\tIsr: 2\tMarkedForDeletion: true\n"
    "Topic: legacy\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: \n"
    "\tTopic: legacy\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\n"
    "\tTopic: legacy\tPartition: 1\tLeader: 2\tReplicas: 2,3,1\tIsr: 2,1\n"
    "Topic: modern\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: \n"
    "\tTopic: modern\tPartition: 0\tLeader: none\tReplicas: 5,1\tIsr: 5\n"
    "\tTopic: modern\tPartition: 1\tLeader: 1\tReplicas: 1,5\tIsr: 1\n"
    "Topic: moving\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: cleanup.policy=compact,segment.bytes=104857600\n"
    "\tTopic: moving\tPartition: 0\tLeader: 1\tReplicas: 3,4,1,2\tIsr: 1,2,3\tAdding Replicas: 3,4\tRemoving Replicas: "
    "1,2\n"
    "\tTopic: moving\tPartition: 1\tLeader: 4\tReplicas: 4,3\tIsr: 4,3\n"
)

NA = "\tElr: N/A\tLastKnownElr: N/A"
# 3.0+ prints topics in the AdminClient's HashMap order (formats/describe.py admin_client_order): legacy first
DESCRIBE_3_8 = (
    "Topic: legacy\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: \n"
    f"\tTopic: legacy\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3{NA}\n"
    f"\tTopic: legacy\tPartition: 1\tLeader: 2\tReplicas: 2,3,1\tIsr: 2,1{NA}\n"
    "Topic: doomed\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n"
    f"\tTopic: doomed\tPartition: 0\tLeader: 2\tReplicas: 2\tIsr: 2{NA}\n"
    "Topic: modern\tTopicId: NPmZHyhbR9y00wMglMH2sg\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: \n"
    f"\tTopic: modern\tPartition: 0\tLeader: none\tReplicas: 5,1\tIsr: 5{NA}\n"
    f"\tTopic: modern\tPartition: 1\tLeader: 1\tReplicas: 1,5\tIsr: 1{NA}\n"
    "Topic: moving\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: cleanup.policy=compact,segment.bytes=104857600\n"
    "\tTopic: moving\tPartition: 0\tLeader: 1\tReplicas: 3,4,1,2\tIsr: 1,2,3\tAdding Replicas: 3,4\tRemoving Replicas: "
    "1,2"
    f"{NA}\n"
    f"\tTopic: moving\tPartition: 1\tLeader: 4\tReplicas: 4,3\tIsr: 4,3{NA}\n"
)


@pytest.mark.parametrize("version,expected", [("2.3", DESCRIBE_2_3), ("2.7", DESCRIBE_2_7), ("3.8", DESCRIBE_3_8)])
def test_describe_live_cluster_byte_for_byte(kafka_url, version, expected):
    code, out, err = run_cli("describe", kafka_url, "--kafka-version", version)
    assert (code, err) == (0, "")
    assert out == expected


def test_read_cluster_brokers_all_registration_versions(kafka_url):
    cluster = zk.read_cluster(kafka_url)
    assert cluster.mode == "zookeeper"
    assert cluster.name == "L0Sm6PrcTvyhSKT2VbTPlw"
    got = [(b.id, b.host, b.port, b.rack, b.state) for b in cluster.brokers]
    assert got == [
        (1, "kafka1", 9092, None, ONLINE),  # v1: host/port
        (2, "kafka2", 9092, None, ONLINE),  # v2: endpoints
        (3, "kafka3", 9092, "r1", ONLINE),  # v4, rack
        (4, "kafka4", 9093, "r2", ONLINE),  # v5, SSL only: host null in the znode, taken from the endpoint
        (5, None, None, None, OFFLINE),  # only in assignments
    ]


def test_read_cluster_topics_states_and_flags(kafka_url):
    cluster = zk.read_cluster(kafka_url)
    assert [t.name for t in cluster.topics] == ["doomed", "legacy", "modern", "moving"]
    assert cluster.topic("doomed").marked_for_deletion and not cluster.topic("legacy").marked_for_deletion
    assert cluster.topic("modern").topic_id == "NPmZHyhbR9y00wMglMH2sg"
    assert cluster.topic("legacy").topic_id is None
    assert dict(cluster.topic("moving").configs) == {"cleanup.policy": "compact", "segment.bytes": "104857600"}
    assert dict(cluster.topic("modern").configs) == {}
    moving0 = cluster.topic("moving").partition(0)
    assert (moving0.replicas, moving0.adding, moving0.removing) == ((3, 4, 1, 2), (3, 4), (1, 2))
    assert moving0.observed == ObservedState(leader=1, isr=(1, 2, 3), leader_epoch=2)
    assert cluster.topic("modern").partition(0).observed == ObservedState(NO_LEADER, (5,), 4)
    # the legacy /admin/reassign_partitions request does not change what the topic znode says
    assert cluster.topic("legacy").partition(1).replicas == (2, 3, 1)


def test_snapshot_carries_legacy_reassignment(kafka_url):
    snap = zk.read_snapshot(kafka_url, zk.ZkOptions())
    assert snap.reassigning == {TopicPartition("legacy", 1): (2, 3, 4)}
    assert snap.electing is False
    assert snap.attempts == 1


def test_export_round_trip_gives_the_same_describe(kafka_url, tmp_path):
    # `moving` is mid-reassignment on partition 0 only: replica lists of 4 and 2 in one topic, RF 2 for both
    out = tmp_path / "cluster.yaml"
    code, stdout, err = run_cli("zk", "export", kafka_url, "-o", str(out))
    assert code == 0 and stdout == ""
    assert err == f"wrote {out}: 5 brokers, 4 topics, 7 partitions\n"
    moving = load_topology(str(out)).topic("moving")
    assert [(p.replicas, p.adding, p.removing) for p in moving.partitions] == [
        ((3, 4, 1, 2), (3, 4), (1, 2)),
        ((4, 3), (), ()),
    ]
    for version in ("2.3", "2.7", "3.8"):
        _, live, _ = run_cli("describe", kafka_url, "--kafka-version", version)
        _, from_file, _ = run_cli("describe", str(out), "--kafka-version", version)
        assert from_file == live
    assert load_topology(str(out)) == zk.read_cluster(kafka_url)


def test_export_to_stdout_is_the_topology(kafka_url):
    code, out, err = run_cli("zk", "export", kafka_url)
    assert code == 0 and err == ""
    assert out.startswith(
        "cluster: L0Sm6PrcTvyhSKT2VbTPlw\nmode: zookeeper\nbrokers:\n  - {id: 1, host: kafka1, port: 9092}\n"
    )
    assert "  - {id: 5, state: offline}\n" in out


def test_describe_offline_brokers_option_on_live_cluster(kafka_url):
    code, out, _ = run_cli(
        "describe", kafka_url, "--offline-brokers", "1", "--unavailable-partitions", "--kafka-version", "2.7"
    )
    assert code == 0
    # broker 1 led legacy-0 (ISR 1,2,3 -> 2,3, leader 2) and modern-1 (ISR [1] only: no leader, ISR kept)
    assert out == (
        "\tTopic: modern\tPartition: 0\tLeader: none\tReplicas: 5,1\tIsr: 5\n"
        "\tTopic: modern\tPartition: 1\tLeader: none\tReplicas: 1,5\tIsr: 1\n"
    )


def test_snapshot_is_read_again_when_the_cluster_changes(kafka_url, kazoo_client):
    chroot = kafka_url[kafka_url.index("/", len("zk://")) :]
    calls = []

    def progress(message):
        calls.append(message)
        if len(calls) == 1:  # after the broker list was read: a broker registers
            kazoo_client.create(
                chroot + "/brokers/ids/7",
                b'{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
                b'"endpoints":["PLAINTEXT://kafka7:9092"],"jmx_port":-1,"host":"kafka7",'
                b'"timestamp":"1700000000000","port":9092,"version":5}',
            )

    snap = zk.read_snapshot(kafka_url, zk.ZkOptions(), progress)
    assert snap.attempts == 2
    assert any("changed while reading" in m for m in calls)
    assert 7 in snap.cluster.broker_ids and snap.cluster.broker(7).state == ONLINE


def test_snapshot_notices_a_missing_znode_created_while_reading(kafka_url, kazoo_client):
    # legacy-0 has no state znode yet (the controller has not initialised it); it appears after the states were read
    chroot = kafka_url[kafka_url.index("/", len("zk://")) :]
    state = chroot + "/brokers/topics/legacy/partitions/0/state"
    data = kazoo_client.get(state)[0]
    kazoo_client.delete(state)
    calls = []

    def progress(message):
        calls.append(message)
        if message == "read 7 partition states" and not kazoo_client.exists(state):
            kazoo_client.create(state, data)

    snap = zk.read_snapshot(kafka_url, zk.ZkOptions(), progress)
    assert snap.attempts == 2
    assert calls.count("the cluster changed while reading; reading again (1/5)") == 1
    assert snap.cluster.topic("legacy").partition(0).observed == ObservedState(1, (1, 2, 3), 8)


def test_snapshot_gives_up_when_the_cluster_keeps_changing(kafka_url, kazoo_client):
    chroot = kafka_url[kafka_url.index("/", len("zk://")) :]
    n = [0]

    def progress(message):
        if message.startswith("reading"):  # after the lists were read, every time: another broker registers
            n[0] += 1
            kazoo_client.create(
                chroot + f"/brokers/ids/{10 + n[0]}",
                b'{"version":1,"host":"late","port":9092,"jmx_port":-1,"timestamp":"1"}',
            )

    with pytest.raises(PlannerError) as exc:
        zk.read_snapshot(kafka_url, zk.ZkOptions(), progress)
    assert str(exc.value) == (
        f"{kafka_url}: the cluster kept changing while reading (5 attempts); "
        "no consistent snapshot, try again when it is quieter"
    )
    assert n[0] == 5


# -- decoders (pure) --------------------------------------------------------------------------------------------

U = "zk://h:2181"


def test_broker_v1_vector():
    # BrokerEndPointTest: v1 registration → PLAINTEXT 172.16.8.243:9091
    b = zk.decode_broker(
        U, 1, b'{"jmx_port":-1,"timestamp":"1420485325400","host":"172.16.8.243","version":1,"port":9091}'
    )
    assert (b.host, b.port, b.rack) == ("172.16.8.243", 9091, None)


@pytest.mark.parametrize(
    "version,rack_json,rack", [(3, ',"rack":"dc1"', "dc1"), (4, ',"rack":null', None), (5, "", None)]
)
def test_broker_v3_v4_v5_vectors(version, rack_json, rack):
    data = (
        '{"version":%d,"host":"host1","port":9092,"jmx_port":9999,"timestamp":"2233345666",'
        '"endpoints":["CLIENT://host1:9092", "REPLICATION://host1:9093"],'
        '"listener_security_protocol_map":{"CLIENT":"SSL", "REPLICATION":"PLAINTEXT"}%s}' % (version, rack_json)
    ).encode()
    b = zk.decode_broker(U, 3, data)
    assert (b.id, b.host, b.port, b.rack) == (3, "host1", 9092, rack)


def test_broker_ipv6_endpoint_without_plaintext():
    b = zk.decode_broker(
        U, 2, b'{"version":4,"host":null,"port":-1,"jmx_port":-1,"timestamp":"1","endpoints":["SSL://[::1]:9093"]}'
    )
    assert (b.host, b.port) == ("::1", 9093)


def test_broker_unsupported_version():
    with pytest.raises(PlannerError) as exc:
        zk.decode_broker(U, 1, b'{"version":0,"host":"a","port":1,"jmx_port":-1}')
    assert str(exc.value) == (
        "zk://h:2181: /brokers/ids/1: Unsupported version of broker registration: "
        '{"version":0,"host":"a","port":1,"jmx_port":-1}'
    )


def test_topic_znode_versions():
    v1 = zk.decode_topic(U, "t", b'{"version":1,"partitions":{"1":[2,3,1],"0":[1,2,3]}}')
    assert (v1.partitions, v1.adding, v1.removing, v1.topic_id) == ({0: (1, 2, 3), 1: (2, 3, 1)}, {}, {}, None)
    v3 = zk.decode_topic(
        U,
        "t",
        b'{"removing_replicas":{"0":[1]},"partitions":{"0":[2,1]},'
        b'"topic_id":"NPmZHyhbR9y00wMglMH2sg","adding_replicas":{"0":[2]},"version":3}',
    )
    assert (v3.partitions, v3.adding, v3.removing, v3.topic_id) == (
        {0: (2, 1)},
        {0: (2,)},
        {0: (1,)},
        "NPmZHyhbR9y00wMglMH2sg",
    )


def test_topic_znode_with_a_gap_is_refused():
    with pytest.raises(PlannerError) as exc:
        zk.decode_topic(U, "t", b'{"version":1,"partitions":{"0":[1],"2":[1]}}')
    assert str(exc.value) == "zk://h:2181: /brokers/topics/t: partition ids must be 0..1; missing 1"


def test_state_and_config_znodes():
    st = zk.decode_state(U, "/s", b'{"controller_epoch":33,"leader":102,"version":1,"leader_epoch":8,"isr":[102,103]}')
    assert st == ObservedState(102, (102, 103), 8)
    assert zk.decode_config(
        U, "/c", b'{"version":1,"config":{"cleanup.policy":"compact","segment.bytes":"104857600"}}'
    ) == {"cleanup.policy": "compact", "segment.bytes": "104857600"}
    assert zk.decode_config(U, "/c", b'{"version":1,"config":{}}') == {}


def test_election_znode_encoding():
    # PreferredReplicaElectionZNode format (ZkData.scala), sorted by topic then partition
    text = zk.encode_election([TopicPartition("foo", 1), TopicPartition("bar", 0), TopicPartition("foo", 0)])
    assert text == (
        '{"version":1,"partitions":[{"topic":"bar","partition":0},{"topic":"foo","partition":0},'
        '{"topic":"foo","partition":1}]}'
    )


@pytest.mark.parametrize(
    "url,hosts,chroot",
    [
        ("zk://zk1:2181", (("zk1", 2181),), ""),
        ("zk://zk1:2181,zk2:2182/kafka/prod", (("zk1", 2181), ("zk2", 2182)), "/kafka/prod"),
        ("zk://127.0.0.1:2181/", (("127.0.0.1", 2181),), ""),
        ("zk://[::1]:2181/k", (("[::1]", 2181),), "/k"),
        ("zk://zk1,zk2:2182/kafka", (("zk1", 2181), ("zk2", 2182)), "/kafka"),  # no port: ZooKeeper's 2181
    ],
)
def test_parse_url(url, hosts, chroot):
    u = zk.parse_url(url)
    assert (u.hosts, u.chroot) == (hosts, chroot)


@pytest.mark.parametrize(
    "url,message",
    [
        ("zk://", "zk://: no ZooKeeper host: expected zk://host:port[,host:port...][/chroot]"),
        ("zk://zk1:", "zk://zk1:: 'zk1:' is not host:port (e.g. zk://zk1:2181,zk2:2181/kafka)"),
        ("zk://zk1:99999", "zk://zk1:99999: 'zk1:99999' is not host:port (e.g. zk://zk1:2181,zk2:2181/kafka)"),
        (
            "zk://u:secret@zk1:2181",
            "zk://...: do not put credentials in the URL; use --zk-auth-file or KAFKA_PLANNER_ZK_AUTH",
        ),
    ],
)
def test_parse_url_errors(url, message):
    with pytest.raises(PlannerError) as exc:
        zk.parse_url(url)
    assert str(exc.value) == message


def test_connection_options_from_environment(tmp_path):
    assert zk.options_from_env({}) == zk.ZkOptions()
    opts = zk.options_from_env(
        {
            "KAFKA_PLANNER_ZK_TIMEOUT": "2.5",
            "KAFKA_PLANNER_ZK_AUTH": "a:b",
            "KAFKA_PLANNER_ZK_CA_FILE": "ca.pem",
            "KAFKA_PLANNER_ZK_CERT_FILE": "c.pem",
            "KAFKA_PLANNER_ZK_KEY_FILE": "k.pem",
        }
    )
    assert opts == zk.ZkOptions(timeout=2.5, auth="a:b", ca_file="ca.pem", cert_file="c.pem", key_file="k.pem")
    for bad in ("soon", "0", "-1", "nan"):
        with pytest.raises(PlannerError) as exc:
            zk.options_from_env({"KAFKA_PLANNER_ZK_TIMEOUT": bad})
        assert str(exc.value) == "$KAFKA_PLANNER_ZK_TIMEOUT: expected a number of seconds (at least 0.1)"
    with pytest.raises(PlannerError) as exc:
        zk.options_from_env({"KAFKA_PLANNER_ZK_CERT_FILE": "c.pem"})
    assert (
        str(exc.value) == "$KAFKA_PLANNER_ZK_CERT_FILE/$KAFKA_PLANNER_ZK_KEY_FILE need $KAFKA_PLANNER_ZK_CA_FILE (TLS)"
    )


def test_auth_from_file_and_environment(tmp_path):
    f = tmp_path / "auth"
    f.write_text("kafka:s3cret\n")
    assert zk.auth_from(str(f), {}) == "kafka:s3cret"
    assert zk.auth_from(None, {"KAFKA_PLANNER_ZK_AUTH": "a:b"}) == "a:b"
    assert zk.auth_from(None, {}) is None
    f.write_text("no-colon")
    with pytest.raises(PlannerError) as exc:
        zk.auth_from(str(f), {})
    assert str(exc.value) == f"--zk-auth-file {f}: expected one line user:password for ZooKeeper digest authentication"
    assert "s3cret" not in repr(zk.ZkOptions(auth="kafka:s3cret"))
