"""The SparkSession for a pipeline command: master, Python interpreter, logging, progress. PySpark loads here only.

* `PYSPARK_PYTHON` and `spark.pyspark.python` are set to the running interpreter, so executors run the same Python
  (and see the same NumPy / PyArrow) as the driver;
* Spark's own logging is quiet (ERROR) unless `verbose`; the console progress bar is on when stderr is a terminal;
* on a non-local master the `planner` package is shipped to the executors as a zip (`addPyFile`), so workers need
  only Python with NumPy and PyArrow, not kafka-planner itself;
* a session that is already active in this process (tests, notebooks) is reused and left running;
* Ctrl-C at any moment stops the JVM too: PySpark starts `spark-submit` with SIGINT ignored, and an interrupt while
  PySpark waits for the gateway (the first seconds) leaves the JVM running with parent 1, holding the terminal's
  pipes. On KeyboardInterrupt every process this one started (the JVM, its Python workers) is terminated and
  waited for before the interrupt goes on.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import zipfile
from contextlib import contextmanager
from pathlib import Path

from planner.model import EnvironmentFailure, PlannerError

APP_NAME = "kafka-planner skew"


def _quiet_python_warnings() -> None:
    # pyspark warns about pandas 3 at import of its Arrow helpers; irrelevant here (no pandas API is used).
    warnings.filterwarnings("ignore", message=".*PySpark does not yet fully support pandas.*")


def _package_zip() -> str:
    """The `planner` package as a zip for `SparkContext.addPyFile` (executors on other hosts)."""
    root = Path(__file__).resolve().parents[1]
    fd, path = tempfile.mkstemp(prefix="kafka-planner-", suffix=".zip")
    os.close(fd)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for file in sorted(root.rglob("*.py")):
            zf.write(file, Path("planner") / file.relative_to(root))
    return path


# Without --verbose the driver JVM logs nothing, from its first line: a start that fails is reported by the command in
# one line (`start_failure`), and a JVM that Ctrl-C shuts down while the SparkContext is still being made logs "ERROR
# SparkContext: Error initializing SparkContext ... Shutdown hooks cannot be modified during shutdown" with a stack
# trace (seen in CI, the 20-interrupt test). Once started, `setLogLevel("OFF")` keeps it so. PySpark's gateway logger
# has a level of its own: Spark treats the gateway as a shell and prints "Setting default log level to WARN" when the
# shell's logger has none and the root's level is not WARN (Spark's Logging.initializeLogging).
_LOG4J = """\
rootLogger.level = off
rootLogger.appenderRef.stderr.ref = console
logger.repl.name = org.apache.spark.api.python.PythonGatewayServer
logger.repl.level = off
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex
"""


def _quiet_log4j() -> str:
    path = Path(tempfile.gettempdir()) / "kafka-planner-log4j2-quiet.properties"
    if not path.exists() or path.read_text() != _LOG4J:
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            fh.write(_LOG4J)
        os.replace(tmp, path)
    return str(path)


def is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[") or master.startswith("local-cluster[")


def check_master(master: str, timeout: float = 5.0) -> None:
    """For `spark://host:port[,host:port...]`: fail at once, in one line, when no master accepts a TCP connection
    (Spark itself retries for a minute, logging a stack trace every 20 s, before giving up)."""
    import socket

    if not master.startswith("spark://"):
        return
    errors = []
    for hostport in master[len("spark://") :].split(","):
        host, sep, port = hostport.strip().rpartition(":")
        if not sep or not host or not port.isdigit():
            raise PlannerError(f"--master {master}: use spark://HOST:PORT (e.g. spark://127.0.0.1:7077)")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
                return
        except OSError as exc:
            errors.append(f"{host}:{port} ({exc.strerror or exc})")
    raise PlannerError(f"--master {master}: no Spark master answers at {', '.join(errors)}")


def local_driver_memory(physical_bytes: int | None = None) -> str:
    """The driver heap for local mode: half the machine's memory, at least 1g and at most 8g
    (`--spark-conf spark.driver.memory=…` overrides it)."""
    if physical_bytes is None:
        try:
            physical_bytes = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            physical_bytes = 0
    return f"{max(1, min(8, physical_bytes // 2 // (1 << 30)))}g"


def _descendants(pid: int) -> list[int]:
    """Every live process below `pid` (children first, then theirs), from `ps` (Linux and macOS)."""
    try:
        listing = subprocess.run(["ps", "-A", "-o", "pid=,ppid="], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    children: dict[int, list[int]] = {}
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0].isdigit() and fields[1].isdigit():
            children.setdefault(int(fields[1]), []).append(int(fields[0]))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(0), []):
            found.append(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child of ours counts as gone once reaped
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


def _freeze(rounds: int = 20) -> list[int]:
    """Stop (SIGSTOP) every process below this one, listing again until no new one appears: a process forked while
    the clean-up runs (PySpark's daemon forks a worker per task) is caught too, before its parent dies and it is
    re-parented out of reach."""
    seen: list[int] = []
    for _ in range(rounds):
        new = [pid for pid in _descendants(os.getpid()) if pid not in seen]
        if not new:
            break
        for pid in new:
            try:
                os.kill(pid, signal.SIGSTOP)
            except (ProcessLookupError, PermissionError):
                pass
        seen.extend(new)
    return seen


def stop_children(grace: float = 10.0) -> None:
    """Terminate (SIGTERM, then SIGKILL after `grace` seconds) every process this one started, and wait for them.
    SIGINT is ignored meanwhile: a second Ctrl-C cannot cut the clean-up short."""
    import logging

    previous = {signum: signal.signal(signum, signal.SIG_IGN) for signum in _STOPS}
    # Py4J objects still alive in Python log "Exception while sending command" when they are collected after the
    # JVM is gone: the interrupt is reported in one line by the command, nothing else
    logging.disable(logging.CRITICAL)
    _silence_python()
    try:
        pids = _freeze()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in pids:
                for each in (sig, signal.SIGCONT):  # a stopped process acts on SIGTERM once continued
                    try:
                        os.kill(pid, each)
                    except (ProcessLookupError, PermissionError):
                        pass
            deadline = time.monotonic() + grace
            while pids and time.monotonic() < deadline:
                pids = [pid for pid in pids if _alive(pid)]
                time.sleep(0.05)
            if not pids:
                return
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


_HANDLER_PID: int | None = None  # the process that installed `_on_interrupt`
_INTERRUPTED = threading.Event()  # `_on_interrupt` ran since the session started
_STOPS = (signal.SIGINT, signal.SIGTERM)  # Ctrl-C, and `kill` / a supervisor stopping the command: the same clean-up


def _on_interrupt(signum, frame) -> None:
    """SIGINT or SIGTERM while Spark runs: no `cancelAllJobs` over Py4J from inside the signal handler (PySpark's own
    handler does that, re-entering the connection the main thread is using: `RuntimeError: reentrant call inside
    <_io.BufferedReader …>`, and Py4J logs both failures as tracebacks); Python's own reporting of errors in threads
    and finalizers is silenced (Py4J objects collected after the JVM is gone), and the interrupt raised:
    `stop_children` then ends the JVM.

    In a child forked to start spark-submit (PySpark's `preexec_fn`, which runs Python between fork and exec) the
    handler is inherited: there it does nothing, as the child is about to ignore SIGINT anyway, instead of raising
    into the at-fork hooks, which print a traceback on the shared stderr."""
    if os.getpid() != _HANDLER_PID:
        return
    _silence_python()
    if _INTERRUPTED.is_set() and signum == signal.SIGTERM:
        return  # a second stop while the first is handled: the clean-up is already under way
    _INTERRUPTED.set()
    if _gateway_not_up():
        # spark-submit is still starting the gateway JVM: PySpark's launch_gateway removes the folder the JVM is about
        # to write its port into as the interrupt unwinds, and the JVM then prints "Exception in thread main
        # java.nio.file.NoSuchFileException: …/connection…" (seen in CI, the 20-interrupt test). Nothing of Spark's
        # exists yet to clean up, so the launcher and the JVM end here, before they can print
        for pid in _freeze():
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    raise KeyboardInterrupt


def _gateway_not_up() -> bool:
    """Whether PySpark is still launching its gateway JVM (`SparkContext._gateway` is set once it has answered)."""
    context = sys.modules.get("pyspark.core.context") or sys.modules.get("pyspark.context")
    spark_context = getattr(context, "SparkContext", None)
    return spark_context is not None and getattr(spark_context, "_gateway", None) is None


def _silence_python() -> None:
    """No Python traceback after an interrupt: Py4J's log, failures in its threads and in `__del__` of Java objects
    whose JVM is gone are not the user's concern; the command reports the interrupt in one line."""
    import logging

    logging.disable(logging.CRITICAL)
    threading.excepthook = lambda args: None
    sys.unraisablehook = lambda unraisable: None


def _own_sigint() -> None:
    global _HANDLER_PID
    if threading.current_thread() is threading.main_thread():
        _HANDLER_PID = os.getpid()
        for signum in _STOPS:
            signal.signal(signum, _on_interrupt)


def stop_on_sigterm():
    """SIGTERM raises KeyboardInterrupt in the main thread (before Spark starts too); returns the previous handler
    (None when not on the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    owner = os.getpid()

    def on_term(signum, frame):
        if os.getpid() == owner:  # not in a child forked to exec spark-submit
            _silence_python()
            raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, on_term)


@contextmanager
def _keep_our_handlers():
    """While the SparkContext starts, its attempt to install PySpark's SIGINT handler (which calls `cancelAllJobs`
    over Py4J from the handler) leaves ours in place. Children forked meanwhile (spark-submit's `preexec_fn`
    ignoring SIGINT) are unaffected."""
    real = signal.signal

    def guarded(signum, handler):
        if signum in _STOPS and os.getpid() == _HANDLER_PID and handler is not _on_interrupt:
            return signal.getsignal(signum)
        return real(signum, handler)

    signal.signal = guarded
    try:
        yield
    finally:
        signal.signal = real


def become_subreaper() -> bool:
    """Linux: orphans among this process's descendants are re-parented to it instead of to init (prctl
    PR_SET_CHILD_SUBREAPER), so a JVM or Python worker whose parent died during a clean-up is still found by
    `stop_children`. Only for the command's own process (a test runner would collect the zombies)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _builder(master: str, verbose: bool, conf: dict[str, str] | None, jars):
    """The SparkSession builder for `session`: our defaults, then the user's `conf`, then `jars`."""
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.appName(APP_NAME)
        .master(master)
        .config("spark.pyspark.python", sys.executable)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "true" if sys.stderr.isatty() else "false")
        .config("spark.sql.shuffle.partitions", os.environ.get("KAFKA_PLANNER_SHUFFLE_PARTITIONS", "16"))
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
    )
    if is_local(master):
        # In local mode the executors live in the driver JVM, so its heap is the job's whole memory; Spark's 1g
        # default makes the per-key count spill (measured: --top 20 over 20M keys, 50 s with 1g, 30 s with 4g).
        builder = builder.config("spark.driver.memory", local_driver_memory())
    if not verbose:
        # a log4j2 configuration read by the driver JVM at launch: no "Using Spark's default log4j profile" banner
        builder = builder.config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{_quiet_log4j()}")
    conf = dict(conf or {})
    if jars:
        conf["spark.jars"] = ",".join([j for j in conf.get("spark.jars", "").split(",") if j] + list(jars))
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder


