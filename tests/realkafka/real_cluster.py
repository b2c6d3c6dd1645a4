"""A real Apache Kafka KRaft cluster on 127.0.0.1 for the tests (issue 29): one controller and four brokers over
three racks, each broker with a PLAINTEXT and a SASL_SSL (SCRAM-SHA-512) listener, and Kafka's own tools run as
`java -cp <jars> <main class>`.

The jars come from `make kafka` (tests/kafka/pom.xml, copied into .kafka/<version>/lib); nothing is downloaded here.
Every JVM runs in its own process group, stopped by `KafkaCluster.stop()`; the sidecar reaper (tests/reaper.py) kills
those still running when pytest ends by any other way (SIGTERM, SIGKILL, an exit past the finalizers), so none outlives
pytest. No signal handler is installed here.
"""

from __future__ import annotations

import base64
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from reaper import forget, popen, remove_at_end

ROOT = Path(__file__).resolve().parents[2]
KAFKA_VERSION = "4.4.0"  # tests/kafka/pom.xml's kafka.version and the Makefile's KAFKA_VERSION
LIB = ROOT / ".kafka" / KAFKA_VERSION / "lib"
LOG4J = ROOT / "tests" / "kafka" / "log4j2.xml"

# Main classes, as the release's bin/*.sh scripts name them (apache/kafka at tag 4.4.0).
KAFKA = "kafka.Kafka"  # kafka-server-start.sh
STORAGE = "kafka.tools.StorageTool"  # kafka-storage.sh
TOPICS = "org.apache.kafka.tools.TopicCommand"  # kafka-topics.sh
REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"  # kafka-reassign-partitions.sh
ELECT = "org.apache.kafka.tools.LeaderElectionCommand"  # kafka-leader-election.sh
LOG_DIRS = "org.apache.kafka.tools.LogDirsCommand"  # kafka-log-dirs.sh
CONSUMER_GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"  # kafka-consumer-groups.sh
CLUSTER = "org.apache.kafka.tools.ClusterTool"  # kafka-cluster.sh
CONFIGS = "org.apache.kafka.tools.ConfigCommand"  # kafka-configs.sh
PRODUCER_PERF = "org.apache.kafka.tools.ProducerPerformance"  # kafka-producer-perf-test.sh

CONTROLLER_ID = 100
BROKERS = {1: "rack-a", 2: "rack-b", 3: "rack-c", 4: "rack-a"}
SCRAM_USER = "admin"
SCRAM_PASSWORD = "admin-secret"

# Small JVMs: 5 of them (plus tools) fit 2 cores and 24 GB beside other developers' clusters.
SERVER_JVM = ["-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-Xss512k"]
TOOL_JVM = ["-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto"]

# Settings for tests on top of Kafka's defaults (config/server.properties of the release otherwise).
BROKER_SETTINGS = {
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "group.initial.rebalance.delay.ms": "0",
    # leaders move only when a test asks (no preferred-leader election every 300 s behind the tests' backs);
    # the controller takes it too (_controller_props)
    "auto.leader.rebalance.enable": "false",
    "broker.heartbeat.interval.ms": "1000",
    "broker.session.timeout.ms": "6000",
    "replica.lag.time.max.ms": "10000",
    "num.network.threads": "2",
    "num.io.threads": "2",
    "background.threads": "2",
    "num.recovery.threads.per.data.dir": "1",
    "log.cleaner.dedupe.buffer.size": "2097152",
    "log.flush.offset.checkpoint.interval.ms": "60000",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def random_cluster_id() -> str:
    """A Kafka `Uuid` in base64 (what `kafka-storage.sh random-uuid` prints; Uuid.randomUuid avoids a leading '-')."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def classpath() -> str:
    if not LIB.is_dir() or not any(LIB.glob("kafka_2.13-*.jar")):
        raise RuntimeError(f"{LIB}: Apache Kafka {KAFKA_VERSION} jars missing: run `make kafka` first")
    return str(LIB / "*")


def java() -> str:
    home = os.environ.get("JAVA_HOME")
    return str(Path(home) / "bin" / "java") if home else "java"


def _kill_group(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """SIGTERM the JVM's process group, SIGKILL it after `grace` seconds; then the reaper forgets it."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(10)
    forget(proc)


def _spawn(args: list[str], log: Path) -> subprocess.Popen:
    """A server JVM in its own process group, listed with the reaper until `_kill_group` stops it."""
    with open(log, "ab") as out:
        return popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def write_properties(path: Path, props: dict[str, str]) -> None:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))


@dataclass
class Node:
    node_id: int
    rack: str | None
    props_file: Path
    log_file: Path
    port: int  # PLAINTEXT (brokers) or CONTROLLER (the controller)
    sasl_port: int | None = None
    proc: subprocess.Popen | None = None


