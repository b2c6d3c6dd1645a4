"""What test modules share (tests/conftest.py offers it as fixtures; support modules import it): the CLI run as users
run it or in this process, clusters built in code, and the six-broker topology the reassignment tests plan on."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Collection, Mapping, Sequence

from planner.model import Broker, Cluster, make_topic

ROOT = Path(__file__).resolve().parents[1]

# Six brokers on three racks; `foo` (min ISR 2, sizes) and `bar`: `kafka-planner reassign ...`, `failures` and the
# reliability tests plan on it.
SIX_BROKERS = """\
cluster: t
brokers:
  - {id: 1, rack: a}
  - {id: 2, rack: b}
  - {id: 3, rack: c}
  - {id: 4, rack: a}
  - {id: 5, rack: b}
  - {id: 6, rack: c}
topics:
  - name: foo
    configs: {min.insync.replicas: "2"}
    assignment: {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2], 3: [1, 2, 3]}
    sizes: {0: 1000, 1: 2000, 2: 3000, 3: 4000}
  - name: bar
    assignment: {0: [1, 2], 1: [2, 3]}
"""


def run_planner(
    *args: str,
    cwd: str | Path | None = ROOT,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> tuple[int, str, str]:
    """`kafka-planner ARGS` as users run it, in a fresh interpreter (`python -m planner`), from the repository root
    unless `cwd` says otherwise; `env` replaces the environment when given: (exit code, stdout, stderr)."""
    proc = subprocess.run(
        [sys.executable, "-m", "planner", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        input=stdin,
        env=None if env is None else dict(env),
        timeout=timeout,
    )
    return proc.returncode, proc.stdout, proc.stderr


def run_planner_here(*args: str, env: Mapping[str, str] | None = None) -> tuple[int, str, str]:
    """The CLI in this process (no interpreter start-up), stdout and stderr captured; `env` replaces the environment
    for the call when given: (exit code, stdout, stderr)."""
    from planner.cli import run

    out, err = io.StringIO(), io.StringIO()
    saved = dict(os.environ)
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                run(list(args))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        if env is not None:
            os.environ.clear()
            os.environ.update(saved)
    return code, out.getvalue(), err.getvalue()


def build_cluster(
    n: int,
    racks: int | Sequence[str | None] = 0,
    topics: Mapping[str, Mapping[int, Sequence[int]]] | None = None,
    states: Mapping[int, str] | None = None,
    offline: Collection[int] = (),
    cordoned: Collection[int] = (),
    first_id: int = 0,
    mode: str = "kraft",
) -> Cluster:
    """Brokers `first_id`..`first_id + n - 1` and topics {name: {partition: replicas}} (in name order). The k-th broker
    is on rack `r{k % racks}` for a number of racks, or `racks[k]` for a list of names; `states` ({id: state}) or
    `offline` (ids) set broker states, `cordoned` the brokers whose log dirs are all cordoned."""
    all_states = {**{i: "offline" for i in offline}, **(states or {})}

    def rack(k: int) -> str | None:
        if isinstance(racks, int):
            return f"r{k % racks}" if racks else None
        return racks[k]

    brokers = tuple(
        Broker(i, rack=rack(k), state=all_states.get(i, "online"), cordoned=i in cordoned)
        for k, i in enumerate(range(first_id, first_id + n))
    )
    return Cluster(
        brokers=brokers, topics=tuple(make_topic(name, a) for name, a in sorted((topics or {}).items())), mode=mode
    )


def beside_giants_over_mean(cluster, targets, tolerance: float = 0.10) -> float:
    """The most bytes a target broker holds beside its replicas larger than the byte limit ((1 + tolerance) × the
    mean: `byte_balance.giants`, which stay where they are), over the mean: the figure the byte goal holds within
    1 + tolerance. Known sizes only."""
    held = dict.fromkeys(targets, 0)
    for p in cluster.partitions():
        for b in p.replicas:
            if b in held:
                held[b] += p.size or 0
    mean = sum(held.values()) / len(held)
    if not mean:
        return 1.0
    beside = dict(held)
    for p in cluster.partitions():
        if (p.size or 0) > (1 + tolerance) * mean:
            for b in p.replicas:
                if b in beside:
                    beside[b] -= p.size
    return max(beside.values()) / mean
