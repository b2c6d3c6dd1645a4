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
line it does not recognise, and any topic the precise loader would reject (unknown broker, duplicate replica, gaps in
partition ids, a replication factor that changes inside a topic, a duplicate topic), makes it give up (None), and the
precise loader reads the whole file and reports the problem with its file, line and YAML path. When it accepts a file
it builds the same cluster as the precise loader (tests compare them).
"""

from __future__ import annotations

import re
from typing import Any, Callable

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


def parse_fast(
    text: str, source: str, header: Callable[[str, str], Cluster], progress: Callable[[int, int], None] | None = None
) -> Cluster | None:
    """The cluster of `text`, or None when the precise loader must read it (see the module's text).

    `progress(done, total)` hears the characters read so far (done == total at the end)."""
    m = _TOPICS.search(text)
    if m is None or "\r" in text or "\t" in text:
        return None
    body = text[m.end() :]
    if not body.endswith("\n"):
        body += "\n"
    if len(body) < FAST_MIN_BYTES:  # small files: the precise loader costs little
        return None
    head = text[: m.start()]
    if _END_OF_DOCUMENT.search(head):
        return None
    try:
        base = header(head, source)
    except PlannerError:  # reported by the precise loader on the whole file
        return None
    if base.topics:
        return None
    topics = _topics(body, base.broker_ids, progress)
    if topics is None:
        return None
    return Cluster(
        brokers=base.brokers, topics=tuple(sorted(topics, key=lambda t: t.name)), name=base.name, mode=base.mode
    )


def _topics(body: str, brokers: tuple[int, ...], progress: Callable[[int, int], None] | None) -> list[Topic] | None:
    import numpy as np

    known = np.asarray(sorted(brokers), dtype=np.int64)
    topics: list[Topic] = []
    names: set[str] = set()
    at = 0
    while at < len(body):
        got = _block_topic(np, body, at)
        if got is None:
            return None
        at, name, topic_id, matrix, sizes = got
        if name in _NULLS or topic_id in _NULLS or name in names or sizes is None or not _valid(np, matrix, known):
            return None
        names.add(name)
        topics.append(_topic(name, topic_id, matrix, sizes))
        if progress is not None and len(topics) % 256 == 0:
            progress(at, len(body))
    if progress is not None:
        progress(len(body), len(body))
    return topics


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
