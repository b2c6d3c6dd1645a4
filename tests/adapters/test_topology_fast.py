"""The topology loader's fast path (planner.adapters.topology_fast) against the precise loader: same clusters, and
every input the fast path does not accept reaches the precise loader's error with its line and YAML path."""

import pytest

from bench.gen_cluster import generate, write_yaml
from planner.adapters import topology_fast
from planner.adapters import topology_yaml as topology
from planner.adapters.topology_yaml import _parse_precise, dump_topology, parse_topology
from planner.model import Cluster, PlannerError

SMALL = """cluster: c
mode: zookeeper
brokers:
  - {id: 1, rack: a}
  - {id: 2, rack: b}
  - {id: 3, rack: c}
  - {id: 10, rack: a}
topics:
  - name: orders
    topic_id: NPmZHyhbR9y00wMglMH2sg
    assignment:
      0: [1, 2, 3]
      1: [2, 3, 10]
      2: [3, 10, 1]
    sizes:
      0: 21474836480
      2: 0
  - name: a.b_c-d
    assignment:
      0: [10]
      1: [1]
  - name: clicks
    assignment:
      0: [2, 1]
"""


def outcome(parse, text):
    try:
        return parse(text, "x.yaml")
    except PlannerError as exc:
        return str(exc)


@pytest.fixture
def fast_always(monkeypatch):
    monkeypatch.setattr(topology_fast, "FAST_MIN_BYTES", 0)


def test_fast_path_reads_small_regular_file(fast_always):
    cluster = topology_fast.parse_fast(SMALL, "x.yaml", _parse_precise)
    assert cluster is not None
    assert cluster == _parse_precise(SMALL, "x.yaml")
    assert [t.name for t in cluster.topics] == ["a.b_c-d", "clicks", "orders"]
    assert [p.size for p in cluster.topic("orders").partitions] == [21474836480, None, 0]
    assert cluster.topic("orders").topic_id == "NPmZHyhbR9y00wMglMH2sg"


MUTATIONS = [
    ("      1: [2, 3, 10]\n", "      1: [2, 3, 7]\n"),  # unknown broker
    ("      1: [2, 3, 10]\n", "      1: [2, 3, 3]\n"),  # duplicate replica
    ("      1: [2, 3, 10]\n", "      1: [2, 3]\n"),  # RF changes inside the topic
    ("      2: [3, 10, 1]\n", "      3: [3, 10, 1]\n"),  # gap in partition ids
    ("      2: [3, 10, 1]\n", "      1: [3, 10, 1]\n"),  # duplicate partition id
    ("      2: 0\n", "      3: 0\n"),  # size of a partition that does not exist
    ("      2: 0\n", "      0: 0\n"),  # duplicate size key
    ("      2: 0\n", "      2: 010\n"),  # octal size (YAML 1.1)
    ("      2: 0\n", "      2: -1\n"),  # negative size
    ("      0: [10]\n", "      0: [010]\n"),  # octal broker id: 8, unknown
    ("  - name: clicks\n", "  - name: orders\n"),  # duplicate topic
    ("  - name: clicks\n", "  - name: null\n"),  # null name
    ("  - name: clicks\n", "  - name: 'clicks'\n"),  # quoted: precise path, same cluster
    ("  - name: clicks\n", "  - name: clicks  # comment\n"),
    ("  - name: clicks\n", "  - name: '12'\n"),
    ("    topic_id: NPmZHyhbR9y00wMglMH2sg\n", "    topic_id: null\n"),
    ("    topic_id: NPmZHyhbR9y00wMglMH2sg\n", "    topic_id: 12\n"),
    ("    topic_id: NPmZHyhbR9y00wMglMH2sg\n", "    configs: {retention.ms: 1000}\n"),
    ("  - {id: 10, rack: a}\n", "  - {id: 10, rack: a}\n  - {id: 10, rack: b}\n"),  # header error
    ("mode: zookeeper\n", "mode: zk\n"),
    ("topics:\n", "topics: # the topics\n"),
    ("topics:\n", "...\ntopics:\n"),
    (
        "  - name: clicks\n    assignment:\n      0: [2, 1]\n",
        "  - name: clicks\n    partitions: 4\n    replication_factor: 2\n",
    ),
    ("      0: [2, 1]\n", "      0: [2, 1]\nextra: 1\n"),
    ("      0: [2, 1]\n", "      0: [2, 1]\n    sizes: {0: 5}\n"),
    ("      0: [2, 1]\n", "      0: [2,1]\n"),
    ("      0: [2, 1]\n", "      0: [2, 1]"),  # no newline at the end
    ("      0: [2, 1]\n", "      0: [2, 1000000000]\n"),
    ("      0: [2, 1]\n", "      0: []\n"),
    ("  - name: clicks\n", "  - name: ..\n"),  # Kafka's Topic.validate refuses "." and ".."
    ("  - name: clicks\n", "  - name: .\n"),
    ("  - name: clicks\n", "  - name: " + "c" * 250 + "\n"),  # over 249 characters
    ("  - name: clicks\n", "  - name: " + "c" * 249 + "\n"),  # 249: accepted by both
]


