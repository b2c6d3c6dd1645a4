"""Topology YAML files (`topologies/*.yaml`) to and from `planner.model.Cluster`.

Every validation error names the file, the line and the YAML path of the field, e.g.
`topologies/x.yaml:12: topics[0].assignment.2: unknown broker 7 (brokers: 1,2,3)`.
Topics given as `partitions` + `replication_factor` are placed by the planner's deterministic placement
(`planner.placement.balanced`), in file order, each against the load of those before it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

import yaml

from planner.adapters.files import read_text
from planner.adapters.topology_fast import Rejected
from planner.adapters.validate import (
    broker_id_problem,
    config_problem,
    leader_problem,
    port_problem,
    subset_problem,
    topic_name_problem,
)
from planner.limits import MAX_NEW_PARTITIONS, check_yaml_depth
from planner.model import (
    BROKER_STATES,
    NO_LEADER,
    ONLINE,
    Broker,
    Cluster,
    ObservedState,
    Partition,
    PlannerError,
    Topic,
)

Node = yaml.Node
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_CONSTRUCT = yaml.constructor.SafeConstructor()  # YAML 1.1 int/bool of one scalar node, without a parser per value

CLUSTER_KEYS = ("cluster", "mode", "brokers", "topics")
BROKER_KEYS = ("id", "rack", "host", "port", "state", "cordoned", "usable_bytes", "total_bytes")
TOPIC_KEYS = (
    "name",
    "partitions",
    "replication_factor",
    "assignment",
    "state",
    "sizes",
    "configs",
    "topic_id",
    "marked_for_deletion",
    "adding",
    "removing",
)
STATE_KEYS = ("leader", "isr", "leader_epoch", "elr", "last_known_elr")
MODES = ("kraft", "zookeeper")


class _Ctx:
    def __init__(self, source: str, part: Rejected | None = None):
        self.source = source
        self.part = part  # reading one part of a large file (topology_fast.Rejected): its lines are shifted

    def line(self, line: int) -> str:
        """`:N` of the 1-based line `line` of the text read, as a line of the file."""
        part = self.part
        if part is None:
            return f":{line}"
        if line >= part.text.count("\n"):  # at the end of the part: the whole file may read otherwise
            raise _WholeFileNeeded
        return f":{line + part.line_shift if line >= part.first_line else line}"

    def error(self, node: Node | None, path: str, message: str) -> PlannerError:
        line = self.line(node.start_mark.line + 1) if node is not None else ""
        where = f"{path}: " if path else ""
        return PlannerError(f"{self.source}{line}: {where}{message}")


class _WholeFileNeeded(Exception):
    """A part of a large file gave no answer that holds for the whole file: read the whole file."""


def _mapping(ctx: _Ctx, node: Node, path: str, allowed: tuple[str, ...] | None) -> list[tuple[Node, Node]]:
    if not isinstance(node, yaml.MappingNode):
        raise ctx.error(node, path, "expected a mapping")
    seen: set[str] = set()
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode):
            raise ctx.error(key, path, f"a key must be a single value, got {_describe_node(key)}")
        k = key.value
        if k in seen:
            raise ctx.error(key, path, f"duplicate key {k!r}")
        seen.add(k)
        if allowed is not None and k not in allowed:
            raise ctx.error(key, _join(path, k), f"unknown key {k!r} (expected one of: {', '.join(allowed)})")
    return node.value


def _rule(ctx: _Ctx, node: Node, path: str, problem: str | None) -> None:
    """A rule of planner.adapters.validate (shared with the other sources) applied to one field."""
    if problem:
        raise ctx.error(node, path, problem)


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _scalar(ctx: _Ctx, node: Node, path: str) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        raise ctx.error(node, path, "expected a single value")
    return yaml.load(yaml.serialize(node), Loader=_Loader) if node.tag != "tag:yaml.org,2002:str" else node.value


def _int(ctx: _Ctx, node: Node, path: str, minimum: int | None = None, what: str = "an integer") -> int:
    if not isinstance(node, yaml.ScalarNode) or node.tag != "tag:yaml.org,2002:int":
        raise ctx.error(node, path, f"expected {what}, got {_describe_node(node)}")
    value = int(_CONSTRUCT.construct_yaml_int(node))
    if minimum is not None and value < minimum:
        raise ctx.error(node, path, f"must be at least {minimum}, got {value}")
    return value


def _str(ctx: _Ctx, node: Node, path: str) -> str:
    if not isinstance(node, yaml.ScalarNode) or node.tag in ("tag:yaml.org,2002:null",):
        raise ctx.error(node, path, f"expected a string, got {_describe_node(node)}")
    return str(node.value)


def _bool(ctx: _Ctx, node: Node, path: str) -> bool:
    if not isinstance(node, yaml.ScalarNode) or node.tag != "tag:yaml.org,2002:bool":
        raise ctx.error(node, path, f"expected true or false, got {_describe_node(node)}")
    return bool(_CONSTRUCT.construct_yaml_bool(node))


def _describe_node(node: Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    if node.tag == "tag:yaml.org,2002:null":
        return "nothing"
    return repr(node.value)


def _id_list(ctx: _Ctx, node: Node, path: str) -> tuple[int, ...]:
    if not isinstance(node, yaml.SequenceNode):
        raise ctx.error(node, path, f"expected a list of broker ids, got {_describe_node(node)}")
    return tuple(_int(ctx, item, f"{path}[{i}]", what="a broker id") for i, item in enumerate(node.value))


def _partition_map(ctx: _Ctx, node: Node, path: str, value: Callable[[Node, str], Any]) -> dict[int, tuple[Any, Node]]:
    result: dict[int, tuple[Any, Node]] = {}
    for key, val in _mapping(ctx, node, path, None):
        pid = _int(ctx, key, _join(path, key.value), minimum=0, what="a partition id")
        result[pid] = (value(val, _join(path, pid)), val)
    return result


def load_topology(path: str, progress: Callable[[int, int], None] | None = None) -> Cluster:
    """The cluster of a topology file; `progress(done, total)` hears how far a large file's topics are read."""
    text = read_text(path, path, missing="no such topology file (see topologies/ for examples)")
    return parse_topology(text, path, progress)


