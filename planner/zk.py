"""Live ZooKeeper-mode Kafka clusters through kazoo: read a consistent snapshot, create the admin znodes.

The znode layout and JSON formats are Kafka's (`core/src/main/scala/kafka/zk/ZkData.scala`, kafka-facts §5, §4.4, §4.5):

* `/brokers/ids/{id}`               registration, versions 1-5 (v1: host/port; v2+: endpoints; v3+: rack)
* `/brokers/topics/{t}`             assignment, versions 1-3 (v2+: adding/removing_replicas, v3: topic_id)
* `/brokers/topics/{t}/partitions/{p}/state`   leader (-1 = none), leader_epoch, isr
* `/config/topics/{t}`              {"version":1,"config":{...}}
* `/admin/delete_topics/{t}`        topics marked for deletion
* `/admin/reassign_partitions`      {"version":1,"partitions":[{"topic","partition","replicas"}]}
* `/admin/preferred_replica_election`  {"version":1,"partitions":[{"topic","partition"}]}

Reads are pipelined with kazoo's async API (one round trip per level, not per znode) and every znode read sets a
watch (an `exists` watch for a znode found missing, since ZooKeeper sets none on a failed read): if any watch fires
before the read completes, the cluster changed under us and the snapshot is read again (a bounded number of times).
Every failure becomes one `PlannerError` naming the URL and the problem.
kazoo is imported only inside the functions that talk to ZooKeeper.
"""
from __future__ import annotations

import json
import os
import re
import threading
import time
import warnings
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping

from planner.model import (
    NO_LEADER,
    OFFLINE,
    ONLINE,
    Broker,
    Cluster,
    ObservedState,
    Partition,
    PlannerError,
    Topic,
    TopicPartition,
)

AUTH_ENV = "KAFKA_PLANNER_ZK_AUTH"
REASSIGN_PATH = "/admin/reassign_partitions"
ELECTION_PATH = "/admin/preferred_replica_election"
MAX_READ_ATTEMPTS = 5

Progress = Callable[[str], None] | None


# ---------------------------------------------------------------------------------------------------------
# URL and connection options


@dataclass(frozen=True)
class ZkUrl:
    url: str  # as given (no secrets: credentials never go in the URL)
    hosts: tuple[tuple[str, int], ...]
    chroot: str  # "" or "/path"

    @property
    def connect_string(self) -> str:
        return ",".join(f"{h}:{p}" for h, p in self.hosts) + self.chroot


_HOST_RE = re.compile(r"^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._\-]+)(?::(\d{1,5}))?$")
DEFAULT_PORT = 2181  # ZooKeeper's ConnectStringParser: a host without a port is host:2181


def parse_url(url: str) -> ZkUrl:
    """`zk://host:port[,host:port…][/chroot]` → hosts and chroot; one clear error for anything else."""
    if not url.startswith("zk://"):
        raise PlannerError(f"{url}: not a ZooKeeper URL: expected zk://host:port[,host:port...][/chroot]")
    rest = url[len("zk://"):]
    hosts_part, slash, chroot = rest.partition("/")
    chroot = ("/" + chroot).rstrip("/") if slash else ""
    if "@" in hosts_part:
        raise PlannerError(f"zk://...: do not put credentials in the URL; use --zk-auth-file or {AUTH_ENV}")
    if not hosts_part:
        raise PlannerError(f"{url}: no ZooKeeper host: expected zk://host:port[,host:port...][/chroot]")
    hosts = []
    for item in hosts_part.split(","):
        m = _HOST_RE.match(item.strip())
        port = int(m.group(2)) if m and m.group(2) else DEFAULT_PORT
        if not m or not 0 < port < 65536:
            raise PlannerError(f"{url}: {item!r} is not host:port (e.g. zk://zk1:2181,zk2:2181/kafka)")
        hosts.append((m.group(1), port))
    if "//" in chroot or any(seg in (".", "..") for seg in chroot.split("/")):
        raise PlannerError(f"{url}: invalid chroot {chroot!r}")
    return ZkUrl(url=url, hosts=tuple(hosts), chroot=chroot)


