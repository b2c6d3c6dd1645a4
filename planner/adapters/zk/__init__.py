"""Live ZooKeeper-mode Kafka clusters through kazoo (`zk://host:port[,host:port...][/chroot]`).

One module per concern: `url` (the URL and connection options), `session` (a kazoo session with a deadline and
clear errors), `znodes` (decoding Kafka's znodes, pure; `Znodes` -> `snapshot_of` feeds decoded znodes without a
server), `snapshot` (a consistent, watch-checked read of a live cluster) and `texts` (what Kafka's ZooKeeper-era
tools printed). kazoo is imported only inside the functions that talk to ZooKeeper.
"""

from planner.adapters.zk.session import Session, connect
from planner.adapters.zk.snapshot import MAX_READ_ATTEMPTS, Progress, read_cluster, read_consistent, read_snapshot
from planner.adapters.zk.texts import election_in_progress_message, election_lines, scala_set, tp_list, verify_lines
from planner.adapters.zk.url import (
    AUTH_ENV,
    CA_FILE_ENV,
    CERT_FILE_ENV,
    DEFAULT_PORT,
    KEY_FILE_ENV,
    TIMEOUT_ENV,
    ZkOptions,
    ZkUrl,
    auth_from,
    options_from_env,
    parse_url,
)
from planner.adapters.zk.znodes import (
    ELECTION_PATH,
    JUTE_MAXBUFFER,
    REASSIGN_PATH,
    TopicZnode,
    ZkSnapshot,
    Znodes,
    build_cluster,
    check_create_size,
    decode_broker,
    decode_config,
    decode_reassignment,
    decode_state,
    decode_topic,
    encode_election,
    snapshot_of,
)

__all__ = [
    "AUTH_ENV",
    "CA_FILE_ENV",
    "CERT_FILE_ENV",
    "DEFAULT_PORT",
    "ELECTION_PATH",
    "JUTE_MAXBUFFER",
    "KEY_FILE_ENV",
    "MAX_READ_ATTEMPTS",
    "Progress",
    "REASSIGN_PATH",
    "Session",
    "TIMEOUT_ENV",
    "TopicZnode",
    "ZkOptions",
    "ZkSnapshot",
    "ZkUrl",
    "Znodes",
    "auth_from",
    "build_cluster",
    "check_create_size",
    "connect",
    "decode_broker",
    "decode_config",
    "decode_reassignment",
    "decode_state",
    "decode_topic",
    "election_in_progress_message",
    "election_lines",
    "encode_election",
    "options_from_env",
    "parse_url",
    "read_cluster",
    "read_consistent",
    "read_snapshot",
    "scala_set",
    "snapshot_of",
    "tp_list",
    "verify_lines",
]
