"""Minimal-movement balancing from the current assignment (rebalance, scale-out, decommission), driven by an ordered
list of goals. Pure, deterministic. Re-exports only: the search is `search.py`.

`balance` plans the goals in order (`registry.GOALS`; each goal one module behind `base.Goal`), each improving the
working state with the fewest replica moves, then the fewest bytes moved, under the constraints the goals before it
hand on, so a later goal never undoes an earlier one:

1. hard (`hard.py`): replicas only on target brokers (none added to a broker whose log dirs are all cordoned,
   KIP-1066), replication factor kept, rack safety never lowered and
   rack-unsafe partitions repaired, partitions mid-reassignment and excluded topics left alone;
2. replica count per target broker within 1 (`replica_count.py`);
3. each topic's replicas per broker within 1 of its even share (`topic_spread.py`);
4. preferred leaders per broker and per topic within 1 (`preferred_leaders.py`): reordering only, no data moves;
5. bytes per broker within a tolerance of the mean, the largest and the smallest (`byte_balance.py`), when sizes are
   known.

over a portfolio of named strategies (`search.py`), keeping the best plan by the objective (`objective.py`). What a
goal could not reach, and why, comes back as `rebalance.notes.Note` data for the renderer to word.
"""

from __future__ import annotations

from planner.rebalance.goals.base import Goal
from planner.rebalance.goals.search import DEFAULT_BYTE_TOLERANCE, balance, check_brokers, excluded
from planner.rebalance.moves import select_partitions
from planner.rebalance.notes import Note

__all__ = [
    "balance",
    "check_brokers",
    "excluded",
    "select_partitions",
    "Goal",
    "Note",
    "DEFAULT_BYTE_TOLERANCE",
]