def parse_topology(
    text: str, source: str = "<topology>", progress: Callable[[int, int], None] | None = None
) -> Cluster:
    """The cluster of a topology's text; errors name `source`, the line and the YAML path.

    Large regular files take the fast path (`topology_fast`); anything it does not accept is read here.
    """
    from planner.adapters.topology_fast import Rejected, parse_fast

    fast = parse_fast(text, source, _parse_precise, progress)
    if isinstance(fast, Cluster):
        return fast
    if isinstance(fast, Rejected):  # a problem in one topic of a large file: read that topic (and its neighbour)
        try:
            _parse_precise(fast.text, source, fast)
        except _WholeFileNeeded:
            pass
    return _parse_precise(text, source)


def _parse_precise(text: str, source: str, part: Rejected | None = None) -> Cluster:
    """The cluster of `text`, every problem reported with its line and YAML path. With `part`, `text` is that part
    of a larger file (line numbers and topic indexes are the file's); a problem whose report could differ in the
    whole file raises _WholeFileNeeded."""
    ctx = _Ctx(source, part)
    check_yaml_depth(text, source, _Loader)
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = ctx.line(mark.line + 1) if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise PlannerError(f"{source}{line}: malformed YAML: {problem}") from None
    if root is None:
        raise PlannerError(f"{source}: empty topology file: it needs at least a 'brokers' list")
    fields = dict((k.value, (k, v)) for k, v in _mapping(ctx, root, "", CLUSTER_KEYS))

    name = _str(ctx, fields["cluster"][1], "cluster") if "cluster" in fields else None
    mode = "kraft"
    if "mode" in fields:
        mode = _str(ctx, fields["mode"][1], "mode")
        if mode not in MODES:
            raise ctx.error(fields["mode"][1], "mode", f"must be one of {', '.join(MODES)}, got {mode!r}")
    if "brokers" not in fields:
        raise ctx.error(root, "brokers", "missing: a topology needs a 'brokers' list")
    brokers = _brokers(ctx, fields["brokers"][1])
    cluster = Cluster(brokers=brokers, topics=(), name=name, mode=mode)
    topics: list[Topic] = []

    topics_node = fields.get("topics", (None, None))[1]
    if topics_node is not None and not (isinstance(topics_node, yaml.ScalarNode) and topics_node.tag.endswith("null")):
        if not isinstance(topics_node, yaml.SequenceNode):
            raise ctx.error(topics_node, "topics", "expected a list of topics")
        seen: dict[str, int] = dict(part.seen) if part is not None else {}
        for i, tnode in enumerate(topics_node.value, start=max(0, part.index) if part is not None else 0):
            topic = _topic(ctx, tnode, f"topics[{i}]", cluster, topics)
            if topic.name in seen:
                raise ctx.error(
                    tnode, f"topics[{i}].name", f"duplicate topic {topic.name!r} (also topics[{seen[topic.name]}])"
                )
            seen[topic.name] = i
            topics.append(topic)
    return replace(cluster, topics=tuple(sorted(topics, key=_name)))


