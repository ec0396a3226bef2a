import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;

/**
 * The seeds' StringStringMapTest shape with the official Java client (hazelcast-5.6.0.jar):
 * 10,000 String keys of 20 characters, 1,000 distinct values of 100 characters, `threads`
 * threads doing map.get (or map.set with probability `putProb`) on random keys. Loads the keys,
 * warms up, then measures; with a server pid it adds the server's CPU seconds (user + system
 * from /proc/pid/stat) over the measured window. Prints one JSON line.
 *
 * <pre>
 *   java -cp hazelcast-5.6.0.jar scripts/lib/JavaClientBench.java ADDRESS THREADS WARMUP_S SECONDS PUT_PROB [SERVER_PID]
 * </pre>
 */
public final class JavaClientBench {
    private static final int KEYS = 10_000;
    private static final int VALUES = 1_000;

    private JavaClientBench() {
    }

    static String text(String prefix, int index, int length) {
        StringBuilder builder = new StringBuilder(prefix).append(index);
        while (builder.length() < length) {
            builder.insert(prefix.length(), '0');
        }
        return builder.toString();
    }

    /** User + system seconds of a process, or -1 without /proc. */
    static double cpuSeconds(long pid) {
        return pid <= 0 ? -1 : cpuSeconds(Long.toString(pid));
    }

    /** User + system seconds of a process ("self" for this one), or -1 without /proc. */
    static double cpuSeconds(String pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            // Fields 14 and 15 of stat (utime, stime) are 11 and 12 after the name.
            return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / 100.0;
        } catch (Exception error) {
            return -1;
        }
    }

    public static void main(String[] args) throws Exception {
        String address = args[0];
        int threads = Integer.parseInt(args[1]);
        double warmup = Double.parseDouble(args[2]);
        double seconds = Double.parseDouble(args[3]);
        double putProb = Double.parseDouble(args[4]);
        long serverPid = args.length > 5 ? Long.parseLong(args[5]) : -1;

        ClientConfig config = new ClientConfig();
        config.setClusterName("dev");
        config.getNetworkConfig().addAddress(address);
        config.setProperty("hazelcast.client.statistics.enabled", "false");
        HazelcastInstance client = HazelcastClient.newHazelcastClient(config);
        IMap<String, String> map = client.getMap("map");
        String[] keys = new String[KEYS];
        String[] values = new String[VALUES];
        for (int index = 0; index < KEYS; index++) {
            keys[index] = text("k", index, 20);
        }
        for (int index = 0; index < VALUES; index++) {
            values[index] = text("v", index, 100);
        }
        for (int index = 0; index < KEYS; index++) {
            map.set(keys[index], values[index % VALUES]);
        }

        LongAdder operations = new LongAdder();
        LongAdder misses = new LongAdder();
        long end = System.nanoTime() + (long) ((warmup + seconds) * 1e9);
        Thread[] workers = new Thread[threads];
        for (int index = 0; index < threads; index++) {
            workers[index] = new Thread(() -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                while (System.nanoTime() < end) {
                    String key = keys[random.nextInt(KEYS)];
                    if (putProb > 0 && random.nextDouble() < putProb) {
                        map.set(key, values[random.nextInt(VALUES)]);
                    } else if (map.get(key) == null) {
                        misses.increment();
                    }
                    operations.increment();
                }
            });
            workers[index].start();
        }
        Thread.sleep((long) (warmup * 1000));
        long startOps = operations.sum();
        double startCpu = cpuSeconds(serverPid);
        long startNanos = System.nanoTime();
        Thread.sleep((long) (seconds * 1000));
        long measured = operations.sum() - startOps;
        double elapsed = (System.nanoTime() - startNanos) / 1e9;
        double cpu = cpuSeconds(serverPid) - startCpu;
        for (Thread worker : workers) {
            worker.join();
        }
        client.shutdown();
        System.out.printf(
            "{\"threads\": %d, \"put_prob\": %.2f, \"operations\": %d, \"seconds\": %.3f, \"ops_per_second\": %.0f, "
                + "\"misses\": %d, \"server_cpu_seconds\": %.2f, \"ops_per_server_cpu_second\": %.0f}%n",
            threads, putProb, measured, elapsed, measured / elapsed, misses.sum(), cpu,
            serverPid > 0 ? measured / Math.max(cpu, 0.01) : 0.0);
        if (misses.sum() > 0) {
            System.exit(1);
        }
    }
}
