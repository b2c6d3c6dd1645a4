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
from dataclasses import replace
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


def _read_once(session: Session, progress: Progress) -> ZkSnapshot:  # noqa: C901
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

    znodes = Znodes(
        brokers=brokers,
        topics=topics,
        configs=configs,
        states=states,
        deleting=frozenset(deleting),
        reassigning=reassigning,
        electing=election_stat is not None,
        cluster_id=cluster_id_raw[0] if cluster_id_raw is not None else None,
    )
    read = 3 + len(broker_ids) + 2 * len(topic_names) + len(state_reqs) + (1 if reassign_req else 0)
    snap = snapshot_of(znodes, read)
    # the same rules as a topology file's: what zk export writes must load back
    check_cluster(snap.cluster, url, "/brokers/topics/{}".format, "/config/topics/{}".format, observed=False)
    return snap
