/*
 * Kafka's own KIP-848 server-side `uniform` assignor (UniformAssignor of kafka-group-coordinator in
 * .kafka/<version>/lib: UniformHomogeneousAssignmentBuilder / UniformHeterogeneousAssignmentBuilder), fed the GroupSpec
 * the group coordinator builds (TargetAssignmentBuilder.build): a HashMap of member id -> subscription and current
 * target assignment, each assignment an unmodifiable HashMap of topic id -> HashSet of partitions (as
 * Assignment.fromRecord replays it), the inverted assignment, and HOMOGENEOUS when every member subscribes to the same
 * topics (ModernGroup.subscriptionType). Driven by tests/realkafka/test_uniform_assignor.py.
 *
 * The members map is walked as the coordinator walks it: the group's members (ModernGroup.members, a real
 * TimelineHashMap of server-common, here the members holding a target assignment, put in the order they joined),
 * then the members joining now (UpdatedMembersAndTargetAssignmentView's OverlayMap adds the heartbeating member after
 * the map's), each put into the HashMap in that order.
 *
 * stdin, one case a line: topics|members
 *   topics:  name/topicId/partitions,...
 *   members: memberId/topic+topic/topic:p+topic:p;...   (in the order they joined; each member's current target
 *            assignment in the order of its ConsumerGroupTargetAssignmentMemberValue record)
 * stdout, one line a case: memberId=topic:p+topic:p;... (members in input order, partitions in the iteration order of
 *   the new target assignment: what the next target-assignment record of the member lists)
 *   or "!" and the PartitionAssignorException's message.
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.*;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;
import org.apache.kafka.timeline.SnapshotRegistry;
import org.apache.kafka.timeline.TimelineHashMap;

public class UniformCases {
    static List<String> split(String s, String sep) {
        return s.isEmpty() ? List.of() : Arrays.asList(s.split(java.util.regex.Pattern.quote(sep), -1));
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        UniformAssignor assignor = new UniformAssignor();
        StringBuilder out = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split("\\|", -1);
            Map<String, Uuid> ids = new HashMap<>();
            Map<Uuid, String> names = new HashMap<>();
            Map<Uuid, Integer> counts = new HashMap<>();
            for (String t : split(parts[0], ",")) {
                String[] f = t.split("/");
                Uuid id = Uuid.fromString(f[1]);
                ids.put(f[0], id);
                names.put(id, f[0]);
                counts.put(id, Integer.parseInt(f[2]));
            }
            TimelineHashMap<String, MemberSubscriptionAndAssignmentImpl> joined =
                new TimelineHashMap<>(new SnapshotRegistry(new LogContext()), 0);
            Map<String, MemberSubscriptionAndAssignmentImpl> joining = new LinkedHashMap<>();
            Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
            List<String> order = new ArrayList<>();
            Set<Set<String>> subscriptions = new HashSet<>();
            for (String m : split(parts[1], ";")) {
                String[] f = m.split("/", -1);
                String memberId = f[0];
                order.add(memberId);
                Set<String> subscribed = new LinkedHashSet<>(split(f[1], "+"));
                subscriptions.add(subscribed);
                // TopicIds: the subscribed names that exist in the metadata, as ids
                Set<Uuid> topicIds = new LinkedHashSet<>();
                for (String name : subscribed) if (ids.containsKey(name)) topicIds.add(ids.get(name));
                // Assignment.fromRecord: the record's topics in order, Collectors.toMap (putIfAbsent into a HashMap),
                // each topic's partitions as new HashSet<>(list)
                Map<Uuid, List<Integer>> record = new LinkedHashMap<>();
                for (String tp : split(f[2], "+")) {
                    int colon = tp.lastIndexOf(':');
                    Uuid id = ids.get(tp.substring(0, colon));
                    int p = Integer.parseInt(tp.substring(colon + 1));
                    record.computeIfAbsent(id, k -> new ArrayList<>()).add(p);
                    inverted.computeIfAbsent(id, k -> new HashMap<>()).put(p, memberId);
                }
                Map<Uuid, Set<Integer>> held = new HashMap<>();
                for (Map.Entry<Uuid, List<Integer>> e : record.entrySet()) held.putIfAbsent(e.getKey(), new HashSet<>(e.getValue()));
                MemberSubscriptionAndAssignmentImpl spec = new MemberSubscriptionAndAssignmentImpl(
                    Optional.empty(), Optional.empty(), topicIds, new Assignment(held));
                (held.isEmpty() ? joining : joined).put(memberId, spec);
            }
            Map<String, MemberSubscriptionAndAssignmentImpl> members = new HashMap<>();
            joined.forEach(members::put);
            joining.forEach(members::put);
            SubscriptionType type = subscriptions.size() <= 1 ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
            SubscribedTopicDescriber describer = new SubscribedTopicDescriber() {
                public int numPartitions(Uuid topicId) {
                    return counts.getOrDefault(topicId, -1);
                }

                public Set<String> racksForPartition(Uuid topicId, int partition) {
                    return Set.of();
                }
            };
            try {
                GroupAssignment result = assignor.assign(
                    new GroupSpecImpl(Collections.unmodifiableMap(members), type, inverted), describer);
                List<String> rows = new ArrayList<>();
                for (String memberId : order) {
                    MemberAssignment a = result.members().get(memberId);
                    List<String> tps = new ArrayList<>();
                    if (a != null) {
                        for (Map.Entry<Uuid, Set<Integer>> e : a.partitions().entrySet()) {
                            for (int p : e.getValue()) tps.add(names.get(e.getKey()) + ":" + p);
                        }
                    }
                    rows.add(memberId + "=" + String.join("+", tps));
                }
                out.append(String.join(";", rows)).append('\n');
            } catch (PartitionAssignorException e) {
                out.append("!").append(e.getMessage()).append('\n');
            }
        }
        System.out.print(out);
    }
}
