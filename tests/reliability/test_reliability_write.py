"""--write / --output: Kafka's tools' permissions, written through to devices and FIFOs, symlinks followed, hard
links and non-files refused, every OSError one line."""

import os
import threading

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
