"""Spark's process lifecycle seen from the shell: Ctrl-C at several points of start-up and mid-job stops the JVM too
(nothing of ours is left, with parent 1 or otherwise), prints one line and exits 130, leaving no --output behind;
input problems a local file shows are found before Spark starts; no PySpark is one line naming the extra."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from planner.model import PlannerError
from planner.skew.detect import check_key_column, detect_format
from planner.skew.spark import _descendants

JVM_NOTE = "WARNING: Using incubator modules: jdk.incubator.vector"  # the JVM's own start-up line (Spark 4's flags)
NO_JAVAC = "skew: note: no JDK compiler (javac) found; murmur2 runs in Python (Arrow/NumPy) instead of the JVM"


def _args(proc: int) -> str:
    try:
        return Path(f"/proc/{proc}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _session_processes(sid: int) -> list[str]:
    """Every process of the session the CLI ran in (its JVM and Python workers would stay in it)."""
    listing = subprocess.run(["ps", "-A", "-o", "pid=,sid=,stat=,args="], capture_output=True, text=True).stdout
    return [
        line for line in listing.splitlines() if line.split()[1] == str(sid) and not line.split()[2].startswith("Z")
    ]


def _interrupt_when(point: str, keys: Path, env: dict[str, str], output: Path) -> subprocess.CompletedProcess:
    log = output.parent / "stderr.log"  # --verbose: progress lines on stderr, read while the command runs
    verbose = ["--verbose"] if point == "JVM job hashing" else []
    with open(log, "wb") as err_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "planner", "skew", "--keys", str(keys), "--partitions", "6", "--top", "5",
             "--output", str(output), *verbose],
            stdout=subprocess.PIPE,
            stderr=err_file,
            env=env,
            start_new_session=True,
        )  # fmt: skip
    reached = {
        "JVM job hashing": lambda kids: "skew: hashing keys" in log.read_text(errors="replace"),
        "spark-submit started": lambda kids: bool(kids),
        "JVM running": lambda kids: any("java" in _args(k) and "SparkSubmit" in _args(k) for k in kids),
        "Python workers hashing": lambda kids: any(
            "pyspark.daemon" in _args(k) or "pyspark.worker" in _args(k) for k in kids
        ),
    }[point]
    try:
        deadline = time.monotonic() + 180
        while not reached(_descendants(proc.pid)):
            assert proc.poll() is None, f"finished before {point}: {log.read_text()}"
            assert time.monotonic() < deadline, f"never reached: {point}"
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGINT)  # what the terminal does on Ctrl-C: the whole foreground group
        out, _ = proc.communicate(timeout=60)  # the pipes close only when no child holds them
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    left = _session_processes(proc.pid)
    for line in left:  # clean up before failing
        os.kill(int(line.split()[0]), signal.SIGKILL)
    assert left == []
    err = log.read_text()
    if verbose:  # the progress lines before the interrupt
        err = "".join(line for line in err.splitlines(keepends=True) if not line.startswith("skew: "))
    return subprocess.CompletedProcess(proc.args, proc.returncode, out.decode(), err)


@pytest.mark.parametrize("point", ["spark-submit started", "JVM running", "JVM job hashing", "Python workers hashing"])
def test_ctrl_c_stops_the_jvm_prints_one_line_exit_130(point, tmp_path, spark_subprocess_env):
    keys = tmp_path / "keys.parquet"
    pq.write_table(pa.table({"key": [f"k{i % 50_000}" for i in range(2_000_000)]}), keys, row_group_size=100_000)
    output = tmp_path / "out"
    env = dict(spark_subprocess_env)
    expected = ["error: interrupted"]
    if point == "Python workers hashing":  # murmur2 runs in Python only without the JVM UDF: no javac, no cached jar
        env.update({"KAFKA_PLANNER_JAVAC": "", "XDG_CACHE_HOME": str(tmp_path / "cache")})
        expected = [NO_JAVAC, "error: interrupted"]
    done = _interrupt_when(point, keys, env, output)
    assert done.returncode == 130
    assert done.stdout == ""
    lines = [line for line in done.stderr.splitlines() if line != JVM_NOTE]
    if point == "JVM job hashing":  # --verbose: Spark's own log lines come first, then our one line
        assert not any("Traceback" in line for line in lines) and lines.count("error: interrupted") == 1
        lines = lines[-1:]
    assert lines == expected
    assert not output.exists()


_SWALLOWED_INTERRUPT = """
import os, signal, sys, time
from planner.skew.spark import _alive, _descendants, session
try:
    with session("local[1]") as spark:
        spark.range(1).count()
        try:  # Ctrl-C lands in code that swallows it, as a `finally` making a Py4J call on a broken connection does
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:
            pass
        raise RuntimeError("Answer from Java side is empty")
