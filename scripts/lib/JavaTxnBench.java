import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.transaction.TransactionContext;
import com.hazelcast.transaction.TransactionOptions;
import com.hazelcast.transaction.TransactionalMap;
import com.hazelcast.transaction.TransactionalQueue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * Transactions with the official Java client (hazelcast-5.6.0.jar), for scripts/bench-transactions.
 * Each shape runs `threads` threads, each doing whole TWO_PHASE transactions (durability 1, the
 * client's defaults) back to back: newTransactionContext, begin, the writes, commit. Keys are
 * 20-character Strings, values 100-character Strings; each thread writes its own 1,000 keys
 * (no two threads' transactions contend for a key lock), the writes of one transaction go to
 * distinct keys.
 *
 * <pre>
 *   shapes:  put1      one TransactionalMap.put
 *            put10     ten TransactionalMap.put of distinct keys
 *            putoffer  one TransactionalMap.put and one TransactionalQueue.offer (one queue for all threads)
 * </pre>
 *
 * First every shape runs JIT_S / 3 seconds unmeasured (the JIT of the client and of a Hazelcast
 * member), then each shape runs WARMUP_S unmeasured and SECONDS measured: transactions/s,
 * p50/p99/max of a whole transaction (context creation + begin .. commit returned) as the client
 * sees it, server CPU (user + system of SERVER_PID from /proc) and this JVM's CPU per
 * transaction over the measured window, the cores every other process used meanwhile
 * ("other_cores", from /proc/stat: the noise on a shared machine), and whether the member holds
 * what was committed (map size = distinct keys committed, queue size = offers committed:
 * "check"). One JSON line per shape. A transaction that fails is
 * rolled back, counted in "errors" and not timed; a shape whose threads do not finish within 30 s
 * of its end is reported "hung" and its threads are left behind (daemons).
 *
 * <pre>
 *   java -cp hazelcast-5.6.0.jar:classes JavaTxnBench ADDRESS[,ADDRESS...] THREADS JIT_S WARMUP_S SECONDS PID[,PID...] [SHAPE...]
 * </pre>
 */
public final class JavaTxnBench {
    private static final int KEYS_PER_THREAD = 1_000;

    private JavaTxnBench() {
    }


    /** CPU seconds every process on the machine used (user, nice, system, irq, softirq, steal of /proc/stat), or -1. */
    static double machineBusySeconds() {
        try {
            String[] fields = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long busy = 0;
            for (int index : new int[] {1, 2, 3, 6, 7, 8}) {
                busy += Long.parseLong(fields[index]);
            }
            return busy / 100.0;
        } catch (Exception error) {
            return -1;
        }
    }

    /** One thread's latencies in nanoseconds, grown as needed. */
    static final class Samples {
        long[] nanos = new long[1 << 16];
        int count;

        void add(long value) {
            if (count == nanos.length) {
                nanos = Arrays.copyOf(nanos, count * 2);
            }
            nanos[count++] = value;
        }
    }

    static final class Shape {
        final String name;
        final int mapPuts;
        final boolean offer;

        Shape(String name) {
            this.name = name;
            switch (name) {
                case "put1": mapPuts = 1; offer = false; break;
                case "put10": mapPuts = 10; offer = false; break;
                case "putoffer": mapPuts = 1; offer = true; break;
                default: throw new IllegalArgumentException("unknown shape " + name);
            }
        }
    }

    /** Per shape: each thread's committed map puts, and the committed queue offers, over every run of it. */
    static final java.util.Map<String, long[]> COMMITTED_PUTS = new java.util.concurrent.ConcurrentHashMap<>();
    static final LongAdder COMMITTED_OFFERS = new LongAdder();
    static final java.util.Map<String, int[]> CURSORS = new java.util.concurrent.ConcurrentHashMap<>();

    static final TransactionOptions OPTIONS =
        new TransactionOptions().setTransactionType(TransactionOptions.TransactionType.TWO_PHASE).setDurability(1);

    /** The transactions of one shape on `threads` threads for warmup + seconds; a JSON line, or null unmeasured. */
    static String run(HazelcastInstance client, Shape shape, int threads, double warmup, double seconds,
                      String serverPid, String[][] keys, String[] values) throws InterruptedException {
        String mapName = "txn-" + shape.name;
        String queueName = "txn-queue";
        Samples[] samples = new Samples[threads];
        long[] committedPuts = COMMITTED_PUTS.computeIfAbsent(shape.name, name -> new long[threads]);
        // Each thread's next key, carried from the unmeasured run of a shape to its measured one,
        // so that a thread's committed puts cover min(puts, KEYS_PER_THREAD) distinct keys.
        int[] cursors = CURSORS.computeIfAbsent(shape.name, name -> new int[threads]);
        LongAdder errors = new LongAdder();
        AtomicReference<String> firstError = new AtomicReference<>();
        long start = System.nanoTime();
        long measureFrom = start + (long) (warmup * 1e9);
        long end = measureFrom + (long) (seconds * 1e9);
        Thread[] workers = new Thread[threads];
        for (int index = 0; index < threads; index++) {
            final int thread = index;
            samples[thread] = new Samples();
            workers[index] = new Thread(() -> {
                String[] mine = keys[thread];
                Samples out = samples[thread];
                int next = cursors[thread];
                int offered = 0;
                while (true) {
                    long began = System.nanoTime();
                    if (began >= end) {
                        break;
                    }
                    int first = next;
                    TransactionContext context = client.newTransactionContext(OPTIONS);
                    try {
                        context.beginTransaction();
                        TransactionalMap<String, String> map = context.getMap(mapName);
                        for (int put = 0; put < shape.mapPuts; put++) {
                            map.put(mine[next], values[next % values.length]);
                            next = (next + 1) % KEYS_PER_THREAD;
                        }
                        if (shape.offer) {
                            TransactionalQueue<String> queue = context.getQueue(queueName);
                            if (!queue.offer(values[offered++ % values.length])) {
                                throw new IllegalStateException("offer refused");
                            }
                        }
                        context.commitTransaction();
                        long done = System.nanoTime();
                        committedPuts[thread] += shape.mapPuts;
                        if (shape.offer) {
                            COMMITTED_OFFERS.increment();
                        }
                        if (began >= measureFrom && done <= end) {
                            out.add(done - began);
                        }
                    } catch (Throwable error) {
                        errors.increment();
                        firstError.compareAndSet(null, error.toString());
                        next = first; // nothing of it is written: the next one writes its keys
                        try {
                            context.rollbackTransaction();
                        } catch (Throwable ignored) {
                            // already ended, or the member is gone
                        }
                    }
                }
                cursors[thread] = next;
            }, "txn-" + shape.name + "-" + index);
            workers[index].setDaemon(true);
            workers[index].start();
        }
        long sleep = (measureFrom - System.nanoTime()) / 1_000_000;
        if (sleep > 0) {
            Thread.sleep(sleep);
        }
        double serverBefore = serverCpuSeconds(serverPid);
        double clientBefore = JavaClientBench.cpuSeconds("self");
        double machineBefore = machineBusySeconds();
        sleep = (end - System.nanoTime()) / 1_000_000;
        if (sleep > 0) {
            Thread.sleep(sleep);
        }
        double server = serverCpuSeconds(serverPid) - serverBefore;
        double clientCpu = JavaClientBench.cpuSeconds("self") - clientBefore;
        // Cores the rest of the machine used meanwhile (builds, tests of other work): the noise.
        double otherCores = (machineBusySeconds() - machineBefore - server - clientCpu) / seconds;
        boolean hung = false;
        for (Thread worker : workers) {
            worker.join(Math.max(1, 30_000 - (System.nanoTime() - end) / 1_000_000));
            hung |= worker.isAlive();
        }
        if (seconds == 0) {
            return null;
        }
        int total = 0;
        for (Samples s : samples) {
            total += s.count;
        }
        long[] all = new long[total];
        int at = 0;
        for (Samples s : samples) {
            System.arraycopy(s.nanos, 0, all, at, s.count);
            at += s.count;
        }
        Arrays.sort(all);
        double p50 = total == 0 ? 0 : all[total / 2] / 1e3;
        double p99 = total == 0 ? 0 : all[Math.min(total - 1, (int) (total * 0.99))] / 1e3;
        double max = total == 0 ? 0 : all[total - 1] / 1e3;
        // What the member holds: every committed put's key, every committed offer (the queue is
        // only offered to); "check" is false when it does not.
        boolean check = true;
        String held = "";
        if (!hung) {
            long keysWritten = 0;
            for (long puts : committedPuts) {
                keysWritten += Math.min(puts, KEYS_PER_THREAD);
            }
            int mapSize = client.getMap(mapName).size();
            check = mapSize == keysWritten;
            held = "map " + mapSize + " of " + keysWritten;

            if (shape.offer) {
                int queueSize = client.getQueue(queueName).size();
                check &= queueSize == COMMITTED_OFFERS.sum();
                held += ", queue " + queueSize + " of " + COMMITTED_OFFERS.sum();
            }
        }
        String error = firstError.get();
        return String.format(
            "{\"shape\": \"%s\", \"threads\": %d, \"transactions\": %d, \"seconds\": %.3f, \"tx_per_second\": %.1f, "
                + "\"p50_us\": %.0f, \"p99_us\": %.0f, \"max_us\": %.0f, \"server_cpu_seconds\": %.2f, "
                + "\"server_cpu_ms_per_tx\": %.4f, \"client_cpu_ms_per_tx\": %.4f, \"other_cores\": %.2f, \"errors\": %d, \"hung\": %s, \"check\": %s, \"held\": \"%s\", \"first_error\": %s}",
            shape.name, threads, total, seconds, total / seconds, p50, p99, max, server,
            total == 0 ? 0.0 : server * 1000 / total, total == 0 ? 0.0 : clientCpu * 1000 / total,
            Math.max(0, otherCores), errors.sum(), hung, check, held, error == null ? "null" : "\"" + error.replace("\\", "\\\\").replace("\"", "'") + "\"");
    }

    /** User + system seconds of the members (comma-separated pids), or -1 if one is unknown. */
    static double serverCpuSeconds(String pids) {
        double total = 0;
        for (String pid : pids.split(",")) {
            double seconds = JavaClientBench.cpuSeconds(pid);
            if (seconds < 0) {
                return -1;
            }
            total += seconds;
        }
        return total;
    }

    public static void main(String[] args) throws Exception {
        String address = args[0];
        int threads = Integer.parseInt(args[1]);
        double jit = Double.parseDouble(args[2]);
        double warmup = Double.parseDouble(args[3]);
        double seconds = Double.parseDouble(args[4]);
        String serverPid = args[5];
        List<Shape> shapes = new ArrayList<>();
        for (int index = 6; index < args.length; index++) {
            shapes.add(new Shape(args[index]));
        }
        if (shapes.isEmpty()) {
            for (String name : new String[] {"put1", "put10", "putoffer"}) {
                shapes.add(new Shape(name));
            }
        }

        ClientConfig config = new ClientConfig();
        config.setClusterName("dev");
        config.getNetworkConfig().addAddress(address.split(","));
        config.setProperty("hazelcast.client.statistics.enabled", "false");
        // A request the member never answers fails after 20 s rather than the default 120 s.
        config.setProperty("hazelcast.client.invocation.timeout.seconds", "20");
        HazelcastInstance client = HazelcastClient.newHazelcastClient(config);
        String[][] keys = new String[threads][KEYS_PER_THREAD];
        for (int thread = 0; thread < threads; thread++) {
            for (int index = 0; index < KEYS_PER_THREAD; index++) {
                keys[thread][index] = JavaClientBench.text("k" + thread + "-", index, 20);
            }
        }
        String[] values = new String[1_000];
        for (int index = 0; index < values.length; index++) {
            values[index] = JavaClientBench.text("v", index, 100);
        }
        if (jit > 0) {
            for (Shape shape : shapes) {
                run(client, shape, threads, jit / shapes.size(), 0, serverPid, keys, values);
            }
        }
        for (Shape shape : shapes) {
            System.out.println(run(client, shape, threads, warmup, seconds, serverPid, keys, values));
            System.out.flush();
        }
        client.shutdown();
        System.exit(0);
    }
}
