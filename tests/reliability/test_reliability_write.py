"""--write / --output: Kafka's tools' permissions, written through to devices and FIFOs, symlinks followed, hard
links and non-files refused, every OSError one line."""

import os
import resource
import subprocess
import sys
import threading

from testkit import ROOT

from planner.adapters.files import write_text_atomic

APPLY = ("reassign", "apply")


def _apply(planner_cli_here, topo, tmp_path, target):
    plan = tmp_path / "p.json"
    plan.write_text('{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[2,1]}]}')
    return planner_cli_here("reassign", "apply", topo, "--reassignment-json-file", str(plan), "--write", str(target))


def test_dev_null_stays_a_device(planner_cli_here, topo, tmp_path):
    code, _, err = _apply(planner_cli_here, topo, tmp_path, "/dev/null")
    assert (code, err) == (0, "wrote /dev/null (1 partition(s) reassigned)\n")
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


def test_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    write_text_atomic(fifo, "hello\n")
    reader.join(10)
    assert got == ["hello\n"]
    assert fifo.is_fifo()


def test_symlink_is_followed_and_kept(tmp_path):
    target = tmp_path / "real.yaml"
    target.write_text("old")
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    write_text_atomic(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new"


def test_hard_link_is_refused(planner_cli_here, topo, tmp_path):
    a = tmp_path / "a.yaml"
    a.write_text("old")
    os.link(a, tmp_path / "b.yaml")
    assert _apply(planner_cli_here, topo, tmp_path, a) == (
        2,
        "",
        f"error: --write {a}: the file has 2 hard links, which a new file would split; write to another file "
        "(or remove the other links)\n",
    )
    assert a.read_text() == "old" and os.stat(a).st_nlink == 2


def test_new_file_gets_the_umask_and_an_old_one_keeps_its_mode(tmp_path):
    old = os.umask(0o022)
    try:
        write_text_atomic(tmp_path / "new.yaml", "x")
    finally:
        os.umask(old)
    assert oct((tmp_path / "new.yaml").stat().st_mode & 0o777) == oct(0o644)
    kept = tmp_path / "kept.yaml"
    kept.write_text("x")
    kept.chmod(0o604)
    write_text_atomic(kept, "y")
    assert oct(kept.stat().st_mode & 0o777) == oct(0o604) and kept.read_text() == "y"


def test_directory_and_long_names_are_one_line(planner_cli_here, topo, tmp_path):
    assert _apply(planner_cli_here, topo, tmp_path, tmp_path) == (2, "", f"error: --write {tmp_path}: Is a directory\n")
    long = tmp_path / ("x" * 300)
    assert _apply(planner_cli_here, topo, tmp_path, long) == (2, "", f"error: --write {long}: File name too long\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.json", "t.yaml"]


# --- stdout that cannot take the output: one line, exit 2, never 0 with the output cut short ----------------------


def _big(tmp_path):
    lines = ["brokers:"] + [f"  - {{id: {i}}}" for i in range(1, 7)] + ["topics:"]
    lines += [f"  - {{name: t{t}, partitions: 200, replication_factor: 3}}" for t in range(10)]
    path = tmp_path / "big.yaml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _run(args, stdout, preexec_fn=None, shell_redirect=""):
    cmd = [sys.executable, "-m", "planner", *args]
    if shell_redirect:
        cmd = ["sh", "-c", f'exec "$@" {shell_redirect}', "sh", *cmd]
    proc = subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True, cwd=ROOT, preexec_fn=preexec_fn)
    return proc.returncode, proc.stderr


def test_a_full_disk_on_stdout(tmp_path):
    with open("/dev/full", "w") as full:
        no_space = "error: cannot write the output: No space left on device\n"
        assert _run(["describe", _big(tmp_path)], full) == (2, no_space)


def test_the_file_size_limit_on_stdout(tmp_path):
    # ulimit -f 64: CPython's BufferedWriter dropped the rest of the write the kernel cut at 64 KiB, and exited 0
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, resource.RLIM_INFINITY))

    out = tmp_path / "out.txt"
    with open(out, "w") as fh:
        assert _run(["describe", _big(tmp_path)], fh, limit) == (
            2,
            "error: cannot write the output: File too large (the file size limit, ulimit -f, is 65536 bytes)\n",
        )
    assert out.stat().st_size == 65536


def test_closed_stdout_and_stderr(topo):
    assert _run(["describe", topo], None, shell_redirect=">&-") == (
        2,
        "error: standard output is closed (>&-): redirect it to a file or to /dev/null\n",
    )
    proc = subprocess.run(
        ["sh", "-c", 'exec "$@" 2>&-', "sh", sys.executable, "-m", "planner", "describe", "nope.yaml"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert (proc.returncode, proc.stdout) == (2, "")  # no error text lands in stdout; the exit code says it
