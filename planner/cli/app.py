"""The typer application and the one error path every command shares."""

from __future__ import annotations

import errno
import functools
import io
import os
import resource
import signal
import sys
from typing import Any, NoReturn

import typer

from planner.adapters.files import release_folder_locks
from planner.adapters.secrets import redact
from planner.model import PlannerError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Plan Kafka partition placement, leaders, reassignments and key distribution exactly as Kafka does.\n\n"
    "Exit codes: 0 done; 1 the environment failed (a cluster or ZooKeeper unreachable, a request the controller "
    "refused); 2 bad input or usage; 3 partitions still moving (reassign verify, kafka status with --exit-code); "
    "130 interrupted (Ctrl-C).",
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            text = version("kafka-planner")
        except PackageNotFoundError:  # run from a checkout that is not installed
            text = "unknown (not installed)"
        print(f"kafka-planner {text}")
        raise typer.Exit()


@app.callback()
def _main(
    show_version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """The options before any command."""


@functools.lru_cache(maxsize=1)
def _command() -> Any:
    """The click command typer builds from `app`, built once per process (typer rebuilds it on every call: about a
    tenth of a second, which in-process callers such as the tests pay each time)."""
    return typer.main.get_command(app)


class _WholeWrites(io.RawIOBase):
    """A file descriptor whose writes are whole or raise. CPython's BufferedWriter drops the rest of a large write
    that the kernel took only in part (a write that crosses `ulimit -f` or fills the disk): the command exited 0
    with its output cut short. Here the rest is written again, so the kernel's EFBIG or ENOSPC reaches `_run`."""

    def __init__(self, fd: int):
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            done += os.write(self._fd, view[done:])
        return done


def _standard_streams() -> None:
    """Make a failed write to stdout an error, and a closed stdout or stderr (`>&-`, `2>&-`) not a traceback. Only
    the process's own streams are touched (tests that capture them in-process keep theirs)."""
    if sys.stderr is None:  # 2>&-: nowhere to say anything; fd 2 held by /dev/null so no file lands on it
        _hold_fd(2)
        sys.stderr = open(os.devnull, "w", encoding="utf-8")
    if sys.stdout is None:  # >&-
        _hold_fd(1)
        print("error: standard output is closed (>&-): redirect it to a file or to /dev/null", file=sys.stderr)
        sys.exit(2)
    if sys.stdout is not sys.__stdout__:
        return
    old: Any = sys.stdout
    try:
        fd = old.fileno()
    except (OSError, ValueError, AttributeError):
        return
    whole = io.TextIOWrapper(
        io.BufferedWriter(_WholeWrites(fd)),
        encoding=old.encoding,
        errors=old.errors,
        line_buffering=old.line_buffering,
    )
    sys.stdout = whole
    setattr(sys, "__stdout__", whole)  # noqa: B010 (sys.__stdout__ is Final to mypy; the guard above compares with it)


def _hold_fd(fd: int) -> None:
    try:
        os.fstat(fd)
    except OSError:
        got = os.open(os.devnull, os.O_RDWR)
        if got != fd:
            os.dup2(got, fd)
            os.close(got)


def _memory_limit() -> str:
    """What bounds the memory, for the out-of-memory line: the address-space limit (`ulimit -v`) when one is set."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (OSError, ValueError):
        return ""
    if soft == resource.RLIM_INFINITY:
        return " (the machine's memory ran out; free some, or give a smaller input)"
    return f" (ulimit -v is {soft // 1024} KiB: raise it, or give a smaller input)"


def _output_failed(exc: OSError) -> None:
    """stdout (or a file) could not take the output: one line, and no second failure when Python flushes at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    if exc.errno == errno.EPIPE:  # the reader went away (| head): nothing to say, as `cat` says nothing
        sys.exit(1)
    where = exc.filename if exc.filename is not None else "cannot write the output"
    limit = ""
    if exc.errno == errno.EFBIG:
        soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        if soft != resource.RLIM_INFINITY:
            limit = f" (the file size limit, ulimit -f, is {soft} bytes)"
    print(f"error: {where}: {exc.strerror or exc}{limit}", file=sys.stderr)
    sys.exit(2)


class _CtrlC:
    """Whether SIGINT arrived during this run. A client library may catch the KeyboardInterrupt the signal raises
    (kafka-python's I/O loop ends a task on any exception in it, and a socket read turns one into a connection
    error), so long loops ask `interrupted()`, and an error after the signal is reported as the interrupt."""

    seen = False
    terminated = False  # SIGTERM arrived


def _on_sigint(signum: int, frame: Any) -> None:
    _CtrlC.seen = True
    raise KeyboardInterrupt


class Terminated(BaseException):
    """SIGTERM (kill, a CI timeout, systemd stopping a job): unwinds like Ctrl-C, so that every temporary folder
    and lock is removed on the way out, and exits 143 (128 + 15, as a shell reports a process SIGTERM ended)."""


def _on_sigterm(signum: int, frame: Any) -> None:
    _CtrlC.terminated = True
    raise Terminated


def _on_sigterm_as_interrupt(signum: int, frame: Any) -> None:
    """`skew` reports SIGTERM as Ctrl-C (one line, exit 130; planner.skew.spark.stop_on_sigterm): from the first
    instant, not only once the command's own handler is in place (a SIGTERM while typer parsed exited 143)."""
    _CtrlC.seen = True
    raise KeyboardInterrupt


def interrupted() -> bool:
    """Whether Ctrl-C was pressed during this command (even where a library swallowed its KeyboardInterrupt)."""
    return _CtrlC.seen


def _one_blas_thread_under_memory_limit() -> None:
    """Under `ulimit -v`, OpenBLAS (loaded with NumPy) allocates a buffer per core and, when that fails, prints
    "OpenBLAS error: Memory allocation still failed" itself before our one line. One thread needs one buffer; the
    planner does no BLAS work that threads would speed up. A value the user set is kept."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (OSError, ValueError):
        return
    if soft != resource.RLIM_INFINITY:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def run(argv: list[str] | None = None, exiting: bool = False) -> None:
    """The command line `argv` (sys.argv's when None). `exiting`: the process ends after it (the console script), so
    Ctrl-C and SIGTERM are ignored once the command is done instead of given back to their default action, which
    ended a process whose output was already whole by the signal (exit -15: measured, SIGTERM at the last instants
    of `reassign apply --write` and `twin -o`, after the "wrote" line)."""
    _CtrlC.seen = _CtrlC.terminated = False
    _standard_streams()
    _one_blas_thread_under_memory_limit()
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:  # ignored (a background job) or taken by the caller: left so
        previous = None
    else:
        try:
            signal.signal(signal.SIGINT, _on_sigint)
        except ValueError:  # not the main thread: the default handler stays
            previous = None
    term = None
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        try:
            args = sys.argv[1:] if argv is None else argv
            term = signal.signal(signal.SIGTERM, _on_sigterm_as_interrupt if args[:1] == ["skew"] else _on_sigterm)
        except ValueError:  # not the main thread
            term = None
    try:
        _run(argv)
    finally:
        release_folder_locks()
        if previous is not None:
            signal.signal(signal.SIGINT, signal.SIG_IGN if exiting else previous)
        if term is not None:
            signal.signal(signal.SIGTERM, signal.SIG_IGN if exiting else term)


# A tab stays: it neither ends the line nor moves the cursor back, and Kafka's texts keep it.
_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x09), *range(0x0A, 0x20), 0x7F, *range(0x80, 0xA0)]}
_CONTROL.update({0x0A: "\\n", 0x0D: "\\r", 0x2028: "\\u2028", 0x2029: "\\u2029"})


def shown(text: str) -> str:
    """An error line as it may reach a terminal: control characters (an ANSI escape, a newline or carriage return in
    a topic name or a file's value) escaped as Python's repr does (`\\x1b`), so one error is one line and cannot
    clear the screen or forge a second line."""
    return text.translate(_CONTROL)


def _exhausted(exc: BaseException) -> NoReturn:
    """Out of memory (exit 1, naming `ulimit -v` when set) or of stack (exit 2): one line, never a traceback."""
    if isinstance(exc, MemoryError):
        print(f"error: out of memory{_memory_limit()}", file=sys.stderr)
        sys.exit(1)
    print("error: input nested too deeply for the stack (raise `ulimit -s`, or simplify the input)", file=sys.stderr)
    sys.exit(2)


def _limit_reached(exc: BaseException) -> None:
    """This process ran out of open files (`ulimit -n`) or could not start a thread (`ulimit -u`): one line naming
    the limit and what to raise, exit 1 (the environment, not the input); nothing when `exc` is neither."""
    if isinstance(exc, OSError) and exc.errno == errno.ENFILE:
        print(
            "error: the system's table of open files is full (ENFILE): close files elsewhere, or raise fs.file-max",
            file=sys.stderr,
        )
        sys.exit(1)
    if isinstance(exc, OSError) and exc.errno == errno.EMFILE:
        soft = _soft_limit(resource.RLIMIT_NOFILE)
        print(
            f"error: too many open files: the open-files limit (ulimit -n) is {soft}; raise it (e.g. ulimit -n 4096)",
            file=sys.stderr,
        )
        sys.exit(1)
    if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
        soft = _soft_limit(resource.RLIMIT_NPROC)
        print(
            f"error: cannot start a thread: the limit on processes and threads (ulimit -u) is {soft}, or the memory "
            "for thread stacks ran out; raise it (e.g. ulimit -u 4096)",
            file=sys.stderr,
        )
        sys.exit(1)


def _soft_limit(which: int) -> str:
    try:
        soft = resource.getrlimit(which)[0]
    except (OSError, ValueError):
        return "unknown"
    return "unlimited" if soft == resource.RLIM_INFINITY else str(soft)


def _number_too_long(exc: Exception) -> None:
    """A reader we did not bound met a number Python's int() refuses (over 4300 digits): one line, exit 2."""
    if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
        print(
            "error: a number of more than 4300 digits in the input; Kafka's numbers are Java ints and longs "
            "(at most 19 digits)",
            file=sys.stderr,
        )
        sys.exit(2)


def _run(argv: list[str] | None) -> None:
    try:
        code = _command().main(args=argv, prog_name="kafka-planner", standalone_mode=False)
        sys.stdout.flush()
    except PlannerError as exc:
        if _CtrlC.seen:  # the error is the interrupt's doing (a connection a swallowed KeyboardInterrupt broke)
            print("error: interrupted", file=sys.stderr)
            sys.exit(130)
        print(f"error: {shown(redact(str(exc)))}", file=sys.stderr)
        sys.exit(getattr(exc, "exit_code", 2))
    except (MemoryError, RecursionError) as exc:
        _exhausted(exc)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        sys.exit(130)
    except Terminated:
        print("error: terminated (SIGTERM)", file=sys.stderr)
        sys.exit(143)
    except OSError as exc:
        _limit_reached(exc)
        _output_failed(exc)
    except Exception as exc:
        if _CtrlC.seen:  # Python wrapped the interrupt in another error (a `__set_name__` running while a class is
            # made wraps any exception in RuntimeError; measured: Ctrl-C while pydantic was imported): still Ctrl-C
            print("error: interrupted", file=sys.stderr)
            sys.exit(130)
        if _CtrlC.terminated:
            print("error: terminated (SIGTERM)", file=sys.stderr)
            sys.exit(143)
        kinds = {k.__name__ for k in type(exc).__mro__}
        if "NoArgsIsHelpError" in kinds:  # `kafka-planner` or a group alone: its help, as click prints it
            exc.show()  # type: ignore[attr-defined]
            sys.exit(2)
        if "UsageError" in kinds:  # bad option, missing argument: one line, like every other error
            command = getattr(getattr(exc, "ctx", None), "command_path", None) or "kafka-planner"
            text = shown(redact(exc.format_message()))  # type: ignore[attr-defined]
            print(f"error: {text} (see '{command} --help')", file=sys.stderr)
            sys.exit(2)
        if "Abort" in kinds:
            print("error: interrupted", file=sys.stderr)
            sys.exit(130)
        _number_too_long(exc)
        _limit_reached(exc)
        raise
    if code == 130:  # typer turns KeyboardInterrupt into Exit(130), silently
        print("error: interrupted", file=sys.stderr)
    sys.exit(code if isinstance(code, int) else 0)
