"""The flow module (`planner.rebalance.flow`): the most flow, the least-cost flow and lower bounds on small networks
solved by hand, and against brute force (every cut) and a linear program (scipy's HiGHS) on random ones."""

import random
from itertools import combinations

import pytest
from scipy.optimize import linprog

from planner.rebalance.flow import Network


def test_max_flow_of_the_textbook_network():
    # Cormen et al.'s example (figure 26.1): s, v1..v4, t; the most flow is 23, the cut {s, v1, v2, v4} of
    # capacity 12 + 7 + 4 = 23 saturated
    net = Network(6)
    s, v1, v2, v3, v4, t = range(6)
    arcs = {
        (s, v1): net.arc(s, v1, 16),
        (s, v2): net.arc(s, v2, 13),
        (v2, v1): net.arc(v2, v1, 4),
        (v1, v3): net.arc(v1, v3, 12),
        (v3, v2): net.arc(v3, v2, 9),
        (v2, v4): net.arc(v2, v4, 14),
        (v4, v3): net.arc(v4, v3, 7),
        (v3, t): net.arc(v3, t, 20),
        (v4, t): net.arc(v4, t, 4),
    }
    assert net.max_flow(s, t) == 23
    assert [net.room(arcs[a]) for a in ((v1, v3), (v4, v3), (v4, t))] == [0, 0, 0]
    assert net.flow(arcs[(s, v1)]) + net.flow(arcs[(s, v2)]) == 23
    assert net.max_flow(s, t) == 0  # nothing more: the flow stays in the arcs


def test_max_flow_sends_flow_back_along_a_twin_arc():
    # shortest paths s-a-d-t, s-a-e-t, s-c-d-t: the first phase sends 1 along s-a-d-t, which blocks the other two;
    # the second unit goes s-c-d, back along a-d's twin, then a-e-t, so a -> d ends empty
    net = Network()
    s, a, c, d, e, t = (net.node() for _ in range(6))
    net.arc(s, a, 1)
    net.arc(s, c, 1)
    ad = net.arc(a, d, 1)
    net.arc(c, d, 1)
    net.arc(d, t, 1)
    net.arc(a, e, 1)
    net.arc(e, t, 1)
    assert net.max_flow(s, t) == 2
    assert net.flow(ad) == 0 and net.room(ad) == 1


def test_max_flow_equals_the_smallest_cut_on_random_networks():
    rng = random.Random(11)
    for _ in range(300):
        n = rng.randint(2, 7)
        arcs = [(rng.randrange(n), rng.randrange(n), rng.randint(0, 6)) for _ in range(rng.randint(0, 18))]
        net = Network(n)
        for u, v, c in arcs:
            net.arc(u, v, c)
        inner = range(1, n - 1)
        cuts = (
            {0, *side} for k in range(len(inner) + 1) for side in combinations(inner, k)
        )  # s's side of every s-t cut
        least = min(sum(c for u, v, c in arcs if u in side and v not in side) for side in cuts)
        assert net.max_flow(0, n - 1) == least


def _assignment():
    """Two suppliers x1, x2 of one unit each, two buyers y1, y2 of one each; costs x1y1 1, x1y2 2, x2y1 2, x2y2 5."""
    net = Network()
    s, x1, x2, y1, y2, t = (net.node() for _ in range(6))
    net.arc(s, x1, 1)
    net.arc(s, x2, 1)
    pairs = {(x1, y1): 1, (x1, y2): 2, (x2, y1): 2, (x2, y2): 5}
    arcs = {p: net.arc(*p, 1, k) for p, k in pairs.items()}
    net.arc(y1, t, 1)
    net.arc(y2, t, 1)
    return net, s, t, arcs, pairs


def _cost(net, arcs, pairs):
    return sum(net.flow(e) * pairs[p] for p, e in arcs.items())


def test_min_cost_flow_undoes_the_cheapest_arc_when_more_flow_is_asked():
    net, s, t, arcs, pairs = _assignment()
    assert net.min_cost_flow(s, t, 1) == 1
    assert _cost(net, arcs, pairs) == 1  # one unit: x1 -> y1
    assert net.min_cost_flow(s, t, 1) == 1  # one more from there: x1 -> y1 given up for x1 -> y2, x2 -> y1
    assert _cost(net, arcs, pairs) == 4
    assert {p for p, e in arcs.items() if net.flow(e)} == {(1, 4), (2, 3)}
    net, s, t, arcs, pairs = _assignment()
    assert net.min_cost_flow(s, t, 5) == 2  # asked for more than the most: the most, at the least cost
    assert _cost(net, arcs, pairs) == 4


