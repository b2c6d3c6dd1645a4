"""Minimal-movement balancing from the current assignment (rebalance, scale-out, decommission). Pure, deterministic.

Goals, in order:
1. replicas on brokers outside the target set move (decommission, offline brokers): forced moves;
1b. rack repair (unless `rack_repair=False`): each rack-unsafe partition gets min(RF, racks) − its racks moves, each
   taking a replica that shares its rack with another replica to a rack the partition does not use (`_repair`):
   required moves like the forced ones, counted in the lower bound (`moves.lower_bound`);
2. per-broker replica counts within 1 over the target brokers, reached with as few moves as possible: targets are
   floor/ceil of the mean, the +1 going to the brokers holding most, and replicas only leave brokers above their target
   for brokers below theirs (so the plan meets the lower bound `moves.excess`) unless racks forbid it;
3. rack safety: a move never lowers the number of distinct racks of a partition below min(RF, racks); moves that raise
   it are preferred (without rack repair, that is how an unsafe partition gets repaired: when it moves anyway);
4. smallest partitions move first (when sizes are known), followers before preferred leaders;
5. preferred-leader counts within 1, by reordering replica lists (`leaders.balance_preferred`);
6. with sizes, bytes per broker: swaps of a big replica on a heavy broker for a small one on a light broker (two
   moves each, counts unchanged, rack safety kept, so with one replica per rack only within a rack), within
   `max_moves`. Swaps that only change which replicas move are kept; swaps that add moves are kept only when they
   bring the byte spread over the target brokers (max − min, as the summary reports it) down by at least a tenth.
"""
from __future__ import annotations

import heapq
from typing import Callable, Iterable, Sequence

from planner.model import Cluster, Partition, PlannerError, human_bytes  # notes quote sizes as summaries do
from planner.rebalance.leaders import balance_preferred, isr_eligibility
from planner.rebalance.moves import (Plan, count_targets, excess, in_progress_note, lower_bound, movable_counts,
                                     rack_count, select_partitions)


def check_brokers(cluster: Cluster, ids: Iterable[int], what: str) -> tuple[int, ...]:
    ids = tuple(ids)
    known = set(cluster.broker_ids)
    unknown = [b for b in ids if b not in known]
    if unknown:
        raise PlannerError(
            f"{what}: unknown broker id(s) {','.join(map(str, unknown))}; the cluster has brokers "
            f"{','.join(map(str, cluster.broker_ids))}"
        )
    dups = sorted({b for b in ids if ids.count(b) > 1})
    if dups:
        raise PlannerError(f"{what} contains duplicate entries: {','.join(map(str, dups))}")
    return ids


