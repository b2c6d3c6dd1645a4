"""Where do racks of different sizes keep the replica counts or the topics from within 1?

The goals' one entry point to the uneven-racks machinery.

Racks of different sizes make a count range or a topic spread of 1 unreachable in some placements, and the greedy
goals alone then miss the fewest moves. Four modules answer that case, each a question of its own:

- `count_range`: the narrowest count range racks allow, and the count goal's moves into it (`reach`);
- `rack_flow`: the fewest moves to given counts and topic spreads, a least-cost flow over the partitions (the plan's
  start, its lower bound, and the placement `refit` aims at);
- `topic_keep`: where that count range leaves no placement with every topic within 1, which topics to keep within 1,
  and which the counts and racks force wider (the summary's count-forced);
- `refit`: the fewest moves from the goals' start to the figures a run of them reached, kept where it copies fewer.

The rest of `goals/` imports them from here (the modules, whose functions share names such as `applies` and
`lower_bound`, and `refit`'s functions). The rack geometry they build on is `geometry`.
"""

from planner.rebalance.goals.uneven import count_range, rack_flow, topic_keep
from planner.rebalance.goals.uneven.refit import as_good, figures, may_refit, refit

__all__ = ["count_range", "rack_flow", "topic_keep", "as_good", "figures", "may_refit", "refit"]
