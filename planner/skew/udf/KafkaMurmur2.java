/*
 * Kafka's keyed partitioner as Spark SQL UDFs, so that the skew job hashes keys in the JVM, where Spark holds the
 * data, with no Python in the loop. Shipped as source inside kafka-planner and compiled on first use against the
 * running PySpark's jars (planner/skew/jvmhash.py); the jar goes to the executors through spark.jars.
 *
 * murmur2 and toPositive are the producer's own, from Kafka's
 * clients/src/main/java/org/apache/kafka/common/utils/Utils.java (murmur2(byte[]), toPositive(int)), as used by
 * clients/src/main/java/org/apache/kafka/clients/producer/internals/BuiltInPartitioner.java (partitionForKey:
 * toPositive(murmur2(serializedKey)) % numPartitions). The bytes are the serializers' output:
 * StringSerializer (UTF-8; Spark casts its strings to BINARY without re-encoding, they are UTF-8 already),
 * ByteArraySerializer (the bytes), IntegerSerializer / LongSerializer (4 / 8 bytes, big-endian).
 * A null key has no partition: every UDF returns null for it.
 */
package kafkaplanner.udf;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;

import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.array.ByteArrayMethods;
import org.apache.spark.unsafe.types.UTF8String;

public final class KafkaMurmur2 {
    private static final int SEED = 0x9747b28c;
    private static final int M = 0x5bd1e995;
    private static final int R = 24;

    private KafkaMurmur2() {
    }

    /** Utils.murmur2(byte[]), line for line. */
    public static int murmur2(final byte[] data) {
        int length = data.length;
        int h = SEED ^ length;
        int length4 = length / 4;
        for (int i = 0; i < length4; i++) {
            final int i4 = i * 4;
            int k = (data[i4 + 0] & 0xff) + ((data[i4 + 1] & 0xff) << 8) + ((data[i4 + 2] & 0xff) << 16)
                + ((data[i4 + 3] & 0xff) << 24);
            k *= M;
            k ^= k >>> R;
            k *= M;
            h *= M;
            h ^= k;
        }
        switch (length % 4) {
            case 3:
                h ^= (data[(length & ~3) + 2] & 0xff) << 16;
            case 2:
                h ^= (data[(length & ~3) + 1] & 0xff) << 8;
            case 1:
                h ^= data[length & ~3] & 0xff;
                h *= M;
        }
        return fmix(h);
    }

    private static int fmix(int h) {
        h ^= h >>> 13;
        h *= M;
        h ^= h >>> 15;
        return h;
    }

    /** One 4-byte block of murmur2's loop (k: the block read little-endian) mixed into h. */
    private static int block(int h, int k) {
        k *= M;
        k ^= k >>> R;
        k *= M;
        h *= M;
        return h ^ k;
    }

    /** murmur2 of IntegerSerializer's 4 bytes (big-endian), without building the array. */
    public static int murmur2(final int value) {
        return fmix(block(SEED ^ 4, Integer.reverseBytes(value)));
    }

    /** murmur2 of LongSerializer's 8 bytes (big-endian), without building the array. */
    public static int murmur2(final long value) {
        int h = block(SEED ^ 8, Integer.reverseBytes((int) (value >>> 32)));
        return fmix(block(h, Integer.reverseBytes((int) value)));
    }

    /** Utils.toPositive: the sign bit cleared (not Math.abs). */
    public static int toPositive(int number) {
        return number & 0x7fffffff;
    }

    /** murmur2 of a BINARY key (a string cast to BINARY is its UTF-8 bytes); null for a null key. */
    public static final class OfBytes implements UDF1<byte[], Integer> {
        @Override
        public Integer call(byte[] key) {
            return key == null ? null : murmur2(key);
        }
    }

    /** murmur2 of an INT key as IntegerSerializer writes it; null for a null key. */
    public static final class OfInt implements UDF1<Integer, Integer> {
        @Override
        public Integer call(Integer key) {
            return key == null ? null : murmur2(key.intValue());
        }
    }

    /** murmur2 of a BIGINT key as LongSerializer writes it; null for a null key. */
    public static final class OfLong implements UDF1<Long, Integer> {
        @Override
        public Integer call(Long key) {
            return key == null ? null : murmur2(key.longValue());
        }
    }

