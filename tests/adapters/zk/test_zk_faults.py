"""Faults and bad input against real ZooKeeper servers: one line naming the URL and the problem, exit 2, within
the timeout, nothing written. Tests that stop a server start their own."""

from __future__ import annotations

import time

import pytest
from zk_support import ZkServer, free_port, populate, run_cli

from planner.adapters import zk
from planner.model import PlannerError


def chroot_of(url: str) -> str:
    return url[url.index("/", len("zk://")) :]


def test_unreachable_zookeeper(tmp_path):
    url = f"zk://127.0.0.1:{free_port()}"
    out = tmp_path / "c.yaml"
    started = time.monotonic()
    code, stdout, err = run_cli("zk", "export", url, "--zk-timeout", "2", "-o", str(out))
    elapsed = time.monotonic() - started
    assert (code, stdout) == (1, "")  # the environment failed: exit 1
    assert err == (
        f"error: {url}: cannot connect to ZooKeeper at {url[5:]} within 2 s "
        "(is the server running and the address right? --zk-timeout sets the wait)\n"
    )
    assert elapsed < 2 + 4  # the timeout plus interpreter start-up
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_any_command_takes_the_timeout_from_the_environment():
    url = f"zk://127.0.0.1:{free_port()}"
    started = time.monotonic()
    code, stdout, err = run_cli("describe", url, env={"KAFKA_PLANNER_ZK_TIMEOUT": "1.5"})
    elapsed = time.monotonic() - started
    assert (code, stdout) == (1, "")  # the environment failed: exit 1
    assert err == (
        f"error: {url}: cannot connect to ZooKeeper at {url[5:]} within 1.5 s "
        "(is the server running and the address right? --zk-timeout sets the wait)\n"
    )
    assert elapsed < 1.5 + 4


def test_stopped_server_and_session_lost_mid_read(tmp_path):
    server = ZkServer()
    try:
        server.start()
        from kazoo.client import KazooClient

        client = KazooClient(hosts=server.hosts)
        client.start(timeout=20)
        populate(client, "/kafka")
        client.stop()
        client.close()
        url = server.url + "/kafka"
        assert len(zk.read_cluster(url).brokers) == 5

        def stop_server(message):  # the session is lost after the lists were read
            server.stop()

        started = time.monotonic()
        with pytest.raises(PlannerError) as exc:
            zk.read_snapshot(url, zk.ZkOptions(timeout=3), stop_server)
        assert time.monotonic() - started < 3 + 1
        assert (
            str(exc.value) == f"{url}: lost the ZooKeeper connection at /brokers/ids/1; nothing was written, try again"
        )

        # the server is now stopped: the CLI says so within the timeout, writes nothing
        out = tmp_path / "c.yaml"
        code, stdout, err = run_cli("zk", "export", url, "--zk-timeout", "1.5", "-o", str(out))
        assert (code, stdout) == (1, "")
        assert err == (
            f"error: {url}: cannot connect to ZooKeeper at 127.0.0.1:{server.port} within 1.5 s "
            "(is the server running and the address right? --zk-timeout sets the wait)\n"
        )
        assert not out.exists()
    finally:
        server.cleanup()


def test_wrong_chroot(zk_server):
    url = zk_server.url + "/no-such-kafka"
    code, out, err = run_cli("describe", url)
    assert (code, out) == (2, "")
    assert err == (
        f"error: {url}: no /brokers/ids under chroot /no-such-kafka: not a Kafka cluster's ZooKeeper "
        "path (is the chroot right? e.g. zk://host:2181/kafka)\n"
    )