def _name(topic: Topic) -> str:
    return topic.name


def _brokers(ctx: _Ctx, node: Node) -> tuple[Broker, ...]:
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        raise ctx.error(node, "brokers", "expected a non-empty list of brokers")
    brokers: dict[int, Broker] = {}
    for i, bnode in enumerate(node.value):
        path = f"brokers[{i}]"
        f = {k.value: v for k, v in _mapping(ctx, bnode, path, BROKER_KEYS)}
        if "id" not in f:
            raise ctx.error(bnode, f"{path}.id", "missing broker id")
        bid = _int(ctx, f["id"], f"{path}.id", minimum=0, what="a broker id")
        _rule(ctx, f["id"], f"{path}.id", broker_id_problem(bid))
        if bid in brokers:
            raise ctx.error(f["id"], f"{path}.id", f"duplicate broker id {bid}")
        rack = _str(ctx, f["rack"], f"{path}.rack") if "rack" in f and not f["rack"].tag.endswith("null") else None
        host = _str(ctx, f["host"], f"{path}.host") if "host" in f else None
        port = _int(ctx, f["port"], f"{path}.port", minimum=1) if "port" in f else None
        if port is not None:
            _rule(ctx, f["port"], f"{path}.port", port_problem(port))
        state = ONLINE
        if "state" in f:
            state = _str(ctx, f["state"], f"{path}.state")
            if state not in BROKER_STATES:
                raise ctx.error(
                    f["state"], f"{path}.state", f"must be one of {', '.join(BROKER_STATES)}, got {state!r}"
                )
        cordoned = _bool(ctx, f["cordoned"], f"{path}.cordoned") if "cordoned" in f else False
        space = {k: _int(ctx, f[k], f"{path}.{k}", minimum=0) for k in ("usable_bytes", "total_bytes") if k in f}
        if "total_bytes" in space and space.get("usable_bytes", 0) > space["total_bytes"]:
            raise ctx.error(
                f["usable_bytes"],
                f"{path}.usable_bytes",
                f"{space['usable_bytes']} is more than total_bytes {space['total_bytes']}",
            )
        brokers[bid] = Broker(
            bid, rack, host, port, state, cordoned, space.get("usable_bytes"), space.get("total_bytes")
        )
    return tuple(brokers[b] for b in sorted(brokers))


def _topic(ctx: _Ctx, node: Node, path: str, cluster: Cluster, before: list[Topic]) -> Topic:
    """One topic; `cluster` has the brokers, `before` the topics read so far (a topic placed by the planner is
    placed against their load)."""
    f = {k.value: v for k, v in _mapping(ctx, node, path, TOPIC_KEYS)}
    name = _topic_name(ctx, node, path, f)
    brokers = _KnownBrokers(ctx, cluster)
    replica_list = brokers.replica_list
    count, rf = _count_and_rf(ctx, path, f)
    configs = _configs(ctx, path, f["configs"]) if "configs" in f else {}
    topic_id = _str(ctx, f["topic_id"], f"{path}.topic_id") if "topic_id" in f else None
    marked = (
        _bool(ctx, f["marked_for_deletion"], f"{path}.marked_for_deletion") if "marked_for_deletion" in f else False
    )
    if "assignment" in f:
        amap = _explicit_assignment(ctx, path, f, count, replica_list)
        assignment = {p: r for p, (r, _) in amap.items()}
    else:
        amap = None
        assignment = _placed_assignment(ctx, node, path, f, count, rf, cluster, before)

    def check_pid(n: Node, p: str, pid: int) -> None:
        if pid not in assignment:
            raise ctx.error(n, p, f"partition {pid} does not exist (the topic has {len(assignment)} partitions)")

    observed: dict[int, ObservedState] = {}
    if "state" in f:
        for key, val in _mapping(ctx, f["state"], f"{path}.state", None):
            pid = _int(ctx, key, f"{path}.state.{key.value}", minimum=0, what="a partition id")
            check_pid(key, f"{path}.state.{pid}", pid)
            observed[pid] = _partition_state(ctx, val, f"{path}.state.{pid}", brokers, assignment[pid])
    sizes: dict[int, int] = {}
    if "sizes" in f:
        for pid, (size, n) in _partition_map(
            ctx, f["sizes"], f"{path}.sizes", lambda n, p: _int(ctx, n, p, minimum=0, what="a size in bytes")
        ).items():
            check_pid(n, f"{path}.sizes.{pid}", pid)
            sizes[pid] = size
    moving = {
        which: _moving(ctx, path, f, which, assignment, replica_list, check_pid) for which in ("adding", "removing")
    }
    if amap is not None:
        _check_replication_factors(ctx, path, f, amap, assignment, moving["adding"], rf)

    partitions = tuple(
        Partition(
            topic=name,
            id=p,
            replicas=tuple(assignment[p]),
            adding=moving["adding"].get(p, ()),
            removing=moving["removing"].get(p, ()),
            observed=observed.get(p),
            size=sizes.get(p),
        )
        for p in sorted(assignment)
    )
    return Topic(name=name, partitions=partitions, configs=configs, topic_id=topic_id, marked_for_deletion=marked)