    /** The producer's partition of a BINARY key: toPositive(murmur2(key)) % numPartitions; null for a null key. */
    public static final class PartitionOfBytes implements UDF2<byte[], Integer, Integer> {
        @Override
        public Integer call(byte[] key, Integer numPartitions) {
            return key == null ? null : toPositive(murmur2(key)) % numPartitions;
        }
    }

    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    /** Utils.murmur2 of `length` bytes at `offset` in `base` (Spark's off-array view of a UTF8String), no copy. */
    public static int murmur2(final Object base, final long offset, final int length) {
        int h = SEED ^ length;
        int length4 = length / 4;
        for (int i = 0; i < length4; i++) {
            int k = Platform.getInt(base, offset + i * 4L);  // murmur2 reads each block little-endian
            h = block(h, LITTLE_ENDIAN ? k : Integer.reverseBytes(k));
        }
        long tail = offset + (length & ~3);
        switch (length % 4) {
            case 3:
                h ^= (Platform.getByte(base, tail + 2) & 0xff) << 16;
            case 2:
                h ^= (Platform.getByte(base, tail + 1) & 0xff) << 8;
            case 1:
                h ^= Platform.getByte(base, tail) & 0xff;
                h *= M;
        }
        return fmix(h);
    }

    /** Key kinds of the job's `_k` column (planner/skew/jvmcount.py passes the number). */
    static final int STRING = 0;
    static final int BINARY = 1;
    static final int INT = 2;
    static final int LONG = 3;

    /**
     * The skew job's whole counting pass over the normalised keys (`_k`, optional `_v`, optional `_bad`; see
     * planner/skew/job.py): one Spark job over the rows Spark SQL produces (no Python, no per-row objects: strings are
     * hashed where Spark holds them), each task filling one {@link Summary}, merged on the driver. `keys` is the
     * Dataset PySpark holds (`df._jdf`); k = 0 counts partitions only. Returns {@link Summary#toBytes}, decoded by
     * planner/skew/jvmcount.py.
     */
    public static byte[] summarize(Object keys, String partitionCounts, int k, int slack, int keyKind, int valueIndex,
                                   int badIndex) throws ReflectiveOperationException {
        int[] counts = Arrays.stream(partitionCounts.split(",")).mapToInt(Integer::parseInt).toArray();
        // Dataset.queryExecution: on org.apache.spark.sql.Dataset in Spark 3, on sql.classic.Dataset in Spark 4
        QueryExecution qe = (QueryExecution) keys.getClass().getMethod("queryExecution").invoke(keys);
        RDD<InternalRow> rows = qe.toRdd();
        // summaries travel as toBytes() (a class of the jar could be loaded twice: by Spark's and the session's loader)
        return rows.toJavaRDD()
            .mapPartitions(new Task(counts, k, slack, keyKind, valueIndex, badIndex))
            .reduce(new Merge(k, slack, keyKind, valueIndex >= 0));
    }

    /** One task: its rows into one {@link Summary}, as bytes. */
    static final class Task implements FlatMapFunction<Iterator<InternalRow>, byte[]> {
        private static final long serialVersionUID = 1L;
        private final int[] counts;
        private final int k;
        private final int slack;
        private final int keyKind;
        private final int valueIndex;
        private final int badIndex;

        Task(int[] counts, int k, int slack, int keyKind, int valueIndex, int badIndex) {
            this.counts = counts;
            this.k = k;
            this.slack = slack;
            this.keyKind = keyKind;
            this.valueIndex = valueIndex;
            this.badIndex = badIndex;
        }

        @Override
        public Iterator<byte[]> call(Iterator<InternalRow> rows) {
            Summary s = new Summary(counts, k, slack, keyKind, valueIndex >= 0);
            while (rows.hasNext()) {
                InternalRow row = rows.next();
                long value = valueIndex < 0 || row.isNullAt(valueIndex) ? 0L : row.getLong(valueIndex);
                if (badIndex >= 0 && !row.isNullAt(badIndex) && row.getBoolean(badIndex)) {
                    s.unreadable++;
                } else if (row.isNullAt(0)) {
                    s.nullRecords++;
                    s.nullBytes += value;
                } else {
                    s.add(row, value);
                }
            }
            return Collections.singletonList(s.toBytes()).iterator();
        }
    }

    /** Two tasks' summaries into one. */
    static final class Merge implements Function2<byte[], byte[], byte[]> {
        private static final long serialVersionUID = 1L;
        private final int k;
        private final int slack;
        private final int keyKind;
        private final boolean valued;

        Merge(int k, int slack, int keyKind, boolean valued) {
            this.k = k;
            this.slack = slack;
            this.keyKind = keyKind;
            this.valued = valued;
        }

        @Override
        public byte[] call(byte[] a, byte[] b) {
            Summary s = Summary.fromBytes(a, k, slack, keyKind, valued);
            s.merge(Summary.fromBytes(b, k, slack, keyKind, valued));
            return s.toBytes();
        }
    }

