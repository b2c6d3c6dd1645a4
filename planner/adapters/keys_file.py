"""A keys file (`partition --keys-file`, one key per line, `-` for stdin) read in chunks of whole lines, so a file of
any size streams: NumPy finds the line ends, no Python loop runs per key."""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from planner.model import PlannerError
from planner.producer.partitioner import partition_lines
from planner.producer.serializers import check_encoding

MAX_KEY_BYTES = 16 * 2**20  # one key line; a record is at most max.request.size (1 MiB by default)
CHUNK_BYTES = 8 << 20  # keys-file bytes per vectorised pass

Progress = Callable[[int, int], None]  # (bytes read, keys read) so far


@dataclass(frozen=True)
class PartitionedChunk:
    """One chunk of a keys file: its keys as text (when asked for) and each key's partition (an int32 array)."""

    keys: list[str]
    partitions: Any


def partitioned_chunks(
    path: str,
    key_type: str,
    encoding: str,
    partitions: int,
    partitioner: str,
    *,
    with_keys: bool,
    progress: Progress | None = None,
) -> Iterator[PartitionedChunk]:
    """The keys of `path` partitioned chunk by chunk. The keys are decoded only when asked for or needed to hash them
    (UTF-8 strings under the default partitioner hash straight from the bytes)."""
    raw_is_key = key_type == "string" and check_encoding(encoding) == "utf-8"
    done_bytes = total_keys = 0
    for data, starts, lengths in line_chunks(path):
        texts: list[str] = []
        if with_keys or not raw_is_key or partitioner == "legacy-scala":
            texts = decode_lines(data, starts, lengths, path)
        parts = partition_lines(data, starts, lengths, texts, key_type, encoding, partitions, partitioner)
        yield PartitionedChunk(texts, parts)
        total_keys += starts.size
        done_bytes += int(lengths.sum()) + starts.size
        if progress is not None:
            progress(done_bytes, total_keys)


def partition_counts(
    path: str, key_type: str, encoding: str, partitions: int, partitioner: str, progress: Progress | None = None
) -> list[int]:
    """How many keys of `path` go to each partition."""
    import numpy as np

    counts = np.zeros(partitions, dtype=np.int64)
    for chunk in partitioned_chunks(
        path, key_type, encoding, partitions, partitioner, with_keys=False, progress=progress
    ):
        counts += np.bincount(chunk.partitions, minlength=partitions)
    return counts.tolist()


def line_chunks(path: str):
    """Yield (bytes as a uint8 array, line starts, line lengths) per chunk of whole lines; a trailing \\r is dropped,
    a final line without a newline counts. NumPy finds the line ends, so no Python loop runs per key."""
    import numpy as np

    try:
        fh = sys.stdin.buffer if path == "-" else open(path, "rb")
    except OSError as exc:
        raise PlannerError(f"cannot read keys file {path}: {exc.strerror}") from None
    if fh is not sys.stdin.buffer:
        mode = os.fstat(fh.fileno()).st_mode
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode) or stat.S_ISDIR(mode):
            fh.close()
            what = "a directory" if stat.S_ISDIR(mode) else "a device, not a file"
            raise PlannerError(f"keys file {path}: is {what}; give a file, '-' or a FIFO such as <(command)")
    rest = b""
    try:
        while True:
            if len(rest) > MAX_KEY_BYTES:  # a line with no end in sight (/dev/zero through a pipe, a binary file)
                raise PlannerError(
                    f"keys file {path}: a line longer than {MAX_KEY_BYTES // 2**20} MiB; keys are one a line "
                    "(Kafka's default max.request.size is 1 MiB)"
                )
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


def decode_lines(data, starts, lengths, path: str) -> list[str]:
    """The lines of one chunk as text; a line that is not UTF-8 is refused with the file named."""
    blob = data.tobytes()
    try:
        return [blob[a : a + b].decode("utf-8") for a, b in zip(starts.tolist(), lengths.tolist())]
    except UnicodeDecodeError:
        raise PlannerError(f"{path}: a line is not valid UTF-8 text; for raw bytes use --key-type bytes-hex") from None