def _topic_name(ctx: _Ctx, node: Node, path: str, f: dict[str, Node]) -> str:
    if "name" not in f:
        raise ctx.error(node, f"{path}.name", "missing topic name")
    name = _str(ctx, f["name"], f"{path}.name")
    problem = topic_name_problem(name)
    if problem:
        raise ctx.error(f["name"], f"{path}.name", problem)
    return name


class _KnownBrokers:
    """The cluster's broker ids, for replica lists (assignment, ISR, ELR, adding, removing) and leaders."""

    def __init__(self, ctx: _Ctx, cluster: Cluster):
        self.ctx = ctx
        self.known = set(cluster.broker_ids)
        self.text = ",".join(map(str, cluster.broker_ids))

    def unknown(self, node: Node, path: str, broker: int) -> PlannerError:
        return self.ctx.error(node, path, f"unknown broker {broker} (brokers: {self.text})")

    def replica_list(self, n: Node, p: str) -> tuple[int, ...]:
        """Known brokers, no duplicates."""
        ids = _id_list(self.ctx, n, p)
        for i, b in enumerate(ids):
            if b not in self.known:
                raise self.unknown(n.value[i], f"{p}[{i}]", b)
        dup = sorted({b for b in ids if ids.count(b) > 1})
        if dup:
            raise self.ctx.error(n, p, f"duplicate replicas {','.join(map(str, dup))} in {list(ids)}")
        return ids


def _count_and_rf(ctx: _Ctx, path: str, f: dict[str, Node]) -> tuple[int | None, int | None]:
    """`partitions` (at most what this tool places in memory) and `replication_factor`, when given."""
    count = _int(ctx, f["partitions"], f"{path}.partitions", minimum=1) if "partitions" in f else None
    if count is not None and count > MAX_NEW_PARTITIONS:
        raise ctx.error(
            f["partitions"],
            f"{path}.partitions",
            f"{count} partitions: more than this tool places in memory ({MAX_NEW_PARTITIONS})",
        )
    rf = (
        _int(ctx, f["replication_factor"], f"{path}.replication_factor", minimum=1)
        if "replication_factor" in f
        else None
    )
    return count, rf


def _configs(ctx: _Ctx, path: str, node: Node) -> dict[str, str]:
    configs: dict[str, str] = {}
    for k, v in _mapping(ctx, node, f"{path}.configs", None):
        if not isinstance(v, yaml.ScalarNode) or v.tag.endswith("null"):
            raise ctx.error(v, f"{path}.configs.{k.value}", "expected a value")
        configs[str(k.value)] = (
            str(_scalar(ctx, v, f"{path}.configs.{k.value}")).lower() if v.tag.endswith("bool") else str(v.value)
        )
        _rule(ctx, v, f"{path}.configs.{k.value}", config_problem(str(k.value), configs[str(k.value)]))
    return configs


def _explicit_assignment(
    ctx: _Ctx, path: str, f: dict[str, Node], count: int | None, replica_list: Callable[[Node, str], tuple[int, ...]]
) -> dict[int, tuple[tuple[int, ...], Node]]:
    """`assignment`: partition ids 0..n-1 (n = `partitions` when given), each with at least one replica."""
    amap = _partition_map(ctx, f["assignment"], f"{path}.assignment", replica_list)
    if not amap:
        raise ctx.error(f["assignment"], f"{path}.assignment", "assignment is empty")
    missing = [p for p in range(len(amap)) if p not in amap]
    if missing:
        raise ctx.error(
            f["assignment"],
            f"{path}.assignment",
            f"partition ids must be 0..{len(amap) - 1}; missing {','.join(map(str, missing))}",
        )
    if count is not None and count != len(amap):
        raise ctx.error(
            f["partitions"], f"{path}.partitions", f"says {count} but the assignment has {len(amap)} partitions"
        )
    for p in sorted(amap):
        r, n = amap[p]
        if not r:
            raise ctx.error(n, f"{path}.assignment.{p}", f"Cannot have replication factor of 0 for partition id {p}.")
    return amap


