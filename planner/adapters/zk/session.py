"""A kazoo session with a deadline: connecting (plain, digest, TLS), waiting on async requests, creating
the admin znodes atomically, and one clear error per failure. kazoo is imported only here, only when used."""

from __future__ import annotations

import os
import threading
import time
import warnings
from typing import Any, Callable

from planner.adapters.zk.url import AUTH_ENV, ZkOptions, ZkUrl, parse_url
from planner.model import EnvironmentFailure, PlannerError


def _quiet_kazoo_logging() -> None:
    """kazoo logs connection retries as warnings; without this Python's last-resort handler prints them on stderr."""
    import logging

    log = logging.getLogger("kazoo")
    if not any(isinstance(h, logging.NullHandler) for h in log.handlers):
        log.addHandler(logging.NullHandler())
    log.propagate = False


class _Reached:
    """One connection kazoo made to a server (TCP, and TLS when asked, done): what the server answered to the
    handshake on it."""

    def __init__(self) -> None:
        self.received = 0
        self.head = b""  # the answer's first bytes (its 4-byte length)
        self.closed = False

    def phase(self) -> tuple[str, str]:
        """What the server did after the connection was made: a clause, and the question to ask about it.

        ZooKeeper's ConnectResponse is a 4-byte length then protocolVersion, timeOut, sessionId, passwd, readOnly
        (zookeeper.jute; kazoo/protocol/serialization.py Connect.deserialize): 41 bytes from a 3.5+ server."""
        overloaded = "is it a ZooKeeper server, and is it overloaded?"
        if self.received == 0:
            if self.closed:
                return (
                    "connected, but the server closed the connection without a ZooKeeper handshake answer",
                    "is it a ZooKeeper server? a TLS port needs --zk-ca-file;",
                )
            return "connected, but no ZooKeeper handshake answer", overloaded
        whole = 4 + int.from_bytes(self.head, "big", signed=True) if len(self.head) == 4 else None
        if whole is not None and not 4 + 16 <= whole <= 4 + 1024:  # 36 or 37 bytes follow the length
            return (
                f"connected, but the handshake answer is not ZooKeeper's: its length field says {whole - 4} bytes",
                "is it a ZooKeeper server?",
            )
        if whole is not None and self.received >= whole:
            return f"connected, but the {whole}-byte handshake answer is not ZooKeeper's", "is it a ZooKeeper server?"
        of = f" of the {whole}-byte" if whole is not None else " of the"
        closed = " before the server closed the connection" if self.closed else ""
        return f"connected, but only {self.received} bytes{of} ZooKeeper handshake answer came{closed}", overloaded


class _CountingSocket:
    """kazoo's socket to one server, counting the bytes it receives into a `_Reached` (everything else passes)."""

    __slots__ = ("_sock", "_reached")

    def __init__(self, sock, reached: _Reached):
        self._sock, self._reached = sock, reached

    def recv(self, *args, **kwargs):
        try:
            data = self._sock.recv(*args, **kwargs)
        except (ConnectionResetError, BrokenPipeError):
            # a server that closes with the Connect request unread resets the connection (RST) instead of ending it
            # (FIN): the same answer, closed without a handshake. Which of the two comes depends on whether the
            # request arrived before the close
            self._reached.closed = True
            raise
        reached = self._reached
        if data:
            if len(reached.head) < 4:
                reached.head += data[: 4 - len(reached.head)]
            reached.received += len(data)
        else:
            reached.closed = True
        return data

    def send(self, *args, **kwargs):
        try:
            return self._sock.send(*args, **kwargs)
        except (ConnectionResetError, BrokenPipeError):  # closed (or reset) before kazoo's request was written
            self._reached.closed = True
            raise

    def __getattr__(self, name):
        return getattr(self._sock, name)


def _fast_handler(reached: dict[str, list[_Reached]]):
    """kazoo's threading handler with a cheaper `select`; it records each connection made (keyed "host:port") and
    what the server answered on it, so a connection that fails names the phase it stalled in.

    kazoo's default builds, registers and closes a fresh epoll selector on every call (several per request: ~half of
    the client's CPU time when 20,000 reads are pipelined). Plain `select.select` does the same job for descriptors
    below FD_SETSIZE; larger descriptors fall back to kazoo's selector-based version.
    """
    import select as _select

    from kazoo.handlers.threading import SequentialThreadingHandler

    class FastSelectHandler(SequentialThreadingHandler):
        def select(self, *args, **kwargs):
            try:
                return _select.select(*args, **kwargs)
            except ValueError:  # a descriptor >= FD_SETSIZE
                return super().select(*args, **kwargs)

        def create_connection(self, *args, **kwargs):
            # kazoo/handlers/utils.py create_tcp_connection: the TCP connection (and TLS handshake) is made on return;
            # kazoo then sends its Connect request and reads the answer (protocol/connection.py _connect)
            sock = super().create_connection(*args, **kwargs)
            address = kwargs["address"] if "address" in kwargs else args[0]
            attempt = _Reached()
            reached.setdefault(f"{kwargs.get('hostname') or address[0]}:{address[1]}", []).append(attempt)
            return _CountingSocket(sock, attempt)

    return FastSelectHandler()


