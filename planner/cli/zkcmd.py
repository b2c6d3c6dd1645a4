"""`kafka-planner zk …`: live ZooKeeper-mode clusters: export, submit, elect-leaders, status.

Computing lives in `planner.adapters.zk` (the kazoo adapter) and `planner.formats.kafka_json` (Kafka's reassignment
JSON);
this module parses arguments, orders the steps and prints. kazoo loads only inside the commands.
"""

from __future__ import annotations

import sys
from typing import Optional

import typer

from planner.adapters.files import read_option_file
from planner.adapters.source import with_offline
from planner.cli.app import app
from planner.cli.common import OFFLINE, TOPOLOGY_OUTPUT
from planner.formats.tables import load_change_lines
from planner.model import PlannerError, tp_sort_key

zk_app = typer.Typer(
    no_args_is_help=True,
    help="Live ZooKeeper-mode clusters (Kafka 1.x-3.x): export, submit a reassignment, elect leaders, status.",
)
app.add_typer(zk_app, name="zk")

URL = typer.Argument(..., metavar="ZK_URL", help="zk://host:port[,host:port...][/chroot]")
TIMEOUT = typer.Option(
    10.0,
    "--zk-timeout",
    metavar="SECONDS",
    min=0.1,
    max=86400,
    envvar="KAFKA_PLANNER_ZK_TIMEOUT",
    help="Connection and read/write time limit (default 10).",
)
AUTH_FILE = typer.Option(
    None,
    "--zk-auth-file",
    metavar="FILE",
    help="File holding user:password for digest auth (else $KAFKA_PLANNER_ZK_AUTH).",
)
CA_FILE = typer.Option(
    None,
    "--zk-ca-file",
    metavar="FILE",
    envvar="KAFKA_PLANNER_ZK_CA_FILE",
    help="Use TLS, verifying the server with this CA bundle.",
)
CERT_FILE = typer.Option(
    None,
    "--zk-cert-file",
    metavar="FILE",
    envvar="KAFKA_PLANNER_ZK_CERT_FILE",
    help="TLS client certificate (with --zk-ca-file).",
)
KEY_FILE = typer.Option(
    None,
    "--zk-key-file",
    metavar="FILE",
    envvar="KAFKA_PLANNER_ZK_KEY_FILE",
    help="TLS client key (with --zk-ca-file).",
)
QUIET = typer.Option(False, "--quiet", "-q", help="No progress or statistics on stderr.")


def _opts(
    timeout: float, auth_file: Optional[str], ca_file: Optional[str], cert_file: Optional[str], key_file: Optional[str]
):
    from planner.adapters import zk

    if (cert_file or key_file) and not ca_file:
        raise PlannerError("--zk-cert-file/--zk-key-file need --zk-ca-file (TLS)")
    return zk.ZkOptions(
        timeout=timeout, auth=zk.auth_from(auth_file), ca_file=ca_file, cert_file=cert_file, key_file=key_file
    )


def _progress(quiet: bool, after: float = 1.0):
    """Progress lines on stderr, once the work has taken longer than `after` seconds (small reads stay silent)."""
    if quiet:
        return None
    import time

    start = time.monotonic()

    def report(message: str) -> None:
        if time.monotonic() - start >= after:
            print(message, file=sys.stderr, flush=True)

    return report


@zk_app.command("export")
def export(
    url: str = URL,
    output: Optional[str] = TOPOLOGY_OUTPUT,
    offline_brokers: Optional[str] = OFFLINE,
    zk_timeout: float = TIMEOUT,
    zk_auth_file: Optional[str] = AUTH_FILE,
    zk_ca_file: Optional[str] = CA_FILE,
    zk_cert_file: Optional[str] = CERT_FILE,
    zk_key_file: Optional[str] = KEY_FILE,
    quiet: bool = QUIET,
) -> None:
    """Write the live cluster as a topology YAML file (partition sizes are not in ZooKeeper, so omitted)."""
    from planner.adapters import zk
    from planner.adapters.topology_yaml import dump_topology

    opts = _opts(zk_timeout, zk_auth_file, zk_ca_file, zk_cert_file, zk_key_file)
    snap = zk.read_snapshot(url, opts, _progress(quiet))
    cluster = with_offline(snap.cluster, offline_brokers)
    text = dump_topology(cluster)
    if output:
        from planner.adapters.files import write_text_atomic

        write_text_atomic(output, text, "--output")
        if not quiet:
            parts = sum(t.partition_count for t in cluster.topics)
            print(
                f"wrote {output}: {len(cluster.brokers)} brokers, {len(cluster.topics)} topics, {parts} partitions",
                file=sys.stderr,
            )
    else:
        sys.stdout.write(text)


