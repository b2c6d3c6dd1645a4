"""Kafka's JSON formats for reassignment tooling, parsed and rendered exactly as Kafka's tools do
(`tools/src/main/java/org/apache/kafka/tools/reassign/ReassignPartitionsCommand.java`,
`tools/src/main/java/org/apache/kafka/tools/LeaderElectionCommand.java`).

* reassignment JSON (`kafka-reassign-partitions.sh --reassignment-json-file`, and what it prints as current/proposed),
* topics-to-move JSON (`--topics-to-move-json-file` for `--generate`),
* leader-election JSON (`kafka-leader-election.sh --path-to-json-file`),
* the JSON `kafka-log-dirs.sh --describe` prints (replica sizes).

Texts and order follow trunk `tools/.../reassign/ReassignPartitionsCommand.java`: parsing
(`parsePartitionReassignmentData`),
then `parseExecuteAssignmentArgs`, then the execute-time checks (`--additional`, `verifyBrokerIds`,
`getReplicaAssignmentForPartitions`). Where Kafka iterates a Java HashSet/HashMap to pick the first offender or to print
a set, the Java iteration order is reproduced (`planner.java.hashmap_order`). Pure: no I/O.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Iterable, Mapping

from planner.java import duplicates
from planner.model import Cluster, PlannerError, TopicPartition, tp_hash, tp_sort_key
from planner.rebalance.reassignment import LogDirMoveState, PartitionReassignmentState, check_entries

ANY_LOG_DIR = "any"
EARLIEST_VERSION = 1

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


# -- Java-flavoured helpers ----------------------------------------------------------------------------------------
def java_list(items: Iterable) -> str:
    """`java.util.List.toString` / `Set.toString`: `[1, 2]`."""
    return "[" + ", ".join(str(i) for i in items) + "]"


def _node(value) -> str:
    """Jackson's `JsonNode.toString` (compact JSON) of a parsed value."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def too_deep_json(source: str) -> str:
    """JSON nested deeper than Python's parser goes (Jackson, which Kafka's tools use, stops at 1000 levels:
    StreamReadConstraints.getMaxNestingDepth())."""
    return f"{source}: JSON nested too deep (over {sys.getrecursionlimit()} levels)"


def _loads(text: str, source: str):
    """Parse JSON like Jackson; a syntax error becomes one line naming the file, line and column."""
    try:
        return json.loads(text)
    except RecursionError:
        raise PlannerError(too_deep_json(source)) from None
    except json.JSONDecodeError as exc:
        pos = exc.pos
        if pos >= len(text.rstrip()):
            head = "Unexpected end-of-input"
        else:
            head = f"Unexpected character ({_char_desc(text[pos])})"
        msg = exc.msg[:-3] if exc.msg.endswith(" at") else exc.msg
        raise PlannerError(f"{head}: {msg} at [Source: {source}; line: {exc.lineno}, column: {exc.colno}]") from None


def _char_desc(ch: str) -> str:
    """Jackson's ParserMinimalBase._getCharDesc: control characters by code, so the message stays one line."""
    code = ord(ch)
    if code < 32 or 127 <= code <= 159:
        return f"(CTRL-CHAR, code {code})"
    if code > 255:
        return f"'{ch}' (code {code} / 0x{code:x})"
    return f"'{ch}' (code {code})"


def _object(value, source: str) -> dict:
    if not isinstance(value, dict):
        raise PlannerError(f"Expected JSON object, received {_node(value)} ({source})")
    return value


def _array(value, source: str) -> list:
    if not isinstance(value, list):
        raise PlannerError(f"Expected JSON array, received {_node(value)} ({source})")
    return value


def _field(obj: dict, name: str, source: str):
    if name not in obj:
        raise PlannerError(f"No such field exists: `{name}` ({source})")
    return obj[name]


