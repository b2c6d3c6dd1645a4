"""Placement of 1,000,000 partitions (RF 3) on 1,000 brokers, and the cold start of `kafka-planner describe`.

Yardsticks, measured in the same run: the scalar AdminUtils loops (kafka.place_unaware / place_aware, a line-by-line
port of Kafka's) on the same input, and a bare `python -c pass` for the cold start.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys

from bench.report import line, timer

N_BROKERS = 1_000
N_PARTITIONS = 1_000_000
RF = 3


def _placement() -> None:
    from planner.placement import adminutils as kafka
    from planner.placement import bulk

    ids = list(range(N_BROKERS))
    racks = {b: f"rack-{b % 10}" for b in ids}
    for name, vec, scalar in (
        (
            "rack-unaware",
            lambda: bulk.unaware_matrix(ids, N_PARTITIONS, RF, 17, 29),
            lambda: kafka.place_unaware(ids, N_PARTITIONS, RF, 17, 29),
        ),
        (
            "rack-aware (10 racks)",
            lambda: bulk.aware_matrix(racks, N_PARTITIONS, RF, 17, 29),
            lambda: kafka.place_aware(racks, N_PARTITIONS, RF, 17, 29),
        ),
    ):
        with timer() as t_vec:
            matrix = vec()
        with timer() as t_scalar:
            result = scalar()
        assert result[N_PARTITIONS - 1] == matrix[-1].tolist() and result[0] == matrix[0].tolist()
        line(
            f"place 1M partitions RF 3 on 1,000 brokers, {name}",
            t_vec["s"],
            "s",
            t_scalar["s"],
            "scalar Kafka loop",
            "< 2 s",
            higher_is_better=False,
        )


def _cold_start() -> None:
    env = dict(os.environ)
    probe = (
        "import sys, runpy; sys.argv=['kafka-planner','describe','topologies/producer-0.yaml'];"
        "import planner.cli as c\ntry:\n    c.main()\nexcept SystemExit:\n    pass\n"
        "heavy=[m for m in ('numpy','kazoo','pyspark') if m in sys.modules]\n"
        "sys.stderr.write('heavy imports: %s\\n' % (heavy or 'none'))"
    )

    def timed(cmd) -> float:
        runs = []
        for _ in range(7):
            with timer() as t:
                subprocess.run(cmd, check=True, capture_output=True, env=env)
            runs.append(t["s"])
        return statistics.median(runs)

    script = os.path.join(os.path.dirname(sys.executable), "kafka-planner")
    describe = timed([script, "describe", "topologies/producer-0.yaml"])
    bare = timed([sys.executable, "-c", "pass"])
    heavy = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stderr.strip()
    line(
        "cold start `kafka-planner describe topologies/producer-0.yaml` (median of 7)",
        describe,
        "s",
        bare,
        "bare `python -c pass`",
        "< 0.3 s",
        higher_is_better=False,
    )
    print(f"   {heavy}")


def run() -> None:
    _placement()
    _cold_start()