def _placed_assignment(
    ctx: _Ctx,
    node: Node,
    path: str,
    f: dict[str, Node],
    count: int | None,
    rf: int | None,
    cluster: Cluster,
    before: list[Topic],
) -> dict[int, tuple[int, ...]]:
    """`partitions` + `replication_factor`: placed by the planner against the load of the topics `before` it."""
    if count is None or rf is None:
        raise ctx.error(node, path, "a topic needs either 'assignment' or both 'partitions' and 'replication_factor'")
    from planner.placement.placer import plan_new_topic

    try:
        so_far = replace(cluster, topics=tuple(sorted(before, key=_name)))
        return {p: tuple(r) for p, r in plan_new_topic(so_far, count, rf)[0].items()}
    except PlannerError as exc:
        raise ctx.error(f["replication_factor"], f"{path}.replication_factor", str(exc)) from None


def _partition_state(
    ctx: _Ctx,
    val: Node,
    sp: str,
    brokers: _KnownBrokers,
    replicas: tuple[int, ...],
) -> ObservedState:
    """One partition's `state`: leader (a known broker among the replicas, -1 or none), ISR within the replicas,
    epoch, ELR."""
    sf = {k.value: v for k, v in _mapping(ctx, val, sp, STATE_KEYS)}
    if "leader" not in sf or "isr" not in sf:
        raise ctx.error(val, sp, "partition state needs 'leader' (broker id, or -1 / none) and 'isr'")
    lnode = sf["leader"]
    if isinstance(lnode, yaml.ScalarNode) and lnode.value in ("none", "null", "~", ""):
        leader = NO_LEADER
    else:
        leader = _int(ctx, lnode, f"{sp}.leader", minimum=-1, what="a broker id, -1 or none")
    if leader != NO_LEADER and leader not in brokers.known:
        raise brokers.unknown(lnode, f"{sp}.leader", leader)
    replica_list = brokers.replica_list
    isr = replica_list(sf["isr"], f"{sp}.isr")
    # the rules zk:// and kafka:// apply too (adapters/validate.py), with their texts
    _rule(ctx, sf["isr"], f"{sp}.isr", subset_problem("ISR members", isr, tuple(replicas)))
    _rule(ctx, lnode, f"{sp}.leader", leader_problem(leader, tuple(replicas)))
    epoch = _int(ctx, sf["leader_epoch"], f"{sp}.leader_epoch", minimum=0) if "leader_epoch" in sf else None
    elr = replica_list(sf["elr"], f"{sp}.elr") if "elr" in sf else None
    lke = replica_list(sf["last_known_elr"], f"{sp}.last_known_elr") if "last_known_elr" in sf else None
    return ObservedState(leader=leader, isr=isr, leader_epoch=epoch, elr=elr, last_known_elr=lke)


def _moving(
    ctx: _Ctx,
    path: str,
    f: dict[str, Node],
    which: str,
    assignment: dict[int, tuple[int, ...]],
    replica_list: Callable[[Node, str], tuple[int, ...]],
    check_pid: Callable[[Node, str, int], None],
) -> dict[int, tuple[int, ...]]:
    """`adding` or `removing` of an in-progress reassignment: brokers that are also in the partition's replicas."""
    moving: dict[int, tuple[int, ...]] = {}
    if which not in f:
        return moving
    for pid, (ids, n) in _partition_map(ctx, f[which], f"{path}.{which}", replica_list).items():
        check_pid(n, f"{path}.{which}.{pid}", pid)
        outside = [b for b in ids if b not in assignment[pid]]
        if outside:
            raise ctx.error(
                n,
                f"{path}.{which}.{pid}",
                f"brokers {','.join(map(str, outside))} must also be in the partition's replicas",
            )
        moving[pid] = ids
    return moving


