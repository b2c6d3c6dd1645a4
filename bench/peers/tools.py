"""Run each planner dry-run on a scenario loaded into ZooKeeper and read back the assignment it proposes.

Yelp's kafka-cluster-manager (kafka-utils) and LinkedIn's kafka-assigner (kafka-tools) run from their own venvs
(`make peers`); ours is `kafka-planner reassign rebalance|decommission|set-replication-factor` of this checkout.
None is ever told to apply: Yelp without --apply, kafka-assigner without -e (its --tools-path points at a stub that
refuses to run), ours without submit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from bench.peers.cluster_io import SIZE_METRIC, SizeExporter
from bench.peers.scenarios import Scenario
from planner.model import TopicPartition

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / ".venv-peers"
YELP_BIN = PEERS / "yelp" / "bin" / "kafka-cluster-manager"
LINKEDIN_PYTHON = PEERS / "linkedin" / "bin" / "python"
PLUGINS = Path(__file__).resolve().parent / "yelp_plugins"
UNCAPPED = "1000000"  # Yelp's --max-partition-movements (default 1) and --max-leader-changes (default 5)
LINKEDIN_TYPES = ("count", "size", "leader", "rackaware")  # balance modules in order (rackaware must be last)
Assignment = dict[TopicPartition, tuple[int, ...]]


@dataclass(frozen=True)
class Context:
    hosts: str  # 127.0.0.1:port
    chroot: str
    workdir: Path
    log_dirs: Path  # kafka-log-dirs.sh --describe output with every replica's size


@dataclass(frozen=True)
class Proposal:
    tool: str
    changes: Assignment  # the partitions the plan reassigns, with their new replica lists
    seconds: float
    takes_sizes: str  # how the tool got the partition sizes, or why it did not
    spread_notes: tuple[str, ...] = ()  # the notes of its summary on topics left wider than 1 (ours only)
    bounds: tuple[int | None, int | None] = (None, None)  # the lower bounds its summary prints: moves, bytes (ours)


class PeerError(RuntimeError):
    pass


def _run(cmd: list[str], env: dict | None = None, timeout: float = 1800) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=timeout)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise PeerError(f"{Path(cmd[0]).name} exited {proc.returncode}: " + " | ".join(tail))
    return proc.stdout


def _kafka_json(text: str) -> Assignment:
    """A reassignment JSON ({"version":1,"partitions":[{"topic","partition","replicas"}...]})."""
    return {TopicPartition(p["topic"], p["partition"]): tuple(p["replicas"]) for p in json.loads(text)["partitions"]}


# -- ours ---------------------------------------------------------------------------------------------------------
def ours(scenario: Scenario, ctx: Context) -> Proposal:
    url = f"zk://{ctx.hosts}{ctx.chroot}"
    args = ["reassign", scenario.action, url, "--sizes", str(ctx.log_dirs), "--format", "json"]
    if scenario.decommission:
        args += ["--brokers", ",".join(map(str, scenario.decommission))]
    if scenario.replication:
        args += ["--topic", scenario.replication[0], "--replication-factor", str(scenario.replication[1])]
    started = time.perf_counter()
    summary = json.loads(_run([sys.executable, "-m", "planner", *args]))
    changes = {TopicPartition(p["topic"], p["partition"]): tuple(p["proposed"]) for p in summary["partitions"]}
    notes = tuple(n["text"] for n in summary["notes"] if n.get("goal") == "topic-spread")
    bounds = (summary["lower_bound"], summary["bytes_lower_bound"])
    return Proposal("kafka-planner", changes, time.perf_counter() - started, "--sizes log-dirs", notes, bounds)


# -- Yelp's kafka-cluster-manager ---------------------------------------------------------------------------------
def yelp_command(scenario: Scenario, ctx: Context, plan: Path, balancer: str = "--partition-count-balancer") -> list:
    cfg_dir = ctx.workdir / "kafka_discovery"
    cfg_dir.mkdir(exist_ok=True)
    (cfg_dir / "bench.yaml").write_text(
        "clusters:\n  bench:\n    broker_list: ['127.0.0.1:9092']\n"
        f"    zookeeper: '{ctx.hosts}{ctx.chroot}'\nlocal_config:\n  cluster: bench\n"
    )
    cmd = [
        str(YELP_BIN),
        "--cluster-type",
        "bench",
        "--cluster-name",
        "bench",
        "--discovery-base-path",
        str(cfg_dir),
        "--group-parser",
        f"{PLUGINS}:yelp_racks",
        "--partition-measurer",
        f"{PLUGINS}:yelp_sizes",
        "--measurer-args",
        f"--log-dirs {ctx.log_dirs}",
        balancer,
        "--write-to-file",
        str(plan),
    ]
    caps = ["--max-partition-movements", UNCAPPED, "--max-leader-changes", UNCAPPED]
    if scenario.decommission:
        return cmd + ["decommission", *map(str, scenario.decommission), *caps]
    if scenario.replication:
        return cmd + ["set_replication_factor", "--topic", scenario.replication[0], str(scenario.replication[1])]
    return cmd + ["rebalance", "--replication-groups", "--brokers", "--leaders", *caps]


def yelp(scenario: Scenario, ctx: Context) -> Proposal:
    plan = ctx.workdir / "yelp-plan.json"
    plan.unlink(missing_ok=True)
    started = time.perf_counter()
    _run(yelp_command(scenario, ctx, plan))
    changes = _kafka_json(plan.read_text()) if plan.exists() else {}  # no file: "already balanced"
    return Proposal("yelp (PartitionCountBalancer)", changes, time.perf_counter() - started, "measurer plug-in, unused")


# -- LinkedIn's kafka-assigner ------------------------------------------------------------------------------------
# Run through the tool's own main() with two adjustments, both outside its planning code:
# - its balance modules shuffle with the unseeded `random` module (rackaware's broker deque): seeded, so that a run is
#   repeatable;
# - kafka-tools 0.1.9's prometheus sizer matches its str regex against the bytes urlopen returns on Python 3
#   (TypeError): the lines it fetched are decoded before its own parser reads them.
_ASSIGNER = """
import random, sys
from kafka.tools.assigner.sizers.prometheus import SizerPrometheus
fetch = SizerPrometheus._get_prometheus_metrics
SizerPrometheus._get_prometheus_metrics = lambda self, *a: [line.decode() for line in fetch(self, *a)]
random.seed(0)
sys.argv[0] = "kafka-assigner"
from kafka.tools.assigner.__main__ import main
sys.exit(main())
"""


def _java_home() -> str:
    java = shutil.which("java")
    if java is None:
        raise PeerError("kafka-assigner needs JAVA_HOME: no java on PATH (make zookeeper installs one)")
    return str(Path(java).resolve().parents[1])


def _stub_tools(ctx: Context) -> Path:
    """kafka-assigner insists on finding kafka-reassign-partitions.sh even for a dry run; this one refuses to run."""
    tools = ctx.workdir / "kafka-bin"
    tools.mkdir(exist_ok=True)
    script = tools / "kafka-reassign-partitions.sh"
    script.write_text("#!/bin/sh\necho 'bench: dry run only, never executes' >&2\nexit 1\n")
    script.chmod(0o755)
    return tools


def _linkedin_base(ctx: Context) -> list:
    return [
        str(LINKEDIN_PYTHON),
        "-c",
        _ASSIGNER,
        "-z",
        f"{ctx.hosts}{ctx.chroot}",
        "--tools-path",
        str(_stub_tools(ctx)),
        "--output-json",
        "--skip-ple",
    ]


def linkedin_command(scenario: Scenario, ctx: Context, metrics_port: int) -> list:
    cmd = _linkedin_base(ctx)
    if scenario.decommission:
        return cmd + ["remove", "-b", *map(str, scenario.decommission)]
    if scenario.replication:
        return cmd + ["set-replication-factor", "-t", scenario.replication[0], "-r", str(scenario.replication[1])]
    return cmd + [
        "--sizer",
        "prometheus",
        "-p",
        f"size_metric_name={SIZE_METRIC}",
        "-p",
        f"metrics_port={metrics_port}",
        "balance",
        "-t",
        *LINKEDIN_TYPES,
    ]


def linkedin(scenario: Scenario, ctx: Context) -> Proposal:
    started = time.perf_counter()
    with SizeExporter(scenario.sizes) as exporter:
        out = _run(linkedin_command(scenario, ctx, exporter.port), env={"JAVA_HOME": _java_home()})
    after = json.loads(out[out.index("{") :])["after"]["topics"]
    changes = {
        TopicPartition(t, int(p)): tuple(v["replicas"])
        for t, body in after.items()
        for p, v in body["partitions"].items()
    }
    action = linkedin_command(scenario, ctx, 0)[len(_linkedin_base(ctx)) :]
    sized = action[0] == "--sizer"
    how = "prometheus sizer" if sized else f"not used by {action[0]}"
    return Proposal(
        f"linkedin ({' '.join(action[action.index('-t') + 1 :]) if sized else action[0]})",
        changes,
        time.perf_counter() - started,
        how,
    )


RUNNERS: dict[str, Callable] = {"ours": ours, "yelp": yelp, "linkedin": linkedin}