def _int(value, source: str) -> int:
    """`DecodeInteger`: only a JSON integer in int32 range (Jackson IntNode)."""
    if isinstance(value, bool) or not isinstance(value, int) or not (_INT_MIN <= value <= _INT_MAX):
        raise PlannerError(f"Expected `Integer` value, received {_node(value)} ({source})")
    return value


def _str(value, source: str) -> str:
    if not isinstance(value, str):
        raise PlannerError(f"Expected `String` value, received {_node(value)} ({source})")
    return value


def _int_list(value, source: str) -> list[int]:
    if not isinstance(value, list):
        raise PlannerError(f"Expected `JSON array` value, received {_node(value)} ({source})")
    return [_int(v, source) for v in value]


def _str_list(value, source: str) -> list[str]:
    if not isinstance(value, list):
        raise PlannerError(f"Expected `JSON array` value, received {_node(value)} ({source})")
    return [_str(v, source) for v in value]


def _version(obj: dict, source: str) -> int:
    version = obj.get("version")
    return EARLIEST_VERSION if version is None and "version" not in obj else _int(version, source)


# -- reassignment JSON ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReassignmentEntry:
    tp: TopicPartition
    replicas: tuple[int, ...]
    log_dirs: tuple[str, ...]


def parse_reassignment_entries(text: str, source: str) -> list[ReassignmentEntry]:
    """`parsePartitionReassignmentData`: every entry in file order, duplicates kept, only the log-dir size check."""
    root = _object(_loads(text, source), source)
    version = _version(root, source)
    if version != 1:
        raise PlannerError(f"Not supported version field value {version}")
    entries: list[ReassignmentEntry] = []
    if "partitions" not in root:
        return entries
    for item in _array(root["partitions"], source):
        fields = _object(item, source)
        topic = _str(_field(fields, "topic", source), source)
        partition = _int(_field(fields, "partition", source), source)
        replicas = _int_list(_field(fields, "replicas", source), source)
        if "log_dirs" in fields:
            log_dirs = _str_list(fields["log_dirs"], source)
        else:
            log_dirs = [ANY_LOG_DIR] * len(replicas)
        tp = TopicPartition(topic, partition)
        if len(replicas) != len(log_dirs):
            raise PlannerError(
                f"Size of replicas list {java_list(replicas)} is different from size of log dirs list "
                f"{java_list(log_dirs)} for partition {tp}"
            )
        entries.append(ReassignmentEntry(tp, tuple(replicas), tuple(log_dirs)))
    return entries


def parse_reassignment_json(text: str, source: str) -> dict[TopicPartition, tuple[int, ...]]:
    """`--reassignment-json-file` as `--execute` reads it: parsed and checked (`parsePartitionReassignmentData`, then
    `parseExecuteAssignmentArgs`), file order kept."""
    entries = parse_reassignment_entries(text, source)
    check_entries([(e.tp, e.replicas) for e in entries])
    return {e.tp: e.replicas for e in entries}


def parse_log_dir_moves(text: str, source: str) -> dict[tuple[TopicPartition, int], str]:
    """The replica → log dir moves a reassignment JSON asks for (entries whose log dir is not "any")."""
    moves = {}
    for e in parse_reassignment_entries(text, source):
        for broker, log_dir in zip(e.replicas, e.log_dirs):
            if log_dir != ANY_LOG_DIR:
                moves[(e.tp, broker)] = log_dir
    return moves


