"""`kafka://host:port[,host:port…]`, the client settings Kafka's tools take (`--command-config FILE`), and a session
over kafka-python's `KafkaAdminClient` whose every failure is one `PlannerError` naming the URL.

kafka-python is imported only inside `KafkaSession`. Credentials live only in `KafkaOptions` (whose repr hides
them) and in the client: no message, log line or file carries them.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import struct
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from planner.adapters import secrets
from planner.adapters.files import read_text
from planner.adapters.hosts import parse_hosts, seconds_from_env
from planner.model import EnvironmentFailure, PlannerError

DEFAULT_PORT = 9092
COMMAND_CONFIG_ENV = "KAFKA_PLANNER_KAFKA_COMMAND_CONFIG"
TIMEOUT_ENV = "KAFKA_PLANNER_KAFKA_TIMEOUT"
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
# kafka-python's limit on one answer (KafkaAdminClient's receive_message_max_bytes). Kafka's Java clients read any
# size (NetworkReceive.UNLIMITED; KIP-498's client-side limit was never merged, KAFKA-4090): a bound keeps a listener
# that is not Kafka's (a TLS port read as plaintext announces 0x15030300 = 352,518,912 bytes) from costing memory.
MAX_ANSWER_BYTES = 100_000_000


@dataclass(frozen=True)
class KafkaUrl:
    url: str
    hosts: tuple[tuple[str, int], ...]

    @property
    def bootstrap(self) -> str:
        return ",".join(f"{h}:{p}" for h, p in self.hosts)


def parse_url(url: str) -> KafkaUrl:
    """`kafka://host:port[,host:port…]` (a host without a port is :9092, as in `bootstrap.servers`)."""
    shown = secrets.mask_userinfo(url)  # a typo must not show the password of kafka://u:p@…
    if not url.startswith("kafka://"):
        raise PlannerError(f"{shown}: not a Kafka URL: expected kafka://host:port[,host:port...]")
    rest = url[len("kafka://") :].rstrip("/")
    if "@" in rest:
        raise PlannerError(
            f"kafka://...: do not put credentials in the URL; use --command-config FILE or ${COMMAND_CONFIG_ENV}"
        )
    if not rest or "/" in rest:
        raise PlannerError(f"{shown}: expected kafka://host:port[,host:port...] (bootstrap servers, no path)")
    hosts = parse_hosts(shown, rest, DEFAULT_PORT, "kafka://broker1:9092,broker2:9092")
    return KafkaUrl(url=url, hosts=tuple((host.strip("[]"), port) for host, port in hosts))


@dataclass(frozen=True)
class KafkaOptions:
    timeout: float = 10.0  # seconds: bootstrap, and each request
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ssl_cafile: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    ssl_password: str | None = field(default=None, repr=False)
    ssl_check_hostname: bool = True
    source: str = ""  # where the settings came from, for messages

    def client_configs(self) -> dict[str, Any]:
        """kafka-python's `KafkaAdminClient` settings."""
        ms = int(self.timeout * 1000)
        out: dict[str, Any] = {
            "request_timeout_ms": ms,
            "bootstrap_timeout_ms": ms,
            "client_id": "kafka-planner",
            "security_protocol": self.security_protocol,
            "reconnect_backoff_max_ms": 1000,
            "receive_message_max_bytes": MAX_ANSWER_BYTES,
        }
        if self.sasl_mechanism:
            out.update(
                sasl_mechanism=self.sasl_mechanism, sasl_plain_username=self.username, sasl_plain_password=self.password
            )
        if "SSL" in self.security_protocol:
            out.update(
                ssl_cafile=self.ssl_cafile,
                ssl_certfile=self.ssl_certfile,
                ssl_keyfile=self.ssl_keyfile,
                ssl_password=self.ssl_password,
                ssl_check_hostname=self.ssl_check_hostname,
            )
        return out


