"""The sidecar reaper of the servers the tests start: no Kafka JVM, ZooKeeper or Spark daemon outlives pytest, however
pytest ends (a normal exit, Ctrl-C, SIGTERM from CI's timeout or an operator, SIGHUP, SIGKILL).

No signal handler in pytest can do it: the first server is spawned from a pool thread, where none can be set, and a
handler in place for the whole session takes the SIGTERM that the in-process CLI tests send to pytest itself
(tests/reliability/test_reliability_plan_folder.py: the CLI takes SIGTERM only where the handler is SIG_DFL), which
then killed the session's cluster (commit d5ea5b1 reverted that guard). So the guard lives outside pytest: before its
first server, the process starts this file as a script, a small separate process that holds the read end of a pipe
whose only write end the pytest process holds (close-on-exec: no server inherits it), and blocks reading it. However
pytest ends, the kernel closes the write end, the read returns EOF, and the reaper SIGKILLs every process group listed
in its groups file, waits until they are dead, removes the folders listed (the servers' temporary data and logs),
and exits: no polling while pytest lives, and nothing in pytest's signal handling.

Each server runs in its own process group (`popen` starts it with start_new_session=True, so its pid is its pgid):
`popen` adds the pgid to the file before it returns, `forget` removes it once the server is stopped. At a normal exit
an atexit hook closes the write end and waits for the reaper (which kills anything still listed), so no reaper
outlives the session either. One reaper per process: a forked child that starts servers gets its own.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

GROUPS = "groups"  # the files in the reaper's folder: one pgid a line,
FOLDERS = "folders"  # and one path a line


class _Reaper:
    """The pytest side: the reaper process, the write end of its pipe, and the lists it reads when pytest is gone."""

    def __init__(self) -> None:
        self.owner = os.getpid()
        self.folder = Path(tempfile.mkdtemp(prefix="kp-reaper-"))
        self.lists: dict[str, set] = {GROUPS: set(), FOLDERS: set()}
        read_end, self.write_end = os.pipe()  # both close-on-exec: the servers inherit neither
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-S", __file__, str(read_end), str(self.folder)],
                pass_fds=(read_end,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                start_new_session=True,  # the terminal's Ctrl-C and SIGHUP go to pytest, not to the reaper
            )  # fmt: skip
        finally:
            os.close(read_end)
        atexit.register(self.close)

    def change(self, name: str, item: int | str, add: bool) -> None:
        """The list rewritten whole (os.replace): the reaper reads either the old one or the new one."""
        items = self.lists[name]
        if (item in items) == add:
            return
        if add:
            items.add(item)
        else:
            items.discard(item)
        tmp = self.folder / (name + ".tmp")
        tmp.write_text("".join(f"{each}\n" for each in sorted(items)))
        os.replace(tmp, self.folder / name)

    def close(self, timeout: float = 30.0) -> None:
        """EOF to the reaper (it kills what is still listed and waits for it to die, then exits) and wait for it."""
        if os.getpid() != self.owner or self.write_end < 0:
            return
        os.close(self.write_end)
        self.write_end = -1
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:  # pragma: no cover - a reaper stuck on a dead disk: leave it running
            pass


_LOCK = threading.Lock()
_REAPER: _Reaper | None = None


def _reaper() -> _Reaper:
    global _REAPER
    if _REAPER is None or _REAPER.owner != os.getpid():
        _REAPER = _Reaper()
    return _REAPER


def start() -> int:
    """The reaper of this process, started if it is not yet; returns its pid."""
    with _LOCK:
        return _reaper().proc.pid


def popen(args: list[str], **kwargs) -> subprocess.Popen:
    """`subprocess.Popen(args, **kwargs)` in a new session (its own process group), which the reaper kills if this
    process ends before `forget(proc)`; the reaper runs before the process is started."""
    with _LOCK:
        reaper = _reaper()
        proc = subprocess.Popen(args, start_new_session=True, **kwargs)
        reaper.change(GROUPS, proc.pid, add=True)
    return proc


def forget(proc: subprocess.Popen) -> None:
    """`proc` is stopped (waited for): its process group leaves the list (a no-op for one never listed)."""
    with _LOCK:
        if _REAPER is not None and _REAPER.owner == os.getpid():
            _REAPER.change(GROUPS, proc.pid, add=False)


def remove_at_end(path: str | Path) -> None:
    """The folder (a server's data and logs) removed by the reaper when this process ends, after the groups are dead:
    for the temporary folders the fixtures make, which a killed pytest does not remove."""
    with _LOCK:
        _reaper().change(FOLDERS, str(path), add=True)


def listed() -> tuple[set[int], set[str]]:
    """The process groups the reaper would kill now, and the folders it would remove."""
    with _LOCK:
        if _REAPER is None or _REAPER.owner != os.getpid():
            return set(), set()
        return set(_REAPER.lists[GROUPS]), set(_REAPER.lists[FOLDERS])


# ------------------------------------------------------------------------------------------------ the reaper process
def _read(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except OSError:
        return []


def live_members(pgids: set[int]) -> list[int]:
    """The running processes of the process groups `pgids` (from /proc; a zombie waiting for init is not running)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(stat[2]) in pgids and stat[0] not in "ZX":
                found.append(int(name))
    return sorted(found)


def reap(folder: Path, timeout: float = 10.0) -> list[int]:
    """SIGKILL every process group listed in `folder`, wait (up to `timeout`) until none of their processes runs,
    then remove the folders listed; returns the groups that were still there."""
    killed = []
    for pgid in sorted({int(line) for line in _read(folder / GROUPS)}):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
        killed.append(pgid)
    deadline = time.monotonic() + timeout
    while killed and live_members(set(killed)) and time.monotonic() < deadline:
        time.sleep(0.01)  # SIGKILL is final; the processes are gone within milliseconds
    for path in _read(folder / FOLDERS):
        shutil.rmtree(path, ignore_errors=True)
    return killed


def main(argv: list[str]) -> int:
    """`python tests/reaper.py READ_FD FOLDER`: block on the pipe until its writer (pytest) is gone, then reap."""
    read_end, folder = int(argv[0]), Path(argv[1])
    for sig in (signal.SIGINT, signal.SIGHUP):  # its own session gets neither from a terminal; nor from a stray kill
        signal.signal(sig, signal.SIG_IGN)
    while os.read(read_end, 4096):  # nothing is ever written: only EOF (pytest gone) ends the wait
        pass
    reap(folder)
    shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
