"""Messages on the real cluster (issue 29, item 5): keys produced by Kafka's own Java producer land where `partition`
predicts; real consumer groups (classic range, roundrobin, sticky, cooperative-sticky; KIP-848 uniform and range) get
the assignment `consumers` predicts, as `kafka-consumer-groups.sh --describe --members --verbose` shows it; the
coordinator `kafka-consumer-groups.sh --describe --state` reports is the one `coordinator` names.

The clients are Kafka's own (kafka-clients of .kafka/<version>/lib) driven by tests/realkafka/MessagesHarness.java."""

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from realkafka.real_cluster import CONSUMER_GROUPS, TOOL_JVM, _kill_group, java
from reaper import popen

from planner.assignors.uniform import uuid_hash_code
from planner.java import string_hash_code

GET_OFFSETS = "org.apache.kafka.tools.GetOffsetShell"  # kafka-get-offsets.sh
TRANSACTIONS = "org.apache.kafka.tools.TransactionsCommand"  # kafka-transactions.sh
HARNESS = Path(__file__).with_name("MessagesHarness.java")
KEYS_TOPIC = "messages-keys"  # 6 partitions: the producer tests
GROUP_TOPICS = {"messages-orders": 4, "messages-clicks": 3}  # the consumer groups subscribe to both
TOPIC_SET = {KEYS_TOPIC: 6, **GROUP_TOPICS}


@pytest.fixture(scope="module")
def cluster(real_kafka):
    brokers = sorted(real_kafka.brokers)
    for name, count in TOPIC_SET.items():
        real_kafka.create_topic(name, [[brokers[p % 4], brokers[(p + 1) % 4]] for p in range(count)])
    try:
        yield real_kafka
    finally:
        real_kafka.delete_topics(*TOPIC_SET)


def harness(cluster, *args: str, **kw) -> subprocess.Popen:
    cmd = [java(), *TOOL_JVM, "-cp", cluster.classpath, str(HARNESS), *args]
    return popen(cmd, text=True, **kw)  # its own process group, listed with the reaper until _kill_group


def produce(cluster, kind: str, source: str) -> list[int]:
    """Records sent by Kafka's producer: the partition of each, in order."""
    proc = harness(cluster, "produce", cluster.bootstrap, KEYS_TOPIC, kind, source, stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE)  # fmt: skip
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        _kill_group(proc, grace=2)
    assert proc.returncode == 0, err
    return [int(line.split()[0]) for line in out.splitlines()]


def end_offsets(cluster) -> dict[int, int]:
    """The topic's end offsets as Kafka's kafka-get-offsets.sh reports them (topic:partition:offset lines)."""
    rc, out, err = cluster.run_tool(GET_OFFSETS, "--bootstrap-server", cluster.bootstrap, "--topic", KEYS_TOPIC)
    assert rc == 0, err
    return {int(p): int(o) for _, p, o in (line.rsplit(":", 2) for line in out.split())}


def predicted(planner_cli, key_type: str, keys: list[str]) -> list[int]:
    code, out, err = planner_cli(
        "partition", "--partitions", "6", "--key-type", key_type, "--format", "tsv", "--", *keys
    )
    assert code == 0, err
    return [int(line.rsplit("\t", 1)[1]) for line in out.splitlines()]


def produced_counts(cluster, kind: str, source: str) -> tuple[list[int], dict[int, int]]:
    before = end_offsets(cluster)
    partitions = produce(cluster, kind, source)
    after = end_offsets(cluster)
    return partitions, {p: after[p] - before[p] for p in after if after[p] != before[p]}


