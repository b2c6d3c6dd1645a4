"""The skew report as terminal tables (tabulate, a unicode bar per partition) or JSON (`summary.json`)."""

from __future__ import annotations

import json
from typing import Any

from planner.model import NO_LEADER
from planner.skew.imbalance import Skew
from planner.skew.report import BrokerRow, SkewReport


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _metrics_line(name: str, s: Skew | None) -> list:
    if s is None:
        return [name, "-", "-", "-", "-", "-", "-"]
    return [
        name,
        f"{s.minimum:,}",
        f"{s.maximum:,}",
        f"{s.mean:,.1f}",
        _ratio(s.max_over_mean),
        _ratio(s.cv),
        _ratio(s.gini),
    ]


def _broker_name(bid: int) -> str:
    return "no leader" if bid == NO_LEADER else str(bid)


def render_table(r: SkewReport) -> str:
    from tabulate import tabulate

    from planner.formats.tables import bar
    from planner.model import human_bytes

    out = []
    target = f"topic {r.topic} ({r.partitions} partitions)" if r.topic else f"{r.partitions} partitions"
    out.append(
        f"Keys: {r.source}, column {r.key_column!r} as {r.key_type}, hashed as Kafka's producer does for {target}"
    )
    out.append(
        f"Rows: {r.rows:,}  keyed: {r.keyed_records:,}  null keys: {r.null_records:,}  unreadable: {r.unreadable:,}"
        + (f"  blank lines: {r.blank_lines:,}" if r.blank_lines else "")
    )
    if r.null_records:
        out.append(
            "Null keys are not hashed: the producer's keyless partitioner spreads them, so they are not counted "
            "per partition"
        )
    if r.distinct_keys is not None:
        out.append(f"Distinct keys: {r.distinct_keys:,}")
    out.append("")
    peak = max((p.records for p in r.per_partition), default=0)
    with_topology = r.topic is not None
    headers = ["partition", "records", "share", "", "bytes"] + (["leader", "replicas"] if with_topology else [])
    rows = []
    for p in r.per_partition:
        share = p.records / r.keyed_records if r.keyed_records else 0.0
        row = [p.partition, f"{p.records:,}", f"{share:6.2%}", bar(p.records, peak, 20), human_bytes(p.bytes)]
        if with_topology:
            row += [_broker_name(p.leader if p.leader is not None else -1), ",".join(map(str, p.replicas))]
        rows.append(row)
    out.append(
        tabulate(
            rows,
            headers=headers,
            tablefmt="simple",
            disable_numparse=True,
            colalign=("right", "right", "right", "left", "right") + (("right", "left") if with_topology else ()),
        )
    )
    out.append("")
    metric_rows = [
        _metrics_line("records / partition", r.records_skew),
        _metrics_line("bytes / partition", r.bytes_skew),
    ]
    if with_topology:
        metric_rows += [
            _metrics_line("records / leader (online)", r.leader_skew),
            _metrics_line("records / replica (online)", r.replica_skew),
        ]
    out.append(
        tabulate(
            metric_rows,
            headers=["skew", "min", "max", "mean", "max/mean", "CV", "Gini"],
            tablefmt="simple",
            disable_numparse=True,
            colalign=("left",) + ("right",) * 6,
        )
    )
    if with_topology:
        for title, table in (("as leader", r.leaders), ("as replica", r.replicas)):
            out.append("")
            out.append(_broker_table(title, table))
    if r.top:
        out.append("")
        out.append(
            tabulate(
                [
                    [
                        i + 1,
                        k.key,
                        f"{k.records:,}",
                        human_bytes(k.bytes),
                        k.partition,
                        f"{k.share_of_partition:.2%}",
                        f"{k.share_of_keyed:.2%}",
                    ]
                    for i, k in enumerate(r.top)
                ],
                headers=["#", "top key", "records", "bytes", "partition", "of partition", "of keyed"],
                tablefmt="simple",
                disable_numparse=True,
                colalign=("right", "left") + ("right",) * 5,
            )
        )
    if r.top_bound is not None and r.keyed_records:
        out.append(hot_key_bound(r))
    if r.sweep:
        out.append("")
        out.append(
            tabulate(
                [
                    [
                        row.partitions,
                        _ratio(row.records.max_over_mean),
                        _ratio(row.records.cv),
                        _ratio(row.records.gini),
                        _ratio(row.bytes.max_over_mean),
                        "yes" if row.within else "no",
                    ]
                    for row in r.sweep.rows
                ],
                headers=[
                    "sweep: partitions",
                    "records max/mean",
                    "CV",
                    "Gini",
                    "bytes max/mean",
                    f"max/mean <= {r.sweep.max_skew:g}",
                ],
                tablefmt="simple",
                disable_numparse=True,
                colalign=("right",) * 5 + ("left",),
            )
        )
        if r.sweep.recommended is not None:
            out.append(
                f"Recommended: {r.sweep.recommended} partitions (the smallest count whose records max/mean "
                f"is at most {r.sweep.max_skew:g})"
            )
        else:
            lowest = next((row for row in r.sweep.rows if row.partitions == r.sweep.lowest), None)
            best = (
                f" (the lowest is {_ratio(lowest.records.max_over_mean)}, at {lowest.partitions} partitions)"
                if lowest
                else ""
            )
            out.append(f"Recommended: none of the counts keeps records max/mean at most {r.sweep.max_skew:g}{best}")
        limit = r.sweep.hot_key_limit
        if r.top and limit is not None and limit < max(row.partitions for row in r.sweep.rows):
            out.append(
                f"The top key alone holds {r.top[0].share_of_keyed:.2%} of the keyed records: above {limit} "
                f"partition{'' if limit == 1 else 's'} its partition exceeds max/mean {r.sweep.max_skew:g}"
            )
            out.append("whatever the other keys do; more partitions cannot fix that skew")
    return "\n".join(out) + "\n"


