"""Kafka's murmur2 (`clients/src/main/java/org/apache/kafka/common/utils/Utils.java` `murmur2(byte[])`, unchanged
since 0.8.2) — scalar and vectorised.

`murmur2(data)` is the reference, one key at a time. `murmur2_batch(data, offsets)` hashes many keys stored in Arrow's
binary layout (all bytes concatenated in a 1-D uint8 array, `offsets` of length n+1) with NumPy, without a per-key
Python loop: keys are processed in chunks; within a chunk they are ordered by block count (most first, a linear radix
sort) so the keys that still have a 4-byte block j form a prefix, and each block index is one column-wise pass over that
prefix, reading each block with one gather from an overlapping unaligned uint32 view of the bytes. Keys of a
single length stored back to back (the common case: fixed-width keys) skip the gathers and read the blocks as one
`(n, blocks)` little-endian uint32 matrix. NumPy is imported inside the functions only.
"""

from __future__ import annotations

from planner.java import to_positive

M = 0x5BD1E995
SEED = 0x9747B28C
_MASK = 0xFFFFFFFF
_CHUNK = 1 << 16  # keys per vectorised pass: keeps the working arrays inside the CPU caches


def murmur2(data: bytes) -> int:
    """Utils.murmur2: the signed int32 hash of `data`."""
    length = len(data)
    h = (SEED ^ length) & _MASK
    nblocks = length >> 2
    for i in range(nblocks):
        j = i << 2
        k = data[j] | (data[j + 1] << 8) | (data[j + 2] << 16) | (data[j + 3] << 24)
        k = (k * M) & _MASK
        k ^= k >> 24
        k = (k * M) & _MASK
        h = ((h * M) & _MASK) ^ k
    base = nblocks << 2
    tail = length & 3
    if tail == 3:
        h ^= data[base + 2] << 16
    if tail >= 2:
        h ^= data[base + 1] << 8
    if tail >= 1:
        h ^= data[base]
        h = (h * M) & _MASK
    h ^= h >> 13
    h = (h * M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def keyed_partition(data: bytes, n_partitions: int) -> int:
    """A keyed record's partition: toPositive(murmur2(serialized key)) % numPartitions (all partitions of the topic;
    `DefaultPartitioner`, 3.3+ `BuiltInPartitioner.partitionForKey`)."""
    return to_positive(murmur2(data)) % n_partitions


# -- vectorised ---------------------------------------------------------------------------------------------------


def _as_arrays(data, offsets):
    import numpy as np

    if isinstance(data, (bytes, bytearray, memoryview)):
        data = np.frombuffer(data, dtype=np.uint8)
    data = np.ascontiguousarray(data, dtype=np.uint8)
    if data.ndim != 1:
        raise ValueError("murmur2_batch: data must be a 1-D uint8 array")
    offsets = np.asarray(offsets)
    if offsets.ndim != 1 or offsets.size < 1:
        raise ValueError("murmur2_batch: offsets must be a 1-D array of length n+1")
    offsets = offsets.astype(np.int64, copy=False)
    if offsets.size > 1:
        lens = np.diff(offsets)
        if (lens < 0).any():
            raise ValueError("murmur2_batch: offsets must be non-decreasing")
        if offsets[0] < 0 or offsets[-1] > data.size:
            raise ValueError("murmur2_batch: offsets point outside data")
    return data, offsets


def _finish(h, np):
    """The final avalanche, in place on a uint32 array."""
    h ^= h >> np.uint32(13)
    h *= np.uint32(M)
    h ^= h >> np.uint32(15)
    return h


def _mix_blocks(h, k, np):
    """h = (h * m) ^ mix(k) for one column of 4-byte blocks; in place on h (k is consumed)."""
    m = np.uint32(M)
    k *= m
    k ^= k >> np.uint32(24)
    k *= m
    h *= m
    h ^= k


def _hash_fixed(data, start: int, n: int, length: int, np):
    """n keys of `length` bytes stored back to back from data[start]."""
    out = np.empty(n, dtype=np.uint32)
    nblocks = length >> 2
    tail = length & 3
    base = nblocks << 2
    mat = data[start : start + n * length].reshape(n, length)
    seed = np.uint32((SEED ^ length) & _MASK)
    m = np.uint32(M)
    for lo in range(0, n, _CHUNK):
        hi = min(n, lo + _CHUNK)
        rows = mat[lo:hi]
        h = np.full(hi - lo, seed, dtype=np.uint32)
        if nblocks:
            words = np.ascontiguousarray(rows[:, :base]).view("<u4")  # (rows, nblocks), little-endian blocks
            for j in range(nblocks):
                _mix_blocks(h, words[:, j].astype(np.uint32), np)
        if tail:
            if tail == 3:
                h ^= rows[:, base + 2].astype(np.uint32) << np.uint32(16)
            if tail >= 2:
                h ^= rows[:, base + 1].astype(np.uint32) << np.uint32(8)
            h ^= rows[:, base]
            h *= m
        out[lo:hi] = _finish(h, np)
    return out


def _hash_mixed(data, starts, lens, np):
    """Keys of any lengths: sorted by block count, most first, so block j's active keys are a prefix."""
    n = starts.size
    out = np.empty(n, dtype=np.uint32)
    m = np.uint32(M)
    # words[i] = data[i:i+4] as a little-endian uint32: an overlapping, unaligned view (stride 1 byte), no copy.
    # A full block lies inside its key, so its start is at most data.size - 4.
    words = (
        np.ndarray(shape=(data.size - 3,), dtype="<u4", buffer=data, strides=(1,))
        if data.size >= 4
        else np.zeros(0, dtype="<u4")
    )
    for lo in range(0, n, _CHUNK):
        hi = min(n, lo + _CHUNK)
        ln = lens[lo:hi]
        nb_chunk = ln >> 2
        top = int(nb_chunk.max()) if nb_chunk.size else 0
        # most blocks first; a 16-bit key lets NumPy's stable sort use radix sort (linear time)
        sort_key = (top - nb_chunk).astype(np.uint16 if top < 65536 else np.int64)
        order = np.argsort(sort_key, kind="stable")
        ln = ln[order]
        st = starts[lo:hi][order]
        h = np.uint32(SEED) ^ ln.astype(np.uint32)
        nb = ln >> 2
        maxnb = int(nb[0]) if nb.size else 0
        if maxnb:
            # count of keys with more than j blocks, for each j (nb is descending)
            counts = nb.size - np.searchsorted(nb[::-1], np.arange(maxnb), side="right")
            for j in range(maxnb):
                c = int(counts[j])
                k = words[st[:c] + 4 * j]  # one unaligned little-endian gather per block
                hp = h[:c]
                _mix_blocks(hp, k, np)
        tail = ln & 3
        base = st + (nb << 2)
        for t_min, shift in ((3, 16), (2, 8), (1, 0)):
            sel = np.nonzero(tail >= t_min)[0]
            if sel.size:
                h[sel] ^= data[base[sel] + (t_min - 1)].astype(np.uint32) << np.uint32(shift)
        sel = np.nonzero(tail > 0)[0]
        if sel.size:
            h[sel] *= m
        _finish(h, np)
        chunk = np.empty(hi - lo, dtype=np.uint32)
        chunk[order] = h
        out[lo:hi] = chunk
    return out


def murmur2_batch(data, offsets):
    """murmur2 of every key in Arrow's binary layout: key i = data[offsets[i]:offsets[i+1]].

    Returns a numpy int32 array, bit for bit equal to `murmur2` of each key.
    """
    import numpy as np

    data, offsets = _as_arrays(data, offsets)
    n = offsets.size - 1
    if n <= 0:
        return np.empty(0, dtype=np.int32)
    lens = np.diff(offsets)
    first = int(lens[0])
    if (lens == first).all():
        out = _hash_fixed(data, int(offsets[0]), n, first, np)
    else:
        out = _hash_mixed(data, offsets[:-1], lens, np)
    return out.view(np.int32)


def murmur2_spans(data, starts, lengths):
    """murmur2 of keys that lie anywhere in `data` (e.g. lines of a file, separators left in place):
    key i = data[starts[i]:starts[i] + lengths[i]]. numpy int32 array, like `murmur2_batch`."""
    import numpy as np

    data = np.ascontiguousarray(data, dtype=np.uint8)
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    if starts.shape != lengths.shape or starts.ndim != 1:
        raise ValueError("murmur2_spans: starts and lengths must be 1-D arrays of one length")
    if starts.size == 0:
        return np.empty(0, dtype=np.int32)
    if (lengths < 0).any() or (starts < 0).any() or int((starts + lengths).max()) > data.size:
        raise ValueError("murmur2_spans: spans point outside data")
    return _hash_mixed(data, starts, lengths, np).view(np.int32)


def partition_batch(data, offsets, n_partitions: int):
    """toPositive(murmur2(key)) % n_partitions for every key (numpy int32 array)."""
    import numpy as np

    if n_partitions <= 0:
        raise ValueError("n_partitions must be positive")
    h = murmur2_batch(data, offsets).view(np.uint32)
    return ((h & np.uint32(0x7FFFFFFF)) % np.uint32(n_partitions)).astype(np.int32)


def pack_keys(keys):
    """Arrow-style (data, offsets) arrays from a sequence of bytes keys (a helper for callers and tests)."""
    import numpy as np

    keys = list(keys)
    offsets = np.zeros(len(keys) + 1, dtype=np.int64)
    if keys:
        np.cumsum([len(k) for k in keys], out=offsets[1:])
    data = np.frombuffer(b"".join(keys), dtype=np.uint8)
    return data, offsets
