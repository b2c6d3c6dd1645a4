"""A keys file (`partition --keys-file`, one key per line, `-` for stdin) read in chunks of whole lines, so a file of
any size streams: NumPy finds the line ends, no Python loop runs per key."""

from __future__ import annotations

import sys

from planner.model import PlannerError

CHUNK_BYTES = 8 << 20  # keys-file bytes per vectorised pass


def line_chunks(path: str):
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


def decode_lines(data, starts, lengths, path: str) -> list[str]:
    """The lines of one chunk as text; a line that is not UTF-8 is refused with the file named."""
    blob = data.tobytes()
    try:
        return [blob[a : a + b].decode("utf-8") for a, b in zip(starts.tolist(), lengths.tolist())]
    except UnicodeDecodeError:
        raise PlannerError(f"{path}: a line is not valid UTF-8 text; for raw bytes use --key-type bytes-hex") from None