def _start(builder, master: str):
    """`builder.getOrCreate()` with our signal handlers in place; an interrupt stops what started, a failure is one
    line saying why."""
    _INTERRUPTED.clear()
    _own_sigint()
    try:
        with _keep_our_handlers():
            spark = builder.getOrCreate()
        _own_sigint()
    except KeyboardInterrupt:  # while spark-submit starts: its JVM ignores SIGINT and would outlive us
        stop_children()
        raise
    except Exception as exc:  # JVM missing, master unreachable, ...
        if _INTERRUPTED.is_set():
            stop_children()
            raise KeyboardInterrupt from None
        raise PlannerError(start_failure(master, exc, dict(builder._options))) from None
    return spark


# the open files Spark's driver JVM needs on `local[*]` (its jars, sockets, shuffle and block-manager files): about
# 300 to start and run the skew job; measured: it fails at `ulimit -n 256` (with Java's stack lines), runs at 512
SPARK_OPEN_FILES = 512


def check_open_files(limit: int | None = None) -> None:
    """Refuse, in one line, to start Spark under an open-files limit (`ulimit -n`, RLIMIT_NOFILE's soft limit, which
    the JVM inherits) too low for it: the JVM would fail part-way with its stack trace instead."""
    if limit is None:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if limit != -1 and limit < SPARK_OPEN_FILES:  # -1: RLIM_INFINITY
        raise EnvironmentFailure(
            f"cannot start Spark: the open-files limit (ulimit -n) is {limit}, Spark needs at least "
            f"{SPARK_OPEN_FILES}; raise it (e.g. ulimit -n 4096)"
        )


