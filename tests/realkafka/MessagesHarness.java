// Kafka's own Java clients (kafka-clients of .kafka/<version>/lib) for tests/realkafka/test_messages.py, run as
// `java -cp <jars> MessagesHarness.java <mode> ...` (Java 11+ runs a single source file).
//
//   produce <bootstrap> <topic> string|bytes|null <count-or-keyfile>
//       string: each line of the file is a key, StringSerializer (UTF-8); bytes: each line is the key's bytes in hex,
//       ByteArraySerializer; null: <count> records without a key. The default partitioner in every case (no
//       partitioner.class). Prints one line per record: "<partition> <offset>".
//   txn <bootstrap> <transactional id>...
//       a transactional producer per id: initTransactions() (FindCoordinator, InitProducerId) and one committed
//       transaction, so the id is listed by kafka-transactions.sh with its coordinator.
//   group <bootstrap> <group id> <protocol classic|consumer> <assignor> <topic,topic...>
//       then reads commands on stdin: "add <client id>" starts a consumer (its own thread) with that client.id,
//       "wait <n> <partitions>" waits until the group is Stable with n members holding <partitions> partitions in all
//       and prints a line "@member <member id> <client id> <topic-partition,...>" per member, then "@stable"
//       (lines without "@" are the clients' logs); end of input closes every consumer (leaving the group) and exits.
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.*;
import org.apache.kafka.common.serialization.*;

public class MessagesHarness {
    public static void main(String[] args) throws Exception {
        if (args[0].equals("produce")) produce(args[1], args[2], args[3], args[4]);
        else if (args[0].equals("txn")) txn(args[1], Arrays.copyOfRange(args, 2, args.length));
        else group(args[1], args[2], args[3], args[4], args[5]);
    }

    static byte[] hex(String s) {
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return b;
    }

    static void produce(String bootstrap, String topic, String kind, String source) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        p.put("linger.ms", "50");
        p.put("key.serializer", kind.equals("string") ? StringSerializer.class.getName() : ByteArraySerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<Object, String> producer = new KafkaProducer<>(p)) {
            if (kind.equals("null")) {
                for (int i = 0; i < Integer.parseInt(source); i++) sent.add(producer.send(new ProducerRecord<>(topic, null, "v" + i)));
            } else {
                for (String line : Files.readAllLines(Path.of(source), StandardCharsets.UTF_8)) {
                    Object key = kind.equals("string") ? line : hex(line);
                    sent.add(producer.send(new ProducerRecord<>(topic, key, "v")));
                }
            }
            producer.flush();
            for (Future<RecordMetadata> f : sent) {
                RecordMetadata m = f.get();
                System.out.println(m.partition() + " " + m.offset());
            }
        }
    }

    static void txn(String bootstrap, String[] ids) throws Exception {
        for (String id : ids) {
            Properties p = new Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("transactional.id", id);
            p.put("key.serializer", StringSerializer.class.getName());
            p.put("value.serializer", StringSerializer.class.getName());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
                producer.initTransactions();
                producer.beginTransaction();
                producer.commitTransaction();
            }
        }
    }

    static void group(String bootstrap, String groupId, String protocol, String assignor, String topics) throws Exception {
        List<Thread> threads = new ArrayList<>();
        List<KafkaConsumer<byte[], byte[]>> consumers = new CopyOnWriteArrayList<>();
        volatile_stop[0] = false;
        Properties ap = new Properties();
        ap.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(ap); Scanner in = new Scanner(System.in)) {
            while (in.hasNextLine()) {
                String[] cmd = in.nextLine().trim().split(" ");
                if (cmd[0].equals("add")) {
                    Properties p = new Properties();
                    p.put("bootstrap.servers", bootstrap);
                    p.put("group.id", groupId);
                    p.put("client.id", cmd[1]);
                    p.put("group.protocol", protocol);
                    if (protocol.equals("classic")) {
                        p.put("partition.assignment.strategy", assignor);
                        p.put("session.timeout.ms", "10000");
                        p.put("heartbeat.interval.ms", "500");
                    } else {
                        p.put("group.remote.assignor", assignor);
                    }
                    p.put("enable.auto.commit", "false");
                    p.put("key.deserializer", ByteArrayDeserializer.class.getName());
                    p.put("value.deserializer", ByteArrayDeserializer.class.getName());
                    KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p);
                    consumers.add(c);
                    Thread t = new Thread(() -> {
                        c.subscribe(Arrays.asList(topics.split(",")));
                        try {
                            while (!volatile_stop[0]) c.poll(Duration.ofMillis(100));
                        } catch (org.apache.kafka.common.errors.WakeupException e) {
                            // closing
                        } finally {
                            c.close(Duration.ofSeconds(5));
                        }
                    });
                    t.start();
                    threads.add(t);
                } else if (cmd[0].equals("wait")) {
                    ConsumerGroupDescription d = waitStable(admin, groupId, Integer.parseInt(cmd[1]), Integer.parseInt(cmd[2]));
                    for (MemberDescription m : d.members()) {
                        List<String> tps = new ArrayList<>();
                        for (TopicPartition tp : m.assignment().topicPartitions()) tps.add(tp.toString());
                        System.out.println("@member " + m.consumerId() + " " + m.clientId() + " " + String.join(",", tps));
                    }
                    System.out.println("@stable");
                    System.out.flush();
                }
            }
        } finally {
            volatile_stop[0] = true;
            for (KafkaConsumer<byte[], byte[]> c : consumers) c.wakeup();
            for (Thread t : threads) t.join(15000);
        }
    }

    static final boolean[] volatile_stop = new boolean[1];

    static ConsumerGroupDescription waitStable(Admin admin, String groupId, int members, int partitions) throws Exception {
        long deadline = System.currentTimeMillis() + 60000;
        int quiet = 0;
        String last = "";
        while (System.currentTimeMillis() < deadline) {
            ConsumerGroupDescription d;
            try {
                d = admin.describeConsumerGroups(List.of(groupId)).all().get().get(groupId);
            } catch (ExecutionException e) {
                // a KIP-848 group exists only once its first member's heartbeat reached the coordinator
                if (!(e.getCause() instanceof org.apache.kafka.common.errors.GroupIdNotFoundException)) throw e;
                Thread.sleep(100);
                continue;
            }
            int assigned = 0;
            Set<TopicPartition> seen = new HashSet<>();
            for (MemberDescription m : d.members()) {
                assigned += m.assignment().topicPartitions().size();
                seen.addAll(m.assignment().topicPartitions());
            }
            String now = d.groupState() + " " + d.members().size() + " " + assigned + " " + seen.size();
            boolean ok = d.groupState() == GroupState.STABLE && d.members().size() == members && assigned == partitions
                && seen.size() == partitions;
            // the same Stable answer three times in a row (300 ms): no rebalance pending behind it
            quiet = ok && now.equals(last) ? quiet + 1 : (ok ? 1 : 0);
            last = now;
            if (quiet >= 3) return d;
            Thread.sleep(100);
        }
        throw new RuntimeException("group " + groupId + " not stable: " + last);
    }
}
