"""Reading input files with one set of error texts, and writing output files so that a failure or an interrupt never
leaves a partial file, a mixed folder or a destroyed target behind, with the permissions Kafka's tools give their files
(java.io.FileWriter: 0666 less the umask)."""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import re
import secrets
import shutil
import signal
import stat
import threading
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from planner.model import PlannerError, not_utf8

_RENAME_EXCHANGE = 2  # linux/fs.h


MAX_INPUT_BYTES = (
    512 * 2**20
)  # an input file larger than this is refused (a 1,000,000-partition log-dirs JSON: ~150 MB)
MAX_DIGITS = 4300  # CPython's int_max_str_digits: a longer run of digits would be a ValueError traceback in int()
_LONG_NUMBER = re.compile(rf"[0-9]{{{MAX_DIGITS + 1},}}")


def check_digits(text: str, where: str) -> None:
    """Refuse a run of more than MAX_DIGITS digits, naming the line: Kafka's numbers are Java ints and longs (at most
    19 digits), and Python's int() would stop at it with a traceback. Shorter numbers out of range are refused where
    they are read, with their field named."""
    m = _LONG_NUMBER.search(text)
    if m is not None:
        line = text.count("\n", 0, m.start()) + 1
        raise PlannerError(
            f"{where}:{line}: a number of {m.end() - m.start()} digits; Kafka's numbers are Java ints and longs "
            "(at most 19 digits)"
        )


def read_text(path: str, where: str, missing: str = "no such file") -> str:
    """A UTF-8 text file, or one line naming `where` (the option and the file) and what went wrong.

    A regular file (at most MAX_INPUT_BYTES) or a FIFO (`<(command)`) is read; a character device (/dev/zero,
    /dev/urandom, a terminal) or a directory is refused before reading, as is a run of digits no Kafka number has."""
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory", path)
            if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) or stat.S_ISSOCK(st.st_mode):
                raise PlannerError(f"{where}: is a device, not a file; give a file (or a FIFO such as <(command))")
            data = fh.read(MAX_INPUT_BYTES + 1)
        if len(data) > MAX_INPUT_BYTES:
            raise PlannerError(f"{where}: larger than {MAX_INPUT_BYTES // 2**20} MiB, the most an input file may hold")
        text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")  # universal newlines, as open() reads
        check_digits(text, where)
        return text
    except FileNotFoundError:
        raise PlannerError(f"{where}: {missing}") from None
    except IsADirectoryError:
        raise PlannerError(f"{where}: is a directory, expected a file") from None
    except UnicodeDecodeError as exc:
        raise not_utf8(where, exc) from None
    except OSError as exc:
        raise PlannerError(f"{where}: cannot read: {exc.strerror or exc}") from None


def read_option_file(path: str, option: str) -> str:
    """The file an option names (`--sizes FILE`), its errors starting with the option and the file."""
    return read_text(path, f"{option} {path}")


def output_error(option: str, path: object, exc: OSError) -> PlannerError:
    """One line naming the option, the file and what went wrong ("No space left on device", "Read-only file system")."""
    return PlannerError(f"{option} {path}: {exc.strerror or exc}")


def _tmp_name(directory: str, name: str, kind: str) -> str:
    return os.path.join(directory, f".{name[:200]}.{kind}-{secrets.token_hex(4)}")


def _write_new(path: str, text: str, mode: Optional[int] = None) -> None:
    """Create `path` (it must not exist) holding `text`, flushed to disk; 0666 less the umask unless `mode` is given."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fd = -1
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    finally:
        if fd >= 0:
            os.close(fd)


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _replace_regular(real: str, text: str, old: Optional[os.stat_result]) -> None:
    directory, name = os.path.split(real)
    tmp = _tmp_name(directory or ".", name, "tmp")
    try:
        _write_new(tmp, text, stat.S_IMODE(old.st_mode) if old else None)
        if old is not None and os.geteuid() == 0:  # root replacing someone's file: the file stays theirs
            os.chown(tmp, old.st_uid, old.st_gid)
        os.replace(tmp, real)
    except BaseException:
        _unlink_quietly(tmp)
        raise


def write_text_atomic(path: str | os.PathLike, text: str, option: str | None = None) -> None:
    """Write `text` to `path`, all or nothing.

    A character device or FIFO (/dev/null, /dev/stdout on a terminal or a pipe) is written through. A symlink is
    followed and its target replaced; the link stays. A regular file is replaced by a new file written beside it and
    renamed over it, keeping the old file's mode and owner. A file with other hard links is refused (replacing it
    would split them), as is anything else that is not a regular file (a directory, a socket). An OSError becomes
    one line naming `option` and the file, or is left to the caller when `option` is None.
    """
    path = os.fspath(path)
    try:
        try:
            st: Optional[os.stat_result] = os.stat(path)
        except FileNotFoundError:
            st = None
        if st is not None and (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            return
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise OSError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise PlannerError(
                f"{option or 'output'} {path}: not a regular file, a character device or a FIFO; choose another file"
            )
        if st is not None and st.st_nlink > 1:
            raise PlannerError(
                f"{option or 'output'} {path}: the file has {st.st_nlink} hard links, which a new "
                "file would split; write to another file (or remove the other links)"
            )
        real = os.path.realpath(path)
        parent = os.path.dirname(real)
        if parent:
            os.makedirs(parent, exist_ok=True)
        _replace_regular(real, text, st)
    except OSError as exc:
        if option is None:  # the caller words it
            raise
        raise output_error(option, path, exc) from None


# --- a folder of files swapped in as one set ---------------------------------------------------------------------


def _exchange(a: str, b: str) -> bool:
    """Swap two paths in one step (renameat2 RENAME_EXCHANGE); False where the kernel or file system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), b)


