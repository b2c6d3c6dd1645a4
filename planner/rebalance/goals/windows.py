"""Which windows of the byte goal's free steps may hold a change the constraints allow, for many pairs at once.

Goals: a free step (`byte_balance._Free`) gives each replica i of the heavy broker a window among the light broker's
replicas: the first 4 of them (16 for one going home), in size order, from the smallest that moves at most `top`
bytes. Walked in Python, one call per replica, they were most of the byte goal's time (issue 30's
zipf-giants-perbroker at 100,000 partitions: 49 million windows in 571,000 pair scans, 87 % of the plan), yet the topic
ranges refuse every candidate of nearly all of them (at 10,000 partitions: 88 % of the windows). `hopeful` answers for
the windows of every pair of a step at once, on arrays, which may hold one they do not refuse; the scans walk only
those, in their own order, so the plans are the same.

Constraints: exact. A window is left out only where its walk (`_Free._exchanges`) would certainly end without a
change, whatever the best so far: every candidate in it is refused by the topic ranges, which the walk asks before
any other constraint where every check only reads (`_Free._refused`: an exchange across topics where the ranges do
not let both go) and passes over, or is a partition both brokers hold (passed over), until the window's end or a
replica as large as i (where the walk ends). A replica going home is always walked: its window is longer and its
exchanges copy less.

Algorithm: every replica's window is a row of 4 slots in the light brokers' replicas, laid end to end (each pair's
sizes offset by the pair's rank × `span`, so one sorted search finds every window's start); a row is hopeful where its
first slot not passed over is inside the window.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where a step has windows enough (`byte_balance.VECTOR_WINDOWS`)
    import numpy as np

WINDOW = 4  # a replica's window: `_Free.TRIES`


def hopeful(
    pair: "np.ndarray",
    ids: "np.ndarray",
    si: "np.ndarray",
    ti: "np.ndarray",
    ai: "np.ndarray",
    home: "np.ndarray",
    top: "np.ndarray",
    span: int,
    theirs: "tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]",
    ends: "np.ndarray",
) -> "np.ndarray":
    """Whether each row's window may hold a candidate the topic ranges do not refuse.

    A row: one of the heavy broker's replicas in one pair (`pair`: the pair's rank), its partition `ids`, size `si`,
    topic `ti`, `ai` whether the ranges let that topic go from the heavy broker to the light one, `home` whether it
    goes home (always hopeful). `top`: per pair, the most bytes an exchange may move. `theirs`: the light brokers'
    replicas, each pair's in size order, laid end to end: rank × `span` + size (sorted), partition, size, topic, and
    whether the ranges let that topic go from the light broker to the heavy one; `ends`: per pair, where its run
    ends."""
    import numpy as np

    rows = len(ids)
    placed, js, sj, uj, bj = theirs
    if not rows or not len(js):
        return home.copy()
    start = pair * span + np.maximum(np.ceil(si - top[pair]).astype(np.int64), 0)
    at = np.searchsorted(placed, start)[:, None] + np.arange(WINDOW)
    end = at >= ends[pair][:, None]  # past the pair's run: the window ends
    at[at >= len(js)] = len(js) - 1
    s = si[:, None]
    end |= sj[at] >= s  # as large as i: the walk ends
    passed = (js[at] == ids[:, None]) | ((ti[:, None] != uj[at]) & ~(ai[:, None] & bj[at]))
    stop = end | ~passed
    first = stop.argmax(axis=1)  # where each walk stops (0 where every slot is passed over: not hopeful)
    row = np.arange(rows)
    return (stop[row, first] & ~end[row, first]) | home
