"""Benchmarks: `make bench` runs every bench_*.py module's run() and prints each figure beside its yardstick."""
