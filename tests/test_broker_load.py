"""Per-broker load and the ZooKeeper controller's leader imbalance ratio (`KafkaController.scala`
`checkAndTriggerAutoLeaderRebalance`)."""

from planner.adapters.topology_yaml import parse_topology
from planner.broker_load import broker_loads
from planner.formats.tables import render_brokers_table

TOPO = """
brokers: [{id: 1}, {id: 2}, {id: 3, state: offline}]
topics:
  - name: a
    assignment: {0: [1, 2], 1: [1, 2], 2: [2, 1], 3: [3, 1]}
    state: {1: {leader: 2, isr: [2, 1]}}
    sizes: {0: 100, 1: 200, 2: 300, 3: 400}
  - name: deleting
    marked_for_deletion: true
    assignment: {0: [2, 1]}
    state: {0: {leader: 1, isr: [1, 2]}}
"""


def test_loads_and_imbalance():
    cluster = parse_topology(TOPO)
    loads = broker_loads(cluster)
    one, two, three = loads[1], loads[2], loads[3]
    assert (one.replicas, one.preferred_leaders, one.leaders, one.bytes) == (5, 2, 3, 1000)
    assert (two.replicas, two.preferred_leaders, two.leaders, two.bytes) == (4, 1, 2, 600)
    assert (three.replicas, three.preferred_leaders, three.leaders) == (1, 1, 0)
    assert one.per_topic == {"a": 4, "deleting": 1}
    assert one.imbalance == 0.5  # partition 1 prefers 1, led by 2
    assert two.imbalance == 0.0  # the topic being deleted is left out, as the controller does
    assert three.imbalance == 1.0


def test_table_marks_only_live_brokers_over_ten_percent():
    cluster = parse_topology(TOPO)
    text = render_brokers_table(cluster, broker_loads(cluster))
    rows = {line.split()[0]: line for line in text.splitlines()[2:5]}
    assert "50% *" in rows["1"]
    assert "100%" in rows["3"] and "100% *" not in rows["3"]
    assert text.endswith("controller runs a preferred leader election for this broker's partitions\n")
