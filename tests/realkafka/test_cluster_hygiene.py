"""The test clusters stop what they start even when pytest itself is stopped: a SIGTERM to the process while its
threads spawn the JVMs (the first `_spawn` ran in a pool thread, where no signal handler can be set, so a SIGTERM then
left all five JVMs running under init)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

# a process that starts a one-broker cluster and prints the pid of each JVM as it is spawned
STARTER = """
import sys, threading, time
sys.path.insert(0, sys.argv[1])
from realkafka import real_cluster

def report():
    seen = set()
    while True:
        with real_cluster._LIVE_LOCK:
            pids = {p.pid for p in real_cluster._LIVE}
        for pid in sorted(pids - seen):
            print(pid, flush=True)
        seen |= pids
        time.sleep(0.05)

threading.Thread(target=report, daemon=True).start()
real_cluster.KafkaCluster(brokers={1: "rack-a"}).start()
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sigterm_while_the_jvms_start_leaves_no_jvm(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-c", STARTER, str(TESTS)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=tmp_path,
    )
    pids: list[int] = []
    try:
        pids.append(int(proc.stdout.readline()))  # the first JVM is spawned: the others are on their way
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 128 + signal.SIGTERM
        pids += [int(line) for line in proc.stdout.read().split()]
        deadline = time.monotonic() + 15
        while any(map(_alive, pids)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [pid for pid in pids if _alive(pid)] == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        for pid in pids:
            if _alive(pid):
                os.killpg(pid, signal.SIGKILL)