class _State:
    """Working copy of the replica lists of the partitions in scope, with per-broker indexes."""

    def __init__(self, cluster: Cluster, parts: list[Partition], targets: Sequence[int]):
        self.parts = parts
        self.reps = [list(p.replicas) for p in parts]
        self.size = [p.size or 0 for p in parts]
        self.has_sizes = any(p.size is not None for p in parts)
        self.targets = list(targets)
        self.target_set = set(targets)
        self.rack_of = cluster.rack_of()
        self.n_racks = rack_count(cluster, targets)
        self.count: dict[int, int] = {b: 0 for b in cluster.broker_ids}
        self.bytes: dict[int, int] = {b: 0 for b in cluster.broker_ids}
        self.where: dict[int, set[int]] = {b: set() for b in cluster.broker_ids}
        for i, r in enumerate(self.reps):
            for b in r:
                self.count[b] += 1
                self.bytes[b] += self.size[i]
                self.where[b].add(i)
        self.moves = 0
        # partitions with a reassignment in progress keep their replicas (Kafka would need --additional)
        self.fixed = frozenset(i for i, p in enumerate(parts) if p.adding or p.removing)
        # replicas per (broker, topic): spread each topic too, as a tie-breaker
        names = {}
        self.topic_of = [names.setdefault(p.topic, len(names)) for p in parts]
        self.tcount: dict[int, dict[int, int]] = {b: {} for b in cluster.broker_ids}
        for i, r in enumerate(self.reps):
            t = self.topic_of[i]
            for b in r:
                self.tcount[b][t] = self.tcount[b].get(t, 0) + 1

    def distinct_racks(self, replicas: Iterable[int]) -> int:
        return len({self.rack_of.get(b) for b in replicas})

    def rack_delta(self, i: int, src: int, dst: int) -> int | None:
        """None if moving replica src→dst of partition i would lower its rack safety; else the gain in racks."""
        if self.n_racks == 0:
            return 0
        r = self.reps[i]
        before = self.distinct_racks(r)
        after = self.distinct_racks([dst if b == src else b for b in r])
        cap = min(len(r), self.n_racks)
        if after < min(before, cap):
            return None
        return after - before

    def move(self, i: int, src: int, dst: int) -> None:
        r = self.reps[i]
        r[r.index(src)] = dst
        self.count[src] -= 1
        self.count[dst] += 1
        self.bytes[src] -= self.size[i]
        self.bytes[dst] += self.size[i]
        self.where[src].discard(i)
        self.where[dst].add(i)
        t = self.topic_of[i]
        self.tcount[src][t] -= 1
        self.tcount[dst][t] = self.tcount[dst].get(t, 0) + 1
        self.moves += 1

    def sources(self, b: int):
        """`source_order`, with the topic term kept current while replicas leave b (lazy heap)."""
        tc = self.tcount[b]
        heap = [(self.size[i], self.reps[i][0] == b, -tc[self.topic_of[i]], i) for i in self.where[b]
                if i not in self.fixed]
        heapq.heapify(heap)
        while heap:
            item = heapq.heappop(heap)
            i = item[3]
            if b not in self.reps[i]:
                continue
            now = -tc[self.topic_of[i]]
            if now != item[2]:
                heapq.heappush(heap, (item[0], item[1], now, i))
                continue
            yield i

    def source_order(self, b: int) -> list[int]:
        """Replicas to take off broker b first: small partitions, followers before preferred leaders, then topics
        that b holds most of."""
        tc = self.tcount[b]
        return sorted((i for i in self.where[b] if i not in self.fixed),
                      key=lambda i: (self.size[i], self.reps[i][0] == b, -tc[self.topic_of[i]], i))


def _pick(st: _State, i: int, src: int, accept: Callable[[int], bool], key: Callable[[int], tuple]) -> int | None:
    """The best destination for replica src of partition i among brokers accepted, preferring rack gains."""
    r = st.reps[i]
    best = None
    best_key = None
    for b in st.targets:
        if b in r or not accept(b):
            continue
        gain = st.rack_delta(i, src, b)
        if gain is None:
            continue
        k = (-gain,) + key(b)
        if best_key is None or k < best_key:
            best, best_key = b, k
    return best


class _Heap:
    """Brokers by (count − target, bytes, id), lazily updated."""

    def __init__(self, st: _State, target: dict[int, int]):
        self.st, self.target = st, target
        self.h = [self.key(b) for b in st.targets]
        heapq.heapify(self.h)

    def key(self, b: int) -> tuple[int, int, int]:
        return (self.st.count[b] - self.target[b], self.st.bytes[b], b)

    def pick(self, i: int, src: int, ok: Callable[[int], bool], limit: int = 64) -> int | None:
        """Lowest-keyed valid destination; among the first few valid ones, one that gains a rack if any does."""
        st = self.st
        popped, valid = [], []
        r = st.reps[i]
        rack_of = st.rack_of
        if st.n_racks:
            racks = [rack_of.get(b) for b in r]
            before = len(set(racks))
            src_rack = rack_of.get(src)
            src_unique = racks.count(src_rack) == 1
            others = set(racks) if not src_unique else set(racks) - {src_rack}
            floor = min(before, min(len(r), st.n_racks))
            can_gain = before < min(len(r), st.n_racks)
        else:
            can_gain = False
        topic = st.topic_of[i]
        while self.h and len(valid) < 8 and len(popped) < limit + len(valid):
            k = heapq.heappop(self.h)
            b = k[2]
            if k != self.key(b):
                continue  # stale: `touch` pushed the current key
            popped.append(k)
            if not ok(b):
                break  # keys only grow from here: no later broker passes the count test this one failed
            if valid and not can_gain and k[0] > valid[0][1][0] + 1:
                break  # past the neediest brokers (within 1): choose among those found
            if b in r:
                continue
            if st.n_racks:
                # distinct racks after replacing src by b: the others' racks plus b's
                after = len(others) + (0 if rack_of.get(b) in others else 1)
                if after < floor:
                    continue
                gain = after - before
            else:
                gain = 0
            valid.append((gain, k))
        for k in popped:
            heapq.heappush(self.h, k)
        if not valid:
            return None
        # rack gain first, then the neediest broker, then the one holding fewest replicas of this topic
        best = min(valid, key=lambda gk: (-gk[0], st.tcount[gk[1][2]].get(topic, 0), gk[1][0], gk[1][1], gk[1][2]))
        return best[1][2]

    def touch(self, *brokers: int) -> None:
        for b in brokers:
            if b in self.target:
                heapq.heappush(self.h, self.key(b))


