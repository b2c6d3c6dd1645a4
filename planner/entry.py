"""The `kafka-planner` console script: Ctrl-C while the command line interface is still loading is one line too."""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from planner.cli import run
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        sys.exit(130)
    run()