    /**
     * Records and bytes per partition for every partition count, null-key and unreadable rows, and a Misra-Gries
     * summary of the keys' murmur2 values (planner/skew/heavy.py) that also proves exact counts. Each counter keeps,
     * beside its Misra-Gries value mg (true - err <= mg <= true), u: a bound on its hash's records before the counter
     * was created (the summary's err then: a hash without a counter has at most err records), the first key seen with
     * that hash and whether another key came with it. Its exact count since creation is n = mg + err - u (every
     * compaction took as much from mg as it added to err; merging keeps that), so true ∈ [n, n + u], and a counter with
     * u = 0 and one key holds that key's exact count. Only such counters need their key: one created after a
     * compaction (u = err > 0) keeps none, and is marked as if another key had come.
     */
    static final class Summary {
        private static final int SMALL = 1024;  // compact() finds the (k+1)-th largest mg by a histogram below this
        final int[] counts;
        final long[][] records;
        final long[][] bytes;
        long nullRecords;
        long nullBytes;
        long unreadable;
        final int k;  // counters a compaction keeps (0: no summary)
        final int slack;  // counters allowed between compactions (>= k); compacting seldom keeps err small
        final int keyKind;
        final boolean valued;  // records have value bytes: keep each counter's bytes (else n * key length)
        long err;
        long total;
        Table table;
        Table spare;  // the next compaction's table, reused
        private final int[] histogram = new int[SMALL + 1];

        /** Open addressing over hashes; hash and mg side by side (one cache line per probe). */
        final class Table {
            final long[] hm;  // 2i: hash, 2i + 1: mg (0: empty slot)
            final long[] u;
            final long[] w;
            final byte[][] keyBytes;  // STRING / BINARY keys; null once another key came with the hash
            final long[] keyNumbers;  // INT / LONG keys
            final boolean[] collided;  // INT / LONG keys
            final int mask;
            int size;

            Table(int cap) {
                hm = new long[2 * cap];
                u = new long[cap];
                w = valued ? new long[cap] : null;
                boolean text = keyKind == STRING || keyKind == BINARY;
                keyBytes = text ? new byte[cap][] : null;
                keyNumbers = text ? null : new long[cap];
                collided = text ? null : new boolean[cap];
                mask = cap - 1;
            }

            int slot(int hash) {
                int i = (hash * 0x9E3779B9) >>> 7 & mask;
                while (hm[2 * i + 1] != 0 && (int) hm[2 * i] != hash) {
                    i = (i + 1) & mask;
                }
                return i;
            }

            boolean isCollided(int i) {
                return keyBytes != null ? keyBytes[i] == null : collided[i];
            }

            void collide(int i) {
                if (keyBytes != null) {
                    keyBytes[i] = null;
                } else {
                    collided[i] = true;
                }
            }

            /** A new counter in the empty slot i. */
            void put(int i, int hash, long mgValue, long uValue, long wValue, byte[] key, long number, boolean coll) {
                hm[2 * i] = hash;
                hm[2 * i + 1] = mgValue;
                u[i] = uValue;
                if (w != null) {
                    w[i] = wValue;
                }
                if (keyBytes != null) {
                    keyBytes[i] = coll ? null : key;
                } else {
                    keyNumbers[i] = number;
                    collided[i] = coll;
                }
                size++;
            }

            void clear() {
                Arrays.fill(hm, 0L);
                if (keyBytes != null) {
                    Arrays.fill(keyBytes, null);
                }
                size = 0;
            }

            int capacity() {
                return mask + 1;
            }
        }

        Summary(int[] counts, int k, int slack, int keyKind, boolean valued) {
            this.counts = counts;
            this.records = new long[counts.length][];
            this.bytes = new long[counts.length][];
            for (int i = 0; i < counts.length; i++) {
                records[i] = new long[counts[i]];
                bytes[i] = new long[counts[i]];
            }
            this.k = k;
            this.slack = Math.max(slack, k);
            this.keyKind = keyKind;
            this.valued = valued;
            this.table = new Table(k == 0 ? 1 : Integer.highestOneBit(Math.max(2 * this.slack, 2) - 1) << 1);
        }

        void add(InternalRow row, long value) {
            int hash;
            int length;
            UTF8String text = null;
            byte[] blob = null;
            long number = 0;
            if (keyKind == STRING) {
                text = row.getUTF8String(0);
                length = text.numBytes();
                hash = murmur2(text.getBaseObject(), text.getBaseOffset(), length);
            } else if (keyKind == BINARY) {
                blob = row.getBinary(0);
                length = blob.length;
                hash = murmur2(blob);
            } else if (keyKind == INT) {
                number = row.getInt(0);
                length = 4;
                hash = murmur2((int) number);
            } else {
                number = row.getLong(0);
                length = 8;
                hash = murmur2(number);
            }
            place(hash, length + value, text, blob, number);
        }

        /** A BINARY key of `value` bytes (its record's value), already read: counted as {@link #add}; its murmur2. */
        int addBytes(byte[] blob, long value) {
            int hash = murmur2(blob);
            place(hash, blob.length + value, null, blob, 0);
            return hash;
        }

