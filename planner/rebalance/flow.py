"""Flow networks on integer capacities and costs: the most flow (Dinic's), the least-cost flow (primal-dual), and
whether a flow meets lower bounds on arcs. The rebalancer's networks are bipartite and small enough to solve exactly:
the removals a rack repair takes (`moves`), each topic's +1 slots (`goals.slots`), the preferred leaders
(`goals.preferred_leaders`). Pure.

Callers hold arcs by the index `arc` (or `bounded`, `fan`) returns and ask through the API: what an arc carries
(`flow`, `flows`), what room it has left (`room`), what a node must still send on (`surplus`), an arc's bounds or
capacity raised or lowered (`rebound`: its flow clipped into them), and the solvers (`max_flow`, `min_cost_flow`,
`feasible`, and `settle`: the flow made feasible again after `rebound`s, from the flow the last question left). No
caller reads or writes the arrays below.

Inside, arcs come in pairs: an arc at an even index, its residual twin (the flow it carries, to send back) at the odd
index after it, so `cap[e]` is what arc e has left and `e ^ 1` is its twin. Both solvers run Dinic's blocking flow:
levels by breadth-first search, then augmenting paths along them, depth first. The least-cost flow runs it on the arcs
whose reduced cost (on Dijkstra's potentials) is 0, the most flow on every arc.
"""

from __future__ import annotations

import heapq
from itertools import chain, compress, repeat
from operator import add, sub
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

if TYPE_CHECKING:  # numpy is imported where networks of `VECTOR_ARCS` arcs are solved: describe never loads it
    import numpy as np

FAR = 1 << 62  # a distance: not reached; an amount: no limit
# arcs a `min_cost_flow` looks at (about: rounds x arcs) between two questions to its `stop`: every round on a network
# of this many arcs, every 64 rounds on one of 3,125 (a small flow asks none)
STOP_WORK = 200_000
# arcs from which `min_cost_flow` finds its distances and zero-cost arcs with numpy arrays (`_Vector`) instead of
# Python lists: the same numbers, without a Python loop over every arc every round
VECTOR_ARCS = 20_000