def _phases(reached: dict[str, list[_Reached]]) -> tuple[str, str] | None:
    """(clauses, question) for the servers a connection was made to; None when none was (refused, unreachable, the
    TLS handshake failed). One server: its phase; several: "host phase; host phase"."""
    clauses = []
    for host, attempts in list(reached.items()):  # kazoo's thread may still add to it
        best = attempts[0]
        for attempt in list(attempts):  # the attempt that got furthest (a closed one over one still waiting)
            if (attempt.received, attempt.closed) >= (best.received, best.closed):
                best = attempt
        clauses.append((host, *best.phase()))
    if not clauses:
        return None
    if len(clauses) == 1:
        return clauses[0][1], clauses[0][2]
    return "; ".join(f"{host} {clause}" for host, clause, _ in clauses), clauses[0][2]


class Session:
    """A started kazoo client with a deadline, a watch flag for consistency and a connection-lost flag."""

    def __init__(self, zk_url: ZkUrl, opts: ZkOptions):
        try:
            import kazoo  # noqa: F401
        except ImportError:
            raise PlannerError(
                f"{zk_url.url}: reading ZooKeeper needs kazoo: pip install 'kafka-planner[zk]'"
            ) from None
        from kazoo.client import KazooClient
        from kazoo.handlers.threading import KazooTimeoutError
        from kazoo.retry import KazooRetry

        _quiet_kazoo_logging()
        self.url = zk_url.url
        self._reached: dict[str, list[_Reached]] = {}
        self.timeout = opts.timeout
        kwargs: dict[str, Any] = {}
        if opts.auth:
            kwargs["auth_data"] = [("digest", opts.auth)]
        if opts.ca_file:
            for what, path in (("CA", opts.ca_file), ("certificate", opts.cert_file), ("key", opts.key_file)):
                if path and not os.path.isfile(path):
                    raise PlannerError(f"{self.url}: TLS {what} file {path} does not exist")
            # check_hostname: kazoo's default is off; ZooKeeper's own client verifies the host name by default
            kwargs.update(
                use_ssl=True,
                ca=opts.ca_file,
                certfile=opts.cert_file,
                keyfile=opts.key_file,
                verify_certs=True,
                check_hostname=True,
            )
        self.client = KazooClient(
            hosts=zk_url.connect_string,
            handler=_fast_handler(self._reached),
            timeout=max(opts.timeout, 1.0),
            connection_retry=KazooRetry(max_tries=-1, delay=0.1, max_delay=1.0),
            **kwargs,
        )
        self.lost = threading.Event()
        self.deadline = time.monotonic() + opts.timeout
        self.client.add_listener(self._on_state)
        self._guard_requests()
        try:
            # kazoo's start(timeout) stops the client when the time is up, and its stop joins the connection thread
            # without a limit: a server that drips its handshake one byte at a time (each byte restarts kazoo's read
            # timeout) held `zk export --zk-timeout 2` 20 s; its check of the chroot after connecting is a request
            # without a deadline. So: start, wait here, and close without waiting on that thread.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.client.start_async().wait(timeout=opts.timeout)
            if not self.client.connected:
                raise KazooTimeoutError("Connection time-out")
        except KazooTimeoutError:
            self.close(failed=True)
            hosts = ",".join(f"{h}:{p}" for h, p in zk_url.hosts)
            phases = _phases(self._reached)
            if phases is not None:  # a connection was made (and its TLS handshake done): the ZooKeeper one stalled
                raise EnvironmentFailure(
                    f"{self.url}: cannot connect to ZooKeeper at {hosts} within {opts.timeout:g} s: {phases[0]} "
                    f"({phases[1]} --zk-timeout sets the wait)"
                ) from None
            tls = (
                " with TLS (does the server speak TLS on that port, does the --zk-ca-file CA sign its "
                "certificate, and does the certificate name the host in the URL?)"
                if opts.ca_file
                else ""
            )
            raise EnvironmentFailure(
                f"{self.url}: cannot connect to ZooKeeper at {hosts} within {opts.timeout:g} s{tls} "
                "(is the server running and the address right? --zk-timeout sets the wait)"
            ) from None
        except Exception as exc:  # e.g. SSL errors, auth failed during the handshake
            self.close(failed=True)
            raise EnvironmentFailure(f"{self.url}: cannot connect to ZooKeeper: {_explain(exc)}") from None
        self.lost.clear()
        self.deadline = time.monotonic() + opts.timeout

    def _on_state(self, state) -> None:
        if state != "CONNECTED":  # SUSPENDED or LOST
            self.lost.set()

    def remaining(self) -> float:
        return max(self.deadline - time.monotonic(), 0.0)

    def _guard_requests(self) -> None:
        """Every request returns within the deadline, whatever the server does.

        kazoo queues a request and wakes its connection thread by sending a byte on a socket pair. While that thread
        reconnects without end (the server died) or is stuck, nobody reads the pair: after a few hundred requests the
        send blocks the caller forever. Here a request fails at once once the connection is lost, and the wake-up
        send waits at most until the deadline (kazoo then fails the request with ConnectionClosedError).
        """
        from kazoo.exceptions import ConnectionLoss

        issue = self.client._call

        def guarded(request, async_object):
            if self.lost.is_set():
                async_object.set_exception(ConnectionLoss())
                return False
            wake = self.client._connection._write_sock
            if wake is not None:
                wake.settimeout(max(self.remaining(), 0.001))
            return issue(request, async_object)

        self.client._call = guarded

    def close(self, failed: bool = False) -> None:
        """Stop the client; never wait on it longer than a moment (kazoo's stop joins its connection thread without a
        limit, and that thread may be retrying a dead server, or reading a server that drips its answer one byte at a
        time): its threads are daemons and end with the process. After a failure (`failed`: the server did not
        answer in time, or the connection is lost) the wait is half a second: the error is known, and waiting on a
        server that already failed the deadline only delays the one line that says so."""
        wake = getattr(self.client._connection, "_write_sock", None)
        if wake is not None:
            try:
                wake.settimeout(0.5)
            except OSError:
                pass

        def stop() -> None:
            try:
                self.client.stop()
                self.client.close()
            except Exception:
                pass

        stopper = threading.Thread(target=stop, name="zk-close", daemon=True)
        stopper.start()
        stopper.join(0.5 if failed else 2.0 if self.lost.is_set() else 10.0)

    def get(self, path: str) -> bytes | None:
        """One znode's content, None when it does not exist."""
        self.deadline = time.monotonic() + self.timeout
        got = self.wait(self.client.get_async(path), path, missing_ok=True)
        return got[0] if got is not None else None

    def create(self, path: str, data: str, exists: Callable[[bytes | None], str]) -> None:
        """Create `path` holding `data` in one atomic create: if it exists, nothing is written and
        `exists(current content)` is the error message. A racing writer can never be overwritten."""
        from kazoo.exceptions import NodeExistsError, NoNodeError

        self.deadline = time.monotonic() + self.timeout
        parent = path.rsplit("/", 1)[0]
        if parent:
            self.wait(self.client.ensure_path_async(parent), parent)
        try:
            self.client.create_async(path, data.encode("utf-8")).get(timeout=max(self.remaining(), 0.001))
        except NodeExistsError:
            raise PlannerError(exists(self.get(path))) from None
        except NoNodeError as exc:
            raise self.failure(path, exc) from None
        except Exception as exc:
            from kazoo.exceptions import ConnectionLoss, SessionExpiredError
            from kazoo.handlers.threading import KazooTimeoutError

            if isinstance(exc, (KazooTimeoutError, ConnectionLoss, SessionExpiredError)):
                what = "no answer from ZooKeeper" if isinstance(exc, KazooTimeoutError) else "lost the connection"
                raise EnvironmentFailure(
                    f"{self.url}: {what} while creating {path}: it may or may not have been created; "
                    f"check {path} (zk status) before retrying"
                ) from None
            raise self.failure(path, exc) from None

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close(failed=exc[0] is not None)

    # -- waiting with a deadline --------------------------------------------------------------------
    def wait(self, async_result, path: str, missing_ok: bool = False):
        """The result of one async request, within the deadline; None for a missing node when missing_ok."""
        from kazoo.exceptions import NoNodeError
        from kazoo.handlers.threading import KazooTimeoutError

        try:
            return async_result.get(timeout=max(self.remaining(), 0.001))
        except NoNodeError:
            if missing_ok:
                return None
            raise
        except KazooTimeoutError:
            raise self.failure(path, None) from None
        except Exception as exc:
            raise self.failure(path, exc) from None

    def failure(self, path: str, exc: BaseException | None) -> PlannerError:
        from kazoo.exceptions import AuthFailedError, ConnectionLoss, NoAuthError, SessionExpiredError

        if isinstance(exc, NoAuthError):
            return PlannerError(
                f"{self.url}: not authorised to access {path} (ZooKeeper ACL): give the credentials with "
                f"--zk-auth-file or ${AUTH_ENV} (user:password)"
            )
        if isinstance(exc, AuthFailedError):
            return PlannerError(f"{self.url}: ZooKeeper authentication failed: check --zk-auth-file or ${AUTH_ENV}")
        if exc is None or isinstance(exc, (ConnectionLoss, SessionExpiredError)) or self.lost.is_set():
            if self.lost.is_set() or isinstance(exc, (ConnectionLoss, SessionExpiredError)):
                return EnvironmentFailure(
                    f"{self.url}: lost the ZooKeeper connection at {path}; nothing was written, try again"
                )
            return EnvironmentFailure(
                f"{self.url}: no answer from ZooKeeper for {path} within {self.timeout:g} s "
                "(--zk-timeout sets the wait)"
            )
        return PlannerError(f"{self.url}: {path}: {_explain(exc)}")


def _explain(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())


def connect(url: str, opts: ZkOptions) -> "Session":
    """A connected session (a context manager): `.get()`, `.wait()`, `.create()` for the admin znodes."""
    return Session(parse_url(url), opts)