        /** A key Spark holds (a view of its bytes, no copy) of `value` bytes: counted as {@link #add}; its murmur2. */
        int addView(UTF8String text, long value) {
            int length = text.numBytes();
            int hash = murmur2(text.getBaseObject(), text.getBaseOffset(), length);
            place(hash, length + value, text, null, 0);
            return hash;
        }

        /** One keyed record of `size` bytes whose key hashes to `hash`, into every count and the hot-key table. */
        private void place(int hash, long size, UTF8String text, byte[] blob, long number) {
            int p = toPositive(hash);
            for (int i = 0; i < counts.length; i++) {
                int q = p % counts[i];
                records[i][q]++;
                bytes[i][q] += size;
            }
            total++;
            if (k > 0) {
                count(hash, size, text, blob, number);
            }
        }

        /** One record of `hash` (its key as text, blob or number) of `size` bytes. */
        private void count(int hash, long size, UTF8String text, byte[] blob, long number) {
            Table t = table;
            int i = t.slot(hash);
            if (t.hm[2 * i + 1] == 0) {
                // a counter created after a compaction (u = err > 0) can never prove an exact count: no key kept
                byte[] key = err > 0 ? null : text != null ? text.getBytes() : blob;
                t.put(i, hash, 1, err, size, key, number, err > 0);
                if (t.size > slack) {
                    compact();
                }
                return;
            }
            t.hm[2 * i + 1]++;
            if (t.w != null) {
                t.w[i] += size;
            }
            if (t.u[i] > 0) {
                return;  // inexact anyway: no key to compare
            }
            if (t.keyBytes != null) {
                byte[] kept = t.keyBytes[i];
                if (kept != null && !(text != null ? kept.length == text.numBytes() && ByteArrayMethods.arrayEquals(
                        kept, Platform.BYTE_ARRAY_OFFSET, text.getBaseObject(), text.getBaseOffset(), kept.length)
                        : Arrays.equals(kept, blob))) {
                    t.keyBytes[i] = null;
                }
            } else if (t.keyNumbers[i] != number) {
                t.collided[i] = true;
            }
        }

        /** The (k+1)-th largest mg (0 when there are at most k counters). */
        private long threshold() {
            Table t = table;
            if (t.size <= k) {
                return 0;
            }
            Arrays.fill(histogram, 0);
            int big = 0;
            for (int i = 1; i < t.hm.length; i += 2) {
                long v = t.hm[i];
                if (v != 0) {
                    if (v >= SMALL) {
                        big++;
                    }
                    histogram[(int) Math.min(v, SMALL)]++;
                }
            }
            if (big > k) {  // rare (only in merged summaries of huge inputs): sort the large ones
                long[] large = new long[big];
                int j = 0;
                for (int i = 1; i < t.hm.length; i += 2) {
                    if (t.hm[i] >= SMALL) {
                        large[j++] = t.hm[i];
                    }
                }
                Arrays.sort(large);
                return large[big - k - 1];
            }
            int above = big;
            for (int v = SMALL - 1; v > 0; v--) {
                above += histogram[v];
                if (above > k) {
                    return v;
                }
            }
            return 0;
        }

        /** Subtract the (k+1)-th largest mg from every counter (those at or below it drop out): err += it. */
        private void compact() {
            long c = threshold();
            err += c;
            rebuild(table.capacity(), c);
        }

        /** The counters into a table of `cap` slots, each mg less `c` (dropped at 0 or below). */
        private void rebuild(int cap, long c) {
            Table old = table;
            Table fresh = spare != null && spare.capacity() == cap ? spare : new Table(cap);
            fresh.clear();
            for (int i = 0; i < old.capacity(); i++) {
                long m = old.hm[2 * i + 1];
                if (m > c) {
                    int hash = (int) old.hm[2 * i];
                    boolean coll = old.isCollided(i);
                    fresh.put(fresh.slot(hash), hash, m - c, old.u[i], old.w == null ? 0 : old.w[i],
                        old.keyBytes == null ? null : old.keyBytes[i], old.keyNumbers == null ? 0 : old.keyNumbers[i],
                        coll);
                }
            }
            table = fresh;
            spare = old.capacity() == cap ? old : null;
        }