def balance(
    cluster: Cluster,
    brokers: Sequence[int] | None = None,
    topics: Sequence[str] | None = None,
    max_moves: int | None = None,
    leaders: bool = True,
    balance_bytes: bool = True,
    goal: str = "rebalance",
    progress: Callable[[str], None] | None = None,
    rack_repair: bool = True,
) -> Plan:
    """Move as few replicas as possible so the target brokers end within 1 replica (and 1 preferred leader) of each other.

    `brokers`: where replicas may live (default: the online brokers); replicas elsewhere must move.
    `topics`: only these topics are balanced and moved (default: all). `max_moves` caps the optional moves (forced
    moves always happen). `rack_repair`: rack-unsafe partitions get the fewest moves that make them rack-safe
    (required moves, like the forced ones); without it they stay unsafe unless they move anyway.
    """
    targets = sorted(check_brokers(cluster, brokers, "--broker-list") if brokers else cluster.online_ids)
    online = cluster.online_ids
    down = [b for b in targets if b not in online]
    if down:
        raise PlannerError(
            f"--broker-list: broker(s) {','.join(map(str, down))} are not online and cannot receive replicas; "
            "leave them out"
        )
    if not targets:
        raise PlannerError("no online brokers to place replicas on; pass --broker-list")
    parts = select_partitions(cluster, topics)
    for p in parts:
        if len(p.replicas) > len(targets):
            raise PlannerError(
                f"partition {p.tp} has {len(p.replicas)} replicas but only {len(targets)} target broker(s) "
                f"({','.join(map(str, targets))}); add brokers or lower its replication factor first"
            )
    st = _State(cluster, parts, targets)
    total = sum(len(r) for r in st.reps)
    target, by_rack = _targets(st, targets, total, repaired=rack_repair)
    unsafe = _unsafe(st) if rack_repair else []
    # replicas of partitions mid-reassignment stay where they are: a bound counting them would exceed the plan
    movable = movable_counts(st.count, (st.reps[i] for i in st.fixed), st.target_set)
    if unsafe:
        count_groups = [(m, len(st.reps)) for m in by_rack.values()] if by_rack else [(targets, total)]
        lower = lower_bound(movable, count_groups, [(lacks, dup) for _, lacks, dup in unsafe])
    else:
        lower = excess({b: c for b, c in movable.items() if c}, target)
    heap = _Heap(st, target)
    budget = max_moves if max_moves is not None else None
    notes: list[str] = []
    say = progress or (lambda msg: None)

    # 1. Forced moves: every replica on a broker outside the target set.
    outside = [b for b in cluster.broker_ids if b not in st.target_set and st.where[b]]
    for s in outside:
        say(f"moving {len(st.where[s])} replicas off broker {s}")
        for i in sorted(st.where[s], key=lambda i: (-st.size[i], i)):
            if i in st.fixed:
                continue
            d = heap.pick(i, s, lambda b: True, limit=len(targets))
            if d is None:
                raise PlannerError(
                    f"cannot move {parts[i].tp} off broker {s}: every target broker already holds a replica or "
                    f"would make it rack-unsafe; add brokers to --broker-list"
                )
            st.move(i, s, d)
            heap.touch(s, d)
    # 1b. Rack repair: the fewest moves that make each rack-unsafe partition safe (required, like the forced moves).
    repaired = 0
    if unsafe:
        say(f"repairing {len(unsafe)} rack-unsafe partitions")
        before = st.moves
        repaired = _repair(st, count_groups, [i for i, _, _ in unsafe])
        repair_moves = st.moves - before
        if repair_moves:
            # the +1 targets go to the brokers holding most now (fewest count moves from here)
            target, by_rack = _targets(st, targets, total)
            heap = _Heap(st, target)
    forced = st.moves

    def allowed(n: int = 1) -> bool:  # n more optional moves fit in --max-moves
        return budget is None or st.moves - forced + n <= budget

    # 2. Counts: from brokers above target to brokers below target.
    say(f"balancing {total} replicas over {len(targets)} brokers")
    for _ in range(4):
        progressed = False
        for s in sorted(targets, key=lambda b: (target[b] - st.count[b], b)):
            if st.count[s] <= target[s]:
                continue
            for i in st.sources(s):
                if st.count[s] <= target[s] or not allowed():
                    break
                d = heap.pick(i, s, lambda b: st.count[b] < target[b])
                if d is not None:
                    st.move(i, s, d)
                    heap.touch(s, d)
                    progressed = True
        if not progressed:
            break
    # 2b. Racks blocked some direct moves: settle for any move that narrows the spread (may cost extra moves).
    for _ in range(0 if by_rack else 4 * len(targets)):
        if not allowed():
            break
        hi = max(targets, key=lambda b: (st.count[b], -b))
        lo = min(st.count[b] for b in targets)
        if st.count[hi] - lo <= 1:
            break
        done = False
        for s in sorted(targets, key=lambda b: (-st.count[b], b)):
            if st.count[s] - lo <= 1:
                break
            for i in st.source_order(s):
                d = _pick(st, i, s, lambda b: st.count[b] + 1 < st.count[s], lambda b: (st.count[b], st.bytes[b], b))
                if d is not None:
                    st.move(i, s, d)
                    heap.touch(s, d)
                    done = True
                    break
            if done:
                break
        if not done:
            break
    groups = by_rack or {None: targets}
    for rack, members in sorted(groups.items(), key=lambda kv: str(kv[0])):
        counts = [st.count[b] for b in members]
        if max(counts) - min(counts) > 1:
            where = f" in rack {rack}" if rack is not None else ""
            notes.append(
                f"replica counts{where} could not be brought within 1 ({min(counts)}..{max(counts)}): racks or "
                f"replica placement constrain the moves" + ("" if allowed() else ", or --max-moves was reached")
            )
    if by_rack:
        all_counts = [st.count[b] for b in targets]
        if max(all_counts) - min(all_counts) > 1:
            sizes = ", ".join(f"{r}: {len(m)}" for r, m in sorted(by_rack.items()))
            notes.append(
                f"every partition keeps one replica per rack and racks differ in size ({sizes} brokers), so "
                f"counts are balanced within each rack ({min(all_counts)}..{max(all_counts)} overall)"
            )

    # 3. Bytes: swap a big replica on a heavy broker with a small one on a light broker (counts unchanged).
    if balance_bytes and st.has_sizes:
        say("balancing bytes")

        def net_moves() -> int:  # replicas copied, as the plan counts them (a swap may undo an earlier move)
            return sum(len(set(r) - set(p.replicas)) for p, r in zip(parts, st.reps))

        before_bytes, net_before = st.moves, net_moves()
        refused = _balance_bytes(st, allowed)
        if st.moves > before_bytes:
            extra = net_moves() - net_before
            notes.append(f"{extra} of the moves come from byte-balancing swaps (sizes known); the lower bound "
                         "covers the replica-count goal only" if extra > 0 else
                         "byte-balancing swaps (sizes known) changed which replicas move, at no extra moves")
        if refused is not None:
            kept, reachable, more_moves, more_bytes, stop = refused
            why = {"done": "", "rounds": " within the 1,024 swaps byte balancing tries",
                   "budget": " before --max-moves was reached"}[stop]
            notes.append(f"byte balancing stops at a spread of {human_bytes(kept)}: further swaps would add "
                         f"{more_moves} moves and {human_bytes(more_bytes)} to move to bring it to "
                         f"{human_bytes(reachable)}, less than a tenth lower{why}")

    # 4. Preferred leaders by reordering (no data movement).
    if leaders:
        say("balancing preferred leaders")
        eligible = isr_eligibility(cluster, parts, [p.replicas for p in parts])
        movable = [i for i in range(len(parts)) if i not in st.fixed]
        balance_preferred(st.reps, movable, targets, eligible, st.where)
        lead: dict[int, int] = {b: 0 for b in targets}
        for r in st.reps:
            if r[0] in lead:
                lead[r[0]] += 1
        if lead and max(lead.values()) - min(lead.values()) > 1:
            notes.append(
                f"preferred-leader counts could not be brought within 1 ({min(lead.values())}..{max(lead.values())}): "
                "replica placement or ISR membership limits which broker can lead"
            )

    proposed = {p.tp: tuple(r) for p, r in zip(parts, st.reps) if tuple(r) != p.replicas}
    if repaired:
        notes.append(f"{repaired} rack-unsafe partition(s) repaired with {repair_moves} move(s) (a replica sharing "
                     "its rack with another replica of the partition goes to a rack the partition does not use); "
                     "the lower bound includes them; --no-rack-repair leaves unsafe partitions as they are")
    if st.fixed:
        notes.append(in_progress_note(parts[i].tp for i in st.fixed))
    if len(cluster.online_ids) < len(cluster.brokers) and proposed:
        from planner.leadership import cluster_states

        states = cluster_states(cluster)
        stuck = sorted(str(tp) for tp in proposed if not states[tp.topic][tp.partition].has_leader
                       and set(proposed[tp]) - set(cluster.topic(tp.topic).partition(tp.partition).replicas))
        if stuck:
            shown = ", ".join(stuck[:10]) + (f" and {len(stuck) - 10} more" if len(stuck) > 10 else "")
            notes.append(f"{len(stuck)} moved partition(s) have no leader now ({shown}): their new replicas cannot "
                         "copy data, so those reassignments will not complete until a replica comes back")
    return Plan(before=cluster, proposed=proposed, goal=goal, lower_bound=lower, brokers=tuple(targets),
                notes=tuple(notes))


