"""The `kafka-planner` console script: Ctrl-C while the command line interface is still loading is one line too."""

from __future__ import annotations

import sys


def _forget_unhandled_interrupt() -> None:
    """Exit 130 as asked, not by SIGINT. CPython remembers a KeyboardInterrupt that escaped any `PyRun_String` code,
    even one a C extension runs while it is imported and whose interrupt we then caught, and `Py_RunMain` ends such a
    process with SIGINT after finalising (Modules/main.c `exit_sigint`; the flag is reset by the next
    `run_eval_code_obj`, Python/pythonrun.c). One empty `PyRun_SimpleString` resets it. Measured: Ctrl-C in the first
    0.3 s of `python -m planner skew` ended 2 runs in 80 by SIGINT (exit -2) after printing `error: interrupted`."""
    try:
        import ctypes

        ctypes.pythonapi.PyRun_SimpleString(b"")
    except (ImportError, AttributeError, OSError):  # not CPython: no such flag
        pass


def main() -> None:
    try:
        try:
            from planner.cli import run
        except KeyboardInterrupt:
            print("error: interrupted", file=sys.stderr)
            sys.exit(130)
        run()
    except SystemExit as exc:
        if exc.code == 130:
            _forget_unhandled_interrupt()
        raise
