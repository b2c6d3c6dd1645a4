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

import java.io.Serializable;
import java.nio.ByteBuffer;
import java.util.Arrays;

import org.apache.spark.sql.Encoder;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.expressions.Aggregator;
import org.apache.spark.sql.functions;

import scala.Tuple3;

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

    /**
     * The skew job's whole counting pass as one aggregate over (murmur2 of the key or null, record bytes, unreadable):
     * records and bytes per partition for every partition count, null-key and unreadable rows, and a Misra-Gries
     * summary of the hashes (hot-key candidates with a proven error bound; see planner/skew/heavy.py). Registered with
     * {@link #registerSkewSummary}; the result is one BINARY value, decoded by planner/skew/jvmcount.py.
     */
    public static final class SkewSummary extends Aggregator<Tuple3<Integer, Long, Boolean>, Summary, byte[]> {
        private final int[] counts;
        private final int k;

        public SkewSummary(int[] counts, int k) {
            this.counts = counts.clone();
            this.k = k;
        }

        @Override
        public Summary zero() {
            return new Summary(counts, k);
        }

        @Override
        public Summary reduce(Summary s, Tuple3<Integer, Long, Boolean> row) {
            s.add(row._1(), row._2() == null ? 0L : row._2(), Boolean.TRUE.equals(row._3()));
            return s;
        }

        @Override
        public Summary merge(Summary a, Summary b) {
            a.merge(b);
            return a;
        }

        @Override
        public byte[] finish(Summary s) {
            return s.toBytes();
        }

        @Override
        public Encoder<Summary> bufferEncoder() {
            return Encoders.javaSerialization(Summary.class);
        }

        @Override
        public Encoder<byte[]> outputEncoder() {
            return Encoders.BINARY();
        }
    }

    /** Registers {@link SkewSummary} as the SQL aggregate `name`(hash INT, bytes BIGINT, unreadable BOOLEAN). */
    public static void registerSkewSummary(SparkSession spark, String name, String partitionCounts, int k) {
        int[] counts = Arrays.stream(partitionCounts.split(",")).mapToInt(Integer::parseInt).toArray();
        spark.udf().register(
            name, functions.udaf(new SkewSummary(counts, k), Encoders.tuple(Encoders.INT(), Encoders.LONG(), Encoders.BOOLEAN())));
    }

    /** The buffer of {@link SkewSummary}. */
    public static final class Summary implements Serializable {
        private static final long serialVersionUID = 1L;
        final int[] counts;
        final long[][] records;
        final long[][] bytes;
        long nullRecords;
        long nullBytes;
        long unreadable;
        // Misra-Gries: up to `slack` (>= 2k) counters between compactions, in an open-addressing table; compacting
        // seldom keeps err small (each compaction adds the (k+1)-th largest count, often 1, to it)
        final int k;
        final int slack;
        int[] keys;
        long[] tally;  // 0: empty slot
        int size;
        long err;
        long total;

        Summary(int[] counts, int k) {
            this.counts = counts;
            this.records = new long[counts.length][];
            this.bytes = new long[counts.length][];
            for (int i = 0; i < counts.length; i++) {
                records[i] = new long[counts[i]];
                bytes[i] = new long[counts[i]];
            }
            this.k = k;
            this.slack = Math.max(2 * k, 1 << 16);
            int cap = Integer.highestOneBit(2 * slack - 1) << 1;
            this.keys = new int[cap];
            this.tally = new long[cap];
        }

        void add(Integer hash, long size, boolean bad) {
            if (bad) {
                unreadable++;
            } else if (hash == null) {
                nullRecords++;
                nullBytes += size;
            } else {
                int p = toPositive(hash);
                for (int i = 0; i < counts.length; i++) {
                    int q = p % counts[i];
                    records[i][q]++;
                    bytes[i][q] += size;
                }
                total++;
                count(hash, 1L);
            }
        }

        private void count(int hash, long n) {
            int mask = keys.length - 1;
            int i = (hash * 0x9E3779B9) >>> 7 & mask;
            while (tally[i] != 0 && keys[i] != hash) {
                i = (i + 1) & mask;
            }
            if (tally[i] == 0) {
                keys[i] = hash;
                size++;
            }
            tally[i] += n;
            if (size > slack) {
                compact();
            }
        }

        /** Subtract the (k+1)-th largest count from every counter (those at or below it drop out): err += it. */
        private void compact() {
            long[] live = new long[size];
            int j = 0;
            for (long t : tally) {
                if (t != 0) {
                    live[j++] = t;
                }
            }
            Arrays.sort(live);
            long c = live[live.length - k - 1];
            int[] oldKeys = keys;
            long[] oldTally = tally;
            keys = new int[oldKeys.length];
            tally = new long[oldTally.length];
            size = 0;
            err += c;
            for (int i = 0; i < oldKeys.length; i++) {
                if (oldTally[i] > c) {
                    count(oldKeys[i], oldTally[i] - c);
                }
            }
        }

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
            err += other.err;
            for (int i = 0; i < other.keys.length; i++) {
                if (other.tally[i] != 0) {
                    count(other.keys[i], other.tally[i]);
                }
            }
        }

        byte[] toBytes() {
            int n = 0;
            for (int c : counts) {
                n += c;
            }
            ByteBuffer out = ByteBuffer.allocate(4 + 4 * counts.length + 16 * n + 40 + 4 + 12 * size);
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
            out.putInt(size);
            for (int i = 0; i < keys.length; i++) {
                if (tally[i] != 0) {
                    out.putInt(keys[i]).putLong(tally[i]);
                }
            }
            return out.array();
        }
    }
}
