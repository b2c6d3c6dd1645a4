"""Text rows built from integer columns at once (NumPy), for outputs of a million partitions.

`render_rows(pieces, count)` gives the same text as `"".join(f"...{a}...{b}..." for a, b in ...)`: each piece is an
ASCII constant or a column of non-negative integers (one per row), concatenated in order for every row. Rows are
assembled in a byte matrix, each number right-aligned in a slot as wide as the column's widest, the unused cells of
a slot NUL; dropping the NULs gives the text. NumPy is imported inside.
"""

from __future__ import annotations

from typing import Any, Sequence, Union

Piece = Union[str, Any]  # an ASCII constant, or an integer array of one value per row
_CHUNK = 1 << 17  # rows assembled at once (bounds the byte matrix to a few tens of MB)


def render_rows(pieces: Sequence[Piece], count: int) -> str:
    import numpy as np

    slots: list[tuple[Any, Any, int]] = []  # (constant bytes or None, int64 column or None, width)
    for piece in pieces:
        if isinstance(piece, str):
            raw = np.frombuffer(piece.encode("ascii"), dtype=np.uint8)
            slots.append((raw, None, len(raw)))
        else:
            column = np.asarray(piece, dtype=np.int64)
            if len(column) != count or (count and int(column.min()) < 0):
                raise ValueError("render_rows: a column needs one non-negative value per row")
            slots.append((None, column, len(str(int(column.max()))) if count else 1))
    width = sum(w for _, _, w in slots)
    tables: dict[int, Any] = {}  # id(column) -> digits of 0..max, when that is no bigger than the column
    for _, column, w in slots:
        if column is not None and id(column) not in tables and count and int(column.max()) < 2 * count:
            tables[id(column)] = _digits(np, np.arange(int(column.max()) + 1, dtype=np.int64), w)
    out = []
    for lo in range(0, count, _CHUNK):
        hi = min(count, lo + _CHUNK)
        cells = np.zeros((hi - lo, width), dtype=np.uint8)
        blocks: dict[int, Any] = {}  # a column repeated in a row (Replicas, Isr) is converted once per chunk
        at = 0
        for raw, column, w in slots:
            if raw is not None:
                cells[:, at : at + w] = raw
            else:
                key = id(column)
                if key not in blocks:
                    table = tables.get(key)
                    blocks[key] = table[column[lo:hi]] if table is not None else _digits(np, column[lo:hi], w)
                cells[:, at : at + w] = blocks[key]
            at += w
        out.append(cells[cells != 0].tobytes())
    return b"".join(out).decode("ascii")


def _digits(np, values, width: int):
    """(len(values) × width) decimal digits of `values`, right-aligned, leading cells NUL."""
    cells = np.zeros((len(values), width), dtype=np.uint8)
    for d in range(width):
        power = 10 ** (width - 1 - d)
        digit = (values // power % 10 + 48).astype(np.uint8)
        if power > 1:
            digit[values < power] = 0
        cells[:, d] = digit
    return cells
