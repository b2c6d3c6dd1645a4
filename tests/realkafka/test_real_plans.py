"""Every plan carried out end to end on the real KRaft cluster (issue 29, part 3): planned from `kafka://` with
`--output-dir`, run by Kafka's own `kafka-reassign-partitions.sh --execute --throttle` on each `proposed*.json`,
`--verify` until complete, `kafka-leader-election.sh` on `leader-election.json`, or by our `kafka submit --wait`,
`kafka status` and `kafka elect-leaders`; then `current.json` as the rollback, by the other tool. The real cluster
must end exactly as the plan said (replicas, preferred and actual leaders, no throttle left) and the rollback must
give back the start."""

from __future__ import annotations

import pytest
from realkafka.plan_steps import (
    election_partitions,
    proposed_files,
    replicas_after,
    state,
    throttle_lines,
    with_kafka_tools,
    with_planner,
    write_election,
)
from testkit import run_planner

THROTTLE = 10_000_000  # B/s: the topics are empty, the throttle is set, checked and cleared all the same


# kind: (the topic's assignment at the start, the plan's options, the replicas the plan ends with,
#        the partitions leader-election.json names)
CASES = {
    "rebalance": (
        [[1, 2], [2, 3], [3, 4], [4, 1], [1, 3], [2, 4]],
        lambda t: ["--topic", t],
        {0: [1, 2], 1: [2, 3], 2: [3, 4], 3: [5, 1], 4: [1, 5], 5: [4, 2]},
        [5],
    ),
}


@pytest.mark.parametrize(
    "kind, forward",
    [
        ("rebalance", "kafka"),
        # decommission, replace-broker, set-replication-factor and elect-leaders: test_real_plan_kinds.py
    ],
)
def test_plan_carried_out_and_rolled_back(real_kafka, tmp_path, kind, forward):
    assignment, options, expected, elected = CASES[kind]
    topic = f"real-plans-{kind}"
    real_kafka.create_topic(topic, assignment)
    added = kind == "rebalance"  # the scale-out: a broker added empty
    try:
        if added:
            real_kafka.add_broker(5, "rack-b")
        start = state(real_kafka, topic)
        assert start == {p: (r, r[0]) for p, r in enumerate(assignment)}

        folder = tmp_path / "plan"
        code, out, err = run_planner("reassign", kind, real_kafka.url, *options(topic), "--output-dir", str(folder))
        assert code == 0, err
        files = proposed_files(folder)
        planned = replicas_after(start, *files)
        assert (planned, [p for _, p in election_partitions(folder)]) == (expected, elected)

        carry_out = with_kafka_tools if forward == "kafka" else with_planner
        roll_back = with_planner if forward == "kafka" else with_kafka_tools

        def run(driver, json_files, election):
            if driver is with_planner:
                return driver(real_kafka, json_files, election, THROTTLE, tmp_path / f"rollback-{len(json_files)}.json")
            return driver(real_kafka, json_files, election, THROTTLE)

        run(carry_out, files, folder / "leader-election.json")
        # exactly as the plan said: its replicas, each partition led by its preferred (first) replica
        assert state(real_kafka, topic) == {p: (r, r[0]) for p, r in planned.items()}
        assert throttle_lines(real_kafka, topic) == []

        # current.json as the rollback, then a preferred election over the topic: the start again
        run(roll_back, [folder / "current.json"], write_election(tmp_path / "elect-all.json", topic, sorted(start)))
        assert state(real_kafka, topic) == start
        assert throttle_lines(real_kafka, topic) == []
    finally:
        real_kafka.delete_topics(topic)
        if added:
            real_kafka.remove_broker(5)