def _refuse_log_dir_moves(moves, path: str) -> None:
    """A plan that moves replicas between log dirs (`log_dirs` other than "any"): ZooKeeper's reassignment znode
    carries no log dirs, so Kafka's tool refuses it over --zookeeper rather than drop them (2.6+
    `ReassignPartitionsCommand.scala` executeAssignment(zkClient, ...); ≤2.5 refused it too, asking for
    --bootstrap-server). Refused with Kafka's text, before anything is read or written."""
    if not moves:
        return
    (tp, broker), log_dir = min(moves.items(), key=lambda m: (tp_sort_key(m[0][0]), m[0][1]))
    more = f" (and {len(moves) - 1} more)" if len(moves) > 1 else ""
    raise PlannerError(
        "bootstrap-server needs to be provided when replica reassignments are present. "
        f"{path} moves {tp}'s replica on broker {broker} to log dir {log_dir}{more}, which a reassignment through "
        "ZooKeeper cannot do: 'kafka-planner kafka submit' makes it (AlterReplicaLogDirs). Nothing was written."
    )


@zk_app.command("submit")
def submit(
    url: str = URL,
    reassignment_json_file: str = typer.Option(
        ...,
        "--reassignment-json-file",
        metavar="FILE",
        help="Kafka's reassignment JSON (as kafka-reassign-partitions.sh takes).",
    ),
    execute: bool = typer.Option(False, "--execute", help="Create /admin/reassign_partitions. Without it: a dry run."),
    offline_brokers: Optional[str] = OFFLINE,
    zk_timeout: float = TIMEOUT,
    zk_auth_file: Optional[str] = AUTH_FILE,
    zk_ca_file: Optional[str] = CA_FILE,
    zk_cert_file: Optional[str] = CERT_FILE,
    zk_key_file: Optional[str] = KEY_FILE,
    quiet: bool = QUIET,
) -> None:
    """Start a reassignment the ZooKeeper way (/admin/reassign_partitions), after Kafka's checks against the live
    cluster.

    Prints the rollback JSON first. A dry run unless --execute.
    """
    from planner.adapters import zk
    from planner.formats import kafka_json as kj
    from planner.rebalance.reassignment import validate_reassignment

    opts = _opts(zk_timeout, zk_auth_file, zk_ca_file, zk_cert_file, zk_key_file)
    text = read_option_file(reassignment_json_file, "--reassignment-json-file")
    proposed = kj.parse_reassignment_json(text, reassignment_json_file)
    _refuse_log_dir_moves(kj.parse_log_dir_moves(text, reassignment_json_file), reassignment_json_file)
    zk.check_create_size(
        zk.parse_url(url).chroot, zk.REASSIGN_PATH, kj.render_reassign_znode(proposed), reassignment_json_file
    )
    with zk.connect(url, opts) as session:
        snap = zk.read_consistent(session, _progress(quiet))
        cluster = with_offline(snap.cluster, offline_brokers)
        validate_reassignment(cluster, proposed)
        if snap.reassigning is not None:
            raise PlannerError("There is an existing assignment running.")
        znode = kj.render_reassign_znode(proposed)
        sys.stdout.write(kj.current_assignment_text(proposed, cluster.assignment()) + "\n")
        if execute:
            session.create(zk.REASSIGN_PATH, znode, lambda _current: "There is an existing assignment running.")
            sys.stdout.write("Successfully started reassignment of partitions.\n")
        else:
            sys.stdout.write(
                f"Dry run: would create {zk.REASSIGN_PATH} with\n{znode}\n"
                "Nothing was written; add --execute to start the reassignment.\n"
            )
    sys.stdout.flush()
    if not quiet:
        moved = sum(1 for tp, r in proposed.items() if cluster.assignment().get(tp) != tuple(r))
        print(load_change_lines(cluster, cluster.with_assignment(proposed), moved), file=sys.stderr)


