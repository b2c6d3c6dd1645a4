"""`kafka-planner reassign ...` and `failures` end to end (exit codes, stdout, stderr, files)."""

import json
import re
from pathlib import Path

import pytest

from planner.adapters.topology_yaml import load_topology

ROOT = Path(__file__).resolve().parents[2]


def test_generate_prints_kafka_text(topo, tmp_path, planner_cli):
    f = tmp_path / "topics.json"
    f.write_text('{"topics":[{"topic":"bar"}],"version":1}')
    code, out, err = planner_cli(
        "reassign",
        "generate",
        topo,
        "--topics-to-move-json-file",
        str(f),
        "--broker-list",
        "4,5,6",
        "--start-index",
        "0",
    )
    assert (code, err) == (0, "")
    # rack-aware AdminUtils on racks a:4, b:5, c:6 (alternated 4,5,6), start 0, shift 0
    assert out == (
        "Current partition replica assignment\n"
        '{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},'
        '{"topic":"bar","partition":1,"replicas":[2,3],"log_dirs":["any","any"]}]}\n\n'
        "Proposed partition reassignment configuration\n"
        '{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[4,5],"log_dirs":["any","any"]},'
        '{"topic":"bar","partition":1,"replicas":[5,6],"log_dirs":["any","any"]}]}\n'
    )


def test_generate_error_one_line(topo, tmp_path, planner_cli):
    f = tmp_path / "topics.json"
    f.write_text('{"topics":[{"topic":"bar"},{"topic":"bar"}]}')
    code, out, err = planner_cli(
        "reassign", "generate", topo, "--topics-to-move-json-file", str(f), "--broker-list", "4,5"
    )
    assert (code, out, err) == (2, "", "error: List of topics to reassign contains duplicate entries: [bar]\n")


def test_rebalance_output_dir_and_round_trip(topo, tmp_path, planner_cli):
    out_dir = tmp_path / "plan"
    code, out, err = planner_cli("reassign", "rebalance", topo, "--output-dir", str(out_dir), "--throttle", "1000")
    assert code == 0, err
    names = sorted(p.name for p in out_dir.iterdir())
    assert "current.json" in names and "proposed.json" in names and "plan.txt" in names
    assert (out_dir / "plan.txt").read_text() == out
    assert "Replica moves:" in out and "lower bound" in out
    assert "leader.replication.throttled.replicas=" not in out  # in throttles.txt, not in the summary
    assert "Throttled replicas on " in out
    throttles = (out_dir / "throttles.txt").read_text()
    assert "broker 1: leader.replication.throttled.rate=1000\n" in throttles
    assert "topic foo: leader.replication.throttled.replicas=" in throttles
    proposed = json.loads((out_dir / "proposed.json").read_text())
    current = json.loads((out_dir / "current.json").read_text())
    assert [(p["topic"], p["partition"]) for p in proposed["partitions"]] == [
        (p["topic"], p["partition"]) for p in current["partitions"]
    ]
    # apply proposed, then the rollback: back to the start
    step1, step2 = tmp_path / "after.yaml", tmp_path / "back.yaml"
    code, _, err = planner_cli(
        "reassign", "apply", topo, "--reassignment-json-file", str(out_dir / "proposed.json"), "--write", str(step1)
    )
    assert code == 0, err
    after = load_topology(str(step1))
    counts = {}
    for p in after.partitions():
        for b in p.replicas:
            counts[b] = counts.get(b, 0) + 1
    assert max(counts.values()) - min(counts.get(b, 0) for b in after.broker_ids) <= 1
    code, _, err = planner_cli(
        "reassign",
        "apply",
        str(step1),
        "--reassignment-json-file",
        str(out_dir / "current.json"),
        "--write",
        str(step2),
    )
    assert code == 0, err
    assert load_topology(str(step2)).assignment() == load_topology(topo).assignment()


def test_batches_written(topo, tmp_path, planner_cli):
    out_dir = tmp_path / "plan"
    code, _, err = planner_cli(
        "reassign", "decommission", topo, "--brokers", "1", "--batch-size", "2", "--output-dir", str(out_dir)
    )
    assert code == 0, err
    batches = sorted(p.name for p in out_dir.iterdir() if p.name.startswith("proposed-"))
    assert batches[0] == "proposed-001.json" and len(batches) >= 2
    total = sum(len(json.loads((out_dir / b).read_text())["partitions"]) for b in batches)
    assert total == len(json.loads((out_dir / "current.json").read_text())["partitions"])


