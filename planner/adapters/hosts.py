"""Host lists of connection URLs (`zk://…`, `kafka://…`): `host[:port]` items separated by commas, IPv6 in brackets."""

from __future__ import annotations

import re
from typing import Mapping

from planner.model import PlannerError

_HOST_RE = re.compile(r"^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._\-]+)(?::(\d{1,5}))?$")


def parse_hosts(url: str, hosts: str, default_port: int, example: str) -> tuple[tuple[str, int], ...]:
    """Each `host[:port]` of `hosts` (a host without a port takes `default_port`); one error naming the bad item and
    showing `example` otherwise. Bracketed IPv6 hosts keep their brackets."""
    out = []
    for item in hosts.split(","):
        m = _HOST_RE.match(item.strip())
        port = int(m.group(2)) if m and m.group(2) else default_port
        if not m or not 0 < port < 65536:
            raise PlannerError(f"{url}: {item!r} is not host:port (e.g. {example})")
        out.append((m.group(1), port))
    return tuple(out)


def seconds_from_env(env: Mapping[str, str], name: str, default: float = 10.0) -> float:
    """A time limit in seconds from the environment variable `name` (zk:// and kafka:// alike): `default` when unset,
    one line naming the variable when it is not a number of at least 0.1."""
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0.1:
        raise PlannerError(f"${name}: expected a number of seconds (at least 0.1)")  # the value is not shown
    return seconds