@contextmanager
def session(master: str = "local[*]", verbose: bool = False, conf: dict[str, str] | None = None, jars=()):
    """A SparkSession for `master`; stopped on exit unless it was already running in this process. `jars` go on
    `spark.jars` (after any the user gave), so the executors of a cluster fetch them too."""
    _quiet_python_warnings()
    check_master(master)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        yield active
        return
    check_open_files()
    builder = _builder(master, verbose, conf, jars)
    previous = {signum: signal.getsignal(signum) for signum in _STOPS}
    spark = _start(builder, master)
    shipped = None
    interrupted = False
    try:
        # quiet: a failing task is reported by the command itself, in one line (Spark would log its stack trace)
        spark.sparkContext.setLogLevel("INFO" if verbose else "OFF")
        if not is_local(master):
            shipped = _package_zip()
            spark.sparkContext.addPyFile(shipped)
        yield spark
    except KeyboardInterrupt:
        interrupted = True
        stop_children()  # no spark.stop(): it would wait on the JVM for the running tasks
        raise
    except Exception:
        # an interrupt that surfaced as another error: a `finally` that made a Py4J call on the connection the
        # interrupt broke ("Answer from Java side is empty"), wrapped by the job in a PlannerError. Still Ctrl-C.
        if not _INTERRUPTED.is_set():
            raise
        interrupted = True
        stop_children()
        raise KeyboardInterrupt from None
    finally:
        if not interrupted:
            try:
                spark.stop()
            except KeyboardInterrupt:
                stop_children()
                raise
        if threading.current_thread() is threading.main_thread():
            for signum, handler in previous.items():
                if handler is not None:
                    signal.signal(signum, handler)
        if shipped:
            try:
                os.unlink(shipped)
            except OSError:
                pass


