"""A ZooKeeper that drips its answers (issue 33): a loopback proxy in front of the real server forwards what the
client sends at once and what the server answers one byte at a time. Each byte restarts kazoo's own read timeout, so
only the planner's deadline ends the wait: within --zk-timeout (plus the interpreter's start), one line, exit 1."""

from __future__ import annotations

import re
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest
from testkit import ROOT

# ZooKeeper's ConnectResponse: length, protocol version, timeout, session id, a 16-byte password, read-only flag
HANDSHAKE_BYTES = 4 + 4 + 4 + 8 + 4 + 16 + 1


class _LoopbackListener:
    """A server socket on 127.0.0.1 (`port`) whose accepting thread hands each connection to `_serve`; `close` stops
    the thread and closes the listener and every socket `_serve` kept in `_socks`."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self._stop = False
        self._socks: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        self.sock.settimeout(0.1)
        while not self._stop:
            try:
                client, _ = self.sock.accept()
            except OSError:
                continue
            self._serve(client)

    def _serve(self, client: socket.socket) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self._stop = True
        self._thread.join()
        self.sock.close()
        for s in self._socks:
            s.close()


class DripProxy(_LoopbackListener):
    """127.0.0.1:`port` forwarding to `target`; the server's bytes after the first `after` go one per `delay` s."""

    def __init__(self, target: int, delay: float, after: int = 0):
        self.target, self.delay, self.after = target, delay, after
        super().__init__()

    def _serve(self, client: socket.socket) -> None:
        server = socket.create_connection(("127.0.0.1", self.target))
        self._socks += [client, server]
        threading.Thread(target=self._pump, args=(client, server, False), daemon=True).start()
        threading.Thread(target=self._pump, args=(server, client, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, drip: bool) -> None:
        sent = 0
        try:
            while not self._stop:
                data = src.recv(65536)
                if not data:
                    break
                for i in range(len(data)):
                    if drip and sent >= self.after:
                        time.sleep(self.delay)
                    dst.sendall(data[i : i + 1])
                    sent += 1
        except OSError:
            pass


class StalledListener(_LoopbackListener):
    """127.0.0.1:`port` accepting connections and then: "silent" reads the Connect request and answers nothing,
    "partial" answers the first 7 bytes of a 41-byte ConnectResponse and nothing more, "closed" closes at once,
    "reset" reads the start of the Connect request and closes with the rest unread and no linger, so the client gets
    a reset (RST), not an end (FIN). "closed" gives either: a reset when the request came before the close."""

    def __init__(self, mode: str):
        self.mode = mode
        super().__init__()

    def _serve(self, client: socket.socket) -> None:
        if self.mode == "closed":
            client.close()
            return
        if self.mode == "reset":
            client.settimeout(10)
            client.recv(4)
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            client.close()
            return
        self._socks.append(client)
        if self.mode == "partial":
            client.sendall((HANDSHAKE_BYTES - 4).to_bytes(4, "big") + b"\0\0\0")


def _export(url: str, tmp_path) -> tuple[tuple[int, str, str], float]:
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "planner", "zk", "export", url, "--zk-timeout", "2", "-o", str(tmp_path / "x.yaml")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    return (proc.returncode, proc.stdout, proc.stderr), time.monotonic() - start


def _export_through(server, zk_server, kafka_url: str, tmp_path) -> tuple[str, tuple[int, str, str], float]:
    """`zk export` of kafka_url reached through `server` (a DripProxy or StalledListener), which is closed after:
    (the URL used, (exit code, stdout, stderr), seconds); nothing may be written."""
    try:
        url = kafka_url.replace(zk_server.hosts, f"127.0.0.1:{server.port}")
        got, seconds = _export(url, tmp_path)
    finally:
        server.close()
    assert not (tmp_path / "x.yaml").exists()
    return url, got, seconds


def test_a_handshake_dripped_byte_by_byte_ends_at_the_timeout(zk_server, kafka_url, tmp_path):
    # before: kazoo's start(timeout) stopped the client at the deadline and then joined its connection thread, which
    # read the 41-byte answer to its end: about 20 s. At a byte per 0.5 s, a few bytes of it came within the 2 s
    proxy = DripProxy(zk_server.port, 0.5)
    url, (code, out, err), seconds = _export_through(proxy, zk_server, kafka_url, tmp_path)
    came = re.fullmatch(
        re.escape(
            f"error: {url}: cannot connect to ZooKeeper at 127.0.0.1:{proxy.port} within 2 s: connected, but only "
        )
        + r"(\d+) bytes of the( 41-byte)? "
        + re.escape(
            "ZooKeeper handshake answer came (is it a ZooKeeper server, and is it overloaded? --zk-timeout sets the "
            "wait)\n"
        ),
        err,
    )
    assert (code, out, bool(came)) == (1, "", True), err
    assert 1 <= int(came[1]) < HANDSHAKE_BYTES and bool(came[2]) == (int(came[1]) >= 4), err
    assert 2 <= seconds < 2 + 6, seconds


def test_answers_dripped_after_the_handshake_end_at_the_timeout(zk_server, kafka_url, tmp_path):
    # before: the wait ended at the deadline, then closing the session waited 10 s more on kazoo's thread; exit 2
    url, got, seconds = _export_through(
        DripProxy(zk_server.port, 0.2, after=HANDSHAKE_BYTES), zk_server, kafka_url, tmp_path
    )
    assert got == (
        1,
        "",
        f"error: {url}: no answer from ZooKeeper for /brokers/ids within 2 s (--zk-timeout sets the wait)\n",
    )
    assert 2 <= seconds < 2 + 6, seconds


@pytest.mark.parametrize(
    "mode, phase",
    [
        (
            "silent",
            "connected, but no ZooKeeper handshake answer (is it a ZooKeeper server, and is it overloaded? "
            "--zk-timeout sets the wait)",
        ),
        (
            "partial",
            "connected, but only 7 bytes of the 41-byte ZooKeeper handshake answer came (is it a ZooKeeper server, "
            "and is it overloaded? --zk-timeout sets the wait)",
        ),
        (
            "closed",
            "connected, but the server closed the connection without a ZooKeeper handshake answer (is it a ZooKeeper "
            "server? a TLS port needs --zk-ca-file; --zk-timeout sets the wait)",
        ),
        # before: a reset was read as no answer at all ("is it overloaded?"); CI met it in "closed" when the request
        # reached the listener before its close
        (
            "reset",
            "connected, but the server closed the connection without a ZooKeeper handshake answer (is it a ZooKeeper "
            "server? a TLS port needs --zk-ca-file; --zk-timeout sets the wait)",
        ),
    ],
)
def test_a_stalled_handshake_names_its_phase(mode, phase, tmp_path):
    # before: all three said "cannot connect ... (is the server running and the address right?)", as for a port
    # nothing listens on, though the TCP connection was made
    listener = StalledListener(mode)
    url = f"zk://127.0.0.1:{listener.port}/kafka"
    try:
        got, seconds = _export(url, tmp_path)
    finally:
        listener.close()
    assert got == (
        1,
        "",
        f"error: {url}: cannot connect to ZooKeeper at 127.0.0.1:{listener.port} within 2 s: {phase}\n",
    )
    assert 2 <= seconds < 2 + 6, seconds
    assert list(tmp_path.iterdir()) == []