def _broker_table(title: str, table: tuple[BrokerRow, ...]) -> str:
    from tabulate import tabulate

    from planner.formats.tables import bar
    from planner.model import human_bytes

    peak = max((b.records for b in table), default=0)
    return tabulate(
        [
            [
                _broker_name(b.broker),
                b.rack or "-",
                b.state,
                b.partitions,
                f"{b.records:,}",
                bar(b.records, peak, 16),
                human_bytes(b.bytes),
            ]
            for b in table
        ],
        headers=[f"broker ({title})", "rack", "state", "partitions", "records", "", "bytes"],
        tablefmt="simple",
        disable_numparse=True,
        colalign=("left", "left", "left", "right", "right", "left", "right"),
    )


def hot_key_bound(r: SkewReport) -> str:
    """The proven bound on every key not listed (Misra-Gries summary + exact second pass)."""
    bound = r.top_bound or 0
    text = (
        f"No other key holds more than {bound:,} records ({bound / r.keyed_records:.2%} of keyed records)\n"
        f"(proven by {r.heavy_counters:,}-counter Misra-Gries summaries; the listed counts are exact)."
    )
    if r.top and r.top[-1].records <= bound:
        text += "\nKeys at or below that bound are not ranked: --exact-top ranks every key."
    return text


def _skew(s: Skew | None):
    return None if s is None else s.as_dict()


