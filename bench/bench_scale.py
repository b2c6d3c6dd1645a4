"""Scale (issue 14): the CLI on generated clusters of 10k, 100k and 1M partitions (RF 3, one broker per 500
partitions, 10 racks, about 50 partitions per topic, sizes), stored as topology YAML (`bench/gen_cluster.py`).

Every figure runs `kafka-planner` as users do (a fresh process, output to /dev/null) and reports wall time, CPU time
(user + system: what still holds on a machine shared with other jobs) and peak memory (the child's max RSS).
Yardstick, measured in the same run: `json.load` of the same assignment as Kafka's reassignment JSON (the cost of
merely reading the data). Each command at each size, then the growth per 10x step, so a
super-linear step shows (a linear one grows about 10x). `BENCH_SCALE_SIZES=10000,100000` limits the sizes,
`BENCH_SCALE_ONLY="reassign rebalance,reassign decommission"` the figures (those whose name starts with one of
them: load, brokers, failures, reassign rebalance, reassign decommission, create-topic),
`BENCH_SCALE_TIMEOUT=600` the seconds after which a command is stopped (300). Each figure shows the machine's load
average when it ended (the machine may be shared).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from bench.gen_cluster import RACKS, ensure, shape

SIZES = tuple(int(s) for s in os.environ.get("BENCH_SCALE_SIZES", "10000,100000,1000000").split(","))
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
ONLY = tuple(w for w in os.environ.get("BENCH_SCALE_ONLY", "").split(",") if w)
TIMEOUT = float(os.environ.get("BENCH_SCALE_TIMEOUT", "300"))
# At 1M (2,000 brokers): add 100 brokers, decommission 10; the smaller clusters in proportion.
ADDED_PER_BROKER = 1 / 20
DECOMMISSIONED_PER_BROKER = 1 / 200


def _run(args: list[str], stdout=subprocess.DEVNULL) -> tuple[float, float, float, str]:
    """(seconds, peak MiB, CPU seconds, stdout text or "") of `kafka-planner ARGS`; raises when it fails."""
    script = os.path.join(os.path.dirname(sys.executable), "kafka-planner")
    started = time.perf_counter()
    proc = subprocess.Popen([script, *args], stdout=stdout, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"kafka-planner {' '.join(args)} failed: {err.strip()[-300:]}")
    peak, cpu = _USAGE.get(proc.pid, (float("nan"), float("nan")))
    return seconds, peak, cpu, out or ""


_USAGE: dict[int, tuple[float, float]] = {}  # child pid -> (max RSS in MiB, user + system CPU seconds)


def _keep_rusage() -> None:
    """subprocess.Popen reaps its child with waitpid; reap it with wait4 instead to keep its max RSS."""

    def _try_wait(self, wait_flags):
        pid, status, usage = os.wait4(self.pid, wait_flags)
        if pid == self.pid:
            _USAGE[pid] = (usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime)
        return pid, status

    subprocess.Popen._try_wait = _try_wait  # type: ignore[attr-defined]


def _with_new_brokers(path: str, count: int) -> str:
    """The topology at `path` with `count` empty brokers added (ids after the last, racks continuing)."""
    out = path.replace(".yaml", f"-plus{count}.yaml")
    if os.path.exists(out):
        return out
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    head, _, topics = text.partition("\ntopics:\n")
    last = max(int(row.split("id: ")[1].split(",")[0]) for row in head.splitlines() if row.startswith("  - {id: "))
    added = "".join(f"\n  - {{id: {b}, rack: rack-{(b - 1) % RACKS}}}" for b in range(last + 1, last + count + 1))
    with open(out + ".tmp", "w", encoding="utf-8") as fh:
        fh.write(head + added + "\ntopics:\n" + topics)
    os.replace(out + ".tmp", out)
    return out


def _brokers_only(path: str) -> str:
    """The topology at `path` with its brokers and no topic (where create-topic places on the generated brokers)."""
    out = path.replace(".yaml", "-brokers.yaml")
    if not os.path.exists(out):
        with open(path, encoding="utf-8") as fh:
            head = fh.read().partition("\ntopics:\n")[0]
        with open(out + ".tmp", "w", encoding="utf-8") as fh:
            fh.write(head + "\ntopics: []\n")
        os.replace(out + ".tmp", out)
    return out


_JSON_LOAD = (
    "import json, sys, time\n"
    "started, cpu = time.perf_counter(), time.process_time()\n"
    "with open(sys.argv[1], encoding='utf-8') as fh:\n"
    "    json.load(fh)\n"
    "print(time.perf_counter() - started, time.process_time() - cpu)\n"
)


def _json_load(path: str) -> tuple[float, float]:
    """(wall, CPU) seconds of `json.load` of the file (the CPU figure holds on a machine shared with other jobs).

    In a child process: the parsed JSON would otherwise stay in this process, and every child forked from it would
    start with (and report as its peak memory) this process's size."""
    out = subprocess.run([sys.executable, "-c", _JSON_LOAD, path], capture_output=True, text=True, check=True).stdout
    wall, cpu = (float(x) for x in out.split())
    return wall, cpu


