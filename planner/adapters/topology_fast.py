"""The fast path of the topology loader: regular topics read without a YAML parser.

A million-partition topology is a million `N: [a, b, c]` lines; even libyaml spends about a minute on them (it
resolves every scalar through PyYAML's Python resolver). Most of such a file is regular: the layout that
`dump_topology` writes and `bench.gen_cluster` generates. This module reads the part after `topics:` when every topic
has exactly this shape (plain names, decimal integers, no comments, no other keys):

    topics:
      - name: orders
        topic_id: NPmZHyhbR9y00wMglMH2sg     (optional)
        assignment:
          0: [1, 2, 3]
          1: [2, 3, 4]
        sizes:                               (optional, ascending partition ids)
          0: 21474836480

The header (everything before `topics:`) goes through the precise loader. The fast path never reports an error: any
line it does not recognise, any topic the precise loader would reject (unknown broker, duplicate replica, gaps in
partition ids, a duplicate topic, a name Kafka's `Topic.validate` refuses: `.`, `..`, longer than 249 characters),
and a replication factor that changes inside a topic, makes it give up (None), and the precise loader reads the
whole file and reports the problem with its file, line and YAML path. When it accepts a file
it builds the same cluster as the precise loader (tests compare them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from planner.adapters.validate import topic_name_problem
from planner.model import Cluster, Partition, PlannerError, Topic

_NAME = r"[A-Za-z0-9_.][A-Za-z0-9._-]*"
_INT = r"(?:0|[1-9][0-9]{0,17})"  # YAML 1.1 decimal (no leading zero: that is octal), within int64: sizes
_ID = r"(?:0|[1-9][0-9]{0,8})"  # broker and partition ids, within int32
_NULLS = frozenset({"null", "Null", "NULL"})
_TOPICS = re.compile(r"^topics:[ ]*\n", re.M)
_HEAD = re.compile(rf"  - name: ({_NAME})\n(?:    topic_id: ({_NAME})\n)?    assignment:\n(?=      {_ID}: \[)")
_SIZES = re.compile(rf"    sizes:\n((?:      {_ID}: {_INT}\n)+)")
_END_OF_DOCUMENT = re.compile(r"^\.\.\.", re.M)
FAST_MIN_BYTES = 200_000  # topics text below this size goes to the precise loader (tests lower it)
_PUNCT = str.maketrans(":[],", "    ")
_ROWS: dict[int, re.Pattern[str]] = {}


def _rows_pattern(rf: int) -> re.Pattern[str]:
    """Lines `      N: [a, b, c]` with exactly `rf` replicas each."""
    if rf not in _ROWS:
        _ROWS[rf] = re.compile(rf"(?:      {_ID}: \[{_ID}(?:, {_ID}){{{rf - 1}}}\]\n)+")
    return _ROWS[rf]


@dataclass(frozen=True)
class Rejected:
    """Where the fast path gave up on a file whose other topics are regular, so that the precise loader can read
    only that part (`topology_yaml` does) and still report the file's first problem.

    `index` is the topic given up on (-1: the header before `topics:`, then the text holds the first two topics);
    `text` holds the header, `topics:`, that topic and the next one (the precise loader's error for a topic can
    point at the line after it). Line `first_line` of `text` and those after it are lines `line_shift` further
    down in the file. `seen` maps the names of the topics before to their index (for the duplicate-topic check)."""

    index: int
    text: str
    first_line: int
    line_shift: int
    seen: dict[str, int] = field(default_factory=dict)


def parse_fast(
    text: str, source: str, header: Callable[[str, str], Cluster], progress: Callable[[int, int], None] | None = None
) -> Cluster | Rejected | None:
    """The cluster of `text`; None when the precise loader must read it (see the module's text); `Rejected` when one
    topic (or the header) stopped the fast path and every topic after it is regular.

    `progress(done, total)` hears the characters read so far (done == total at the end)."""
    m = _TOPICS.search(text)
    if m is None or "\r" in text or "\t" in text:
        return None
    body = text[m.end() :]
    exact_end = body.endswith("\n")  # a problem can be read from a part of the file only when it ends a line
    if not exact_end:
        body += "\n"
    if len(body) < FAST_MIN_BYTES:  # small files: the precise loader costs little
        return None
    head = text[: m.start()]
    if _END_OF_DOCUMENT.search(head):
        return None
    try:
        base = header(head, source)
    except PlannerError:  # the precise loader reports it (from the header and two topics when the rest is regular)
        return _reject(text[: m.end()], body, (0, 0, {}), header_only=True) if exact_end else None
    if base.topics:
        return None
    topics, stop = _topics(body, base.broker_ids, progress)
    if topics is None:
        return _reject(text[: m.end()], body, stop) if stop is not None and exact_end else None
    return Cluster(
        brokers=base.brokers, topics=tuple(sorted(topics, key=lambda t: t.name)), name=base.name, mode=base.mode
    )


_ENTRY = re.compile(r"^  - ", re.M)


def _regular_from(body: str, at: int | None) -> bool:
    """Every topic from `at` to the end has the regular shape (so the YAML there is well formed)."""
    while at is not None and at < len(body):
        at = _shape_end(body, at)
    return at is not None


def _reject(head: str, body: str, stop: tuple[int, int, dict[str, int]], header_only: bool = False) -> Rejected | None:
    """The header and the topic at `stop` (index, offset in `body`, names before) with the next one, when every
    topic after those is regular (None otherwise)."""
    index, start, seen = stop
    if header_only and not _regular_from(body, 0):  # the header's problem comes first if the rest is well formed
        return None
    entry = _ENTRY.search(body, start + 1)
    end = len(body)
    if entry is not None:  # the next topic goes along; all after it must be regular
        after = _shape_end(body, entry.start())
        if after is None or not _regular_from(body, after):
            return None
        end = after
    part = body[start:end]
    if "\n    partitions:" in part or "&" in part or "*" in part:
        return None  # a placed topic depends on the load before it; anchors and aliases on nodes elsewhere
    return Rejected(-1 if header_only else index, head + part, head.count("\n") + 1, body.count("\n", 0, start), seen)


def _topics(
    body: str, brokers: tuple[int, ...], progress: Callable[[int, int], None] | None
) -> tuple[list[Topic] | None, tuple[int, int, dict[str, int]] | None]:
    """(topics, None), or (None, (index, offset, names before) of the topic that stopped the fast path). Every topic
    is checked before any is built, so a problem is found without building the partitions before it."""
    import numpy as np

    known = np.asarray(sorted(brokers), dtype=np.int64)
    read: list[tuple[str, str | None, Any, dict[int, int]]] = []
    names: dict[str, int] = {}
    at, total = 0, len(body)
    while at < total:
        got = _block_topic(np, body, at)
        if got is None:
            return None, (len(read), at, names)
        end, name, topic_id, matrix, sizes = got
        if not (end == total or body.startswith("  - ", end)):  # the topic goes on in a form not read here
            return None, (len(read), at, names)
        if name in _NULLS or topic_id in _NULLS or name in names or sizes is None or not _valid(np, matrix, known):
            return None, (len(read), at, names)
        if topic_name_problem(name):  # ".", "..", over 249 characters (Topic.validate): the precise loader words it
            return None, (len(read), at, names)
        names[name] = len(read)
        read.append((name, topic_id, matrix, sizes))
        at = end
        if progress is not None and len(read) % 256 == 0:
            progress(at // 2, total)  # reading is about half the work, building the partitions the other half
    topics = []
    for i, (name, topic_id, matrix, sizes) in enumerate(read):
        topics.append(_topic(name, topic_id, matrix, sizes))
        if progress is not None and i % 256 == 255:
            progress(total // 2 + (total - total // 2) * i // len(read), total)
    if progress is not None:
        progress(total, total)
    return topics, None


def _shape_end(body: str, at: int) -> int | None:
    """End of the regular topic at `at` (its shape only: well-formed YAML), or None."""
    head = _HEAD.match(body, at)
    if head is None:
        return None
    at = head.end()
    block = _rows_pattern(body.count(",", at, body.index("\n", at)) + 1).match(body, at)
    if block is None:
        return None
    sizes = _SIZES.match(body, block.end())
    end = sizes.end() if sizes else block.end()
    return end if end == len(body) or body.startswith("  - ", end) else None


def _block_topic(np: Any, body: str, at: int):
    """(end, name, topic_id, replica matrix, {partition: size} or None when invalid) of one block topic, or None."""
    head = _HEAD.match(body, at)
    if head is None:
        return None
    at = head.end()
    rf = body.count(",", at, body.index("\n", at)) + 1
    block = _rows_pattern(rf).match(body, at)
    if block is None:
        return None
    text = block.group()
    rows = text.count("\n")
    table = np.array(text.translate(_PUNCT).split(), dtype=np.int64).reshape(rows, rf + 1)
    if not np.array_equal(table[:, 0], np.arange(rows)):
        return None
    sizes_block = _SIZES.match(body, block.end())
    end = sizes_block.end() if sizes_block else block.end()
    sizes = _keyed_sizes(np, sizes_block.group(1), rows) if sizes_block else {}
    return end, head.group(1), head.group(2), table[:, 1:], sizes


def _keyed_sizes(np: Any, text: str, rows: int) -> dict[int, int] | None:
    values = np.array(text.translate(_PUNCT).split(), dtype=np.int64).reshape(-1, 2)
    pids = values[:, 0]
    if np.any(np.diff(pids) <= 0) or pids[-1] >= rows:
        return None
    return dict(zip(pids.tolist(), values[:, 1].tolist()))


def _valid(np: Any, matrix: Any, known: Any) -> bool:
    """Every replica a known broker, no broker twice in a partition."""
    at = np.minimum(np.searchsorted(known, matrix), known.size - 1)
    if not (known[at] == matrix).all():
        return False
    if matrix.shape[1] > 1:
        ordered = np.sort(matrix, axis=1)
        if (ordered[:, 1:] == ordered[:, :-1]).any():
            return False
    return True


def _topic(name: str, topic_id: str | None, matrix: Any, sizes: dict[int, int]) -> Topic:
    get = sizes.get
    parts = tuple(Partition(name, p, tuple(r), (), (), None, get(p)) for p, r in enumerate(matrix.tolist()))
    return Topic(name=name, partitions=parts, configs={}, topic_id=topic_id, marked_for_deletion=False)
