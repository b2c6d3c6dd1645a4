"""Suite-wide settings and the fixtures every test package shares (implemented in tests/testkit.py).

In CI (CI=true) Hypothesis runs derandomized: each property test draws the same examples on every run, so a green
CI stays green on unchanged code. Locally it keeps drawing new examples (and its database replays failures).
"""

import os
import signal

import pytest
from hypothesis import settings
from testkit import SIX_BROKERS, build_cluster, run_planner, run_planner_here

# A shell running `make test` in the background (`&`, nohup) starts it with SIGINT ignored, and every process the
# tests start would inherit that, so the Ctrl-C tests' children would never see their signal: take Ctrl-C back.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def planner_cli():
    """`planner_cli(*args, cwd=, stdin=, env=, timeout=)`: the CLI as users run it, in a fresh interpreter from the
    repository root: (exit code, stdout, stderr)."""
    return run_planner


@pytest.fixture(scope="session")
def planner_cli_here():
    """`planner_cli_here(*args, env=)`: the CLI in this process, output captured: (exit code, stdout, stderr)."""
    return run_planner_here


@pytest.fixture(scope="session")
def make_cluster():
    """`make_cluster(n, racks=0, topics={name: {partition: replicas}}, states={id: state}, offline=ids,
    cordoned=ids, first_id=0)`: a `Cluster` built in code (`testkit.build_cluster`)."""
    return build_cluster


@pytest.fixture
def topo(tmp_path):
    """The six-broker, three-rack topology file (`testkit.SIX_BROKERS`) the reassignment tests plan on."""
    path = tmp_path / "t.yaml"
    path.write_text(SIX_BROKERS)
    return str(path)


@pytest.fixture(scope="session")
def real_kafka():
    """One real Apache Kafka KRaft cluster for the whole session (tests/realkafka/real_cluster.py): controller 100,
    brokers 1-4 on racks rack-a, rack-b, rack-c, rack-a, PLAINTEXT and SASL_SSL listeners. Started on first use,
    stopped and removed after the session. Tests create their own topics and leave the cluster as they found it."""
    from realkafka.real_cluster import KafkaCluster

    cluster = KafkaCluster()
    try:
        yield cluster.start()
    finally:
        cluster.cleanup()


@pytest.fixture(scope="session")
def real_kafka_zk():
    """One real Apache Kafka 3.9.1 cluster in ZooKeeper mode for the whole session (tests/realkafka/zk_cluster.py):
    Debian's ZooKeeper server, brokers 1-3 on racks rack-a, rack-b, rack-c with zookeeper.connect under the chroot
    /kafka-3.9 (`zk_url`), PLAINTEXT only. Started on first use, stopped and removed after the session."""
    from realkafka.zk_cluster import ZkKafkaCluster

    cluster = ZkKafkaCluster()
    try:
        yield cluster.start()
    finally:
        cluster.cleanup()
