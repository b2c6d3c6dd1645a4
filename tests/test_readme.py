"""The documentation runs: every ```console block of README.md and docs/*.md is re-run (each `$ kafka-planner …`
line's stdout must be the lines under it), and every `kafka-planner …` line of a ```sh block must succeed."""

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


EXAMPLES = console_examples()
SH_RUNS = sh_runs()


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
