"""A fake KRaft cluster for the tests: several brokers on 127.0.0.1 speaking Kafka's wire protocol.

Every broker listens on its own free loopback port and answers with kafka-python's own protocol classes (the
messages generated from Kafka's JSON schemas), the way kafka-python's `test/mock_broker.py` does in memory. All
brokers share one controller state, so any of them answers any request, as a KRaft broker forwards to the
controller.

The controller's behaviour follows Kafka's `metadata/src/main/java/org/apache/kafka/controller/`:

* `ReplicationControlManager.alterPartitionReassignment` / `changePartitionReassignment`: the new replica list is
  the target followed by the removing replicas (`PartitionReassignmentReplicas`: removing = current - target and
  adding = target - current, both sorted), validated by `validateManualPartitionAssignment` with its texts
  (INVALID_REPLICA_ASSIGNMENT), and KIP-1066's refusal of a replica added to a broker whose log dirs are all
  cordoned (KAFKA-20832, apache/kafka 226ce2d, puts the cordon check on user-given assignments; its text could not
  be read from Kafka's source here: `CORDONED` below is modelled on the method's other texts; whether Kafka also
  refuses a target that keeps a replica already there is not modelled); a null target cancels
  (`cancelPartitionReassignment`: NO_REASSIGNMENT_IN_PROGRESS when none runs, else `PartitionReassignmentRevert`:
  the original replicas, the ISR minus the adding replicas);
* `PartitionReassignmentReplicas.maybeCompleteReassignment`: done once the ISR holds every target replica;
* `electLeader`: ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE, ELIGIBLE_LEADERS_NOT_AVAILABLE.

Replicas catch up only when the test says so: `step(nbytes)` copies up to `nbytes` more into every adding replica
(and every future replica of an AlterReplicaLogDirs move); a replica that holds all of the leader's bytes joins the
ISR, and a reassignment whose target replicas are all in the ISR completes.
"""

from __future__ import annotations

import base64
import socket
import socketserver
import struct
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

NO_ERROR = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
UNSUPPORTED_VERSION = 35
INVALID_REQUEST = 42
PREFERRED_LEADER_NOT_AVAILABLE = 80
ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
ELECTION_NOT_NEEDED = 84
NO_REASSIGNMENT_IN_PROGRESS = 85
INVALID_REPLICA_ASSIGNMENT = 39
SASL_AUTHENTICATION_FAILED = 58
UNSUPPORTED_SASL_MECHANISM = 33
ILLEGAL_SASL_STATE = 34
KAFKA_STORAGE_ERROR = 56
LOG_DIR_NOT_FOUND = 57

TOPIC, BROKER = 2, 4  # ConfigResource.Type
SOURCE_DYNAMIC_TOPIC, SOURCE_DYNAMIC_BROKER, SOURCE_DEFAULT = 1, 2, 5
TOPIC_DEFAULTS = {
    "min.insync.replicas": "1",
    "unclean.leader.election.enable": "false",
    "remote.storage.enable": "false",
}

# Kafka's default messages (`org.apache.kafka.common.protocol.Errors`) for the codes the fake returns.
MESSAGES = {
    NO_REASSIGNMENT_IN_PROGRESS: "No partition reassignment is in progress.",
    ELECTION_NOT_NEEDED: "Leader election not needed for topic partition.",
    PREFERRED_LEADER_NOT_AVAILABLE: "The preferred leader was not available.",
    ELIGIBLE_LEADERS_NOT_AVAILABLE: "Eligible topic partition leaders are not available.",
}


# KIP-1066's refusal of an added replica (its text an assumption in `validateManualPartitionAssignment`'s style)
CORDONED = "The manual partition assignment includes broker {}, but all its log directories are cordoned."


def topic_id_text(value: uuid.UUID) -> str:
    """Kafka's `Uuid.toString`: base64url without padding."""
    return base64.urlsafe_b64encode(value.bytes).decode("ascii").rstrip("=")


@dataclass
class FakeBroker:
    id: int
    rack: str | None = None
    log_dirs: tuple[str, ...] = ("/var/lib/kafka/data",)
    fenced: bool = False
    total_bytes: int = 1 << 40
    cordoned: tuple[str, ...] = ()
    port: int = 0


