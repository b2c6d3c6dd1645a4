"""Bad input and failing output: one line on stderr, exit 2 (130 for Ctrl-C), never a traceback or a crash."""

import os
import signal
import subprocess
import sys

import pytest

LATIN1 = "cluster: caf\xe9\n".encode("latin-1")  # byte 0xe9 at offset 12


def _bad(tmp_path, name="bad.yaml"):
    p = tmp_path / name
    p.write_bytes(LATIN1)
    return p


def test_non_utf8_topology(planner_cli_here, tmp_path):
    p = _bad(tmp_path)
    assert planner_cli_here("describe", str(p)) == (
        2,
        "",
        f"error: {p}: not UTF-8 text (byte 0xe9 at offset 12); save it as UTF-8\n",
    )


def test_non_utf8_reassignment_json_and_sizes(planner_cli_here, topo, tmp_path):
    p = _bad(tmp_path, "r.json")
    assert planner_cli_here("reassign", "check-execute", topo, "--reassignment-json-file", str(p)) == (
        2,
        "",
        f"error: --reassignment-json-file {p}: not UTF-8 text (byte 0xe9 at offset 12); save it as UTF-8\n",
    )
    assert planner_cli_here("reassign", "rebalance", topo, "--sizes", str(p)) == (
        2,
        "",
        f"error: --sizes {p}: not UTF-8 text (byte 0xe9 at offset 12); save it as UTF-8\n",
    )


def test_non_utf8_group_and_zk_auth_file(planner_cli_here, topo, tmp_path):
    p = _bad(tmp_path, "g.yaml")
    assert planner_cli_here("consumers", topo, "--group-file", str(p)) == (
        2,
        "",
        f"error: group file {p}: not UTF-8 text (byte 0xe9 at offset 12); save it as UTF-8\n",
    )
    assert planner_cli_here("zk", "export", "zk://127.0.0.1:1/", "--zk-auth-file", str(p)) == (
        2,
        "",
        f"error: --zk-auth-file {p}: not UTF-8 text (byte 0xe9 at offset 12); save it as UTF-8\n",
    )


def test_json_nested_too_deep(planner_cli_here, topo, tmp_path):
    p = tmp_path / "deep.json"
    p.write_text("[" * 100_000)
    assert planner_cli_here("reassign", "check-execute", topo, "--reassignment-json-file", str(p)) == (
        2,
        "",
        f"error: {p}: JSON nested too deep (over {sys.getrecursionlimit()} levels)\n",
    )


@pytest.mark.parametrize(
    "text,line",
    [("[" * 30_000, 1), ("- " * 30_000 + "x\n", 1), ("a:\n" + "".join(" " * i + "- \n" for i in range(1, 1200)), 1001)],
)
def test_yaml_nested_too_deep_is_refused_before_libyaml_composes_it(planner_cli, tmp_path, text, line):
    p = tmp_path / "deep.yaml"
    p.write_text(text)
    code, _, err = planner_cli("describe", str(p))
    assert (code, err) == (
        2,
        f"error: {p}:{line}: YAML nested more than 1000 levels deep; a topology or group file needs about 6\n",
    )


def test_yaml_mapping_used_as_a_key(planner_cli_here, topo, tmp_path):
    p = tmp_path / "k.yaml"
    p.write_text("brokers: [{id: 1}]\n? {a: 1}\n: x\n")
    assert planner_cli_here("describe", str(p)) == (
        2,
        "",
        f"error: {p}:2: a key must be a single value, got a mapping\n",
    )
    g = tmp_path / "g.yaml"
    g.write_text("members:\n  - {id: a, topics: [t], ? [x]: 1}\n")
    assert planner_cli_here("consumers", topo, "--group-file", str(g)) == (
        2,
        "",
        f"error: {g}:2: members[0]: a key must be a single value, got a list\n",
    )