def render_reassignment_json(
    assignment: Mapping[TopicPartition, Iterable[int]],
    log_dirs: Mapping[tuple[TopicPartition, int], str] | None = None,
) -> str:
    """`formatAsReassignmentJson`: compact, partitions sorted by topic then partition, `log_dirs` "any" unless known.

    No trailing newline (Kafka prints it with println).
    """
    log_dirs = log_dirs or {}
    names: dict[str, bytes] = {}  # each topic's sort key, computed once (a plan may hold a million partitions)

    def key(t) -> tuple[bytes, int]:
        name = t[0]
        if name not in names:
            names[name] = tp_sort_key(TopicPartition(name, 0))[0]
        return names[name], t[1]

    if not log_dirs:  # every log dir "any": each partition written as _node writes it, its topic's text made once
        text: dict[str, str] = {}
        rows = []
        for tp in sorted(assignment, key=key):
            name = text.get(tp[0])
            if name is None:
                name = text[tp[0]] = '{"topic":' + _node(tp[0]) + ',"partition":'
            replicas = [int(r) for r in assignment[tp]]
            rows.append(f'{name}{int(tp[1])},"replicas":[{",".join(map(str, replicas))}],{_ANY[len(replicas)]}')
        return '{"version":1,"partitions":[' + ",".join(rows) + "]}"
    parts = []
    for tp in sorted(assignment, key=key):
        replicas = [int(r) for r in assignment[tp]]
        tp = TopicPartition(*tp)
        dirs = [log_dirs.get((tp, r), ANY_LOG_DIR) for r in replicas]
        parts.append({"topic": tp.topic, "partition": tp.partition, "replicas": replicas, "log_dirs": dirs})
    return _node({"version": 1, "partitions": parts})


class _AnyDirs(dict):
    """`"log_dirs":["any",...]}` for n replicas, made on first use."""

    def __missing__(self, n: int) -> str:
        self[n] = text = '"log_dirs":' + _node([ANY_LOG_DIR] * n) + "}"
        return text


_ANY = _AnyDirs()


def render_reassignment_json_matrix(topic: str, matrix, first_pid: int = 0) -> str:
    """`render_reassignment_json` of one topic's partitions first_pid.. whose replicas are the rows of `matrix`
    (partitions × RF broker ids), rendered at once (`columns.render_rows`); `log_dirs` all "any"."""
    import numpy as np

    from planner.formats.columns import render_rows

    count, rf = matrix.shape
    head = '{"topic":' + _node(topic) + ',"partition":'
    pieces: list = [head, np.arange(first_pid, first_pid + count), ',"replicas":[']
    for j in range(rf):
        pieces += [matrix[:, j], "," if j < rf - 1 else "]"]
    pieces.append(',"log_dirs":[' + ",".join([_node(ANY_LOG_DIR)] * rf) + "]},")
    return '{"version":1,"partitions":[' + render_rows(pieces, count)[:-1] + "]}"


def render_reassign_znode(assignment: Mapping[TopicPartition, Iterable[int]]) -> str:
    """`/admin/reassign_partitions` content (ZK, ≤2.x; `ZkData.scala` `ReassignPartitionsZNode`): no `log_dirs`."""
    parts = [
        {"topic": tp.topic, "partition": tp.partition, "replicas": [int(r) for r in assignment[tp]]}
        for tp in sorted((TopicPartition(*t) for t in assignment), key=tp_sort_key)
    ]
    return _node({"version": 1, "partitions": parts})


def current_assignment_text(
    proposed: Mapping[TopicPartition, Iterable[int]],
    current: Mapping[TopicPartition, Iterable[int]],
    log_dirs: Mapping[tuple[TopicPartition, int], str] | None = None,
) -> str:
    """`currentPartitionReplicaAssignmentToString`: the rollback block `--execute` prints first (no final newline).
    `log_dirs`: each replica's current log dir, as Kafka 4.4's tool writes them (its `getReplicaToLogDir`, checked on
    a real 4.4.0 cluster); "any" where not given, as earlier tools write every replica."""
    rollback = {tp: current[tp] for tp in current if tp in proposed}
    return (
        "Current partition replica assignment\n\n"
        + render_reassignment_json(rollback, log_dirs)
        + "\n\nSave this to use as the --reassignment-json-file option during rollback"
    )


