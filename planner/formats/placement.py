"""Before/after statistics of a placement (create-topic, add-partitions): per-broker replicas and preferred leaders."""

from __future__ import annotations

from planner.broker_load import broker_loads, spread
from planner.formats.tables import bar
from planner.model import Cluster


def render_load_change(before: Cluster, after: Cluster) -> str:
    from tabulate import tabulate

    b_loads, a_loads = broker_loads(before), broker_loads(after)
    peak = max((l.replicas for l in a_loads.values()), default=0)
    rows = []
    for b in after.brokers:
        x, y = b_loads[b.id], a_loads[b.id]
        rows.append(
            [
                b.id,
                b.rack or "-",
                b.label,
                f"{x.replicas} → {y.replicas}",
                bar(y.replicas, peak, 12),
                f"{x.preferred_leaders} → {y.preferred_leaders}",
            ]
        )
    live = [b.id for b in after.brokers if b.online]
    rows.append(
        [
            "spread",
            "",
            "(online)",
            f"{spread(b_loads[i].replicas for i in live)} → {spread(a_loads[i].replicas for i in live)}",
            "",
            f"{spread(b_loads[i].preferred_leaders for i in live)} → "
            f"{spread(a_loads[i].preferred_leaders for i in live)}",
        ]
    )
    return (
        tabulate(
            rows,
            headers=["broker", "rack", "state", "replicas", "", "preferred leaders"],
            tablefmt="simple",
            disable_numparse=True,
        )
        + "\n"
    )
