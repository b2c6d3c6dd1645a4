"""Before/after statistics of a placement (create-topic, add-partitions): per-broker replicas and preferred leaders."""

from __future__ import annotations

from planner.broker_load import broker_loads, spread
from planner.formats.tables import bar
from planner.model import Cluster

Counts = dict[int, tuple[int, int]]  # broker id -> (replicas, preferred leaders)


def render_load_change(before: Cluster, after: Cluster) -> str:
    b_loads, a_loads = broker_loads(before), broker_loads(after)
    return _render(
        after,
        {b: (x.replicas, x.preferred_leaders) for b, x in b_loads.items()},
        {b: (y.replicas, y.preferred_leaders) for b, y in a_loads.items()},
    )


def render_load_change_added(before: Cluster, matrix) -> str:
    """`render_load_change(before, after)` where `after` adds a new topic whose replicas are the rows of `matrix`
    (partitions × RF broker ids), counted at once instead of partition by partition."""
    import numpy as np

    ids = np.asarray(before.broker_ids, dtype=np.int64)
    replicas = np.bincount(matrix.ravel(), minlength=int(ids.max()) + 1)[ids].tolist()
    leaders = np.bincount(matrix[:, 0], minlength=int(ids.max()) + 1)[ids].tolist()
    b_loads = {b: (x.replicas, x.preferred_leaders) for b, x in broker_loads(before).items()}
    a_loads = {b: (b_loads[b][0] + r, b_loads[b][1] + p) for b, r, p in zip(before.broker_ids, replicas, leaders)}
    return _render(before, b_loads, a_loads)


def render_replica_assignment(matrix) -> str:
    """`--format replica-assignment` (kafka-topics --replica-assignment's `a:b:c,d:e:f`) of a replica matrix."""
    from planner.formats.columns import render_rows

    pieces: list = []
    for j in range(matrix.shape[1]):
        pieces += [matrix[:, j], ":" if j < matrix.shape[1] - 1 else ","]
    return render_rows(pieces, len(matrix))[:-1] + "\n"


def _render(after: Cluster, b_loads: Counts, a_loads: Counts) -> str:
    from tabulate import tabulate

    peak = max((l[0] for l in a_loads.values()), default=0)
    rows = []
    for b in after.brokers:
        x, y = b_loads[b.id], a_loads[b.id]
        rows.append([b.id, b.rack or "-", b.label, f"{x[0]} → {y[0]}", bar(y[0], peak, 12), f"{x[1]} → {y[1]}"])
    live = [b.id for b in after.brokers if b.online]
    rows.append(
        [
            "spread",
            "",
            "(online)",
            f"{spread(b_loads[i][0] for i in live)} → {spread(a_loads[i][0] for i in live)}",
            "",
            f"{spread(b_loads[i][1] for i in live)} → {spread(a_loads[i][1] for i in live)}",
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