        /** Add another task's summary (disjoint records): counters of a hash add up; a counter only one side has
         * gets the other side's err added to its u (the other side saw at most err records of it). */
        void merge(Summary other) {
            for (int i = 0; i < counts.length; i++) {
                for (int q = 0; q < counts[i]; q++) {
                    records[i][q] += other.records[i][q];
                    bytes[i][q] += other.bytes[i][q];
                }
            }
            nullRecords += other.nullRecords;
            nullBytes += other.nullBytes;
            unreadable += other.unreadable;
            total += other.total;
            if (k == 0) {
                return;
            }
            int cap = table.capacity();
            while (cap < 2 * (table.size + other.table.size)) {
                cap <<= 1;
            }
            rebuild(cap, 0);
            Table t = table;
            Table o = other.table;
            boolean[] seen = new boolean[cap];
            for (int j = 0; j < o.capacity(); j++) {
                long m = o.hm[2 * j + 1];
                if (m == 0) {
                    continue;
                }
                int hash = (int) o.hm[2 * j];
                int i = t.slot(hash);
                long ow = o.w == null ? 0 : o.w[j];
                if (t.hm[2 * i + 1] == 0) {
                    t.put(i, hash, m, o.u[j] + err, ow, o.keyBytes == null ? null : o.keyBytes[j],
                        o.keyNumbers == null ? 0 : o.keyNumbers[j], o.isCollided(j));
                } else {
                    t.hm[2 * i + 1] += m;
                    t.u[i] += o.u[j];
                    if (t.w != null) {
                        t.w[i] += ow;
                    }
                    boolean same = t.keyBytes != null
                        ? t.keyBytes[i] != null && o.keyBytes[j] != null && Arrays.equals(t.keyBytes[i], o.keyBytes[j])
                        : !t.collided[i] && !o.collided[j] && t.keyNumbers[i] == o.keyNumbers[j];
                    if (!same) {
                        t.collide(i);
                    }
                }
                seen[i] = true;
            }
            for (int i = 0; i < cap; i++) {
                if (t.hm[2 * i + 1] != 0 && !seen[i]) {
                    t.u[i] += other.err;
                }
            }
            err += other.err;
            if (t.size > slack) {
                compact();
            }
        }

        private byte[] key(Table t, int i) {
            if (keyKind == INT) {
                return ByteBuffer.allocate(4).putInt((int) t.keyNumbers[i]).array();  // IntegerSerializer
            }
            if (keyKind == LONG) {
                return ByteBuffer.allocate(8).putLong(t.keyNumbers[i]).array();  // LongSerializer
            }
            return t.keyBytes[i] == null ? new byte[0] : t.keyBytes[i];  // collided: no key
        }

        /** The summary {@link #toBytes} wrote. */
        static Summary fromBytes(byte[] raw, int k, int slack, int keyKind, boolean valued) {
            ByteBuffer in = ByteBuffer.wrap(raw);
            int[] counts = new int[in.getInt()];
            long[][] records = new long[counts.length][];
            long[][] bytes = new long[counts.length][];
            for (int i = 0; i < counts.length; i++) {
                counts[i] = in.getInt();
                records[i] = new long[counts[i]];
                bytes[i] = new long[counts[i]];
                for (int q = 0; q < counts[i]; q++) {
                    records[i][q] = in.getLong();
                }
                for (int q = 0; q < counts[i]; q++) {
                    bytes[i][q] = in.getLong();
                }
            }
            Summary s = new Summary(counts, k, slack, keyKind, valued);
            for (int i = 0; i < counts.length; i++) {
                s.records[i] = records[i];
                s.bytes[i] = bytes[i];
            }
            s.nullRecords = in.getLong();
            s.nullBytes = in.getLong();
            s.unreadable = in.getLong();
            s.err = in.getLong();
            s.total = in.getLong();
            int live = in.getInt();
            int cap = s.table.capacity();
            while (cap < 2 * live) {
                cap <<= 1;
            }
            if (cap != s.table.capacity()) {
                s.table = s.new Table(cap);
            }
            Table t = s.table;
            for (int j = 0; j < live; j++) {
                int hash = in.getInt();
                long mg = in.getLong();
                in.getLong();  // n = mg + err - u
                long u = in.getLong();
                long w = in.getLong();
                boolean coll = in.get() != 0;
                byte[] key = new byte[in.getInt()];
                in.get(key);
                long number = key.length == 4 ? ByteBuffer.wrap(key).getInt()
                    : key.length == 8 ? ByteBuffer.wrap(key).getLong() : 0;
                t.put(t.slot(hash), hash, mg, u, w, key, number, coll);
            }
            return s;
        }