def test_failed_plan_writes_nothing(topo, tmp_path, planner_cli):
    out_dir = tmp_path / "plan"
    code, out, err = planner_cli("reassign", "decommission", topo, "--brokers", "1,2,3,4", "--output-dir", str(out_dir))
    assert code == 2 and out == ""
    assert err == (
        "error: cannot decommission broker(s) 1,2,3,4: foo-0 has replication factor 3 but only 2 "
        "online broker(s) would remain\n"
    )
    assert not out_dir.exists()


def test_verify_valid_with_warnings(topo, tmp_path, planner_cli):
    f = tmp_path / "r.json"
    f.write_text('{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[1,4]}]}')
    code, out, err = planner_cli("reassign", "check-execute", topo, "--reassignment-json-file", str(f))
    assert code == 0
    assert "warning: bar-0 becomes rack-unsafe: replicas 1,4 in racks a,a" in err
    assert out.startswith("Plan: check-execute")
    f.write_text('{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[1,2,3]}]}')
    code, out, err = planner_cli("reassign", "check-execute", topo, "--reassignment-json-file", str(f))
    assert code == 0 and "warning: bar-0 changes replication factor 2 -> 3" in err


@pytest.mark.parametrize(
    "text,message",
    [
        ('{"version":1,"partitions":[]}', "Partition reassignment list cannot be empty"),
        ('{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[1,9]}]}', "Unknown broker id 9"),
        ('{"version":1,"partitions":[{"topic":"quux","partition":0,"replicas":[1,2]}]}', "Topic quux not found."),
        (
            '{"version":1,"partitions":[{"topic":"bar","partition":7,"replicas":[1,2]}]}',
            "Unable to find partition: bar-7",
        ),
        (
            '{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[1,1]}]}',
            "Partition replica lists may not contain duplicate entries: bar-0 contains multiple entries for 1",
        ),
    ],
)
def test_verify_errors(topo, tmp_path, text, message, planner_cli):
    f = tmp_path / "r.json"
    f.write_text(text)
    code, out, err = planner_cli("reassign", "check-execute", topo, "--reassignment-json-file", str(f))
    assert (code, out, err) == (2, "", f"error: {message}\n")


def test_missing_file_error(topo, planner_cli):
    code, _, err = planner_cli("reassign", "check-execute", topo, "--reassignment-json-file", "/nonexistent/r.json")
    assert code == 2 and err == "error: --reassignment-json-file /nonexistent/r.json: no such file\n"


def test_elect_leaders_kafka_format(topo, planner_cli):
    code, out, err = planner_cli("reassign", "elect-leaders", topo, "--format", "kafka")
    assert code == 0, err
    last = out.strip().splitlines()[-1]
    assert json.loads(last).keys() == {"partitions"}