def parse_properties(text: str) -> dict[str, str]:
    """A Java properties file (`java.util.Properties.load`): `key=value`, `key: value` or `key value`, `#`/`!`
    comments, a trailing backslash continues the line."""
    props: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.lstrip() if not logical else raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            logical += line[:-1]
            continue
        logical += line
        m = re.match(r"((?:\\.|[^=:\s])+)\s*[=:\s]\s*(.*)$", logical)
        if m:
            props[m.group(1).replace("\\", "")] = m.group(2).strip()
        elif logical:
            props[logical.strip()] = ""
        logical = ""
    return props


_JAAS_RE = re.compile(r'(\w+)\s*=\s*"((?:\\.|[^"\\])*)"')


def _joined(value: str) -> str:
    """A hint when a value looks like two settings run together (a line ending in a backslash joins the next)."""
    if "=" in value or len(value.split()) > 1:
        return " (the value holds more than one word: does its line end in a backslash, joining the next line to it?)"
    return ""


def options_from_properties(props: Mapping[str, str], source: str, timeout: float = 10.0) -> KafkaOptions:
    """The client settings of a `--command-config` file, checked; messages name keys and the file, never values (a
    typo can run a password into any of them), and the values of secret keys are remembered for `secrets.redact`."""
    for key, value in props.items():
        if secrets.is_secret_key(key):
            secrets.remember(value)
    given = props.get("security.protocol", "PLAINTEXT")
    protocol = given.strip().upper()
    if protocol not in PROTOCOLS:
        raise PlannerError(
            f"{source}: the value of security.protocol is not one of {', '.join(PROTOCOLS)}{_joined(given)}"
        )
    kwargs: dict[str, Any] = {"security_protocol": protocol, "timeout": timeout, "source": source}
    if protocol.startswith("SASL_"):
        if "sasl.mechanism" not in props:
            raise PlannerError(
                f"{source}: sasl.mechanism is not set, and its default GSSAPI (Kerberos) is not supported by "
                f"kafka-planner (set one of {', '.join(MECHANISMS)})"
            )
        given = props["sasl.mechanism"]
        mechanism = given.strip().upper()
        if mechanism not in MECHANISMS:
            raise PlannerError(
                f"{source}: the value of sasl.mechanism is not supported by kafka-planner "
                f"(use one of {', '.join(MECHANISMS)}){_joined(given)}"
            )
        jaas = props.get("sasl.jaas.config", "")
        creds = {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in _JAAS_RE.findall(jaas)}
        secrets.remember(creds.get("password"))
        if "username" not in creds or "password" not in creds:
            raise PlannerError(
                f'{source}: sasl.jaas.config needs username="..." password="..." '
                f"(e.g. org.apache.kafka.common.security.plain.PlainLoginModule required "
                f'username="alice" password="...";)'
            )
        kwargs.update(sasl_mechanism=mechanism, username=creds["username"], password=creds["password"])
    if protocol.endswith("SSL"):
        kwargs.update(_ssl_options(props, source))
    return KafkaOptions(**kwargs)


