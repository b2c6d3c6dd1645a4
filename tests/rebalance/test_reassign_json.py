"""Kafka's reassignment / election / log-dirs JSON formats and validation
(`tools/src/test/java/org/apache/kafka/tools/reassign/ReassignPartitionsUnitTest.java`, `LeaderElectionCommand`)."""

import json

import pytest

from planner.formats import kafka_json as kj
from planner.model import Broker, Cluster, Partition, PlannerError, Topic, make_topic
from planner.model import TopicPartition as TP
from planner.rebalance import reassignment as ra


def err(fn, *args, **kw):
    with pytest.raises(PlannerError) as info:
        fn(*args, **kw)
    return str(info.value)


def entry(topic, p, replicas, log_dirs=None):
    d = {"topic": topic, "partition": p, "replicas": replicas}
    if log_dirs is not None:
        d["log_dirs"] = log_dirs
    return d


def doc(*entries, version=1):
    return json.dumps({"version": version, "partitions": list(entries)})


# -- ReassignPartitionsUnitTest.testCurrentPartitionReplicaAssignmentToString -----------------------------------
def test_current_partition_replica_assignment_to_string():
    proposed = {TP("foo", 1): [1, 2, 3], TP("bar", 0): [7, 8, 9]}
    current = {TP("foo", 0): [1, 2, 3], TP("foo", 1): [4, 5, 6], TP("bar", 0): [7, 8], TP("baz", 0): [10, 11, 12]}
    assert kj.current_assignment_text(proposed, current).split("\n") == [
        "Current partition replica assignment",
        "",
        '{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[7,8],"log_dirs":["any","any"]},'
        '{"topic":"foo","partition":1,"replicas":[4,5,6],"log_dirs":["any","any","any"]}]}',
        "",
        "Save this to use as the --reassignment-json-file option during rollback",
    ]


def test_generate_output_text():
    cur = {TP("foo", 0): [1, 2]}
    new = {TP("foo", 0): [2, 3]}
    assert kj.generate_output_text(cur, new) == (
        "Current partition replica assignment\n"
        '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}\n\n'
        "Proposed partition reassignment configuration\n"
        '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[2,3],"log_dirs":["any","any"]}]}\n'
    )


def test_render_sorts_by_java_string_order_then_partition():
    a = {TP("b", 10): [1], TP("b", 2): [2], TP("B", 0): [3], TP("a", 0): [4]}
    parsed = json.loads(kj.render_reassignment_json(a))
    assert [(p["topic"], p["partition"]) for p in parsed["partitions"]] == [("B", 0), ("a", 0), ("b", 2), ("b", 10)]


def test_render_log_dirs_known():
    out = kj.render_reassignment_json({TP("foo", 0): [1, 2]}, {(TP("foo", 0), 2): "/d2"})
    assert out == '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any","/d2"]}]}'


def test_znode_encoding_vector():
    # ReassignPartitionsZNodeTest.testEncode
    assert (
        kj.render_reassign_znode({TP("foo", 0): [1, 2]})
        == '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2]}]}'
    )


# -- ReassignPartitionsUnitTest.testParseExecuteAssignmentArgs --------------------------------------------------
def test_parse_execute_empty():
    assert err(kj.parse_reassignment_json, '{"version":1,"partitions":[]}', "f").startswith(
        "Partition reassignment list cannot be empty"
    )


def test_parse_execute_missing_partitions_is_empty_list():
    assert err(kj.parse_reassignment_json, '{"version":1}', "f") == "Partition reassignment list cannot be empty"


def test_parse_execute_duplicate_partitions():
    text = doc(entry("foo", 0, [0, 1], ["any", "any"]), entry("foo", 0, [2, 3, 4], ["any", "any", "any"]))
    assert (
        err(kj.parse_reassignment_json, text, "f")
        == "Partition reassignment contains duplicate topic partitions: foo-0"
    )


def test_parse_execute_duplicate_replicas():
    text = doc(entry("foo", 0, [0, 0], ["any", "any"]))
    assert err(kj.parse_reassignment_json, text, "f") == (
        "Partition replica lists may not contain duplicate entries: foo-0 contains multiple entries for 0"
    )


