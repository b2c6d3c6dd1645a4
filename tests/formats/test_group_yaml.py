"""GROUP.yaml (`planner.formats.group_yaml.parse_group`): every check's exact text and a full parse."""

import pytest

from planner.assignors.group import Member
from planner.formats.group_yaml import Group, parse_group
from planner.model import PlannerError
from planner.model import TopicPartition as TP


@pytest.mark.parametrize(
    "text, message",
    [
        ("- a\n", "g.yaml:1: expected a mapping with a 'members' list"),
        ("group: g\n", "g.yaml:1: members: missing: list the group's members"),
        (
            "colour: red\nmembers:\n  - {id: a, topics: [t]}\n",
            "g.yaml:1: colour: unknown key 'colour' (expected one of: group, members)",
        ),
        ("members: []\n", "g.yaml:1: members: expected a non-empty list of members"),
        ("members: [x]\n", "g.yaml:1: members[0]: expected a mapping with id and topics"),
        (
            "members:\n  - {id: a, topics: [t], colour: red}\n",
            "g.yaml:2: members[0].colour: unknown key 'colour' (expected one of: id, instance_id, rack, topics, owned, "
            "generation)",
        ),
        ("members:\n  - {id: a}\n", "g.yaml:2: members[0].topics: missing"),
        (
            "members:\n  - {id: a, topics: [t]}\n  - {id: a, topics: [t]}\n",
            "g.yaml:3: members[1].id: duplicate member id 'a' (also members[0])",
        ),
        ("members:\n  - {id: a, topics: t}\n", "g.yaml:2: members[0].topics: expected a list of topic names"),
        (
            "members:\n  - {id: a, topics: [t], instance_id: i}\n  - {id: b, topics: [t], instance_id: i}\n",
            "g.yaml:3: members[1].instance_id: duplicate group.instance.id 'i' (also members[0])",
        ),
        (
            "members:\n  - {id: a, topics: [t], generation: x}\n",
            "g.yaml:2: members[0].generation: expected an integer generation id",
        ),
        ("members: [\n", "g.yaml:2: not valid YAML: did not find expected node content"),
    ],
)
def test_group_file_messages(text, message):
    with pytest.raises(PlannerError) as exc:
        parse_group(text, "g.yaml")
    assert str(exc.value) == message


def test_group_file_every_field():
    text = (
        "group: g\nmembers:\n  - "
        "{id: a, topics: [t, u, t], instance_id: i, rack: r1, owned: [t-0, u-2], generation: 3}\n"
        "  - {id: b, topics: [u], owned: {u: [1, 0]}}\n  - {id: c, topics: [t], owned: null}\n"
    )
    assert parse_group(text, "g.yaml") == Group(
        name="g",
        members=(
            Member(id="a", topics=("t", "u"), instance_id="i", rack="r1", owned=(TP("t", 0), TP("u", 2)), generation=3),
            Member(id="b", topics=("u",), owned=(TP("u", 1), TP("u", 0))),
            Member(id="c", topics=("t",)),
        ),
    )
