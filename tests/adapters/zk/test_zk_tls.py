"""TLS through kazoo's options (--zk-ca-file) against a real ZooKeeper server with a TLS client port."""

from __future__ import annotations

import pytest
from zk_support import ZkServer, make_tls_material, populate, run_cli

from planner.adapters import zk
from planner.model import PlannerError


@pytest.fixture(scope="module")
def tls_server():
    server = ZkServer(tls=True)
    try:
        server.start()
        from kazoo.client import KazooClient

        client = KazooClient(hosts=server.hosts, use_ssl=True, ca=server.ca_file, verify_certs=True)
        client.start(timeout=20)
        populate(client, "/kafka")
        client.stop()
        client.close()
        yield server
    finally:
        server.cleanup()


def test_describe_and_export_over_tls(tls_server):
    url = tls_server.url + "/kafka"
    code, out, err = run_cli("zk", "export", url, "--zk-ca-file", tls_server.ca_file, "--quiet")
    assert (code, err) == (0, "")
    assert "  - {id: 3, rack: r1, host: kafka3, port: 9092}\n" in out
    assert len(zk.read_cluster(url, ca_file=tls_server.ca_file).topics) == 4


def test_tls_with_the_wrong_ca_is_refused(tls_server, tmp_path):
    other_ca = make_tls_material(str(tmp_path))  # a CA that did not sign the server's certificate
    url = tls_server.url + "/kafka"
    with pytest.raises(PlannerError) as exc:
        zk.read_cluster(url, timeout=2, ca_file=other_ca)
    assert str(exc.value) == (
        f"{url}: cannot connect to ZooKeeper at {tls_server.hosts} within 2 s with TLS (does the server speak TLS "
        "on that port, does the --zk-ca-file CA sign its certificate, and does the certificate name the host in the "
        "URL?) (is the server running and the address right? --zk-timeout sets the wait)"
    )


def test_tls_checks_the_host_name(tls_server):
    # the server's certificate (signed by the right CA) names only IP 127.0.0.1: reaching it as "localhost" is refused
    url = f"zk://localhost:{tls_server.port}/kafka"
    with pytest.raises(PlannerError) as exc:
        zk.read_cluster(url, timeout=2, ca_file=tls_server.ca_file)
    assert str(exc.value).startswith(
        f"{url}: cannot connect to ZooKeeper at localhost:{tls_server.port} within 2 s with TLS ("
    )


def test_plain_client_on_tls_port_and_missing_ca_file(tls_server):
    url = tls_server.url + "/kafka"
    with pytest.raises(PlannerError) as exc:
        zk.read_cluster(url, timeout=2)
    assert str(exc.value) == (  # the TLS port closes the connection on a plain Connect request
        f"{url}: cannot connect to ZooKeeper at {tls_server.hosts} within 2 s: connected, but the server closed the "
        "connection without a ZooKeeper handshake answer (is it a ZooKeeper server? a TLS port needs --zk-ca-file; "
        "--zk-timeout sets the wait)"
    )
    code, _, err = run_cli("zk", "export", url, "--zk-ca-file", "/nonexistent/ca.pem")
    assert (code, err) == (2, f"error: {url}: TLS CA file /nonexistent/ca.pem does not exist\n")
