"""Fixtures: a real ZooKeeper server (Debian's zookeeper.jar) on a free loopback port with its own data directory.

`zk_server` is session-scoped and shared; tests that stop a server start their own `ZkServer`.
"""

from __future__ import annotations

import pytest
from zk_support import ZkServer, populate


@pytest.fixture(scope="session")
def zk_server():
    server = ZkServer()
    try:
        yield server.start()
    finally:
        server.cleanup()


@pytest.fixture
def kazoo_client(zk_server):
    """A raw kazoo client to write znodes the way Kafka does (test set-up only)."""
    from kazoo.client import KazooClient

    client = KazooClient(hosts=zk_server.hosts, timeout=10)
    client.start(timeout=20)
    try:
        yield client
    finally:
        client.stop()
        client.close()


@pytest.fixture
def kafka_url(zk_server, kazoo_client, request):
    """A fresh chroot per test holding KAFKA_ZNODES; the zk:// URL pointing at it."""
    chroot = "/" + request.node.name.replace("[", "_").replace("]", "").replace("/", "_")
    if kazoo_client.exists(chroot):
        kazoo_client.delete(chroot, recursive=True)
    populate(kazoo_client, chroot)
    return f"{zk_server.url}{chroot}"


@pytest.fixture
def simple_url(zk_server, kazoo_client, request):
    """A fresh chroot per test holding SIMPLE_ZNODES (no reassignment running)."""
    from zk_support import SIMPLE_ZNODES

    chroot = "/simple_" + request.node.name.replace("[", "_").replace("]", "").replace("/", "_")
    if kazoo_client.exists(chroot):
        kazoo_client.delete(chroot, recursive=True)
    populate(kazoo_client, chroot, SIMPLE_ZNODES)
    return f"{zk_server.url}{chroot}"
