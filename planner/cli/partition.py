"""`kafka-planner partition`: resolve the topic, read keys, compute (scalar or vectorised), render."""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

from planner.model import NO_LEADER, PlannerError

CHUNK_BYTES = 8 << 20  # keys-file bytes per vectorised pass


@dataclass(frozen=True)
class Target:
    partitions: int
    topic: str | None = None
    leaders: tuple[int, ...] | None = None  # per partition, NO_LEADER when none
    replicas: tuple[tuple[int, ...], ...] | None = None


def resolve_target(partitions, topology, topic, offline_brokers) -> Target:
    if topology is None:
        if topic is not None:
            raise PlannerError("--topic needs --topology (or give --partitions N alone)")
        if offline_brokers:
            raise PlannerError("--offline-brokers needs --topology")
        if partitions is None:
            raise PlannerError("give --partitions N, or --topology TOPOLOGY --topic T")
        if partitions <= 0:
            raise PlannerError(f"--partitions must be positive, got {partitions}")
        return Target(partitions)
    if partitions is not None:
        raise PlannerError("give either --partitions or --topology/--topic, not both: the topic's partition count is used")
    if topic is None:
        raise PlannerError("--topology needs --topic T")
    from planner.cli.common import load_cluster
    from planner.state import topic_states

    cluster = load_cluster(topology, offline_brokers)
    if not cluster.has_topic(topic):
        names = ", ".join(t.name for t in cluster.topics) or "none"
        raise PlannerError(f"topic {topic!r} is not in {topology} (topics: {names})")
    t = cluster.topic(topic)
    states = topic_states(cluster, t)
    return Target(t.partition_count, topic, tuple(s.leader for s in states), tuple(p.replicas for p in t.partitions))


def run(*, keys, partitions, topology, topic, key_type, encoding, keys_file, summary, partitioner,
        null_key_simulation, records, batch_size, seed, offline_brokers, fmt) -> None:
    from planner.clients.serializers import check_encoding

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
    from planner.clients.partitioner import legacy_scala_partition
    from planner.clients.serializers import partition_for_key, serialize

    if partitioner == "legacy-scala":
        parts = [legacy_scala_partition(k, key_type, target.partitions) for k in keys]
    else:
        parts = [partition_for_key(serialize(k, key_type, encoding), target.partitions) for k in keys]
    if summary:
        counts = [0] * target.partitions
        for p in parts:
            counts[p] += 1
        return _render_summary(target, counts, fmt, partitioner)
    _render_keys(target, list(zip(keys, parts)), fmt, partitioner, key_type, header=True, footer=True)


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
            rest = buf[int(ends[-1]) + 1:] if block else b""
            if not block:
                break
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()


