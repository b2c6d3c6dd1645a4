"""GROUP.yaml: a consumer group's members, for `kafka-planner consumers`.

```yaml
group: orders-service          # optional, shown in the output
members:
  - id: consumer-1-6f1c        # member.id (required, unique)
    instance_id: host-a        # group.instance.id: static membership (KIP-345), optional
    rack: use1-az1             # client.rack (KIP-881), optional
    topics: [orders, payments] # subscription (required)
    owned: [orders-0, orders-3]   # currently owned partitions (sticky, cooperative-sticky, uniform), optional;
                                  # also accepted as a mapping {orders: [0, 3]}
    generation: 7              # generation of that ownership (sticky strategies), optional (= none sent)
```
Errors name the file, the line and the field.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from planner.assignors.group import Member
from planner.limits import check_yaml_depth
from planner.model import PlannerError, TopicPartition

MEMBER_KEYS = ("id", "instance_id", "rack", "topics", "owned", "generation")
GROUP_KEYS = ("group", "members")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Group:
    name: str | None
    members: tuple[Member, ...]


def _err(source: str, node, path: str, message: str) -> PlannerError:
    line = f":{node.start_mark.line + 1}" if node is not None else ""
    return PlannerError(f"{source}{line}: {path}: {message}" if path else f"{source}{line}: {message}")


def _key(source: str, node, path: str) -> None:
    if not isinstance(node, yaml.ScalarNode):
        kind = "a mapping" if isinstance(node, yaml.MappingNode) else "a list"
        raise _err(source, node, path, f"a key must be a single value, got {kind}")


def _value(node):
    return yaml.load(yaml.serialize(node), Loader=_Loader)


def _str(source, node, path) -> str:
    if not isinstance(node, yaml.ScalarNode) or node.value == "" or node.tag == "tag:yaml.org,2002:null":
        raise _err(source, node, path, "expected a non-empty string")
    return node.value


def _topic_partition(source, node, path, text: str) -> TopicPartition:
    topic, sep, part = text.rpartition("-")
    if not sep or not topic or not part.isdigit():
        raise _err(source, node, path, f"{text!r} is not a partition: write TOPIC-PARTITION, e.g. orders-3")
    return TopicPartition(topic, int(part))


def _owned(source, node, path) -> tuple[TopicPartition, ...]:
    out: list[TopicPartition] = []
    if isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            out.append(_topic_partition(source, item, f"{path}[{i}]", _str(source, item, f"{path}[{i}]")))
    elif isinstance(node, yaml.MappingNode):
        for key, val in node.value:
            topic = _str(source, key, path)
            if not isinstance(val, yaml.SequenceNode):
                raise _err(source, val, f"{path}.{topic}", "expected a list of partition numbers")
            for i, item in enumerate(val.value):
                if (
                    not isinstance(item, yaml.ScalarNode)
                    or item.tag != "tag:yaml.org,2002:int"
                    or int(_value(item)) < 0
                ):
                    raise _err(source, item, f"{path}.{topic}[{i}]", "expected a partition number (0 or more)")
                out.append(TopicPartition(topic, int(_value(item))))
    elif isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null":
        return ()
    else:
        raise _err(source, node, path, "expected a list like [orders-0, orders-3] or a mapping {orders: [0, 3]}")
    return tuple(dict.fromkeys(out))


def _root_fields(source: str, root) -> dict:
    """The top-level keys (`group`, `members`); `members` is required."""
    if root is None or not isinstance(root, yaml.MappingNode):
        raise _err(source, root, "", "expected a mapping with a 'members' list")
    fields = {}
    for key, val in root.value:
        _key(source, key, "")
        if key.value not in GROUP_KEYS:
            raise _err(source, key, key.value, f"unknown key {key.value!r} (expected one of: {', '.join(GROUP_KEYS)})")
        fields[key.value] = val
    if "members" not in fields:
        raise _err(source, root, "members", "missing: list the group's members")
    return fields


def _member_fields(source: str, mnode, path: str) -> dict:
    """A member's keys; `id` and `topics` are required."""
    if not isinstance(mnode, yaml.MappingNode):
        raise _err(source, mnode, path, "expected a mapping with id and topics")
    mf = {}
    for key, val in mnode.value:
        _key(source, key, path)
        if key.value not in MEMBER_KEYS:
            raise _err(
                source,
                key,
                f"{path}.{key.value}",
                f"unknown key {key.value!r} (expected one of: {', '.join(MEMBER_KEYS)})",
            )
        mf[key.value] = val
    for required in ("id", "topics"):
        if required not in mf:
            raise _err(source, mnode, f"{path}.{required}", "missing")
    return mf


def _instance_id(source: str, mf: dict, path: str, i: int, instances: dict[str, int]) -> str | None:
    """`instance_id` (group.instance.id), unique in the group; recorded in `instances`."""
    instance = _str(source, mf["instance_id"], f"{path}.instance_id") if "instance_id" in mf else None
    if instance is not None:
        if instance in instances:
            raise _err(
                source,
                mf["instance_id"],
                f"{path}.instance_id",
                f"duplicate group.instance.id {instance!r} (also members[{instances[instance]}])",
            )
        instances[instance] = i
    return instance


def _generation(source: str, mf: dict, path: str) -> int | None:
    if "generation" not in mf:
        return None
    g = mf["generation"]
    if not isinstance(g, yaml.ScalarNode) or g.tag != "tag:yaml.org,2002:int":
        raise _err(source, g, f"{path}.generation", "expected an integer generation id")
    return int(_value(g))


def _member(source: str, i: int, mnode, seen: dict[str, int], instances: dict[str, int]) -> Member:
    """members[i]: checked, with its id and instance id recorded in `seen` and `instances` (both unique)."""
    path = f"members[{i}]"
    mf = _member_fields(source, mnode, path)
    mid = _str(source, mf["id"], f"{path}.id")
    if mid in seen:
        raise _err(source, mf["id"], f"{path}.id", f"duplicate member id {mid!r} (also members[{seen[mid]}])")
    seen[mid] = i
    tnode = mf["topics"]
    if not isinstance(tnode, yaml.SequenceNode):
        raise _err(source, tnode, f"{path}.topics", "expected a list of topic names")
    topics = tuple(dict.fromkeys(_str(source, t, f"{path}.topics[{j}]") for j, t in enumerate(tnode.value)))
    instance = _instance_id(source, mf, path, i, instances)
    rack = _str(source, mf["rack"], f"{path}.rack") if "rack" in mf else None
    owned = _owned(source, mf["owned"], f"{path}.owned") if "owned" in mf else ()
    generation = _generation(source, mf, path)
    return Member(id=mid, topics=topics, instance_id=instance, rack=rack, owned=owned, generation=generation)


def parse_group(text: str, source: str = "GROUP.yaml") -> Group:
    check_yaml_depth(text, source, _Loader)
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise PlannerError(f"{source}{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    fields = _root_fields(source, root)
    name = _str(source, fields["group"], "group") if "group" in fields else None
    members_node = fields["members"]
    if not isinstance(members_node, yaml.SequenceNode) or not members_node.value:
        raise _err(source, members_node, "members", "expected a non-empty list of members")
    seen: dict[str, int] = {}
    instances: dict[str, int] = {}
    members = [_member(source, i, mnode, seen, instances) for i, mnode in enumerate(members_node.value)]
    return Group(name=name, members=tuple(members))
