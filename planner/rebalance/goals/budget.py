"""Is time left for the stages that can run long?

A time budget for a plan: the stages that can run long ask it whether time is left, and stop where it is not, the
plan kept being the best found so far: the byte goal's loop (each step), the topic goal (every few topics), the count
goal's slots by bytes (a minimum-cost flow, every so many rounds: `flow.STOP_WORK`), the leader goal's flows
(`flow_leaders`, before each blocking flow but the first; `keep_most`), the goals' runs again (`search._run`), the
search's variants, the polish, the second plans and the plan without --max-moves; for elect-leaders, its runs and
the flows of its bounds (`leader_bounds`). A stage that finds the time up names itself in the plan's note.

The clock is the caller's (the CLI passes `time.monotonic`; tests a fake one): the core reads no clock of its own,
so a plan without a limit is as deterministic as before, and one under a test's fake clock too.
"""

from __future__ import annotations

from typing import Callable

from planner.rebalance.notes import Note


class Deadline:
    """`seconds` from now on `clock` (None: no limit). `out(stage)`: whether the time is up, recording the first
    stage that found it so (the plan's note names it); once up, it stays up."""

    def __init__(self, seconds: float | None = None, clock: Callable[[], float] | None = None):
        self.seconds, self.clock = seconds, clock
        self.end = None if seconds is None or clock is None else clock() + seconds
        self.stage: str | None = None

    def out(self, stage: str) -> bool:
        if self.stage is not None:
            return True
        if self.end is None or self.clock is None or self.clock() < self.end:
            return False
        self.stage = stage
        return True

    def note(self) -> Note | None:
        """The plan's note where the time ran out: the limit and the stage that stopped."""
        if self.stage is None or self.seconds is None:
            return None
        return Note("time", "limit", values=(self.seconds,), names=(self.stage,))