def test_parse_execute_duplicate_replicas_several_partitions_joined():
    text = doc(entry("foo", 0, [1, 1, 2, 2]), entry("foo", 1, [3, 4]), entry("bar", 0, [5, 5]))
    assert err(kj.parse_reassignment_json, text, "f") == (
        "Partition replica lists may not contain duplicate entries: foo-0 contains multiple entries for 1,2. "
        "bar-0 contains multiple entries for 5"
    )


def test_parse_execute_all_any():
    text = doc(entry("foo", 0, [1, 2, 3], ["any"] * 3), entry("foo", 1, [3, 4, 5], ["any"] * 3))
    assert kj.parse_reassignment_json(text, "f") == {TP("foo", 0): (1, 2, 3), TP("foo", 1): (3, 4, 5)}
    assert kj.parse_log_dir_moves(text, "f") == {}


def test_parse_execute_log_dir_moves():
    text = doc(entry("foo", 0, [1, 2, 3], ["/tmp/a", "/tmp/b", "/tmp/c"]))
    assert kj.parse_reassignment_json(text, "f") == {TP("foo", 0): (1, 2, 3)}
    assert kj.parse_log_dir_moves(text, "f") == {
        (TP("foo", 0), 1): "/tmp/a",
        (TP("foo", 0), 2): "/tmp/b",
        (TP("foo", 0), 3): "/tmp/c",
    }


def test_parse_size_mismatch_is_first_check():
    text = doc(entry("foo", 0, [1, 2], ["any"]))
    assert err(kj.parse_reassignment_json, text, "f") == (
        "Size of replicas list [1, 2] is different from size of log dirs list [any] for partition foo-0"
    )


def test_parse_empty_replica_list():
    assert err(kj.parse_reassignment_json, doc(entry("foo", 0, [1]), entry("foo", 1, [])), "f") == (
        "Partition replica list cannot be empty"
    )


def test_parse_invalid_json():
    # testPropagateInvalidJsonError: Jackson's message starts "Unexpected character"
    msg = err(
        kj.parse_reassignment_json,
        '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}',
        "reassign.json",
    )
    msg2 = err(kj.parse_reassignment_json, "{invalid-json", "reassign.json")
    assert msg2.startswith("Unexpected character ('i' (code 105))")
    assert "reassign.json" in msg2
    assert msg.startswith("Unexpected end-of-input")


def test_parse_unsupported_version():
    assert (
        err(kj.parse_reassignment_json, doc(entry("foo", 0, [1]), version=2), "f")
        == "Not supported version field value 2"
    )


def test_parse_type_errors_name_the_field():
    assert err(kj.parse_reassignment_json, '{"partitions":[{"topic":"foo","replicas":[1]}]}', "f.json") == (
        "No such field exists: `partition` (f.json)"
    )
    assert err(
        kj.parse_reassignment_json, '{"partitions":[{"topic":"foo","partition":"0","replicas":[1]}]}', "f.json"
    ) == ('Expected `Integer` value, received "0" (f.json)')


# -- ReassignPartitionsUnitTest.testParseGenerateAssignmentArgs -------------------------------------------------
TOPICS_FOO = '{"topics":[{"topic":"foo"}],"version":1}'


def test_parse_generate_duplicate_brokers():
    assert err(kj.parse_generate_args, TOPICS_FOO, "1,1,2", "t").startswith("Broker list contains duplicate entries")
    assert err(kj.parse_generate_args, TOPICS_FOO, "5,2,3,4,5", "t") == "Broker list contains duplicate entries: [5]"


def test_parse_generate_ok():
    assert kj.parse_generate_args(TOPICS_FOO, "5,2,3,4", "t") == ([5, 2, 3, 4], ["foo"])
    two = '{"topics":[{"topic":"foo"},{"topic":"bar"}],"version":1}'
    assert kj.parse_generate_args(two, "5,3,4", "t") == ([5, 3, 4], ["foo", "bar"])


def test_parse_generate_duplicate_topics():
    dup = '{"topics":[{"topic":"foo"},{"topic":"foo"}],"version":1}'
    assert (
        err(kj.parse_generate_args, dup, "5,2,3,4", "t")
        == "List of topics to reassign contains duplicate entries: [foo]"
    )


