"""A plan's runbook: every command to carry it out with Kafka's own tools, in order (RUNBOOK.md of a plan folder, and
what `kafka submit --dry-run` prints).

The commands are those of Kafka 2.6+ (`--bootstrap-server` for every action, `--cancel`), with the options that
tools/src/main/java/org/apache/kafka/tools/reassign/ReassignPartitionsCommandOptions.java and
tools/src/main/java/org/apache/kafka/tools/LeaderElectionCommand.java (core/.../admin/ReassignPartitionsCommand.scala
before 3.7) accept: `--execute` takes `--throttle`, `--verify` clears the throttles once everything listed is
complete, `kafka-leader-election.sh` needs `--election-type` and one of `--path-to-json-file`, `--topic`,
`--all-topic-partitions`.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Sequence

from planner.model import human_bytes

REASSIGN = "kafka-reassign-partitions.sh"
ELECT = "kafka-leader-election.sh"
DAY = 86_400.0  # seconds: estimates beyond it get a warning


def duration(seconds: float) -> str:
    """`1h 02m 03s`, `2m 03s`, `3s`."""
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}h {m:02d}m {s:02d}s" if h else f"{m}m {s:02d}s" if m else f"{s}s"


def about(seconds: float) -> str:
    """`about 2m 03s`, or `under 1s`."""
    return "under 1s" if seconds < 0.5 else f"about {duration(seconds)}"


@dataclass(frozen=True)
class Batch:
    file: str  # the reassignment JSON of the batch
    partitions: int
    bytes: int | None  # to copy; None: a size unknown
    seconds: float | None  # at the throttle; None without a throttle or sizes


@dataclass(frozen=True)
class Runbook:
    bootstrap: str  # host:port[,...], or "$BOOTSTRAP" (set by the first step)
    batches: Sequence[Batch]
    rollback: str | None  # current.json: the replicas before the first batch
    election: str | None  # leader-election.json: partitions whose preferred leader changes
    throttle: int | None  # bytes/s for --throttle; None: none given
    canary: bool  # the first batch is a one-partition canary


@dataclass(frozen=True)
class Step:
    title: str
    commands: tuple[str, ...]
    then: str = ""  # what to look for before the next step


def _server(book: Runbook) -> str:
    return '"$BOOTSTRAP"' if book.bootstrap == "$BOOTSTRAP" else shlex.quote(book.bootstrap)


def execute_command(book: Runbook, file: str) -> str:
    throttle = f" --throttle {book.throttle}" if book.throttle is not None else ""
    return (
        f"{REASSIGN} --bootstrap-server {_server(book)} --reassignment-json-file {shlex.quote(file)} --execute"
        + throttle
    )


def verify_command(book: Runbook, file: str) -> str:
    return f"{REASSIGN} --bootstrap-server {_server(book)} --reassignment-json-file {shlex.quote(file)} --verify"


def cancel_command(book: Runbook, file: str) -> str:
    return f"{REASSIGN} --bootstrap-server {_server(book)} --reassignment-json-file {shlex.quote(file)} --cancel"


def election_command(book: Runbook, file: str) -> str:
    return (
        f"{ELECT} --bootstrap-server {_server(book)} --election-type PREFERRED --path-to-json-file {shlex.quote(file)}"
    )


def batch_words(b: Batch) -> str:
    """`3 partitions, 1.5 GiB, about 31s at the throttle`."""
    words = [f"{b.partitions} partition{'s' if b.partitions != 1 else ''}"]
    words.append(human_bytes(b.bytes) if b.bytes is not None else "bytes unknown")
    if b.seconds is not None:
        words.append(f"{about(b.seconds)} at the throttle")
    return ", ".join(words)


_VERIFY_UNTIL = (
    "Repeat until every partition says `Reassignment of partition … is completed.` (`is complete.` before 3.3); "
    "the last run also clears the throttles."
)


def steps(book: Runbook) -> list[Step]:
    """The steps in order: each batch executed then verified until complete, then the election."""
    out = []
    n = len(book.batches)
    for i, b in enumerate(book.batches, 1):
        which = f"Batch {i} of {n}" + (" (canary)" if book.canary and i == 1 and n > 1 else "")
        out.append(Step(f"{which}: {batch_words(b)}", (execute_command(book, b.file),)))
        out.append(Step(f"Verify batch {i}", (verify_command(book, b.file),), _VERIFY_UNTIL))
    if book.election:
        out.append(
            Step(
                "Elect the preferred leaders",
                (election_command(book, book.election),),
                "Every partition listed says it was elected or `Valid replica already elected`.",
            )
        )
    return out


def rollback_steps(book: Runbook) -> list[Step]:
    """Undoing the plan: cancel the batch in progress, then restore `current.json` and verify it."""
    if not book.rollback or not book.batches:
        return []
    first = book.batches[0].file
    return [
        Step(
            "Cancel the batch in progress (here the first; give the file of the batch you executed last)",
            (cancel_command(book, first),),
            "Kafka reverts the partitions of that batch that had not completed.",
        ),
        Step("Restore the replicas as they were before the first batch", (execute_command(book, book.rollback),)),
        Step("Verify the rollback", (verify_command(book, book.rollback),), _VERIFY_UNTIL),
    ]


def total_words(book: Runbook) -> str:
    known = [b.bytes for b in book.batches]
    total = human_bytes(sum(x for x in known if x is not None)) if None not in known else "bytes unknown"
    secs = [b.seconds for b in book.batches]
    n, parts = len(book.batches), sum(b.partitions for b in book.batches)
    text = f"{parts} partition{'s' if parts != 1 else ''} in {n} batch{'es' if n != 1 else ''}, {total}"
    if book.throttle is not None:
        text += f"; throttle {book.throttle} B/s"
        if None not in secs:
            text += f", {about(sum(s or 0.0 for s in secs))} in all"
    return text


def long_warning(book: Runbook) -> str | None:
    """A warning when the batches together take more than a day at the throttle (a rate typed in the wrong unit)."""
    secs = [b.seconds for b in book.batches]
    if book.throttle is None or None in secs or sum(s or 0.0 for s in secs) <= DAY:
        return None
    return (
        f"warning: the moves take about {duration(sum(s or 0.0 for s in secs))} at {book.throttle} B/s, more than a "
        "day: check the throttle's unit (MB = 10^6, MiB = 2^20 bytes per second)"
    )


def _block(lines: Sequence[str]) -> list[str]:
    return ["```sh", *lines, "```"]


def render_markdown(book: Runbook, title: str) -> str:
    """RUNBOOK.md."""
    lines = [f"# Runbook: {title}", ""]
    lines.append(
        f"{total_words(book)}. Run each step in order from this folder, with the tools of Kafka 2.6 or later "
        "(`bin/` of a Kafka release; add `--command-config FILE` to every command on a secured cluster)."
    )
    warning = long_warning(book)
    if warning:
        lines += ["", f"**{warning}**"]
    n = 0
    if book.bootstrap == "$BOOTSTRAP":
        n += 1
        lines += ["", f"## {n}. Name the cluster", "", "The topology names no broker host: set one (host:port).", ""]
        lines += _block(["export BOOTSTRAP=host:9092"])
    for step in steps(book):
        n += 1
        lines += ["", f"## {n}. {step.title}", ""] + _block(step.commands)
        if step.then:
            lines += ["", step.then]
    rollback = rollback_steps(book)
    if rollback:
        lines += ["", "## Rollback", ""]
        lines.append("To undo the plan at any point (current.json holds every partition's replicas before step 1):")
        for i, step in enumerate(rollback, 1):
            lines += ["", f"{i}. {step.title}:", ""] + ["   " + x for x in _block(step.commands)]
            if step.then:
                lines += ["", f"   {step.then}"]
    return "\n".join(lines) + "\n"


def render_text(book: Runbook) -> str:
    """The steps as plain lines (`kafka submit --dry-run`): `# title` then the command."""
    lines = [f"# {total_words(book)}"]
    warning = long_warning(book)
    if warning:
        lines.append(f"# {warning}")
    for i, step in enumerate(steps(book), 1):
        lines.append(f"# {i}. {step.title}" + (f" ({step.then})" if step.then else ""))
        lines.extend(step.commands)
    for step in rollback_steps(book):
        lines.append(f"# rollback: {step.title}")
        lines.extend(step.commands)
    if not book.rollback and book.batches:
        lines.append(
            "# rollback: save the 'Current partition replica assignment' JSON above; --execute it to undo the plan"
        )
    return "\n".join(lines) + "\n"
