"""`kafka-planner zk …`: live ZooKeeper-mode clusters: export, submit, elect-leaders, status.

Computing lives in `planner.zk` (the kazoo adapter) and `planner.formats.kafka_json` (Kafka's reassignment JSON);
this module parses arguments, orders the steps and prints. kazoo loads only inside the commands.
"""
from __future__ import annotations

import sys
from typing import Optional

import typer

from planner.cli.app import app
from planner.model import PlannerError

zk_app = typer.Typer(
    no_args_is_help=True,
    help="Live ZooKeeper-mode clusters (Kafka 1.x-3.x): export, submit a reassignment, elect leaders, status.",
)
app.add_typer(zk_app, name="zk")

URL = typer.Argument(..., metavar="ZK_URL", help="zk://host:port[,host:port...][/chroot]")
TIMEOUT = typer.Option(10.0, "--zk-timeout", metavar="SECONDS", min=0.1,
                       help="Connection and read/write time limit (default 10).")
AUTH_FILE = typer.Option(None, "--zk-auth-file", metavar="FILE",
                         help="File holding user:password for digest auth (else $KAFKA_PLANNER_ZK_AUTH).")
CA_FILE = typer.Option(None, "--zk-ca-file", metavar="FILE", help="Use TLS, verifying the server with this CA bundle.")
CERT_FILE = typer.Option(None, "--zk-cert-file", metavar="FILE", help="TLS client certificate (with --zk-ca-file).")
KEY_FILE = typer.Option(None, "--zk-key-file", metavar="FILE", help="TLS client key (with --zk-ca-file).")
OFFLINE = typer.Option(None, "--offline-brokers", metavar="IDS", help="Simulate these brokers failing, e.g. 2,3.")
QUIET = typer.Option(False, "--quiet", "-q", help="No progress or statistics on stderr.")


def _opts(timeout: float, auth_file: Optional[str], ca_file: Optional[str], cert_file: Optional[str],
          key_file: Optional[str]):
    from planner import zk

    if (cert_file or key_file) and not ca_file:
        raise PlannerError("--zk-cert-file/--zk-key-file need --zk-ca-file (TLS)")
    return zk.ZkOptions(timeout=timeout, auth=zk.auth_from(auth_file), ca_file=ca_file, cert_file=cert_file,
                        key_file=key_file)


def _progress(quiet: bool):
    if quiet:
        return None
    return lambda message: print(message, file=sys.stderr, flush=True)


def _read_text(path: str, option: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        raise PlannerError(f"{option} {path}: no such file") from None
    except OSError as exc:
        raise PlannerError(f"{option} {path}: cannot read: {exc.strerror}") from None


@zk_app.command("export")
def export(
    url: str = URL,
    output: Optional[str] = typer.Option(None, "-o", "--output", metavar="FILE",
                                         help="Write the topology here (atomically) instead of stdout."),
    offline_brokers: Optional[str] = OFFLINE,
    zk_timeout: float = TIMEOUT, zk_auth_file: Optional[str] = AUTH_FILE, zk_ca_file: Optional[str] = CA_FILE,
    zk_cert_file: Optional[str] = CERT_FILE, zk_key_file: Optional[str] = KEY_FILE, quiet: bool = QUIET,
) -> None:
    """Write the live cluster as a topology YAML file (partition sizes are not in ZooKeeper, so omitted)."""
    from planner import zk
    from planner.formats.topology import dump_topology
    from planner.model import OFFLINE as OFF, parse_id_list

    opts = _opts(zk_timeout, zk_auth_file, zk_ca_file, zk_cert_file, zk_key_file)
    snap = zk.read_snapshot(url, opts, _progress(quiet))
    cluster = snap.cluster
    if offline_brokers:
        cluster = cluster.with_broker_states({i: OFF for i in parse_id_list(offline_brokers, "--offline-brokers")})
    text = dump_topology(cluster)
    if output:
        from planner.formats.atomic import write_text_atomic

        write_text_atomic(output, text)
        if not quiet:
            parts = sum(t.partition_count for t in cluster.topics)
            print(f"wrote {output}: {len(cluster.brokers)} brokers, {len(cluster.topics)} topics, {parts} partitions",
                  file=sys.stderr)
    else:
        sys.stdout.write(text)