def test_topics_to_move_defaults_and_errors():
    assert kj.parse_topics_to_move_json('{"topics":[{"topic":"a"}]}', "t") == ["a"]
    assert kj.parse_topics_to_move_json('{"version":1}', "t") == []
    assert err(kj.parse_topics_to_move_json, "nope", "t") == "The input string is not a valid JSON"
    assert err(kj.parse_topics_to_move_json, '{"topics":[],"version":3}', "t") == "Not supported version field value 3"
    assert kj.parse_topics_to_move_json(kj.render_topics_to_move_json(["x", "y"]), "t") == ["x", "y"]


def test_broker_list_java_parse_int():
    assert kj.parse_broker_list("1,2,") == [1, 2]
    assert err(kj.parse_broker_list, "1, 2") == 'For input string: " 2"'
    assert err(kj.parse_broker_list, "") == 'For input string: ""'


# -- execute-time validation ---------------------------------------------------------------------------------------
def test_unknown_broker_id(make_cluster):
    # testExecuteWithInvalidBrokerIdFails: 4 brokers (0-3), replicas [2,3,4]
    c = make_cluster(4, topics={"foo": {0: [0, 1, 2], 1: [1, 2, 3]}})
    assert err(ra.validate_reassignment, c, {TP("foo", 0): [2, 3, 4]}) == "Unknown broker id 4"


def test_unknown_broker_first_in_java_hashset_order(make_cluster):
    c = make_cluster(4, topics={"foo": {0: [0, 1, 2]}})
    # HashSet<Integer> iterates 17 (bucket 1 of 16) before 5
    assert err(ra.validate_reassignment, c, {TP("foo", 0): [5, 17, 0]}) == "Unknown broker id 17"


def test_offline_broker_is_unknown(make_cluster):
    c = make_cluster(4, topics={"foo": {0: [0, 1, 2]}}, offline={3})
    assert err(ra.validate_reassignment, c, {TP("foo", 0): [3, 1, 2]}) == "Unknown broker id 3"


def test_unknown_topic_then_partition(make_cluster):
    # testExecuteWithInvalidPartitionsFails
    c = make_cluster(4, topics={"foo": {0: [0, 1, 2], 1: [1, 2, 3]}})
    assert err(ra.validate_reassignment, c, {TP("foo", 0): [0, 1], TP("quux", 0): [2, 3]}) == "Topic quux not found."
    assert err(ra.validate_reassignment, c, {TP("foo", 0): [0, 1], TP("foo", 5): [2, 3]}) == (
        "Unable to find partition: foo-5"
    )


def test_broker_check_before_topic_check(make_cluster):
    c = make_cluster(4, topics={"foo": {0: [0, 1, 2]}})
    assert err(ra.validate_reassignment, c, {TP("quux", 0): [9]}) == "Unknown broker id 9"


def test_existing_reassignment_blocks_unless_additional():
    t = Topic("foo", (Partition("foo", 0, (0, 1, 2), adding=(2,), removing=(3,)), Partition("foo", 1, (1, 2))))
    c = Cluster(brokers=tuple(Broker(i) for i in range(4)), topics=(t,))
    assert err(ra.validate_reassignment, c, {TP("foo", 1): [2, 3]}) == ra.CANNOT_EXECUTE_BECAUSE_OF_EXISTING
    ra.validate_reassignment(c, {TP("foo", 1): [2, 3]}, additional=True)


def test_validate_ok(make_cluster):
    c = make_cluster(4, topics={"foo": {0: [0, 1, 2], 1: [1, 2, 3]}})
    ra.validate_reassignment(c, {TP("foo", 0): [3, 1, 2]})