def _targets(st: _State, targets: Sequence[int], total: int,
             repaired: bool = False) -> tuple[dict[int, int], dict[str, list[int]] | None]:
    """Per-broker targets. When every partition has one replica in each rack (RF == racks, all rack-safe, or about to
    be repaired when `repaired`), each rack holds exactly one replica of every partition, so the targets are balanced
    within each rack."""
    n = st.n_racks
    if n and st.reps and all(len(r) == n and (st.distinct_racks(r) == n or (repaired and i not in st.fixed))
                             for i, r in enumerate(st.reps)):
        by_rack: dict[str, list[int]] = {}
        for b in targets:
            by_rack.setdefault(st.rack_of[b], []).append(b)
        target: dict[int, int] = {}
        for members in by_rack.values():
            target.update(count_targets(st.count, members, len(st.reps)))
        return target, by_rack
    return count_targets(st.count, targets, total), None


def _unsafe(st: _State) -> list[tuple[int, int, list[int]]]:
    """Rack-unsafe partitions that may move: (index, racks it lacks, brokers whose replica shares a rack with another
    replica of it)."""
    n = st.n_racks
    if not n:
        return []
    out = []
    for i, r in enumerate(st.reps):
        if i in st.fixed:
            continue
        racks = [st.rack_of.get(b) for b in r]
        lacks = min(len(r), n) - len(set(racks))
        if lacks > 0:
            out.append((i, lacks, [b for b, k in zip(r, racks) if racks.count(k) > 1]))
    return out