def _figure(
    name: str,
    size: int,
    args: list[str],
    yardstick: tuple[float, float] | None,
    target: str,
    curve: dict,
    curve_name: str = "",
    keep_output: bool = False,
) -> str:
    curve_name = curve_name or name
    if ONLY and not name.startswith(ONLY):
        return ""
    if float("inf") in curve.get(curve_name, {}).values():
        print(f"   {name} @ {size:,}: skipped (over {TIMEOUT:g} s at a smaller size)", flush=True)
        return ""
    try:
        seconds, peak, cpu, out = _run(args, stdout=subprocess.PIPE if keep_output else subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        print(f"   {name} @ {size:,}: over {TIMEOUT:g} s (stopped)", flush=True)
        curve.setdefault(curve_name, {})[size] = float("inf")
        return ""
    curve.setdefault(curve_name, {})[size] = seconds
    text = f"   {name} @ {size:,} partitions: {seconds:,.2f} s ({cpu:,.2f} s CPU), peak {peak:,.0f} MiB"
    if yardstick:
        wall, y_cpu = yardstick
        text += (
            f"  | yardstick json.load of the reassignment JSON: {wall:,.2f} s ({y_cpu:,.2f} s CPU)"
            f"  | ratio {seconds / wall:.2f}x ({cpu / y_cpu:.2f}x CPU)"
        )
    print(f"{text}  | target {target or '-'}  | load {os.getloadavg()[0]:.1f}", flush=True)
    return out


def _plan_summary(out: str) -> None:
    keep = ("Replica moves:", "Rack-unsafe", "spread")
    for row in out.splitlines():
        if row.startswith(keep):
            print(f"      {' '.join(row.split())}", flush=True)


def _curve(curve: dict) -> None:
    print("   cost curve (seconds; growth per 10x partitions, linear = ~10x):", flush=True)
    for name, by_size in curve.items():
        cells = []
        previous = None
        for size in sorted(by_size):
            s = by_size[size]
            growth = f" (x{s / previous:.1f})" if previous and s != float("inf") else ""
            cells.append(f"{size:,}: {s:.2f}{growth}")
            previous = s
        print(f"     {name}: " + ", ".join(cells), flush=True)


def run() -> None:
    _keep_rusage()
    curve: dict = {}
    for size in SIZES:
        started = time.perf_counter()
        topology, reassignment = ensure(size, DATA)
        print(f"   -- {size:,} partitions: {topology} (ready in {time.perf_counter() - started:.1f} s)", flush=True)
        yardstick = _json_load(reassignment)
        curve.setdefault("json.load (yardstick)", {})[size] = yardstick[0]
        _figure("load + describe", size, ["describe", topology], yardstick, "<= 10x json.load, < 30 s, < 2 GiB", curve)
        _figure("brokers", size, ["brokers", topology], None, "< 60 s", curve)
        _figure("failures K=1", size, ["failures", topology, "--max-failed-brokers", "1"], None, "< 60 s", curve)
        n_brokers = shape(size)[0]
        added = round(n_brokers * ADDED_PER_BROKER)
        grown = _with_new_brokers(topology, added)
        _plan_summary(
            _figure(
                f"reassign rebalance +{added} brokers",
                size,
                ["reassign", "rebalance", grown],
                None,
                "< 60 s",
                curve,
                "reassign rebalance +5% brokers",
                keep_output=True,
            )
        )
        gone = max(1, round(n_brokers * DECOMMISSIONED_PER_BROKER))
        brokers = ",".join(str(b) for b in range(1, gone + 1))
        _plan_summary(
            _figure(
                f"reassign decommission {gone} brokers",
                size,
                ["reassign", "decommission", topology, "--brokers", brokers],
                None,
                "< 60 s",
                curve,
                "reassign decommission 0.5% brokers",
                keep_output=True,
            )
        )
        bare = _brokers_only(topology)
        for where, topo in (("six brokers", "topologies/six-brokers.yaml"), ("generated brokers", bare)):
            create = ["create-topic", topo, "--topic", "new", "--partitions", str(size), "--replication-factor", "3"]
            target = "< 2 s at 1M" if topo != bare else ""
            for how, extra in (("--seed 1", ["--seed", "1"]), ("balanced start", [])):
                name = f"create-topic {how}, {where}"
                shown = name if topo != bare else f"{name} ({n_brokers:,}, no topics)"
                _figure(shown, size, create + extra, yardstick, target, curve, name)
    _curve(curve)
