"""Decommission, replace-broker, set-replication-factor (up and down) and elect-leaders carried out end to end on the
real KRaft cluster (issue 29, part 3): each planned from `kafka://` into a plan folder, then carried out one way by
Kafka's own tools (`kafka-reassign-partitions.sh --execute --throttle` on each `proposed*.json` in order, `--verify`
until complete, `kafka-leader-election.sh` on `leader-election.json`) and the other way by ours (`kafka submit`,
`kafka status`, `kafka elect-leaders`), with `current.json` as the rollback. The cluster must end exactly as the plan
said (replicas, preferred and actual leaders, no throttle left), the rollback must give back the start, and our texts
must equal Kafka's on the same JSON and the same state:

- `kafka status` = `--verify`, once the files are complete (both clear the throttles);
- `kafka elect-leaders --execute` = `kafka-leader-election.sh` on the same file, every leader already preferred;
- `kafka cancel --execute` = `--cancel` with nothing in progress;
- `kafka submit` (dry run, then --execute) = `--execute`: the "Current partition replica assignment" block on the
  same state (each replica's log dir included, as Kafka 4.4 prints them), and the lines after it on the same
  partitions and throttle (Kafka has no dry run: docs/admin-api.md says what ours prints instead).

One topic per plan kind, made once for the module; each test leaves its topic as it found it."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from realkafka import plan_steps
from realkafka.plan_steps import (
    election_partitions,
    proposed_files,
    reassign_tool,
    replicas_after,
    throttle_lines,
    verify_until_done,
    write_election,
)
from realkafka.real_cluster import ELECT, REASSIGN
from testkit import run_planner_here

THROTTLE = "10000000"  # B/s: the topics are empty; the throttle is set, checked and cleared all the same
SAVE = "Save this to use as the --reassignment-json-file option during rollback\n"
PREFIX = "plan-kinds-"


def only(topic: str) -> list[str]:
    """Plans over the whole cluster that must move nothing but `topic` (other tests' topics, __consumer_offsets)."""
    return ["--exclude-internal", "--exclude-topic", f"(?!{topic}$).*"]


# name: (plan command, start assignment, options, forward driver, replicas the plan ends with, partitions elected)
CASES = {
    "decommission": (
        "decommission",
        [[1, 4], [4, 2], [3, 4], [2, 3]],
        lambda t: ["--brokers", "4", "--batch-size", "2", *only(t)],
        "kafka",
        # which of brokers 1-3 take broker 4's replicas depends on the load of the other modules' topics on the shared
        # session cluster (seen: [1, 2], [3, 2], [3, 1], [2, 3] alone, [2, 1], [1, 2], [3, 1], [1, 3] after the fault
        # and message tests): every partition keeps 2 replicas, none on broker 4; the cluster then ends as planned
        lambda planned: (
            sorted(planned) == [0, 1, 2, 3] and all(len(set(r)) == 2 and set(r) <= {1, 2, 3} for r in planned.values())
        ),
        [],
    ),
    "replace-broker": (
        "replace-broker",
        [[2, 3], [3, 2], [1, 3]],
        lambda t: ["--source", "3", "--target", "4", *only(t)],
        "planner",
        {0: [2, 4], 1: [4, 2], 2: [1, 4]},
        [],
    ),
    "rf-up": (
        "set-replication-factor",
        [[1, 2], [2, 3], [3, 1]],
        lambda t: ["--topic", t, "--replication-factor", "3"],
        "kafka",
        {0: [1, 2, 3], 1: [2, 3, 4], 2: [3, 1, 2]},
        [],
    ),
    "rf-down": (
        "set-replication-factor",
        [[1, 2, 3], [2, 3, 4], [3, 4, 1], [4, 1, 2]],
        lambda t: ["--topic", t, "--replication-factor", "2"],
        "planner",
        {0: [1, 2], 1: [2, 3], 2: [3, 4], 3: [4, 2]},
        [],
    ),
    "elect-leaders": (
        "elect-leaders",
        [[1, 2], [1, 3], [1, 4], [1, 2]],
        lambda t: ["--topic", t],
        "kafka",
        {0: [2, 1], 1: [3, 1], 2: [4, 1], 3: [1, 2]},  # preferred leaders 2, 3, 4, 1: by reordering only
        [0, 1, 2],
    ),
}


RUNBOOK_TOPIC = PREFIX + "runbook-elect"
RUNBOOK_START = [[1, 2], [1, 3], [1, 4], [2, 3]]


@pytest.fixture(scope="module")
def topics(real_kafka):
    """One topic per case (and the elect-leaders runbook's), created once for the module, deleted after."""
    names = {case: PREFIX + case for case in CASES}
    names["runbook"] = RUNBOOK_TOPIC
    real_kafka.create_topic(RUNBOOK_TOPIC, RUNBOOK_START)
    try:
        for case in CASES:
            real_kafka.create_topic(names[case], CASES[case][1])
        yield names
    finally:
        real_kafka.delete_topics(*names.values())


def state(real_kafka, topic: str) -> dict[int, tuple[list[int], int]]:
    """Partition -> (replicas, actual leader) from a broker's metadata (the Admin API, no JVM to start:
    `plan_steps.state` reads the same through kafka-topics.sh, and the runbook test checks that they agree)."""
    admin = real_kafka.admin()
    try:
        (found,) = admin.describe_topics([topic])
    finally:
        admin.close()
    assert found["error_code"] == 0, found
    return {p["partition_index"]: (list(p["replica_nodes"]), p["leader_id"]) for p in found["partitions"]}


def planner(*args: str) -> str:
    code, out, err = run_planner_here(*args)
    assert code == 0, out + err
    return out


def elect_kafka(real_kafka, election: Path) -> str:
    rc, out, err = real_kafka.run_tool(
        ELECT, "--bootstrap-server", real_kafka.bootstrap, "--election-type", "PREFERRED",
        "--path-to-json-file", str(election),
    )  # fmt: skip
    assert rc == 0, out + err
    return out


class Texts:
    """What each tool printed, for the comparisons."""

    def __init__(self):
        self.kafka_execute: list[str] = []  # --execute, per file
        self.planner_execute: list[str] = []  # kafka submit --execute (one per file)
        self.dry_run: list[str] = []  # kafka submit --dry-run, per file, on the state just before it ran


def by_kafka(real_kafka, files: list[Path], election: Path | None, texts: Texts) -> None:
    """Kafka's tools: --execute --throttle on each file in order, --verify until complete, then our `kafka status`
    on the same file and state (equal to Kafka's last --verify); then the election (and ours on the same state)."""
    for f in files:
        texts.dry_run.append(planner("kafka", "submit", real_kafka.url, "--reassignment-json-file", str(f),
                                     "--throttle", THROTTLE, "--dry-run"))  # fmt: skip
        rc, out, err = reassign_tool(
            real_kafka, "--reassignment-json-file", str(f), "--execute", "--throttle", THROTTLE
        )
        assert rc == 0, out + err
        texts.kafka_execute.append(out)
        verified = verify_until_done(real_kafka, f)
        assert planner("kafka", "status", real_kafka.url, "--reassignment-json-file", str(f)) == verified
    if election is not None:
        elect_kafka(real_kafka, election)
        # every leader is now preferred: ours and Kafka's say so in the same words
        assert planner("kafka", "elect-leaders", real_kafka.url, "--path-to-json-file", str(election),
                       "--execute") == elect_kafka(real_kafka, election)  # fmt: skip


def by_planner(real_kafka, files: list[Path], election: Path | None, texts: Texts, tmp: Path) -> None:
    """Ours: `kafka submit --execute --throttle --wait` on each file in order, `kafka status` (equal to Kafka's
    --verify on the same file and state), then `kafka elect-leaders --execute` (and Kafka's on the same state)."""
    for i, f in enumerate(files):
        texts.dry_run.append(planner("kafka", "submit", real_kafka.url, "--reassignment-json-file", str(f),
                                     "--throttle", THROTTLE, "--dry-run"))  # fmt: skip
        texts.planner_execute.append(
            planner("kafka", "submit", real_kafka.url, "--reassignment-json-file", str(f), "--execute", "--throttle",
                    THROTTLE, "--wait", "--poll", "0.2", "--rollback-file", str(tmp / f"rollback-{i}.json"), "-q")
        )  # fmt: skip
        status = planner("kafka", "status", real_kafka.url, "--reassignment-json-file", str(f))
        rc, out, err = reassign_tool(real_kafka, "--reassignment-json-file", str(f), "--verify")
        assert (rc, out) == (0, status), err
    if election is not None:
        planner("kafka", "elect-leaders", real_kafka.url, "--path-to-json-file", str(election), "--execute")
        assert planner("kafka", "elect-leaders", real_kafka.url, "--path-to-json-file", str(election),
                       "--execute") == elect_kafka(real_kafka, election)  # fmt: skip


def check_submit_texts(real_kafka, kafka_side: Texts, planner_side: Texts) -> None:
    """`kafka submit`'s texts against `--execute`'s: the dry run's block on the state Kafka's ran on, and our
    --execute's lines after the block against Kafka's on the same partitions and throttle (current.json lists the
    partitions of the proposed files, one batch here on the way back)."""
    for kafka_said, ours in zip(kafka_side.kafka_execute, kafka_side.dry_run):
        block, _, _ = kafka_said.partition(SAVE)
        assert f'"log_dirs":["{real_kafka.workdir}/node-' in block  # each replica's log dir, as Kafka 4.4 prints
        assert ours.startswith(block + SAVE)
        assert "Dry run: would start the reassignment of" in ours.removeprefix(block)
    for ours, dry in zip(planner_side.planner_execute, planner_side.dry_run):
        assert ours.partition(SAVE)[0] == dry.partition(SAVE)[0]
    # the lines after the block: the warning, the throttle, the partitions started
    kafka_tail = [k.partition(SAVE)[2] for k in kafka_side.kafka_execute]
    ours_tail = [
        o.partition(SAVE)[2].partition("Status of partition reassignment:")[0] for o in planner_side.planner_execute
    ]
    if len(kafka_tail) == len(ours_tail):  # one file each way: the same partitions, the same lines
        assert ours_tail == kafka_tail
    started = re.compile(r"Successfully started partition reassignments? for (\S+)\n")
    assert sorted(x for t in kafka_tail for x in started.findall(t)[0].split(",")) == sorted(
        x for t in ours_tail for x in started.findall(t)[0].split(",")
    )
    for t in kafka_tail + ours_tail:
        assert t.startswith(
            "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is "
            f"removed.\nThe inter-broker throttle limit was set to {THROTTLE} B/s\n"
            "Successfully started partition reassignment"
        ), t


@pytest.mark.parametrize("case", list(CASES))
def test_plan_carried_out_and_rolled_back(real_kafka, topics, tmp_path, case):
    command, assignment, options, forward, expected, elected = CASES[case]
    topic = topics[case]
    start = state(real_kafka, topic)
    assert start == {p: (r, r[0]) for p, r in enumerate(assignment)}

    folder = tmp_path / "plan"
    planner("reassign", command, real_kafka.url, *options(topic), "--output-dir", str(folder))
    files = proposed_files(folder)
    planned = replicas_after(start, *files)
    election = folder / "leader-election.json"
    if callable(expected):  # the plan depends on the shared cluster's other topics: checked by what it must do, and
        # then, as every case, by the cluster ending exactly as it says (its elections included)
        assert expected(planned), planned
        expected, elected = planned, [p for _, p in election_partitions(folder)]
    assert (planned, [p for _, p in election_partitions(folder)]) == (expected, elected)

    forward_texts, back_texts = Texts(), Texts()
    if forward == "kafka":
        by_kafka(real_kafka, files, election if election.exists() else None, forward_texts)
    else:
        by_planner(real_kafka, files, election if election.exists() else None, forward_texts, tmp_path)
    # exactly as the plan said: its replicas, each partition led by its preferred (first) replica
    assert state(real_kafka, topic) == {p: (r, r[0]) for p, r in planned.items()}
    assert throttle_lines(real_kafka, topic) == []

    # current.json as the rollback by the other tool, then a preferred election over the topic: the start again
    everything = write_election(tmp_path / "elect-all.json", topic, sorted(start))
    if forward == "kafka":
        by_planner(real_kafka, [folder / "current.json"], everything, back_texts, tmp_path)
        check_submit_texts(real_kafka, forward_texts, back_texts)
    else:
        by_kafka(real_kafka, [folder / "current.json"], everything, back_texts)
        check_submit_texts(real_kafka, back_texts, forward_texts)
    assert state(real_kafka, topic) == start
    assert throttle_lines(real_kafka, topic) == []
    if case == "decommission":  # --cancel with nothing in progress: the same words (its missing newline too)
        ours = planner("kafka", "cancel", real_kafka.url, "--reassignment-json-file", str(files[0]), "--execute")
        rc, out, err = reassign_tool(real_kafka, "--reassignment-json-file", str(files[0]), "--cancel")
        assert (rc, out) == (0, ours), err
        assert ours.startswith("None of the specified partition reassignments are active.\n")


def run_runbook_line(real_kafka, folder: Path, line: str) -> str:
    """One command of a RUNBOOK.md as an operator pastes it in the plan folder; a --verify again until complete."""
    words = [str(folder / w) if w.endswith(".json") else w for w in shlex.split(line)[1:]]
    if line.startswith("kafka-reassign-partitions.sh") and "--verify" in words:
        return verify_until_done(real_kafka, Path(words[words.index("--reassignment-json-file") + 1]))
    main = REASSIGN if line.startswith("kafka-reassign-partitions.sh") else ELECT
    rc, out, err = real_kafka.run_tool(main, *words)
    assert rc == 0, (line, out, err)
    return out


def test_elect_leaders_runbook_on_the_real_cluster(real_kafka, topics, tmp_path):
    """Issue 32: elect-leaders' plan folder has a RUNBOOK.md too; its commands, run in order on the real cluster,
    reorder the replica lists and elect the new preferred leaders; its rollback gives back the replica lists."""
    start = state(real_kafka, RUNBOOK_TOPIC)
    assert start == plan_steps.state(real_kafka, RUNBOOK_TOPIC) == {p: (r, r[0]) for p, r in enumerate(RUNBOOK_START)}
    folder = tmp_path / "plan"
    planner("reassign", "elect-leaders", real_kafka.url, "--topic", RUNBOOK_TOPIC, "--output-dir", str(folder))
    book = (folder / "RUNBOOK.md").read_text()
    main, _, rollback = book.partition("## Rollback")
    lines = [x.strip() for x in main.splitlines() if x.strip().startswith("kafka-")]
    assert [line.split(" --")[0] for line in lines] == [
        "kafka-reassign-partitions.sh", "kafka-reassign-partitions.sh", "kafka-leader-election.sh",
    ]  # fmt: skip
    assert all(f"--bootstrap-server {real_kafka.bootstrap.split(',')[0]}" in line for line in lines)
    outputs = [run_runbook_line(real_kafka, folder, line) for line in lines]
    assert outputs[2].startswith("Successfully completed leader election (PREFERRED) for partitions ")
    planned = replicas_after(start, *proposed_files(folder))
    assert planned == {0: [1, 2], 1: [3, 1], 2: [4, 1], 3: [2, 3]}  # leaders 1, 3, 4, 2
    assert state(real_kafka, RUNBOOK_TOPIC) == {p: (r, r[0]) for p, r in planned.items()}
    # the rollback: cancel (nothing is running: Kafka says so), restore current.json, verify
    for line in [x.strip() for x in rollback.splitlines() if x.strip().startswith("kafka-")]:
        run_runbook_line(real_kafka, folder, line)
    # the replica lists as they were; the leaders stay where the election put them until the next election
    assert state(real_kafka, RUNBOOK_TOPIC) == {p: (r, planned[p][0]) for p, (r, _) in start.items()}
    assert throttle_lines(real_kafka, RUNBOOK_TOPIC) == []
