"""The typer application and the one error path every command shares."""
from __future__ import annotations

import sys

import typer

from planner.model import PlannerError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Plan Kafka partition placement, leaders, reassignments and key distribution exactly as Kafka does.",
)


def fail(message: str) -> None:
    """One line on stderr, exit code 2."""
    raise PlannerError(message)


def run(argv: list[str] | None = None) -> None:
    try:
        app(args=argv, prog_name="kafka-planner")
    except PlannerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        sys.exit(130)