# -- ReassignPartitionsUnitTest.testMoveMap: throttles ----------------------------------------------------------
def test_move_map_and_throttles():
    def p(pid, replicas, adding=(), removing=()):
        return Partition("foo", pid, tuple(replicas), tuple(adding), tuple(removing))

    foo = Topic(
        "foo",
        (
            p(0, [1, 2, 3, 4], [4], [3]),
            p(1, [4, 5, 6, 7, 8], [7, 8], [4, 5]),
            p(2, [1, 2, 3, 4], [3, 4], [1, 2]),
            p(3, [1, 2, 3, 4], [3, 4], [1, 2]),
            p(4, [1, 2, 3, 4], [3, 4], [1, 2]),
            p(5, [1, 2, 3, 4], [3, 4], [1, 2]),
        ),
    )
    bar = make_topic("bar", {0: [2, 3, 4]})
    c = Cluster(brokers=tuple(Broker(i) for i in range(1, 9)), topics=(bar, foo))
    proposed = {
        TP("foo", 0): [1, 2, 5],
        TP("foo", 2): [3, 4],
        TP("foo", 3): [5, 6],
        TP("foo", 4): [3],
        TP("foo", 5): [3, 4, 5, 6],
        TP("bar", 0): [1, 2, 3],
    }
    moves = ra.move_map(c, proposed)
    got = {(t, pid): (sorted(m.sources), sorted(m.destinations)) for t, ps in moves.items() for pid, m in ps.items()}
    assert got == {
        ("foo", 0): ([1, 2, 3], [5]),
        ("foo", 1): ([4, 5, 6], [7, 8]),
        ("foo", 2): ([1, 2], [3, 4]),
        ("foo", 3): ([1, 2], [5, 6]),
        ("foo", 4): ([1, 2], [3]),
        ("foo", 5): ([1, 2], [3, 4, 5, 6]),
        ("bar", 0): ([2, 3, 4], [1]),
    }
    assert ra.leader_throttles(moves) == {
        "foo": "0:1,0:2,0:3,1:4,1:5,1:6,2:1,2:2,3:1,3:2,4:1,4:2,5:1,5:2",
        "bar": "0:2,0:3,0:4",
    }
    assert ra.follower_throttles(moves) == {"foo": "0:5,1:7,1:8,2:3,2:4,3:5,3:6,4:3,5:3,5:4,5:5,5:6", "bar": "0:1"}
    assert ra.reassigning_brokers(moves) == [1, 2, 3, 4, 5, 6, 7, 8]


def test_throttle_treeset_string_order(make_cluster):
    c = make_cluster(12, topics={"t": {2: [1], 10: [1]} | {i: [0] for i in range(11) if i not in (2, 10)}})
    moves = ra.move_map(c, {TP("t", 2): [3], TP("t", 10): [3]})
    assert ra.leader_throttles(moves) == {"t": "10:1,2:1"}
    assert ra.follower_throttles(moves) == {"t": "10:3,2:3"}


# -- leader election JSON (LeaderElectionCommand.java) -----------------------------------------------------------
def test_election_json_round_trip_and_errors():
    out = kj.render_election_json([TP("foobar", 2), TP("foo", 1)])
    assert out == '{"partitions":[{"topic":"foo","partition":1},{"topic":"foobar","partition":2}]}'
    assert kj.parse_election_json(out, "e") == [TP("foo", 1), TP("foobar", 2)]
    assert err(kj.parse_election_json, '{"topics":[]}', "e") == 'Replica election data is missing "partitions" field'
    assert err(kj.parse_election_json, "", "e") == "Replica election data is empty"
    dup = '{"partitions":[{"topic":"foo","partition":1},{"topic":"foo","partition":1}]}'
    assert err(kj.parse_election_json, dup, "e") == "Replica election data contains duplicate partitions: foo-1"
    assert err(kj.parse_election_json, dup, "e", java_set=True) == (
        "Replica election data contains duplicate partitions: [foo-1]"
    )


# -- kafka-log-dirs sizes -------------------------------------------------------------------------------------------
def test_log_dirs_sizes():
    text = (
        "Querying brokers for log directories information\n"
        "Received log directory information from brokers 1,2\n"
        '{"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"/d","error":null,"partitions":['
        '{"partition":"my-topic-0","size":100,"offsetLag":0,"isFuture":false},'
        '{"partition":"t-1","size":7,"offsetLag":0,"isFuture":true}]}]},'
        '{"broker":2,"logDirs":[{"logDir":"/d","error":null,"partitions":['
        '{"partition":"my-topic-0","size":90,"offsetLag":10,"isFuture":false},'
        '{"partition":"t-1","size":5,"offsetLag":0,"isFuture":false}]}]}]}\n'
    )
    assert kj.parse_log_dirs_json(text, "sizes.json") == {TP("my-topic", 0): 100, TP("t", 1): 5}
    assert err(kj.parse_log_dirs_json, "nothing here", "sizes.json").startswith("sizes.json: no JSON object")


