"""zk submit / status / elect-leaders end to end against a real ZooKeeper server, reading the znodes back."""

from __future__ import annotations

import json

import pytest
from zk_support import _state, run_cli

from planner.adapters import zk
from planner.model import PlannerError

PLAN = (
    '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[2,4]},'
    '{"topic":"bar","partition":0,"replicas":[1,4]}]}'
)
ROLLBACK = (
    "Current partition replica assignment\n\n"
    '{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[4,1],"log_dirs":["any","any"]},'
    '{"topic":"foo","partition":0,"replicas":[1,3],"log_dirs":["any","any"]}]}\n\n'
    "Save this to use as the --reassignment-json-file option during rollback\n"
)
ZNODE = (
    '{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[1,4]},'
    '{"topic":"foo","partition":0,"replicas":[2,4]}]}'
)
STATS = (
    "2 partition(s) change replicas; per online broker, before -> after:\n"
    "  broker 1: replicas 2 -> 1, preferred leaders 1 -> 1\n"
    "  broker 2: replicas 2 -> 3, preferred leaders 1 -> 2\n"
    "  broker 3: replicas 2 -> 1, preferred leaders 1 -> 1\n"
    "  broker 4: replicas 2 -> 3, preferred leaders 1 -> 0\n"
    "  replica spread (max-min) 0 -> 2; preferred-leader spread 0 -> 2\n"
)


def chroot_of(url: str) -> str:
    return url[url.index("/", len("zk://")) :]