def _swap_in(new: str, real: str) -> None:
    """Put the folder `new` at `real`; the folder that was there ends up removed."""
    if not os.path.lexists(real):
        os.rename(new, real)
        return
    if _exchange(new, real):
        shutil.rmtree(new, ignore_errors=True)  # `new` now holds the earlier folder
        return
    old = _tmp_name(os.path.dirname(real), os.path.basename(real), "old")
    os.rename(real, old)  # an interrupt here leaves the earlier folder whole, beside
    os.rename(new, real)
    shutil.rmtree(old, ignore_errors=True)


# --- one writer per folder ----------------------------------------------------------------------------------------

_HELD: dict[str, int] = {}  # lock file -> its open descriptor, held until release_folder_locks()


def lock_folder(directory: str, option: str = "--output-dir") -> None:
    """Hold `directory` for this command: a second kafka-planner writing the same folder refuses with one line (its
    plan would silently replace this one's, or this one's it). The lock is an flock on `.NAME.lock` beside the folder,
    removed by `release_folder_locks` (a lock file left by a killed process holds nothing: flock ends with it)."""
    real = os.path.realpath(directory)
    parent, name = os.path.split(real)
    lock = os.path.join(parent, f".{name[:200]}.lock")
    if lock in _HELD:
        return
    try:
        os.makedirs(parent, exist_ok=True)
        while True:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise PlannerError(
                    f"{option} {directory}: another kafka-planner is writing this folder (it holds {lock}); "
                    "wait for it to finish, or choose another folder"
                ) from None
            held = os.fstat(fd)
            try:
                now = os.stat(lock)
            except FileNotFoundError:
                now = None
            if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                break
            os.close(fd)  # the holder removed it as we opened it: take the new one
    except OSError as exc:
        raise output_error(option, directory, exc) from None
    _HELD[lock] = fd


def release_folder_locks() -> None:
    """Remove and release every folder lock this process holds (at the end of each command)."""
    for lock, fd in list(_HELD.items()):
        _unlink_quietly(lock)  # before closing: a writer that opens it now finds it gone and makes a new one
        os.close(fd)
        del _HELD[lock]


def signals_held() -> Any:
    """Ctrl-C and SIGTERM held back (delivered when the block ends) while renames that must all happen are made."""
    return _Blocked()


class _Blocked:
    """Masking the signals holds them back only from this thread: the kernel hands a process-directed signal to any
    thread that does not mask it (a Py4J or kazoo thread), and CPython then runs the Python handler in the main thread
    at once. So the Python handlers of SIGINT and SIGTERM are also swapped for ones that note the signal, and the
    first noted one is handed to its own handler when the block ends (measured: SIGTERM during `skew --output`'s
    moves raised between two of them while Spark's threads ran, leaving the earlier keys.parquet renamed away)."""

    _SIGNALS = {signal.SIGINT, signal.SIGTERM}

    def __enter__(self) -> None:
        self._handlers: dict[int, Any] = {}
        self._pending: list[tuple[int, Any]] = []
        if threading.current_thread() is threading.main_thread():
            for signum in self._SIGNALS:
                handler = signal.getsignal(signum)
                if callable(handler):
                    self._handlers[signum] = handler
                    signal.signal(signum, self._note)
        self._old = signal.pthread_sigmask(signal.SIG_BLOCK, self._SIGNALS)

    def _note(self, signum: int, frame: Any) -> None:
        self._pending.append((signum, frame))

    def __exit__(self, *exc: Any) -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, self._old)  # a signal masked meanwhile arrives now, noted
        for signum, handler in self._handlers.items():
            signal.signal(signum, handler)
        if self._pending and exc[0] is None:
            signum, frame = self._pending[0]
            self._handlers[signum](signum, frame)  # raises KeyboardInterrupt / Terminated, as the signal would have


def replace_folder(
    directory: str, files: Mapping[str, str], keep: Callable[[str], bool], option: str = "--output-dir"
) -> list[Path]:
    """Make `directory` hold exactly `files` plus the entries of the earlier folder that `keep(name)` accepts (hard-
    linked across, so they stay the same files): the new set is written in a sibling folder and swapped in, so the
    folder shows the whole earlier set or the whole new one, never a mix, whatever interrupts the write."""
    lock_folder(directory, option)
    real = os.path.realpath(directory)
    parent, name = os.path.split(real)
    new = None
    try:
        old_mode = None
        if os.path.lexists(real):
            st = os.stat(real)
            if not stat.S_ISDIR(st.st_mode):
                raise OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), directory)
            old_mode = stat.S_IMODE(st.st_mode)
        os.makedirs(parent, exist_ok=True)
        new = _tmp_name(parent, name, "new")
        os.mkdir(new, 0o777)  # 0777 less the umask, as a new folder; an existing one keeps its mode
        if old_mode is not None:
            os.chmod(new, old_mode)
            for entry in sorted(os.listdir(real)):
                if keep(entry):
                    os.link(os.path.join(real, entry), os.path.join(new, entry), follow_symlinks=False)
        for file_name, text in files.items():
            _write_new(os.path.join(new, file_name), text)
        with signals_held():  # the folders' swap: two renames that must both happen
            _swap_in(new, real)
            new = None
    except OSError as exc:
        raise output_error(option, directory, exc) from None
    finally:
        if new is not None:
            shutil.rmtree(new, ignore_errors=True)
    return [Path(directory) / n for n in files]
