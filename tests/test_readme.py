"""The documentation runs: every ```console block of README.md and docs/*.md is re-run (each `$ kafka-planner …`
line's stdout must be the lines under it), every `kafka-planner …` line of a ```sh block must succeed, and every
```text block of `$ kafka-planner …` (or `$ cat …`) lines that needs no live cluster, Spark nor a file an earlier
page's example wrote is re-run as a shell would run it: its stdout then its stderr must be the lines under it."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(language):
    """(page name, block text) of every ```language block of the pages."""
    out = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        out += [
            (page.relative_to(ROOT).as_posix(), b) for b in re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)
        ]
    return out


def console_examples():
    examples = []
    for page, block in blocks("console"):
        command, expected = None, []
        for line in block.splitlines():
            if line.startswith("$ "):
                if command:
                    examples.append((page, command, expected))
                command, expected = line[2:], []
            else:
                expected.append(line)
        if command:
            examples.append((page, command, expected))
    return examples


def sh_runs():
    """Per page, the `kafka-planner` lines of its ```sh blocks, run in order in one directory (a later block may read
    what an earlier one wrote)."""
    runs: dict[str, list[str]] = {}
    for page, block in blocks("sh"):
        runs.setdefault(page, []).extend(line for line in block.splitlines() if line.startswith("kafka-planner "))
    return [(page, commands) for page, commands in runs.items() if commands]


def offline_text_blocks():
    """(page, [(command, expected lines)]) of the ```text blocks whose `$ ` commands run here: `kafka-planner` or
    `cat` on the shipped files (or files under /tmp/ the block writes), no live cluster, no Spark."""
    out = []
    for page, block in blocks("text"):
        steps: list[tuple[str, list[str]]] = []
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
        commands = [c for c, _ in steps]
        runnable = all(
            (c.startswith("kafka-planner ") or c.startswith("cat "))
            and not re.search(r"://|kafka-planner skew", c)
            and all(
                (ROOT / arg).exists() or arg.startswith("/tmp/")
                for arg in shlex.split(c)
                if re.search(r"\.(yaml|json|txt|csv)$", arg)
            )
            for c in commands
        )
        if steps and runnable:
            out.append((page, steps))
    return out


EXAMPLES = console_examples()
SH_RUNS = sh_runs()
TEXT_RUNS = offline_text_blocks()


def run_planner(command, cwd):
    args = shlex.split(command)
    assert args[0] == "kafka-planner"
    return subprocess.run(
        [sys.executable, "-m", "planner", *args[1:]],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "120"},
    )


def test_docs_have_examples():
    assert len(EXAMPLES) >= 8
    assert {page for page, _ in TEXT_RUNS} == {"docs/placement.md", "docs/reassign.md", "docs/twin.md"}
    assert {page for page, _, _ in EXAMPLES} >= {"README.md", "docs/reassign.md", "docs/describe.md"}
    assert [page for page, _ in SH_RUNS] == ["README.md"] and len(SH_RUNS[0][1]) >= 6


@pytest.mark.parametrize("page, command, expected", EXAMPLES, ids=[f"{p}: {c}" for p, c, _ in EXAMPLES])
def test_console_example(page, command, expected):
    proc = run_planner(command, ROOT)
    got = [line.rstrip() for line in proc.stdout.splitlines()]
    assert got == [line.rstrip() for line in expected]


@pytest.mark.parametrize("page, commands", SH_RUNS, ids=[p for p, _ in SH_RUNS])
def test_sh_commands_succeed(page, commands, tmp_path):
    for name in ("topologies", "examples", "tests"):  # the commands' relative paths; their output stays in tmp_path
        (tmp_path / name).symlink_to(ROOT / name)
    for command in commands:
        proc = run_planner(command, tmp_path)
        assert (command, proc.returncode, proc.stderr if proc.returncode else "") == (command, 0, "")


@pytest.mark.parametrize("page, steps", TEXT_RUNS, ids=[f"{p}: {s[0][0]}" for p, s in TEXT_RUNS])
def test_text_example(page, steps, tmp_path):
    for name in ("topologies", "examples", "tests"):  # the commands' relative paths; /tmp/ becomes tmp_path
        (tmp_path / name).symlink_to(ROOT / name)
    planner = f"{shlex.quote(sys.executable)} -m planner"
    for command, expected in steps:
        line = command.replace("/tmp/", f"{tmp_path}/")
        if line.startswith("kafka-planner "):
            line = planner + line[len("kafka-planner") :]
        proc = subprocess.run(
            line,
            shell=True,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "COLUMNS": "120", "PYTHONPATH": str(ROOT)},
        )
        got = (proc.stdout + proc.stderr).replace(f"{tmp_path}/", "/tmp/")
        assert (command, [x.rstrip() for x in got.splitlines()]) == (command, [x.rstrip() for x in expected])
