"""kafka-planner's plans beside Yelp's kafka-cluster-manager and LinkedIn's kafka-assigner, on the same seeded
clusters loaded into a real ZooKeeper, scored by the same code (bench/peers/). `make peers` installs the peers.

Target: on every scenario no peer plan is at least as good on every figure and better on one, and no topic with at
least as many partitions as brokers spreads by more than 1 in ours.
"""

from __future__ import annotations

from bench.peers.harness import run as run_peers
from bench.peers.scenarios import SCENARIOS
from bench.peers.tools import LINKEDIN_PYTHON, YELP_BIN

# HiGHS's time limits in the certifier (bench/peers/optimum.py): per solve of the moves stage, of the byte stage
CERTIFY_SECONDS = (60.0, 60.0)


def run() -> None:
    missing = [str(p) for p in (YELP_BIN, LINKEDIN_PYTHON) if not p.exists()]
    if missing:
        raise SystemExit(f"peers not installed ({', '.join(missing)} missing): run `make peers`")
    print(
        "   figures: lower is better; spreads are max - min over the target brokers; bytes moved = replicas copied "
        "x their size",
        flush=True,
    )
    run_peers((build() for build in SCENARIOS.values()), certify_seconds=CERTIFY_SECONDS)