def test_min_cost_flow_goes_on_from_arcs_carrying_flow_already():
    net = Network(6)
    s, x1, x2, y1, y2, t = range(6)
    net.arc(s, x1, 1, 0, flow=1)
    net.arc(s, x2, 1)
    pairs = {(x1, y1): 1, (x1, y2): 2, (x2, y1): 2, (x2, y2): 5}
    arcs = {p: net.arc(*p, 1, k, flow=1 if p == (x1, y1) else 0) for p, k in pairs.items()}
    net.arc(y1, t, 1, 0, flow=1)
    net.arc(y2, t, 1)
    assert net.min_cost_flow(s, t, 1) == 1
    assert _cost(net, arcs, pairs) == 4


def test_fan_arcs_are_every_other_index_of_capacity_one():
    net = Network(4)
    first = net.arc(0, 1, 5)
    fan = net.fan(1, [2, 3, 2], 7)
    assert (first, list(fan)) == (0, [2, 4, 6])
    assert [net.to[e] for e in fan] == [2, 3, 2]
    assert [net.room(e) for e in fan] == [1, 1, 1]
    assert [net.cost[e] for e in fan] == [7, 7, 7]
    assert net.adj[2] == [3, 7]  # the twins, for the flow sent back
    carrying = net.fan(0, [2, 3], 0, flow=1)
    assert net.flows(carrying) == [1, 1] and [net.room(e) for e in carrying] == [0, 0]


def test_a_fan_carrying_flow_is_where_the_least_cost_flow_starts():
    # s -> x (2, carrying 1) -> y1 (cost 0, carrying 1) or y2 (cost 3) -> t; one more unit takes x -> y2
    net = Network()
    s, x, y1, y2, t = (net.node() for _ in range(5))
    net.arc(s, x, 2, 0, flow=1)
    kept = net.fan(x, [y1], 0, flow=1)
    more = net.fan(x, [y2], 3)
    net.arc(y1, t, 1, 0, flow=1)
    net.arc(y2, t, 1)
    assert net.min_cost_flow(s, t, 5) == 1
    assert net.flows([*kept, *more]) == [1, 1]


def test_min_cost_flow_is_the_least_cost_of_a_linear_program():
    rng = random.Random(5)
    checked = 0
    for _ in range(120):
        n = rng.randint(3, 7)
        arcs = [(rng.randrange(n), rng.randrange(n), rng.randint(0, 4), rng.randint(0, 9)) for _ in range(18)]
        arcs = [a for a in arcs if a[0] != a[1]]
        net = Network(n)
        ids = [net.arc(u, v, c, k) for u, v, c, k in arcs]
        need = rng.randint(1, 8)
        sent = net.min_cost_flow(0, n - 1, need)
        cost = sum(net.flow(e) * k for e, (_, _, _, k) in zip(ids, arcs))
        # the same amount at the least cost: arcs' flows in [0, cap], kept at every inner node, `sent` out of s
        rows = []
        for v in range(n):
            if v != n - 1:
                rows.append([(1 if u == v else 0) - (1 if w == v else 0) for u, w, _, _ in arcs])
        rhs = [sent] + [0] * (n - 2)
        lp = linprog([k for *_, k in arcs], A_eq=rows, b_eq=rhs, bounds=[(0, c) for _, _, c, _ in arcs])
        assert lp.status == 0
        assert cost == pytest.approx(lp.fun, abs=1e-6)
        # and no more than `need` nor less than the most possible
        most = Network(n)
        for u, v, c, _ in arcs:
            most.arc(u, v, c)
        assert sent == min(need, most.max_flow(0, n - 1))
        checked += sent > 0
    assert checked > 60


