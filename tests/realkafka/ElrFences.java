/*
 * Brokers fenced one at a time by Kafka's own PartitionChangeBuilder (kafka-metadata of .kafka/<version>/lib), as
 * ReplicationControlManager.generateLeaderAndIsrUpdates runs it for handleBrokerFenced: the fenced broker out of the
 * target ISR, acceptable leaders the brokers still unfenced, ELR enabled, UNCLEAN election when the topic allows it,
 * each record merged into the registration before the next fence. Driven by tests/realkafka/test_elr_fences.py.
 *
 * stdin, one case a line: replicas|isr|elr|lastKnownElr|leader|minIsr|unclean(0/1)|live brokers (comma lists)
 * stdout, one line a case: leader|isr|elr|lastKnownElr
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.controller.PartitionChangeBuilder;
import org.apache.kafka.metadata.LeaderRecoveryState;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;

public class ElrFences {
    private static final Uuid DIR = Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAA");

    static int[] ints(String s) {
        return s.isEmpty() ? new int[0] : Arrays.stream(s.split(",")).mapToInt(Integer::parseInt).toArray();
    }

    static String text(int[] a) {
        return Arrays.stream(a).mapToObj(String::valueOf).collect(Collectors.joining(","));
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\\|", -1);
            int[] replicas = ints(f[0]);
            Uuid[] dirs = new Uuid[replicas.length];
            Arrays.fill(dirs, DIR);
            PartitionRegistration p = new PartitionRegistration.Builder().setReplicas(replicas).setDirectories(dirs)
                .setIsr(ints(f[1])).setElr(ints(f[2])).setLastKnownElr(ints(f[3])).setLeader(Integer.parseInt(f[4]))
                .setLeaderRecoveryState(LeaderRecoveryState.RECOVERED).setLeaderEpoch(0).setPartitionEpoch(0).build();
            int minIsr = Integer.parseInt(f[5]);
            boolean unclean = f[6].equals("1");
            Set<Integer> live = Arrays.stream(ints(f[7])).boxed().collect(Collectors.toSet());
            List<Integer> going = Arrays.stream(p.isr).filter(b -> !live.contains(b)).sorted().boxed()
                .collect(Collectors.toList());
            for (int i = 0; i < going.size(); i++) {
                int fenced = going.get(i);
                Set<Integer> later = new HashSet<>(going.subList(i + 1, going.size()));
                if (Arrays.stream(p.isr).noneMatch(b -> b == fenced)) continue;
                PartitionChangeBuilder builder = new PartitionChangeBuilder(p, Uuid.ONE_UUID, 0,
                    r -> r != fenced && (live.contains(r) || later.contains(r)),
                    MetadataVersion.latestProduction(), minIsr, true);
                if (unclean) builder.setElection(PartitionChangeBuilder.Election.UNCLEAN);
                builder.setTargetIsr(Arrays.stream(p.isr).filter(b -> b != fenced).boxed().collect(Collectors.toList()));
                builder.setDefaultDirProvider(u -> DIR);
                Optional<ApiMessageAndVersion> record = builder.build();
                if (record.isPresent()) p = p.merge((PartitionChangeRecord) record.get().message());
            }
            System.out.println(p.leader + "|" + text(p.isr) + "|" + text(p.elr) + "|" + text(p.lastKnownElr));
        }
    }
}
