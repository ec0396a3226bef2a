import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.config.QueryCacheConfig;
import com.hazelcast.core.EntryEvent;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.map.listener.EntryAddedListener;
import com.hazelcast.map.listener.EntryRemovedListener;
import com.hazelcast.map.listener.EntryUpdatedListener;
import com.hazelcast.query.Predicate;
import com.hazelcast.query.Predicates;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;

/**
 * The Java client's query cache (IMap.getQueryCache) against a member: initial contents, changes
 * entering and leaving the predicate, a listener on the cache, size/keySet/values(predicate),
 * a QueryCacheConfig with batching, delay, coalescing, no population and no values, destroy.
 * Exits non-zero on the first wrong answer. Usage: QueryCache ADDRESS
 */
public final class QueryCache {
    private static int failures;

    private QueryCache() {
    }

    public static void main(String[] args) {
        String address = Harness.address(args, "QueryCache");
        Harness.watchdog("query cache", 120_000);
        ClientConfig config = Harness.clientConfig(address, "dev");
        QueryCacheConfig batched = new QueryCacheConfig("batched").setBatchSize(4).setDelaySeconds(1)
                .setCoalesce(true).setPopulate(false).setIncludeValue(false)
                .setPredicateConfig(new com.hazelcast.config.PredicateConfig(Predicates.sql("this >= 20")));
        config.addQueryCacheConfig("qc-config", batched);
        HazelcastInstance client = HazelcastClient.newHazelcastClient(config);
        try {
            plainCache(client);
            configuredCache(client);
        } finally {
            client.shutdown();
        }
        if (failures > 0) {
            System.err.println(failures + " wrong answer(s)");
            System.exit(1);
        }
        System.out.println("query cache: all answers right");
    }

    private static void plainCache(HazelcastInstance client) {
        IMap<Integer, Integer> map = client.getMap("qc-plain");
        for (int i = 0; i < 10; i++) {
            map.put(i, i * 10);
        }
        Predicate<Integer, Integer> atLeast50 = Predicates.greaterEqual("this", 50);
        com.hazelcast.map.QueryCache<Integer, Integer> cache = map.getQueryCache("plain", atLeast50, true);
        check("initial size", cache.size() == 5);
        check("initial keySet", cache.keySet().equals(set(5, 6, 7, 8, 9)));
        check("initial get", Integer.valueOf(70).equals(cache.get(7)));
        List<String> heard = Collections.synchronizedList(new ArrayList<>());
        cache.addEntryListener(new Recorder(heard), true);
        map.put(1, 100);   // enters
        map.put(9, 5);     // leaves
        map.put(6, 61);    // stays
        map.remove(5);     // removed
        map.put(2, 20);    // never in
        check("after changes", waitFor(() -> cache.keySet().equals(set(1, 6, 7, 8))));
        check("updated value", waitFor(() -> Integer.valueOf(61).equals(cache.get(6))));
        check("listener heard", waitFor(() -> heard.size() >= 4));
        check("listener events " + heard, new TreeSet<>(heard).equals(new TreeSet<>(
                List.of("added 1=100", "removed 9", "updated 6=61", "removed 5"))));
        check("values(predicate)", new TreeSet<>(cache.values(Predicates.lessThan("this", 80)))
                .equals(new TreeSet<>(List.of(61, 70))));
        cache.destroy();
        map.put(3, 300);
        com.hazelcast.map.QueryCache<Integer, Integer> again = map.getQueryCache("plain", atLeast50, true);
        check("re-created after destroy", again.keySet().equals(set(1, 3, 6, 7, 8)));
        again.destroy();
    }

    private static void configuredCache(HazelcastInstance client) {
        IMap<Integer, Integer> map = client.getMap("qc-config");
        for (int i = 0; i < 10; i++) {
            map.put(i, i * 10);
        }
        com.hazelcast.map.QueryCache<Integer, Integer> cache = map.getQueryCache("batched");
        check("populate false: empty at first", cache.size() == 0);
        for (int i = 0; i < 5; i++) {
            map.put(100, i + 20);  // coalesced into the last value
        }
        map.put(101, 500);
        check("batched events arrive", waitFor(() -> cache.keySet().equals(set(100, 101))));
        // Not checked: with coalesce true, a key's later event (101 leaving the predicate)
        // never reaches Hazelcast 5.6's cache once an earlier event of that key was published.
        cache.destroy();
    }

    private static Set<Integer> set(Integer... keys) {
        return new TreeSet<>(List.of(keys));
    }

    private static boolean waitFor(BooleanSupplier condition) {
        long deadline = System.currentTimeMillis() + 20_000;
        while (System.currentTimeMillis() < deadline) {
            if (condition.getAsBoolean()) {
                return true;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return condition.getAsBoolean();
    }

    private static void check(String what, boolean ok) {
        System.out.println((ok ? "ok    " : "WRONG ") + what);
        if (!ok) {
            failures++;
        }
    }

    private static final class Recorder implements EntryAddedListener<Integer, Integer>,
            EntryRemovedListener<Integer, Integer>, EntryUpdatedListener<Integer, Integer> {
        private final List<String> heard;

        Recorder(List<String> heard) {
            this.heard = heard;
        }

        @Override
        public void entryAdded(EntryEvent<Integer, Integer> event) {
            heard.add("added " + event.getKey() + "=" + event.getValue());
        }

        @Override
        public void entryRemoved(EntryEvent<Integer, Integer> event) {
            heard.add("removed " + event.getKey());
        }

        @Override
        public void entryUpdated(EntryEvent<Integer, Integer> event) {
            heard.add("updated " + event.getKey() + "=" + event.getValue());
        }
    }
}
