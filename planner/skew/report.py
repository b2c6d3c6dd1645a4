"""From the job's counts to the report: per partition, per broker (leader / replica), skew metrics, sweep, top keys.

Pure: no Spark, no I/O. Leaders come from `planner.leadership.topic_states` (so `--offline-brokers` and observed
state are
honoured the way the controller would elect); a partition without a leader is reported under "no leader".
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.model import NO_LEADER, Cluster, Topic
from planner.skew.imbalance import Skew, skew
from planner.skew.job import Counts
from planner.skew.sweep import SweepResult, evaluate_sweep


@dataclass(frozen=True)
class PartitionRow:
    partition: int
    records: int
    bytes: int
    leader: int | None = None  # None without a topology; NO_LEADER (-1) when the partition has none
    replicas: tuple[int, ...] = ()


@dataclass(frozen=True)
class BrokerRow:
    broker: int  # NO_LEADER (-1) = partitions without a leader (leader table only)
    rack: str | None
    state: str
    partitions: int
    records: int
    bytes: int
    cordoned: bool = False  # every log dir cordoned (KIP-1066)


@dataclass(frozen=True)
class TopKeyRow:
    key: str
    records: int
    bytes: int
    partition: int
    share_of_partition: float  # records of the key / records of its partition
    share_of_keyed: float  # records of the key / all keyed records


@dataclass(frozen=True)
class SkewReport:
    source: str
    key_column: str
    key_type: str
    partitions: int
    topic: str | None
    rows: int
    keyed_records: int
    null_records: int
    null_bytes: int
    unreadable: int
    per_partition: tuple[PartitionRow, ...]
    records_skew: Skew
    bytes_skew: Skew
    leaders: tuple[BrokerRow, ...]
    replicas: tuple[BrokerRow, ...]
    leader_skew: Skew | None
    replica_skew: Skew | None
    top: tuple[TopKeyRow, ...]
    sweep: SweepResult | None
    distinct_keys: int | None = None
    top_bound: int | None = None  # proven: no key outside `top` has more records (None: exact group-by, not needed)
    heavy_counters: int = 0
    blank_lines: int = 0  # CSV lines of whitespace only: not rows, counted


def _broker_tables(cluster: Cluster, topic: Topic, rows: list[PartitionRow]):
    by_broker = {b.id: b for b in cluster.brokers}
    lead: dict[int, list[int]] = {b.id: [0, 0, 0] for b in cluster.brokers}
    repl: dict[int, list[int]] = {b.id: [0, 0, 0] for b in cluster.brokers}
    for r in rows:
        slot = lead.setdefault(r.leader if r.leader is not None else -1, [0, 0, 0])
        slot[0] += 1
        slot[1] += r.records
        slot[2] += r.bytes
        for b in r.replicas:
            s = repl.setdefault(b, [0, 0, 0])
            s[0] += 1
            s[1] += r.records
            s[2] += r.bytes

    def table(acc: dict[int, list[int]], keep_empty_no_leader: bool) -> tuple[BrokerRow, ...]:
        out = []
        for bid in sorted(acc, key=lambda b: (b == NO_LEADER, b)):
            parts, recs, nbytes = acc[bid]
            if bid == NO_LEADER and not parts and not keep_empty_no_leader:
                continue
            b = by_broker.get(bid)
            out.append(
                BrokerRow(
                    bid,
                    b.rack if b else None,
                    b.state if b else ("-" if bid == NO_LEADER else "unknown"),
                    parts,
                    recs,
                    nbytes,
                    bool(b and b.cordoned),
                )
            )
        return tuple(out)

    leaders = table(lead, False)
    replicas = table(repl, False)
    live = cluster.online_ids
    leader_skew = skew([r.records for r in leaders if r.broker in live])
    replica_skew = skew([r.records for r in replicas if r.broker in live])
    return leaders, replicas, leader_skew, replica_skew


def build_report(
    counts: Counts,
    *,
    source: str,
    key_column: str,
    key_type: str,
    partitions: int,
    sweep_counts: tuple[int, ...] = (),
    max_skew: float = 1.2,
    cluster: Cluster | None = None,
    topic: str | None = None,
) -> SkewReport:
    records = counts.records[partitions]
    nbytes = counts.bytes[partitions]
    rows: list[PartitionRow] = []
    leaders = replicas = ()
    leader_skew = replica_skew = None
    if cluster is not None and topic is not None:
        from planner.leadership import topic_states

        t = cluster.topic(topic)
        states = topic_states(cluster, t)
        for p in t.partitions:
            rows.append(PartitionRow(p.id, records[p.id], nbytes[p.id], states[p.id].leader, p.replicas))
        leaders, replicas, leader_skew, replica_skew = _broker_tables(cluster, t, rows)
    else:
        rows = [PartitionRow(i, records[i], nbytes[i]) for i in range(partitions)]
    per_partition_records = {r.partition: r.records for r in rows}
    keyed = sum(records)
    top = tuple(
        TopKeyRow(
            k.key,
            k.records,
            k.bytes,
            k.partition,
            k.records / per_partition_records[k.partition] if per_partition_records[k.partition] else 0.0,
            k.records / keyed if keyed else 0.0,
        )
        for k in counts.top
    )
    sweep = None
    if sweep_counts:
        sweep = evaluate_sweep(
            {n: counts.records[n] for n in sweep_counts},
            {n: counts.bytes[n] for n in sweep_counts},
            max_skew,
            top_key_records=counts.top[0].records if counts.top else None,
        )
    return SkewReport(
        source=source,
        key_column=key_column,
        key_type=key_type,
        partitions=partitions,
        topic=topic,
        rows=counts.rows,
        keyed_records=keyed,
        null_records=counts.null_records,
        null_bytes=counts.null_bytes,
        unreadable=counts.unreadable,
        blank_lines=counts.blank_lines,
        per_partition=tuple(rows),
        records_skew=skew(records),
        bytes_skew=skew(nbytes),
        leaders=leaders,
        replicas=replicas,
        leader_skew=leader_skew,
        replica_skew=replica_skew,
        top=top,
        sweep=sweep,
        distinct_keys=counts.distinct_keys,
        top_bound=counts.top_bound,
        heavy_counters=counts.heavy_counters,
    )