def histogram(partitions: list[int]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for p in partitions:
        counts[p] = counts.get(p, 0) + 1
    return counts


STRING_KEYS = [f"customer-{i:04d}" for i in range(40)] + ["", "ключ", "键", "emoji-\U0001f600", "a b", "-dash"]


def test_string_keys_land_where_partition_predicts(cluster, planner_cli, tmp_path):
    keys_file = tmp_path / "keys.txt"
    keys_file.write_text("".join(k + "\n" for k in STRING_KEYS), encoding="utf-8")
    partitions, counts = produced_counts(cluster, "string", str(keys_file))
    expected = predicted(planner_cli, "string", STRING_KEYS)
    assert partitions == expected  # record by record, as the producer's RecordMetadata reports them
    assert counts == histogram(expected)  # and counted from the real end offsets
    # the planner's own --keys-file path gives the same
    code, out, err = planner_cli("partition", "--partitions", "6", "--keys-file", str(keys_file), "--format", "tsv")
    assert code == 0, err
    assert [int(line.rsplit("\t", 1)[1]) for line in out.splitlines()] == expected


BYTE_KEYS = ["00", "ff", "ff00", "c328", "80", "fffe", "deadbeef", "00000000", "7f", "a0a1"]
BYTE_KEYS += [f"{i:02x}{255 - i:02x}c0" for i in range(0, 256, 9)]


def test_byte_array_keys_land_where_partition_predicts(cluster, planner_cli, tmp_path):
    keys_file = tmp_path / "keys.hex"
    keys_file.write_text("".join(k + "\n" for k in BYTE_KEYS))
    partitions, counts = produced_counts(cluster, "bytes", str(keys_file))
    expected = predicted(planner_cli, "bytes-hex", BYTE_KEYS)
    assert partitions == expected
    assert counts == histogram(expected)
    assert len(set(expected)) == 6  # every partition is hit: not a lucky match on one


def test_null_keys_stick_to_one_partition_per_batch(cluster):
    # Kafka 3.3+ (KIP-794, BuiltInPartitioner): keyless records go to one partition until batch.size (16384) bytes
    # were produced to it, then to another; 30 small records are far below that, so one partition takes them all.
    # Which one is ThreadLocalRandom's choice in the producer: the planner can only simulate it (--null-key-simulation).
    partitions, counts = produced_counts(cluster, "null", "30")
    assert len(set(partitions)) == 1
    assert counts == {partitions[0]: 30}


# ------------------------------------------------------------------ consumer groups
def describe_members(cluster, group: str) -> str:
    rc, out, err = cluster.run_tool(
        CONSUMER_GROUPS, "--bootstrap-server", cluster.bootstrap, "--describe", "--group", group, "--members",
        "--verbose",
    )  # fmt: skip
    assert rc == 0, err
    return out


def parse_members(text: str) -> dict[str, set[str]]:
    """member id -> its partitions ("topic-p") from `--describe --members --verbose` (CURRENT-ASSIGNMENT; for the
    consumer protocol TARGET-ASSIGNMENT too, which a Stable group has equal to it; classic members print "-" there)."""
    lines = [line for line in text.splitlines() if line.strip()]
    header = lines[0].split()
    assert "CONSUMER-ID" in header, text
    column = header.index("CURRENT-ASSIGNMENT")
    members = {}
    for line in lines[1:]:
        fields = line.split()
        if not fields:
            continue
        assert len(fields) == len(header), line
        parts = set()
        for spec in fields[column].split(";") if fields[column] != "-" else []:
            topic, numbers = spec.split(":")
            parts |= {f"{topic}-{n}" for n in numbers.split(",")}
        members[fields[header.index("CONSUMER-ID")]] = parts
        if fields[header.index("TARGET-EPOCH")] != "-":  # the consumer protocol (classic members print "-")
            assert fields[header.index("TARGET-ASSIGNMENT")] == fields[column], line
    return members


def predict(
    cluster, planner_cli, tmp_path, strategy: str, members: list[str], owned: dict[str, list[str]], step: int,
    settled: bool = False,
):  # fmt: skip
    """`consumers` for these members (real member ids, in the order they joined), each owning what it held before this
    step (in this order). `settled`: the member that joined last is given a generation too (it is in the group
    coordinator's member map when the assignment is computed: see the uniform case of the test below)."""
    group = {"group": "messages", "members": []}
    for m in members:
        entry = {"id": m, "topics": sorted(GROUP_TOPICS)}
        if m in owned:
            entry |= {"owned": list(owned[m]), "generation": step}
        elif settled and m == members[-1]:
            entry |= {"generation": step}
        group["members"].append(entry)
    path = tmp_path / f"group-{strategy}-{step}.yaml"
    path.write_text(yaml.safe_dump(group))
    code, out, err = planner_cli("consumers", cluster.url, "--group-file", str(path), "--strategy", strategy,
                                 "--format", "json")  # fmt: skip
    assert code == 0, err
    result = json.loads(out)["strategies"][strategy]
    return {m: set(v["partitions"]) for m, v in result["members"].items()}


def real_topic_ids(cluster, planner_cli) -> dict[str, str]:
    """The group topics' ids as the cluster made them (random at creation), from `describe kafka://…`."""
    code, out, err = planner_cli("describe", cluster.url)
    assert code == 0, err
    ids = {t: i for t, i in re.findall(r"^Topic: (\S+)\tTopicId: (\S+)", out, re.M) if t in GROUP_TOPICS}
    assert set(ids) == set(GROUP_TOPICS), out
    return ids


def hashmap_bucket(hash_code: int) -> int:
    """The bucket of a key with this hashCode in a 16-bucket java.util.HashMap."""
    h = hash_code & 0xFFFFFFFF
    return (h ^ (h >> 16)) & 15


CLASSIC = {
    "range": "org.apache.kafka.clients.consumer.RangeAssignor",
    "roundrobin": "org.apache.kafka.clients.consumer.RoundRobinAssignor",
    "sticky": "org.apache.kafka.clients.consumer.StickyAssignor",
    "cooperative-sticky": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
}
CASES = [(s, "classic", c) for s, c in CLASSIC.items()]
CASES += [("uniform", "consumer", "uniform"), ("server-range", "consumer", "range")]  # KIP-848, group.remote.assignor


@pytest.mark.parametrize(("strategy", "protocol", "assignor"), CASES, ids=[c[0] for c in CASES])
def test_group_assignment_equals_consumers(cluster, planner_cli, tmp_path, strategy, protocol, assignor):
    """Three consumers join one after another (client ids c0, c1, c2), the group settling after each: after every
    join the real assignment equals `consumers` fed the real member ids (the broker (classic) or the client (KIP-848)
    makes them up, random UUIDs, and range, roundrobin and the sticky strategies order members by them) and, for the
    sticky strategies and uniform, the partitions each member held before the join (what it reports as owned)."""
    group = f"messages-group-{strategy}"
    total = sum(GROUP_TOPICS.values())
    topic_ids = real_topic_ids(cluster, planner_cli)
    shared_bucket = len({hashmap_bucket(uuid_hash_code(tid)) for tid in topic_ids.values()}) < len(topic_ids)
    proc = harness(cluster, "group", cluster.bootstrap, group, protocol, assignor, ",".join(sorted(GROUP_TOPICS)),
                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        owned: dict[str, set[str]] = {}
        joined: list[str] = []  # member ids in the order their consumers joined (the group file's order)
        for step, client in enumerate(["c0", "c1", "c2"], start=1):
            proc.stdin.write(f"add {client}\nwait {step} {total}\n")
            proc.stdin.flush()
            real = {}
            while (line := proc.stdout.readline()) not in ("@stable\n", ""):
                if line.startswith("@member "):
                    _, member, member_client, tps = line.split(" ")
                    real[member] = {tp for tp in tps.strip().split(",") if tp}
                    if member_client == client:
                        joined.append(member)
            assert line == "@stable\n", proc.stderr.read()[-3000:]
            assert sorted(joined) == sorted(real), (joined, real)
            if step == 3:  # the last step also as Kafka's own tool shows it
                assert parse_members(describe_members(cluster, group)) == real
            # uniform: the coordinator computes the assignment on the newcomer's first heartbeat, the newcomer then
            # walked after the group's members; but not sooner than group.consumer.assignment.interval.ms (1 s) after
            # the previous one (GroupMetadataManager.maybeUpdateTargetAssignment), else on a later heartbeat, the
            # newcomer then in the group's member map. The two differ only when the newcomer shares a HashMap bucket
            # with another member: then either is one prediction.
            buckets = [hashmap_bucket(string_hash_code(m)) for m in joined]
            timings = [False, True] if strategy == "uniform" and buckets[-1] in buckets[:-1] else [False]
            # both topic ids in one HashMap bucket: a member's current topics are walked in the order of its
            # target-assignment record, which describe does not show; each order is one prediction
            firsts = sorted(GROUP_TOPICS) if strategy == "uniform" and shared_bucket else [""]
            orders = [{m: sorted(tps, key=lambda tp, first=first: (not tp.startswith(first), tp))
                       for m, tps in owned.items()} for first in firsts]  # fmt: skip
            predictions = [predict(cluster, planner_cli, tmp_path, strategy, joined, o, step, settled)
                           for o in orders for settled in timings]  # fmt: skip
            assert real in predictions, (step, real, predictions, topic_ids, joined, owned)
            owned = real
        assert {len(p) for p in owned.values()} == {2, 3}  # 7 partitions over 3 members: a real spread to get right
        proc.stdin.close()
        assert proc.wait(60) == 0
    finally:
        _kill_group(proc, grace=2)
        cluster.run_tool(CONSUMER_GROUPS, "--bootstrap-server", cluster.bootstrap, "--delete", "--group", group)


# ------------------------------------------------------------------ coordinators
GROUP_IDS = ["messages-coord-a", "messages-coord-b", "orders-service", "payments", "g", "messages-coord-✓"]
TXN_IDS = ["messages-txn-a", "messages-txn-b", "orders-writer-0", "orders-writer-1"]


def planned_coordinators(cluster, planner_cli, ids: list[str], *flags: str) -> dict[str, int]:
    code, out, err = planner_cli("coordinator", "--topology", cluster.url, "--format", "json", *flags, *ids)
    assert code == 0, err
    return {entry["id"]: entry["coordinator"] for entry in json.loads(out)["ids"]}


def test_group_coordinator_equals_coordinator(cluster, planner_cli):
    # each group exists once it has committed offsets (kafka-python's consumer in this process: no JVM per group)
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    tp = TopicPartition(KEYS_TOPIC, 0)
    for group in GROUP_IDS:
        consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap, group_id=group, enable_auto_commit=False)
        try:
            consumer.assign([tp])
            consumer.commit({tp: OffsetAndMetadata(0, "", -1)})
        finally:
            consumer.close()
    try:
        args = ["--bootstrap-server", cluster.bootstrap, "--describe", "--state"]
        rc, out, err = cluster.run_tool(CONSUMER_GROUPS, *args, *(a for g in GROUP_IDS for a in ("--group", g)))
        assert rc == 0, err
        # GROUP  COORDINATOR (ID)  ASSIGNMENT-STRATEGY  STATE  #MEMBERS, e.g. "g  127.0.0.1:40123  (2)  Empty  0"
        real = {line.split()[0]: int(re.search(r"\((\d+)\)", line)[1]) for line in out.splitlines() if "(" in line
                and not line.startswith("GROUP")}  # fmt: skip
        assert real == planned_coordinators(cluster, planner_cli, GROUP_IDS)
        assert len(set(real.values())) > 1  # not all on one broker: the ids spread over __consumer_offsets
    finally:
        cluster.run_tool(CONSUMER_GROUPS, "--bootstrap-server", cluster.bootstrap, "--delete",
                         *(a for g in GROUP_IDS for a in ("--group", g)))  # fmt: skip


def test_transaction_coordinator_equals_coordinator_transactional(cluster, planner_cli):
    proc = harness(cluster, "txn", cluster.bootstrap, *TXN_IDS, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _, err = proc.communicate(timeout=120)
    finally:
        _kill_group(proc, grace=2)
    assert proc.returncode == 0, err
    rc, out, err = cluster.run_tool(TRANSACTIONS, "--bootstrap-server", cluster.bootstrap, "list")
    assert rc == 0, err
    # TransactionalId  Coordinator  ProducerId  TransactionState
    rows = [line.split() for line in out.splitlines()[1:] if line.strip()]
    real = {row[0]: int(row[1]) for row in rows if row[0] in TXN_IDS}
    assert real == planned_coordinators(cluster, planner_cli, TXN_IDS, "--transactional")
