"""One validation for every cluster source (topology YAML, ZooKeeper, the Admin API): what Kafka itself would refuse
or never produce, each rule a small function returning the problem in words (None when fine), so that each source
can say where (a YAML line, a znode path) and stay cheap per partition.

`check_cluster` runs every rule over a built `Cluster`: the sources without line numbers (ZooKeeper, Admin API) call
it once after decoding; the YAML loader calls the rules field by field.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

from planner.model import INT32_MAX, NO_LEADER, Cluster, PlannerError, Topic

_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")
MAX_TOPIC_NAME = 249  # org.apache.kafka.common.internals.Topic.MAX_NAME_LENGTH


def topic_name_problem(name: str) -> str | None:
    """Kafka's `Topic.validate` (clients/src/main/java/org/apache/kafka/common/internals/Topic.java), its texts."""
    if not name:
        return "Topic name is illegal, it can't be empty"
    if name in (".", ".."):
        return 'Topic name cannot be "." or ".."'
    if len(name) > MAX_TOPIC_NAME:
        return f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME} characters, topic name: {name}"
    if not _LEGAL_TOPIC.fullmatch(name):
        return (
            f'Topic name "{name}" is illegal, it contains a character other than ASCII alphanumerics, '
            "'.', '_' and '-'"
        )
    return None


def broker_id_problem(broker_id: int) -> str | None:
    """Broker ids are Java ints; a registered broker's id is 0 or more (KafkaConfig: broker.id)."""
    if not 0 <= broker_id <= INT32_MAX:
        return f"broker id {broker_id} is outside 0..{INT32_MAX}"
    return None


def port_problem(port: int | None) -> str | None:
    """A TCP port (ZooKeeper registrations of SSL-only brokers write -1: no plaintext port)."""
    if port is not None and not (port == -1 or 1 <= port <= 65535):
        return f"port {port} is outside 1..65535"
    return None


def replicas_problem(replicas: tuple[int, ...]) -> str | None:
    if not replicas:
        return "the replica list is empty"
    if len(set(replicas)) != len(replicas):
        dup = sorted({b for b in replicas if replicas.count(b) > 1})
        return f"duplicate replicas {','.join(map(str, dup))} in {list(replicas)}"
    for b in replicas:
        problem = broker_id_problem(b)
        if problem:
            return problem
    return None


def subset_problem(what: str, ids: Iterable[int], replicas: tuple[int, ...]) -> str | None:
    """`adding`, `removing` and the ISR name replicas of the partition only."""
    outside = [b for b in ids if b not in replicas]
    if outside:
        return f"{what} {','.join(map(str, outside))} not among the replicas {list(replicas)}"
    return None


def config_problem(name: str, value: str) -> str | None:
    """Topic configs the planner computes with, checked as Kafka's ConfigDef checks them (clients/src/main/java/org/
    apache/kafka/common/config/ConfigDef.java: ConfigException "Invalid value V for configuration N: reason")."""
    if name != "min.insync.replicas":
        return None
    try:
        number = int(value.strip())
    except ValueError:
        return f"Invalid value {value} for configuration {name}: Not a number of type INT"
    if not -(2**31) <= number <= INT32_MAX:
        return f"Invalid value {value} for configuration {name}: Not a number of type INT"
    if number < 1:  # TopicConfig MIN_IN_SYNC_REPLICAS: atLeast(1)
        return f"Invalid value {number} for configuration {name}: Value must be at least 1"
    return None


def _configs_problem(t: Topic) -> str | None:
    for name, value in t.configs.items():
        problem = config_problem(name, value)
        if problem:
            return problem
    return None


def leader_problem(leader: int, replicas: tuple[int, ...]) -> str | None:
    """The leader is a replica of the partition (the controller elects it from the replicas: KafkaController,
    ReplicationControlManager), or NO_LEADER (-1)."""
    if leader != NO_LEADER and leader not in replicas:
        return f"leader {leader} not among the replicas {list(replicas)}"
    return None


def state_problem(leader: int, isr: Iterable[int], replicas: tuple[int, ...]) -> str | None:
    """Leader and ISR name replicas of the partition only (the ISR grows from the replicas alone)."""
    return subset_problem("ISR members", isr, replicas) or leader_problem(leader, replicas)


def _partitions_problem(t: Topic) -> str | None:
    """Each partition's replica lists. Their lengths may differ inside a topic: a reassignment may change the
    replication factor of some partitions only (`kafka-reassign-partitions.sh` allows it unless
    --disallow-replication-factor-change, KIP-860; Kafka's ops guide raises partition 0 of foo from 1 to 3), and a
    replication-factor change submitted in batches leaves the topic so between batches."""
    for p in t.partitions:
        problem = (
            replicas_problem(p.replicas)
            or subset_problem("adding", p.adding, p.replicas)
            or subset_problem("removing", p.removing, p.replicas)
        )
        if problem:
            return f"partition {p.id}: {problem}"
    return None


def _observed_problem(t: Topic, state_place: Callable[[str, int], str]) -> str | None:
    for p in t.partitions:
        problem = state_problem(p.observed.leader, p.observed.isr, p.replicas) if p.observed is not None else None
        if problem:
            return f"{state_place(t.name, p.id)}: {problem}"
    return None


def check_cluster(
    cluster: Cluster,
    source: str,
    topic_place: Callable[[str], str] = "topic {}".format,
    config_place: Callable[[str], str] = "topic {} configs".format,
    state_place: Callable[[str, int], str] = "topic {} partition {}".format,
) -> None:
    """Every rule over a built cluster; the first problem as one error naming `source` and the place the topic, its
    configs or a partition's leader and ISR came from, e.g. the znode path."""
    for b in cluster.brokers:
        problem = broker_id_problem(b.id) or port_problem(b.port)
        if problem:
            raise PlannerError(f"{source}: broker {b.id}: {problem}")
    for t in cluster.topics:
        problem = topic_name_problem(t.name) or _partitions_problem(t)
        if problem:
            raise PlannerError(f"{source}: {topic_place(t.name)}: {problem}")
        problem = _configs_problem(t)
        if problem:
            raise PlannerError(f"{source}: {config_place(t.name)}: {problem}")
        problem = _observed_problem(t, state_place)
        if problem:
            raise PlannerError(f"{source}: {problem}")
