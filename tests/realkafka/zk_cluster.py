"""A real Apache Kafka 3.9.1 cluster in ZooKeeper mode on 127.0.0.1 for the tests (issue 29 part 6): Debian's
ZooKeeper server and three brokers (`zookeeper.connect=127.0.0.1:PORT/CHROOT`) over three racks, PLAINTEXT only.

3.9 is the last release line with ZooKeeper mode (4.0 removed it). The jars come from `make kafka-zk`
(tests/kafka/zk-mode/pom.xml, copied into .kafka/3.9.1/lib); nothing is downloaded here. The JVMs run in their own
process groups and are stopped like real_cluster's (stop(), ZooKeeper last; the sidecar reaper of tests/reaper.py when
pytest ends otherwise).

`ZkKafkaCluster` is a `KafkaCluster` (admin, live_brokers, wait_for_brokers, create_topic, wait_for_topic,
delete_topics, stop_broker, start_broker, run_tool) whose nodes are ZooKeeper-mode brokers, plus `zk_url` (the
planner's zk:// URL with the chroot) and `zk_hosts`.
"""

from __future__ import annotations

import socket
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from realkafka.real_cluster import (
    BROKER_SETTINGS,
    ROOT,
    KafkaCluster,
    Node,
    _kill_group,
    _spawn,
    free_port,
    java,
)
from reaper import remove_at_end

KAFKA_ZK_VERSION = "3.9.1"  # tests/kafka/zk-mode/pom.xml's kafka.version and the Makefile's KAFKA_ZK_VERSION
LIB = ROOT / ".kafka" / KAFKA_ZK_VERSION / "lib"
LOG4J = ROOT / "tests" / "kafka" / "zk-mode" / "log4j.properties"
BROKERS = {1: "rack-a", 2: "rack-b", 3: "rack-c"}
CHROOT = "/kafka-3.9"

