"""A real ZooKeeper killed, stopped or expiring mid-read on a 3,000-partition cluster: the read returns within its
timeout with one line (kazoo's connection thread retries without end and its wake-up socket fills; see
planner.adapters.zk.session.Session._guard_requests)."""

from __future__ import annotations

import os
import signal
import time

import pytest
from zk_support import ZkServer

import planner.adapters.zk.snapshot as snapshot
from planner.adapters import zk
from planner.model import PlannerError

TOPICS, PARTITIONS = 30, 100  # 3,000 partitions


def _populate_big(client, chroot: str) -> None:
    for b in (1, 2, 3):
        client.create(
            f"{chroot}/brokers/ids/{b}",
            f'{{"version":4,"host":"k{b}","port":9092,"jmx_port":-1,'
            f'"timestamp":"1","endpoints":["PLAINTEXT://k{b}:9092"]}}'.encode(),
            makepath=True,
        )
    client.ensure_path(f"{chroot}/brokers/topics")
    for t in range(TOPICS):
        parts = ",".join(f'"{p}":[{p % 3 + 1},{(p + 1) % 3 + 1}]' for p in range(PARTITIONS))
        tx = client.transaction()
        tx.create(f"{chroot}/brokers/topics/t{t}", f'{{"version":1,"partitions":{{{parts}}}}}'.encode())
        tx.create(f"{chroot}/brokers/topics/t{t}/partitions")
        for p in range(PARTITIONS):
            tx.create(f"{chroot}/brokers/topics/t{t}/partitions/{p}")
            tx.create(
                f"{chroot}/brokers/topics/t{t}/partitions/{p}/state",
                f'{{"controller_epoch":1,"leader":{p % 3 + 1},"version":1,"leader_epoch":0,'
                f'"isr":[{p % 3 + 1},{(p + 1) % 3 + 1}]}}'.encode(),
            )
        assert all(r is True or isinstance(r, str) for r in tx.commit())


@pytest.fixture(scope="module")
def big():
    from kazoo.client import KazooClient

    server = ZkServer().start()
    client = KazooClient(hosts=server.hosts, timeout=10)
    client.start(timeout=20)
    _populate_big(client, "/big")
    client.stop()
    client.close()
    yield server
    server.cleanup()


def _read_with(url: str, fault, monkeypatch, timeout: float = 3.0) -> tuple[float, str]:
    """Read the cluster; `fault(session)` strikes once the topic znodes are read, just before the 3,000
    partition-state reads are sent."""
    session = zk.connect(url, zk.ZkOptions(timeout=timeout))
    decode = snapshot.decode_topic
    seen = []

    def decode_then_fault(*args):
        seen.append(args)
        if len(seen) == TOPICS:
            fault(session)
        return decode(*args)

    monkeypatch.setattr(snapshot, "decode_topic", decode_then_fault)
    started = time.monotonic()
    try:
        with pytest.raises(PlannerError) as exc:
            with session:
                snapshot.read_consistent(session, None)
    finally:
        elapsed = time.monotonic() - started
    return elapsed, str(exc.value)


def test_the_big_cluster_reads(big):
    snap = zk.read_snapshot(big.url + "/big", zk.ZkOptions(timeout=20))
    assert sum(t.partition_count for t in snap.cluster.topics) == TOPICS * PARTITIONS


def test_session_expired_mid_read_returns_within_the_timeout(big, monkeypatch):
    from kazoo.client import KazooClient

    def expire(session) -> None:  # a second client on the same session, closed: the server expires it
        twin = KazooClient(hosts=big.hosts, client_id=session.client.client_id, timeout=10)
        twin.start(timeout=10)
        twin.stop()
        twin.close()

    url = big.url + "/big"
    elapsed, message = _read_with(url, expire, monkeypatch)
    assert elapsed < 3 + 2
    assert message.startswith(f"{url}: lost the ZooKeeper connection at /")
    assert message.endswith("; nothing was written, try again")


def test_server_stopped_mid_read_returns_within_the_timeout(big, monkeypatch):
    def freeze(session) -> None:
        os.kill(big.proc.pid, signal.SIGSTOP)

    url = big.url + "/big"
    try:
        elapsed, message = _read_with(url, freeze, monkeypatch, timeout=2.0)
    finally:
        os.kill(big.proc.pid, signal.SIGCONT)
    assert elapsed < 2 + 2
    assert message.startswith(f"{url}: ")
    assert "no answer from ZooKeeper for /brokers/" in message or "lost the ZooKeeper connection" in message, message


def test_server_killed_mid_read_returns_within_the_timeout(big, monkeypatch):
    def kill(session) -> None:
        big.proc.kill()
        big.proc.wait()

    url = big.url + "/big"
    elapsed, message = _read_with(url, kill, monkeypatch)
    assert elapsed < 3 + 2
    assert message.startswith(f"{url}: lost the ZooKeeper connection at /")