@zk_app.command("elect-leaders")
def elect_leaders(
    url: str = URL,
    path_to_json_file: str = typer.Option(
        ..., "--path-to-json-file", metavar="FILE", help='{"partitions": [{"topic": "foo", "partition": 1}, ...]}'
    ),
    execute: bool = typer.Option(
        False, "--execute", help="Create /admin/preferred_replica_election. Without it: a dry run."
    ),
    offline_brokers: Optional[str] = OFFLINE,
    zk_timeout: float = TIMEOUT,
    zk_auth_file: Optional[str] = AUTH_FILE,
    zk_ca_file: Optional[str] = CA_FILE,
    zk_cert_file: Optional[str] = CERT_FILE,
    zk_key_file: Optional[str] = KEY_FILE,
    quiet: bool = QUIET,
) -> None:
    """Start a preferred leader election the ZooKeeper way (/admin/preferred_replica_election). A dry run unless
    --execute."""
    from planner.adapters import zk
    from planner.formats import kafka_json as kj
    from planner.leadership import cluster_states

    opts = _opts(zk_timeout, zk_auth_file, zk_ca_file, zk_cert_file, zk_key_file)
    wanted = kj.parse_election_json(read_option_file(path_to_json_file, "--path-to-json-file"), path_to_json_file)
    with zk.connect(url, opts) as session:
        snap = zk.read_consistent(session, _progress(quiet))
        cluster = with_offline(snap.cluster, offline_brokers)
        existing = {p.tp for p in cluster.partitions()}
        valid = [tp for tp in wanted if tp in existing]
        skipped = [tp for tp in wanted if tp not in existing]
        skip_lines = zk.election_lines(valid, skipped)[2:]
        if not valid:  # Kafka would create an empty election; refuse instead
            sys.stdout.write("".join(line + "\n" for line in skip_lines))
            raise PlannerError("Preferred replica election data is empty")
        znode = zk.encode_election(valid)
        if execute:
            session.create(zk.ELECTION_PATH, znode, lambda current: zk.election_in_progress_message(url, current))
            sys.stdout.write("".join(line + "\n" for line in zk.election_lines(valid, skipped)))
        else:
            if snap.electing:
                raise PlannerError(zk.election_in_progress_message(url, session.get(zk.ELECTION_PATH)))
            sys.stdout.write(
                f"Dry run: would create {zk.ELECTION_PATH} with\n{znode}\n"
                "Nothing was written; add --execute to start the election.\n"
            )
            sys.stdout.write("".join(line + "\n" for line in skip_lines))
    sys.stdout.flush()
    if not quiet:
        states = cluster_states(cluster)
        by_topic = {t.name: dict(zip((p.id for p in t.partitions), states[t.name])) for t in cluster.topics}
        already = sum(
            1
            for tp in valid
            if by_topic[tp.topic][tp.partition].leader == cluster.topic(tp.topic).partition(tp.partition).replicas[0]
        )
        print(
            f"{len(valid)} partition(s): {already} already led by the preferred replica, "
            f"{len(valid) - already} to move leadership (if the preferred replica is alive and in the ISR)",
            file=sys.stderr,
        )


@zk_app.command("status")
def status(
    url: str = URL,
    reassignment_json_file: str = typer.Option(
        ..., "--reassignment-json-file", metavar="FILE", help="The reassignment JSON that was submitted."
    ),
    kafka_version: Optional[str] = typer.Option(
        None,
        "--kafka-version",
        metavar="V",
        help="Print as this release's --verify does (e.g. 2.4, 2.8, 3.3). Default: newest.",
    ),
    zk_timeout: float = TIMEOUT,
    zk_auth_file: Optional[str] = AUTH_FILE,
    zk_ca_file: Optional[str] = CA_FILE,
    zk_cert_file: Optional[str] = CERT_FILE,
    zk_key_file: Optional[str] = KEY_FILE,
    quiet: bool = QUIET,
) -> None:
    """Compare a reassignment with the live cluster, partition by partition: kafka-reassign-partitions --verify
    lines."""
    from planner.adapters import zk
    from planner.formats import kafka_json as kj
    from planner.formats.describe import parse_version

    version = parse_version(kafka_version)
    opts = _opts(zk_timeout, zk_auth_file, zk_ca_file, zk_cert_file, zk_key_file)
    entries = kj.parse_reassignment_entries(
        read_option_file(reassignment_json_file, "--reassignment-json-file"), reassignment_json_file
    )
    targets = {e.tp: e.replicas for e in entries}
    snap = zk.read_snapshot(url, opts, _progress(quiet))
    sys.stdout.write("".join(line + "\n" for line in zk.verify_lines(snap, targets, version)))