except KeyboardInterrupt:
    print("interrupted", [p for p in _descendants(os.getpid()) if _alive(p)])
"""


def test_interrupt_that_surfaces_as_another_error_is_still_ctrl_c(spark_subprocess_env):
    # Under load, a Ctrl-C mid-job once came out as "reading --keys ... failed: Answer from Java side is empty"
    # (exit 2): the session reports any error after an interrupt as the interrupt, and stops the JVM
    done = subprocess.run(
        [sys.executable, "-c", _SWALLOWED_INTERRUPT],
        capture_output=True,
        text=True,
        env=spark_subprocess_env,
        timeout=180,
    )
    assert (done.returncode, done.stdout) == (0, "interrupted []\n"), done.stderr[-2000:]


def test_without_pyspark_one_line_naming_the_extra(tmp_path):
    pq.write_table(pa.table({"key": ["a"]}), tmp_path / "k.parquet")
    blocked = (
        "import sys; sys.modules['pyspark'] = None; sys.argv[0] = 'kafka-planner'; from planner.cli import main; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", blocked, "skew", "--keys", str(tmp_path / "k.parquet"), "--partitions", "3"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "error: skew runs on Spark and needs pyspark, which is not installed: pip install 'kafka-planner[spark]'\n",
    )


def test_input_format_detected_or_refused_before_spark(tmp_path):
    pq.write_table(pa.table({"key": ["a"], "n": [1]}), tmp_path / "k.parquet")
    (tmp_path / "k.csv").write_text("id,key\n1,a\n")
    (tmp_path / "k.jsonl").write_text('{"key": "a"}\n')
    (tmp_path / "k.txt").write_text("a\n")
    (tmp_path / "k.dat").write_text("id,key\n1,a\n")
    folder = tmp_path / "dir"
    folder.mkdir()
    (folder / "_SUCCESS").write_text("")
    (folder / "part-0.csv").write_text("key\nb\n")
    assert [detect_format(str(tmp_path / name), None) for name in ("k.parquet", "k.csv", "k.jsonl", "k.txt")] == [
        "parquet",
        "csv",
        "json",
        "text",
    ]
    assert detect_format(str(folder), None) == "csv"  # the directory's data files, as Spark lists them
    assert detect_format("s3a://bucket/keys", None) == "parquet"  # remote: left to Spark
    assert detect_format(str(tmp_path / "k.dat"), "csv") == "csv"
    with pytest.raises(PlannerError) as exc:
        detect_format(str(tmp_path / "k.dat"), None)
    assert str(exc.value) == (
        f"--keys {tmp_path / 'k.dat'}: cannot tell its format (not Parquet, no .csv/.json/.txt "
        "suffix); give --input-format csv, json or text"
    )
    with pytest.raises(PlannerError) as exc:
        detect_format(str(tmp_path / "k.csv"), "parquet")
    assert str(exc.value) == (
        f"--keys {tmp_path / 'k.csv'}: not a Parquet file (no PAR1 magic); give --input-format csv"
    )


def test_missing_key_column_of_a_local_file_before_spark(tmp_path):
    pq.write_table(pa.table({"key": ["a"], "n": [1]}), tmp_path / "k.parquet")
    (tmp_path / "k.csv").write_text('id,"user id"\n1,a\n')
    check_key_column(str(tmp_path / "k.csv"), "csv", "user id")
    check_key_column(str(tmp_path / "k.parquet"), "parquet", "n")
    with pytest.raises(PlannerError) as exc:
        check_key_column(str(tmp_path / "k.csv"), "csv", "key")
    assert str(exc.value) == f"--key-column 'key' not found in {tmp_path / 'k.csv'}; its columns are: id, user id"
    with pytest.raises(PlannerError) as exc:
        check_key_column(str(tmp_path / "k.parquet"), "parquet", "id")
    assert str(exc.value) == f"--key-column 'id' not found in {tmp_path / 'k.parquet'}; its columns are: key, n"


def test_csv_without_input_format_fails_fast_in_a_fresh_process(tmp_path, spark_subprocess_env):
    """The whole command from the shell: the CSV is detected and its header read before Spark would start."""
    (tmp_path / "k.csv").write_text("id,name\n1,a\n")
    done = subprocess.run(
        [sys.executable, "-m", "planner", "skew", "--keys", str(tmp_path / "k.csv"), "--partitions", "3"],
        capture_output=True,
        text=True,
        env=spark_subprocess_env,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"error: --key-column 'key' not found in {tmp_path / 'k.csv'}; its columns are: id, name\n",
    )


def test_twenty_interrupts_at_varied_times_leave_nothing(tmp_path, spark_subprocess_env):
    """20 runs, each stopped at a different moment of its life (from the first milliseconds, while Python imports,
    through spark-submit, the JVM's start and the job): Ctrl-C to the whole process group as a terminal sends it, or
    SIGTERM to the command alone as `kill` and supervisors send it. Every run prints exactly one line of its own,
    exits 130, and leaves no process of its session (JVM, spark-submit, Python worker) behind.

    The moments are spread over three quarters of an uninterrupted run's length, measured first on this machine: the
    shorter of two runs, as the second finds the JVM's files in the page cache (in CI the first took 9.5 s and a later
    one ended before 7.1 s). A run that still ends before its signal is run again, stopped at half the time it took,
    at most twice: every run is stopped somewhere in its life, none is left out."""
    keys = tmp_path / "keys.parquet"
    pq.write_table(pa.table({"key": [f"k{i % 80_000}" for i in range(4_000_000)]}), keys, row_group_size=200_000)
    command = [sys.executable, "-m", "planner", "skew", "--engine", "spark", "--keys", str(keys), "--partitions", "6"]
    started = time.monotonic()
    lengths = []
    for _ in range(2):
        begun = time.monotonic()
        whole = subprocess.run(command, capture_output=True, env=spark_subprocess_env, timeout=120)
        lengths.append(time.monotonic() - begun)
        assert whole.returncode == 0 and whole.stdout.decode().startswith("Keys: "), whole.stderr
    length = min(lengths)
    outcomes = []
    early = []
    for run in range(20):
        # 0.3 s (Python has started: before, the kernel ends it) … three quarters of the whole run after the start
        delay = 0.3 + run * (0.75 * length - 0.3) / 19
        sig = signal.SIGINT if run % 2 == 0 else signal.SIGTERM
        for _attempt in range(3):
            with open(tmp_path / "stderr.log", "wb") as err_file:
                begun = time.monotonic()
                proc = subprocess.Popen(
                    command, stdout=subprocess.PIPE, stderr=err_file, env=spark_subprocess_env, start_new_session=True
                )
            try:
                try:
                    proc.wait(timeout=delay)
                except subprocess.TimeoutExpired:
                    pass
                if proc.poll() is not None:  # ended before its signal: again, stopped at half its length
                    took = time.monotonic() - begun
                    proc.communicate()
                    early.append((run, round(delay, 1), round(took, 1)))
                    delay = max(0.3, took / 2)
                    continue
                if sig == signal.SIGINT:
                    os.killpg(proc.pid, sig)
                else:
                    os.kill(proc.pid, sig)
                out, _ = proc.communicate(timeout=60)
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
            break
        else:
            raise AssertionError(f"run {run} ended before its signal three times: {early}")
        left = _session_processes(proc.pid)
        for line in left:
            os.kill(int(line.split()[0]), signal.SIGKILL)
        err = [line for line in (tmp_path / "stderr.log").read_text().splitlines() if line != JVM_NOTE]
        outcomes.append((run, sig.name, proc.returncode, out.decode(), err, left))
    assert [o for o in outcomes if o[2:] != (130, "", ["error: interrupted"], [])] == [], early
    assert time.monotonic() - started < 400


@pytest.mark.parametrize(
    "env_change, conf, expected",
    [
        (
            {"JAVA_HOME": "/nonexistent"},
            [],
            "error: cannot start Spark with --master local[1]: no Java at /nonexistent/bin/java: install Java 17 or "
            "21 (Spark 4's) or set JAVA_HOME to one",
        ),
        (
            {},
            ["--spark-conf", "spark.driver.memory=100t"],
            "error: cannot start Spark with --master local[1]: Java cannot start with a 100t heap (Could not reserve "
            "enough space for 107374182400KB object heap): free memory, or give less with --spark-conf "
            "spark.driver.memory=1g",
        ),
    ],
)
def test_a_failed_spark_start_says_why_and_what_to_do(env_change, conf, expected, tmp_path, spark_subprocess_env):
    (tmp_path / "k.csv").write_text("key\na\n")
    done = subprocess.run(
        [sys.executable, "-m", "planner", "skew", "--keys", str(tmp_path / "k.csv"), "--partitions", "3",
         "--master", "local[1]", *conf],
        capture_output=True, text=True, env={**spark_subprocess_env, **env_change}, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2
    # the JVM's own lines come first (a JVM that cannot reserve its heap says so on the stdout it inherits)
    assert set(done.stdout.splitlines()) <= {
        "Error occurred during initialization of VM",
        "Could not reserve enough space for 107374182400KB object heap",
    }
    assert done.stderr.splitlines()[-1] == expected
    assert "Traceback" not in done.stderr