_JAVA_CLASS = re.compile(r"^(?:[a-z][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error): ")  # org.apache.spark.SparkException: …


def _first_line(exc: BaseException) -> str:
    """A Spark / Py4J error as one line: the first meaningful line of its message."""
    text = str(exc).strip()
    for line in text.splitlines():
        line = line.strip().removeprefix(": ")
        if line and not line.startswith(("JVM stacktrace", "at ", "Traceback", "An error occurred while calling")):
            return _JAVA_CLASS.sub("", line, count=1)
    return type(exc).__name__


def _java() -> str | None:
    """The `java` spark-submit runs: `$JAVA_HOME/bin/java`, else the one on PATH."""
    import shutil

    home = os.environ.get("JAVA_HOME")
    if home:
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


def _java_check(java: str, heap: str) -> str | None:
    """Why `java -Xmx<heap> -version` fails (no Java, too old, the heap cannot be reserved), or None."""
    try:
        done = subprocess.run([java, f"-Xmx{heap}", "-version"], capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        return f"no Java at {java}: install Java 17 or 21 (Spark 4's) or set JAVA_HOME to one"
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{java} cannot run ({getattr(exc, 'strerror', None) or exc}): check JAVA_HOME"
    text = done.stderr + done.stdout
    if done.returncode != 0:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        memory = [line for line in lines if "memory" in line.lower() or "heap" in line.lower()]
        if memory:
            return (
                f"Java cannot start with a {heap} heap ({memory[0]}): free memory, or give less with "
                f"--spark-conf spark.driver.memory=1g"
            )
        return f"{java} -version fails ({lines[0] if lines else f'exit {done.returncode}'}): check JAVA_HOME"
    found = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if found:
        major = int(found.group(2) if found.group(1) == "1" and found.group(2) else found.group(1))
        if major < 17:
            return f"{java} is Java {major}; Spark 4 needs Java 17 or 21: install one or set JAVA_HOME to it"
    return None


def start_failure(master: str, exc: BaseException, conf: dict[str, str]) -> str:
    """One line for a Spark that did not start: why (Java, memory, the driver's port) and what to do."""
    text, first = str(exc), _first_line(exc)
    head = f"cannot start Spark with --master {master}"
    heap = conf.get("spark.driver.memory", "1g")
    if "JAVA_GATEWAY_EXITED" in text or "Java gateway process exited" in text:
        java = _java()
        if java is None:
            return f"{head}: no java on PATH and no JAVA_HOME: install Java 17 or 21 (Spark 4's) or set JAVA_HOME"
        why = _java_check(java, heap)
        if why:
            return f"{head}: {why}"
        return (
            f"{head}: the JVM exited before it started (its own lines above say why; check SPARK_HOME "
            f"{os.environ.get('SPARK_HOME', '(unset)')} and --spark-conf settings)"
        )
    if "BindException" in text or "Cannot assign requested address" in text or "failed after" in text:
        address = os.environ.get("SPARK_LOCAL_IP") or conf.get("spark.driver.bindAddress") or "this host's address"
        return (
            f"{head}: the driver cannot listen on {address} ({first.split('!')[0]}); set SPARK_LOCAL_IP=127.0.0.1 or "
            f"--spark-conf spark.driver.bindAddress=ADDRESS, or free the port given in spark.driver.port"
        )
    if "OutOfMemoryError" in text or "Cannot allocate memory" in text or "insufficient memory" in text:
        return (
            f"{head}: out of memory with a {heap} driver heap ({first}): free memory or set "
            "--spark-conf spark.driver.memory"
        )
    return f"{head}: {first}"
