"""Reading a live cluster of 100 brokers and 20,000 partitions (RF 3) from a local ZooKeeper server.

Figure: `planner.adapters.zk.read_snapshot` (pipelined async reads, one round trip per level, watch-checked snapshot).
Yardstick, measured in the same run on the same znodes: the naive read, one synchronous kazoo call (one round trip)
per znode, through the same kazoo handler. Target: under 5 s. The server is Debian's zookeeper.jar on a free loopback
port, started and stopped here.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time

from bench.report import line, timer

N_BROKERS = 100
N_TOPICS = 200
PARTITIONS_PER_TOPIC = 100  # 20,000 partitions
RF = 3
JARS = [
    "/usr/share/java/zookeeper.jar",
    "/usr/share/java/zookeeper-jute.jar",
    "/usr/share/java/slf4j-api.jar",
    "/usr/share/java/slf4j-simple.jar",
]


def _start_server(workdir: str) -> tuple[subprocess.Popen, int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = os.path.join(workdir, "zoo.cfg")
    with open(cfg, "w") as fh:
        fh.write(
            f"tickTime=500\ndataDir={workdir}/data\nclientPort={port}\nclientPortAddress=127.0.0.1\n"
            "admin.enableServer=false\n4lw.commands.whitelist=srvr\nmaxClientCnxns=0\n"
            "forceSync=no\n"
        )
    log = open(os.path.join(workdir, "server.log"), "wb")
    proc = subprocess.Popen(
        ["java", "-Xmx512m", "-cp", ":".join(JARS), "org.apache.zookeeper.server.ZooKeeperServerMain", cfg],
        stdout=log,
        stderr=log,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as c:
                c.sendall(b"srvr")
                if c.recv(16).startswith(b"Zookeeper"):
                    return proc, port
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("ZooKeeper did not start")


def _znodes() -> list[tuple[str, bytes]]:
    nodes = []
    for b in range(N_BROKERS):
        nodes.append(
            (
                f"/brokers/ids/{b}",
                json.dumps(
                    {
                        "features": {},
                        "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
                        "endpoints": [f"PLAINTEXT://kafka{b}:9092"],
                        "rack": f"r{b % 5}",
                        "jmx_port": -1,
                        "host": f"kafka{b}",
                        "timestamp": "1700000000000",
                        "port": 9092,
                        "version": 5,
                    },
                    separators=(",", ":"),
                ).encode(),
            )
        )
    for t in range(N_TOPICS):
        name = f"topic-{t:03d}"
        assignment = {str(p): [(t + p + i * 7) % N_BROKERS for i in range(RF)] for p in range(PARTITIONS_PER_TOPIC)}
        nodes.append(
            (
                f"/brokers/topics/{name}",
                json.dumps(
                    {
                        "removing_replicas": {},
                        "partitions": assignment,
                        "topic_id": f"{t:022d}",
                        "adding_replicas": {},
                        "version": 3,
                    },
                    separators=(",", ":"),
                ).encode(),
            )
        )
        nodes.append((f"/config/topics/{name}", b'{"version":1,"config":{"retention.ms":"86400000"}}'))
        nodes.append((f"/brokers/topics/{name}/partitions", b""))
        for p, replicas in assignment.items():
            nodes.append((f"/brokers/topics/{name}/partitions/{p}", b""))
            nodes.append(
                (
                    f"/brokers/topics/{name}/partitions/{p}/state",
                    json.dumps(
                        {
                            "controller_epoch": 1,
                            "leader": replicas[0],
                            "version": 1,
                            "leader_epoch": 0,
                            "isr": replicas,
                        },
                        separators=(",", ":"),
                    ).encode(),
                )
            )
    return nodes


def _populate(client, root: str) -> int:
    for parent in ("/brokers/ids", "/brokers/topics", "/config/topics", "/admin/delete_topics"):
        client.ensure_path(root + parent)
    nodes = _znodes()
    pending = []
    for path, data in nodes:  # parents come before children in the list; pipelined in batches
        pending.append(client.create_async(root + path, data))
        if len(pending) >= 2000:
            for r in pending:
                r.get(timeout=60)
            pending = []
    for r in pending:
        r.get(timeout=60)
    return len(nodes)


def _naive_read(client, root: str) -> int:
    """One synchronous round trip per znode: the yardstick."""
    count = 0
    for b in client.get_children(root + "/brokers/ids"):
        client.get(f"{root}/brokers/ids/{b}")
        count += 1
    for t in client.get_children(root + "/brokers/topics"):
        data, _ = client.get(f"{root}/brokers/topics/{t}")
        client.get(f"{root}/config/topics/{t}")
        for p in json.loads(data)["partitions"]:
            client.get(f"{root}/brokers/topics/{t}/partitions/{p}/state")
            count += 1
    return count


def run() -> None:
    from kazoo.client import KazooClient

    from planner.adapters import zk
    from planner.adapters.zk.session import _fast_handler

    if not os.path.exists(JARS[0]):
        print("   skipped: zookeeper.jar missing (run `make zookeeper`)")
        return
    workdir = tempfile.mkdtemp(prefix="kp-bench-zk-")
    proc, port = _start_server(workdir)
    try:
        # the same kazoo handler as planner.adapters.zk, so the ratio measures pipelining alone
        client = KazooClient(hosts=f"127.0.0.1:{port}", timeout=30, handler=_fast_handler())
        client.start(timeout=30)
        with timer() as t_pop:
            n = _populate(client, "/kafka")
        print(f"   (populated {n:,} znodes in {t_pop['s']:.1f} s)", flush=True)
        url = f"zk://127.0.0.1:{port}/kafka"
        times = []
        for _ in range(3):
            with timer() as t_read:
                snap = zk.read_snapshot(url, zk.ZkOptions(timeout=60))
            times.append(t_read["s"])
        parts = sum(t.partition_count for t in snap.cluster.topics)
        assert (len(snap.cluster.brokers), parts, snap.attempts) == (N_BROKERS, N_TOPICS * PARTITIONS_PER_TOPIC, 1)
        with timer() as t_naive:
            count = _naive_read(client, "/kafka")
        assert count == N_BROKERS + parts
        client.stop()
        client.close()
        line(
            f"read {N_BROKERS} brokers / {parts:,} partitions (best of 3)",
            min(times),
            "s",
            t_naive["s"],
            "one sync round trip per znode",
            "< 5 s",
            higher_is_better=False,
        )
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(workdir, ignore_errors=True)