def test_sizes_file(topo, tmp_path, planner_cli):
    sizes = tmp_path / "sizes.json"
    sizes.write_text(
        "Querying brokers for log directories information\n"
        '{"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"/d","error":null,"partitions":['
        '{"partition":"bar-0","size":5000,"offsetLag":0,"isFuture":false}]}]}]}\n'
    )
    code, out, err = planner_cli(
        "reassign",
        "set-replication-factor",
        topo,
        "--topic",
        "bar",
        "--replication-factor",
        "3",
        "--sizes",
        str(sizes),
        "--format",
        "json",
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["replica_moves"] == 2 == data["lower_bound"]
    assert data["bytes_to_move"] == 5000  # bar-1 has no size: counted as 0


def test_failures_command(topo, planner_cli):
    code, out, err = planner_cli("failures", topo, "--max-failed-brokers", "2", "--format", "json", "--top", "3")
    assert code == 0, err
    data = json.loads(out)
    assert len(data) == 3
    # brokers 1 and 2 together: every foo partition (min ISR 2, ISR 3) goes under min ISR; bar-0 loses its leader
    assert data[0] == {"brokers": [1, 2], "label": "1,2", "leaderless": 1, "under_min_isr": 5}
    code, out, _ = planner_cli("failures", topo, "--by-rack")
    assert code == 0 and out.splitlines()[0].startswith("failed")


def test_status_and_list(topo, tmp_path, planner_cli):
    f = tmp_path / "r.json"
    f.write_text(
        '{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[1,2]},'
        '{"topic":"bar","partition":1,"replicas":[3,2]}]}'
    )
    code, out, err = planner_cli("reassign", "verify", topo, "--reassignment-json-file", str(f))
    assert (code, err) == (0, "")
    assert out == (
        "Status of partition reassignment:\n"
        "Reassignment of partition bar-0 is completed.\n"
        "There is no active reassignment of partition bar-1, but replica set is 2,3 rather than 3,2.\n\n"
    )
    assert planner_cli("reassign", "list", topo) == (0, "No partition reassignments found.\n", "")


def test_apply_writes_a_partial_rf_change(topo, tmp_path, planner_cli):
    # Kafka accepts a reassignment changing the RF of some partitions only, and a topology file without
    # replication_factor takes such a topic: apply writes it (it refused, saying a file keeps one RF per topic),
    # and the result loads, plans and rolls back
    f = tmp_path / "r.json"
    f.write_text('{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[1,2,3]}]}')
    out_file = tmp_path / "after.yaml"
    code, out, err = planner_cli(
        "reassign", "apply", topo, "--reassignment-json-file", str(f), "--write", str(out_file)
    )
    assert (code, out, err) == (0, "", f"wrote {out_file} (1 partition(s) reassigned)\n")
    bar = load_topology(str(out_file)).topic("bar")
    assert [p.replicas for p in bar.partitions] == [(1, 2, 3), (2, 3)]
    # a plan on the mixed topic, applied, then planned again: nothing left to do
    plan_dir = tmp_path / "plan"
    code, _, _ = planner_cli("reassign", "rebalance", str(out_file), "--output-dir", str(plan_dir))
    assert code == 0
    applied = tmp_path / "applied.yaml"
    code, _, _ = planner_cli(
        "reassign",
        "apply",
        str(out_file),
        "--reassignment-json-file",
        str(plan_dir / "proposed.json"),
        "--write",
        str(applied),
    )
    assert code == 0
    code, out, _ = planner_cli("reassign", "rebalance", str(applied), "--format", "json")
    assert (code, json.loads(out)["replica_moves"], json.loads(out)["partitions_touched"]) == (0, 0, 0)
    # the rollback restores the mixed topic
    back = tmp_path / "back.yaml"
    code, _, _ = planner_cli(
        "reassign",
        "apply",
        str(applied),
        "--reassignment-json-file",
        str(plan_dir / "current.json"),
        "--write",
        str(back),
    )
    assert code == 0
    assert [p.replicas for p in load_topology(str(back)).topic("bar").partitions] == [(1, 2, 3), (2, 3)]


def test_output_dir_drops_files_of_an_earlier_plan(topo, tmp_path, planner_cli):
    out_dir = tmp_path / "plan"
    code, _, err = planner_cli(
        "reassign",
        "decommission",
        topo,
        "--brokers",
        "1",
        "--batch-size",
        "2",
        "--no-canary",
        "--output-dir",
        str(out_dir),
    )
    assert code == 0, err
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "RUNBOOK.md",
        "current.json",
        "plan.txt",
        "proposed-001.json",
        "proposed-002.json",
        "proposed-003.json",
    ]
    rollback = (out_dir / "current.json").read_text()
    (out_dir / "leader-election.json").write_text('{"partitions":[{"topic":"foo","partition":0}]}\n')
    (out_dir / "notes.txt").write_text("mine")
    # the same plan in bigger batches: same rollback, so it may replace the set; the user's notes stay
    code, _, err = planner_cli(
        "reassign",
        "decommission",
        topo,
        "--brokers",
        "1",
        "--batch-size",
        "3",
        "--no-canary",
        "--output-dir",
        str(out_dir),
    )
    assert code == 0, err
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "RUNBOOK.md",
        "current.json",
        "notes.txt",
        "plan.txt",
        "proposed-001.json",
        "proposed-002.json",
    ]
    assert (out_dir / "notes.txt").read_text() == "mine"
    # another plan would replace the rollback of a plan that may have been executed: refused, nothing changes
    code, out, err = planner_cli(
        "reassign",
        "set-replication-factor",
        topo,
        "--topic",
        "bar",
        "--replication-factor",
        "3",
        "--output-dir",
        str(out_dir),
    )
    assert (code, out) == (2, "")
    assert err == (
        f"error: --output-dir {out_dir} holds an earlier plan whose rollback (current.json) differs from "
        "this plan's; that plan may have been executed: move the folder away or choose another "
        "--output-dir\n"
    )
    assert (out_dir / "current.json").read_text() == rollback
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan", "t.yaml"]