@dataclass(frozen=True)
class ZkOptions:
    timeout: float = 10.0  # seconds: connecting, and the whole of each read or write
    auth: str | None = None  # "user:password" for digest authentication (never printed)
    ca_file: str | None = None  # TLS: CA bundle; TLS is used when given
    cert_file: str | None = None
    key_file: str | None = None

    def __repr__(self) -> str:  # keep the password out of any traceback or log
        return f"ZkOptions(timeout={self.timeout}, auth={'***' if self.auth else None}, ca_file={self.ca_file!r})"


TIMEOUT_ENV = "KAFKA_PLANNER_ZK_TIMEOUT"
CA_FILE_ENV = "KAFKA_PLANNER_ZK_CA_FILE"
CERT_FILE_ENV = "KAFKA_PLANNER_ZK_CERT_FILE"
KEY_FILE_ENV = "KAFKA_PLANNER_ZK_KEY_FILE"


def options_from_env(environ: Mapping[str, str] | None = None) -> ZkOptions:
    """Connection options for a `zk://` TOPOLOGY given to any command (describe, reassign, consumers, ...): the
    same settings as the `zk` commands' --zk-* options, from $KAFKA_PLANNER_ZK_TIMEOUT, $KAFKA_PLANNER_ZK_AUTH,
    $KAFKA_PLANNER_ZK_CA_FILE, $KAFKA_PLANNER_ZK_CERT_FILE and $KAFKA_PLANNER_ZK_KEY_FILE."""
    env = environ if environ is not None else os.environ
    timeout = 10.0
    text = env.get(TIMEOUT_ENV, "").strip()
    if text:
        try:
            timeout = float(text)
        except ValueError:
            timeout = -1.0
        if not timeout >= 0.1:
            raise PlannerError(f"${TIMEOUT_ENV}: expected a number of seconds (at least 0.1), got {text!r}")
    ca, cert, key = (env.get(n, "").strip() or None for n in (CA_FILE_ENV, CERT_FILE_ENV, KEY_FILE_ENV))
    if (cert or key) and not ca:
        raise PlannerError(f"${CERT_FILE_ENV}/${KEY_FILE_ENV} need ${CA_FILE_ENV} (TLS)")
    return ZkOptions(timeout=timeout, auth=auth_from(None, env), ca_file=ca, cert_file=cert, key_file=key)