        /** Big-endian: the counts, then per counter hash, mg, n, u, bytes, collided, the serialized key. */
        byte[] toBytes() {
            int cells = 0;
            for (int c : counts) {
                cells += c;
            }
            Table t = table;
            List<byte[]> keys = new ArrayList<>();
            int keyed = 0;
            for (int i = 0; i < t.capacity(); i++) {
                if (t.hm[2 * i + 1] != 0) {
                    byte[] raw = key(t, i);
                    keys.add(raw);
                    keyed += raw.length;
                }
            }
            ByteBuffer out = ByteBuffer.allocate(4 + 4 * counts.length + 16 * cells + 40 + 4 + 41 * t.size + keyed);
            out.putInt(counts.length);
            for (int i = 0; i < counts.length; i++) {
                out.putInt(counts[i]);
                for (long r : records[i]) {
                    out.putLong(r);
                }
                for (long b : bytes[i]) {
                    out.putLong(b);
                }
            }
            out.putLong(nullRecords).putLong(nullBytes).putLong(unreadable).putLong(err).putLong(total);
            out.putInt(t.size);
            int j = 0;
            for (int i = 0; i < t.capacity(); i++) {
                long m = t.hm[2 * i + 1];
                if (m != 0) {
                    byte[] raw = keys.get(j++);
                    long n = m + err - t.u[i];
                    long w = t.w != null ? t.w[i] : n * raw.length;
                    out.putInt((int) t.hm[2 * i]).putLong(m).putLong(n).putLong(t.u[i]).putLong(w);
                    out.put((byte) (t.isCollided(i) ? 1 : 0)).putInt(raw.length).put(raw);
                }
            }
            return out.array();
        }
    }

    /**
     * `skew kafka://…/topic`'s one pass over the rows of Spark's Kafka source as it gives them (`columns`: the
     * positions of key, value, partition and offset; planner/skew/kafkasource.py), key and value read where the row
     * holds them: the {@link Summary} of the keys, as {@link #summarize} makes it (the what-if counts and the hot-key
     * counters; a record's bytes are its key's and value's), and beside it, per partition the records really are in
     * (the first `realPartitions`), its records, bytes, null keys, first and last offsets, the keyed records murmur2
     * puts in another partition, and its `hot` most frequent keys, counted exactly when one task read the whole
     * partition and the task's distinct keys took at most about `keyBudget` bytes of heap (Spark's Kafka
     * source reads each topic-partition in one task unless told to split). Returns {@link TopicSummary#toBytes}.
     */
    public static byte[] summarizeTopic(Object rows, String partitionCounts, int k, int slack, int realPartitions,
                                        int hot, long keyBudget, String columns)
        throws ReflectiveOperationException {
        int[] counts = Arrays.stream(partitionCounts.split(",")).mapToInt(Integer::parseInt).toArray();
        QueryExecution qe = (QueryExecution) rows.getClass().getMethod("queryExecution").invoke(rows);
        return qe.toRdd().toJavaRDD()
            .mapPartitions(new TopicTask(counts, k, slack, realPartitions, hot, keyBudget,
                Arrays.stream(columns.split(",")).mapToInt(Integer::parseInt).toArray()))
            .reduce(new TopicMerge(k, slack, realPartitions));
    }

    /** A key and its records (a partition's hot keys). */
    static final class KeyBytes {
        final byte[] bytes;
        final long records;

        KeyBytes(byte[] bytes, long records) {
            this.bytes = bytes;
            this.records = records;
        }
    }

    /** Spark's order of BINARY (and of strings, by their UTF-8 bytes): unsigned bytes, a prefix first. */
    static int compareBytes(byte[] a, byte[] b) {
        int n = Math.min(a.length, b.length);
        for (int i = 0; i < n; i++) {
            int d = (a[i] & 0xff) - (b[i] & 0xff);
            if (d != 0) {
                return d;
            }
        }
        return a.length - b.length;
    }

    /** Most records first, ties by ascending key (the real pass's order). */
    static final java.util.Comparator<KeyBytes> HOT_ORDER = (a, b) -> {
        int c = Long.compare(b.records, a.records);
        return c != 0 ? c : compareBytes(a.bytes, b.bytes);
    };

    /** Exact records per distinct key of one partition: open addressing by the keys' murmur2, a key's bytes copied
     * once, when it first comes. */
    static final class ExactKeys {
        int[] hashes = new int[1024];
        byte[][] keys = new byte[1024][];
        long[] records = new long[1024];
        int shift = 22;  // 32 - log2(capacity)
        int size;

        /** One record of the key at `offset` of `base`, `length` bytes; the bytes this key added to the table. */
        long add(int hash, Object base, long offset, int length) {
            int mask = keys.length - 1;
            int i = (hash * 0x9E3779B9) >>> shift;
            for (byte[] kept = keys[i]; kept != null; kept = keys[i]) {
                if (hashes[i] == hash && kept.length == length
                    && ByteArrayMethods.arrayEquals(kept, Platform.BYTE_ARRAY_OFFSET, base, offset, length)) {
                    records[i]++;
                    return 0;
                }
                i = (i + 1) & mask;
            }
            byte[] key = new byte[length];
            Platform.copyMemory(base, offset, key, Platform.BYTE_ARRAY_OFFSET, length);
            keys[i] = key;
            hashes[i] = hash;
            records[i] = 1;
            if (2 * ++size > keys.length) {
                grow();
            }
            return 48L + length;  // the array's header and the slot, roughly
        }

