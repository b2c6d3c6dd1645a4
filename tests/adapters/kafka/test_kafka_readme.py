"""The README's "Live clusters through the Admin API" example is real output: the same commands against the fake
cluster give it back (the fake's ports in place of the README's 19092)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from fake_cluster import run_here

README = Path(__file__).resolve().parents[3] / "README.md"
PLAN = {"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [3, 2]}]}


def readme_example() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Live clusters through the Admin API\n", 1)[1]
    return re.search(r"```text\n(.*?)```", section, re.S).group(1)


def transcript(kraft, plan: str) -> str:
    """The commands of the example, each with what it prints (stderr, written first, then stdout)."""
    kraft.brokers[3].total_bytes = 6100  # broker 3 holds 5,500 B: 600 B usable
    out = []
    for args in (("brokers", kraft.url), ("kafka", "submit", kraft.url, "--reassignment-json-file", plan)):
        code, stdout, stderr = run_here(*args)
        assert code == 0, stderr
        shown = " ".join(a if a != plan else "plan.json" for a in args)
        out.append(f"$ kafka-planner {shown}\n{stderr}{stdout}")
    return "".join(out).replace(kraft.url, "kafka://127.0.0.1:19092")


def test_the_readme_example_is_what_the_commands_print(kraft, tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    assert readme_example() == transcript(kraft, str(plan))