def _repair(st: _State, groups: Sequence[tuple[Sequence[int], int]], unsafe: Sequence[int]) -> int:
    """Make each partition in `unsafe` rack-safe with the fewest moves, one added rack per move: a replica that shares
    its rack with another replica of the partition moves to a target broker of a rack the partition does not use.

    Among those moves, the one that brings the counts closest to the count goal (the replicas brokers would still
    have to shed, as `lower_bound` counts them: above the floor of their group's mean, less the ceilings), then one
    that keeps the preferred leader (a rack holding two replicas always holds a follower, so the leader's replica moves
    only when that saves a later move), then from the fullest broker to the emptiest, the heaviest to the lightest.
    Returns the partitions repaired."""
    rack_of = st.rack_of
    count = st.count
    group_of: dict[int, int] = {}
    floor: list[int] = []
    ceilings: list[int] = []  # brokers of the group that end one above the floor
    for g, (members, total) in enumerate(groups):
        q, r = divmod(total, len(members))
        floor.append(q)
        ceilings.append(r)
        for b in members:
            group_of[b] = g
    over = [sum(1 for b in members if count[b] > floor[g]) for g, (members, _) in enumerate(groups)]

    def shed(changes: dict[int, int]) -> int:  # change in the replicas brokers must shed, counts changing by `changes`
        total = 0
        for g in {group_of[b] for b in changes}:
            q = floor[g]
            d_sum = d_over = 0
            for b, d in changes.items():
                if group_of[b] == g:
                    old, new = count[b], count[b] + d
                    d_sum += max(0, new - q) - max(0, old - q)
                    d_over += (new > q) - (old > q)
            total += d_sum - (min(ceilings[g], over[g] + d_over) - min(ceilings[g], over[g]))
        return total

    heaps: dict = {}  # per rack: (count, bytes, id), lazily updated
    for b in st.targets:
        heaps.setdefault(rack_of.get(b), []).append((count[b], st.bytes[b], b))
    for h in heaps.values():
        heapq.heapify(h)

    def top(rack):  # the rack's emptiest broker, dropping stale keys
        h = heaps[rack]
        while True:
            k = h[0]
            if k == (count[k[2]], st.bytes[k[2]], k[2]):
                return k
            heapq.heappop(h)

    done = 0
    for i in unsafe:
        r = st.reps[i]
        cap = min(len(r), st.n_racks)
        moved = False
        while True:
            racks = [rack_of.get(b) for b in r]
            if len(set(racks)) >= cap:
                break
            dsts = [top(k) for k in heaps if k not in racks]
            best = None
            for pos, src in enumerate(r):
                if racks.count(racks[pos]) < 2:
                    continue
                for k in dsts:
                    dst = k[2]
                    key = (shed({src: -1, dst: 1}), pos == 0, -count[src], count[dst], -st.bytes[src], st.bytes[dst],
                           src, dst)
                    if best is None or key < best:
                        best = key
            src, dst = best[-2], best[-1]
            for b, d in ((src, -1), (dst, 1)):
                g = group_of[b]
                over[g] += (count[b] + d > floor[g]) - (count[b] > floor[g])
            st.move(i, src, dst)
            for b in (src, dst):
                heapq.heappush(heaps[rack_of.get(b)], (count[b], st.bytes[b], b))
            moved = True
        done += moved
    return done