def generate_output_text(
    current: Mapping[TopicPartition, Iterable[int]], proposed: Mapping[TopicPartition, Iterable[int]]
) -> str:
    """What `--generate` prints (with final newline)."""
    return (
        "Current partition replica assignment\n"
        + render_reassignment_json(current)
        + "\n\nProposed partition reassignment configuration\n"
        + render_reassignment_json(proposed)
        + "\n"
    )


# -- topics-to-move JSON and the --generate arguments ----------------------------------------------------------
def parse_topics_to_move_json(text: str, source: str) -> list[str]:
    """`parseTopicsData`: `{"topics": [{"topic": "foo"}], "version": 1}` → ["foo"] (duplicates kept)."""
    try:
        root = json.loads(text)
    except json.JSONDecodeError:
        raise PlannerError("The input string is not a valid JSON") from None  # Json.parseFull → Optional.empty
    except RecursionError:
        raise PlannerError(too_deep_json(source)) from None
    root = _object(root, source)
    version = _version(root, source)
    if version != 1:
        raise PlannerError(f"Not supported version field value {version}")
    if "topics" not in root:
        return []
    return [_str(_field(_object(t, source), "topic", source), source) for t in _array(root["topics"], source)]


def render_topics_to_move_json(topics: Iterable[str]) -> str:
    return _node({"topics": [{"topic": t} for t in topics], "version": 1})


def parse_broker_list(text: str) -> list[int]:
    """`Arrays.stream(brokerList.split(",")).map(Integer::parseInt)` with Java's split (trailing empties dropped)."""
    items = text.split(",")
    while len(items) > 1 and items[-1] == "":
        items.pop()
    out = []
    for item in items:
        if not _is_java_int(item):
            raise PlannerError(f'For input string: "{item}"')
        out.append(int(item))
    return out


def _is_java_int(s: str) -> bool:
    body = s[1:] if s[:1] in ("+", "-") else s
    if not body or not all("0" <= c <= "9" for c in body):
        return False
    return _INT_MIN <= int(s) <= _INT_MAX


def parse_generate_args(topics_json: str, broker_list: str, source: str) -> tuple[list[int], list[str]]:
    """`parseGenerateAssignmentArgs`: broker list then topics, each checked for duplicates (Kafka's texts)."""
    brokers = parse_broker_list(broker_list)
    dup_brokers = duplicates(brokers)
    if dup_brokers:
        raise PlannerError(f"Broker list contains duplicate entries: {java_list(dup_brokers)}")
    topics = parse_topics_to_move_json(topics_json, source)
    dup_topics = duplicates(topics)
    if dup_topics:
        raise PlannerError(f"List of topics to reassign contains duplicate entries: {java_list(dup_topics)}")
    return brokers, topics


# -- leader-election JSON (LeaderElectionCommand.java) --------------------------------------------------------------
def parse_election_json(text: str, source: str, java_set: bool = False) -> list[TopicPartition]:
    """`kafka-leader-election.sh --path-to-json-file` input: `{"partitions": [{"topic": "t", "partition": 0}]}`."""
    try:
        root = json.loads(text) if text.strip() else None
    except json.JSONDecodeError:
        root = None
    except RecursionError:
        raise PlannerError(too_deep_json(source)) from None
    if root is None:
        raise PlannerError("Replica election data is empty")
    root = _object(root, source)
    if "partitions" not in root:
        raise PlannerError('Replica election data is missing "partitions" field')
    tps = []
    for item in _array(root["partitions"], source):
        obj = _object(item, source)
        tps.append(
            TopicPartition(_str(_field(obj, "topic", source), source), _int(_field(obj, "partition", source), source))
        )
    dups = duplicates(tps, hash_of=tp_hash)
    if dups:
        # 2.4-3.6 (Scala, the ZooKeeper-era tools): "foo-1,bar-0". 3.7+ LeaderElectionCommand.java prints the Java
        # Set instead ("[foo-1, bar-0]"); pass java_set=True for that text.
        shown = java_list(dups) if java_set else ",".join(map(str, dups))
        raise PlannerError(f"Replica election data contains duplicate partitions: {shown}")
    return tps