def _keys_file(target, path, key_type, encoding, summary, partitioner, fmt) -> None:
    import numpy as np

    from planner.clients.murmur2 import murmur2_spans, pack_keys, partition_batch
    from planner.clients.partitioner import legacy_scala_partition
    from planner.clients.serializers import check_encoding, serialize

    raw_is_key = key_type == "string" and check_encoding(encoding) == "utf-8"
    size = os.path.getsize(path) if path != "-" and os.path.exists(path) else 0
    progress = sys.stderr.isatty() and size > 64 << 20
    counts = np.zeros(target.partitions, dtype=np.int64)
    done_bytes, started, total_keys = 0, time.perf_counter(), 0
    first, width = True, 0
    for data, starts, lengths in _line_chunks(path):
        n = starts.size
        texts = None
        if not raw_is_key or partitioner == "legacy-scala" or not summary:
            blob = data.tobytes()
            try:
                texts = [blob[a:a + b].decode("utf-8") for a, b in zip(starts.tolist(), lengths.tolist())]
            except UnicodeDecodeError:
                raise PlannerError(f"{path}: a line is not valid UTF-8 text; for raw bytes use --key-type bytes-hex") from None
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
            width = _render_keys(target, list(zip(texts, parts.tolist())), fmt, partitioner, key_type, header=first,
                                 footer=False, width=width)
            first = False
        done_bytes += int(lengths.sum()) + n
        if progress:
            rate = total_keys / max(time.perf_counter() - started, 1e-9)
            print(f"\r{done_bytes * 100 // max(size, 1)}%  {total_keys:,} keys  {rate / 1e6:.1f} M keys/s", end="",
                  file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    if summary:
        return _render_summary(target, counts.tolist(), fmt, partitioner)
    if first:  # empty file
        _render_keys(target, [], fmt, partitioner, key_type, header=True, footer=False)
    if fmt == "json":
        sys.stdout.write("]}\n")


# -- rendering -------------------------------------------------------------------------------------------------------


def _rule(partitioner: str) -> str:
    if partitioner == "legacy-scala":
        return "Utils.abs(key.hashCode) % partitions (Scala producer, 0.8.0-1.1)"
    return "toPositive(murmur2(key)) % partitions"


def _render_keys(target: Target, rows, fmt, partitioner, key_type, header: bool, footer: bool, width: int = 0) -> int:
    """Write rows; returns the key column width (table), to pass back in for the next chunk of a stream."""
    import json

    out = sys.stdout
    with_topo = target.leaders is not None
    if fmt == "tsv":
        lines = []
        for key, p in rows:
            if with_topo:
                lines.append(f"{key}\t{p}\t{_leader_text(target.leaders[p])}\t{','.join(map(str, target.replicas[p]))}\n")
            else:
                lines.append(f"{key}\t{p}\n")
        out.write("".join(lines))
        return width
    if fmt == "json":
        if header:
            meta = {"topic": target.topic, "partitions": target.partitions, "key_type": key_type, "rule": _rule(partitioner)}
            out.write(json.dumps(meta)[:-1] + ', "keys": [\n')
        items = []
        for key, p in rows:
            item = {"key": key, "partition": p}
            if with_topo:
                item["leader"] = None if target.leaders[p] == NO_LEADER else target.leaders[p]
                item["replicas"] = list(target.replicas[p])
            items.append(json.dumps(item))
        if items:
            out.write(("" if header else ",\n") + ",\n".join(items))
        if footer:
            out.write("\n]}\n")
        return width
    # fixed columns (not tabulate) so that a keys file streams chunk by chunk under one header
    shown = [(key if key != "" else '""', p) for key, p in rows]
    if header:
        where = f"topic {target.topic}, " if target.topic else ""
        out.write(f"# {where}{target.partitions} partitions, {key_type} keys, {_rule(partitioner)}\n")
        width = max([3] + [len(k) for k, _ in shown[:10000]])
        cols = ["key".ljust(width), "partition"] + (["leader  ", "replicas"] if with_topo else [])
        out.write("  ".join(cols).rstrip() + "\n")
        out.write("  ".join("-" * len(c) for c in cols) + "\n")
    width = max(width, 3)
    lines = []
    for key, p in shown:
        line = f"{key.ljust(width)}  {p:<9}"
        if with_topo:
            line += f"  {_leader_text(target.leaders[p]):<8}  {','.join(map(str, target.replicas[p]))}"
        lines.append(line.rstrip() + "\n")
    out.write("".join(lines))
    return width


def _leader_text(leader: int) -> str:
    return "none" if leader == NO_LEADER else str(leader)


def _render_summary(target: Target, counts, fmt, partitioner) -> None:
    from planner.formats.clients import dumps

    total = sum(counts)
    mean = total / len(counts)
    top = max(counts)
    skew = top / mean if mean else 0.0
    stats = {"keys": total, "partitions": len(counts), "mean": round(mean, 3), "max": top, "min": min(counts),
             "max_partition": counts.index(top), "skew_max_over_mean": round(skew, 4),
             "empty_partitions": sum(1 for c in counts if c == 0)}
    if fmt == "json":
        sys.stdout.write(dumps({"topic": target.topic, "rule": _rule(partitioner), "summary": stats, "counts": counts}))
        return
    if fmt == "tsv":
        sys.stdout.write("".join(f"{p}\t{c}\n" for p, c in enumerate(counts)))
        return
    from tabulate import tabulate

    from planner.formats.tables import bar

    headers = ["partition", "keys", "share", ""] + (["leader"] if target.leaders is not None else [])
    rows = []
    for p, c in enumerate(counts):
        row = [p, c, f"{100 * c / total:.2f}%" if total else "-", bar(c, top, 20)]
        if target.leaders is not None:
            row.append(_leader_text(target.leaders[p]))
        rows.append(row)
    sys.stdout.write(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True) + "\n")
    sys.stdout.write(
        f"keys {total:,} over {len(counts)} partitions: mean {mean:,.1f}, max {top:,} (partition {counts.index(top)}), "
        f"min {min(counts):,}, skew max/mean {skew:.3f}, empty partitions {stats['empty_partitions']}\n"
    )


def _simulate(target: Target, records, batch_size, seed, fmt) -> None:
    from planner.clients.partitioner import ERA_VERSIONS, ERAS, simulate_null_keys
    from planner.formats.clients import dumps

    available = None
    if target.leaders is not None:
        available = [p for p, leader in enumerate(target.leaders) if leader != NO_LEADER]
    sims = [simulate_null_keys(era, target.partitions, records, batch_size, seed, available) for era in ERAS]
    if fmt == "json":
        sys.stdout.write(dumps({
            "topic": target.topic, "partitions": target.partitions, "records": records, "batch_size": batch_size,
            "seed": seed, "available": available if available is not None else list(range(target.partitions)),
            "eras": {s.era: {"versions": ERA_VERSIONS[s.era], "counts": list(s.counts), "switches": s.switches,
                             "skew_max_over_mean": round(s.skew, 4)} for s in sims},
        }))
        return
    if fmt == "tsv":
        sys.stdout.write("partition\t" + "\t".join(ERAS) + "\n")
        for p in range(target.partitions):
            sys.stdout.write(f"{p}\t" + "\t".join(str(s.counts[p]) for s in sims) + "\n")
        return
    from tabulate import tabulate

    headers = ["partition"] + [f"{s.era} ({ERA_VERSIONS[s.era]})" for s in sims]
    if target.leaders is not None:
        headers.append("leader")
    rows = []
    for p in range(target.partitions):
        row = [p] + [s.counts[p] for s in sims]
        if target.leaders is not None:
            row.append(_leader_text(target.leaders[p]))
        rows.append(row)
    rows.append(["max/mean"] + [f"{s.skew:.3f}" for s in sims] + ([""] if target.leaders is not None else []))
    rows.append(["switches"] + [s.switches for s in sims] + ([""] if target.leaders is not None else []))
    sys.stdout.write(f"# {records:,} keyless records of 1 byte, batch.size {batch_size:,}, seed {seed}\n")
    sys.stdout.write(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True) + "\n")
