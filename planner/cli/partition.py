"""`kafka-planner partition`: resolve the topic, read keys (a keys file in chunks), compute (scalar or vectorised), and
write what planner/formats/clients.py renders."""

from __future__ import annotations

import os
import sys
import time

from planner.model import NO_LEADER, PlannerError
from planner.producer.partitioner import Target

CHUNK_BYTES = 8 << 20  # keys-file bytes per vectorised pass


def resolve_target(partitions, topology, topic, offline_brokers) -> Target:
    from planner.cli.common import partitions_or_topic

    n, cluster = partitions_or_topic(partitions, topology, topic, offline_brokers)
    if cluster is None:
        return Target(n)
    from planner.leadership import topic_states

    t = cluster.topic(topic)
    states = topic_states(cluster, t)
    return Target(n, topic, tuple(s.leader for s in states), tuple(p.replicas for p in t.partitions))


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
    from planner.producer.partitioner import legacy_scala_partition
    from planner.producer.serializers import partition_for_key, serialize

    parts: list[int | None]
    if partitioner == "legacy-scala":
        parts = [legacy_scala_partition(k, key_type, target.partitions) for k in keys]
    else:
        parts = [partition_for_key(serialize(k, key_type, encoding), target.partitions) for k in keys]
    if summary:
        counts = [0] * target.partitions
        for p in parts:
            if p is not None:  # a text key always serializes to bytes: never None here
                counts[p] += 1
        return _write_summary(target, counts, fmt, partitioner)
    from planner.formats.clients import keys_end, keys_text

    text, _ = keys_text(target, list(zip(keys, parts)), fmt, partitioner, key_type, header=True)
    sys.stdout.write(text + keys_end(fmt))


# -- keys files ------------------------------------------------------------------------------------------------------


def _line_chunks(path: str):
    """Yield (bytes as a uint8 array, line starts, line lengths) per chunk of whole lines; a trailing \\r is dropped,
    a final line without a newline counts. NumPy finds the line ends, so no Python loop runs per key."""
    import numpy as np

    try:
        fh = sys.stdin.buffer if path == "-" else open(path, "rb")
    except OSError as exc:
        raise PlannerError(f"cannot read keys file {path}: {exc.strerror}") from None
    rest = b""
    try:
        while True:
            block = fh.read(CHUNK_BYTES)
            buf = rest + block
            if not buf:
                break
            arr = np.frombuffer(buf, dtype=np.uint8)
            ends = np.flatnonzero(arr == 10)
            if not block:  # end of file: the last line may lack a newline
                if buf:
                    ends = np.append(ends, len(buf))
                    if buf.endswith(b"\n"):
                        ends = ends[:-1]
            if ends.size == 0:
                rest = buf
                continue
            starts = np.concatenate(([0], ends[:-1] + 1))
            line_ends = ends.copy()
            cr = (line_ends > starts) & (arr[np.maximum(line_ends - 1, 0)] == 13)
            line_ends[cr] -= 1
            yield arr, starts, line_ends - starts
            rest = buf[int(ends[-1]) + 1 :] if block else b""
            if not block:
                break
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()


def _keys_file(target, path, key_type, encoding, summary, partitioner, fmt) -> None:
    import numpy as np

    from planner.formats.clients import keys_end, keys_text
    from planner.producer.murmur2 import murmur2_spans, pack_keys, partition_batch
    from planner.producer.partitioner import legacy_scala_partition
    from planner.producer.serializers import check_encoding, serialize

    raw_is_key = key_type == "string" and check_encoding(encoding) == "utf-8"
    size = os.path.getsize(path) if path != "-" and os.path.exists(path) else 0
    progress = sys.stderr.isatty() and size > 64 << 20
    counts = np.zeros(target.partitions, dtype=np.int64)
    done_bytes, started, total_keys = 0, time.perf_counter(), 0
    first, width = True, 0
    for data, starts, lengths in _line_chunks(path):
        n = starts.size
        texts: list[str] = []
        if not raw_is_key or partitioner == "legacy-scala" or not summary:
            blob = data.tobytes()
            try:
                texts = [blob[a : a + b].decode("utf-8") for a, b in zip(starts.tolist(), lengths.tolist())]
            except UnicodeDecodeError:
                raise PlannerError(
                    f"{path}: a line is not valid UTF-8 text; for raw bytes use --key-type bytes-hex"
                ) from None
        if partitioner == "legacy-scala":
            parts = np.array([legacy_scala_partition(t, key_type, target.partitions) for t in texts], dtype=np.int32)
        elif raw_is_key:
            hashes = murmur2_spans(data, starts, lengths).view(np.uint32)
            parts = ((hashes & np.uint32(0x7FFFFFFF)) % np.uint32(target.partitions)).astype(np.int32)
        else:
            kd, ko = pack_keys([serialize(t, key_type, encoding) for t in texts])
            parts = partition_batch(kd, ko, target.partitions)
        total_keys += n
        if summary:
            counts += np.bincount(parts, minlength=target.partitions)
        else:
            text, width = keys_text(
                target, list(zip(texts, parts.tolist())), fmt, partitioner, key_type, header=first, width=width
            )
            sys.stdout.write(text)
            first = False
        done_bytes += int(lengths.sum()) + n
        if progress:
            rate = total_keys / max(time.perf_counter() - started, 1e-9)
            print(
                f"\r{done_bytes * 100 // max(size, 1)}%  {total_keys:,} keys  {rate / 1e6:.1f} M keys/s",
                end="",
                file=sys.stderr,
                flush=True,
            )
    if progress:
        print(file=sys.stderr)
    if summary:
        return _write_summary(target, counts.tolist(), fmt, partitioner)
    if first:  # empty file
        sys.stdout.write(keys_text(target, [], fmt, partitioner, key_type, header=True)[0])
    sys.stdout.write(keys_end(fmt))


def _write_summary(target: Target, counts, fmt, partitioner) -> None:
    from planner.formats.clients import summary_text
    from planner.producer.partitioner import summarize

    sys.stdout.write(summary_text(target, counts, summarize(counts), fmt, partitioner))


def _simulate(target: Target, records, batch_size, seed, fmt) -> None:
    from planner.formats.clients import null_key_text
    from planner.producer.partitioner import ERA_VERSIONS, ERAS, simulate_null_keys

    available = None
    if target.leaders is not None:
        available = [p for p, leader in enumerate(target.leaders) if leader != NO_LEADER]
    sims = [simulate_null_keys(era, target.partitions, records, batch_size, seed, available) for era in ERAS]
    sys.stdout.write(null_key_text(target, sims, ERA_VERSIONS, records, batch_size, seed, available, fmt))