def render_election_json(partitions: Iterable[TopicPartition]) -> str:
    """The `--path-to-json-file` input for the given partitions, sorted by topic then partition (compact)."""
    tps = sorted({TopicPartition(*tp) for tp in partitions}, key=tp_sort_key)
    return _node({"partitions": [{"topic": tp.topic, "partition": tp.partition} for tp in tps]})


# -- kafka-log-dirs.sh --describe JSON (sizes) -----------------------------------------------------------------------
@dataclass(frozen=True)
class LogDirReplica:
    """One replica as `kafka-log-dirs.sh --describe` lists it (`LogDirsCommand`: brokers[].logDirs[].partitions[])."""

    broker: int
    log_dir: str
    tp: TopicPartition
    size: int
    is_future: bool
    where: str  # the JSON path, e.g. brokers[0].logDirs[1].partitions[2]


@dataclass(frozen=True)
class LogDirsReport:
    brokers: tuple[int, ...]  # every broker listed, in file order (brokers[i].broker)
    replicas: tuple[LogDirReplica, ...]

    def sizes(self) -> dict[TopicPartition, int]:
        return log_dirs_sizes(self.replicas)


def parse_log_dirs_replicas(text: str, source: str) -> LogDirsReport:
    """Every broker and replica of `kafka-log-dirs.sh --describe` output (the banner lines before the JSON are
    skipped)."""
    start = text.find("{")
    if start < 0:
        raise PlannerError(f"{source}: no JSON object found; expected the output of kafka-log-dirs.sh --describe")
    root = _object(_loads(text[start:], source), source)
    replicas: list[LogDirReplica] = []
    brokers: list[int] = []
    for b, broker in enumerate(_array(root.get("brokers", []), source)):
        broker = _object(broker, source)
        broker_id = _int(_field(broker, "broker", source), source)
        brokers.append(broker_id)
        for d, log_dir in enumerate(_array(broker.get("logDirs", []), source)):
            log_dir = _object(log_dir, source)
            path = str(log_dir.get("logDir", ""))
            for i, part in enumerate(_array(log_dir.get("partitions", []), source)):
                part = _object(part, source)
                name = _str(_field(part, "partition", source), source)
                topic, sep, pid = name.rpartition("-")
                if not sep or not topic or not pid.isdigit():
                    raise PlannerError(f"{source}: partition {name!r} is not of the form <topic>-<partition>")
                size = _field(part, "size", source)
                if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                    raise PlannerError(f"{source}: size of {name} must be a non-negative integer, got {_node(size)}")
                where = f"brokers[{b}].logDirs[{d}].partitions[{i}]"
                replicas.append(
                    LogDirReplica(
                        broker_id, path, TopicPartition(topic, int(pid)), size, part.get("isFuture") is True, where
                    )
                )
    return LogDirsReport(tuple(brokers), tuple(replicas))


def log_dirs_sizes(replicas: Iterable[LogDirReplica]) -> dict[TopicPartition, int]:
    """The size of a partition is the largest size reported by any broker for a non-future replica (the leader's log
    is the longest); future replicas (`"isFuture": true`, a log-dir move in progress) are ignored."""
    sizes: dict[TopicPartition, int] = {}
    for r in replicas:
        if not r.is_future:
            sizes[r.tp] = max(sizes.get(r.tp, 0), r.size)
    return sizes


def parse_log_dirs_json(text: str, source: str) -> dict[TopicPartition, int]:
    """Partition sizes from `kafka-log-dirs.sh --describe` output (see `log_dirs_sizes`)."""
    return log_dirs_sizes(parse_log_dirs_replicas(text, source).replicas)


# -- kafka-reassign-partitions.sh --generate output ------------------------------------------------------------------
CURRENT_ASSIGNMENT = "Current partition replica assignment"


