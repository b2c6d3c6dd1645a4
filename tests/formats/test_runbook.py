"""A plan folder's RUNBOOK.md: every command in order, each valid for Kafka's tools, each file checked as Kafka's
--execute checks it against the cluster it will meet (the batches before it applied); --batch-bytes, the canary."""

import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCALE_OUT = str(ROOT / "examples" / "reassign" / "scale-out.yaml")
SIZES = str(ROOT / "examples" / "reassign" / "log-dirs.json")

# The options each action of kafka-reassign-partitions.sh takes (ReassignPartitionsCommand.java validateAndParseArgs:
# the action's permitted options, --bootstrap-server and --reassignment-json-file required), and of
# kafka-leader-election.sh (LeaderElectionCommand.java: --bootstrap-server and --election-type required, one of
# --path-to-json-file, --topic, --all-topic-partitions).
REASSIGN_ACTIONS = {
    "--execute": {"--throttle", "--replica-alter-log-dirs-throttle", "--timeout", "--additional"},
    "--verify": {"--preserve-throttles"},
    "--cancel": {"--preserve-throttles", "--timeout"},
}
WITH_VALUE = {
    "--bootstrap-server",
    "--reassignment-json-file",
    "--throttle",
    "--replica-alter-log-dirs-throttle",
    "--timeout",
    "--command-config",
    "--election-type",
    "--path-to-json-file",
}


def _options(words):
    opts, i = {}, 0
    while i < len(words):
        w = words[i]
        assert w.startswith("--"), words
        if w in WITH_VALUE:
            opts[w] = words[i + 1]
            i += 2
        else:
            opts[w] = None
            i += 1
    return opts


def kafka_command(line):
    """(tool, action, options) of one runbook line, asserting Kafka's tool would accept its options."""
    words = shlex.split(line)
    tool, opts = words[0], _options(words[1:])
    assert "--bootstrap-server" in opts
    if tool == "kafka-reassign-partitions.sh":
        (action,) = [o for o in opts if o in REASSIGN_ACTIONS]
        assert "--reassignment-json-file" in opts
        extra = set(opts) - {action, "--bootstrap-server", "--reassignment-json-file", "--command-config"}
        assert extra <= REASSIGN_ACTIONS[action], line
        if "--throttle" in opts:
            assert int(opts["--throttle"]) >= 1
        return tool, action, opts
    assert tool == "kafka-leader-election.sh"
    assert opts["--election-type"] == "PREFERRED" and set(opts) == {
        "--bootstrap-server",
        "--election-type",
        "--path-to-json-file",
    }
    return tool, "elect", opts


def commands(runbook: str):
    return [kafka_command(x.strip()) for x in runbook.splitlines() if x.strip().startswith("kafka-")]


def _plan(planner_cli_here, out_dir, *extra):
    code, out, err = planner_cli_here(
        "reassign", "rebalance", SCALE_OUT, "--sizes", SIZES, "--output-dir", str(out_dir), *extra
    )
    assert code == 0, err
    return out


RUNBOOK = """\
# Runbook: rebalance

6 partitions in 4 batches, 43.0 GiB; throttle 50000000 B/s, about 12m 10s in all. Run each step in order from this \
folder, with the tools of Kafka 2.6 or later (`bin/` of a Kafka release; add `--command-config FILE` to every command \
on a secured cluster).

## 1. Batch 1 of 4 (canary): 1 partition, 1.0 GiB, about 21s at the throttle

```sh
kafka-reassign-partitions.sh --bootstrap-server b1:9092 --reassignment-json-file proposed-001.json --execute \
--throttle 50000000
```

## 2. Verify batch 1

```sh
kafka-reassign-partitions.sh --bootstrap-server b1:9092 --reassignment-json-file proposed-001.json --verify
```

Repeat until every partition says `Reassignment of partition … is completed.` (`is complete.` before 3.3); the last \
run also clears the throttles.

## 3. Batch 2 of 4: 2 partitions, 3.0 GiB, about 1m 04s at the throttle

```sh
kafka-reassign-partitions.sh --bootstrap-server b1:9092 --reassignment-json-file proposed-002.json --execute \
--throttle 50000000
```
"""


