"""`kafka-planner partition`: resolve the topic, partition the keys (a keys file streamed in chunks, with progress on a
terminal), and write what planner/formats/messages.py renders. The partitioning is planner/producer/partitioner.py's;
a keys file's reading and partitioning, chunk by chunk, planner/adapters/keys_file.py's."""

from __future__ import annotations

import os
import sys
import time

from planner.model import PlannerError
from planner.producer.partitioner import Target


def resolve_target(partitions, topology, topic, offline_brokers) -> Target:
    from planner.adapters.source import partitions_or_topic
    from planner.producer.partitioner import target_for

    n, cluster = partitions_or_topic(partitions, topology, topic, offline_brokers)
    return target_for(n, cluster, topic)


def run(
    *,
    keys,
    partitions,
    topology,
    topic,
    key_type,
    encoding,
    keys_file,
    summary,
    partitioner,
    null_key_simulation,
    records,
    batch_size,
    seed,
    offline_brokers,
    fmt,
) -> None:
    from planner.producer.serializers import check_encoding

    check_encoding(encoding)
    target = resolve_target(partitions, topology, topic, offline_brokers)
    if null_key_simulation:
        if keys or keys_file:
            raise PlannerError("--null-key-simulation simulates keyless records: drop the keys / --keys-file")
        return _simulate(target, records, batch_size, seed, fmt)
    if keys and keys_file:
        raise PlannerError("give keys on the command line or --keys-file, not both")
    if not keys and not keys_file:
        raise PlannerError("no keys: give KEY... or --keys-file FILE (or --null-key-simulation for keyless records)")
    if keys_file:
        return _keys_file(target, keys_file, key_type, encoding, summary, partitioner, fmt)
    from planner.producer.partitioner import partition_keys

    parts = partition_keys(keys, key_type, encoding, target.partitions, partitioner)
    if summary:
        counts = [0] * target.partitions
        for p in parts:
            counts[p] += 1
        return _write_summary(target, counts, fmt, partitioner)
    from planner.formats.messages import keys_end, keys_text

    text, _ = keys_text(target, list(zip(keys, parts)), fmt, partitioner, key_type, header=True)
    sys.stdout.write(text + keys_end(fmt))


# -- keys files ------------------------------------------------------------------------------------------------------


def _keys_file(target, path, key_type, encoding, summary, partitioner, fmt) -> None:
    from planner.adapters.keys_file import partition_counts, partitioned_chunks
    from planner.formats.messages import keys_end, keys_text

    progress = _progress(path)
    if summary:
        counts = partition_counts(path, key_type, encoding, target.partitions, partitioner, progress)
        _end_progress(progress)
        return _write_summary(target, counts, fmt, partitioner)
    first, width = True, 0
    chunks = partitioned_chunks(
        path, key_type, encoding, target.partitions, partitioner, with_keys=True, progress=progress
    )
    for chunk in chunks:
        text, width = keys_text(
            target,
            list(zip(chunk.keys, chunk.partitions.tolist())),
            fmt,
            partitioner,
            key_type,
            header=first,
            width=width,
        )
        sys.stdout.write(text)
        first = False
    _end_progress(progress)
    if first:  # empty file
        sys.stdout.write(keys_text(target, [], fmt, partitioner, key_type, header=True)[0])
    sys.stdout.write(keys_end(fmt))


def _progress(path: str):
    """A progress line on a terminal for a keys file over 64 MiB: percent read, keys and keys per second."""
    size = os.path.getsize(path) if path != "-" and os.path.exists(path) else 0
    if not (sys.stderr.isatty() and size > 64 << 20):
        return None
    started = time.perf_counter()

    def report(done_bytes: int, total_keys: int) -> None:
        rate = total_keys / max(time.perf_counter() - started, 1e-9)
        print(
            f"\r{done_bytes * 100 // max(size, 1)}%  {total_keys:,} keys  {rate / 1e6:.1f} M keys/s",
            end="",
            file=sys.stderr,
            flush=True,
        )

    return report


def _end_progress(progress) -> None:
    if progress is not None:
        print(file=sys.stderr)


def _write_summary(target: Target, counts, fmt, partitioner) -> None:
    from planner.formats.messages import summary_text
    from planner.producer.partitioner import summarize

    sys.stdout.write(summary_text(target, counts, summarize(counts), fmt, partitioner))


def _simulate(target: Target, records, batch_size, seed, fmt) -> None:
    from planner.formats.messages import null_key_text
    from planner.producer.partitioner import ERA_VERSIONS, simulate_every_era

    sims, available = simulate_every_era(target, records, batch_size, seed)
    sys.stdout.write(null_key_text(target, sims, ERA_VERSIONS, records, batch_size, seed, available, fmt))