class KafkaCluster:
    """See tests/realkafka/README.md (or docs/testing.md) for the API the tests use."""

    # the JVM options that configure logging (tests/realkafka/zk_cluster.py's 3.9.1 cluster uses log4j 1.x's)
    log_options = [f"-Dlog4j2.configurationFile={LOG4J}"]

    def __init__(self, workdir: Path | None = None, brokers: dict[int, str] | None = None):
        self.version = KAFKA_VERSION
        self.classpath = classpath()
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="realkafka-"))
        if workdir is None:
            remove_at_end(self.workdir)  # by the reaper, should pytest end before `cleanup`
        self.cluster_id = random_cluster_id()
        self.controller_id = CONTROLLER_ID
        self.controller_port = free_port()
        self._nodes: dict[int, Node] = {}
        self._initial = dict(brokers or BROKERS)
        self._ssl_dir = self.workdir / "ssl"
        self.ca_file = self._ssl_dir / "ca.pem"
        self.command_config = self.workdir / "sasl-ssl.properties"
        self.started_seconds: float | None = None

    # ---------------------------------------------------------------- addresses
    @property
    def brokers(self) -> dict[int, str]:
        """Broker id -> rack, for every broker node the cluster has now (running or stopped)."""
        return {i: n.rack or "" for i, n in sorted(self._nodes.items()) if i != self.controller_id}

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{n.port}" for i, n in sorted(self._nodes.items()) if self._is_up_broker(i))

    @property
    def sasl_bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{n.sasl_port}" for i, n in sorted(self._nodes.items()) if self._is_up_broker(i))

    @property
    def url(self) -> str:
        return "kafka://" + self.bootstrap

    @property
    def sasl_url(self) -> str:
        return "kafka://" + self.sasl_bootstrap

    def _is_up_broker(self, node_id: int) -> bool:
        node = self._nodes[node_id]
        return node_id != self.controller_id and node.proc is not None and node.proc.poll() is None

    # ---------------------------------------------------------------- set-up
    def _make_certificates(self) -> tuple[Path, Path]:
        """A self-signed certificate for 127.0.0.1/localhost: the brokers' PEM keystore and the clients' PEM
        truststore (both Kafka's tools, ssl.truststore.type=PEM, and the planner read the same file)."""
        self._ssl_dir.mkdir(parents=True, exist_ok=True)
        key, cert = self._ssl_dir / "key.pem", self._ssl_dir / "cert.pem"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
             "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", str(key), "-out", str(cert)],
            check=True, capture_output=True,
        )  # fmt: skip
        keystore = self._ssl_dir / "broker-keystore.pem"
        keystore.write_text(key.read_text() + cert.read_text())
        shutil.copy(cert, self.ca_file)
        write_properties(
            self.command_config,
            {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
                f'username="{SCRAM_USER}" password="{SCRAM_PASSWORD}";',
                "ssl.truststore.type": "PEM",
                "ssl.truststore.location": str(self.ca_file),
            },
        )
        return keystore, cert

    def _controller_props(self) -> dict[str, str]:
        return {
            "process.roles": "controller",
            "node.id": str(self.controller_id),
            "controller.quorum.voters": f"{self.controller_id}@127.0.0.1:{self.controller_port}",
            "listeners": f"CONTROLLER://127.0.0.1:{self.controller_port}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.workdir / f"node-{self.controller_id}" / "data"),
            # In KRaft the active controller runs the preferred-leader balancing, from its own properties
            # (ControllerServer.scala: leaderImbalanceCheckIntervalNs is empty only if !autoLeaderRebalanceEnable;
            # QuorumController schedules maybeBalancePartitionLeaders). The brokers' "false" alone left it on: every
            # 300 s it moved leaders a test had just put elsewhere (test_elect_leaders_runbook_on_the_real_cluster
            # failed in a full run, never alone).
            "auto.leader.rebalance.enable": BROKER_SETTINGS["auto.leader.rebalance.enable"],
        }

    def _broker_props(self, node_id: int, rack: str, port: int, sasl_port: int) -> dict[str, str]:
        keystore = self._ssl_dir / "broker-keystore.pem"
        jaas = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
        return {
            "process.roles": "broker",
            "node.id": str(node_id),
            "broker.rack": rack,
            "controller.quorum.voters": f"{self.controller_id}@127.0.0.1:{self.controller_port}",
            "controller.listener.names": "CONTROLLER",
            "listeners": f"PLAINTEXT://127.0.0.1:{port},SASL_SSL://127.0.0.1:{sasl_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port},SASL_SSL://127.0.0.1:{sasl_port}",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL",
            "inter.broker.listener.name": "PLAINTEXT",
            "sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": jaas,
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(keystore),
            "log.dirs": str(self.workdir / f"node-{node_id}" / "data"),
            **BROKER_SETTINGS,
        }

    def _add_node(self, node_id: int, rack: str | None) -> Node:
        (self.workdir / f"node-{node_id}").mkdir(parents=True, exist_ok=True)
        base = self.workdir / f"node-{node_id}"
        if node_id == self.controller_id:
            node = Node(node_id, None, base / "server.properties", base / "server.log", self.controller_port)
            write_properties(node.props_file, self._controller_props())
        else:
            port, sasl_port = free_port(), free_port()
            node = Node(node_id, rack, base / "server.properties", base / "server.log", port, sasl_port)
            write_properties(node.props_file, self._broker_props(node_id, rack or "", port, sasl_port))
        self._nodes[node_id] = node
        return node

    def _format(self, node: Node) -> None:
        """`kafka-storage.sh format` with the SCRAM user in the bootstrap metadata (--add-scram)."""
        rc, out, err = self.run_tool(
            STORAGE, "format", "-t", self.cluster_id, "-c", str(node.props_file), "--ignore-formatted",
            "--add-scram", f"SCRAM-SHA-512=[name={SCRAM_USER},password={SCRAM_PASSWORD}]",
        )  # fmt: skip
        if rc != 0:
            raise RuntimeError(f"formatting node {node.node_id} failed ({rc}): {out}{err}")

    def _launch(self, node: Node) -> None:
        args = [java(), *SERVER_JVM, "-Djava.awt.headless=true", *self.log_options]
        args += ["-cp", self.classpath, KAFKA, str(node.props_file)]
        node.proc = _spawn(args, node.log_file)

    def start(self, timeout: float = 180.0) -> KafkaCluster:
        """Certificates, storage formatted and all five JVMs started in parallel; returns when the controller's
        metadata shows every broker unfenced (asked over the Admin API, no fixed sleep)."""
        began = time.monotonic()
        self._make_certificates()
        nodes = [self._add_node(self.controller_id, None)] + [self._add_node(i, r) for i, r in self._initial.items()]
        try:
            with ThreadPoolExecutor(len(nodes)) as pool:
                list(pool.map(self._format, nodes))
            for node in nodes:
                self._launch(node)
            self.wait_for_brokers(set(self._initial), timeout)
        except BaseException:
            self.stop()
            raise
        self.started_seconds = time.monotonic() - began
        return self

    def stop(self) -> None:
        """Every JVM of this cluster: SIGTERM to its process group, SIGKILL after 10 s; brokers first."""
        nodes = sorted(self._nodes.values(), key=lambda n: n.node_id == self.controller_id)
        brokers = [n for n in nodes if n.proc is not None and n.node_id != self.controller_id]
        with ThreadPoolExecutor(max(1, len(brokers))) as pool:
            list(pool.map(lambda n: _kill_group(n.proc), brokers))
        for node in nodes:
            if node.proc is not None:
                _kill_group(node.proc)

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    # ---------------------------------------------------------------- asking the cluster
    def admin(self, **configs):
        """A kafka-python `KafkaAdminClient` on the PLAINTEXT listener (the caller closes it)."""
        from kafka import KafkaAdminClient

        return KafkaAdminClient(bootstrap_servers=self.bootstrap, request_timeout_ms=10000, **configs)

    def live_brokers(self) -> dict[int, str]:
        """Broker id -> rack of the registered, unfenced brokers (DescribeCluster) now."""
        admin = self.admin()
        try:
            described = admin.describe_cluster()
        finally:
            admin.close()
        return {b["broker_id"]: b["rack"] for b in described["brokers"] if not b.get("is_fenced")}

    def wait_for_brokers(self, ids: set[int], timeout: float = 120.0) -> None:
        """Until the cluster's metadata lists exactly `ids` as its live brokers."""
        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            for node in self._nodes.values():
                if node.proc is not None and node.proc.poll() is not None and node.node_id in ids | {CONTROLLER_ID}:
                    raise RuntimeError(f"node {node.node_id} exited ({node.proc.returncode}): {self._tail(node)}")
            if self.bootstrap:
                try:
                    last = self.live_brokers()
                    if set(last) == ids:
                        return
                except Exception as e:  # not up yet: keep asking
                    last = e
            time.sleep(0.5)
        raise TimeoutError(f"brokers {sorted(ids)} not all live after {timeout:.0f} s (last answer: {last})")

    def _tail(self, node: Node) -> str:
        try:
            return node.log_file.read_text()[-2000:]
        except OSError:
            return ""

    # ---------------------------------------------------------------- Kafka's tools
    def run_tool(self, main_class: str, *args: str, timeout: float = 180.0, input: str | None = None):
        """Kafka's tool `main_class` as `java -cp <jars> <main class> args…`: (exit code, stdout, stderr)."""
        cmd = [java(), *TOOL_JVM, *self.log_options, "-Dkafka.test.log.level=ERROR"]
        cmd += ["-cp", self.classpath, main_class, *args]
        proc = popen(
            cmd, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except BaseException:
            _kill_group(proc, grace=2)
            raise
        forget(proc)
        return proc.returncode, out, err

    def create_topic(self, name: str, assignment: list[list[int]], configs: dict[str, str] | None = None) -> None:
        """A topic with partition p on replicas assignment[p] (first = preferred leader), through the Admin API;
        returns once every partition has a leader in the metadata of each live broker."""
        from kafka.admin import NewTopic

        topic = NewTopic(name, replica_assignments=dict(enumerate(assignment)), topic_configs=dict(configs or {}))
        admin = self.admin()
        try:
            admin.create_topics([topic])
        finally:
            admin.close()
        self.wait_for_topic(name, len(assignment))

    def wait_for_topic(self, name: str, partitions: int, timeout: float = 60.0) -> None:
        """Until every live broker's metadata shows `name` with `partitions` partitions, each with a leader."""
        deadline = time.monotonic() + timeout
        while True:
            ok = True
            for node in [n for i, n in self._nodes.items() if self._is_up_broker(i)]:
                from kafka import KafkaAdminClient

                admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{node.port}", request_timeout_ms=10000)
                try:
                    found = admin.describe_topics([name])
                except Exception:
                    ok = False
                    break
                finally:
                    admin.close()
                parts = found[0]["partitions"] if found and found[0].get("error_code", 0) == 0 else []
                if len(parts) != partitions or any(p["leader_id"] < 0 for p in parts):
                    ok = False
                    break
            if ok:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"topic {name}: not ready on every broker after {timeout:.0f} s")
            time.sleep(0.2)

    def delete_topics(self, *names: str) -> None:
        admin = self.admin()
        try:
            admin.delete_topics(list(names))
        finally:
            admin.close()

    # ---------------------------------------------------------------- faults and scale-out
    def stop_broker(self, node_id: int, kill: bool = False) -> None:
        """Stop broker `node_id` (SIGTERM: a controlled shutdown; kill=True: SIGKILL, a crash) and wait until the
        controller no longer lists it as live. Its storage stays: start_broker brings it back."""
        node = self._nodes[node_id]
        if node.proc is None:
            return
        if kill and node.proc.poll() is None:
            os.killpg(node.proc.pid, signal.SIGKILL)
        _kill_group(node.proc)
        node.proc = None
        self.wait_for_brokers({i for i in self.brokers if self._is_up_broker(i)})

    def start_broker(self, node_id: int) -> None:
        """Start a stopped broker again on the same ports and storage; returns when it is live."""
        node = self._nodes[node_id]
        if node.proc is not None and node.proc.poll() is None:
            return
        self._launch(node)
        self.wait_for_brokers({i for i in self.brokers if self._is_up_broker(i)})

    def add_broker(self, node_id: int, rack: str) -> None:
        """A new broker (scale-out): formatted, started, live when this returns. The test removes it
        (remove_broker) before it ends."""
        if node_id in self._nodes:
            raise ValueError(f"node {node_id} exists")
        node = self._add_node(node_id, rack)
        self._format(node)
        self._launch(node)
        self.wait_for_brokers({i for i in self.brokers if self._is_up_broker(i)})

    def remove_broker(self, node_id: int) -> None:
        """Stop an added broker and unregister it (`kafka-cluster.sh unregister`), so `brokers` shows the cluster
        as it was. Its replicas must have been moved away first."""
        self.stop_broker(node_id)
        rc, out, err = self.run_tool(CLUSTER, "unregister", "--bootstrap-server", self.bootstrap, "--id", str(node_id))
        if rc != 0:
            raise RuntimeError(f"unregister {node_id} failed ({rc}): {out}{err}")
        node = self._nodes.pop(node_id)
        shutil.rmtree(node.props_file.parent, ignore_errors=True)

    # ---------------------------------------------------------------- measurements
    def rss_bytes(self) -> dict[int, int]:
        """Resident memory of each running node's JVM (from /proc), by node id."""
        out = {}
        for i, node in self._nodes.items():
            if node.proc is not None and node.proc.poll() is None:
                for line in Path(f"/proc/{node.proc.pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        out[i] = int(line.split()[1]) * 1024
        return out