def test_state_column_marks_only_brokers_the_plan_empties(topo, planner_cli):
    code, out, err = planner_cli(
        "reassign",
        "set-replication-factor",
        topo,
        "--topic",
        "bar",
        "--replication-factor",
        "3",
        "--offline-brokers",
        "1",
    )
    assert code == 0, err
    states = {
        cells[0]: cells[2]
        for cells in (re.split(r"\s{2,}", line) for line in out.splitlines() if re.match(r"\d+ ", line))
    }
    # broker 1 is offline but keeps its replicas; 6 is online and empty
    assert states == {"1": "offline", "2": "online", "3": "online", "4": "online", "5": "online", "6": "online"}
    code, out, err = planner_cli("reassign", "decommission", topo, "--brokers", "1,6")
    assert code == 0, err
    states = {
        cells[0]: cells[2]
        for cells in (re.split(r"\s{2,}", line) for line in out.splitlines() if re.match(r"\d+ ", line))
    }
    assert states["1"] == "online, leaving" and states["6"] == "online, unused"


def test_elect_leaders_output_dir(topo, tmp_path, planner_cli):
    out_dir = tmp_path / "plan"
    code, out, err = planner_cli("reassign", "elect-leaders", topo, "--output-dir", str(out_dir))
    assert code == 0, err
    # heads: foo 1,2,3,1 and bar 1,2, so broker 1 leads 3 and broker 3 one: foo-0 goes to 3 (no data moves)
    assert json.loads((out_dir / "proposed.json").read_text()) == {
        "version": 1,
        "partitions": [{"topic": "foo", "partition": 0, "replicas": [3, 2, 1], "log_dirs": ["any", "any", "any"]}],
    }
    assert (out_dir / "leader-election.json").read_text() == '{"partitions":[{"topic":"foo","partition":0}]}\n'
    # once applied, nothing is left to reorder or elect: only plan.txt, and no empty reassignment
    after = tmp_path / "after.yaml"
    assert (
        planner_cli(
            "reassign", "apply", topo, "--reassignment-json-file", str(out_dir / "proposed.json"), "--write", str(after)
        )[0]
        == 0
    )
    code, out, err = planner_cli("reassign", "elect-leaders", str(after), "--output-dir", str(tmp_path / "again"))
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "again").iterdir()) == ["plan.txt"]
    assert err == (
        f"wrote {tmp_path / 'again' / 'plan.txt'}\nnothing to reassign: no replica list changes, so no "
        "current.json or proposed.json (Kafka refuses an empty list: Partition reassignment list cannot "
        "be empty)\n"
    )
    assert out.endswith("Partitions to elect (current leader is not preferred): 0\n")


def test_failures_table_left_aligns_single_broker_labels(topo, planner_cli):
    code, out, err = planner_cli("failures", topo, "--top", "3", "--offline-brokers", "1")
    assert (code, err) == (0, "")
    # with 1 down, losing 2 leaves bar-0 (replicas 1,2) leaderless, so under min ISR too, and the 4 foo partitions
    # under their min ISR of 2
    assert out.splitlines() == [
        "failed      leaderless                  under min ISR",
        "--------  ------------  ------------  ---------------",
        "2                    1  ████████████                5",
        "3                    0                              4",
        "4                    0                              0",
        "(6 partitions; worst first)",
    ]