@pytest.mark.parametrize("old, new", MUTATIONS)
def test_fast_path_same_outcome_as_precise(fast_always, old, new):
    text = SMALL.replace(old, new)
    assert text != SMALL
    assert outcome(parse_topology, text) == outcome(_parse_precise, text)


def test_fast_path_errors_keep_line_and_path(fast_always):
    text = SMALL.replace("      1: [2, 3, 10]\n", "      1: [2, 3, 7]\n")
    assert outcome(parse_topology, text) == "x.yaml:13: topics[0].assignment.1[2]: unknown broker 7 (brokers: 1,2,3,10)"
    text = SMALL.replace("      1: [2, 3, 10]\n", "      1: [2, 3]\n")  # RF 3, 2, 3: the precise loader reads it
    cluster = outcome(parse_topology, text)
    assert [p.replicas for p in cluster.topic("orders").partitions] == [(1, 2, 3), (2, 3), (3, 10, 1)]
    assert cluster == outcome(_parse_precise, text)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    path = tmp_path_factory.mktemp("gen") / "cluster-20000.yaml"
    write_yaml(str(path), *generate(20_000))
    return path.read_text()


def test_generated_cluster_fast_equals_precise(generated):
    assert len(generated) > topology_fast.FAST_MIN_BYTES
    fast = topology_fast.parse_fast(generated, "g.yaml", _parse_precise)
    assert fast is not None
    assert fast == _parse_precise(generated, "g.yaml")
    assert sum(t.partition_count for t in fast.topics) == 20_000
    assert len(fast.brokers) == 40
    assert parse_topology(dump_topology(fast)) == fast  # the writer's layout takes the fast path too
    assert topology_fast.parse_fast(dump_topology(fast), "g.yaml", _parse_precise) == fast


def test_generated_cluster_error_line(generated):
    lines = generated.splitlines(keepends=True)
    target = max(i for i, line in enumerate(lines) if line.startswith("      41: ["))  # deep in the file
    topic_index = sum(1 for line in lines[:target] if line.startswith("  - name: ")) - 1
    lines[target] = lines[target][: lines[target].rindex(",")] + ", 99]\n"
    with pytest.raises(PlannerError) as e:
        parse_topology("".join(lines), "g.yaml")
    assert str(e.value) == (
        f"g.yaml:{target + 1}: topics[{topic_index}].assignment.41[2]: unknown broker 99 "
        f"(brokers: {','.join(map(str, range(1, 41)))})"
    )
    assert topology.parse_topology is parse_topology


class _Terminal:
    def __init__(self):
        self.text = ""

    def isatty(self):
        return True

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def test_progress_line_only_on_a_terminal(generated):
    import io

    from planner.adapters.progress import progress_line

    assert progress_line("reading x", io.StringIO()) is None
    term = _Terminal()
    report = progress_line("reading g.yaml", term, interval=0)
    seen = []
    cluster = parse_topology(generated, "g.yaml", lambda done, total: (seen.append((done, total)), report(done, total)))
    assert sum(t.partition_count for t in cluster.topics) == 20_000
    # 321 topics: a report at 256 read (half the work), one at 256 built, one at the end
    assert seen[-1][0] == seen[-1][1] and len(seen) == 3 and seen[0][0] < seen[1][1] // 2 < seen[1][0]
    shown = "".join(f"\rreading g.yaml: {100 * done // total}%\033[K" for done, total in seen[:2])
    assert term.text == shown + "\r\033[K"