def _check_replication_factors(
    ctx: _Ctx,
    path: str,
    f: dict[str, Node],
    amap: dict[int, tuple[tuple[int, ...], Node]],
    assignment: dict[int, tuple[int, ...]],
    adding: dict[int, tuple[int, ...]],
    rf: int | None,
) -> None:
    """`replication_factor`, when given beside an assignment, is every partition's. Without it the partitions of a
    topic may differ (a reassignment may change the replication factor of some partitions only: Kafka allows it, and
    a change submitted in batches leaves the topic so between batches; `kafka export` writes what it reads).
    Mid-reassignment a partition lists target ∪ original replicas; its replication factor is what kafka-topics
    --describe prints: replicas minus adding (TopicCommand, 2.5+)."""

    def rf_of(p: int) -> int:
        return len(assignment[p]) - len(adding.get(p, ()))

    if rf is None:
        return
    first_rf = rf_of(0)
    if rf != first_rf:
        raise ctx.error(
            f["replication_factor"],
            f"{path}.replication_factor",
            f"says {rf} but the assignment has {first_rf} replicas per partition",
        )
    for p in sorted(amap):
        if rf_of(p) != rf:
            moving_note = f" ({len(assignment[p])} replicas, {len(adding[p])} adding)" if p in adding else ""
            raise ctx.error(
                amap[p][1],
                f"{path}.assignment.{p}",
                f"replication factor {rf_of(p)}{moving_note} differs from replication_factor {rf}",
            )


# ---------------------------------------------------------------------------------------------------------
# Writing


def _flow(ids) -> str:
    return "[" + ", ".join(str(i) for i in ids) + "]"


def _quote(s: str) -> str:
    return yaml.safe_dump(s, default_style=None, width=10**9).strip().removesuffix("\n...").strip()


def dump_topology(cluster: Cluster) -> str:
    """YAML text that loads back (with `parse_topology`) to the same cluster."""
    out: list[str] = []
    if cluster.name is not None:
        out.append(f"cluster: {_quote(cluster.name)}")
    out.append(f"mode: {cluster.mode}")
    out.append("brokers:")
    out.extend(_dump_broker(b) for b in cluster.brokers)
    out.append("topics:" if cluster.topics else "topics: []")
    for t in cluster.topics:
        out.extend(_dump_topic(t))
    return "\n".join(out) + "\n"


def _dump_broker(b: Broker) -> str:
    parts = [f"id: {b.id}"]
    if b.rack is not None:
        parts.append(f"rack: {_quote(b.rack)}")
    if b.host is not None:
        parts.append(f"host: {_quote(b.host)}")
    if b.port is not None:
        parts.append(f"port: {b.port}")
    if b.state != ONLINE:
        parts.append(f"state: {b.state}")
    if b.cordoned:
        parts.append("cordoned: true")
    if b.usable_bytes is not None:
        parts.append(f"usable_bytes: {b.usable_bytes}")
    if b.total_bytes is not None:
        parts.append(f"total_bytes: {b.total_bytes}")
    return "  - {" + ", ".join(parts) + "}"


def _dump_topic(t: Topic) -> list[str]:
    out = [f"  - name: {_quote(t.name)}"]
    if t.topic_id:
        out.append(f"    topic_id: {_quote(t.topic_id)}")
    if t.marked_for_deletion:
        out.append("    marked_for_deletion: true")
    if t.configs:
        out.append("    configs:")
        out.extend(f"      {_quote(k)}: {_quote(str(v))}" for k, v in t.configs.items())
    out.append("    assignment:")
    out.extend(f"      {p.id}: {_flow(p.replicas)}" for p in t.partitions)
    for which in ("adding", "removing"):
        rows = [p for p in t.partitions if getattr(p, which)]
        if rows:
            out.append(f"    {which}:")
            out.extend(f"      {p.id}: {_flow(getattr(p, which))}" for p in rows)
    states = [(p.id, p.observed) for p in t.partitions if p.observed is not None]
    if states:
        out.append("    state:")
        out.extend(f"      {pid}: {_dump_state(o)}" for pid, o in states)
    sized = [p for p in t.partitions if p.size is not None]
    if sized:
        out.append("    sizes:")
        out.extend(f"      {p.id}: {p.size}" for p in sized)
    return out


def _dump_state(o: ObservedState) -> str:
    parts = [f"leader: {o.leader}", f"isr: {_flow(o.isr)}"]
    if o.leader_epoch is not None:
        parts.append(f"leader_epoch: {o.leader_epoch}")
    if o.elr is not None:
        parts.append(f"elr: {_flow(o.elr)}")
    if o.last_known_elr is not None:
        parts.append(f"last_known_elr: {_flow(o.last_known_elr)}")
    return "{" + ", ".join(parts) + "}"
