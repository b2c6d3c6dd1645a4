"""Support for the ZooKeeper tests: a real server (Debian's zookeeper.jar), Kafka's znodes, the CLI runner."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# tests/reaper.py: importable when only this folder is on sys.path too (bench/peers, `python zk_support.py`)
sys.path.append(str(Path(__file__).resolve().parents[2]))
from reaper import forget, popen, remove_at_end

JARS = [
    "/usr/share/java/zookeeper.jar",
    "/usr/share/java/zookeeper-jute.jar",
    "/usr/share/java/slf4j-api.jar",
    "/usr/share/java/slf4j-simple.jar",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ruok(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"srvr")
            return s.recv(64).startswith(b"Zookeeper version")
    except OSError:
        return False


NETTY = [
    "netty-handler",
    "netty-buffer",
    "netty-codec",
    "netty-common",
    "netty-transport",
    "netty-resolver",
    "netty-transport-native-unix-common",
]


def make_tls_material(directory: str) -> str:
    """A CA (ca.pem) and a server certificate for 127.0.0.1 in PKCS12 key/trust stores (password `secret`).

    Needs `openssl` (Debian: openssl, pulled in by zookeeper -> default-jre -> ca-certificates) and `keytool` (the
    JRE's, openjdk-17-jre-headless)."""
    missing = [tool for tool in ("openssl", "keytool") if shutil.which(tool) is None]
    if missing:
        raise RuntimeError(
            f"TLS test material needs {' and '.join(missing)} on PATH (Debian: apt-get install openssl "
            "default-jre-headless)"
        )

    def sh(*cmd):
        subprocess.run(cmd, cwd=directory, check=True, capture_output=True)

    sh(
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=kafka-planner-test-ca",
    )
    sh(
        "openssl",
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1",
    )
    with open(os.path.join(directory, "ext.cnf"), "w") as fh:
        fh.write("subjectAltName=IP:127.0.0.1\n")
    sh(
        "openssl",
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    )
    sh(
        "openssl",
        "pkcs12",
        "-export",
        "-in",
        "server.pem",
        "-inkey",
        "server.key",
        "-out",
        "server.p12",
        "-passout",
        "pass:secret",
        "-name",
        "server",
    )
    sh(
        "keytool",
        "-importcert",
        "-noprompt",
        "-alias",
        "ca",
        "-file",
        "ca.pem",
        "-keystore",
        "trust.p12",
        "-storetype",
        "PKCS12",
        "-storepass",
        "secret",
    )
    return os.path.join(directory, "ca.pem")


class ZkServer:
    def __init__(self, tls: bool = False) -> None:
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="kp-zk-")
        remove_at_end(self.dir)  # by the reaper, should pytest end before `cleanup`
        self.proc: subprocess.Popen | None = None
        self.tls = tls
        self.ca_file = make_tls_material(self.dir) if tls else None

    @property
    def url(self) -> str:
        return f"zk://127.0.0.1:{self.port}"

    @property
    def hosts(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, wait: float = 60.0) -> "ZkServer":
        jars = list(JARS) + ([f"/usr/share/java/{j}.jar" for j in NETTY] if self.tls else [])
        missing = [j for j in jars if not os.path.exists(j)]
        if missing:  # netty: libnetty-java, a dependency of libzookeeper-java
            raise RuntimeError(f"ZooKeeper jars missing: {missing}; run `make zookeeper`")
        cfg = os.path.join(self.dir, "zoo.cfg")
        with open(cfg, "w") as fh:
            fh.write(
                f"tickTime=500\ninitLimit=10\nsyncLimit=5\ndataDir={self.dir}/data\nadmin.enableServer=false\n"
                "4lw.commands.whitelist=srvr,ruok\nmaxClientCnxns=0\nminSessionTimeout=1000\n"
            )
            if self.tls:  # TLS on `port` (Netty: ZooKeeper's TLS needs it); plain `plain_port` for the readiness probe
                self.plain_port = free_port()
                fh.write(
                    f"clientPort={self.plain_port}\nclientPortAddress=127.0.0.1\n"
                    f"secureClientPort={self.port}\nsecureClientPortAddress=127.0.0.1\n"
                    "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n"
                    f"ssl.keyStore.location={self.dir}/server.p12\nssl.keyStore.password=secret\n"
                    "ssl.keyStore.type=PKCS12\n"
                    f"ssl.trustStore.location={self.dir}/trust.p12\nssl.trustStore.password=secret\n"
                    "ssl.trustStore.type=PKCS12\nssl.clientAuth=none\n"
                )
            else:
                fh.write(f"clientPort={self.port}\nclientPortAddress=127.0.0.1\n")
        self.log = open(os.path.join(self.dir, "server.log"), "wb")
        self.proc = popen(  # its own process group, killed by the reaper if pytest ends before `stop`
            [
                "java",
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                ":".join(jars),
                "org.apache.zookeeper.server.ZooKeeperServerMain",
                cfg,
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ZooKeeper exited with {self.proc.returncode}; see {self.dir}/server.log")
            if _ruok(self.plain_port if self.tls else self.port):
                return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"ZooKeeper did not answer on port {self.port} within {wait} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None:
            forget(self.proc)
        self.proc = None
        if getattr(self, "log", None):
            self.log.close()

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


# Znodes exactly as Kafka writes them (core/src/main/scala/kafka/zk/ZkData.scala), several eras in one cluster:
# broker 1 registered by a 0.9-era broker (v1), 2 by v2, 3 by 2.x (v4, real-world key order, rack), 4 by 2.7+ (v5,
# SSL only: host null, port -1); broker 5 is in assignments but not registered (offline).
KAFKA_ZNODES = {
    "/brokers/ids/1": '{"jmx_port":-1,"timestamp":"1420485325400","host":"kafka1","version":1,"port":9092}',
    "/brokers/ids/2": '{"jmx_port":9999,"timestamp":"1535943857541","endpoints":["PLAINTEXT://kafka2:9092"],'
    '"host":"kafka2","version":2,"port":9092}',
    "/brokers/ids/3": '{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://kafka3:9092"],'
    '"rack":"r1","jmx_port":-1,"host":"kafka3","timestamp":"1614570663881","port":9092,"version":4}',
    "/brokers/ids/4": '{"features":{},"listener_security_protocol_map":{"SSL":"SSL"},"endpoints":["SSL://kafka4:9093"],'
    '"rack":"r2","jmx_port":-1,"host":null,"timestamp":"1614570663999","port":-1,"version":5}',
    # 1.x-2.3 topic znode (version 1)
    "/brokers/topics/legacy": '{"version":1,"partitions":{"0":[1,2,3],"1":[2,3,1]}}',
    "/brokers/topics/legacy/partitions/0/state": (
        '{"controller_epoch":33,"leader":1,"version":1,"leader_epoch":8,"isr":[1,2,3]}'
    ),
    "/brokers/topics/legacy/partitions/1/state": (
        '{"controller_epoch":33,"leader":2,"version":1,"leader_epoch":3,"isr":[2,1]}'
    ),
    # 2.4-2.7 (version 2) with a KIP-455 reassignment in progress on partition 0 only: [1,2] -> [3,4] (replicas =
    # target then original, ReplicaAssignment.fromOldAndNewReplicas); partition 1 is not moving, so the replica lists
    # differ in length inside the topic (4 and 2) while the replication factor (replicas - adding) is 2 for both
    "/brokers/topics/moving": '{"version":2,"partitions":{"0":[3,4,1,2],"1":[4,3]},"adding_replicas":{"0":[3,4]},'
    '"removing_replicas":{"0":[1,2]}}',
    "/brokers/topics/moving/partitions/0/state": (
        '{"controller_epoch":34,"leader":1,"version":1,"leader_epoch":2,"isr":[1,2,3]}'
    ),
    "/brokers/topics/moving/partitions/1/state": (
        '{"controller_epoch":34,"leader":4,"version":1,"leader_epoch":0,"isr":[4,3]}'
    ),
    "/config/topics/moving": '{"version":1,"config":{"cleanup.policy":"compact","segment.bytes":"104857600"}}',
    # 2.8+ (version 3, hash key order, topic id); partition 0 lost its only ISR member (offline broker 5)
    "/brokers/topics/modern": '{"removing_replicas":{},"partitions":{"0":[5,1],"1":[1,5]},'
    '"topic_id":"NPmZHyhbR9y00wMglMH2sg","adding_replicas":{},"version":3}',
    "/brokers/topics/modern/partitions/0/state": (
        '{"controller_epoch":35,"leader":-1,"version":1,"leader_epoch":4,"isr":[5]}'
    ),
    "/brokers/topics/modern/partitions/1/state": (
        '{"controller_epoch":35,"leader":1,"version":1,"leader_epoch":5,"isr":[1]}'
    ),
    "/config/topics/modern": '{"version":1,"config":{}}',
    # a topic being deleted
    "/brokers/topics/doomed": '{"version":1,"partitions":{"0":[2]}}',
    "/brokers/topics/doomed/partitions/0/state": (
        '{"controller_epoch":35,"leader":2,"version":1,"leader_epoch":0,"isr":[2]}'
    ),
    "/admin/delete_topics/doomed": None,
    # a ≤2.3-tool reassignment the controller has not picked up yet: legacy-1 [2,3,1] -> [2,3,4]
    "/admin/reassign_partitions": '{"version":1,"partitions":[{"topic":"legacy","partition":1,"replicas":[2,3,4]}]}',
    "/cluster/id": '{"version":"1","id":"L0Sm6PrcTvyhSKT2VbTPlw"}',
    "/controller": '{"version":1,"brokerid":3,"timestamp":"1535943857541"}',
    "/controller_epoch": "35",
}


def populate(client, chroot: str, znodes=None) -> str:
    """Write `znodes` (default KAFKA_ZNODES) under `chroot`; returns the chroot."""
    for path, data in (znodes or KAFKA_ZNODES).items():
        client.create(chroot + path, None if data is None else data.encode(), makepath=True)
    return chroot


def run_cli(*args, env=None, timeout=60):
    """The installed CLI end to end, without the caller's KAFKA_PLANNER_ZK_AUTH: (exit code, stdout, stderr)."""
    from testkit import run_planner  # tests/ is on sys.path under pytest; bench/peers imports only ZkServer

    full_env = dict(os.environ)
    full_env.pop("KAFKA_PLANNER_ZK_AUTH", None)
    full_env.update(env or {})
    return run_planner(*args, env=full_env, timeout=timeout)


def _reg(broker: int, rack: str) -> str:
    return (
        '{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
        f'"endpoints":["PLAINTEXT://kafka{broker}:9092"],"rack":"{rack}","jmx_port":-1,"host":"kafka{broker}",'
        f'"timestamp":"1700000000000","port":9092,"version":5}}'
    )


def _state(leader: int, isr: list[int]) -> str:
    return '{"controller_epoch":2,"leader":%d,"version":1,"leader_epoch":0,"isr":[%s]}' % (
        leader,
        ",".join(map(str, isr)),
    )


# A quiet 2.8-style cluster (no reassignment running) for submit / status / elect-leaders.
SIMPLE_ZNODES = {
    **{f"/brokers/ids/{b}": _reg(b, r) for b, r in ((1, "a"), (2, "a"), (3, "b"), (4, "b"))},
    "/brokers/topics/foo": '{"removing_replicas":{},"partitions":{"0":[1,3],"1":[3,2],"2":[2,4]},'
    '"topic_id":"AbCdEfGhIjKlMnOpQrStUw","adding_replicas":{},"version":3}',
    "/brokers/topics/foo/partitions/0/state": _state(1, [1, 3]),
    "/brokers/topics/foo/partitions/1/state": _state(2, [2, 3]),
    "/brokers/topics/foo/partitions/2/state": _state(2, [2, 4]),
    "/brokers/topics/bar": '{"removing_replicas":{},"partitions":{"0":[4,1]},'
    '"topic_id":"ZyXwVuTsRqPoNmLkJiHgFe","adding_replicas":{},"version":3}',
    "/brokers/topics/bar/partitions/0/state": _state(4, [4, 1]),
}


def main(argv: list[str]) -> int:
    """`python tests/adapters/zk/zk_support.py [--tls] [PORT]`: a throwaway ZooKeeper on 127.0.0.1:PORT (default
    21810) holding the test clusters at /kafka (KAFKA_ZNODES) and /simple (SIMPLE_ZNODES), until Ctrl-C. For trying
    the zk commands. With --tls the port speaks TLS only, with a certificate signed by a fresh CA whose file is
    printed."""
    import signal

    from kazoo.client import KazooClient

    tls = "--tls" in argv
    argv = [a for a in argv if a != "--tls"]
    server = ZkServer(tls=tls)
    server.port = int(argv[0]) if argv else 21810
    try:
        server.start()
        client = KazooClient(
            hosts=server.hosts, **(dict(use_ssl=True, ca=server.ca_file, verify_certs=True) if tls else {})
        )
        client.start(timeout=20)
        populate(client, "/kafka")
        populate(client, "/simple", SIMPLE_ZNODES)
        client.stop()
        client.close()
        extra = f" over TLS (CA: {server.ca_file})" if tls else ""
        print(f"ZooKeeper ready: {server.url}/kafka and {server.url}/simple{extra} (Ctrl-C stops it)", flush=True)
        signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
        server.proc.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.cleanup()
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