def test_lower_bounds_feasible_or_not():
    def circulation(demand: int) -> bool:
        # two partitions, each exactly one head (lower bound 1), on brokers x or y; x must take [0, 1], the sink
        # [demand, demand]; t -> s closes the circulation
        net = Network()
        s, t, p, q, x, y = (net.node() for _ in range(6))
        assert net.bounded(s, p, 1, 1) is not None
        assert net.bounded(s, q, 1, 1) is not None
        net.arc(p, x, 1)
        net.arc(q, x, 1)
        net.arc(q, y, 1)
        assert net.bounded(x, t, 0, 1) is not None
        assert net.bounded(y, t, 0, 1) is not None
        assert net.bounded(t, s, demand, demand) is not None
        return net.feasible()

    assert circulation(2)  # p on x, q on y
    assert not circulation(3)  # three heads from two partitions
    assert Network(2).bounded(0, 1, 2, 1) is None  # a lower bound above the upper
    net = Network(2)
    e = net.bounded(0, 1, -3, 2)  # a negative lower bound counts as 0
    assert e is not None and net.room(e) == 2 and (net.surplus(0), net.surplus(1)) == (0, 0)


def test_a_bounded_arc_counts_its_lower_bound_as_carried():
    net = Network()
    s, a, t = (net.node() for _ in range(3))
    e = net.bounded(s, a, 2, 5)
    f = net.bounded(a, t, 0, 4)
    assert e is not None and f is not None
    assert (net.surplus(s), net.surplus(a), net.surplus(t)) == (-2, 2, 0)
    assert (net.flow(e), net.room(e), net.flow(f)) == (2, 3, 0)
    net.arc(t, s, 9)
    assert net.feasible()
    assert (net.flow(e), net.flow(f)) == (2, 2)


def _chain() -> tuple[Network, list[int]]:
    """A supply of 5 at node 0 for node 3 (a demand of 5) along 0 -> 1 -> 3 (0..3 each) or 0 -> 2 -> 3 (0..3)."""
    net = Network()
    n0, n1, n2, n3 = net.node(5), net.node(), net.node(), net.node(-5)
    return net, [net.bounded(u, v, 0, 3) or 0 for u, v in ((n0, n1), (n1, n3), (n0, n2), (n2, n3))]


def test_settle_routes_the_supplies_and_goes_on_from_its_flow_after_rebound():
    net, arcs = _chain()
    assert net.settle() == 0
    assert net.flows(arcs) == [3, 3, 2, 2]
    net.rebound(arcs[1], 0, 1)  # 1 -> 3 lowered to 1: its flow clipped, node 1 holds 2 it cannot send on
    assert net.flows(arcs) == [3, 1, 2, 2] and (net.surplus(1), net.surplus(3)) == (2, -2)
    assert net.settle() == 1  # one unit goes back 1 -> 0, then 0 -> 2 -> 3 (3 at most); the other finds no way
    assert net.flows(arcs) == [2, 1, 3, 3]
    net.rebound(arcs[1], 2, 3)  # and back up, with a lower bound of 2: the flow raised to it
    assert net.flow(arcs[1]) == 2
    assert net.settle() == 0
    assert net.flows(arcs) == [2, 2, 3, 3]  # node 1 sent back one unit to 0 in the settle before
    assert [net.surplus(v) for v in range(4)] == [0, 0, 0, 0]


def test_settle_leaves_the_least_shortfall_on_random_rebounds():
    # after each change of bounds, the warm flow leaves what a flow from nothing on the same bounds leaves
    rng = random.Random(3)
    for _ in range(60):
        n = rng.randint(3, 6)
        pairs = [(u, v) for u in range(n) for v in range(n) if u != v and rng.random() < 0.5]
        supply = [rng.randint(-3, 3) for _ in range(n)]
        warm = Network()
        for k in supply:
            warm.node(k)
        arcs = [warm.arc(u, v, 0) for u, v in pairs]
        for _ in range(5):
            bounds = [(lo, lo + rng.randint(0, 3)) for lo in (rng.randint(0, 2) for _ in pairs)]
            for e, (lo, hi) in zip(arcs, bounds):
                warm.rebound(e, lo, hi)
            left = warm.settle()
            cold = Network()
            for k in supply:
                cold.node(k)
            for (u, v), (lo, hi) in zip(pairs, bounds):
                cold.bounded(u, v, lo, hi)
            s, t = cold.node(), cold.node()
            need = 0
            for v in range(n):
                more = cold.surplus(v)
                if more > 0:
                    cold.arc(s, v, more)
                    need += more
                elif more < 0:
                    cold.arc(v, t, -more)
            assert left == need - cold.max_flow(s, t)
            assert all(lo <= f <= hi for f, (lo, hi) in zip(warm.flows(arcs), bounds))
