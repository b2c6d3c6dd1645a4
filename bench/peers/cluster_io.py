"""A scenario as the peers and our planner read it: Kafka's znodes under a chroot of a real ZooKeeper, partition
sizes as `kafka-log-dirs.sh --describe` prints them, and as a Prometheus exporter on loopback serves them."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator, Mapping

from planner.model import Cluster, TopicPartition


def znodes(cluster: Cluster) -> Iterator[tuple[str, bytes]]:
    """Kafka's ZooKeeper layout (ZkData.scala): broker registrations (v5, with racks), topic assignments (v2),
    partition states (leader = preferred replica, ISR = all replicas) and empty topic configs."""
    yield "/cluster/id", b'{"version":"1","id":"kafka-planner-bench0000"}'
    for b in cluster.brokers:
        reg = {
            "features": {},
            "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
            "endpoints": [f"PLAINTEXT://{b.host}:{b.port}"],
            "rack": b.rack,
            "jmx_port": -1,
            "host": b.host,
            "timestamp": "1700000000000",
            "port": b.port,
            "version": 5,
        }
        yield f"/brokers/ids/{b.id}", json.dumps(reg, separators=(",", ":")).encode()
    for t in cluster.topics:
        parts = {str(p.id): list(p.replicas) for p in t.partitions}
        body = {"version": 2, "partitions": parts, "adding_replicas": {}, "removing_replicas": {}}
        yield f"/brokers/topics/{t.name}", json.dumps(body, separators=(",", ":")).encode()
        yield f"/config/topics/{t.name}", b'{"version":1,"config":{}}'
        for p in t.partitions:
            state = {
                "controller_epoch": 1,
                "leader": p.replicas[0],
                "version": 1,
                "leader_epoch": 0,
                "isr": list(p.replicas),
            }
            yield f"/brokers/topics/{t.name}/partitions/{p.id}/state", json.dumps(state).encode()


def load(hosts: str, chroot: str, cluster: Cluster) -> None:
    """Write `cluster` under `chroot` (replacing what was there), parents before children, in async batches."""
    from kazoo.client import KazooClient

    client = KazooClient(hosts=hosts, timeout=20)
    client.start(timeout=20)
    try:
        if client.exists(chroot):
            client.delete(chroot, recursive=True)
        client.ensure_path(chroot)
        data = dict(znodes(cluster))
        for path in list(data):
            for i in range(1, len(path)):
                if path[i] == "/":
                    data.setdefault(path[:i], b"")
        for depth in sorted({p.count("/") for p in data}):
            _create_all(client, [(chroot + p, v) for p, v in sorted(data.items()) if p.count("/") == depth])
    finally:
        client.stop()
        client.close()


def _create_all(client, items: list[tuple[str, bytes]], batch: int = 500) -> None:
    for i in range(0, len(items), batch):
        for result in [client.create_async(path, value) for path, value in items[i : i + batch]]:
            result.get(timeout=30)


def log_dirs_json(cluster: Cluster, sizes: Mapping[TopicPartition, int]) -> str:
    """What `kafka-log-dirs.sh --describe --bootstrap-server ...` prints for the cluster: every replica's size."""
    brokers = []
    for b in cluster.broker_ids:
        parts = [
            {"partition": f"{p.topic}-{p.id}", "size": sizes[p.tp], "offsetLag": 0, "isFuture": False}
            for p in cluster.partitions()
            if b in p.replicas
        ]
        brokers.append(
            {"broker": b, "logDirs": [{"logDir": "/var/lib/kafka/data", "error": None, "partitions": parts}]}
        )
    ids = ",".join(map(str, cluster.broker_ids))
    return (
        "Querying brokers for log directories information\n"
        f"Received log directory information from brokers {ids}\n"
        + json.dumps({"version": 1, "brokers": brokers}, separators=(",", ":"))
        + "\n"
    )


SIZE_METRIC = "kafka_log_log_size"


class SizeExporter:
    """A Prometheus exporter on 127.0.0.1 serving `kafka_log_log_size{partition=..,topic=..}` (the JMX exporter's
    name for kafka.log:type=Log,name=Size), the way LinkedIn's prometheus sizer reads partition sizes."""

    def __init__(self, sizes: Mapping[TopicPartition, int]) -> None:
        body = "".join(
            f'{SIZE_METRIC}{{partition="{tp.partition}",topic="{tp.topic}",}} {size}\n'
            for tp, size in sorted(sizes.items())
        ).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "SizeExporter":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