@pytest.mark.parametrize(
    "path,data,problem",
    [
        (
            "/brokers/topics/bad",
            b'{"version":1,"partitions":{"0":[1,2]',
            "/brokers/topics/bad: malformed JSON: Expecting ',' delimiter: line 1 column 37 (char 36)",
        ),
        (
            "/brokers/topics/legacy/partitions/0/state",
            b"not json",
            "/brokers/topics/legacy/partitions/0/state: malformed JSON: Expecting value: line 1 column 1 (char 0)",
        ),
        (
            "/brokers/ids/9",
            b'{"jmx_port":-1,"timestamp":"1","version":1,"port":9092}',
            "/brokers/ids/9: broker registration has no host (neither 'host' nor 'endpoints' name one); "
            "the broker's advertised.listeners must be set",
        ),
        (
            "/brokers/ids/8",
            b'{"version":4,"host":null,"port":-1,"jmx_port":-1,"timestamp":"1","endpoints":[]}',
            "/brokers/ids/8: broker registration has no host (neither 'host' nor 'endpoints' name one); "
            "the broker's advertised.listeners must be set",
        ),
        (
            "/config/topics/legacy",
            b'{"version":1,"config":["x"]}',
            "/config/topics/legacy: 'config' must be an object of name → value",
        ),
    ],
)
def test_bad_znodes(kafka_url, kazoo_client, tmp_path, path, data, problem):
    node = chroot_of(kafka_url) + path
    if kazoo_client.exists(node):
        kazoo_client.set(node, data)
    else:
        kazoo_client.create(node, data, makepath=True)
    out = tmp_path / "c.yaml"
    code, stdout, err = run_cli("zk", "export", kafka_url, "-o", str(out))
    assert (code, stdout, err) == (2, "", f"error: {kafka_url}: {problem}\n")
    assert not out.exists()


def test_acl_the_client_cannot_pass(kafka_url, kazoo_client, tmp_path):
    from kazoo.security import make_digest_acl

    kazoo_client.set_acls(chroot_of(kafka_url) + "/brokers/ids", [make_digest_acl("kafka", "s3cret", all=True)])
    denied = (
        f"error: {kafka_url}: not authorised to access /brokers/ids (ZooKeeper ACL): give the credentials "
        "with --zk-auth-file or $KAFKA_PLANNER_ZK_AUTH (user:password)\n"
    )
    code, out, err = run_cli("describe", kafka_url)
    assert (code, out, err) == (2, "", denied)
    code, out, err = run_cli("describe", kafka_url, env={"KAFKA_PLANNER_ZK_AUTH": "kafka:wrong"})
    assert (code, out, err) == (2, "", denied)

    code, out, err = run_cli(
        "describe", kafka_url, "--kafka-version", "2.7", env={"KAFKA_PLANNER_ZK_AUTH": "kafka:s3cret"}
    )
    assert (code, err) == (0, "")
    assert out.startswith("Topic: doomed\tPartitionCount: 1\t")
    auth = tmp_path / "zk-auth"
    auth.write_text("kafka:s3cret\n")
    code, out, err = run_cli("zk", "export", kafka_url, "--zk-auth-file", str(auth))
    assert (code, err) == (0, "")
    assert "s3cret" not in out
    code, _, err = run_cli("zk", "export", kafka_url, "--zk-auth-file", str(tmp_path / "missing"))
    assert (code, err) == (2, f"error: --zk-auth-file {tmp_path / 'missing'}: no such file\n")


def test_write_denied_by_acl(simple_url, kazoo_client, tmp_path):
    from kazoo.security import make_digest_acl

    root = chroot_of(simple_url)
    kazoo_client.create(root + "/admin", b"", acl=[make_digest_acl("kafka", "s3cret", all=True)])
    plan = tmp_path / "p.json"
    plan.write_text('{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[2,4]}]}')
    code, out, err = run_cli("zk", "submit", simple_url, "--reassignment-json-file", str(plan), "--execute", "-q")
    assert code == 2
    assert out.startswith("Current partition replica assignment\n") and "Successfully" not in out
    assert err == (
        f"error: {simple_url}: not authorised to access /admin/reassign_partitions (ZooKeeper ACL): "
        "give the credentials with --zk-auth-file or $KAFKA_PLANNER_ZK_AUTH (user:password)\n"
    )