def summary(r: SkewReport) -> dict:
    data: dict[str, Any] = {
        "source": r.source,
        "key_column": r.key_column,
        "key_type": r.key_type,
        "partitions": r.partitions,
        "topic": r.topic,
        "rows": r.rows,
        "keyed_records": r.keyed_records,
        "null_key_records": r.null_records,
        "null_key_bytes": r.null_bytes,
        "unreadable_rows": r.unreadable,
        "blank_lines": r.blank_lines,
        "distinct_keys": r.distinct_keys,
        "per_partition": [
            {
                "partition": p.partition,
                "records": p.records,
                "bytes": p.bytes,
                **({"leader": p.leader, "replicas": list(p.replicas)} if r.topic else {}),
            }
            for p in r.per_partition
        ],
        "skew": {"records": _skew(r.records_skew), "bytes": _skew(r.bytes_skew)},
        "other_keys_max_records": r.top_bound,
        "top_keys": [
            {
                "key": k.key,
                "records": k.records,
                "bytes": k.bytes,
                "partition": k.partition,
                "share_of_partition": k.share_of_partition,
                "share_of_keyed": k.share_of_keyed,
            }
            for k in r.top
        ],
    }
    if r.topic:
        data["brokers"] = {
            "as_leader": [_broker_dict(b) for b in r.leaders],
            "as_replica": [_broker_dict(b) for b in r.replicas],
        }
        data["skew"]["leader_records"] = _skew(r.leader_skew)
        data["skew"]["replica_records"] = _skew(r.replica_skew)
    if r.sweep:
        data["sweep"] = {
            "max_skew": r.sweep.max_skew,
            "recommended": r.sweep.recommended,
            "lowest_max_over_mean": r.sweep.lowest,
            "hot_key_limit": r.sweep.hot_key_limit,
            "counts": [
                {
                    "partitions": row.partitions,
                    "records": _skew(row.records),
                    "bytes": _skew(row.bytes),
                    "within_max_skew": row.within,
                }
                for row in r.sweep.rows
            ],
        }
    return data


def _broker_dict(b: BrokerRow) -> dict:
    return {
        "broker": b.broker,
        "rack": b.rack,
        "state": b.state,
        "cordoned": b.cordoned,
        "partitions": b.partitions,
        "records": b.records,
        "bytes": b.bytes,
    }


def render_json(r: SkewReport) -> str:
    return json.dumps(summary(r), indent=2) + "\n"


def render_topic(t, n: int) -> str:
    """A topic's records per partition as it holds them (a `kafkasource.TopicCounts`), the records not where
    murmur2 puts them, and the heading of the what-if below (the same keys under `n` partitions)."""
    from tabulate import tabulate

    from planner.formats.tables import bar
    from planner.model import human_bytes
    from planner.skew.imbalance import skew as skew_of

    parts = t.per_partition
    records = sum(p.records for p in parts)
    nulls = sum(p.null_keys for p in parts)
    peak = max((p.records for p in parts), default=0)
    out = [
        f"Topic {t.topic} on {t.url.rsplit('/', 1)[0]} ({t.partitions} partitions), {t.range}, "
        "read by Spark's Kafka source",
        f"Records: {records:,}  keyed: {records - nulls:,}  null keys: {nulls:,}",
        "",
    ]
    rows = []
    for p in parts:
        share = p.records / records if records else 0.0
        offsets = "-" if p.first_offset is None else f"{p.first_offset:,}..{p.last_offset:,}"
        hot = ", ".join(f"{k} ({c:,})" for k, c in p.hot_keys)
        rows.append([p.partition, f"{p.records:,}", f"{share:6.2%}", bar(p.records, peak, 20), human_bytes(p.bytes),
                     offsets, hot])  # fmt: skip
    out.append(
        tabulate(
            rows,
            headers=["partition", "records", "share", "", "bytes", "offsets", "hot keys (records)"],
            tablefmt="simple",
            disable_numparse=True,
            colalign=("right", "right", "right", "left", "right", "right", "left"),
        )
    )
    out.append("")
    out.append(
        tabulate(
            [_metrics_line("records / partition (topic)", skew_of([p.records for p in parts]))],
            headers=["skew", "min", "max", "mean", "max/mean", "CV", "Gini"],
            tablefmt="simple",
            disable_numparse=True,
            colalign=("left",) + ("right",) * 6,
        )
    )
    moved = t.misplaced
    if moved is None:
        out.append("Records whose partition differs from murmur2's: not checked (needs the murmur2 UDF: javac)")
    elif moved == 0:
        out.append("Every keyed record is in the partition Kafka's partitioner (murmur2) gives its key")
    else:
        out.append(
            f"{moved:,} keyed records ({moved / max(1, records - nulls):.2%}) are not in the partition murmur2 gives "
            "their key: written with a custom partitioner or an explicit partition"
        )
    out.append("")
    what = "the same" if n == t.partitions else "a what-if"
    out.append(f"What Kafka's partitioner does with these keys under {n} partitions ({what} count):")
    return "\n".join(out) + "\n"
