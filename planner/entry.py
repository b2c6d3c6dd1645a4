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


class _Terminated(BaseException):
    """SIGTERM while the command line interface loads (not `skew`)."""


def _term_while_loading():
    """A SIGTERM handler for the seconds the imports take on a loaded machine (the default action ended the process
    without a word, exit -15): `skew` treats SIGTERM as Ctrl-C (planner.skew.spark.stop_on_sigterm), every other
    command as planner.cli.app's `Terminated`. None when SIGTERM is not ours to take."""
    import signal

    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return None
    skew = sys.argv[1:2] == ["skew"]

    def on_term(signum, frame):
        raise KeyboardInterrupt if skew else _Terminated

    try:
        signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread
        return None
    return signal


def main() -> None:
    try:
        loading = _term_while_loading()
        try:
            from planner.cli import run
        except KeyboardInterrupt:
            print("error: interrupted", file=sys.stderr)
            sys.exit(130)
        except _Terminated:
            print("error: terminated (SIGTERM)", file=sys.stderr)
            sys.exit(143)
        finally:
            if loading is not None:  # planner.cli.app.run installs its own handler where the default is in place
                loading.signal(loading.SIGTERM, loading.SIG_DFL)
        run(exiting=True)
    except SystemExit as exc:
        if exc.code == 130:
            _forget_unhandled_interrupt()
        raise
