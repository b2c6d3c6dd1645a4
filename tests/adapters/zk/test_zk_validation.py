"""The ZooKeeper decoder refuses what the topology loader refuses (one validator, planner.adapters.validate): so `zk
export` never writes a file that does not load, and plans never see an empty replica list."""

from __future__ import annotations

import pytest

from planner.adapters import zk
from planner.model import PlannerError


def _topic(partitions: str, adding: str = "{}") -> bytes:
    return (f'{{"removing_replicas":{{}},"partitions":{partitions},"adding_replicas":{adding},"version":3}}').encode()


@pytest.mark.parametrize(
    "path,data,problem",
    [
        ("/brokers/topics/foo", _topic('{"0":[]}'), "/brokers/topics/foo: partition 0: the replica list is empty"),
        (
            "/brokers/topics/foo",
            _topic('{"0":[1,1]}'),
            "/brokers/topics/foo: partition 0: duplicate replicas 1 in [1, 1]",
        ),
        ("/brokers/topics/foo", _topic('{"0":[1,-3]}'), "broker -3: broker id -3 is outside 0..2147483647"),
        (
            "/brokers/topics/foo",
            _topic('{"0":[1,3],"1":[3,2],"2":[2,4]}', '{"0":[4]}'),
            "/brokers/topics/foo: partition 0: adding 4 not among the replicas [1, 3]",
        ),
        (
            "/brokers/topics/foo/partitions/0/state",
            b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,4]}',
            "/brokers/topics/foo/partitions/0/state: ISR members 4 not among the replicas [1, 3]",
        ),
        (
            "/brokers/topics/foo/partitions/2/state",
            b'{"controller_epoch":1,"leader":3,"version":1,"leader_epoch":0,"isr":[2,4]}',
            "/brokers/topics/foo/partitions/2/state: leader 3 not among the replicas [2, 4]",
        ),
        (
            "/config/topics/foo",
            b'{"version":1,"config":{"min.insync.replicas":"two"}}',
            "/config/topics/foo: Invalid value two for configuration min.insync.replicas: Not a number of type INT",
        ),
    ],
)
def test_zk_refuses_what_the_loader_refuses(simple_url, kazoo_client, path, data, problem):
    node = simple_url[simple_url.index("/", len("zk://")) :] + path
    if kazoo_client.exists(node):
        kazoo_client.set(node, data)
    else:
        kazoo_client.create(node, data, makepath=True)
    with pytest.raises(PlannerError) as exc:
        zk.read_snapshot(simple_url, zk.ZkOptions(timeout=10))
    assert str(exc.value) == f"{simple_url}: {problem}"


def test_zk_reads_a_topic_whose_partitions_differ_in_replication_factor(simple_url, kazoo_client):
    # legal in Kafka: a reassignment may change the replication factor of some partitions only
    node = simple_url[simple_url.index("/", len("zk://")) :] + "/brokers/topics/foo"
    kazoo_client.set(node, _topic('{"0":[1,3],"1":[3,2,1],"2":[2,4]}'))
    cluster = zk.read_snapshot(simple_url, zk.ZkOptions(timeout=10)).cluster
    assert [p.replicas for p in cluster.topic("foo").partitions] == [(1, 3), (3, 2, 1), (2, 4)]