        private void grow() {
            int[] oh = hashes;
            byte[][] ok = keys;
            long[] or = records;
            int cap = ok.length * 2;
            hashes = new int[cap];
            keys = new byte[cap][];
            records = new long[cap];
            shift--;
            for (int j = 0; j < ok.length; j++) {
                if (ok[j] != null) {
                    int i = (oh[j] * 0x9E3779B9) >>> shift;
                    while (keys[i] != null) {
                        i = (i + 1) & (cap - 1);
                    }
                    keys[i] = ok[j];
                    hashes[i] = oh[j];
                    records[i] = or[j];
                }
            }
        }

        /** The `hot` keys with the most records, in {@link #HOT_ORDER}. */
        List<KeyBytes> top(int hot) {
            java.util.PriorityQueue<KeyBytes> worst = new java.util.PriorityQueue<>(hot + 1, HOT_ORDER.reversed());
            for (int i = 0; i < keys.length; i++) {
                if (keys[i] == null) {
                    continue;
                }
                if (worst.size() < hot) {
                    worst.add(new KeyBytes(keys[i], records[i]));
                } else {
                    KeyBytes least = worst.peek();
                    if (records[i] > least.records
                        || records[i] == least.records && compareBytes(keys[i], least.bytes) < 0) {
                        worst.poll();
                        worst.add(new KeyBytes(keys[i], records[i]));
                    }
                }
            }
            List<KeyBytes> out = new ArrayList<>(worst);
            out.sort(HOT_ORDER);
            return out;
        }
    }

    /** One task of {@link #summarizeTopic}. */
    static final class TopicTask implements FlatMapFunction<Iterator<InternalRow>, byte[]> {
        private static final long serialVersionUID = 1L;
        private final int[] counts;
        private final int k;
        private final int slack;
        private final int n;
        private final int hot;
        private final long keyBudget;
        private final int[] columns;

        TopicTask(int[] counts, int k, int slack, int n, int hot, long keyBudget, int[] columns) {
            this.counts = counts;
            this.k = k;
            this.slack = slack;
            this.n = n;
            this.hot = hot;
            this.keyBudget = keyBudget;
            this.columns = columns;
        }

        @Override
        public Iterator<byte[]> call(Iterator<InternalRow> rows) {
            final int keyAt = columns[0];
            final int valueAt = columns[1];
            final int partitionAt = columns[2];
            final int offsetAt = columns[3];
            Summary s = new Summary(counts, k, slack, BINARY, true);
            TopicSummary t = new TopicSummary(s, n);
            ExactKeys[] keys = new ExactKeys[n];
            long used = 0;
            boolean counting = hot > 0;
            while (rows.hasNext()) {
                InternalRow row = rows.next();
                // UnsafeRow (what the source's scan gives): the key and value as views of the row's bytes, no copy
                boolean unsafe = row instanceof UnsafeRow;
                long value = row.isNullAt(valueAt) ? 0L
                    : unsafe ? row.getUTF8String(valueAt).numBytes() : row.getBinary(valueAt).length;
                int p = row.getInt(partitionAt);
                boolean real = p >= 0 && p < n;  // a partition added since the count was read: the what-if only
                if (real) {
                    long offset = row.getLong(offsetAt);
                    t.records[p]++;
                    t.first[p] = Math.min(t.first[p], offset);
                    t.last[p] = Math.max(t.last[p], offset);
                    t.tasks[p] = 1;
                }
                if (row.isNullAt(keyAt)) {
                    s.nullRecords++;
                    s.nullBytes += value;
                    if (real) {
                        t.nullKeys[p]++;
                        t.bytes[p] += value;
                    }
                    continue;
                }
                UTF8String key = unsafe ? row.getUTF8String(keyAt) : UTF8String.fromBytes(row.getBinary(keyAt));
                int hash = s.addView(key, value);
                if (!real) {
                    continue;
                }
                t.bytes[p] += key.numBytes() + value;
                if (toPositive(hash) % n != p) {
                    t.misplaced[p]++;
                }
                if (counting) {
                    ExactKeys m = keys[p];
                    if (m == null) {
                        m = keys[p] = new ExactKeys();
                    }
                    used += m.add(hash, key.getBaseObject(), key.getBaseOffset(), key.numBytes());
                    if (used > keyBudget) {
                        counting = false;  // too many keys for this task: its partitions' hot keys are counted by Spark
                        Arrays.fill(keys, null);
                    }
                }
            }
            for (int p = 0; p < n; p++) {
                if (t.tasks[p] > 0 && (counting || hot == 0)) {
                    t.exact[p] = true;
                    t.top[p] = keys[p] == null ? new ArrayList<>() : keys[p].top(hot);
                }
            }
            return Collections.singletonList(t.toBytes()).iterator();
        }
    }

