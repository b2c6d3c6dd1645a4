"""The flow module's solvers against the ones they replaced (`Reference`: the least-cost flow and the blocking flow as
they were, zero-cost arc lists rebuilt by a Python comprehension, levels past t's met, no numpy): on seeded random
networks, both ways the solver goes (Python lists; numpy arrays, `_Vector`), the same flow on every arc, not just the
same amount and cost (ties among least-cost flows are broken the same way, so the plans built on them stay the
same)."""

import heapq
import random
from typing import Callable

import pytest

from planner.rebalance import flow
from planner.rebalance.flow import FAR, STOP_WORK, Network


@pytest.fixture(params=["lists", "numpy"], autouse=True)
def solver(request, monkeypatch):
    """Every test twice: on Python lists (networks below `VECTOR_ARCS` arcs) and on numpy arrays (`_Vector`)."""
    if request.param == "numpy":
        monkeypatch.setattr(flow, "VECTOR_ARCS", 0)
    return request.param


class Reference(Network):
    """`Network` with `min_cost_flow`, `_distances` and `_blocking` as they were before the C-speed filters."""

    def min_cost_flow(self, s: int, t: int, need: int, stop: Callable[[], bool] | None = None) -> int:
        """Up to `need` more units from s to t at the least cost (costs not negative on the arcs with room, none on
        a cycle of the residual network with room: what the arcs carry already is a least-cost flow): the amount.
        Primal-dual: Dijkstra's distances on the reduced costs raise the potentials, then a blocking flow on the
        arcs of reduced cost 0, until `need` is sent or t is out of reach. `stop`: asked every so many rounds (about
        `STOP_WORK` arcs looked at: each round's Dijkstra and blocking flow look at most of them); where it says so,
        the flow ends there (what was sent so far, less than `need`: the caller's answer is then not the least-cost
        flow of `need`)."""
        potential = [0] * len(self.adj)
        sent = rounds = 0
        every = max(1, STOP_WORK // max(1, len(self.to)))
        while sent < need:
            rounds += 1
            if stop is not None and not rounds % every and stop():
                break
            dist = self._distances(s, t, potential)
            cut = dist[t]
            if cut == FAR:
                break
            for v, d in enumerate(dist):
                potential[v] += min(d, cut)
            sent += self._blocking(s, t, [None] * len(self.adj), need - sent, potential)
        return sent

    def _distances(self, s: int, t: int, potential: list[int]) -> list[int]:
        """Dijkstra's distances from s over the residual arcs, on reduced costs (not negative; `FAR`: not reached),
        up to t's: a node not settled when t is holds its tentative distance, no less than t's (`min_cost_flow`
        raises every potential by at most t's distance)."""
        adj, to, cap, cost = self.adj, self.to, self.cap, self.cost
        dist = [FAR] * len(adj)
        dist[s] = 0
        heap = [(0, s)]
        done = [False] * len(adj)
        while heap:
            d, u = heapq.heappop(heap)
            if done[u]:
                continue
            if u == t:
                break
            done[u] = True
            pu = potential[u]
            for e in adj[u]:
                if cap[e] > 0:
                    v = to[e]
                    nd = d + cost[e] + pu - potential[v]
                    if nd < dist[v]:
                        dist[v] = nd
                        heapq.heappush(heap, (nd, v))
        return dist

    def _blocking(
        self,
        s: int,
        t: int,
        arcs: list,
        most: int,
        potential: list[int] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> int:
        """Dinic's flow from s to t over the residual arcs of `arcs` (per node, a list of arc indexes), at most `most`
        units. With `potential` (the least-cost flow), only the arcs of reduced cost 0 (`cost[e]` + the potential of
        its tail = the potential of its head; their twins too): listed in `arcs` (None: not yet) when the search first
        meets their node, in the node's order, as they stay while the potentials do."""
        to, cap, cost, adj = self.to, self.cap, self.cost, self.adj
        sent = phases = 0
        while sent < most:
            if stop is not None and phases and stop():
                return sent
            phases += 1
            level = [-1] * len(arcs)
            level[s] = 0
            queue = [s]
            for u in queue:
                edges = arcs[u]
                if edges is None:
                    assert potential is not None
                    pu = potential[u]
                    edges = arcs[u] = [e for e in adj[u] if cost[e] + pu == potential[to[e]]]
                for e in edges:
                    v = to[e]
                    if cap[e] > 0 and level[v] < 0:
                        level[v] = level[u] + 1
                        queue.append(v)
            if level[t] < 0:
                return sent
            sent += self._paths(s, t, arcs, level, most - sent)
        return sent


def _random(rng: random.Random, n: int, arcs: int, costs: int, flows: bool) -> tuple[Network, Reference]:
    """The same random network twice: `n` nodes, `arcs` arcs of costs 0..`costs`, some carrying flow already where
    `flows` (a least-cost flow only when costs are 0: asked of max_flow only)."""
    nets = Network(n), Reference(n)
    for _ in range(arcs):
        u, v = rng.randrange(n), rng.randrange(n)
        if u == v:
            continue
        cap, cost = rng.randint(0, 4), rng.randint(0, costs)
        flow = rng.randint(0, cap) if flows else 0
        for net in nets:
            net.arc(u, v, cap, cost, flow)
    return nets


def _bipartite(rng: random.Random, topics: int, brokers: int, costs: int) -> tuple[Network, Reference, int]:
    """`weighted_slots`' network, twice: source -> topic (its wants) -> every broker (1, a cost of few values, so
    many ties) -> sink (its room); and what the topics want."""
    nets = Network(2 + topics + brokers), Reference(2 + topics + brokers)
    wants = [rng.randint(1, 3) for _ in range(topics)]
    for k, w in enumerate(wants):
        values = [rng.choice((0, costs // 2, costs)) + rng.randint(0, 2) for _ in range(brokers)]
        for net in nets:
            net.arc(0, 2 + k, w)
            for b, c in enumerate(values):
                net.arc(2 + k, 2 + topics + b, 1, c)
    rooms = [rng.randint(0, 2 * sum(wants) // brokers + 1) for _ in range(brokers)]
    for b, room in enumerate(rooms):
        for net in nets:
            net.arc(2 + topics + b, 1, room)
    return nets[0], nets[1], sum(wants)


@pytest.mark.parametrize("seed", range(40))
def test_min_cost_flow_sends_what_the_reference_sends_on_every_arc(seed):
    rng = random.Random(seed)
    net, ref = _random(rng, rng.randint(3, 30), rng.randint(5, 200), rng.choice((0, 1, 3, 20, 1000)), False)
    need = rng.randint(1, 40)
    t = len(net.adj) - 1
    assert net.min_cost_flow(0, t, need) == ref.min_cost_flow(0, t, need)
    assert net.cap == ref.cap
    # asked again for more: from the flow the first left
    assert net.min_cost_flow(0, t, need) == ref.min_cost_flow(0, t, need)
    assert net.cap == ref.cap


@pytest.mark.parametrize("seed", range(20))
def test_min_cost_flow_from_a_flow_of_no_least_cost_sends_what_the_reference_sends(seed):
    # arcs carrying flow already at random: some residual arcs cost less than 0, against `min_cost_flow`'s terms;
    # whatever it then sends, the same as before. On such a start the rounds may find a path to t and send nothing
    # on it, round after round (the reference does the same): `stop` ends both after the same number of rounds
    rng = random.Random(3000 + seed)
    net, ref = _random(rng, rng.randint(3, 20), rng.randint(5, 120), rng.choice((3, 20)), True)
    t = len(net.adj) - 1
    need = rng.randint(1, 20)
    asked = [0, 0]

    def stopper(k: int) -> Callable[[], bool]:
        def stop() -> bool:
            asked[k] += 1
            return asked[k] >= 3

        return stop

    assert net.min_cost_flow(0, t, need, stopper(0)) == ref.min_cost_flow(0, t, need, stopper(1))
    assert asked[0] == asked[1]
    assert net.cap == ref.cap


@pytest.mark.parametrize("seed", range(30))
def test_min_cost_flow_on_slots_networks_sends_what_the_reference_sends_on_every_arc(seed):
    rng = random.Random(1000 + seed)
    net, ref, need = _bipartite(rng, rng.randint(1, 60), rng.randint(1, 12), rng.choice((1, 4, 50, 10**9)))
    got = net.min_cost_flow(0, 1, need)
    assert got == ref.min_cost_flow(0, 1, need)
    assert net.cap == ref.cap


def test_min_cost_flow_stopped_sends_what_the_reference_sends():
    # 500 topics x 40 brokers, each arc its own cost: many rounds, `stop` asked every 5 (40,000 arcs)
    rng = random.Random(7)
    net, ref = Network(542), Reference(542)
    for k in range(500):
        want, costs = rng.randint(1, 3), [rng.randint(0, 1000) for _ in range(40)]
        for n in (net, ref):
            n.arc(0, 2 + k, want)
            for b, c in enumerate(costs):
                n.arc(2 + k, 502 + b, 1, c)
    for b in range(40):
        for n in (net, ref):
            n.arc(502 + b, 1, 30)
    asked = [0, 0]

    def stopper(k: int) -> Callable[[], bool]:
        def stop() -> bool:
            asked[k] += 1
            return asked[k] >= 2

        return stop

    sent = net.min_cost_flow(0, 1, 1000, stopper(0))
    assert sent == ref.min_cost_flow(0, 1, 1000, stopper(1))
    assert asked == [2, 2]
    assert 0 < sent < 1000
    assert net.cap == ref.cap


@pytest.mark.parametrize("seed", range(30))
def test_max_flow_sends_what_the_reference_sends_on_every_arc(seed):
    rng = random.Random(2000 + seed)
    net, ref = _random(rng, rng.randint(3, 30), rng.randint(5, 200), 0, True)
    t = len(net.adj) - 1
    assert net.max_flow(0, t) == ref.max_flow(0, t)
    assert net.cap == ref.cap