@dataclass
class FakePartition:
    replicas: list[int]
    isr: list[int]
    leader: int
    leader_epoch: int = 0
    adding: list[int] = field(default_factory=list)
    removing: list[int] = field(default_factory=list)
    elr: list[int] | None = None
    last_known_elr: list[int] | None = None
    size: int = 0  # the leader's bytes
    have: dict[int, int] = field(default_factory=dict)  # broker -> bytes it holds
    dirs: dict[int, str] = field(default_factory=dict)  # broker -> log dir
    future: dict[int, tuple[str, int]] = field(default_factory=dict)  # broker -> (target dir, bytes copied)


@dataclass
class FakeTopic:
    name: str
    partitions: list[FakePartition]
    topic_id: uuid.UUID
    configs: dict[str, str] = field(default_factory=dict)


class FakeCluster:
    """The shared controller state and one listener per broker. Use as a context manager or start()/stop()."""

    def __init__(self, brokers: list[FakeBroker], cluster_id: str = "fake-kraft-cluster"):
        self.brokers = {b.id: b for b in brokers}
        self.topics: dict[str, FakeTopic] = {}
        self.broker_configs: dict[str, dict[str, str]] = {}  # "" = cluster default, "1" = broker 1
        self.cluster_id = cluster_id
        self.lock = threading.RLock()
        self.requests: list[tuple[int, int]] = []  # (api_key, version) of every request answered
        self.max_versions: dict[int, int] = {}  # api_key -> highest version advertised (tests lower it)
        self.fail: dict[int, int] = {}  # api_key -> error code every such request gets
        self.sasl_users: dict[str, str] | None = None  # user -> password: SASL/PLAIN required when set
        self.before_alter: Callable[[], None] | None = None  # run before each partition of AlterPartitionReassignments
        # (topic, partition) -> [replicas, answers]: the next `answers` DescribeTopicPartitions answers (where a KRaft
        # client reads replica sets) show these replicas, as a broker whose metadata is behind the controller's does
        # for a moment after a reassignment completes
        self.stale: dict[tuple[str, int], list] = {}
        self._servers: list[socketserver.ThreadingTCPServer] = []
        self._threads: list[threading.Thread] = []

    # -- building the cluster ------------------------------------------------------------------------------------
    def add_topic(
        self,
        name: str,
        assignment: list[list[int]],
        sizes: list[int] | None = None,
        configs: dict[str, str] | None = None,
    ) -> FakeTopic:
        """A topic with partitions 0..n-1: leader = first replica, ISR = all replicas, every replica caught up."""
        parts = []
        for pid, replicas in enumerate(assignment):
            size = sizes[pid] if sizes else 0
            parts.append(
                FakePartition(
                    replicas=list(replicas),
                    isr=list(replicas),
                    leader=replicas[0],
                    size=size,
                    have={b: size for b in replicas},
                    dirs={b: self.brokers[b].log_dirs[0] for b in replicas},
                )
            )
        topic = FakeTopic(
            name=name,
            partitions=parts,
            topic_id=uuid.UUID(int=(len(self.topics) + 1) * 0x1111),
            configs=dict(configs or {}),
        )
        with self.lock:
            self.topics[name] = topic
        return topic

    def partition(self, topic: str, pid: int) -> FakePartition:
        return self.topics[topic].partitions[pid]

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{b.port}" for b in self.brokers.values())

    @property
    def url(self) -> str:
        first = min(self.brokers)
        return f"kafka://127.0.0.1:{self.brokers[first].port}"

    # -- catching up -----------------------------------------------------------------------------------------
    def step(self, nbytes: int) -> None:
        """Copy up to `nbytes` more into every catching-up replica; complete what is complete."""
        with self.lock:
            for topic in self.topics.values():
                for p in topic.partitions:
                    for b in p.replicas:
                        if b in p.isr:
                            continue
                        p.have[b] = min(p.size, p.have.get(b, 0) + nbytes)
                        if p.have[b] >= p.size and not self.brokers[b].fenced:
                            p.isr.append(b)
                    for b, (target, done) in list(p.future.items()):
                        done = min(p.size, done + nbytes)
                        if done >= p.size:
                            del p.future[b]
                            p.dirs[b] = target
                        else:
                            p.future[b] = (target, done)
                    self._maybe_complete(p)

    def _maybe_complete(self, p: FakePartition) -> None:
        """`PartitionReassignmentReplicas.maybeCompleteReassignment`, then a leader from the new replicas."""
        if not (p.adding or p.removing):
            return
        isr = [b for b in p.isr if b not in p.removing]
        replicas = [b for b in p.replicas if b not in p.removing]
        if not isr or not replicas or not set(replicas) <= set(isr):
            return
        for b in p.removing:
            p.have.pop(b, None)
            p.dirs.pop(b, None)
        p.replicas, p.isr, p.adding, p.removing = replicas, isr, [], []
        if p.leader not in replicas:
            self._set_leader(p, next((b for b in replicas if b in isr), -1))

    def _set_leader(self, p: FakePartition, leader: int) -> None:
        if leader != p.leader:
            p.leader = leader
            p.leader_epoch += 1

    def _active(self, b: int) -> bool:
        return b in self.brokers and not self.brokers[b].fenced

    def replicas_shown(self, topic: str, pid: int, replicas: list[int]) -> list[int]:
        """The replica set a DescribeTopicPartitions answer shows for a partition: its own, or a stale one
        (`stale`)."""
        with self.lock:
            old = self.stale.get((topic, pid))
            if old is None or old[1] <= 0:
                return list(replicas)
            old[1] -= 1
            return list(old[0])

    # -- controller operations ------------------------------------------------------------------------------
    def alter_reassignment(self, topic: str, pid: int, target: list[int] | None) -> tuple[int, str | None]:
        """`ReplicationControlManager.alterPartitionReassignment`: (error code, message)."""
        t = self.topics.get(topic)
        if t is None:
            return UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {topic}."
        if not 0 <= pid < len(t.partitions):
            return UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {topic}:{pid}."
        p = t.partitions[pid]
        if target is None:
            return self._cancel(t, pid, p)
        if self.before_alter is not None:
            self.before_alter()  # a test's hook: what changes between a client's read and its request
        error = self._validate(target, p.replicas)
        if error:
            return INVALID_REPLICA_ASSIGNMENT, error
        current = list(p.replicas)
        removing = sorted(set(current) - set(target))
        adding = sorted(set(target) - set(current))
        p.replicas = list(target) + removing
        p.adding, p.removing = adding, removing
        for b in adding:
            p.have.setdefault(b, 0)
            p.dirs.setdefault(b, self.brokers[b].log_dirs[0])
        self._maybe_complete(p)
        return NO_ERROR, None

    def fully_cordoned(self, b: int) -> bool:
        """Every log dir of broker `b` cordoned (`cordoned.log.dirs` naming each, or `*`): not a usable broker."""
        broker = self.brokers[b]
        return "*" in broker.cordoned or set(broker.log_dirs) <= set(broker.cordoned)

    def _validate(self, target: list[int], current: list[int]) -> str | None:
        """`validateManualPartitionAssignment`'s texts, and KIP-1066's refusal of a replica added to a broker whose
        log dirs are all cordoned."""
        if not target:
            return "The manual partition assignment includes an empty replica list."
        prev = None
        for b in sorted(target):
            if b not in self.brokers:
                return f"The manual partition assignment includes broker {b}, but no such broker is registered."
            if b not in current and self.fully_cordoned(b):
                return CORDONED.format(b)
            if b == prev:
                return f"The manual partition assignment includes the broker {prev} more than once."
            prev = b
        return None

    def _cancel(self, t: FakeTopic, pid: int, p: FakePartition) -> tuple[int, str | None]:
        """`cancelPartitionReassignment` with `PartitionReassignmentRevert`."""
        if not (p.adding or p.removing):
            return NO_REASSIGNMENT_IN_PROGRESS, MESSAGES[NO_REASSIGNMENT_IN_PROGRESS]
        replicas = [b for b in p.replicas if b not in p.adding]
        isr = [b for b in p.isr if b not in p.adding]
        if not isr:
            if t.configs.get("unclean.leader.election.enable", "false") != "true":
                return INVALID_REPLICA_ASSIGNMENT, (
                    f"Unable to revert partition assignment for {t.name}:{pid} "
                    "because it would require an unclean leader election."
                )
            isr = [replicas[0]]
        for b in p.adding:
            p.have.pop(b, None)
            p.dirs.pop(b, None)
        p.replicas, p.isr, p.adding, p.removing = replicas, isr, [], []
        if p.leader not in isr:
            self._set_leader(p, next((b for b in replicas if b in isr and self._active(b)), -1))
        return NO_ERROR, None

    def elect(self, topic: str, pid: int, election_type: int) -> tuple[int, str | None]:
        """`ReplicationControlManager.electLeader`."""
        t = self.topics.get(topic)
        if t is None:
            return UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic}"
        if not 0 <= pid < len(t.partitions):
            return UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {topic}-{pid}"
        p = t.partitions[pid]
        if (election_type == 0 and p.leader == p.replicas[0]) or (election_type == 1 and p.leader != -1):
            return ELECTION_NOT_NEEDED, MESSAGES[ELECTION_NOT_NEEDED]
        if election_type == 0:
            preferred = p.replicas[0]
            if preferred in p.isr and self._active(preferred):
                self._set_leader(p, preferred)
                return NO_ERROR, None
            return PREFERRED_LEADER_NOT_AVAILABLE, MESSAGES[PREFERRED_LEADER_NOT_AVAILABLE]
        live = [b for b in p.replicas if self._active(b)]
        if not live:
            return ELIGIBLE_LEADERS_NOT_AVAILABLE, MESSAGES[ELIGIBLE_LEADERS_NOT_AVAILABLE]
        self._set_leader(p, live[0])
        p.isr = [live[0]]
        return NO_ERROR, None

    def alter_log_dir(self, broker: int, topic: str, pid: int, path: str) -> int:
        """AlterReplicaLogDirs on one broker: a future replica in `path` that `step` fills."""
        b = self.brokers[broker]
        if path not in b.log_dirs:
            return LOG_DIR_NOT_FOUND
        t = self.topics.get(topic)
        if t is None or not 0 <= pid < len(t.partitions) or broker not in t.partitions[pid].replicas:
            return UNKNOWN_TOPIC_OR_PARTITION
        p = t.partitions[pid]
        if p.dirs.get(broker) != path:
            p.future[broker] = (path, 0)
        return NO_ERROR

    def alter_config(self, rtype: int, name: str, key: str, op: int, value: str | None) -> int:
        if rtype == TOPIC:
            if name not in self.topics:
                return UNKNOWN_TOPIC_OR_PARTITION
            configs = self.topics[name].configs
        elif rtype == BROKER:
            if name and (not name.isdigit() or int(name) not in self.brokers):
                return INVALID_REQUEST
            configs = self.broker_configs.setdefault(name, {})
        else:
            return INVALID_REQUEST
        if op == 0:  # SET
            configs[key] = value or ""
        elif op == 1:  # DELETE
            configs.pop(key, None)
        elif op in (2, 3):  # APPEND, SUBTRACT on list configs
            items = [i for i in configs.get(key, "").split(",") if i]
            new = [i for i in (value or "").split(",") if i]
            items = items + [i for i in new if i not in items] if op == 2 else [i for i in items if i not in new]
            configs[key] = ",".join(items)
        else:
            return INVALID_REQUEST
        return NO_ERROR

    # -- the network side ------------------------------------------------------------------------------------
    def start(self) -> "FakeCluster":
        import fake_protocol

        cluster = self
        for b in self.brokers.values():

            class Handler(socketserver.BaseRequestHandler):
                broker_id = b.id

                def handle(self) -> None:
                    fake_protocol.serve(cluster, self.broker_id, self.request)

            server = socketserver.ThreadingTCPServer(("127.0.0.1", b.port), Handler, bind_and_activate=False)
            server.allow_reuse_address = True
            server.daemon_threads = True
            server.server_bind()
            server.server_activate()
            b.port = server.server_address[1]
            thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
            thread.start()
            self._servers.append(server)
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()
        for thread in self._threads:
            thread.join(timeout=5)
        self._servers.clear()
        self._threads.clear()

    def __enter__(self) -> "FakeCluster":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def free_port() -> int:
    """A loopback port nothing listens on (for the unreachable-bootstrap tests)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_frame(sock: socket.socket) -> bytes | None:
    head = _read_exactly(sock, 4)
    if head is None:
        return None
    (size,) = struct.unpack(">i", head)
    return _read_exactly(sock, size)


def _read_exactly(sock: socket.socket, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        try:
            chunk = sock.recv(n - got)
        except OSError:
            return None
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _env_without_kafka_settings(env: dict[str, str] | None) -> dict[str, str]:
    """This process's environment without the caller's KAFKA_PLANNER_KAFKA_*, then `env`."""
    import os

    full_env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_PLANNER_KAFKA_")}
    full_env.update(env or {})
    return full_env


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> tuple[int, str, str]:
    """The installed CLI end to end: (exit code, stdout, stderr), without the caller's KAFKA_PLANNER_KAFKA_*."""
    from testkit import run_planner

    return run_planner(*args, env=_env_without_kafka_settings(env), timeout=timeout)


def run_here(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """The CLI in this process (no interpreter start-up): (exit code, stdout, stderr)."""
    from testkit import run_planner_here

    return run_planner_here(*args, env=_env_without_kafka_settings(env))