# Debian's zookeeper package (`make zookeeper`), as tests/adapters/zk/zk_support.py runs it.
ZK_JARS = [
    "/usr/share/java/zookeeper.jar",
    "/usr/share/java/zookeeper-jute.jar",
    "/usr/share/java/slf4j-api.jar",
    "/usr/share/java/slf4j-simple.jar",
]
ZK_JVM = ["-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]

# KRaft-only settings of real_cluster's BROKER_SETTINGS left out; ZooKeeper-mode ones added.
ZK_BROKER_SETTINGS = {
    **{k: v for k, v in BROKER_SETTINGS.items() if not k.startswith("broker.")},
    "zookeeper.session.timeout.ms": "6000",
    "zookeeper.connection.timeout.ms": "30000",
    "controlled.shutdown.enable": "true",
}


def zk_classpath() -> str:
    if not LIB.is_dir() or not any(LIB.glob("kafka_2.13-*.jar")):
        raise RuntimeError(f"{LIB}: Apache Kafka {KAFKA_ZK_VERSION} jars missing: run `make kafka-zk` first")
    return str(LIB / "*")


def _srvr(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"srvr")
            return s.recv(64).startswith(b"Zookeeper version")
    except OSError:
        return False


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class ZkKafkaCluster(KafkaCluster):
    """Debian's ZooKeeper server and brokers 1-3 (racks rack-a, rack-b, rack-c) of Kafka 3.9.1 in ZooKeeper mode."""

    log_options = [f"-Dlog4j.configuration=file:{LOG4J}", "-Dkafka.test.log.level=WARN"]

    def __init__(self, workdir: Path | None = None, brokers: dict[int, str] | None = None):
        self.version = KAFKA_ZK_VERSION
        self.classpath = zk_classpath()
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="realkafka-zk-"))
        if workdir is None:
            remove_at_end(self.workdir)  # by the reaper, should pytest end before `cleanup`
        self.controller_id = -1  # no KRaft controller node; the active controller is one of the brokers
        self.controller_port = -1
        self._nodes: dict[int, Node] = {}
        self._initial = dict(brokers or BROKERS)
        self.command_config = None
        self.started_seconds: float | None = None
        self.zk_port = free_port()
        self.zk_proc: subprocess.Popen | None = None

    @property
    def zk_hosts(self) -> str:
        return f"127.0.0.1:{self.zk_port}"

    @property
    def zk_url(self) -> str:
        """The planner's URL of this cluster: zk://127.0.0.1:PORT/kafka-3.9."""
        return f"zk://{self.zk_hosts}{CHROOT}"

    # ---------------------------------------------------------------- set-up
    def _start_zookeeper(self, wait: float = 60.0) -> None:
        missing = [j for j in ZK_JARS if not Path(j).exists()]
        if missing:
            raise RuntimeError(f"ZooKeeper jars missing: {missing}; run `make zookeeper`")
        zk_dir = self.workdir / "zookeeper"
        zk_dir.mkdir(parents=True, exist_ok=True)
        cfg = zk_dir / "zoo.cfg"
        cfg.write_text(
            f"tickTime=500\ninitLimit=10\nsyncLimit=5\ndataDir={zk_dir}/data\nadmin.enableServer=false\n"
            f"4lw.commands.whitelist=srvr\nmaxClientCnxns=0\nminSessionTimeout=1000\n"
            f"clientPort={self.zk_port}\nclientPortAddress=127.0.0.1\n"
        )
        args = [java(), *ZK_JVM, "-cp", ":".join(ZK_JARS), "org.apache.zookeeper.server.ZooKeeperServerMain", str(cfg)]
        self.zk_proc = _spawn(args, zk_dir / "server.log")
        deadline = time.monotonic() + wait
        while not _srvr(self.zk_port):
            if self.zk_proc.poll() is not None:
                raise RuntimeError(f"ZooKeeper exited ({self.zk_proc.returncode}); see {zk_dir}/server.log")
            if time.monotonic() > deadline:
                raise RuntimeError(f"ZooKeeper did not answer on port {self.zk_port} within {wait:.0f} s")
            time.sleep(0.1)

    def _broker_props(self, node_id: int, rack: str, port: int, sasl_port: int) -> dict[str, str]:
        return {
            "broker.id": str(node_id),
            "broker.rack": rack,
            "zookeeper.connect": self.zk_hosts + CHROOT,  # Kafka creates the chroot (KafkaZkClient)
            "listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "log.dirs": str(self.workdir / f"node-{node_id}" / "data"),
            **ZK_BROKER_SETTINGS,
        }

    def wait_for_brokers(self, ids: set[int], timeout: float = 120.0) -> None:
        """Until the metadata lists exactly `ids` as live and each of them accepts connections: a ZooKeeper-mode
        broker registers in /brokers/ids before its acceptors open (KafkaServer.startup: registerBroker, then
        socketServer.enableRequestProcessing)."""
        deadline = time.monotonic() + timeout
        super().wait_for_brokers(ids, timeout)
        for node_id in sorted(ids):
            while not _accepts(self._nodes[node_id].port):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"broker {node_id}: port {self._nodes[node_id].port} closed after {timeout} s")
                time.sleep(0.1)

    def _format(self, node: Node) -> None:
        """ZooKeeper mode formats nothing: a broker registers itself in ZooKeeper."""

    def start(self, timeout: float = 180.0) -> ZkKafkaCluster:
        """ZooKeeper, then the three brokers in parallel; returns when the metadata lists every broker."""
        began = time.monotonic()
        try:
            self._start_zookeeper()
            nodes = [self._add_node(i, r) for i, r in self._initial.items()]
            for node in nodes:
                self._launch(node)
            self.wait_for_brokers(set(self._initial), timeout)
        except BaseException:
            self.stop()
            raise
        self.started_seconds = time.monotonic() - began
        return self

    def stop(self) -> None:
        """The brokers (SIGTERM: controlled shutdown, SIGKILL after 10 s), then ZooKeeper."""
        brokers = [n for n in self._nodes.values() if n.proc is not None]
        with ThreadPoolExecutor(max(1, len(brokers))) as pool:
            list(pool.map(lambda n: _kill_group(n.proc), brokers))
        if self.zk_proc is not None:
            _kill_group(self.zk_proc)
            self.zk_proc = None

    def remove_broker(self, node_id: int) -> None:
        raise NotImplementedError("ZooKeeper mode: a stopped broker leaves /brokers/ids by itself")

    # ---------------------------------------------------------------- measurements
    def rss_bytes(self) -> dict[int, int]:
        """Resident memory by node id (ZooKeeper as 0)."""
        out = super().rss_bytes()
        if self.zk_proc is not None and self.zk_proc.poll() is None:
            for line in Path(f"/proc/{self.zk_proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    out[0] = int(line.split()[1]) * 1024
        return out
