"""The Java iteration orders the sticky general path depends on, checked against a real JVM: the first element of a
java.util.HashSet<TopicPartition> after adds and removes (PartitionMovements.getTheActualPartitionToBeMoved) and the
key order of a java.util.HashMap of member ids (the subscriptions map). Compiles a small Java program with the JDK."""

import base64
import random
import subprocess

from planner.assignors.sticky_general import _JavaHashSet
from planner.assignors.uniform import topic_order
from planner.java import hashmap_order
from planner.model import TopicPartition as TP

JAVA = """\
import java.io.*;
import java.util.*;

public class Orders {
    static final class TP {  // org.apache.kafka.common.TopicPartition's equals and hashCode
        final String topic; final int partition;
        TP(String t, int p) { topic = t; partition = p; }
        @Override public int hashCode() { int r = 31 + partition; return 31 * r + topic.hashCode(); }
        @Override public boolean equals(Object o) {
            return o instanceof TP && ((TP) o).partition == partition && ((TP) o).topic.equals(topic);
        }
    }

    static final class Uuid {  // org.apache.kafka.common.Uuid's fromString, equals and hashCode
        final long msb, lsb;
        Uuid(String base64) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(Base64.getUrlDecoder().decode(base64));
            msb = b.getLong(); lsb = b.getLong();
        }
        @Override public int hashCode() { long h = msb ^ lsb; return (int) (h >> 32) ^ (int) h; }
        @Override public boolean equals(Object o) {
            return o instanceof Uuid && ((Uuid) o).msb == msb && ((Uuid) o).lsb == lsb;
        }
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        PrintWriter out = new PrintWriter(new OutputStreamWriter(System.out, "UTF-8"));
        Set<TP> set = new HashSet<>();
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split(" ");
            if (f[0].equals("new")) set = new HashSet<>();
            else if (f[0].equals("add")) set.add(new TP(f[1], Integer.parseInt(f[2])));
            else if (f[0].equals("rm")) set.remove(new TP(f[1], Integer.parseInt(f[2])));
            else if (f[0].equals("first")) { TP t = set.iterator().next(); out.println(t.topic + " " + t.partition); }
            else if (f[0].equals("uuids")) {  // new HashSet<>(topic ids), as UniformHomogeneousAssignmentBuilder
                List<Uuid> ids = new ArrayList<>();
                Map<Uuid, String> text = new HashMap<>();
                for (int i = 1; i < f.length; i++) { Uuid u = new Uuid(f[i]); ids.add(u); text.put(u, f[i]); }
                List<String> order = new ArrayList<>();
                for (Uuid u : new HashSet<>(ids)) order.add(text.get(u));
                out.println(String.join(" ", order));
            }
            else if (f[0].equals("map")) {
                Map<String, Integer> map = new HashMap<>();
                for (int i = 1; i < f.length; i++) map.put(f[i], i);
                out.println(String.join(" ", map.keySet()));
            }
        }
        out.flush();
    }
}
"""


def test_hashset_first_and_hashmap_order_match_the_jvm(tmp_path):
    rnd = random.Random(20261123)
    commands, expected = [], []
    for _ in range(150):
        s = _JavaHashSet()
        commands.append("new")
        topics = [f"t{rnd.randint(0, 30)}" for _ in range(rnd.randint(1, 4))] + ["orders", "topic-é"]
        for _ in range(rnd.randint(1, 100)):
            if s.items and rnd.random() < 0.3:
                victim = rnd.choice(list(s.items))
                s.remove(victim)
                commands.append(f"rm {victim.topic} {victim.partition}")
            else:
                tp = TP(rnd.choice(topics), rnd.randint(0, 200))
                s.add(tp)
                commands.append(f"add {tp.topic} {tp.partition}")
            if len(s):
                first = s.first()
                commands.append("first")
                expected.append(f"{first.topic} {first.partition}")
    for _ in range(150):
        ids = list(
            dict.fromkeys(
                f"consumer-{rnd.randint(0, 999)}-{rnd.getrandbits(32):08x}" for _ in range(rnd.randint(1, 60))
            )
        )
        commands.append("map " + " ".join(ids))
        expected.append(" ".join(hashmap_order(ids)))
    # the uniform assignor's walk over topics: a HashSet of topic ids (Uuid.hashCode); ids with '-' and '_' included
    six_brokers = {"orders": "NPmZHyhbR9y00wMglMH2sg", "clicks": "z1cU0CvPQWi0aB6Ty9xYkw"}
    for _ in range(150):
        names = [f"topic-{i}" for i in range(rnd.randint(1, 40))]
        ids = {
            t: base64.urlsafe_b64encode(rnd.getrandbits(128).to_bytes(16, "big")).decode().rstrip("=") for t in names
        }
        ids["-_"] = "-_-_-_-_-_-_-_-_-_-_-w"
        for topic_ids in (ids, six_brokers):
            order = topic_order(list(topic_ids), topic_ids)
            commands.append(
                "uuids " + " ".join(topic_ids[t] for t in sorted(topic_ids))
            )  # inserted in name order, as the planner
            expected.append(" ".join(topic_ids[t] for t in order))
    assert topic_order(["orders", "clicks"], six_brokers) == ["orders", "clicks"]
    (tmp_path / "Orders.java").write_text(JAVA)
    subprocess.run(["javac", "-encoding", "UTF-8", "Orders.java"], cwd=tmp_path, check=True)
    run = subprocess.run(
        ["java", "-cp", str(tmp_path), "Orders"],
        input="\n".join(commands) + "\n",
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    got = run.stdout.splitlines()
    assert len(got) == len(expected) > 5000
    assert got == expected