def _best_swap(st: _State, heavy: int, light: int, gap: int) -> tuple[int, int, int] | None:
    """The exchange of a replica on `heavy` (partition i) for a smaller one on `light` (partition j) that brings the
    two brokers' bytes closest, keeping both partitions' rack safety: (new gap, i, j), or None."""
    import bisect

    small = sorted((st.size[j], j) for j in st.where[light] if heavy not in st.reps[j] and j not in st.fixed)
    sizes = [s for s, _ in small]
    best = None
    for i in st.where[heavy]:
        if light in st.reps[i] or i in st.fixed:
            continue
        # exchanging a (size si) for b (size sj) changes the gap by -2(si - sj): aim at si - sj = gap / 2
        want = st.size[i] - gap / 2
        k = bisect.bisect_left(sizes, want)
        for kk in (k - 1, k):
            if 0 <= kk < len(small):
                sj, j = small[kk]
                delta = st.size[i] - sj
                if delta <= 0:
                    continue
                new_gap = abs(gap - 2 * delta)
                if new_gap < gap and (best is None or (new_gap, i, j) < best):
                    if st.rack_delta(i, heavy, light) is not None and st.rack_delta(j, light, heavy) is not None:
                        best = (new_gap, i, j)
    return best


def _balance_bytes(st: _State, allowed: Callable[[int], bool]) -> tuple[int, int, int, int, str] | None:
    """Swap a big replica on a heavy broker with a small one on a light broker (two moves, counts unchanged).

    Each round looks at the heaviest/lightest pair overall and, with racks, the heaviest/lightest pair of every rack
    (when every partition has one replica per rack, only brokers of one rack can exchange replicas), and makes the
    swap that lowers the sum of squared bytes most. A swap must narrow its pair's gap by 1% of it or by a tenth of
    the largest partition; at most 1,024 rounds, and within `max_moves` (a swap is two moves: both must fit).

    Minimal movement comes first, so the swaps are kept only up to the last point where either no replica moves were
    added since the previous such point (a swap that puts back a replica moved earlier and moves another instead
    costs nothing), or the byte spread over the target brokers (max − min, the figure the summary reports) fell by
    at least a tenth since then: the swaps after it are undone. A run of several swaps counts together, so a spread
    that only falls once two brokers tied at the top both come down is still reached. Narrowing the gap between two
    brokers while the spread is set by a third (a broker alone in its rack holds a replica of every partition) costs
    moves for nothing an operator sees, and is not done.

    Returns None, or when swaps that would have lowered the spread were undone: (spread kept, lowest spread they
    reached, replica moves and bytes they would have added to reach it, why the search stopped: "done" when no
    swap narrows a pair any more, "rounds" at 1,024 swaps, "budget" at `max_moves`).
    """
    groups: list[list[int]] = [list(st.targets)]
    if st.n_racks:
        by_rack: dict = {}
        for b in st.targets:
            by_rack.setdefault(st.rack_of.get(b), []).append(b)
        groups += [m for _, m in sorted(by_rack.items(), key=lambda kv: str(kv[0])) if len(m) > 1]
    biggest = max(st.size, default=0)
    home = [frozenset(p.replicas) for p in st.parts]

    def copies(i: int, src: int, dst: int) -> int:  # change in replicas of partition i to copy
        return (dst not in home[i]) - (src not in home[i])

    def spread() -> int:
        values = [st.bytes[b] for b in st.targets]
        return max(values) - min(values)

    log: list[tuple[int, int, int, int]] = []
    added = copied = 0  # replica moves and bytes to copy added since the phase began
    kept_at, kept_added, kept_copied, kept_spread = 0, 0, 0, spread()  # the last acceptable point
    tail_best: tuple[int, int, int] | None = None  # lowest spread after it: (spread, moves added, bytes added)
    stop = "rounds"
    for _ in range(1024):
        if not allowed(2):
            stop = "budget"
            break
        pairs = []
        for members in groups:
            heavy = max(members, key=lambda b: (st.bytes[b], -b))
            light = min(members, key=lambda b: (st.bytes[b], b))
            if (heavy, light) not in pairs:
                pairs.append((heavy, light))
        best = None  # (-gain, heavy, light, i, j)
        for heavy, light in pairs:
            gap = st.bytes[heavy] - st.bytes[light]
            if gap <= 0:
                continue
            swap = _best_swap(st, heavy, light, gap)
            if swap is None or gap - swap[0] < max(1, min(gap // 100, biggest // 10)):
                continue
            _, i, j = swap
            delta = st.size[i] - st.size[j]
            key = (-2 * delta * (gap - delta), heavy, light, i, j)  # -(drop of bytes[heavy]^2 + bytes[light]^2)
            if best is None or key < best:
                best = key
        if best is None:
            stop = "done"
            break
        _, heavy, light, i, j = best
        ci, cj = copies(i, heavy, light), copies(j, light, heavy)
        st.move(i, heavy, light)
        st.move(j, light, heavy)
        log.append((i, j, heavy, light))
        added += ci + cj
        copied += ci * st.size[i] + cj * st.size[j]
        now = spread()
        if added <= kept_added or (now < kept_spread and 10 * now <= 9 * kept_spread):
            kept_at, kept_added, kept_spread, kept_copied = len(log), added, now, copied
            tail_best = None
        elif now < kept_spread and (tail_best is None or now < tail_best[0]):
            tail_best = (now, added - kept_added, copied - kept_copied)
    for i, j, heavy, light in reversed(log[kept_at:]):
        st.move(j, heavy, light)
        st.move(i, light, heavy)
        st.moves -= 4  # the swap and its undoing: neither is a move of the plan
    if tail_best is None:
        return None
    return kept_spread, tail_best[0], tail_best[1], tail_best[2], stop