def test_json_format_lists_the_partitions_to_elect(topo, planner_cli):
    code, out, err = planner_cli("reassign", "elect-leaders", topo, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["partitions"] == [{"topic": "foo", "partition": 0, "current": [1, 2, 3], "proposed": [3, 2, 1]}]
    assert data["leader_election"] == [{"topic": "foo", "partition": 0}]
    # a plan whose leaders follow their replica lists has an empty list (set-rf only appends replicas)
    code, out, err = planner_cli(
        "reassign", "set-replication-factor", topo, "--topic", "bar", "--replication-factor", "3", "--format", "json"
    )
    assert code == 0, err
    assert json.loads(out)["leader_election"] == []


OFFLINE_BROKER = str(__import__("pathlib").Path(__file__).resolve().parents[2] / "topologies" / "offline-broker.yaml")


def _proposed(out):
    return json.loads(out.split("Proposed partition reassignment configuration\n")[1])["partitions"]


def test_rebalance_repairs_rack_unsafe_partitions_unless_told_not_to(planner_cli):
    # offline-broker.yaml: metrics-1 has both replicas in rack r2 (brokers 2 and 5); broker 3 (r3) is offline, so
    # the target brokers span r1 and r2 and metrics-1 needs one replica in r1
    code, out, err = planner_cli("reassign", "rebalance", OFFLINE_BROKER)
    assert code == 0, err
    assert out.splitlines()[:5] == [
        "Plan: rebalance",
        "Replica moves:          6 (lower bound 6: optimal)",
        "Partitions touched:     6",
        "Preferred-leader changes: 4",
        "Rack-unsafe partitions: 1 -> 0",
    ]
    assert (
        "note: 1 rack-unsafe partition(s) repaired with 1 move(s) (a replica sharing its rack with another "
        "replica of the partition goes to a rack the partition does not use); the lower bound includes them; "
        "--no-rack-repair leaves unsafe partitions as they are"
    ) in out.splitlines()
    code, out, err = planner_cli("reassign", "rebalance", OFFLINE_BROKER, "--format", "kafka")
    assert code == 0, err
    # the follower on broker 5 moves to broker 4 (r1); the leader, broker 2, stays
    assert [(p["topic"], p["partition"], p["replicas"]) for p in _proposed(out)] == [
        ("events", 0, [1, 2, 4]),
        ("events", 1, [4, 1, 2]),
        ("events", 2, [2, 4, 5]),
        ("legacy", 0, [5]),
        ("metrics", 0, [5, 1]),
        ("metrics", 1, [2, 4]),
    ]
    # --no-rack-repair: no repair move, but the topic
    # goal spreads metrics (4 replicas over 4 brokers, broker 5 held 2): its move off broker 5 goes to broker 4 (r1),
    # which makes metrics-1 rack-safe anyway; the bound is the count goal's (5), the topic goal's move is the sixth
    code, out, err = planner_cli("reassign", "rebalance", OFFLINE_BROKER, "--no-rack-repair")
    assert code == 0, err
    assert out.splitlines()[1:5] == [
        "Replica moves:          6 (lower bound 5: 1 above the bound)",
        "Partitions touched:     6",
        "Preferred-leader changes: 3",
        "Rack-unsafe partitions: 1 -> 0",
    ]
    assert "repaired" not in out
    code, out, err = planner_cli("reassign", "rebalance", OFFLINE_BROKER, "--no-rack-repair", "--format", "kafka")
    assert [(p["topic"], p["partition"], p["replicas"]) for p in _proposed(out)] == [
        ("events", 0, [1, 2, 5]),
        ("events", 1, [2, 1, 4]),
        ("events", 2, [2, 4, 5]),
        ("legacy", 0, [4]),
        ("metrics", 0, [5, 1]),
        ("metrics", 1, [2, 4]),
    ]


def test_decommission_takes_no_rack_repair(tmp_path, planner_cli):
    # racks r0 (0, 3, 6), r1 (1, 4, 7), r2 (2, 5, 8); t-0 has its three replicas in r0. Decommissioning r2's brokers
    # leaves two racks, so t-0 needs one replica in r1: one move besides the three replicas of u leaving 2, 5, 8
    path = tmp_path / "u.yaml"
    path.write_text(
        "brokers:\n"
        + "".join(f"  - {{id: {i}, rack: r{i % 3}}}\n" for i in range(9))
        + "topics:\n  - name: t\n    assignment: {0: [0, 3, 6]}\n"
        "  - name: u\n    assignment: {" + ", ".join(f"{p}: [{1 + p}]" for p in range(8)) + "}\n"
    )
    code, out, err = planner_cli("reassign", "decommission", str(path), "--brokers", "2,5,8", "--format", "kafka")
    assert code == 0, err
    assert [(p["topic"], p["partition"], p["replicas"]) for p in _proposed(out)] == [
        ("t", 0, [0, 7, 6]),
        ("u", 1, [0]),
        ("u", 4, [1]),
        ("u", 7, [4]),
    ]
    code, out, err = planner_cli("reassign", "decommission", str(path), "--brokers", "2,5,8", "--no-rack-repair")
    assert code == 0, err
    assert out.splitlines()[1:5] == [
        "Replica moves:          3 (lower bound 3: optimal)",
        "Partitions touched:     3",
        "Preferred-leader changes: 3",
        "Rack-unsafe partitions: 1 -> 1",
    ]


def test_replace_broker_takes_the_move_cap_and_exclusions(topo, planner_cli):
    rc, out, err = planner_cli(
        "reassign",
        "replace-broker",
        topo,
        "--source",
        "1",
        "--target",
        "4",
        "--max-moves",
        "2",
        "--exclude-topic",
        "bar",
    )
    assert (rc, err) == (0, "")
    assert "Replica moves:          2 (lower bound 4: --max-moves left unmet: emptying the source broker)\n" in out
    assert out.endswith(
        "note: 1 partition(s) of excluded topics keep their replica on broker 1\n"
        "note: the move cap left 2 partition(s) on broker 1: it is not empty yet\n"
    )
    rc, out, err = planner_cli(
        "reassign", "replace-broker", topo, "--source", "1", "--target", "4", "--max-moves", "-1"
    )
    assert (rc, out, err) == (2, "", "error: --max-moves must be at least 0\n")


def test_plan_commands_collect_cycles_less_often_and_restore_the_collector(topo, planner_cli_here, monkeypatch):
    import gc

    import planner.rebalance.goals as goals

    seen = []
    real = goals.balance

    def balance(*args, **kwargs):
        seen.append((gc.isenabled(), gc.get_threshold(), gc.get_freeze_count() > 0))
        return real(*args, **kwargs)

    monkeypatch.setattr(goals, "balance", balance)
    threshold = gc.get_threshold()
    code, out, _ = planner_cli_here("reassign", "rebalance", topo)
    assert (code, seen) == (0, [(True, (200_000, 20, 20), True)])
    assert (gc.get_threshold(), gc.get_freeze_count()) == (threshold, 0)
    assert out.startswith("Plan: rebalance\n")
    code, _, _ = planner_cli_here("reassign", "rebalance", topo, "--broker-list", "99")
    assert (code, gc.get_threshold(), gc.get_freeze_count()) == (2, threshold, 0)  # also after an error


def test_replace_broker_and_set_replication_factor_take_every_plan_option(topo, planner_cli):
    # the options every plan command takes (one set for a script's every plan): replace-broker refused
    # --byte-tolerance and --no-leader-balance ("No such option"), set-replication-factor all five
    code, out, err = planner_cli(
        "reassign", "set-replication-factor", topo, "--topic", "bar", "--replication-factor", "3", "--max-moves", "1",
        "--exclude-topic", "foo", "--exclude-internal", "--byte-tolerance", "5", "--no-leader-balance",
        "--format", "kafka",
    )  # fmt: skip
    assert (code, err) == (
        0,
        "note: --byte-tolerance and --no-leader-balance change nothing in a set-replication-factor plan: it adds or "
        "removes replicas of one topic only, keeping each preferred leader\n",
    )
    assert out.splitlines()[-1] == (
        '{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[1,2,6],"log_dirs":["any","any","any"]}]}'
    )
    code, out, err = planner_cli(
        "reassign", "replace-broker", topo, "--source", "3", "--target", "6", "--byte-tolerance", "20",
        "--no-leader-balance", "--exclude-topic", "bar", "--max-moves", "9",
    )  # fmt: skip
    assert (code, out.splitlines()[1]) == (0, "Replica moves:          4 (lower bound 4: optimal)")
    assert err == (
        "note: --byte-tolerance and --no-leader-balance change nothing in a replace-broker plan: only the source "
        "broker's replicas move, each to its place in the list, so its preferred leaderships go to the target\n"
    )
    # checked as everywhere; the topic set-replication-factor changes cannot be excluded
    for args, message in (
        (["--byte-tolerance", "-1"], "--byte-tolerance -1: give a percentage between 0 and 1000"),
        (["--max-moves", "-1"], "--max-moves must be at least 0"),
        (["--exclude-topic", "("], "--exclude-topic '(': not a regular expression (missing ), unterminated subpattern "
         "at position 0)"),
        (["--exclude-topic", "b.*"], "--topic bar is excluded by --exclude-topic 'b.*': leave one of them out"),
    ):  # fmt: skip
        assert planner_cli(
            "reassign", "set-replication-factor", topo, "--topic", "bar", "--replication-factor", "3", *args
        ) == (2, "", f"error: {message}\n")
    code, out, _ = planner_cli(
        "reassign", "set-replication-factor", topo, "--topic", "bar", "--replication-factor", "3", "--max-moves", "1"
    )
    assert out.splitlines()[1] == (
        "Replica moves:          1 (lower bound 2: --max-moves left unmet: the new replication factor on every "
        "partition)"
    )


def test_verify_exit_code_while_partitions_move(tmp_path, planner_cli):
    topo = tmp_path / "moving.yaml"
    topo.write_text(
        "brokers: [{id: 1}, {id: 2}, {id: 3}]\n"
        "topics:\n  - name: bar\n    assignment:\n      0: [3, 1, 2]\n      1: [2, 3]\n    adding:\n      0: [3]\n"
        "    removing:\n      0: [2]\n"
    )
    f = tmp_path / "r.json"
    f.write_text('{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[3,1]}]}')
    verify = ("reassign", "verify", str(topo), "--reassignment-json-file", str(f))
    assert planner_cli(*verify, "--exit-code") == (
        3,
        "Status of partition reassignment:\nReassignment of partition bar-0 is still in progress.\n\n",
        "",
    )
    assert planner_cli(*verify)[0] == 0
    f.write_text('{"version":1,"partitions":[{"topic":"bar","partition":1,"replicas":[2,3]}]}')
    assert planner_cli(*verify, "--exit-code")[0] == 0


def test_check_execute_of_a_decommission_knows_the_leaving_brokers(tmp_path, planner_cli_here):
    # without --leaving-brokers the emptied broker counts as a target: "replica spread 1 -> 59"; with it, the figures
    # are over the brokers that stay (rack eu-west-1c keeps only broker 5, which takes a replica of most partitions)
    six = str(ROOT / "topologies" / "six-brokers.yaml")
    plan = tmp_path / "plan"
    assert planner_cli_here("reassign", "decommission", six, "--brokers", "6", "--output-dir", str(plan))[0] == 0
    check = ("reassign", "check-execute", six, "--reassignment-json-file", str(plan / "proposed.json"))
    code, out, err = planner_cli_here(*check)
    assert (code, err) == (0, "") and "  replica spread:                 1 -> 59\n" in out
    code, out, err = planner_cli_here(*check, "--leaving-brokers", "6")
    assert (code, err) == (0, "")
    assert "  replica spread:                 1 -> 24\n" in out
    assert "\n6         eu-west-1c  online, leaving  33 -> 0 " in out
    code, _, err = planner_cli_here(*check, "--leaving-brokers", "5")
    assert (code, err) == (0, "warning: leaving broker 5 still holds 35 replica(s) after the reassignment\n")
    assert planner_cli_here(*check, "--leaving-brokers", "9") == (
        2,
        "",
        "error: --leaving-brokers: unknown broker(s) 9 (brokers: 1,2,3,4,5,6)\n",
    )


def test_moving_under_replicated_partitions_is_noted(planner_cli_here):
    # clickstream-0 has ISR 1,3 of 1,2,3; clickstream-3 no leader (broker 4 offline: the goals' note says so)
    code, out, err = planner_cli_here(
        "reassign", "decommission", str(ROOT / "tests" / "data" / "under-replicated.yaml"), "--brokers", "1"
    )
    assert (code, err) == (0, "")
    assert [x for x in out.splitlines() if x.startswith("note:")] == [
        "note: 1 moved partition(s) have no leader now (clickstream-3): their new replicas cannot copy data, so "
        "those reassignments will not complete until a replica comes back",
        "note: 1 moved partition(s) are under-replicated now: clickstream-0 (replicas 1,2,3, ISR 1,3); they stay so "
        "while their new replicas copy from the leader, and a move completes only when every replica it keeps or "
        "adds is in the ISR",
    ]
