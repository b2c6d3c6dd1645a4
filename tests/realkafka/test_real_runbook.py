"""A plan folder's RUNBOOK.md carried out by Kafka's own tools on the real cluster, command by command as an operator
would paste them: each batch's --execute --throttle, --verify until complete, the election; then its rollback."""

import shlex
import time

import yaml
from realkafka.real_cluster import ELECT, REASSIGN

from tests.formats.test_runbook import kafka_command

TOPIC = "runbook-moves"
START = [[1, 2], [1, 2], [1, 3], [2, 1], [3, 1], [1, 3]]


def _assignment(real_kafka, planner_cli, tmp_path, name):
    out = tmp_path / name
    code, _, err = planner_cli("kafka", "export", real_kafka.url, "-o", str(out))
    assert code == 0, err
    topic = next(t for t in yaml.safe_load(out.read_text())["topics"] if t["name"] == TOPIC)
    return str(out), {p: list(r) for p, r in topic["assignment"].items()}


def _run(real_kafka, folder, line):
    tool, action, opts = kafka_command(line)
    words = shlex.split(line)[1:]
    words = [str(folder / w) if w.endswith(".json") else w for w in words]  # the runbook runs from its folder
    main = REASSIGN if tool == "kafka-reassign-partitions.sh" else ELECT
    deadline = time.monotonic() + 120
    while True:
        rc, out, err = real_kafka.run_tool(main, *words)
        assert rc == 0, (line, out, err)
        if action != "--verify" or "is still in progress" not in out:
            return out
        assert time.monotonic() < deadline, out
        time.sleep(1)


def test_the_runbook_runs_on_the_real_cluster(real_kafka, planner_cli, tmp_path):
    real_kafka.create_topic(TOPIC, START)
    try:
        topology, before = _assignment(real_kafka, planner_cli, tmp_path, "before.yaml")
        assert before == dict(enumerate(START))
        folder = tmp_path / "plan"
        code, _, err = planner_cli(
            "reassign", "rebalance", topology, "--topic", TOPIC, "--batch-size", "2", "--throttle", "10MB",
            "--bootstrap-server", real_kafka.bootstrap, "--output-dir", str(folder),
        )  # fmt: skip
        assert code == 0, err
        book = (folder / "RUNBOOK.md").read_text()
        main, _, rollback = book.partition("## Rollback")
        lines = [x.strip() for x in main.splitlines() if x.strip().startswith("kafka-")]
        assert len(lines) >= 5  # a canary and another batch, each executed and verified, the election
        outputs = [_run(real_kafka, folder, line) for line in lines]
        assert "The inter-broker throttle limit was set to 10000000 B/s" in outputs[0]
        assert "Clearing broker-level throttles" in outputs[1]
        # the plan's replicas, every one: what proposed-*.json asked for
        _, after = _assignment(real_kafka, planner_cli, tmp_path, "after.yaml")
        code, out, err = planner_cli("reassign", "rebalance", topology, "--topic", TOPIC, "--format", "json")
        proposed = {p["partition"]: p["proposed"] for p in yaml.safe_load(out)["partitions"]}
        assert after == {**before, **proposed}
        # the rollback: cancel (nothing is running: Kafka says so), restore current.json, verify
        for line in [x.strip() for x in rollback.splitlines() if x.strip().startswith("kafka-")]:
            _run(real_kafka, folder, line)
        assert _assignment(real_kafka, planner_cli, tmp_path, "back.yaml")[1] == before
    finally:
        real_kafka.delete_topics(TOPIC)
