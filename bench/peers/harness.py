"""Load each scenario into a real ZooKeeper (a chroot per scenario), run every planner dry-run on it, score each
plan with the same code, print a table per scenario and the verdict."""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from bench.peers import tools
from bench.peers.cluster_io import load, log_dirs_json
from bench.peers.scenarios import Scenario
from bench.peers.score import Score, TopicTargets, dominates, score, topic_targets, validate
from planner.model import TopicPartition

ROOT = Path(__file__).resolve().parents[2]
HEADERS = [
    "tool",
    "moves",
    "moved",
    "replica spread",
    "leader spread",
    "topic spread",
    "topics > 1",
    "topic leader spread",
    "internal leader spread",
    "bytes max/mean",
    "rack-unsafe",
    "s",
    "sizes",
]


def zk_server():
    """The ZooKeeper server the tests start (Debian's zookeeper.jar on a free loopback port), not yet started."""
    for folder in ("tests/adapters/zk", "tests/zk"):
        if (ROOT / folder / "zk_support.py").exists():
            sys.path.insert(0, str(ROOT / folder))
            break
    from zk_support import ZkServer

    return ZkServer()


@dataclass(frozen=True)
class Row:
    tool: str
    score: Score | None
    seconds: float
    sizes: str
    problem: str = ""  # why there is no score: the tool failed, or its plan is invalid
    changes: Mapping[TopicPartition, tuple[int, ...]] = field(default_factory=dict)  # the plan as proposed
    spread_notes: tuple[str, ...] = ()  # what the plan's summary says of topics left wider than 1
    topics: TopicTargets | None = None  # the per-topic target (ours only)
    bounds: tuple[int | None, int | None] = (None, None)  # the lower bounds its summary prints (ours only)


def run_scenario(scenario: Scenario, hosts: str, workdir: Path, names: Iterable[str] = tuple(tools.RUNNERS)) -> list:
    chroot = f"/bench-{scenario.name}"
    load(hosts, chroot, scenario.cluster)
    log_dirs = workdir / f"{scenario.name}-log-dirs.json"
    log_dirs.write_text(log_dirs_json(scenario.cluster, scenario.sizes))
    ctx = tools.Context(hosts, chroot, workdir, log_dirs)
    rows = [Row("(before)", score(scenario.cluster, scenario.cluster, scenario.sizes, scenario.targets), 0.0, "")]
    for name in names:
        try:
            proposal = tools.RUNNERS[name](scenario, ctx)
        except tools.PeerError as exc:
            rows.append(Row(name, None, 0.0, "", f"failed: {exc}"))
            continue
        problems = validate(scenario.cluster, proposal.changes, scenario.targets, scenario.expected_rf)
        after = scenario.cluster.with_assignment(proposal.changes)
        rows.append(
            Row(
                proposal.tool,
                None if problems else score(scenario.cluster, after, scenario.sizes, scenario.targets),
                proposal.seconds,
                proposal.takes_sizes,
                f"invalid plan: {len(problems)} problems, e.g. {problems[0]}" if problems else "",
                proposal.changes,
                proposal.spread_notes,
                None if problems or name != "ours" else _topic_targets(scenario, after),
                proposal.bounds,
            )
        )
    return rows


def _topic_targets(scenario: Scenario, after) -> TopicTargets:
    changed = scenario.replication[0] if scenario.replication else None
    return topic_targets(scenario.cluster, after, scenario.targets, changed)


def _gib(n: int) -> str:
    return f"{n / (1 << 30):,.1f} GiB"


def table(rows: list[Row]) -> str:
    from tabulate import tabulate

    body = []
    for r in rows:
        if r.score is None:
            body.append([r.tool, r.problem] + [""] * (len(HEADERS) - 2))
            continue
        f = r.score.figures()
        body.append(
            [
                r.tool,
                f[0],
                _gib(f[1]),
                *f[2:8],
                f"{f[8]:.3f}",
                f[9],
                f"{r.seconds:.1f}" if r.tool != "(before)" else "",
                r.sizes,
            ]
        )
    return tabulate(body, HEADERS, tablefmt="github", disable_numparse=True)


def verdict(rows: list[Row]) -> tuple[bool, bool, str]:
    """(some peer plan dominates ours, ours misses the per-topic target, text)."""
    ours = next((r for r in rows if r.tool == "kafka-planner"), None)
    if ours is None or ours.score is None or ours.topics is None:
        return False, False, "verdict: no kafka-planner plan to compare"
    better = [
        r.tool
        for r in rows
        if r.tool not in ("(before)", "kafka-planner") and r.score is not None and dominates(r.score, ours.score)
    ]
    t = ours.topics
    notes = "".join(f"\n   the summary's note: {n}" for n in ours.spread_notes)
    text = (
        "verdict: "
        + (f"DOMINATED by {', '.join(better)}" if better else "no peer plan dominates kafka-planner's")
        + "; topics with >= as many partitions as brokers (target: spread <= 1 where racks allow): "
        + topic_words(t)
        + (": met" if t.met else ": MISSED")
        + (notes if t.forced or t.others or not t.met else "")
    )
    return bool(better), not t.met, text