def test_runbook_of_a_batched_throttled_plan(planner_cli_here, tmp_path):
    out = _plan(
        planner_cli_here, tmp_path / "plan", "--throttle", "50MB", "--batch-size", "2", "--bootstrap-server", "b1:9092"
    )
    book = (tmp_path / "plan" / "RUNBOOK.md").read_text()
    assert book.startswith(RUNBOOK)
    assert book.endswith(
        "## 8. Verify batch 4\n\n```sh\n"
        "kafka-reassign-partitions.sh --bootstrap-server b1:9092 --reassignment-json-file proposed-004.json --verify\n"
        "```\n\n"
        "Repeat until every partition says `Reassignment of partition … is completed.` (`is complete.` before 3.3); "
        "the last run also clears the throttles.\n\n"
        "## 9. Elect the preferred leaders\n\n```sh\n"
        "kafka-leader-election.sh --bootstrap-server b1:9092 --election-type PREFERRED --path-to-json-file "
        "leader-election.json\n```\n\n"
        "Every partition listed says it was elected or `Valid replica already elected`.\n\n"
        "## Rollback\n\n"
        "To undo the plan at any point (current.json holds every partition's replicas before step 1):\n\n"
        "1. Cancel the batch in progress (here the first; give the file of the batch you executed last):\n\n"
        "   ```sh\n"
        "   kafka-reassign-partitions.sh --bootstrap-server b1:9092 --reassignment-json-file proposed-001.json "
        "--cancel\n   ```\n\n"
        "   Kafka reverts the partitions of that batch that had not completed.\n\n"
        "2. Restore the replicas as they were before the first batch:\n\n"
        "   ```sh\n"
        "   kafka-reassign-partitions.sh --bootstrap-server b1:9092 --reassignment-json-file current.json --execute "
        "--throttle 50000000\n   ```\n\n"
        "3. Verify the rollback:\n\n"
        "   ```sh\n"
        "   kafka-reassign-partitions.sh --bootstrap-server b1:9092 --reassignment-json-file current.json --verify\n"
        "   ```\n\n"
        "   Repeat until every partition says `Reassignment of partition … is completed.` (`is complete.` before "
        "3.3); the last run also clears the throttles.\n"
    )
    lines = out.splitlines()
    start = lines.index(
        "Batches:                4 (the first a one-partition canary; --no-canary cuts them without it)"
    )
    assert lines[start + 1 : start + 5] == [
        "  batch 1: 1 partition, 1.0 GiB, about 21s at the throttle",
        "  batch 2: 2 partitions, 3.0 GiB, about 1m 04s at the throttle",
        "  batch 3: 2 partitions, 21.0 GiB, about 4m 18s at the throttle",
        "  batch 4: 1 partition, 18.0 GiB, about 6m 27s at the throttle",
    ]
    assert "replication.throttled.replicas=" not in out
    assert (
        "Throttled replicas on 2 topics (leader/follower.replication.throttled.replicas): throttles.txt of --output-dir"
    ) in out
    assert (tmp_path / "plan" / "throttles.txt").read_text().splitlines()[-1] == (
        "topic payments: follower.replication.throttled.replicas=1:4,1:5,1:6,2:4,2:5,2:6,5:4,5:5,5:6"
    )


def test_every_runbook_command_is_valid_and_its_files_pass_kafkas_execute_checks(planner_cli_here, tmp_path):
    folder = tmp_path / "plan"
    _plan(planner_cli_here, folder, "--throttle", "50MB", "--batch-bytes", "10GiB")
    steps = commands((folder / "RUNBOOK.md").read_text())
    batches = [o["--reassignment-json-file"] for _, a, o in steps if a == "--execute"]
    assert batches == [f"proposed-00{i}.json" for i in range(1, len(batches))] + ["current.json"]
    # in order: execute then verify of each batch, the election, then the rollback's cancel, execute, verify
    assert [(a, o.get("--reassignment-json-file") or o["--path-to-json-file"]) for _, a, o in steps] == [
        x for b in batches[:-1] for x in (("--execute", b), ("--verify", b))
    ] + [
        ("elect", "leader-election.json"),
        ("--cancel", "proposed-001.json"),
        ("--execute", "current.json"),
        ("--verify", "current.json"),
    ]
    # each batch passes --execute's checks against the cluster as the batches before it left it
    state = SCALE_OUT
    for i, name in enumerate(batches[:-1]):
        code, _, err = planner_cli_here(
            "reassign", "check-execute", state, "--reassignment-json-file", str(folder / name)
        )
        assert code == 0, err
        after = str(tmp_path / f"after-{i}.yaml")
        code, _, err = planner_cli_here(
            "reassign", "apply", state, "--reassignment-json-file", str(folder / name), "--write", after
        )
        assert code == 0, err
        state = after
    # ... and the rollback, against the cluster the whole plan leaves
    code, _, err = planner_cli_here(
        "reassign", "check-execute", state, "--reassignment-json-file", str(folder / "current.json")
    )
    assert code == 0, err