@pytest.fixture
def plan_file(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text(PLAN)
    return str(path)


def test_submit_dry_run_prints_and_writes_nothing(simple_url, plan_file, kazoo_client):
    code, out, err = run_cli("zk", "submit", simple_url, "--reassignment-json-file", plan_file)
    assert code == 0
    assert (
        out == ROLLBACK + f"Dry run: would create /admin/reassign_partitions with\n{ZNODE}\n"
        "Nothing was written; add --execute to start the reassignment.\n"
    )
    assert err == STATS
    assert kazoo_client.exists(chroot_of(simple_url) + "/admin/reassign_partitions") is None


def test_submit_execute_then_status_end_to_end(simple_url, plan_file, kazoo_client):
    root = chroot_of(simple_url)
    code, out, err = run_cli("zk", "submit", simple_url, "--reassignment-json-file", plan_file, "--execute", "-q")
    assert (code, err) == (0, "")
    assert out == ROLLBACK + "Successfully started reassignment of partitions.\n"
    data, _ = kazoo_client.get(root + "/admin/reassign_partitions")
    assert data.decode() == ZNODE  # Kafka's ReassignPartitionsZNode format (ZkData.scala)

    code, out, _ = run_cli("zk", "status", simple_url, "--reassignment-json-file", plan_file)
    assert code == 0
    # 3.x (the default): the empty line --bootstrap-server --verify prints after the states (no log-dir moves)
    assert out == (
        "Status of partition reassignment:\n"
        "Reassignment of partition bar-0 is still in progress.\n"
        "Reassignment of partition foo-0 is still in progress.\n"
        "\n"
    )

    # the controller finishes foo-0 and gives up bar-0, in KafkaController.onPartitionReassignment's order: the
    # leader moves into the target replicas and the removed ones leave the ISR (B3, B4: the state znode), then the
    # topic znode gets the target replicas (B6); the request node is deleted
    kazoo_client.set(root + "/brokers/topics/foo/partitions/0/state", _state(2, [2, 4]).encode())
    kazoo_client.set(
        root + "/brokers/topics/foo",
        b'{"removing_replicas":{},"partitions":{"0":[2,4],"1":[3,2],"2":[2,4]},'
        b'"topic_id":"AbCdEfGhIjKlMnOpQrStUw","adding_replicas":{},"version":3}',
    )
    kazoo_client.delete(root + "/admin/reassign_partitions")
    expected = {
        None: (
            "Status of partition reassignment:\n"
            "There is no active reassignment of partition bar-0, but replica set is 4,1 rather than 1,4.\n"
            "Reassignment of partition foo-0 is completed.\n"
            "\n"
        ),
        "3.2": (
            "Status of partition reassignment:\n"
            "There is no active reassignment of partition bar-0, but replica set is 4,1 rather than 1,4.\n"
            "Reassignment of partition foo-0 is complete.\n"
            "\n"
        ),
        # 2.6-2.8 --zookeeper --verify: the tool's two warnings first (ReassignPartitionsCommand.scala main() and
        # verifyAssignment(zkClient, ...)); before, they were missing
        "2.7": (
            "Warning: --zookeeper is deprecated, and will be removed in a future version of Kafka.\n"
            "Warning: because you are using the deprecated --zookeeper option, the results may be incomplete.  "
            "Use --bootstrap-server instead for more accurate results.\n"
            "Status of partition reassignment:\n"
            "There is no active reassignment of partition bar-0, but replica set is 4,1 rather than 1,4.\n"
            "Reassignment of partition foo-0 is complete.\n"
        ),
        "2.3": (
            "Status of partition reassignment: \n"
            "ERROR: Assigned replicas (4,1) don't match the list of replicas for reassignment (1,4) for partition "
            "bar-0\n"
            "Reassignment of partition bar-0 failed\n"
            "Reassignment of partition foo-0 completed successfully\n"
        ),
        "1.1": (
            "Status of partition reassignment: \n"
            "ERROR: Assigned replicas (4,1) don't match the list of replicas for reassignment (1,4) for partition "
            "[bar,0]\n"
            "Reassignment of partition [bar,0] failed\n"
            "Reassignment of partition [foo,0] completed successfully\n"
        ),
    }
    for version, text in expected.items():
        args = ("--kafka-version", version) if version else ()
        code, out, _ = run_cli("zk", "status", simple_url, "--reassignment-json-file", plan_file, *args)
        assert (code, out) == (0, text)


def test_status_counts_kip455_reassignment_as_in_progress(kafka_url, tmp_path):
    plan = tmp_path / "p.json"
    plan.write_text(
        '{"version":1,"partitions":[{"topic":"moving","partition":0,"replicas":[3,4]},'
        '{"topic":"legacy","partition":1,"replicas":[2,3,4]},{"topic":"legacy","partition":0,"replicas":[1,2,3]}]}'
    )
    code, out, _ = run_cli("zk", "status", kafka_url, "--reassignment-json-file", str(plan))
    assert code == 0
    assert out == (
        "Status of partition reassignment:\n"
        "Reassignment of partition legacy-0 is completed.\n"
        "Reassignment of partition legacy-1 is still in progress.\n"  # in /admin/reassign_partitions
        "Reassignment of partition moving-0 is still in progress.\n"
        "\n"
    )  # adding/removing in the topic znode


def test_submit_refuses_when_a_reassignment_exists(simple_url, plan_file, kazoo_client):
    node = chroot_of(simple_url) + "/admin/reassign_partitions"
    theirs = b'{"version":1,"partitions":[{"topic":"foo","partition":1,"replicas":[1,2]}]}'
    kazoo_client.create(node, theirs, makepath=True)
    code, out, err = run_cli("zk", "submit", simple_url, "--reassignment-json-file", plan_file, "--execute")
    assert (code, out, err) == (2, "", "error: There is an existing assignment running.\n")
    assert kazoo_client.get(node)[0] == theirs


def test_submit_never_overwrites_a_racing_writer(simple_url, kazoo_client):
    node = chroot_of(simple_url) + "/admin/reassign_partitions"
    theirs = b'{"version":1,"partitions":[{"topic":"foo","partition":1,"replicas":[1,2]}]}'
    with zk.connect(simple_url, zk.ZkOptions()) as session:
        snap = zk.read_consistent(session)
        assert snap.reassigning is None
        kazoo_client.create(node, theirs, makepath=True)  # another tool wins the race after our check
        with pytest.raises(PlannerError) as exc:
            session.create(zk.REASSIGN_PATH, ZNODE, lambda current: f"exists: {current.decode()}")
    assert str(exc.value) == f"exists: {theirs.decode()}"
    assert kazoo_client.get(node)[0] == theirs


@pytest.mark.parametrize(
    "plan,message",
    [
        ('{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[2,9]}]}', "Unknown broker id 9"),
        ('{"version":1,"partitions":[{"topic":"quux","partition":0,"replicas":[1,2]}]}', "Topic quux not found."),
        (
            '{"version":1,"partitions":[{"topic":"foo","partition":7,"replicas":[1,2]}]}',
            "Unable to find partition: foo-7",
        ),
        (
            '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,1]}]}',
            "Partition replica lists may not contain duplicate entries: foo-0 contains multiple entries for 1",
        ),
        ('{"version":1,"partitions":[]}', "Partition reassignment list cannot be empty"),
    ],
)
def test_submit_validates_against_the_live_cluster(simple_url, tmp_path, kazoo_client, plan, message):
    path = tmp_path / "plan.json"
    path.write_text(plan)
    code, out, err = run_cli("zk", "submit", simple_url, "--reassignment-json-file", str(path), "--execute")
    assert (code, out, err) == (2, "", f"error: {message}\n")
    assert kazoo_client.exists(chroot_of(simple_url) + "/admin/reassign_partitions") is None


def test_submit_refuses_log_dir_moves_it_cannot_make(simple_url, tmp_path, kazoo_client):
    # ZooKeeper carries no log dirs: Kafka's tool refuses a plan naming one over --zookeeper (2.6+ executeAssignment:
    # "bootstrap-server needs to be provided when replica reassignments are present.") rather than drop it
    path = tmp_path / "plan.json"
    path.write_text(
        '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[2,4],"log_dirs":["/data/b","any"]},'
        '{"topic":"bar","partition":0,"replicas":[1,4],"log_dirs":["any","any"]}]}'
    )
    for args in ((), ("--execute",)):
        code, out, err = run_cli("zk", "submit", simple_url, "--reassignment-json-file", str(path), *args)
        assert (code, out) == (2, "")
        assert err == (
            "error: bootstrap-server needs to be provided when replica reassignments are present. "
            f"{path} moves foo-0's replica on broker 2 to log dir /data/b, which a reassignment through "
            "ZooKeeper cannot do: 'kafka-planner kafka submit' makes it (AlterReplicaLogDirs). Nothing was written.\n"
        )
    assert kazoo_client.exists(chroot_of(simple_url) + "/admin/reassign_partitions") is None
    path.write_text(
        '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[2,4],"log_dirs":["any","any"]}]}'
    )
    code, out, err = run_cli("zk", "submit", simple_url, "--reassignment-json-file", str(path), "-q")
    assert (code, err) == (0, "")


def test_submit_unknown_broker_when_broker_is_offline(simple_url, plan_file, kazoo_client):
    kazoo_client.delete(chroot_of(simple_url) + "/brokers/ids/4")  # broker 4 stops: its registration goes
    code, _, err = run_cli("zk", "submit", simple_url, "--reassignment-json-file", plan_file, "--execute")
    assert (code, err) == (2, "error: Unknown broker id 4\n")


def test_elect_leaders_execute_and_refuse_second(simple_url, tmp_path, kazoo_client):
    path = tmp_path / "elect.json"
    path.write_text(
        '{"partitions":[{"topic":"foo","partition":2},{"topic":"foo","partition":1},{"topic":"nope","partition":0}]}'
    )
    node = chroot_of(simple_url) + "/admin/preferred_replica_election"

    code, out, err = run_cli("zk", "elect-leaders", simple_url, "--path-to-json-file", str(path))
    assert code == 0
    assert out == (
        "Dry run: would create /admin/preferred_replica_election with\n"
        '{"version":1,"partitions":[{"topic":"foo","partition":1},{"topic":"foo","partition":2}]}\n'
        "Nothing was written; add --execute to start the election.\n"
        "Skipping preferred replica leader election for partition nope-0 since it doesn't exist.\n"
    )
    # foo-1 [3,2] is led by 2 (not preferred); foo-2 [2,4] is led by 2 (preferred)
    assert err == (
        "2 partition(s): 1 already led by the preferred replica, 1 to move leadership "
        "(if the preferred replica is alive and in the ISR)\n"
    )
    assert kazoo_client.exists(node) is None

    code, out, _ = run_cli("zk", "elect-leaders", simple_url, "--path-to-json-file", str(path), "--execute", "-q")
    assert code == 0
    # PreferredReplicaLeaderElectionCommand 2.0-2.8 (ZK): created (mkString(",")), started (Set), then skipped
    assert out == (
        "Created preferred replica election path with foo-1,foo-2\n"
        "Successfully started preferred replica election for partitions Set(foo-1, foo-2)\n"
        "Skipping preferred replica leader election for partition nope-0 since it doesn't exist.\n"
    )
    assert json.loads(kazoo_client.get(node)[0]) == {
        "version": 1,
        "partitions": [{"topic": "foo", "partition": 1}, {"topic": "foo", "partition": 2}],
    }

    for extra in ((), ("--execute",)):
        code, _, err = run_cli("zk", "elect-leaders", simple_url, "--path-to-json-file", str(path), "-q", *extra)
        assert (code, err) == (
            2,
            "error: Preferred replica leader election currently in progress for foo-1,foo-2. Aborting operation\n",
        )


def test_elect_leaders_nothing_valid_lists_the_skipped_then_refuses(simple_url, tmp_path, kazoo_client):
    path = tmp_path / "elect.json"
    path.write_text('{"partitions":[{"topic":"nope","partition":0},{"topic":"foo","partition":9}]}')
    code, out, err = run_cli("zk", "elect-leaders", simple_url, "--path-to-json-file", str(path), "--execute", "-q")
    assert (code, err) == (2, "error: Preferred replica election data is empty\n")
    assert out == (
        "Skipping preferred replica leader election for partition nope-0 since it doesn't exist.\n"
        "Skipping preferred replica leader election for partition foo-9 since it doesn't exist.\n"
    )
    assert kazoo_client.exists(chroot_of(simple_url) + "/admin/preferred_replica_election") is None


def test_election_in_progress_message_reads_the_running_election():
    current = b'{"version":1,"partitions":[{"topic":"t","partition":3},{"topic":"a","partition":0}]}'
    assert zk.election_in_progress_message("zk://h:1", current) == (
        "Preferred replica leader election currently in progress for a-0,t-3. Aborting operation"
    )
    assert zk.election_in_progress_message("zk://h:1", b"{") == (
        "Preferred replica leader election currently in progress for /admin/preferred_replica_election "
        "(unreadable content). Aborting operation"
    )


@pytest.mark.parametrize(
    "text,message",
    [
        ("", "Replica election data is empty"),
        ('{"version":1}', 'Replica election data is missing "partitions" field'),
        (
            '{"partitions":[{"topic":"foo","partition":1},{"topic":"foo","partition":1}]}',
            "Replica election data contains duplicate partitions: foo-1",
        ),
        ('{"partitions":[{"topic":"nope","partition":0}]}', "Preferred replica election data is empty"),
    ],
)
def test_elect_leaders_bad_input(simple_url, tmp_path, kazoo_client, text, message):
    path = tmp_path / "elect.json"
    path.write_text(text)
    code, _, err = run_cli("zk", "elect-leaders", simple_url, "--path-to-json-file", str(path), "--execute", "-q")
    assert (code, err) == (2, f"error: {message}\n")
    assert kazoo_client.exists(chroot_of(simple_url) + "/admin/preferred_replica_election") is None


def test_submit_with_simulated_offline_broker(simple_url, plan_file, kazoo_client):
    code, out, err = run_cli(
        "zk", "submit", simple_url, "--reassignment-json-file", plan_file, "--offline-brokers", "4"
    )
    assert (code, out, err) == (2, "", "error: Unknown broker id 4\n")
    code, _, err = run_cli("zk", "submit", simple_url, "--reassignment-json-file", plan_file, "--offline-brokers", "8")
    assert (code, err) == (2, "error: --offline-brokers: unknown broker id(s) 8; the cluster has brokers 1,2,3,4\n")
