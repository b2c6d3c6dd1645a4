"""Hostile and slow servers (issue 33): a bootstrap server that accepts the connection and never answers, one that
answers with a length no Kafka answer has, a TLS listener read as plaintext and the reverse, against loopback
listeners beside the real KRaft cluster (tests/realkafka/real_cluster.py). The next bootstrap server is asked as
Kafka's clients ask it; every wait ends within the timeout; each failure is one line naming the server."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest
from realkafka.real_cluster import SCRAM_PASSWORD
from testkit import ROOT

PREFIX = "test_reliability_hostile_brokers-"
TOPIC = PREFIX + "t"


class Listener:
    """A TCP listener on 127.0.0.1 that accepts every connection and then, per `mode`: "silent" reads and never
    answers; "close" closes it at once; an int: answers each request with that 4-byte length (and nothing more)."""

    def __init__(self, mode: str | int = "silent"):
        self.mode = mode
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.conns: list[socket.socket] = []
        self.accepted = 0
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(0.1)
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            self.conns.append(conn)
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        if self.mode == "close":
            conn.close()
            return
        try:
            while conn.recv(65536):
                if isinstance(self.mode, int):
                    conn.sendall(struct.pack(">i", self.mode))
        except OSError:
            pass

    def close(self) -> None:
        self._stop = True
        self._thread.join(2)
        for conn in self.conns:
            conn.close()
        self.sock.close()

    def __enter__(self) -> "Listener":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _refused_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as s:
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster(real_kafka):
    real_kafka.create_topic(TOPIC, [[1, 2], [2, 3]])
    real_kafka.wait_for_topic(TOPIC, 2)
    try:
        yield real_kafka
    finally:
        real_kafka.delete_topics(TOPIC)


def _timed(planner_cli, *args: str, env: dict[str, str]) -> tuple[tuple[int, str, str], float]:
    start = time.monotonic()
    result = planner_cli(*args, env={"PATH": os.environ.get("PATH", ""), **env})
    return result, time.monotonic() - start


def test_a_silent_first_bootstrap_server_costs_one_timeout_then_the_next_answers(cluster, planner_cli):
    # Kafka's clients move to the next bootstrap server when one does not answer its ApiVersionsRequest within
    # request.timeout.ms; here each server gets the timeout (3 s), in the URL's order. Before: 2-3 runs in 5 failed
    first = cluster.bootstrap.split(",")[0]
    env = {"KAFKA_PLANNER_KAFKA_TIMEOUT": "3"}
    expected, _ = _timed(planner_cli, "describe", f"kafka://{first}", "--topic", TOPIC, env=env)
    assert expected[0] == 0 and f"Topic: {TOPIC}\t" in expected[1], expected
    with Listener() as silent:
        for _ in range(2):
            got, seconds = _timed(
                planner_cli, "describe", f"kafka://{silent.address},{first}", "--topic", TOPIC, env=env
            )
            assert got == expected
            assert 3 <= seconds < 3 + 20, seconds  # the silent server's timeout, then the real broker
        assert silent.accepted == 2  # one connection a run: its ApiVersionsRequest got no answer
        got, seconds = _timed(planner_cli, "describe", f"kafka://{first},{silent.address}", "--topic", TOPIC, env=env)
        assert got == expected and seconds < 20
        assert silent.accepted == 2  # the first server answered: the silent one was never asked


def test_no_bootstrap_server_answers_one_line_naming_each(planner_cli):
    refused = _refused_port()
    with Listener() as silent, Listener(2_000_000_000) as big, Listener(-5) as negative, Listener("close") as closing:
        url = f"kafka://{silent.address},127.0.0.1:{refused},{big.address},{negative.address},{closing.address}"
        (code, out, err), seconds = _timed(planner_cli, "kafka", "export", url, "--timeout", "2", env={})
    assert (code, out) == (1, "")
    assert err == (
        f"error: {url}: no bootstrap server answered: {silent.address} accepted the connection but sent no answer "
        f"within 2 s; 127.0.0.1:{refused} refused the connection; {big.address} sent an answer of 2000000000 bytes, "
        f"more than the 100000000 kafka-planner accepts; {negative.address} sent an answer whose length is negative "
        f"(-5): not Kafka's protocol; {closing.address} closed the connection without a Kafka answer (is a Kafka "
        "broker listening there, and does it speak PLAINTEXT? --timeout or $KAFKA_PLANNER_KAFKA_TIMEOUT sets the wait "
        "for each server)\n"
    )
    assert 2 <= seconds < 2 + 10, seconds  # the silent one waited for; the lengths refused at once


def test_a_silent_listener_under_sasl_ssl_is_bounded_by_the_timeout(cluster, planner_cli):
    # kafka-python's TLS handshake waits without a deadline (a silent SASL_SSL listener held the command 90 s)
    with Listener() as silent:
        url = f"kafka://{silent.address}"
        args = ("describe", url, "--topic", TOPIC)
        env = {"KAFKA_PLANNER_KAFKA_COMMAND_CONFIG": str(cluster.command_config), "KAFKA_PLANNER_KAFKA_TIMEOUT": "2"}
        (code, out, err), seconds = _timed(planner_cli, *args, env=env)
    assert (code, out) == (1, "")
    assert err == (
        f"error: {url}: {silent.address} accepted the connection but sent no answer within 2 s (is a Kafka broker "
        "listening there, and does it speak SASL_SSL? --timeout or $KAFKA_PLANNER_KAFKA_TIMEOUT sets the wait)\n"
    )
    assert SCRAM_PASSWORD not in err
    assert 2 <= seconds < 2 + 10, seconds


def test_then_the_real_sasl_ssl_listener_answers(cluster, planner_cli):
    with Listener() as silent:
        url = f"kafka://{silent.address},{cluster.sasl_bootstrap.split(',')[0]}"
        env = {"KAFKA_PLANNER_KAFKA_COMMAND_CONFIG": str(cluster.command_config), "KAFKA_PLANNER_KAFKA_TIMEOUT": "3"}
        (code, out, err), seconds = _timed(planner_cli, "describe", url, "--topic", TOPIC, env=env)
    assert (code, err) == (0, "")
    assert f"Topic: {TOPIC}\t" in out
    assert 3 <= seconds < 3 + 20, seconds


def test_plaintext_client_at_the_real_tls_listener_names_tls(cluster, planner_cli):
    # Kafka's SASL_SSL listener answers a plaintext ApiVersionsRequest with a TLS alert, whose first bytes read as a
    # length of 0x15030300 (KAFKA-4493: Kafka's own clients read it so too, and then allocate that much)
    server = cluster.sasl_bootstrap.split(",")[0]
    (code, out, err), seconds = _timed(planner_cli, "kafka", "export", f"kafka://{server}", "--timeout", "5", env={})
    assert (code, out) == (1, "")
    assert err == (
        f"error: kafka://{server}: {server} sent a TLS record where a Kafka answer belongs: the listener expects "
        "security.protocol SSL or SASL_SSL (is a Kafka broker listening there, and does it speak PLAINTEXT?)\n"
    )
    assert seconds < 5, seconds  # at once, not after the timeout


def test_tls_client_at_the_real_plaintext_listener(cluster, planner_cli):
    server = cluster.bootstrap.split(",")[0]
    args = ("kafka", "export", f"kafka://{server}", "--timeout", "5", "--command-config", str(cluster.command_config))
    (code, out, err), seconds = _timed(planner_cli, *args, env={})
    assert (code, out) == (1, "")
    assert err == (
        f"error: kafka://{server}: {server} closed the connection during the TLS handshake (is a Kafka broker "
        "listening there, and does it speak SASL_SSL?)\n"
    )
    assert SCRAM_PASSWORD not in err
    assert seconds < 5, seconds


def test_an_answer_over_the_limit_after_the_bootstrap_is_one_line():
    from kafka import errors as Errors

    from planner.adapters.kafka.connection import KafkaOptions, KafkaSession, parse_url
    from planner.model import EnvironmentFailure

    session = object.__new__(KafkaSession)  # `call` turns the client's errors into one line
    session.url, session.kurl, session.opts = "kafka://127.0.0.1:1", parse_url("kafka://127.0.0.1:1"), KafkaOptions()

    def read():
        raise Errors.InvalidReceiveError("Invalid frame length: 200000000")

    with pytest.raises(EnvironmentFailure) as exc:
        session.call("list the topics", read)
    assert str(exc.value) == (
        "kafka://127.0.0.1:1: a broker sent an answer of 200000000 bytes, more than the 100000000 kafka-planner "
        "accepts while trying to list the topics; nothing of it was read"
    )


def test_too_few_open_files_for_the_brokers_names_ulimit_n(cluster):
    # kafka-python retried EMFILE as a connection failure until its timeout: "no answer while trying to describe the
    # log dirs of broker 3 within 10 s" (6 descriptors: Python's 3, then the probe and the client's sockets)
    start = time.monotonic()
    proc = subprocess.run(
        ["bash", "-c", f'ulimit -n 6 && exec "$0" -m planner describe {cluster.url}', sys.executable],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": os.environ.get("PATH", ""), "KAFKA_PLANNER_KAFKA_TIMEOUT": "5"},
        timeout=120,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1,
        "",
        "error: too many open files: the open-files limit (ulimit -n) is 6; raise it (e.g. ulimit -n 4096)\n",
    )
    assert time.monotonic() - start < 5 + 10


def test_a_thread_that_cannot_start_names_ulimit_u(planner_cli_here, monkeypatch):
    # root ignores RLIMIT_NPROC, so `ulimit -u` cannot be made to bite here: Thread.start fails as CPython fails it
    # when pthread_create does (EAGAIN: "can't start new thread"), once the listener answered the probe
    import resource

    start = threading.Thread.start

    def refuse(self):
        if getattr(getattr(self, "_target", None), "__self__", None) is answering:  # the listener's own
            return start(self)
        raise RuntimeError("can't start new thread")

    with Listener(10) as answering:
        monkeypatch.setattr(threading.Thread, "start", refuse)
        got = planner_cli_here("describe", f"kafka://{answering.address}")
        monkeypatch.undo()
    soft = resource.getrlimit(resource.RLIMIT_NPROC)[0]
    shown = "unlimited" if soft == resource.RLIM_INFINITY else str(soft)
    assert got == (
        1,
        "",
        f"error: cannot start a thread: the limit on processes and threads (ulimit -u) is {shown}, or the memory for "
        "thread stacks ran out; raise it (e.g. ulimit -u 4096)\n",
    )