@pytest.mark.parametrize(
    "extra, figures",
    [
        # a canary first (the one partition copying the least), then at most 10 GiB each
        (
            ("--batch-bytes", "10GiB"),
            [
                "  batch 1: 1 partition, 1.0 GiB",
                "  batch 2: 2 partitions, 3.0 GiB",
                "  batch 3: 1 partition, 9.0 GiB",
                "  batch 4: 1 partition, 12.0 GiB",
                "  batch 5: 1 partition, 18.0 GiB",
            ],
        ),
        (
            ("--batch-bytes", "10GiB", "--no-canary"),
            [
                "  batch 1: 3 partitions, 4.0 GiB",
                "  batch 2: 1 partition, 9.0 GiB",
                "  batch 3: 1 partition, 12.0 GiB",
                "  batch 4: 1 partition, 18.0 GiB",
            ],
        ),
        # both limits hold (20 GB is 18.6 GiB: 12 + 12 GiB would pass it; --batch-size 2 cuts the first two)
        (
            ("--batch-bytes", "20GB", "--batch-size", "2", "--no-canary"),
            [
                "  batch 1: 2 partitions, 1.0 GiB",
                "  batch 2: 2 partitions, 12.0 GiB",
                "  batch 3: 1 partition, 12.0 GiB",
                "  batch 4: 1 partition, 18.0 GiB",
            ],
        ),
    ],
)
def test_batch_bytes_and_the_canary(planner_cli_here, extra, figures):
    code, out, err = planner_cli_here("reassign", "rebalance", SCALE_OUT, "--sizes", SIZES, *extra)
    assert code == 0, err
    lines = out.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("Batches:"))
    assert lines[start + 1 : start + 1 + len(figures)] == figures
    assert not lines[start + 1 + len(figures)].startswith("  batch")


def test_a_throttle_taking_more_than_a_day_is_warned(planner_cli_here, tmp_path):
    out = _plan(planner_cli_here, tmp_path / "plan", "--throttle", "100KiB")
    assert "Estimated time at that rate: 87h 22m 53s\n" in out
    assert (
        "warning: more than a day at 102400 B/s: check the throttle's unit (MB = 10^6, MiB = 2^20 bytes per second)\n"
    ) in out
    assert (
        "**warning: the moves take about 87h 22m 53s at 102400 B/s, more than a day: check the throttle's unit"
        in (tmp_path / "plan" / "RUNBOOK.md").read_text()
    )


@pytest.mark.parametrize(
    "text, rate",
    [("50MB", 50_000_000), ("50mb", 50_000_000), ("48MiB", 50_331_648), ("100MiB/s", 104_857_600),
     ("1.5GB", 1_500_000_000), ("2.5 kb/s", 2_500), ("0.5KiB", 512)],
)  # fmt: skip
def test_one_rate_parser(text, rate):
    from planner.model import parse_rate

    assert parse_rate(text, "--throttle") == rate


def test_the_topology_hosts_are_the_bootstrap_server_else_a_variable(planner_cli_here, tmp_path):
    _plan(planner_cli_here, tmp_path / "plan")
    book = (tmp_path / "plan" / "RUNBOOK.md").read_text()
    assert "## 1. Name the cluster\n\nThe topology names no broker host: set one (host:port).\n\n" in book
    assert "```sh\nexport BOOTSTRAP=host:9092\n```" in book
    assert (
        'kafka-reassign-partitions.sh --bootstrap-server "$BOOTSTRAP" --reassignment-json-file proposed.json '
        "--execute\n"
    ) in book