def parse_current_assignment(text: str, source: str) -> list[ReassignmentEntry]:
    """The "Current partition replica assignment" JSON of `--generate` (or `--execute`) output, or a bare
    reassignment JSON file: version 1, `log_dirs` optional (`parsePartitionReassignmentData`)."""
    marker = text.find(CURRENT_ASSIGNMENT)
    if marker >= 0:
        start = text.find("{", marker)
        if start < 0:
            raise PlannerError(f"{source}: no JSON after '{CURRENT_ASSIGNMENT}'")
        end = text.find("\n", start)
        text = text[start:] if end < 0 else text[start:end]
    return parse_reassignment_entries(text, source)


# -- --verify / --list texts (ReassignPartitionsCommand partitionReassignmentStatesToString, replicaMoveStatesToString,
#    curReassignmentsToString) -------------------------------------------------------------------------------------
def partition_reassignment_states_text(states: Mapping[TopicPartition, PartitionReassignmentState]) -> str:
    """The block `--verify` prints for partition moves (3.3+ "is completed."; no final newline)."""
    lines = ["Status of partition reassignment:"]
    for tp in sorted(states, key=tp_sort_key):
        st = states[tp]
        if st.done:
            if tuple(st.current) == tuple(st.target):
                lines.append(f"Reassignment of partition {tp} is completed.")
            else:
                lines.append(
                    f"There is no active reassignment of partition {tp}, but replica set is "
                    f"{','.join(map(str, st.current))} rather than {','.join(map(str, st.target))}."
                )
        else:
            lines.append(f"Reassignment of partition {tp} is still in progress.")
    return "\n".join(lines)


def replica_move_states_text(states: Mapping[tuple[TopicPartition, int], LogDirMoveState]) -> str:
    """`replicaMoveStatesToString`: sorted by broker, then topic, then partition (no final newline)."""
    lines = []
    for tp, broker in sorted(states, key=lambda k: (k[1], tp_sort_key(k[0]))):
        st = states[(tp, broker)]
        replica = f"{tp.topic}-{tp.partition}-{broker}"
        if st.kind == "missing-log-dir":
            lines.append(
                f"Partition {tp.topic}-{tp.partition} is not found in any live log dir on broker {broker}. "
                "There is likely an offline log directory on the broker."
            )
        elif st.kind == "missing-replica":
            lines.append(
                f"Partition {tp.topic}-{tp.partition} cannot be found in any live log directory on broker {broker}."
            )
        elif st.kind == "active":
            if st.target_dir == st.future_dir:
                lines.append(f"Reassignment of replica {replica} is still in progress.")
            else:
                lines.append(
                    f"Partition {tp.topic}-{tp.partition} on broker {broker} is being moved to log dir "
                    f"{st.future_dir} instead of {st.target_dir}."
                )
        elif st.kind == "cancelled":
            lines.append(
                f"Partition {tp.topic}-{tp.partition} on broker {broker} is not being moved from log dir "
                f"{st.current_dir} to {st.target_dir}."
            )
        elif st.kind == "completed":
            lines.append(f"Reassignment of replica {replica} completed successfully.")
    return "\n".join(lines)


def current_reassignments_text(cluster: Cluster) -> str:
    """`--list` (`curReassignmentsToString`) for the in-progress reassignments of a topology (no final newline)."""
    active = sorted((p for p in cluster.partitions() if p.adding or p.removing), key=lambda p: tp_sort_key(p.tp))
    if not active:
        return "No partition reassignments found."
    lines = ["Current partition reassignments:"]
    for p in active:
        text = f"{p.tp}: replicas: {','.join(map(str, p.replicas))}."
        if p.adding:
            text += f" adding: {','.join(map(str, p.adding))}."
        if p.removing:
            text += f" removing: {','.join(map(str, p.removing))}."
        lines.append(text)
    return "\n".join(lines)
