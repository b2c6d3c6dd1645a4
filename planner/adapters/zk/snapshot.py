"""Reading a consistent snapshot of a live ZooKeeper-mode Kafka cluster through a kazoo session.

The znode layout and JSON formats are Kafka's (`core/src/main/scala/kafka/zk/ZkData.scala`):

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

import re
import threading
from dataclasses import dataclass, replace
from typing import Callable

from planner.adapters.validate import check_cluster
from planner.adapters.zk.session import Session, connect
from planner.adapters.zk.url import ZkOptions, auth_from, parse_url
from planner.adapters.zk.znodes import (
    ELECTION_PATH,
    REASSIGN_PATH,
    TopicZnode,
    ZkSnapshot,
    Znodes,
    decode_broker,
    decode_config,
    decode_reassignment,
    decode_state,
    decode_topic,
    snapshot_of,
)
from planner.model import NO_LEADER, Cluster, ObservedState, PlannerError, TopicPartition

MAX_READ_ATTEMPTS = 5

Progress = Callable[[str], None] | None


class _Changed(Exception):
    pass


def read_cluster(
    url: str,
    timeout: float = 10,
    auth: str | None = None,
    ca_file: str | None = None,
    cert_file: str | None = None,
    key_file: str | None = None,
    progress: Progress = None,
) -> Cluster:
    """The live cluster behind `zk://…` as a `Cluster` (mode "zookeeper").

    `auth` defaults to $KAFKA_PLANNER_ZK_AUTH. Registered brokers are online; brokers named in assignments or
    partition states but not registered are offline.
    """
    opts = ZkOptions(
        timeout=timeout,
        auth=auth if auth is not None else auth_from(None),
        ca_file=ca_file,
        cert_file=cert_file,
        key_file=key_file,
    )
    return read_snapshot(url, opts, progress).cluster


def read_snapshot(url: str, opts: ZkOptions, progress: Progress = None) -> ZkSnapshot:
    with connect(url, opts) as session:
        return read_consistent(session, progress)


def read_consistent(session: Session, progress: Progress = None) -> ZkSnapshot:
    for attempt in range(1, MAX_READ_ATTEMPTS + 1):
        try:
            snap = _read_once(session, progress)
        except _Changed:
            if progress:
                progress(f"the cluster changed while reading; reading again ({attempt}/{MAX_READ_ATTEMPTS})")
            continue
        return replace(snap, attempts=attempt)
    raise PlannerError(
        f"{session.url}: the cluster kept changing while reading ({MAX_READ_ATTEMPTS} attempts); "
        "no consistent snapshot, try again when it is quieter"
    )


def _read_once(session: Session, progress: Progress) -> ZkSnapshot:
    """One attempt: three levels of pipelined reads, each znode watched, then a barrier; `_Changed` if the cluster
    changed meanwhile."""
    read = _OneRead(session, progress)
    lists = read.lists()
    brokers, topics, configs, reassigning = read.nodes(lists)
    states = read.states(lists.topic_names, topics)
    read.watch_absent()
    if progress:
        progress(f"read {len(states)} partition states")
    read.barrier()
    znodes = Znodes(
        brokers=brokers,
        topics=topics,
        configs=configs,
        states=states,
        deleting=frozenset(lists.deleting),
        reassigning=reassigning,
        electing=lists.electing,
        cluster_id=lists.cluster_id_raw[0] if lists.cluster_id_raw is not None else None,
    )
    count = 3 + len(lists.broker_ids) + 2 * len(lists.topic_names) + len(states) + (1 if lists.reassigning else 0)
    snap = snapshot_of(znodes, count)
    # the same rules as a topology file's: what zk export writes must load back
    check_cluster(
        snap.cluster,
        session.url,
        "/brokers/topics/{}".format,
        "/config/topics/{}".format,
        "/brokers/topics/{}/partitions/{}/state".format,
    )
    return snap


@dataclass(frozen=True)
class _Lists:
    """Level 1 of a read: the children lists and the znodes whose existence matters."""

    broker_ids: list[int]
    topic_names: list[str]
    deleting: set[str]
    reassigning: bool  # /admin/reassign_partitions exists
    electing: bool  # /admin/preferred_replica_election exists
    cluster_id_raw: tuple | None


class _OneRead:
    """One attempt at reading every znode with a watch on each; `changed` is set when any watch fires. A read of a
    missing znode sets no watch in ZooKeeper: `absent` collects those paths, and an `exists` watch is set on each
    before the barrier, so a node created while reading is noticed like any other change."""

    def __init__(self, session: Session, progress: Progress):
        self.session = session
        self.client = session.client
        self.url = session.url
        self.progress = progress
        self.changed = threading.Event()
        self.absent: list[str] = []

    def watch(self, event) -> None:
        self.changed.set()

    def present(self, req, path: str):
        """The read's result; a znode gone between the list and the read is a change."""
        got = self.session.wait(req, path, missing_ok=True)
        if got is None:
            raise _Changed()
        return got

    def maybe_absent(self, req, path: str):
        got = self.session.wait(req, path, missing_ok=True)
        if got is None:
            self.absent.append(path)
        return got

    def lists(self) -> _Lists:
        client, watch, session = self.client, self.watch, self.session
        ids_req = client.get_children_async("/brokers/ids", watch=watch)
        topics_req = client.get_children_async("/brokers/topics", watch=watch)
        delete_req = client.get_children_async("/admin/delete_topics", watch=watch)
        reassign_exists = client.exists_async(REASSIGN_PATH, watch=watch)
        election_exists = client.exists_async(ELECTION_PATH, watch=watch)
        cluster_id_req = client.get_async("/cluster/id")
        broker_names = self._broker_names(ids_req)
        topic_names = self.maybe_absent(topics_req, "/brokers/topics")
        deleting_names = self.maybe_absent(delete_req, "/admin/delete_topics")
        reassign_stat = session.wait(reassign_exists, REASSIGN_PATH)
        election_stat = session.wait(election_exists, ELECTION_PATH)
        cluster_id_raw = session.wait(cluster_id_req, "/cluster/id", missing_ok=True)
        lists = _Lists(
            broker_ids=self._broker_ids(broker_names),
            topic_names=sorted(topic_names or []),
            deleting=set(deleting_names or []),
            reassigning=reassign_stat is not None,
            electing=election_stat is not None,
            cluster_id_raw=cluster_id_raw,
        )
        if self.progress:
            self.progress(
                f"reading {len(lists.broker_ids)} brokers and {len(lists.topic_names)} topics from {self.url}"
            )
        return lists

    def _broker_names(self, ids_req) -> list[str]:
        from kazoo.exceptions import NoNodeError

        try:
            return self.session.wait(ids_req, "/brokers/ids")
        except NoNodeError:
            chroot = parse_url(self.url).chroot
            where = f"under chroot {chroot}" if chroot else "at the root"
            raise PlannerError(
                f"{self.url}: no /brokers/ids {where}: not a Kafka cluster's ZooKeeper path "
                "(is the chroot right? e.g. zk://host:2181/kafka)"
            ) from None

    def _broker_ids(self, broker_names: list[str]) -> list[int]:
        broker_ids = []
        for name in broker_names:
            if not re.fullmatch(r"\d+", name):
                raise PlannerError(f"{self.url}: /brokers/ids/{name}: not a broker id")
            broker_ids.append(int(name))
        return sorted(broker_ids)

    def nodes(self, lists: _Lists):
        """Level 2: broker registrations, topic assignments and configs, the reassignment in progress."""
        client, watch, url = self.client, self.watch, self.url
        broker_reqs = [(b, client.get_async(f"/brokers/ids/{b}", watch=watch)) for b in lists.broker_ids]
        topic_reqs = [(t, client.get_async(f"/brokers/topics/{t}", watch=watch)) for t in lists.topic_names]
        config_reqs = [(t, client.get_async(f"/config/topics/{t}", watch=watch)) for t in lists.topic_names]
        reassign_req = client.get_async(REASSIGN_PATH, watch=watch) if lists.reassigning else None
        # a broker or topic gone between the list and the read is a change
        brokers = {b: decode_broker(url, b, self.present(req, f"/brokers/ids/{b}")[0]) for b, req in broker_reqs}
        topics: dict[str, TopicZnode] = {
            t: decode_topic(url, t, self.present(req, f"/brokers/topics/{t}")[0]) for t, req in topic_reqs
        }
        configs = {}
        for t, req in config_reqs:
            got = self.maybe_absent(req, f"/config/topics/{t}")
            configs[t] = decode_config(url, f"/config/topics/{t}", got[0]) if got is not None else {}
        reassigning: dict[TopicPartition, tuple[int, ...]] | None = None
        if reassign_req is not None:
            reassigning = decode_reassignment(url, self.present(reassign_req, REASSIGN_PATH)[0])
        return brokers, topics, configs, reassigning

    def states(self, topic_names: list[str], topics: dict[str, TopicZnode]) -> dict[tuple[str, int], ObservedState]:
        """Level 3: every partition's state znode."""
        state_reqs = []
        for t in topic_names:
            for p in sorted(topics[t].partitions):
                path = f"/brokers/topics/{t}/partitions/{p}/state"
                state_reqs.append((t, p, path, self.client.get_async(path, watch=self.watch)))
        states: dict[tuple[str, int], ObservedState] = {}
        for i, (t, p, path, req) in enumerate(state_reqs):
            if self.progress and i and i % 5000 == 0:
                self.progress(f"read {i}/{len(state_reqs)} partition states")
            got = self.maybe_absent(req, path)
            # no state znode: the controller has not initialised the partition yet (describe: Leader: none, Isr: empty)
            states[(t, p)] = decode_state(self.url, path, got[0]) if got is not None else ObservedState(NO_LEADER, ())
        return states

    def watch_absent(self) -> None:
        """Watches on the nodes that were missing; one created since its read is a change."""
        absent_reqs = [(path, self.client.exists_async(path, watch=self.watch)) for path in self.absent]
        for path, req in absent_reqs:
            if self.session.wait(req, path) is not None:
                raise _Changed()

    def barrier(self) -> None:
        """A round trip after every read, then a callback queued behind any watch event it delivered."""
        session, client = self.session, self.client
        session.wait(client.exists_async("/brokers/ids"), "/brokers/ids")
        from kazoo.protocol.states import Callback

        barrier = threading.Event()
        client.handler.dispatch_callback(Callback("watch", barrier.set, ()))
        if not barrier.wait(max(session.remaining(), 0.001)):
            raise session.failure("/brokers/ids", None)
        if self.changed.is_set():
            raise _Changed()
        if session.lost.is_set():
            raise session.failure("the cluster", None)