# -- ReassignPartitionsUnitTest: --verify / --list texts --------------------------------------------------------
def test_partition_reassign_states_to_string():
    S = ra.PartitionReassignmentState
    states = {
        TP("foo", 0): S((1, 2, 3), (1, 2, 3), True),
        TP("foo", 1): S((1, 2, 3), (1, 2, 4), False),
        TP("bar", 0): S((1, 2, 3), (1, 2, 4), False),
    }
    assert kj.partition_reassignment_states_text(states).split("\n") == [
        "Status of partition reassignment:",
        "Reassignment of partition bar-0 is still in progress.",
        "Reassignment of partition foo-0 is completed.",
        "Reassignment of partition foo-1 is still in progress.",
    ]


def test_no_active_reassignment_text_and_states_from_topology():
    t = Topic("foo", (Partition("foo", 0, (1, 2)), Partition("foo", 1, (1, 2, 3), adding=(3,), removing=(1,))))
    c = Cluster(brokers=tuple(Broker(i) for i in range(1, 4)), topics=(t,))
    states = ra.reassignment_states(c, {TP("foo", 0): [2, 3], TP("foo", 1): [2, 3]})
    assert kj.partition_reassignment_states_text(states).split("\n") == [
        "Status of partition reassignment:",
        "There is no active reassignment of partition foo-0, but replica set is 1,2 rather than 2,3.",
        "Reassignment of partition foo-1 is still in progress.",
    ]


def test_replica_move_states_to_string():
    M = ra.LogDirMoveState
    states = {
        (TP("bar", 0), 0): M("completed", "/tmp/kafka-logs0"),
        (TP("foo", 0), 0): M("active", "/tmp/kafka-logs1", "/tmp/kafka-logs0", "/tmp/kafka-logs1"),
        (TP("foo", 1), 0): M("cancelled", "/tmp/kafka-logs1", "/tmp/kafka-logs0"),
        (TP("quux", 0), 0): M("missing-replica", "/tmp/kafka-logs1"),
        (TP("quux", 1), 1): M("active", "/tmp/kafka-logs1", "/tmp/kafka-logs0", "/tmp/kafka-logs2"),
        (TP("quux", 2), 1): M("missing-log-dir", "/tmp/kafka-logs1"),
    }
    assert kj.replica_move_states_text(states).split("\n") == [
        "Reassignment of replica bar-0-0 completed successfully.",
        "Reassignment of replica foo-0-0 is still in progress.",
        "Partition foo-1 on broker 0 is not being moved from log dir /tmp/kafka-logs0 to /tmp/kafka-logs1.",
        "Partition quux-0 cannot be found in any live log directory on broker 0.",
        "Partition quux-1 on broker 1 is being moved to log dir /tmp/kafka-logs2 instead of /tmp/kafka-logs1.",
        "Partition quux-2 is not found in any live log dir on broker 1. There is likely an offline log directory "
        "on the broker.",
    ]


def test_cur_reassignments_to_string(make_cluster):
    # The vector's MockAdminClient reports `replicas` without the adding ones; the formatting is what is pinned here.
    foo = Topic(
        "foo",
        (Partition("foo", 0, (0, 1, 2), adding=(4,)), Partition("foo", 1, (1, 2, 3), adding=(4, 5), removing=(1, 2))),
    )
    bar = Topic("bar", (Partition("bar", 0, (2, 3, 0), removing=(0,)),))
    c = Cluster(brokers=tuple(Broker(i) for i in range(6)), topics=(bar, foo))
    assert kj.current_reassignments_text(make_cluster(3, topics={"t": {0: [0]}})) == "No partition reassignments found."
    assert kj.current_reassignments_text(c).split("\n") == [
        "Current partition reassignments:",
        "bar-0: replicas: 2,3,0. removing: 0.",
        "foo-0: replicas: 0,1,2. adding: 4.",
        "foo-1: replicas: 1,2,3. adding: 4,5. removing: 1,2.",
    ]
