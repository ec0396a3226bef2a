import com.hazelcast.aggregation.Aggregators;
import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.config.IndexType;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.nio.serialization.compact.CompactReader;
import com.hazelcast.nio.serialization.compact.CompactSerializer;
import com.hazelcast.nio.serialization.compact.CompactWriter;
import com.hazelcast.query.Predicate;
import com.hazelcast.query.Predicates;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

/**
 * Issue 35's indexed predicate-API queries with the official Java client (hazelcast-5.6.0.jar),
 * whose per-call cost is a small part of a query's (the Python client's is most of it):
 * ENTRIES Compact `Trade` values (type name, fields and value ranges of scripts/lib/sql_bench.py:
 * symbol of 10, qty 1..1000 int32, price 1..1000 float64), a SORTED index on price and a HASH
 * index on qty, then per query THREADS threads calling it for WARMUP_S seconds, then SECONDS
 * measured: calls/s, p50/p99 of each call, and the server's CPU (user + system from /proc) per
 * call. Each call's answer is checked against the first one's. Prints one JSON line per query.
 *
 * <pre>
 *   java -cp hazelcast-5.6.0.jar:CLASSES JavaQueryBench ADDRESS ENTRIES THREADS WARMUP_S SECONDS SERVER_PID
 * </pre>
 */
public final class JavaQueryBench {
    private static final String[] SYMBOLS = new String[10];

    static {
        for (int index = 0; index < SYMBOLS.length; index++) {
            SYMBOLS[index] = String.format("SYM%02d", index);
        }
    }

    private JavaQueryBench() {
    }

    /** The benchmark's record. */
    public static final class Trade {
        final String symbol;
        final int qty;
        final double price;

        Trade(String symbol, int qty, double price) {
            this.symbol = symbol;
            this.qty = qty;
            this.price = price;
        }
    }

    /** Written as scripts/lib/sql_bench.py's TradeSerializer writes it. */
    static final class TradeSerializer implements CompactSerializer<Trade> {
        @Override
        public Trade read(CompactReader reader) {
            return new Trade(reader.readString("symbol"), reader.readInt32("qty"), reader.readFloat64("price"));
        }

        @Override
        public void write(CompactWriter writer, Trade trade) {
            writer.writeString("symbol", trade.symbol);
            writer.writeInt32("qty", trade.qty);
            writer.writeFloat64("price", trade.price);
        }

        @Override
        public String getTypeName() {
            return "Trade";
        }

        @Override
        public Class<Trade> getCompactClass() {
            return Trade.class;
        }
    }

    static final class Query {
        final String name;
        final Function<IMap<Integer, Trade>, Object> call;

        Query(String name, Function<IMap<Integer, Trade>, Object> call) {
            this.name = name;
            this.call = call;
        }
    }

    static List<Query> queries() {
        Predicate<Integer, Trade> qty = Predicates.equal("qty", 500);
        Predicate<Integer, Trade> price = Predicates.between("price", 100.0, 102.0);
        List<Query> queries = new ArrayList<>();
        // the cheapest call the client makes (one entry by key): no query can answer faster
        queries.add(new Query("map.get(key) (the per-call floor)", map -> map.get(7).qty));
        queries.add(new Query("map.aggregate(count(), equal(qty, 500)) (indexed)",
            map -> map.aggregate(Aggregators.count(), qty)));
        queries.add(new Query("map.aggregate(integerSum(qty), between(price, 100, 102)) (indexed)",
            map -> map.aggregate(Aggregators.integerSum("qty"), price)));
        queries.add(new Query("map.keySet(between(price, 100, 102)) (indexed)",
            map -> map.keySet(price).size()));
        queries.add(new Query("map.values(equal(qty, 500)) (indexed)", map -> map.values(qty).size()));
        return queries;
    }