def _mutate(text, line_no, new):
    lines = text.split("\n")
    lines[line_no] = new(lines[line_no])
    return "\n".join(lines)


def _row_after(text, fraction):
    """Index of the first `      N: [..]` row line at or after `fraction` of the file's lines."""
    lines = text.split("\n")
    i = int(len(lines) * fraction)
    while not (lines[i].startswith("      ") and "[" in lines[i]):
        i += 1
    return i


LOCAL_MUTATIONS = [
    (0.5, lambda line: line.split(":")[0] + ": [1, 2, 999]"),  # unknown broker
    (0.5, lambda line: line.split(":")[0] + ": [1, 2"),  # unclosed flow sequence
    (0.3, lambda line: line.split(":")[0] + ": [1, 1, 2]"),  # duplicate replica
    (0.7, lambda line: line.split(":")[0] + ": [1, 2]"),  # RF changes inside the topic
    (0.2, lambda line: line + "  # a comment: valid, read by the precise loader"),
    (0.9, lambda line: line.split(":")[0] + ": [1, 2, 999]"),  # near the end
]


@pytest.mark.parametrize("fraction, change", LOCAL_MUTATIONS)
def test_a_problem_in_a_large_file_reads_one_topic_and_reports_as_the_whole_file_would(
    generated, monkeypatch, fraction, change
):
    text = _mutate(generated, _row_after(generated, fraction), change)
    whole = outcome(_parse_precise, text)
    reads = []
    precise = topology._parse_precise
    monkeypatch.setattr(topology, "_parse_precise", lambda t, s, part=None: reads.append(len(t)) or precise(t, s, part))
    assert outcome(parse_topology, text) == whole
    if isinstance(whole, str):
        assert max(reads) < len(text) // 100  # the header and the failing topic with its neighbour, not the file


def test_a_header_problem_in_a_large_file_is_read_from_the_header(generated, monkeypatch):
    text = generated.replace("  - {id: 2, rack: rack-1}\n", "  - {id: 2, rack: rack-1}\n  - {id: 2, rack: rack-2}\n")
    whole = outcome(_parse_precise, text)
    assert whole == "x.yaml:7: brokers[2].id: duplicate broker id 2"
    reads = []
    precise = topology._parse_precise
    monkeypatch.setattr(topology, "_parse_precise", lambda t, s, part=None: reads.append(len(t)) or precise(t, s, part))
    assert outcome(parse_topology, text) == whole
    assert max(reads) < len(text) // 100


def test_a_duplicate_topic_in_a_large_file_names_the_first(generated):
    names = [line for line in generated.split("\n") if line.startswith("  - name: ")]
    text = generated.replace(names[300] + "\n", names[12] + "\n")
    whole = outcome(_parse_precise, text)
    assert whole.endswith(f"topics[300].name: duplicate topic '{names[12][10:]}' (also topics[12])")
    assert outcome(parse_topology, text) == whole


@pytest.mark.parametrize(
    "name, message",
    [
        ("..", 'x.yaml:22: topics[2].name: Topic name cannot be "." or ".."'),
        (".", 'x.yaml:22: topics[2].name: Topic name cannot be "." or ".."'),
        (
            "c" * 250,
            f"x.yaml:22: topics[2].name: Topic name is illegal, it can't be longer than 249 characters, topic name: "
            f"{'c' * 250}",
        ),
    ],
)
def test_fast_path_refuses_the_names_kafka_refuses(fast_always, name, message):
    text = SMALL.replace("  - name: clicks\n", f"  - name: {name}\n")
    assert not isinstance(topology_fast.parse_fast(text, "x.yaml", _parse_precise), Cluster)  # left to the precise
    assert outcome(parse_topology, text) == message
