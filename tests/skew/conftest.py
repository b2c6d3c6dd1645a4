"""Spark fixtures: one local SparkSession for the session, and a real standalone master + worker on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pyspark
import pytest
from reaper import forget, popen

SPARK_HOME = str(Path(pyspark.__file__).resolve().parent)
SPARK_CLASS = str(Path(SPARK_HOME) / "bin" / "spark-class")


def spark_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "SPARK_HOME": SPARK_HOME,
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
            "SPARK_DAEMON_MEMORY": "256m",
            "SPARK_NO_DAEMONIZE": "1",
        }
    )
    return env


os.environ.update({k: v for k, v in spark_env().items() if k.startswith(("SPARK_", "PYSPARK_"))})
# the murmur2 UDF jar is compiled once per test run into a cache of its own (not the user's ~/.cache), so every run
# proves the compilation too; removed at the end
_UDF_CACHE = tempfile.mkdtemp(prefix="kafka-planner-test-cache-")
os.environ["XDG_CACHE_HOME"] = _UDF_CACHE
os.environ.pop("KAFKA_PLANNER_JAVAC", None)


@pytest.fixture(scope="session")
def spark_subprocess_env() -> dict[str, str]:
    """The environment for a `kafka-planner skew` subprocess (same interpreter, Spark on loopback)."""
    return spark_env()


@pytest.fixture(scope="session")
def spark():
    """The local-mode session every Spark test shares (the code under test reuses an active session)."""
    from planner.skew.spark import session

    with session("local[2]", conf={"spark.sql.shuffle.partitions": "4", "spark.driver.memory": "768m"}) as s:
        yield s


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except (subprocess.TimeoutExpired, ProcessLookupError):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=10)
    forget(proc)


@pytest.fixture(scope="session")
def standalone(tmp_path_factory):
    """`spark://127.0.0.1:PORT` of a standalone master with one worker (1 core, 512 MB); both stopped at the end (each
    in its own process group, which the sidecar reaper of tests/reaper.py kills if pytest ends before)."""
    work = tmp_path_factory.mktemp("spark-standalone")
    env = spark_env()
    port, ui, worker_ui = _free_port(), _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    procs = []
    try:
        master_log = open(work / "master.log", "wb")
        procs.append(
            popen(
                [
                    SPARK_CLASS,
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--webui-port",
                    str(ui),
                ],
                env=env,
                stdout=master_log,
                stderr=subprocess.STDOUT,
                cwd=work,
            )
        )
        worker_log = open(work / "worker.log", "wb")
        procs.append(
            popen(
                [
                    SPARK_CLASS,
                    "org.apache.spark.deploy.worker.Worker",
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    "1",
                    "--memory",
                    "768m",
                    "--webui-port",
                    str(worker_ui),
                    "--work-dir",
                    str(work / "work"),
                    url,
                ],
                env=env,
                stdout=worker_log,
                stderr=subprocess.STDOUT,
                cwd=work,
            )
        )
        deadline = time.monotonic() + 120
        while True:
            for p in procs:
                if p.poll() is not None:
                    raise RuntimeError(f"spark daemon exited ({p.returncode}); see {work}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as resp:
                    state = json.load(resp)
                if any(w.get("state") == "ALIVE" for w in state.get("workers", [])):
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"standalone master/worker not ready after 120 s; see {work}")
            time.sleep(1)
        yield url
    finally:
        for p in reversed(procs):
            _stop(p)


def pytest_unconfigure(config):
    shutil.rmtree(_UDF_CACHE, ignore_errors=True)


def pytest_configure(config):
    # pyspark's Arrow helpers warn about pandas 3 (no pandas API is used here)
    config.addinivalue_line("filterwarnings", "ignore:PySpark does not yet fully support pandas:FutureWarning")
