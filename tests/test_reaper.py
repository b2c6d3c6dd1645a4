"""The sidecar reaper (tests/reaper.py): the servers a test process starts die with it, however it ends, and the reaper
does not outlive it. A child Python process plays pytest: it starts a tracked process group through the fixtures' own
code (reaper.popen; real_cluster._spawn, which starts every Kafka JVM; ZkServer, Debian's ZooKeeper) and is then
stopped the way CI stops pytest (SIGTERM), killed (SIGKILL), hung up on (SIGHUP), or exits by itself."""

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import reaper

TESTS = Path(__file__).resolve().parent

# argv: TESTS MODE WORKDIR. Prints "REAPER_PID PGID FOLDER" once the tracked group runs and WORKDIR/scratch is listed
# for removal, then waits (or, MODE "exit", exits once its stdin is closed)
CHILD = r"""
import os, signal, sys, time
from pathlib import Path
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/adapters/zk"]
import reaper
mode, workdir = sys.argv[2], Path(sys.argv[3])
SHELL = ["sh", "-c", "sleep 600 & exec sleep 600"]  # a group of two: the leader and a process it started
if mode == "popen" or mode == "exit":
    proc = reaper.popen(SHELL)
elif mode == "kafka-spawn":
    from realkafka.real_cluster import _spawn
    proc = _spawn(SHELL, workdir / "server.log")
elif mode == "zookeeper":
    from zk_support import ZkServer
    server = ZkServer()
    (workdir / "zk-dir").write_text(server.dir)
    proc = server.start().proc
(workdir / "scratch").mkdir()
(workdir / "scratch" / "server.log").write_text("a server's data")
reaper.remove_at_end(workdir / "scratch")
print(reaper.start(), proc.pid, reaper._REAPER.folder, flush=True)
if mode == "exit":  # a second group stopped the normal way, then a normal exit with the first still running
    done = reaper.popen(["sleep", "600"])
    os.killpg(done.pid, signal.SIGTERM)
    done.wait()
    reaper.forget(done)
    assert reaper.listed()[0] == {proc.pid}, reaper.listed()
    sys.stdin.read()
    sys.exit(0)
time.sleep(600)
"""


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, process group) of `pid`, None when there is no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[2])


def _live(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it is not)."""
    stat = _stat(pid)
    return stat is not None and stat[0] not in "ZX"


def _members(pgid: int) -> list[int]:
    """The live processes of process group `pgid`."""
    return reaper.live_members({pgid})


def _until(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _child(mode: str, workdir: Path) -> tuple[subprocess.Popen, int, int, Path]:
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(TESTS), mode, str(workdir)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    line = proc.stdout.readline().split()
    assert len(line) == 3, f"the child failed ({proc.wait()})"
    reaper_pid, pgid, folder = int(line[0]), int(line[1]), Path(line[2])
    # the shell has started its background sleep (ZooKeeper's group is its JVM alone)
    assert _until(lambda: len(_members(pgid)) == (1 if mode == "zookeeper" else 2), 10), _members(pgid)
    return proc, reaper_pid, pgid, folder


def _tidy(proc: subprocess.Popen, pgid: int, workdir: Path) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)
    if _members(pgid):
        os.killpg(pgid, signal.SIGKILL)
    if (workdir / "zk-dir").exists():
        shutil.rmtree((workdir / "zk-dir").read_text(), ignore_errors=True)


@pytest.mark.parametrize(
    "mode, sig",
    [
        ("popen", signal.SIGTERM),
        ("popen", signal.SIGKILL),
        ("popen", signal.SIGHUP),
        ("kafka-spawn", signal.SIGTERM),
        ("zookeeper", signal.SIGTERM),
    ],
)
def test_a_stopped_process_leaves_no_tracked_group_and_no_reaper(tmp_path, mode, sig):
    proc, reaper_pid, pgid, folder = _child(mode, tmp_path)
    try:
        scratch = [tmp_path / "scratch"]
        if mode == "zookeeper":
            scratch.append(Path((tmp_path / "zk-dir").read_text()))
        assert (folder / "groups").read_text() == f"{pgid}\n"
        assert (folder / "folders").read_text() == "".join(f"{p}\n" for p in sorted(map(str, scratch)))
        assert _live(reaper_pid) and all(p.is_dir() for p in scratch)
        proc.send_signal(sig)
        assert proc.wait(10) == -sig  # died of the signal: no handler ran, nothing was cleaned up in the process
        # the reaper's work: the group killed, then the folders removed, then its own folder, then it exits
        assert _until(lambda: not _live(reaper_pid), 10)
        assert (_members(pgid), [p for p in scratch if p.exists()], folder.exists()) == ([], [], False)
    finally:
        _tidy(proc, pgid, tmp_path)


def test_a_normal_exit_waits_for_the_reaper_which_kills_what_is_still_listed(tmp_path):
    proc, reaper_pid, pgid, folder = _child("exit", tmp_path)
    try:
        assert _live(reaper_pid)
        proc.communicate("", timeout=10)
        assert proc.returncode == 0
        # the child's atexit hook closed the pipe and waited for its reaper (gone, not even a zombie), which had
        # killed the group still listed, waited for it to die, and removed the folders
        assert (_stat(reaper_pid), _members(pgid), (tmp_path / "scratch").exists(), folder.exists()) == (
            None, [], False, False
        )  # fmt: skip
    finally:
        _tidy(proc, pgid, tmp_path)


def test_tracking_sets_no_signal_handler_from_any_thread():
    """The guard the reverted commit c543c08 set took the SIGTERM the in-process CLI tests send to pytest."""
    watched = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
    before = [signal.getsignal(s) for s in watched]
    procs: list[subprocess.Popen] = []
    thread = threading.Thread(target=lambda: procs.append(reaper.popen(["sleep", "600"])))
    thread.start()
    thread.join()
    procs.append(reaper.popen(["sleep", "600"]))
    try:
        assert [signal.getsignal(s) for s in watched] == before
        assert {p.pid for p in procs} <= reaper.listed()[0]
    finally:
        for p in procs:
            p.kill()
            p.wait()
            reaper.forget(p)
    assert {p.pid for p in procs} & reaper.listed()[0] == set()
