"""Every ```console block of README.md is re-run: each `$ kafka-planner …` line's stdout must be the lines under it."""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def console_examples():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    examples = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        command, expected = None, []
        for line in block.splitlines():
            if line.startswith("$ "):
                if command:
                    examples.append((command, expected))
                command, expected = line[2:], []
            else:
                expected.append(line)
        if command:
            examples.append((command, expected))
    return examples


EXAMPLES = console_examples()


def test_readme_has_examples():
    assert len(EXAMPLES) >= 8


@pytest.mark.parametrize("command, expected", EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_readme_example(command, expected):
    args = shlex.split(command)
    assert args[0] == "kafka-planner"
    proc = subprocess.run([sys.executable, "-m", "planner", *args[1:]], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "COLUMNS": "120"})
    got = [line.rstrip() for line in proc.stdout.splitlines()]
    assert got == [line.rstrip() for line in expected]