def test_out_of_range_numbers(planner_cli_here, topo):
    assert planner_cli_here("failures", topo, "--top", "-99999999999999999999") == (
        2,
        "",
        "error: Invalid value for '--top': Input should be greater than or equal to 0 "
        "(see 'kafka-planner failures --help')\n",
    )
    assert planner_cli_here(
        "create-topic", topo, "--topic", "x", "--partitions", "2147483648", "--replication-factor", "1"
    ) == (
        2,
        "",
        "error: Invalid value for '--partitions': Input should be less than or equal to 10000000 "
        "(see 'kafka-planner create-topic --help')\n",
    )
    assert planner_cli_here("partition", "--partitions", "3", "--null-key-simulation", "--records", "2000000000") == (
        2,
        "",
        "error: Invalid value for '--records': Input should be less than or equal to 100000000 "
        "(see 'kafka-planner partition --help')\n",
    )


def test_full_stdout_is_one_line(topo):
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "planner", "describe", topo], stdout=full, stderr=subprocess.PIPE, text=True
        )
    assert (proc.returncode, proc.stderr) == (2, "error: cannot write the output: No space left on device\n")


CHILD = """
import sys, time
import planner.entry as entry

class SayGo:  # when the CLI starts importing typer, say so and give the signal time to arrive
    def find_spec(self, name, path=None, target=None):
        if name == "typer":
            print("go", flush=True)
            time.sleep(30)  # the signal ends it: long enough for a loaded machine to send it
        return None

sys.meta_path.insert(0, SayGo())
sys.argv[1:] = ["brokers", "--help"]
entry.main()
"""


def test_ctrl_c_during_start_up_is_one_line():
    proc = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "go\n"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert (proc.returncode, err) == (130, "error: interrupted\n")


SWALLOWED = """
import importlib, os, signal
from planner.model import PlannerError

def command():  # a client library that takes the KeyboardInterrupt for a failed task, then finds its connection broken
    try:
        os.kill(os.getpid(), signal.SIGINT)
    except KeyboardInterrupt:
        pass
    raise PlannerError("cannot reach 127.0.0.1:9092: connection closed")

app = importlib.import_module("planner.cli.app")
app._command = lambda: type("Command", (), {"main": lambda self, **kw: command()})()
app.run(["brokers"])
"""


def test_ctrl_c_a_library_swallowed_is_still_the_interrupt():
    proc = subprocess.run([sys.executable, "-c", SWALLOWED], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (130, "error: interrupted\n")


WRAPPED = """
import importlib, os, signal

class Field:
    def __set_name__(self, owner, name):  # as pydantic's fields: Python wraps what this raises in RuntimeError
        os.kill(os.getpid(), signal.SIGINT)

def command():  # Ctrl-C while a module made a class (measured: while typer imported pydantic)
    class Model:
        field = Field()

app = importlib.import_module("planner.cli.app")
app._command = lambda: type("Command", (), {"main": lambda self, **kw: command()})()
app.run(["brokers"])
"""


def test_ctrl_c_python_wrapped_in_runtime_error_is_still_the_interrupt():
    proc = subprocess.run([sys.executable, "-c", WRAPPED], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (130, "error: interrupted\n")


REMEMBERED = """
import ctypes, sys
import planner.cli
# a C extension's PyRun_String code that the interrupt escaped: CPython remembers it and, without the reset in
# planner.entry, `python -m` ends the process by SIGINT once it has exited (-2 instead of 130; Modules/main.c)
ctypes.pythonapi.PyRun_SimpleString(b"raise KeyboardInterrupt")

def run(argv=None, exiting=False):
    print("error: interrupted", file=sys.stderr)
    sys.exit(130)

planner.cli.run = run
from planner.entry import main
main()
"""


def test_ctrl_c_remembered_by_cpython_still_exits_130_not_by_sigint(tmp_path):
    """`python -m planner` (runpy) hands SystemExit back to `Py_RunMain`, which checks CPython's flag afterwards."""
    (tmp_path / "remembered.py").write_text(REMEMBERED)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "remembered"], capture_output=True, text=True, timeout=60, env=env)
    assert (proc.returncode, proc.stderr.splitlines()[-1]) == (130, "error: interrupted")