def _ssl_options(props: Mapping[str, str], source: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, kind in (("ssl.truststore", "ssl_cafile"), ("ssl.keystore", "ssl_certfile")):
        location = props.get(f"{key}.location", "").strip()
        if not location:
            continue
        given = props.get(f"{key}.type", "PEM")
        if given.strip().upper() != "PEM":
            raise PlannerError(
                f"{source}: the value of {key}.type is not supported: give a PEM file "
                f"({key}.type=PEM; convert with keytool -exportcert -rfc / openssl){_joined(given)}"
            )
        if not os.path.isfile(location):
            raise PlannerError(
                f"{source}: {key}.location names no file (the path is not shown: settings may hold secrets)"
                f"{_joined(location)}"
            )
        out[kind] = location
        if kind == "ssl_certfile":
            out["ssl_keyfile"] = location  # a PEM key store holds the key and the certificate chain
    if props.get("ssl.key.password"):
        out["ssl_password"] = props["ssl.key.password"]
    if props.get("ssl.endpoint.identification.algorithm", "https").strip() == "":
        out["ssl_check_hostname"] = False
    return out


def load_options(
    command_config: str | None = None, timeout: float | None = None, environ: Mapping[str, str] | None = None
) -> KafkaOptions:
    """Settings from `--command-config FILE` (else $KAFKA_PLANNER_KAFKA_COMMAND_CONFIG) and the timeout (else
    $KAFKA_PLANNER_KAFKA_TIMEOUT, else 10 s)."""
    env = environ if environ is not None else os.environ
    if timeout is None:
        timeout = seconds_from_env(env, TIMEOUT_ENV)
    path, source = command_config, f"--command-config {command_config}"
    if not path:
        path = env.get(COMMAND_CONFIG_ENV, "").strip() or None
        source = f"${COMMAND_CONFIG_ENV} {path}"
    if not path:
        return KafkaOptions(timeout=timeout)
    text = read_text(path, source)
    return options_from_properties(parse_properties(text), source, timeout)


class _Recorder(logging.Handler):
    """Keeps kafka-python's log off stderr, remembering the last connection failure it reported."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.reset()

    def reset(self) -> None:
        """Forget what an earlier bootstrap attempt reported."""
        self.last_failure: str | None = None
        self.sasl_pending = False  # a SaslAuthenticateRequest sent and not yet answered
        self.frame_size: int | None = None  # the length of an answer kafka-python refused (over its limit)
        self.out_of_files = False  # kafka-python could not open a socket: the open-files limit (ulimit -n)

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno < logging.WARNING:
            self._sasl_exchange(record)
            return
        text = record.getMessage()
        if "[Errno 24]" in text or "[Errno 23]" in text:  # EMFILE, ENFILE: kafka-python retries until its timeout
            self.out_of_files = True
        frame = re.search(r"Invalid frame length: (-?\d+)", text)
        if frame:
            self.frame_size = int(frame.group(1))
        if self.sasl_pending and "socket disconnected" in text:
            # Kafka 4.x answers a wrong SCRAM/PLAIN password by closing the connection after the client's last
            # SaslAuthenticateRequest (SaslServerAuthenticator's authentication failure: kafka-python 3's transport
            # sees the close before the error response): what kafka-topics.sh reports as invalid credentials
            self.last_failure = (
                "SaslAuthenticationFailedError: Authentication failed during authentication due to invalid credentials"
            )
            return
        for marker in (
            "SaslAuthenticationFailedError",
            "SSLCertVerificationError",
            "SSLError",
            "UnsupportedSaslMechanism",
            "IllegalSaslState",
            "Handshake failed",  # kafka-python's TLS handshake: [SSL: WRONG_VERSION_NUMBER] from a non-TLS listener
        ):
            if marker in text:
                self.last_failure = text
                return

    def hopeless(self) -> bool:
        """Whether this bootstrap attempt failed in a way waiting does not mend (kafka-python would retry until its
        timeout): a refused answer size, a failed TLS handshake, refused credentials."""
        return self.frame_size is not None or self.last_failure is not None or self.out_of_files

    def _sasl_exchange(self, record: logging.LogRecord) -> None:
        """kafka-python's DEBUG lines of the SASL exchange, read from the record's arguments without formatting
        (a large Metadata response is not turned into text; the SASL ones carry the client's proof: never shown)."""
        args = record.args if isinstance(record.args, tuple) else ()
        for arg in args:
            name = type(arg).__name__
            if name.startswith("SaslAuthenticateRequest"):
                self.sasl_pending = True
            elif name.startswith("SaslAuthenticateResponse"):
                self.sasl_pending = False


def _quiet_kafka_logging() -> _Recorder:
    log = logging.getLogger("kafka")
    for h in list(log.handlers):
        if isinstance(h, _Recorder):
            log.removeHandler(h)
    recorder = _Recorder()
    log.addHandler(recorder)
    log.propagate = False
    return recorder


def _frame_text(size: int) -> str:
    """Why an answer of `size` bytes (its first four bytes read as a length) was refused."""
    if size < 0:
        return f"sent an answer whose length is negative ({size}): not Kafka's protocol"
    if size >> 24 in (0x15, 0x16) and (size >> 16) & 0xFF == 3:  # a TLS record's type and major version 3
        return "sent a TLS record where a Kafka answer belongs: the listener expects security.protocol SSL or SASL_SSL"
    return f"sent an answer of {size} bytes, more than the {MAX_ANSWER_BYTES} kafka-planner accepts"


# An ApiVersionsRequest v0 (api key 18, correlation id 0, client id "kafka-planner"): what every Kafka client sends
# first (NetworkClient's CHECKING_API_VERSIONS state); every broker answers it, whatever versions it supports.
_API_VERSIONS_V0 = struct.pack(">ihhih", 23, 18, 0, 0, 13) + b"kafka-planner"


def _probe(host: str, port: int, timeout: float, plaintext: bool) -> str | None:
    """None when `host:port` accepts a TCP connection within `timeout` and, on a plaintext listener, starts a Kafka
    answer to an ApiVersionsRequest within what is left of it, else why not, as words that follow the server's
    name. One connection, closed before the client's own. The connect phase is bounded as Kafka's
    socket.connection.setup.timeout.ms bounds it, the answer as request.timeout.ms bounds the client's first
    request; kafka-python, which would wait out its whole timeout on a listener that closes at once, and drops the
    bytes of a TLS alert that came with the close, is spared both."""
    import socket
    import time

    deadline = time.monotonic() + timeout
    connected = False
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            connected = True
            if not plaintext:  # the TLS handshake is the client's, bounded by the watchdog
                return None
            sock.settimeout(max(deadline - time.monotonic(), 0.1))
            sock.sendall(_API_VERSIONS_V0)
            head = b""
            while len(head) < 4:
                chunk = sock.recv(4 - len(head))
                if not chunk:
                    return "closed the connection without a Kafka answer"
                head += chunk
    except ConnectionRefusedError:
        return "refused the connection"
    except socket.gaierror:
        return "is not a host name that resolves"
    except (ConnectionResetError, BrokenPipeError) as exc:
        if connected:  # closed at once (a reset where our request arrived after the close)
            return "closed the connection without a Kafka answer"
        return f"cannot be reached ({exc.strerror})"
    except TimeoutError:
        if connected:
            return f"accepted the connection but sent no answer within {timeout:g} s"
        return f"accepted no connection within {timeout:g} s"
    except OSError as exc:
        if exc.errno in (errno.EMFILE, errno.ENFILE):  # this process's limit, not the server: the CLI names it
            raise
        return f"cannot be reached ({exc.strerror or type(exc).__name__})"
    size = struct.unpack(">i", head)[0]
    if size < 0 or size > MAX_ANSWER_BYTES:
        return _frame_text(size)
    return None


def out_of(exc: BaseException) -> bool:
    """Whether `exc` is this process running out of open files or threads (the CLI names the limit to raise), not
    anything a server did."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.EMFILE, errno.ENFILE)
    return isinstance(exc, RuntimeError) and "can't start new thread" in str(exc)


class _Watchdog:
    """Bounds a KafkaAdminClient's start (TCP, TLS handshake, SASL, ApiVersions, Metadata) by a deadline: kafka-python
    bounds some of these phases (its TLS handshake waits without one: a silent SASL_SSL listener held it 90 s), so at
    the deadline, or once `give_up()` says the attempt cannot succeed, the client's I/O loop is stopped, which fails
    its pending bootstrap at once."""

    def __init__(self, admin: Any, deadline: float, give_up: Callable[[], bool]):
        import threading

        self.admin = admin
        self.deadline = deadline
        self.give_up = give_up
        self.fired = False
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._watch, name="kafka-planner-bootstrap-watchdog", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        import time

        while not self._done.wait(0.05):
            if time.monotonic() < self.deadline and not self.give_up():
                continue
            net = getattr(self.admin, "_net", None)
            if net is None or getattr(net, "_io_thread", None) is None:
                if time.monotonic() < self.deadline + 5:  # not started yet (or already stopped): look again
                    continue
                return
            with self._lock:
                if self._done.is_set():
                    return
                self.fired = True
            try:
                net.stop(timeout_ms=2000)
            except Exception:
                pass
            return

    def finish(self) -> bool:
        """Stop watching; whether the watchdog stopped the client (then the client is of no use)."""
        with self._lock:
            self._done.set()
        self._thread.join(3)
        return self.fired


def _discard(admin: Any) -> None:
    """Close a KafkaAdminClient whose start failed (its I/O thread and sockets stay otherwise: kafka-python closes
    nothing when its constructor raises)."""
    for step in (
        lambda: admin._client._manager.close(),
        lambda: admin._net.stop(timeout_ms=2000),
        lambda: admin._client.close(),
        lambda: admin._metrics.close(),
    ):
        try:
            step()
        except Exception:
            pass


class KafkaSession:
    """A bootstrapped `KafkaAdminClient` (a context manager); `call` runs one admin call with Kafka's errors turned
    into one-line `PlannerError`s.

    The bootstrap servers are tried one after another, as Kafka's clients move to the next bootstrap server when one
    does not connect within socket.connection.setup.timeout.ms or does not answer its ApiVersionsRequest within
    request.timeout.ms (NetworkClient, ClusterConnectionStates): each server gets the timeout for connecting and
    answering, so a silent first server costs one timeout and the next one is asked. Kafka starts at a random
    server (NetworkClient.leastLoadedNode's random offset); here the order is the URL's, so every run asks the same
    server first. The first server that answers is the client's only bootstrap server; after the bootstrap
    kafka-python talks to the brokers the cluster's metadata names, as Kafka's clients do."""

    def __init__(self, url: str, opts: KafkaOptions):
        self.kurl = parse_url(url)
        self.url = url
        self.opts = opts
        try:
            from kafka.admin import KafkaAdminClient  # noqa: F401
        except ImportError:
            raise PlannerError(
                f"{url}: reading a live cluster needs kafka-python: pip install 'kafka-planner[kafka]'"
            ) from None
        self.recorder = _quiet_kafka_logging()
        failures: list[tuple[str, str]] = []
        for host, port in self.kurl.hosts:
            server = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            admin, why = self._bootstrap(server, host, port)
            if admin is not None:
                self.admin = admin
                return
            failures.append((server, why))
        raise self._no_server(failures)

    def _bootstrap(self, server: str, host: str, port: int) -> tuple[Any, str]:
        """A client bootstrapped from `server` within the timeout, else None and why not (the words that follow the
        server's name). Failures no other server would mend (authentication, TLS, the mechanism) raise."""
        import time

        from kafka.admin import KafkaAdminClient

        timeout = self.opts.timeout
        start = time.monotonic()
        why = _probe(host, port, timeout, not self.opts.security_protocol.endswith("SSL"))
        if why:
            return None, why
        remaining = max(timeout - (time.monotonic() - start), 0.1)
        self.recorder.reset()
        parser = logging.getLogger("kafka.protocol.parser")  # the SASL exchange, while bootstrapping only
        level = parser.level
        if self.opts.sasl_mechanism:
            parser.setLevel(logging.DEBUG)
        configs = {**self.opts.client_configs(), "bootstrap_timeout_ms": int(remaining * 1000)}
        admin = KafkaAdminClient.__new__(KafkaAdminClient)
        watchdog = _Watchdog(admin, time.monotonic() + remaining, self.recorder.hopeless)
        try:
            admin.__init__(bootstrap_servers=server, **configs)
        except BaseException as exc:
            watchdog.finish()
            _discard(admin)
            if not isinstance(exc, Exception) or out_of(exc):  # Ctrl-C, SIGTERM, a limit: after the client is closed
                raise
            return None, self._attempt_failed()
        finally:
            parser.setLevel(level)
        if watchdog.finish():  # stopped just as the bootstrap ended: of no use
            _discard(admin)
            return None, self._attempt_failed()
        return admin, ""

    def _attempt_failed(self) -> str:
        """Why one bootstrap server failed, after its TCP connection was accepted; raises for what names the
        settings rather than the server (every server would fail the same way)."""
        failure = self.recorder.last_failure or ""
        settings = self.opts.source or f"--command-config FILE or ${COMMAND_CONFIG_ENV}"
        if self.recorder.out_of_files:
            raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))
        if "SaslAuthenticationFailed" in failure:
            reason = failure.rsplit("SaslAuthenticationFailedError:", 1)[-1].strip()
            reason = re.sub(r"\s*\(backoff [^)]*\)$", "", reason)
            # the same words whether the broker's error response arrived or only its closing of the connection did
            reason = re.sub(r" with SASL mechanism \S+$", "", reason)
            raise EnvironmentFailure(
                f"{self.url}: SASL authentication failed ({reason}): check the user and password in "
                f"sasl.jaas.config of {settings}"
            )
        if "UnsupportedSaslMechanism" in failure:
            raise PlannerError(
                f"{self.url}: the broker does not accept sasl.mechanism {self.opts.sasl_mechanism}: check {settings}"
            )
        if "WRONG_VERSION_NUMBER" in failure:  # what came back is no TLS record: a plaintext listener, or not Kafka
            return "answered the TLS handshake with something that is not TLS"
        closed = re.search(r"UNEXPECTED_EOF|EOF occurred|reset by peer|Broken pipe", failure)
        if "Handshake failed" in failure and closed:
            # Kafka's PLAINTEXT listener closes on a ClientHello (its first bytes read as a length too large)
            return "closed the connection during the TLS handshake"
        if "SSL" in failure:
            raise PlannerError(
                f"{self.url}: TLS handshake failed: check ssl.truststore.location in {settings} and "
                "that the certificate names the host in the URL"
            )
        if self.recorder.frame_size is not None:
            return _frame_text(self.recorder.frame_size)
        return f"accepted the connection but sent no answer within {self.opts.timeout:g} s"

    def _no_server(self, failures: list[tuple[str, str]]) -> PlannerError:
        """One line for a bootstrap where no server answered, naming each server and what it did."""
        if all(why == "refused the connection" for _, why in failures):
            refused = ",".join(server for server, _ in failures)
            return EnvironmentFailure(
                f"{self.url}: connection refused at {refused}: no broker listens there (check the host and port)"
            )
        each = "; ".join(f"{server} {why}" for server, why in failures)
        several = len(failures) > 1
        waited = any(why.endswith(f"within {self.opts.timeout:g} s") for _, why in failures)
        wait = f" --timeout or ${TIMEOUT_ENV} sets the wait{' for each server' if several else ''}" if waited else ""
        return EnvironmentFailure(
            f"{self.url}: {'no bootstrap server answered: ' if several else ''}{each} (is a Kafka broker listening "
            f"there, and does it speak {self.opts.security_protocol}?{wait})"
        )

    def call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """`fn(*args)` with every kafka-python error as one line naming the URL and `what` was being done."""
        from kafka import errors as Errors

        try:
            return fn(*args, **kwargs)
        except Errors.AuthorizationError as exc:
            return self._raise(
                f"not authorised to {what} ({type(exc).__name__}): grant the client's principal the "
                "ACL (Describe/DescribeConfigs on the cluster and topics; Alter/AlterConfigs to act)"
            )
        except (Errors.IncompatibleBrokerVersion, Errors.UnsupportedVersionError):
            raise
        except (Errors.KafkaTimeoutError, Errors.KafkaConnectionError, Errors.NodeNotReadyError):
            recorder = getattr(self, "recorder", None)
            if recorder is not None and recorder.out_of_files:  # no socket could be opened: the CLI names the limit
                raise OSError(errno.EMFILE, os.strerror(errno.EMFILE)) from None
            raise EnvironmentFailure(
                f"{self.url}: no answer while trying to {what} within {self.opts.timeout:g} s "
                f"(--timeout or ${TIMEOUT_ENV} sets the wait)"
            ) from None
        except (
            Errors.InvalidReceiveError
        ) as exc:  # an answer over MAX_ANSWER_BYTES (its length is all kafka-python read)
            size = re.search(r"-?\d+", str(exc))
            sent = _frame_text(int(size.group())) if size else "sent an answer of no valid length"
            raise EnvironmentFailure(
                f"{self.url}: a broker {sent} while trying to {what}; nothing of it was read"
            ) from None
        except Errors.KafkaError as exc:
            return self._raise(f"cannot {what}: {_explain(exc)}")
        except (ValueError, TypeError, IndexError, AttributeError) as exc:  # KeyError: _brokers falls back on it
            # kafka-python decoding an answer no broker sends (an ACL operation 18, a null array): seen from a listener
            # sending garbage. The broker is named by its address; the value it sent is not echoed.
            raise EnvironmentFailure(
                f"{self.url}: a malformed answer while trying to {what} ({type(exc).__name__} decoding it): is a "
                f"Kafka broker listening at {self.kurl.bootstrap}?"
            ) from None

    def _raise(self, message: str) -> Any:
        raise PlannerError(f"{self.url}: {message}")

    def send(self, what: str, request: Any, node_id: int | None = None, optional: bool = False) -> Any:
        """One raw request (for the answers kafka-python's helpers drop: per-resource error codes). `optional`:
        None when the broker closes the connection instead of answering (tansu does for what it lacks)."""
        from kafka import errors as Errors

        manager = self.admin._manager

        async def _send() -> Any:
            return await manager.send(request, node_id=node_id)

        if optional:
            try:
                return manager.run(_send)
            except Errors.KafkaConnectionError:
                return None
        return self.call(what, manager.run, _send)

    def require(self, api_key: int, name: str, what: str) -> None:
        """Refuse, before anything changes, when the broker does not offer the API `what` needs."""
        try:
            offered = {int(k) for k in self.admin.api_versions()}
        except Exception:  # versions unknown: let the call itself answer
            return
        if api_key not in offered:
            raise PlannerError(
                f"{self.url}: the broker does not support {name} (needed to {what}); nothing was changed"
            )

    def close(self) -> None:
        try:
            self.admin.close()
        except Exception:
            pass

    def __enter__(self) -> "KafkaSession":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _explain(exc: BaseException) -> str:
    text = " ".join((str(exc).strip() or type(exc).__name__).split())
    return text[:300]


def error_name(code: int) -> str:
    """Kafka's error name for a code (UNKNOWN_TOPIC_OR_PARTITION...), from kafka-python's table."""
    from kafka import errors as Errors

    cls = Errors.for_code(code)
    return getattr(cls, "message", cls.__name__)


def check_code(session: KafkaSession, code: int, what: str, message: str | None = None) -> None:
    """Raise one line for a non-zero error code in an answer."""
    if not code:
        return
    from kafka import errors as Errors

    cls = Errors.for_code(code)
    if issubclass(cls, Errors.AuthorizationError):
        session._raise(
            f"not authorised to {what} ({getattr(cls, 'message', cls.__name__)}): grant the client's "
            "principal the ACL (Describe/DescribeConfigs on the cluster and topics; Alter/AlterConfigs "
            "to act)"
        )
    detail = f": {message}" if message else ""
    session._raise(f"cannot {what}: {getattr(cls, 'message', cls.__name__)}{detail}")