    /** Two tasks' topic summaries into one. */
    static final class TopicMerge implements Function2<byte[], byte[], byte[]> {
        private static final long serialVersionUID = 1L;
        private final int k;
        private final int slack;
        private final int n;

        TopicMerge(int k, int slack, int n) {
            this.k = k;
            this.slack = slack;
            this.n = n;
        }

        @Override
        public byte[] call(byte[] a, byte[] b) {
            TopicSummary s = TopicSummary.fromBytes(a, k, slack);
            s.merge(TopicSummary.fromBytes(b, k, slack));
            return s.toBytes();
        }
    }

    /** {@link #summarizeTopic}'s result: the keys' {@link Summary} and the real partitions' figures. */
    static final class TopicSummary {
        final Summary summary;
        final int n;
        final long[] records;
        final long[] bytes;
        final long[] nullKeys;
        final long[] first;
        final long[] last;
        final long[] misplaced;
        final int[] tasks;  // the tasks that read records of the partition (more than one: its hot keys are not exact)
        final boolean[] exact;  // top holds the partition's exact hot keys
        final List<KeyBytes>[] top;

        @SuppressWarnings("unchecked")
        TopicSummary(Summary summary, int n) {
            this.summary = summary;
            this.n = n;
            records = new long[n];
            bytes = new long[n];
            nullKeys = new long[n];
            first = new long[n];
            last = new long[n];
            misplaced = new long[n];
            tasks = new int[n];
            exact = new boolean[n];
            top = new List[n];
            Arrays.fill(first, Long.MAX_VALUE);
            Arrays.fill(last, Long.MIN_VALUE);
        }

        void merge(TopicSummary o) {
            summary.merge(o.summary);
            for (int p = 0; p < n; p++) {
                if (o.tasks[p] == 0) {
                    continue;
                }
                if (tasks[p] == 0) {
                    exact[p] = o.exact[p];
                    top[p] = o.top[p];
                } else {
                    exact[p] = false;
                    top[p] = null;
                }
                tasks[p] += o.tasks[p];
                records[p] += o.records[p];
                bytes[p] += o.bytes[p];
                nullKeys[p] += o.nullKeys[p];
                misplaced[p] += o.misplaced[p];
                first[p] = Math.min(first[p], o.first[p]);
                last[p] = Math.max(last[p], o.last[p]);
            }
        }

        /** Big-endian: the summary's length and {@link Summary#toBytes}; the partition count; per partition records,
         * bytes, null keys, first and last offsets, misplaced records, tasks, exact, then its hot keys (count, then
         * per key records, length, bytes). */
        byte[] toBytes() {
            byte[] head = summary.toBytes();
            int size = 4 + head.length + 4;
            for (int p = 0; p < n; p++) {
                size += 6 * 8 + 4 + 1 + 4;
                if (top[p] != null) {
                    for (KeyBytes e : top[p]) {
                        size += 8 + 4 + e.bytes.length;
                    }
                }
            }
            ByteBuffer out = ByteBuffer.allocate(size);
            out.putInt(head.length).put(head).putInt(n);
            for (int p = 0; p < n; p++) {
                out.putLong(records[p]).putLong(bytes[p]).putLong(nullKeys[p]).putLong(first[p]).putLong(last[p])
                    .putLong(misplaced[p]).putInt(tasks[p]).put((byte) (exact[p] ? 1 : 0));
                List<KeyBytes> keys = top[p];
                out.putInt(keys == null ? 0 : keys.size());
                if (keys != null) {
                    for (KeyBytes e : keys) {
                        out.putLong(e.records).putInt(e.bytes.length).put(e.bytes);
                    }
                }
            }
            return out.array();
        }

        static TopicSummary fromBytes(byte[] raw, int k, int slack) {
            ByteBuffer in = ByteBuffer.wrap(raw);
            byte[] head = new byte[in.getInt()];
            in.get(head);
            TopicSummary t = new TopicSummary(Summary.fromBytes(head, k, slack, BINARY, true), in.getInt());
            for (int p = 0; p < t.n; p++) {
                t.records[p] = in.getLong();
                t.bytes[p] = in.getLong();
                t.nullKeys[p] = in.getLong();
                t.first[p] = in.getLong();
                t.last[p] = in.getLong();
                t.misplaced[p] = in.getLong();
                t.tasks[p] = in.getInt();
                t.exact[p] = in.get() != 0;
                int keys = in.getInt();
                if (t.exact[p]) {
                    t.top[p] = new ArrayList<>();
                }
                for (int j = 0; j < keys; j++) {
                    long c = in.getLong();
                    byte[] key = new byte[in.getInt()];
                    in.get(key);
                    t.top[p].add(new KeyBytes(key, c));
                }
            }
            return t;
        }
    }
}
