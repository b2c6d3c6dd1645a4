"""Run every benchmark module (bench/bench_*.py), or only those named: `python -m bench placement zk`."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time

import bench


def main(argv: list[str]) -> int:
    names = sorted(m.name for m in pkgutil.iter_modules(bench.__path__) if m.name.startswith("bench_"))
    wanted = [f"bench_{a}" for a in argv] or names
    for name in wanted:
        module = importlib.import_module(f"bench.{name}")
        print(f"== {name[len('bench_') :]}", flush=True)
        started = time.perf_counter()
        module.run()
        print(f"   ({time.perf_counter() - started:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
