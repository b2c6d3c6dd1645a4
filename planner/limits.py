"""Bounds on input that every reader enforces: how deep YAML may nest before libyaml composes it (MAX_DEPTH, or
fewer levels when the stack limit, `ulimit -s`, is small: `depth_limit`).

PyYAML's C loader composes nodes recursively on the C stack: a document nested about 30,000 levels deep (a line of
`[` or of `- `) kills the process with a segfault, no message. Topology and group files nest about 6 levels, so
anything deeper than MAX_DEPTH (Jackson's default limit for JSON) is refused with one line before composing.
The check is cheap for ordinary files:
block nesting cannot be deeper than the longest line, and flow nesting is measured on the brackets alone; only when
those bounds are inconclusive (quoted brackets, very long lines) are the parser's events counted, which uses no
recursion. The libyaml in PyYAML 6.0.4's wheels stops at about 1000 levels itself, as a scanner error; the
depth is then counted again by the pure-Python parser (an explicit stack, no recursion), so the message and line are
the same whichever PyYAML is installed.
"""

from __future__ import annotations

import re

import yaml

from planner.model import PlannerError

MAX_DEPTH = 1000
# Memory guards: Kafka's counts are Java ints, but 2^31 partitions would need hundreds of GB here.
MAX_NEW_PARTITIONS = 10_000_000  # partitions of one topic to place (about 2 GB of replica lists)
MAX_RECORDS = 100_000_000  # keyless records to simulate (about a minute each era)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
STACK_BYTES_PER_LEVEL = 4096  # measured: 400 levels fit a 256 KiB stack (`ulimit -s 256`), 999 crash it; 4 KiB a level
# keeps a margin of 6 over that.
_FLOW = str.maketrans("{}", "[]")
_LIBYAML_NEST_LIMIT = "exceeded maximum nesting depth"  # its scanner error (PyYAML 6.0.4 wheels)


def _flow_depth_at_most(text: str, limit: int) -> bool:
    """True when the brackets of `text`, matched as pairs, nest at most `limit` deep (False: deeper or unmatched)."""
    brackets = _NOT_BRACKET.sub("", text).translate(_FLOW)
    for _ in range(limit):
        if not brackets:
            return True
        shorter = brackets.replace("[]", "")
        if len(shorter) == len(brackets):
            return False  # unmatched (quoted) brackets: the events decide
        brackets = shorter
    return not brackets


def depth_limit() -> tuple[int, str]:
    """How deep YAML may nest here, and why when the stack (`ulimit -s`) makes it less than MAX_DEPTH."""
    import resource

    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_STACK)
    except (OSError, ValueError):
        return MAX_DEPTH, ""
    if soft == resource.RLIM_INFINITY or soft >= MAX_DEPTH * STACK_BYTES_PER_LEVEL:
        return MAX_DEPTH, ""
    return max(soft // STACK_BYTES_PER_LEVEL, 8), f", the most a stack of {soft // 1024} KiB (ulimit -s) holds"


def _deepest(text: str, loader: type, limit: int) -> tuple[int, int]:
    """(deepest nesting, line where it first exceeds `limit`) by the parser's events."""
    depth = 0
    starts = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
    ends = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, starts):
            depth += 1
            if depth > limit:
                return depth, (event.start_mark.line + 1) if event.start_mark is not None else 0
        elif isinstance(event, ends):
            depth -= 1
    return depth, 0


def check_yaml_depth(text: str, source: str, loader: type) -> None:
    """Refuse YAML nested deeper than MAX_DEPTH (less on a small stack), before composing it. YAML errors are left to
    the composer."""
    limit, why = depth_limit()
    if re.search(rf"[^\n]{{{limit // 2},}}", text) is None and _flow_depth_at_most(text, limit // 2):
        return
    try:
        depth, line = _deepest(text, loader, limit)
    except yaml.YAMLError as error:
        if _LIBYAML_NEST_LIMIT not in str(error):
            return  # malformed: the composer reports it (it fails before any deep recursion at that point)
        try:
            depth, line = _deepest(text, yaml.SafeLoader, limit)
        except yaml.YAMLError:
            return
    if depth > limit:
        raise PlannerError(
            f"{source}:{line}: YAML nested more than {limit} levels deep{why}; a topology or group file needs about 6"
        )
