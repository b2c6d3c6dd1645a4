"""`planner.assignors.uniform` against Kafka's own KIP-848 `uniform` assignor: seeded groups (homogeneous and mixed
subscriptions, current target assignments, members and topics with random Kafka `Uuid`s as the coordinator and the
KIP-848 client make them) assigned by the UniformAssignor of the release in tests/realkafka/real_cluster.py
(tests/realkafka/UniformCases.java, fed the GroupSpec the group coordinator builds) and by ours; every result the
same. No cluster is started: the assignor runs in one JVM per round.

Rounds chain like a live group: each round starts from Kafka's previous target assignment, with members joining,
leaving or changing subscriptions, so the sticky paths (quota revocation, kept partitions, balancing moves) are
reached with the ownership Kafka itself produces."""

from __future__ import annotations

import base64
import random
import subprocess
from pathlib import Path

from realkafka.real_cluster import TOOL_JVM, classpath, java

from planner.assignors import uniform
from planner.assignors.group import Member
from planner.model import TopicPartition

HARNESS = Path(__file__).with_name("UniformCases.java")
TOPICS = ["orders", "clicks", "audit", "payments", "t4", "t5", "t6"]


def _uuid(rnd: random.Random) -> str:
    """Uuid.randomUuid().toString(): 16 random bytes in base64url without padding (Kafka avoids a leading '-')."""
    while True:
        text = base64.urlsafe_b64encode(rnd.randbytes(16)).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def _group(rnd: random.Random) -> tuple[dict[str, tuple[str, int]], list[list]]:
    """topics (name -> (id, partitions)) and members ([id, topics, owned])."""
    names = rnd.sample(TOPICS, rnd.randint(1, 5))
    topics = {t: (_uuid(rnd), rnd.randint(1, 12 if rnd.random() < 0.8 else 40)) for t in names}
    members = [[_uuid(rnd), [], []] for _ in range(rnd.randint(1, 7))]
    _subscribe(rnd, topics, members)
    # a previous target assignment: each partition to at most one member, often one subscribed to its topic
    for t, (_, count) in topics.items():
        for p in range(count):
            if rnd.random() < 0.7:
                fits = [m for m in members if t in m[1]] or members
                owner = rnd.choice(fits if rnd.random() < 0.9 else members)
                owner[2].append((t, p))
    return topics, members


def _subscribe(rnd: random.Random, topics, members, only=None) -> None:
    names = sorted(topics)
    shared = sorted(rnd.sample(names, rnd.randint(1, len(names))))
    homogeneous = rnd.random() < 0.5
    for m in members if only is None else only:
        if homogeneous:
            m[1] = list(shared)
        else:
            m[1] = sorted(rnd.sample(names, rnd.randint(1, len(names))))
        if rnd.random() < 0.05:
            m[1] = sorted(m[1] + ["missing-topic"])  # subscribed, but not in the metadata


def _evolve(rnd: random.Random, topics, members, result: dict[str, list[tuple[str, int]]]) -> list[list]:
    """The next round: Kafka's target assignment as ownership, then a member joins, leaves or resubscribes."""
    members = [[m[0], list(m[1]), list(result[m[0]])] for m in members]
    change = rnd.random()
    if change < 0.45 or len(members) == 1:
        joiner = [_uuid(rnd), list(rnd.choice(members)[1]), []]
        if rnd.random() < 0.3:
            _subscribe(rnd, topics, [joiner], only=[joiner])
        members.insert(rnd.randint(0, len(members)), joiner)
    elif change < 0.8:
        members.pop(rnd.randrange(len(members)))
    else:
        _subscribe(rnd, topics, members, only=rnd.sample(members, rnd.randint(1, len(members))))
    return members


def _line(topics, members) -> str:
    t = ",".join(f"{name}/{tid}/{count}" for name, (tid, count) in topics.items())
    m = ";".join(f"{mid}/{'+'.join(subs)}/{'+'.join(f'{tp}:{p}' for tp, p in owned)}" for mid, subs, owned in members)
    return f"{t}|{m}"


def _parse(line: str) -> dict[str, list[tuple[str, int]]] | str:
    if line.startswith("!"):
        return line
    out: dict[str, list[tuple[str, int]]] = {}
    for row in line.split(";"):
        mid, tps = row.split("=")
        out[mid] = [(tp.rsplit(":", 1)[0], int(tp.rsplit(":", 1)[1])) for tp in tps.split("+") if tp]
    return out


def _ours(topics, members) -> dict[str, list[tuple[str, int]]] | str:
    group = [
        Member(mid, tuple(subs), owned=tuple(TopicPartition(t, p) for t, p in owned)) for mid, subs, owned in members
    ]
    counts = {name: count for name, (_, count) in topics.items()}
    ids = {name: tid for name, (tid, _) in topics.items()}
    try:
        out = uniform.assign(group, counts, ids)
    except Exception as e:  # noqa: BLE001 - compared with Kafka's PartitionAssignorException below
        return f"!{e}"
    return {mid: [(tp.topic, tp.partition) for tp in out.get(mid, [])] for mid, _, _ in members}


def _kafka(lines: list[str]) -> list[str]:
    done = subprocess.run(
        [java(), *TOOL_JVM, "-cp", classpath(), str(HARNESS)],
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert len(out) == len(lines)
    return out


def test_uniform_as_kafkas_uniform_assignor():
    rnd = random.Random(848)
    groups = [_group(rnd) for _ in range(1500)]
    stats = {"homogeneous": 0, "heterogeneous": 0, "revoked": 0, "member bucket shared": 0}
    for _round in range(4):
        theirs = [_parse(line) for line in _kafka([_line(t, m) for t, m in groups])]
        mismatches = []
        for (topics, members), kafka in zip(groups, theirs):
            ours = _ours(topics, members)
            if isinstance(kafka, str):
                assert isinstance(ours, str), (kafka, ours)
                continue
            if ours != {mid: sorted(tps) for mid, tps in kafka.items()}:
                mismatches.append((_line(topics, members), kafka, ours))
            stats["homogeneous" if len({tuple(m[1]) for m in members}) == 1 else "heterogeneous"] += 1
            stats["revoked"] += any(set(m[2]) - set(kafka[m[0]]) for m in members)
            buckets = [hash_bucket(m[0]) for m in members]
            stats["member bucket shared"] += len(set(buckets)) < len(buckets)
        assert mismatches[:3] == [] and len(mismatches) == 0
        groups = [
            (topics, _evolve(rnd, topics, members, kafka))
            for (topics, members), kafka in zip(groups, theirs)
            if not isinstance(kafka, str)
        ]
    # the seeded groups reach every path: both builders, revocations, members sharing a HashMap bucket (insertion
    # order decides theirs)
    assert stats["homogeneous"] > 1500 and stats["heterogeneous"] > 1500, stats
    assert stats["revoked"] > 1000, stats
    assert stats["member bucket shared"] > 300, stats


def hash_bucket(member_id: str) -> int:
    """The bucket of a String key in a 16-bucket java.util.HashMap."""
    from planner.java import string_hash_code

    h = string_hash_code(member_id) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & 15