    public static void main(String[] args) throws Exception {
        String address = args[0];
        int entries = Integer.parseInt(args[1]);
        int threads = Integer.parseInt(args[2]);
        double warmup = Double.parseDouble(args[3]);
        double seconds = Double.parseDouble(args[4]);
        long serverPid = Long.parseLong(args[5]);

        ClientConfig config = new ClientConfig();
        config.setClusterName("dev");
        config.getNetworkConfig().addAddress(address);
        config.setProperty("hazelcast.client.statistics.enabled", "false");
        config.getSerializationConfig().getCompactSerializationConfig().addSerializer(new TradeSerializer());
        HazelcastInstance client = HazelcastClient.newHazelcastClient(config);
        IMap<Integer, Trade> map = client.getMap("trades");
        Random random = new Random(35);
        for (int start = 0; start < entries; start += 1000) {
            Map<Integer, Trade> chunk = new HashMap<>();
            for (int key = start; key < Math.min(start + 1000, entries); key++) {
                chunk.put(key, new Trade(SYMBOLS[random.nextInt(SYMBOLS.length)], 1 + random.nextInt(1000),
                    1 + 999 * random.nextDouble()));
            }
            map.putAll(chunk);
        }
        map.addIndex(IndexType.SORTED, "price");
        map.addIndex(IndexType.HASH, "qty");
        for (Query query : queries()) {
            measure(query, map, threads, warmup, seconds, serverPid);
        }
        client.shutdown();
    }

    static void measure(Query query, IMap<Integer, Trade> map, int threads, double warmup, double seconds, long pid)
        throws Exception {
        Object expected = query.call.apply(map);
        LongAdder wrong = new LongAdder();
        long[][] latencies = new long[threads][];
        int[] counts = new int[threads];
        long measureFrom = System.nanoTime() + (long) (warmup * 1e9);
        long end = measureFrom + (long) (seconds * 1e9);
        Thread[] workers = new Thread[threads];
        for (int index = 0; index < threads; index++) {
            final int worker = index;
            latencies[worker] = new long[1 << 16];
            workers[index] = new Thread(() -> {
                long now = System.nanoTime();
                while (now < end) {
                    Object answer = query.call.apply(map);
                    long after = System.nanoTime();
                    if (!expected.equals(answer)) {
                        wrong.increment();
                    }
                    if (now >= measureFrom) {
                        if (counts[worker] == latencies[worker].length) {
                            latencies[worker] = Arrays.copyOf(latencies[worker], counts[worker] * 2);
                        }
                        latencies[worker][counts[worker]++] = after - now;
                    }
                    now = after;
                }
            });
            workers[index].start();
        }
        Thread.sleep((long) (warmup * 1000));
        double startCpu = JavaClientBench.cpuSeconds(pid);
        long startNanos = System.nanoTime();
        for (Thread worker : workers) {
            worker.join();
        }
        double elapsed = (System.nanoTime() - startNanos) / 1e9;
        double cpu = JavaClientBench.cpuSeconds(pid) - startCpu;
        long[] all = new long[Arrays.stream(counts).sum()];
        int at = 0;
        for (int worker = 0; worker < threads; worker++) {
            System.arraycopy(latencies[worker], 0, all, at, counts[worker]);
            at += counts[worker];
        }
        Arrays.sort(all);
        int calls = all.length;
        System.out.printf(
            "{\"query\": \"%s\", \"threads\": %d, \"answer\": \"%s\", \"calls\": %d, \"seconds\": %.3f, "
                + "\"calls_per_second\": %.1f, \"p50_ms\": %.3f, \"p99_ms\": %.3f, \"server_cpu_ms_per_call\": %.4f, "
                + "\"wrong\": %d}%n",
            query.name, threads, expected, calls, elapsed, calls / elapsed, all[calls / 2] / 1e6,
            all[Math.min(calls - 1, (int) (calls * 0.99))] / 1e6, cpu * 1000 / Math.max(calls, 1), wrong.sum());
        if (wrong.sum() > 0) {
            System.exit(1);
        }
    }
}
