"""`reassign verify` is Kafka's --verify; the --execute checks are `reassign check-execute`; the default placer keeps
off fenced brokers."""

PLAN = '{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[2,1]}]}'


def test_verify_is_kafkas_verify(planner_cli_here, topo, tmp_path):
    plan = tmp_path / "p.json"
    plan.write_text(PLAN)
    # ReassignPartitionsCommand.partitionReassignmentStatesMessage
    assert planner_cli_here("reassign", "verify", topo, "--reassignment-json-file", str(plan)) == (
        0,
        "Status of partition reassignment:\n"
        "There is no active reassignment of partition bar-0, but replica set is 1,2 rather than 2,1.\n\n",
        "",
    )
    code, out, err = planner_cli_here("reassign", "check-execute", topo, "--reassignment-json-file", str(plan))
    assert (code, err) == (0, "")
    assert out.startswith(f"Plan: check-execute {plan}: valid\n")


def test_default_placer_keeps_off_fenced_brokers(planner_cli_here, tmp_path):
    topo = tmp_path / "f.yaml"
    topo.write_text("brokers:\n  - {id: 1}\n  - {id: 2}\n  - {id: 3}\n  - {id: 4, state: fenced}\n")
    code, out, err = planner_cli_here(
        "create-topic",
        str(topo),
        "--topic",
        "x",
        "--partitions",
        "4",
        "--replication-factor",
        "3",
        "--format",
        "replica-assignment",
    )
    assert (code, out) == (0, "1:2:3,2:3:1,3:1:2,1:3:2\n")