class Network:
    """A directed network: nodes 0, 1, ..., arcs with a capacity and a cost, some with a lower bound, nodes with a
    supply (what they must send on: taken in where negative)."""

    def __init__(self, nodes: int = 0) -> None:
        self.adj: list[list[int]] = [[] for _ in range(nodes)]
        self.to: list[int] = []
        self.cap: list[int] = []
        self.cost: list[int] = []
        # node -> what it must send on more than its arcs' flows take out: its supply, plus what its arcs' lower
        # bounds bring in less what they take out (and, after `rebound`, what its arcs' flows changed by)
        self.excess: dict[int, int] = {}
        self.lower: dict[int, int] = {}  # arc -> its lower bound, where not 0 (`flow` counts it)
        self.ends: tuple[int, int, list[tuple[int, int]]] | None = None  # `settle`'s source, sink, arcs per node

    def node(self, supply: int = 0) -> int:
        """A new node's index; `supply`: what it must send on (take in, where negative) for `feasible`/`settle`."""
        self.adj.append([])
        v = len(self.adj) - 1
        if supply:
            self.excess[v] = supply
        return v

    def arc(self, u: int, v: int, cap: int, cost: int = 0, flow: int = 0) -> int:
        """An arc u -> v of capacity `cap` carrying `flow` already; returns its index, the handle `flow`, `room` and
        `rebound` take."""
        e = len(self.to)
        self.adj[u].append(e)
        self.adj[v].append(e + 1)
        self.to += (v, u)
        self.cap += (cap - flow, flow)
        self.cost += (cost, -cost)
        return e

    def fan(self, u: int, vs: Sequence[int], cost: int | Sequence[int] = 0, flow: int = 0) -> range:
        """Arcs of capacity 1 from u to each of `vs`, in order, each carrying `flow` (0 or 1) already, at `cost` (or
        each at its own: `cost[k]` to `vs[k]`): their indexes."""
        e = len(self.to)
        adj = self.adj
        adj[u].extend(range(e, e + 2 * len(vs), 2))
        for v, k in zip(vs, range(e + 1, e + 2 * len(vs), 2)):
            adj[v].append(k)
        self.to += chain.from_iterable(zip(vs, repeat(u)))
        self.cap += (1 - flow, flow) * len(vs)
        if isinstance(cost, int):
            self.cost += (cost, -cost) * len(vs)
        else:
            self.cost += chain.from_iterable((c, -c) for c in cost)
        return range(e, e + 2 * len(vs), 2)

    def bounded(self, u: int, v: int, lo: int, hi: int) -> int | None:
        """An arc u -> v that must carry at least `lo` units (0 when below it) and at most `hi`, for `feasible` and
        `settle`: its index (`flow` counts its lower bound as carried), None when hi < lo."""
        lo = max(0, lo)
        if hi < lo:
            return None
        e = self.arc(u, v, hi - lo)
        self.excess[v] = self.excess.get(v, 0) + lo
        self.excess[u] = self.excess.get(u, 0) - lo
        if lo:
            self.lower[e] = lo
        return e

    def flow(self, e: int) -> int:
        """What arc e carries (a bounded arc: its lower bound with it)."""
        return self.cap[e ^ 1] + self.lower.get(e, 0)

    def flows(self, arcs: Iterable[int]) -> list[int]:
        """What each of `arcs` carries (`flow`), in order."""
        cap, lower = self.cap, self.lower
        if not lower:
            return [cap[e ^ 1] for e in arcs]
        return [cap[e ^ 1] + lower.get(e, 0) for e in arcs]

    def room(self, e: int) -> int:
        """What more arc e may carry."""
        return self.cap[e]

    def surplus(self, v: int) -> int:
        """What node v must send on more than the flows of its arcs take out (`excess`: short where negative): before
        a solver runs, its supply plus what its arcs' lower bounds bring in less what they take out."""
        return self.excess.get(v, 0)

    def rebound(self, e: int, lo: int, hi: int) -> None:
        """Arc e must now carry lo..hi (0 <= lo <= hi; raising or lowering a plain arc's capacity: 0..cap): what it
        carries is clipped into that range, and what that took from it or added stays at its ends (its tail holds
        what it no longer sends on, its head lacks it: their `surplus`), for `settle` to route."""
        cap, lower = self.cap, self.lower
        carried = cap[e ^ 1] + lower.get(e, 0)
        clipped = min(max(carried, lo), hi)
        cap[e], cap[e ^ 1] = hi - clipped, clipped - lo
        if lo:
            lower[e] = lo
        else:
            lower.pop(e, None)
        if carried != clipped:
            excess, u, v = self.excess, self.to[e ^ 1], self.to[e]
            excess[u] = excess.get(u, 0) + carried - clipped
            excess[v] = excess.get(v, 0) - carried + clipped

    def settle(self) -> int:
        """The flow made feasible again after `rebound`s, warm: from the flow the arcs carry, a max flow from a source
        into every node with surplus to a sink out of every node short, over the residual network (the reduction of
        `feasible`, from that flow instead of the lower bounds alone), which becomes the arcs' (the surpluses less
        it). Returns the surplus it leaves: 0 where the flow now meets every bound and supply, else the least any
        flow within the bounds leaves. A question that changes a few bounds by 1 moves a few units.

        The source, the sink and an arc from the one and to the other for each node are made at the first call (no
        node may be added after it) and kept. Not for a network `feasible` ran on: its source and sink keep the flow
        they sent, which the surpluses do not count."""
        if self.ends is None:
            nodes = len(self.adj)
            s, z = self.node(), self.node()
            self.ends = (s, z, [(self.arc(s, v, 0), self.arc(v, z, 0)) for v in range(nodes)])
        s, z, ends = self.ends
        cap, excess = self.cap, self.excess
        need = 0
        for v, (into, out) in enumerate(ends):
            more = excess.get(v, 0)
            cap[into], cap[into ^ 1], cap[out], cap[out ^ 1] = max(more, 0), 0, max(-more, 0), 0
            need += max(more, 0)
        evened = self.max_flow(s, z)
        for v, (into, out) in enumerate(ends):  # what the max flow evened out, now the arcs' flow
            excess[v] = excess.get(v, 0) + cap[out ^ 1] - cap[into ^ 1]
        return need - evened

    def feasible(self, stop: Callable[[], bool] | None = None) -> bool:
        """Whether a flow kept at every node (a circulation: an s-t flow needs an arc t -> s) meets every bounded
        arc's bounds and every node's supply: the usual reduction, a max flow from a new source into the nodes with
        surplus (`excess`), out of those short to a new sink, that must fill what they lack. Leaves that flow on the
        arcs (`flow`). `stop`: as `max_flow`'s (stopped: False)."""
        s, t = self.node(), self.node()
        need = 0
        for v, e in self.excess.items():
            if e > 0:
                self.arc(s, v, e)
                need += e
            elif e < 0:
                self.arc(v, t, -e)
        return self.max_flow(s, t, stop) == need

    def max_flow(self, s: int, t: int, stop: Callable[[], bool] | None = None) -> int:
        """The most flow from s to t (costs play no part), added to what the arcs carry: the amount. `stop`: asked
        before each blocking flow but the first; where it says so, the flow ends there (less than the most)."""
        return self._blocking(s, t, self.adj, FAR, stop=stop)

    def min_cost_flow(self, s: int, t: int, need: int, stop: Callable[[], bool] | None = None) -> int:
        """Up to `need` more units from s to t at the least cost (costs not negative on the arcs with room, none on
        a cycle of the residual network with room: what the arcs carry already is a least-cost flow): the amount.
        Primal-dual: Dijkstra's distances on the reduced costs raise the potentials, then a blocking flow on the
        arcs of reduced cost 0, until `need` is sent or t is out of reach. `stop`: asked every so many rounds (about
        `STOP_WORK` arcs looked at: each round's Dijkstra and blocking flow look at most of them); where it says so,
        the flow ends there (what was sent so far, less than `need`: the caller's answer is then not the least-cost
        flow of `need`)."""
        adj, to, cost = self.adj, self.to, self.cost
        sent = rounds = 0
        every = max(1, STOP_WORK // max(1, len(to)))
        heads: list[list[int]] = []  # per node, its arcs' heads and costs, in its order (made when first needed)
        costs: list[list[int]] = []
        if len(to) >= VECTOR_ARCS and _Vector.fits(len(adj), cost):
            import numpy as np

            vector = _Vector(adj, to, cost, self.cap)
            raised = np.zeros(len(adj), dtype=np.int64)
            touched: list[int] = []  # the arcs the blocking flows' paths went along (their twins changed too)
            while sent < need:
                rounds += 1
                if stop is not None and not rounds % every and stop():
                    break
                vector.update(self.cap, touched)
                rise = vector.rise(s, t, raised)
                if rise is False:  # a reduced cost below 0 (not a least-cost flow to start from): Dijkstra's numbers
                    if not heads:
                        heads, costs = (
                            [[to[e] for e in edges] for edges in adj],
                            [[cost[e] for e in edges] for edges in adj],
                        )
                    dist = self._distances(s, t, raised.tolist(), heads, costs)
                    rise = None if dist[t] == FAR else np.minimum(np.array(dist, dtype=np.int64), dist[t])
                if rise is None:
                    break
                raised += rise
                tight = vector.zero(raised)
                while sent < need:  # `_blocking` on these arcs, its levels found on the arrays (`_Vector.levels`)
                    vector.update(self.cap, touched)
                    found = vector.levels(s, t, tight)
                    if found is None:
                        break
                    sent += self._paths(s, t, found[1], found[0], need - sent, touched)
            return sent
        heads, costs = [[to[e] for e in edges] for edges in adj], [[cost[e] for e in edges] for edges in adj]
        potential = [0] * len(adj)
        while sent < need:
            rounds += 1
            if stop is not None and not rounds % every and stop():
                break
            dist = self._distances(s, t, potential, heads, costs)
            cut = dist[t]
            if cut == FAR:
                break
            # every node rises by its distance, those not settled before t (and t) by t's: min(d, cut)
            potential = list(map(add, potential, map(min, dist, repeat(cut))))
            sent += self._blocking(s, t, [None] * len(adj), need - sent, (heads, costs, potential))
        return sent

    def _distances(
        self, s: int, t: int, potential: list[int], heads: list[list[int]], costs: list[list[int]]
    ) -> list[int]:
        """Dijkstra's distances from s over the residual arcs, on reduced costs (not negative; `FAR`: not reached),
        up to t's: a node not settled when t is holds its tentative distance, no less than t's (`min_cost_flow`
        raises every potential by at most t's distance). `heads`, `costs`: per node, its arcs' heads and costs."""
        adj, cap = self.adj, self.cap
        dist = [FAR] * len(adj)
        dist[s] = 0
        heap = [(0, s)]
        done = bytearray(len(adj))
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            d, u = pop(heap)
            if done[u]:
                continue
            if u == t:
                break
            done[u] = 1
            base = d + potential[u]
            # the arcs with room only (C-speed filter), each: its head, its cost, reduced by the head's potential
            for v, c in compress(zip(heads[u], costs[u]), map(cap.__getitem__, adj[u])):
                nd = base + c - potential[v]
                if nd < dist[v]:
                    dist[v] = nd
                    push(heap, (nd, v))
        return dist

    def _blocking(
        self,
        s: int,
        t: int,
        arcs: list,
        most: int,
        zero: tuple[list[list[int]], list[list[int]], list[int]] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> int:
        """Dinic's flow from s to t over the residual arcs of `arcs` (per node, a list of arc indexes), at most `most`
        units. With `zero` (the least-cost flow: per node, its arcs' heads and costs, and the potentials), only the arcs
        of reduced cost 0 (`cost[e]` + the potential of its tail = the potential of its head; their twins too), with
        room or not: listed in `arcs` (None: not yet) when the search first meets their node, in the node's order, as
        they stay while the potentials do.

        The levels stop at t's: a node at t's level (but t), or beyond, reaches t along no path of rising levels, so
        the search leaves it out (no level) instead of meeting it and then giving it up as a dead end."""
        to, cap, adj = self.to, self.cap, self.adj
        sent = phases = 0
        while sent < most:
            if stop is not None and phases and stop():
                return sent
            phases += 1
            level = [-1] * len(arcs)
            level[s] = 0
            queue = [s]
            last = FAR  # t's level, once met
            for u in queue:
                up = level[u] + 1
                if up > last:
                    break
                edges = arcs[u]
                if edges is None:
                    assert zero is not None
                    heads, costs, potential = zero
                    at = potential[u].__eq__  # potential[head] - cost == potential[u], at C speed
                    edges = arcs[u] = list(
                        compress(adj[u], map(at, map(sub, map(potential.__getitem__, heads[u]), costs[u])))
                    )
                for e in compress(edges, map(cap.__getitem__, edges)):  # the arcs with room (no capacity is below 0)
                    v = to[e]
                    if level[v] < 0:
                        level[v] = up
                        queue.append(v)
                        if v == t:
                            last = up
            if last == FAR:
                return sent
            for v in reversed(queue):  # the nodes met at t's level, at the queue's end: dead ends
                if level[v] < last:
                    break
                if v != t:
                    level[v] = -1
            sent += self._paths(s, t, arcs, level, most - sent)
        return sent

    def _paths(self, s: int, t: int, arcs: list, level: list[int], most: int, touched: list[int] | None = None) -> int:
        """Augmenting paths along the levels (every node with a level has its list in `arcs`), depth first, each going
        on from before the first arc the last one filled (Dinic's). `touched`: where given, the arcs the paths go
        along are added to it."""
        to, cap = self.to, self.cap
        it = [0] * len(arcs)
        sent = 0
        path: list[int] = []
        u = s
        while sent < most:
            while u != t:
                edges = arcs[u]
                k, end, up = it[u], len(edges), level[u] + 1
                while k < end:
                    e = edges[k]
                    if cap[e] > 0 and level[to[e]] == up:
                        break
                    k += 1
                if k == end:  # dead end: retreat
                    it[u] = k
                    level[u] = -1
                    if not path:
                        return sent
                    u = to[path.pop() ^ 1]
                    it[u] += 1
                    continue
                it[u] = k
                path.append(e)
                u = to[e]
            push = min(min(cap[e] for e in path), most - sent)
            for e in path:
                cap[e] -= push
                cap[e ^ 1] += push
            if touched is not None:
                touched += path
            sent += push
            full = next((k for k, e in enumerate(path) if not cap[e]), 0)
            u = to[path[full] ^ 1]
            del path[full:]
        return sent


class _Vector:
    """`min_cost_flow`'s rounds on numpy arrays: the network's arcs in each node's order (as `adj` lists them), each
    with its tail, head and cost. Every number the Python rounds reach, the same: what each potential rises by
    (Dijkstra's distance, at most t's), and for each blocking flow's phase the levels and each node's arcs the paths
    may take, in its order (`levels`: those of reduced cost 0 with room into the next level)."""

    @staticmethod
    def fits(nodes: int, cost: list[int]) -> bool:
        """Whether every potential, distance and reduced cost fits in 64 bits: a potential is at most the cost of a
        path (every node at most once), so at most nodes x the largest cost."""
        return (nodes + 2) * max(map(abs, cost), default=0) < FAR >> 2

    def __init__(self, adj: list[list[int]], to: list[int], cost: list[int], cap: list[int]) -> None:
        import numpy as np

        n = self.nodes = len(adj)
        sizes = np.fromiter(map(len, adj), dtype=np.int64, count=n)
        self.arcs = np.fromiter(chain.from_iterable(adj), dtype=np.int64, count=int(sizes.sum()))
        self.tail = np.repeat(np.arange(n, dtype=np.int64), sizes)
        self.head = np.array(to, dtype=np.int64)[self.arcs]
        self.cost = np.array(cost, dtype=np.int64)[self.arcs]
        # each arc's capacity in the order of `arcs` (as `Network.cap` has it by arc index), and each arc's position
        # there: a round reads them all in that order, a blocking flow changes a few
        self.cap = np.array(cap, dtype=np.int64)[self.arcs]
        self.at = np.zeros(len(to), dtype=np.int64)
        self.at[self.arcs] = np.arange(len(self.arcs), dtype=np.int64)

    def update(self, cap: list[int], touched: list[int]) -> None:
        """`cap` again, where the arcs `touched` (and their twins) changed it: `touched` emptied."""
        import numpy as np

        if touched:
            arcs = np.array(touched, dtype=np.int64)
            arcs = np.concatenate((arcs, arcs ^ 1))
            self.cap[self.at[arcs]] = [cap[e] for e in arcs.tolist()]
            touched.clear()

    def rise(self, s: int, t: int, potential: np.ndarray) -> np.ndarray | None | bool:
        """Each node's distance from s over the arcs with room, on reduced costs, where less than t's, else t's (None:
        t not reached): Dijkstra's `_distances` as `min_cost_flow` takes them. Found by relaxing the arcs out of
        every node whose distance fell, all at once, until none falls (Bellman–Ford's rounds from the nodes that
        changed), a node no closer than t left as it is: it rises by t's distance, whatever its own. False where an
        arc with room has a reduced cost below 0: Dijkstra's numbers may then differ from the distances."""
        import numpy as np

        n = len(potential)
        # the arcs with room, by position (a boolean mask over 200,000 arcs, half of them with room in no order,
        # indexes several times slower than the positions it picks: issue 30's small-topics-mixed)
        room = np.flatnonzero(self.cap > 0)
        tail, head = self.tail[room], self.head[room]
        reduced = self.cost[room] + potential[tail] - potential[head]
        if reduced.size and reduced.min() < 0:
            return False
        start = _starts(tail, n)
        dist = np.full(n, FAR, dtype=np.int64)
        dist[s] = 0
        fell = np.array([s], dtype=np.int64)
        mark = np.zeros(n, dtype=bool)  # the nodes met in a round: `np.unique` of them without sorting
        while fell.size:
            at = _out_of(start, fell)  # the arcs with room out of the nodes in `fell`
            if not at.size:
                break
            to = head[at]
            near = dist[tail[at]] + reduced[at]
            closer = near < dist[to]
            if not closer.any():
                break
            to, near = to[closer], near[closer]
            np.minimum.at(dist, to, near)
            mark[to] = True
            fell = np.flatnonzero(mark)
            mark[fell] = False
            fell = fell[dist[fell] < dist[t]]
        cut = int(dist[t])
        if cut >= FAR:
            return None
        return np.minimum(dist, cut)

    def zero(self, potential: np.ndarray) -> np.ndarray:
        """The arcs of reduced cost 0 (`cost[e]` + the potential of its tail = the potential of its head), with room or
        not, by position (so in each node's order)."""
        import numpy as np

        return np.flatnonzero(self.cost + potential[self.tail] == potential[self.head])

    def levels(self, s: int, t: int, tight: np.ndarray) -> tuple[list[int], list[list[int]]] | None:
        """`Network._blocking`'s levels over the arcs of `tight` (`zero`'s) that have room (`cap`, as `update` left
        it): each node's breadth-first distance from s where less than t's, t's own, -1 for the others (those at t's
        distance but t are dead ends); and per node, in its order, its arcs of these with room into the next level: the
        only ones `_paths` can take in this phase (an arc gains no room in it: paths rise a level at each arc, so no
        path goes along a twin of another's arc). None where t is not reached. The same numbers as `_blocking`'s
        Python search, found a layer at a time on the arrays (the arcs are in tail order, as `arcs` lists them)."""
        import numpy as np

        n = self.nodes
        open_ = tight[self.cap[tight] > 0]
        tail, head = self.tail[open_], self.head[open_]
        start = _starts(tail, n)
        level = np.full(n, -1, dtype=np.int64)
        level[s] = 0
        front = np.array([s], dtype=np.int64)
        depth = 0
        while True:
            at = _out_of(start, front)
            if not at.size:
                return None
            to = head[at]
            to = to[level[to] < 0]
            if not to.size:
                return None
            depth += 1
            level[to] = depth
            if level[t] == depth:
                break
            front = np.flatnonzero(level == depth)
        level[level == depth] = -1
        level[t] = depth
        rising = (level[tail] >= 0) & (level[head] == level[tail] + 1)
        ids = self.arcs[open_[rising]].tolist()
        ends = np.cumsum(np.bincount(tail[rising], minlength=n)).tolist()
        return level.tolist(), [ids[a:b] for a, b in zip([0, *ends], ends)]


def _starts(tail: np.ndarray, n: int) -> np.ndarray:
    """For arcs in tail order (`tail`: each one's tail), where node v's run of them starts, for v in 0..n (n: the
    end)."""
    import numpy as np

    start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(tail, minlength=n), out=start[1:])
    return start


def _out_of(start: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """The positions of the arcs out of each of `nodes` (its run start[v]..start[v + 1], `_starts`), in that order."""
    import numpy as np

    first = start[nodes]
    count = start[nodes + 1] - first
    return np.repeat(first - (np.cumsum(count) - count), count) + np.arange(int(count.sum()), dtype=np.int64)