def auth_from(auth_file: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """Credentials `user:password` from `--zk-auth-file`, else from $KAFKA_PLANNER_ZK_AUTH, else none."""
    if auth_file:
        try:
            with open(auth_file, encoding="utf-8") as fh:
                text = fh.read().strip()
        except OSError as exc:
            raise PlannerError(f"--zk-auth-file {auth_file}: cannot read: {exc.strerror}") from None
        source = f"--zk-auth-file {auth_file}"
    else:
        text = (environ if environ is not None else os.environ).get(AUTH_ENV, "").strip()
        if not text:
            return None
        source = f"${AUTH_ENV}"
    user, colon, password = text.partition(":")
    if not colon or not user or not password or "\n" in text:
        raise PlannerError(f"{source}: expected one line user:password for ZooKeeper digest authentication")
    return text


def _quiet_kazoo_logging() -> None:
    """kazoo logs connection retries as warnings; without this Python's last-resort handler prints them on stderr."""
    import logging

    log = logging.getLogger("kazoo")
    if not any(isinstance(h, logging.NullHandler) for h in log.handlers):
        log.addHandler(logging.NullHandler())
    log.propagate = False


def _fast_handler():
    """kazoo's threading handler with a cheaper `select`.

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

    return FastSelectHandler()


class _Session:
    """A started kazoo client with a deadline, a watch flag for consistency and a connection-lost flag."""

    def __init__(self, zk_url: ZkUrl, opts: ZkOptions):
        try:
            import kazoo  # noqa: F401
        except ImportError:
            raise PlannerError(f"{zk_url.url}: reading ZooKeeper needs kazoo: pip install 'kafka-planner[zk]'") from None
        from kazoo.client import KazooClient
        from kazoo.handlers.threading import KazooTimeoutError
        from kazoo.retry import KazooRetry

        _quiet_kazoo_logging()
        self.url = zk_url.url
        self.timeout = opts.timeout
        kwargs: dict[str, Any] = {}
        if opts.auth:
            kwargs["auth_data"] = [("digest", opts.auth)]
        if opts.ca_file:
            for what, path in (("CA", opts.ca_file), ("certificate", opts.cert_file), ("key", opts.key_file)):
                if path and not os.path.isfile(path):
                    raise PlannerError(f"{self.url}: TLS {what} file {path} does not exist")
            # check_hostname: kazoo's default is off; ZooKeeper's own client verifies the host name by default
            kwargs.update(use_ssl=True, ca=opts.ca_file, certfile=opts.cert_file, keyfile=opts.key_file,
                          verify_certs=True, check_hostname=True)
        self.client = KazooClient(
            hosts=zk_url.connect_string,
            handler=_fast_handler(),
            timeout=max(opts.timeout, 1.0),
            connection_retry=KazooRetry(max_tries=-1, delay=0.1, max_delay=1.0),
            **kwargs,
        )
        self.lost = threading.Event()
        self.client.add_listener(self._on_state)
        try:
            with warnings.catch_warnings():  # kazoo warns on stderr when the chroot does not exist
                warnings.simplefilter("ignore")
                self.client.start(timeout=opts.timeout)
        except KazooTimeoutError:
            self.close()
            hosts = ",".join(f"{h}:{p}" for h, p in zk_url.hosts)
            tls = (" with TLS (does the server speak TLS on that port, does the --zk-ca-file CA sign its "
                   "certificate, and does the certificate name the host in the URL?)" if opts.ca_file else "")
            raise PlannerError(
                f"{self.url}: cannot connect to ZooKeeper at {hosts} within {opts.timeout:g} s{tls} "
                "(is the server running and the address right? --zk-timeout sets the wait)"
            ) from None
        except Exception as exc:  # e.g. SSL errors, auth failed during the handshake
            self.close()
            raise PlannerError(f"{self.url}: cannot connect to ZooKeeper: {_explain(exc)}") from None
        self.lost.clear()
        self.deadline = time.monotonic() + opts.timeout

    def _on_state(self, state) -> None:
        if state != "CONNECTED":  # SUSPENDED or LOST
            self.lost.set()

    def remaining(self) -> float:
        return max(self.deadline - time.monotonic(), 0.0)

    def close(self) -> None:
        try:
            self.client.stop()
            self.client.close()
        except Exception:
            pass

    def snapshot(self, progress: Progress = None) -> "ZkSnapshot":
        return _read_consistent(self, progress)

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
                raise PlannerError(f"{self.url}: {what} while creating {path}: it may or may not have been created; "
                                   f"check {path} (zk status) before retrying") from None
            raise self.failure(path, exc) from None

    def __enter__(self) -> "_Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

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
                return PlannerError(
                    f"{self.url}: lost the ZooKeeper connection at {path}; nothing was written, try again"
                )
            return PlannerError(f"{self.url}: no answer from ZooKeeper for {path} within {self.timeout:g} s "
                                "(--zk-timeout sets the wait)")
        return PlannerError(f"{self.url}: {path}: {_explain(exc)}")


def _explain(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())


# ---------------------------------------------------------------------------------------------------------
# Decoding znodes (pure functions over bytes)


def _json(url: str, path: str, data: bytes | None) -> Any:
    if data is None or data == b"":
        raise PlannerError(f"{url}: {path}: empty znode, expected JSON")
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise PlannerError(f"{url}: {path}: malformed JSON: {_explain(exc)}") from None


def _int_field(url: str, path: str, obj: Mapping, key: str, *, default: Any = ...) -> int:
    if key not in obj or obj[key] is None:
        if default is not ...:
            return default
        raise PlannerError(f"{url}: {path}: missing field {key!r}")
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and re.fullmatch(r"-?\d+", value):
            return int(value)
        raise PlannerError(f"{url}: {path}: field {key!r} must be an integer, got {json.dumps(value)}")
    return value


def _id_list(url: str, path: str, value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
        raise PlannerError(f"{url}: {path}: {what} must be a list of broker ids, got {json.dumps(value)}")
    return tuple(value)


_ENDPOINT_RE = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")  # Kafka's EndPoint.uriParseExp


def decode_broker(url: str, broker_id: int, data: bytes | None) -> Broker:
    """`/brokers/ids/{id}` (`BrokerIdZNode.decode`): v1 host/port; v2+ endpoints; rack optional (v3+)."""
    path = f"/brokers/ids/{broker_id}"
    obj = _json(url, path, data)
    if not isinstance(obj, dict):
        raise PlannerError(f"{url}: {path}: expected a JSON object")
    version = _int_field(url, path, obj, "version")
    if version < 1:
        raise PlannerError(f"{url}: {path}: Unsupported version of broker registration: {data.decode('utf-8', 'replace')}")
    host = obj.get("host")
    port = obj.get("port")
    if host is not None and not isinstance(host, str):
        raise PlannerError(f"{url}: {path}: field 'host' must be a string, got {json.dumps(host)}")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int)):
        raise PlannerError(f"{url}: {path}: field 'port' must be an integer, got {json.dumps(port)}")
    if version >= 2:
        endpoints = obj.get("endpoints")
        if not isinstance(endpoints, list) or not all(isinstance(e, str) for e in endpoints):
            raise PlannerError(f"{url}: {path}: version {version} registration needs 'endpoints' (a list of "
                               f"\"LISTENER://host:port\"), got {json.dumps(endpoints)}")
        parsed = []
        for e in endpoints:
            m = _ENDPOINT_RE.match(e)
            if not m:
                raise PlannerError(f"{url}: {path}: Unable to parse {e} to a broker endpoint")
            parsed.append((m.group(2), int(m.group(3))))
        if not host and parsed and parsed[0][0]:
            host, port = parsed[0]  # no PLAINTEXT listener: Kafka writes host null; the first endpoint names it
    if not host:
        raise PlannerError(f"{url}: {path}: broker registration has no host (neither 'host' nor 'endpoints' "
                           "name one); the broker's advertised.listeners must be set")
    if port is None or port < 0:
        port = None
    rack = obj.get("rack")
    if rack is not None and not isinstance(rack, str):
        raise PlannerError(f"{url}: {path}: field 'rack' must be a string, got {json.dumps(rack)}")
    return Broker(id=broker_id, rack=rack, host=host, port=port, state=ONLINE)


@dataclass(frozen=True)
class TopicZnode:
    name: str
    partitions: dict[int, tuple[int, ...]]
    adding: dict[int, tuple[int, ...]]
    removing: dict[int, tuple[int, ...]]
    topic_id: str | None


def decode_topic(url: str, name: str, data: bytes | None) -> TopicZnode:
    """`/brokers/topics/{t}` (`TopicZNode.decode`): versions 1-3."""
    path = f"/brokers/topics/{name}"
    obj = _json(url, path, data)
    if not isinstance(obj, dict):
        raise PlannerError(f"{url}: {path}: expected a JSON object")

    def pmap(key: str) -> dict[int, tuple[int, ...]]:
        raw = obj.get(key)
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            raise PlannerError(f"{url}: {path}: {key!r} must map partition ids to replica lists")
        out = {}
        for k, v in raw.items():
            if not re.fullmatch(r"\d+", k):
                raise PlannerError(f"{url}: {path}: {key!r} key {k!r} is not a partition id")
            out[int(k)] = _id_list(url, path, v, f"{key}.{k}")
        return out

    if "partitions" not in obj:
        raise PlannerError(f"{url}: {path}: missing field 'partitions'")
    partitions = pmap("partitions")
    missing = [p for p in range(len(partitions)) if p not in partitions]
    if missing:
        raise PlannerError(f"{url}: {path}: partition ids must be 0..{len(partitions) - 1}; "
                           f"missing {','.join(map(str, missing))}")
    topic_id = obj.get("topic_id")
    if topic_id is not None and not isinstance(topic_id, str):
        raise PlannerError(f"{url}: {path}: field 'topic_id' must be a string")
    return TopicZnode(name, partitions, pmap("adding_replicas"), pmap("removing_replicas"), topic_id)


def decode_state(url: str, path: str, data: bytes | None) -> ObservedState:
    """`…/partitions/{p}/state` (`TopicPartitionStateZNode.decode`)."""
    obj = _json(url, path, data)
    if not isinstance(obj, dict):
        raise PlannerError(f"{url}: {path}: expected a JSON object")
    leader = _int_field(url, path, obj, "leader")
    epoch = _int_field(url, path, obj, "leader_epoch")
    if "isr" not in obj:
        raise PlannerError(f"{url}: {path}: missing field 'isr'")
    isr = _id_list(url, path, obj["isr"], "isr")
    return ObservedState(leader=leader if leader >= 0 else NO_LEADER, isr=isr, leader_epoch=epoch)


def decode_config(url: str, path: str, data: bytes | None) -> dict[str, str]:
    """`/config/topics/{t}` (`ConfigEntityZNode.decode`): the override map, in stored order."""
    if not data:
        return {}
    obj = _json(url, path, data)
    config = obj.get("config") if isinstance(obj, dict) else None
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise PlannerError(f"{url}: {path}: 'config' must be an object of name → value")
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}


def decode_reassignment(url: str, data: bytes | None) -> dict[TopicPartition, tuple[int, ...]]:
    """`/admin/reassign_partitions` (`ReassignPartitionsZNode.decode`)."""
    obj = _json(url, REASSIGN_PATH, data)
    parts = obj.get("partitions") if isinstance(obj, dict) else None
    if not isinstance(parts, list):
        raise PlannerError(f"{url}: {REASSIGN_PATH}: expected {{\"version\":1,\"partitions\":[...]}}")
    out = {}
    for entry in parts:
        if not isinstance(entry, dict) or not isinstance(entry.get("topic"), str):
            raise PlannerError(f"{url}: {REASSIGN_PATH}: each partition needs 'topic', 'partition', 'replicas'")
        pid = _int_field(url, REASSIGN_PATH, entry, "partition")
        out[TopicPartition(entry["topic"], pid)] = _id_list(url, REASSIGN_PATH, entry.get("replicas"), "replicas")
    return out


def encode_election(partitions: Iterable[TopicPartition]) -> str:
    """`PreferredReplicaElectionZNode.encode`: compact JSON, partitions sorted by topic then partition."""
    from planner.formats.kafka_json import tp_sort_key

    parts = [{"topic": tp.topic, "partition": tp.partition} for tp in sorted(set(partitions), key=tp_sort_key)]
    return json.dumps({"version": 1, "partitions": parts}, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------------------------------------
# The snapshot


@dataclass(frozen=True)
class ZkSnapshot:
    cluster: Cluster
    reassigning: dict[TopicPartition, tuple[int, ...]] | None = None  # /admin/reassign_partitions; None: absent
    electing: bool = False  # /admin/preferred_replica_election exists
    attempts: int = 1  # reads needed for a consistent snapshot
    znodes: int = 0  # znodes read in the final attempt


class _Changed(Exception):
    pass


def read_cluster(url: str, timeout: float = 10, auth: str | None = None, ca_file: str | None = None,
                 cert_file: str | None = None, key_file: str | None = None, progress: Progress = None) -> Cluster:
    """The live cluster behind `zk://…` as a `Cluster` (mode "zookeeper").

    `auth` defaults to $KAFKA_PLANNER_ZK_AUTH. Registered brokers are online; brokers named in assignments or
    partition states but not registered are offline.
    """
    opts = ZkOptions(timeout=timeout, auth=auth if auth is not None else auth_from(None),
                     ca_file=ca_file, cert_file=cert_file, key_file=key_file)
    return read_snapshot(url, opts, progress).cluster


def read_snapshot(url: str, opts: ZkOptions, progress: Progress = None) -> ZkSnapshot:
    with connect(url, opts) as session:
        return session.snapshot(progress)


def connect(url: str, opts: ZkOptions) -> "_Session":
    """A connected session (a context manager): `.snapshot()`, then `.create()` for the admin znodes."""
    return _Session(parse_url(url), opts)


def _read_consistent(session: _Session, progress: Progress) -> ZkSnapshot:
    for attempt in range(1, MAX_READ_ATTEMPTS + 1):
        try:
            snap = _read_once(session, progress)
        except _Changed:
            if progress:
                progress(f"the cluster changed while reading; reading again ({attempt}/{MAX_READ_ATTEMPTS})")
            continue
        return replace(snap, attempts=attempt)
    raise PlannerError(f"{session.url}: the cluster kept changing while reading ({MAX_READ_ATTEMPTS} attempts); "
                       "no consistent snapshot, try again when it is quieter")


def _read_once(session: _Session, progress: Progress) -> ZkSnapshot:
    from kazoo.exceptions import NoNodeError

    client, url = session.client, session.url
    changed = threading.Event()

    def watch(event) -> None:
        changed.set()

    # level 1: the lists
    ids_req = client.get_children_async("/brokers/ids", watch=watch)
    topics_req = client.get_children_async("/brokers/topics", watch=watch)
    delete_req = client.get_children_async("/admin/delete_topics", watch=watch)
    reassign_exists = client.exists_async(REASSIGN_PATH, watch=watch)
    election_exists = client.exists_async(ELECTION_PATH, watch=watch)
    cluster_id_req = client.get_async("/cluster/id")
    try:
        broker_names = session.wait(ids_req, "/brokers/ids")
    except NoNodeError:
        chroot = parse_url(url).chroot
        where = f"under chroot {chroot}" if chroot else "at the root"
        raise PlannerError(
            f"{url}: no /brokers/ids {where}: not a Kafka cluster's ZooKeeper path "
            "(is the chroot right? e.g. zk://host:2181/kafka)"
        ) from None
    # A read of a missing znode sets no watch in ZooKeeper; `absent` collects those paths, and an `exists` watch is
    # set on each before the barrier, so a node created while reading is noticed like any other change.
    absent: list[str] = []
    topic_names = session.wait(topics_req, "/brokers/topics", missing_ok=True)
    if topic_names is None:
        absent.append("/brokers/topics")
    deleting_names = session.wait(delete_req, "/admin/delete_topics", missing_ok=True)
    if deleting_names is None:
        absent.append("/admin/delete_topics")
    topic_names, deleting = topic_names or [], set(deleting_names or [])
    reassign_stat = session.wait(reassign_exists, REASSIGN_PATH)
    election_stat = session.wait(election_exists, ELECTION_PATH)
    cluster_id_raw = session.wait(cluster_id_req, "/cluster/id", missing_ok=True)

    broker_ids = []
    for name in broker_names:
        if not re.fullmatch(r"\d+", name):
            raise PlannerError(f"{url}: /brokers/ids/{name}: not a broker id")
        broker_ids.append(int(name))
    broker_ids.sort()
    topic_names = sorted(topic_names)
    if progress:
        progress(f"reading {len(broker_ids)} brokers and {len(topic_names)} topics from {url}")

    # level 2: registrations, assignments, configs
    broker_reqs = [(b, client.get_async(f"/brokers/ids/{b}", watch=watch)) for b in broker_ids]
    topic_reqs = [(t, client.get_async(f"/brokers/topics/{t}", watch=watch)) for t in topic_names]
    config_reqs = [(t, client.get_async(f"/config/topics/{t}", watch=watch)) for t in topic_names]
    reassign_req = client.get_async(REASSIGN_PATH, watch=watch) if reassign_stat is not None else None
    brokers = {}
    for b, req in broker_reqs:
        got = session.wait(req, f"/brokers/ids/{b}", missing_ok=True)
        if got is None:  # the broker went away between the list and the read
            raise _Changed()
        brokers[b] = decode_broker(url, b, got[0])
    topics: dict[str, TopicZnode] = {}
    for t, req in topic_reqs:
        got = session.wait(req, f"/brokers/topics/{t}", missing_ok=True)
        if got is None:
            raise _Changed()
        topics[t] = decode_topic(url, t, got[0])
    configs = {}
    for t, req in config_reqs:
        got = session.wait(req, f"/config/topics/{t}", missing_ok=True)
        if got is None:
            absent.append(f"/config/topics/{t}")
        configs[t] = decode_config(url, f"/config/topics/{t}", got[0]) if got is not None else {}
    reassigning: dict[TopicPartition, tuple[int, ...]] | None = None
    if reassign_req is not None:
        got = session.wait(reassign_req, REASSIGN_PATH, missing_ok=True)
        if got is None:
            raise _Changed()
        reassigning = decode_reassignment(url, got[0])

    # level 3: partition states
    state_reqs = []
    for t in topic_names:
        for p in sorted(topics[t].partitions):
            path = f"/brokers/topics/{t}/partitions/{p}/state"
            state_reqs.append((t, p, path, client.get_async(path, watch=watch)))
    states: dict[tuple[str, int], ObservedState] = {}
    for i, (t, p, path, req) in enumerate(state_reqs):
        if progress and i and i % 5000 == 0:
            progress(f"read {i}/{len(state_reqs)} partition states")
        got = session.wait(req, path, missing_ok=True)
        if got is None:
            absent.append(path)
        # no state znode: the controller has not initialised the partition yet (describe: Leader: none, Isr: empty)
        states[(t, p)] = decode_state(url, path, got[0]) if got is not None else ObservedState(NO_LEADER, ())

    # watches on the nodes that were missing; one created since its read is a change
    absent_reqs = [(path, client.exists_async(path, watch=watch)) for path in absent]
    for path, req in absent_reqs:
        if session.wait(req, path) is not None:
            raise _Changed()
    if progress:
        progress(f"read {len(state_reqs)} partition states")

    # barrier: a round trip after every read, then a callback queued behind any watch event it delivered
    session.wait(client.exists_async("/brokers/ids"), "/brokers/ids")
    from kazoo.protocol.states import Callback

    barrier = threading.Event()
    client.handler.dispatch_callback(Callback("watch", barrier.set, ()))
    if not barrier.wait(max(session.remaining(), 0.001)):
        raise session.failure("/brokers/ids", None)
    if changed.is_set():
        raise _Changed()
    if session.lost.is_set():
        raise session.failure("the cluster", None)

    cluster_name = None
    if cluster_id_raw is not None and cluster_id_raw[0]:
        try:
            cid = json.loads(cluster_id_raw[0].decode("utf-8")).get("id")
            cluster_name = cid if isinstance(cid, str) else None
        except (ValueError, UnicodeDecodeError, AttributeError):
            cluster_name = None
    cluster = build_cluster(brokers, topics, configs, states, deleting, name=cluster_name)
    znodes = 3 + len(broker_ids) + 2 * len(topic_names) + len(state_reqs) + (1 if reassign_req else 0)
    return ZkSnapshot(cluster=cluster, reassigning=reassigning, electing=election_stat is not None, znodes=znodes)


def build_cluster(
    brokers: Mapping[int, Broker],
    topics: Mapping[str, TopicZnode],
    configs: Mapping[str, Mapping[str, str]],
    states: Mapping[tuple[str, int], ObservedState],
    deleting: Iterable[str] = (),
    name: str | None = None,
) -> Cluster:
    """A `Cluster` from decoded znodes (pure).

    The topic znode is the truth for replicas and adding/removing (2.4+ controllers record every reassignment
    there, KIP-455). A legacy `/admin/reassign_partitions` request is not folded in: Kafka's own describe does not
    show it either; `reassigning` only feeds `zk status` and `zk submit`.
    """
    deleting = set(deleting)
    referenced: set[int] = set()
    out_topics = []
    for t in sorted(topics):
        tz = topics[t]
        parts = []
        for p in sorted(tz.partitions):
            replicas = tz.partitions[p]
            adding, removing = tz.adding.get(p, ()), tz.removing.get(p, ())
            obs = states.get((t, p))
            referenced.update(replicas, adding, removing)
            if obs is not None:
                referenced.update(obs.isr)
                if obs.leader != NO_LEADER:
                    referenced.add(obs.leader)
            parts.append(Partition(topic=t, id=p, replicas=replicas, adding=adding, removing=removing, observed=obs))
        out_topics.append(Topic(name=t, partitions=tuple(parts), configs=dict(configs.get(t, {})),
                                topic_id=tz.topic_id, marked_for_deletion=t in deleting))
    all_brokers = dict(brokers)
    for b in referenced - set(brokers):
        all_brokers[b] = Broker(id=b, state=OFFLINE)
    return Cluster(brokers=tuple(all_brokers[b] for b in sorted(all_brokers)), topics=tuple(out_topics),
                   name=name, mode="zookeeper")


# ---------------------------------------------------------------------------------------------------------
# Pure helpers for the zk commands


def _tp_legacy(tp: TopicPartition, version: tuple[int, int]) -> str:
    """TopicPartition as the tool printed it: `[t,p]` (TopicAndPartition, ≤1.1), `t-p` from 2.0 on."""
    return f"[{tp.topic},{tp.partition}]" if version < (2, 0) else str(tp)


def verify_lines(snapshot: ZkSnapshot, targets: Mapping[TopicPartition, Iterable[int]],
                 version: tuple[int, int]) -> list[str]:
    """`kafka-reassign-partitions.sh --verify` over ZooKeeper, per Kafka version (kafka-facts §4.3).

    A partition is in progress while `/admin/reassign_partitions` lists it (Kafka's ZK check) or, 2.4+, while its
    topic znode has adding/removing replicas. Current replicas come from the topic znode (none for a missing
    partition). Partitions are printed sorted by topic, then partition.
    """
    from planner.formats.kafka_json import tp_sort_key

    cluster = snapshot.cluster
    current: dict[TopicPartition, tuple[int, ...]] = {}
    moving: set[TopicPartition] = set(snapshot.reassigning or {})
    for p in cluster.partitions():
        current[p.tp] = p.replicas
        if p.adding or p.removing:
            moving.add(p.tp)
    order = sorted((TopicPartition(*tp) for tp in targets), key=tp_sort_key)
    lines = []
    if version < (2, 6):
        lines.append("Status of partition reassignment: ")
        statuses = []
        for tp in order:
            target, cur = tuple(targets[tp]), current.get(tp, ())
            name = _tp_legacy(tp, version)
            if tp in moving:
                statuses.append(f"Reassignment of partition {name} is still in progress")
            elif cur == target:
                statuses.append(f"Reassignment of partition {name} completed successfully")
            else:
                lines.append(f"ERROR: Assigned replicas ({','.join(map(str, cur))}) don't match the list of replicas "
                             f"for reassignment ({','.join(map(str, target))}) for partition {name}")
                statuses.append(f"Reassignment of partition {name} failed")
        return lines + statuses
    lines.append("Status of partition reassignment:")
    done_word = "completed" if version >= (3, 3) else "complete"
    for tp in order:
        target, cur = tuple(targets[tp]), current.get(tp, ())
        if tp in moving:
            lines.append(f"Reassignment of partition {tp} is still in progress.")
        elif cur == target:
            lines.append(f"Reassignment of partition {tp} is {done_word}.")
        else:
            lines.append(f"There is no active reassignment of partition {tp}, but replica set is "
                         f"{','.join(map(str, cur))} rather than {','.join(map(str, target))}.")
    return lines


def _sorted_names(tps: Iterable[TopicPartition]) -> list[str]:
    """A partition set as `t-p` names, sorted: Scala keeps a Set's insertion order up to 4 elements and hash order
    beyond, so sorted is the deterministic choice."""
    from planner.formats.kafka_json import tp_sort_key

    return [str(tp) for tp in sorted(set(tps), key=tp_sort_key)]


def scala_set(tps: Iterable[TopicPartition]) -> str:
    """`Set(t-0, t-1)`: a Scala Set's toString, as the legacy election tool printed its partition set."""
    return "Set(" + ", ".join(_sorted_names(tps)) + ")"


def tp_list(tps: Iterable[TopicPartition]) -> str:
    """`t-0,t-1`: the election tool's `mkString(",")` of a partition set."""
    return ",".join(_sorted_names(tps))


def election_lines(valid: Iterable[TopicPartition], skipped: Iterable[TopicPartition]) -> list[str]:
    """What `kafka-preferred-replica-election.sh --zookeeper` (2.0-2.8, `PreferredReplicaLeaderElectionCommand`)
    prints once it created the node: the created line, the started line, then one line per partition that does
    not exist (in the input's order)."""
    valid = list(valid)
    return ([f"Created preferred replica election path with {tp_list(valid)}",
             f"Successfully started preferred replica election for partitions {scala_set(valid)}"]
            + [f"Skipping preferred replica leader election for partition {tp} since it doesn't exist."
               for tp in skipped])


def election_in_progress_message(url: str, current: bytes | None) -> str:
    """`PreferredReplicaLeaderElectionCommand`'s text (2.0-2.8) when `/admin/preferred_replica_election` exists:
    the partitions of the election running, `mkString(",")`."""
    try:
        obj = json.loads(current.decode("utf-8")) if current else {}
        tps = [TopicPartition(e["topic"], int(e["partition"])) for e in obj.get("partitions", [])]
        what = tp_list(tps)
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        what = f"{ELECTION_PATH} (unreadable content)"
    return f"Preferred replica leader election currently in progress for {what}. Aborting operation"