def _range(values: list[int]) -> str:
    return f"{min(values)}" if min(values) == max(values) else f"{min(values)} to {max(values)}"


def topic_words(t: TopicTargets) -> str:
    if t.others is not None:
        held = f"{t.wide}" if t.held else "(fewer partitions than brokers)"
        return (
            f"{t.changed}, the topic changed, {held}; the {t.others[0]} other topics, which a replication-factor "
            f"change leaves where they are (the summary's note), up to {t.others[2]} ({t.others[1]} before)"
        )
    text = f"{t.wide} at most over all brokers ({t.held} topics)"
    if t.forced:
        at = sum(1 for _, spread, bound, _ in t.forced if spread == bound)
        text += (
            f"; {len(t.forced)} topics that racks of different sizes force wider (the summary's rack-forced note): "
            f"{max(inside for *_, inside in t.forced)} at most inside the racks they are balanced in, "
            f"{_range([f[1] for f in t.forced])} over all brokers against lower bounds of "
            f"{_range([f[2] for f in t.forced])} ({at} at their bound)"
        )
    return text


def _span(b, unit) -> str:
    took = f"{b.seconds:.1f} s wall, {b.cpu:.1f} s CPU"
    if b.infeasible:
        return f"no plan meets the goals ({took})"
    if b.high is None:
        return f"at least {unit(b.low)} (no plan found; {took})"
    if b.proven and b.low >= b.high:
        return f"{unit(b.high)} (proven; {took})"
    if b.proven:  # HiGHS's relative gap on the bytes kept
        return f"{unit(b.high)} (proven to a gap of 1e-4 of the bytes kept, at least {unit(b.low)}; {took})"
    return f"{unit(b.low)} to {unit(b.high)} (bracket at the time limit; {took})"


def certificate(scenario: Scenario, rows: list[Row], seconds: tuple[float, float]) -> str:
    """The certifier's line: the fewest moves, then bytes, of any plan that reaches the goal figures ours reached
    (bench/peers/optimum.py), beside ours and the bounds our summary prints."""
    from bench.peers.optimum import at_counts, certify

    ours = next((r for r in rows if r.tool == "kafka-planner" and r.score is not None), None)
    if ours is None:
        return "fewest possible: no kafka-planner plan to certify"
    after = scenario.cluster.with_assignment(ours.changes)
    o = certify(scenario.cluster, after, scenario.sizes, scenario.targets, seconds=seconds[0], byte_seconds=seconds[1])
    text = f"fewest possible (MILP, HiGHS; the goals ours reached): {_span(o.moves, lambda v: f'{v:,} moves')}"
    if o.bytes is not None:
        text += f", then at that many moves {_span(o.bytes, lambda v: f'{v / (1 << 30):,.2f} GiB')}"
        # what exchanges could reach at ours' own counts (the LP of `at_counts`: seconds at 60 brokers)
        c = at_counts(scenario.cluster, after, scenario.sizes, scenario.targets, seconds=seconds[1], integral=False)
        if c.low:
            took = f"{c.seconds:.1f} s wall, {c.cpu:.1f} s CPU"
            text += f"; at ours' count of each topic per broker at least {c.low / (1 << 30):,.2f} GiB (LP; {took})"
    moves_bound, bytes_bound = ours.bounds
    ours_bytes = f"{_gib(ours.score.bytes_moved)}" + (
        f" (bound {_gib(bytes_bound)})" if bytes_bound is not None else ""
    )
    return f"{text}; ours {ours.score.replica_moves:,} moves (bound {moves_bound:,}), {ours_bytes}"


def run(
    scenarios: Iterable[Scenario],
    names: Iterable[str] = tuple(tools.RUNNERS),
    certify_seconds: tuple[float, float] | None = None,
) -> list[tuple]:
    server = zk_server()
    results = []
    with tempfile.TemporaryDirectory(prefix="kp-peers-") as tmp:
        try:
            server.start()
            for scenario in scenarios:
                n_parts = sum(t.partition_count for t in scenario.cluster.topics)
                print(
                    f"   -- {scenario.name}: {scenario.title} ({len(scenario.cluster.brokers)} brokers, "
                    f"{n_parts:,} partitions, {_gib(sum(scenario.sizes.values()))} before replication)",
                    flush=True,
                )
                rows = run_scenario(scenario, server.hosts, Path(tmp), names)
                print("\n".join("   " + line for line in table(rows).splitlines()))
                print("   " + verdict(rows)[2], flush=True)
                if certify_seconds:
                    print("   " + certificate(scenario, rows, certify_seconds), flush=True)
                results.append((scenario, rows))
        finally:
            server.cleanup()
    return results
