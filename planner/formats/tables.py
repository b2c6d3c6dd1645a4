"""Terminal tables (tabulate) and the small unicode bars used beside per-broker figures."""

from __future__ import annotations

import json

from planner.broker_load import BrokerLoad, broker_loads, spread
from planner.model import Broker, Cluster, human_bytes

_EIGHTHS = " ▏▎▍▌▋▊▉█"


def bar(value: float, maximum: float, width: int = 20) -> str:
    """A left-aligned bar of `width` cells, `value / maximum` full, in eighths of a cell."""
    if maximum <= 0 or value <= 0:
        return ""
    eighths = round(min(value / maximum, 1.0) * width * 8)
    full, rest = divmod(eighths, 8)
    return "█" * full + (_EIGHTHS[rest] if rest else "")


def render_brokers_table(cluster: Cluster, loads: dict[int, BrokerLoad]) -> str:
    from tabulate import tabulate

    has_bytes = any(p.size is not None for p in cluster.partitions())
    peak = max((l.replicas for l in loads.values()), default=0)
    headers = ["broker", "rack", "state", "replicas", "", "preferred", "leaders", "imbalance", "topics", "max/topic"]
    if has_bytes:
        headers.append("bytes")
    has_space = any(b.usable_bytes is not None or b.total_bytes is not None for b in cluster.brokers)
    if has_space:
        headers.append("usable / total")
    rows = []
    for b in cluster.brokers:
        l = loads[b.id]
        row = [
            b.id,
            b.rack or "-",
            b.label,
            l.replicas,
            bar(l.replicas, peak, 12),
            l.preferred_leaders,
            l.leaders,
            _imbalance(l, b.online),
            l.topics,
            l.max_per_topic,
        ]
        if has_bytes:
            row.append(human_bytes(l.bytes))
        if has_space:
            row.append(_space(b))
        rows.append(row)
    live = [loads[b.id] for b in cluster.brokers if b.online]
    total = [
        "total",
        "",
        f"{len(live)}/{len(cluster.brokers)} online",
        sum(l.replicas for l in loads.values()),
        "",
        sum(l.preferred_leaders for l in loads.values()),
        sum(l.leaders for l in loads.values()),
        "",
        "",
        "",
    ]
    spreads = [
        "spread",
        "",
        "(max-min, online)",
        spread(l.replicas for l in live),
        "",
        spread(l.preferred_leaders for l in live),
        spread(l.leaders for l in live),
        "",
        "",
        "",
    ]
    if has_bytes:
        total.append(human_bytes(sum(l.bytes for l in loads.values())))
        spreads.append(human_bytes(spread(l.bytes for l in live)))
    if has_space:
        total.append("")
        spreads.append("")
    text = tabulate(rows + [total, spreads], headers=headers, tablefmt="simple") + "\n"
    if any(_over(loads[b.id], b.online) for b in cluster.brokers):
        text += (
            "* above leader.imbalance.per.broker.percentage=10: with auto.leader.rebalance.enable, a ZooKeeper-mode "
            "controller runs a preferred leader election for this broker's partitions\n"
        )
    return text


IMBALANCE_LIMIT = 0.10  # leader.imbalance.per.broker.percentage default (strictly greater triggers)


def _over(load: BrokerLoad, online: bool) -> bool:
    """Would the controller move leadership back? Only to a live preferred replica."""
    return online and load.imbalance > IMBALANCE_LIMIT


def _imbalance(load: BrokerLoad, online: bool) -> str:
    if not load.preferred_leaders:
        return "-"
    return f"{load.imbalance:.0%}" + (" *" if _over(load, online) else "")


def _space(b: Broker) -> str:
    """Its log dirs' usable bytes (for new replicas) and total size, as DescribeLogDirs reports them."""
    usable = human_bytes(b.usable_bytes) if b.usable_bytes is not None else "-"
    return f"{usable} / {human_bytes(b.total_bytes) if b.total_bytes is not None else '-'}"


def render_brokers_json(cluster: Cluster, loads: dict[int, BrokerLoad]) -> str:
    live = [loads[b.id] for b in cluster.brokers if b.online]
    data = {
        "brokers": [
            {
                "id": b.id,
                "rack": b.rack,
                "state": b.state,
                "cordoned": b.cordoned,
                "usable_bytes": b.usable_bytes,
                "total_bytes": b.total_bytes,
                "replicas": loads[b.id].replicas,
                "preferred_leaders": loads[b.id].preferred_leaders,
                "leaders": loads[b.id].leaders,
                "leader_imbalance": round(loads[b.id].imbalance, 4),
                "bytes": loads[b.id].bytes,
                "replicas_per_topic": dict(sorted(loads[b.id].per_topic.items())),
            }
            for b in cluster.brokers
        ],
        "spread": {
            "replicas": spread(l.replicas for l in live),
            "preferred_leaders": spread(l.preferred_leaders for l in live),
            "leaders": spread(l.leaders for l in live),
            "bytes": spread(l.bytes for l in live),
        },
    }
    return json.dumps(data, indent=2) + "\n"


def load_change_lines(before: Cluster, after: Cluster, moved: int) -> str:
    """`zk submit`'s statistics on stderr: per online broker, replicas and preferred leaders before -> after, and
    their spreads."""
    lb, la = broker_loads(before), broker_loads(after)
    online = [b.id for b in before.brokers if b.online]
    rows = [f"{moved} partition(s) change replicas; per online broker, before -> after:"]
    for b in online:
        x, y = lb[b], la[b]
        rows.append(
            f"  broker {b}: replicas {x.replicas} -> {y.replicas}, preferred leaders "
            f"{x.preferred_leaders} -> {y.preferred_leaders}"
        )
    rows.append(
        f"  replica spread (max-min) {spread(lb[b].replicas for b in online)} -> "
        f"{spread(la[b].replicas for b in online)}; preferred-leader spread "
        f"{spread(lb[b].preferred_leaders for b in online)} -> {spread(la[b].preferred_leaders for b in online)}"
    )
    return "\n".join(rows)
