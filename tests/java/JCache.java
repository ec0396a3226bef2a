import com.hazelcast.cache.CacheStatistics;
import com.hazelcast.cache.EventJournalCacheEvent;
import com.hazelcast.cache.HazelcastCachingProvider;
import com.hazelcast.cache.HazelcastExpiryPolicy;
import com.hazelcast.client.HazelcastClient;
import com.hazelcast.cache.ICache;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.config.CacheConfig;
import com.hazelcast.config.NearCacheConfig;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.internal.journal.EventJournalInitialSubscriberState;
import com.hazelcast.internal.journal.EventJournalReader;
import com.hazelcast.ringbuffer.ReadResultSet;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import javax.cache.Cache;
import javax.cache.CacheManager;
import javax.cache.Caching;
import javax.cache.configuration.FactoryBuilder;
import javax.cache.configuration.MutableCacheEntryListenerConfiguration;
import javax.cache.configuration.MutableConfiguration;
import javax.cache.event.CacheEntryCreatedListener;
import javax.cache.event.CacheEntryEvent;
import javax.cache.event.CacheEntryExpiredListener;
import javax.cache.event.CacheEntryRemovedListener;
import javax.cache.event.CacheEntryUpdatedListener;
import javax.cache.event.EventType;
import javax.cache.expiry.CreatedExpiryPolicy;
import javax.cache.expiry.Duration;
import javax.cache.processor.EntryProcessor;
import javax.cache.processor.EntryProcessorException;
import javax.cache.processor.MutableEntry;
import javax.cache.spi.CachingProvider;

/**
 * The Java client's real JCache (javax.cache through HazelcastClientCachingProvider) against a
 * member: `java -cp out:hazelcast.jar:cache-api.jar JCache HOST:PORT`; exits 0 when every answer
 * is Hazelcast 5.6's, 1 on the first wrong one. Cluster name: -Djcache.clusterName (dev).
 */
public final class JCache {
    private static final long HARD_TIMEOUT_MS = 120_000;
    /** Events of the listener, in the order the client delivered them. */
    static final BlockingQueue<String> EVENTS = new LinkedBlockingQueue<>();
    private static int checks;

    private JCache() {
    }

    static void checkEq(Object expected, Object actual, String what) {
        checks++;
        if (!Objects.equals(expected, actual)) {
            throw new AssertionError("check failed: " + what + ": expected <" + expected + "> but was <" + actual + ">");
        }
    }

    /** Records "TYPE key old->new" for every event it hears. */
    public static final class Recorder implements CacheEntryCreatedListener<String, String>,
            CacheEntryUpdatedListener<String, String>, CacheEntryRemovedListener<String, String>,
            CacheEntryExpiredListener<String, String>, Serializable {
        private static final long serialVersionUID = 1L;

        private static void record(Iterable<CacheEntryEvent<? extends String, ? extends String>> events) {
            for (CacheEntryEvent<? extends String, ? extends String> e : events) {
                String old = e.isOldValueAvailable() ? e.getOldValue() : "-";
                String value = e.getEventType() == EventType.REMOVED ? "-" : e.getValue();
                EVENTS.add(e.getEventType() + " " + e.getKey() + " " + old + "->" + value);
            }
        }

        @Override
        public void onCreated(Iterable<CacheEntryEvent<? extends String, ? extends String>> events) {
            record(events);
        }

        @Override
        public void onUpdated(Iterable<CacheEntryEvent<? extends String, ? extends String>> events) {
            record(events);
        }

        @Override
        public void onRemoved(Iterable<CacheEntryEvent<? extends String, ? extends String>> events) {
            record(events);
        }

        @Override
        public void onExpired(Iterable<CacheEntryEvent<? extends String, ? extends String>> events) {
            record(events);
        }
    }

    static String nextEvent() throws InterruptedException {
        String event = EVENTS.poll(10, TimeUnit.SECONDS);
        return event == null ? "<no event in 10 s>" : event;
    }

    static void operations(Cache<String, String> cache) {
        checkEq(null, cache.get("a"), "get of an absent key");
        cache.put("a", "1");
        checkEq("1", cache.get("a"), "get after put");
        checkEq(true, cache.putIfAbsent("b", "2"), "putIfAbsent of an absent key");
        checkEq(false, cache.putIfAbsent("b", "3"), "putIfAbsent of a present key");
        checkEq("1", cache.getAndPut("a", "4"), "getAndPut answers the old value");
        checkEq(false, cache.replace("a", "1", "5"), "replace with a wrong old value");
        checkEq(true, cache.replace("a", "4", "5"), "replace with the right old value");
        checkEq("5", cache.getAndReplace("a", "6"), "getAndReplace");
        checkEq(false, cache.replace("zz", "x"), "replace of an absent key");
        checkEq(true, cache.containsKey("b"), "containsKey of a present key");
        checkEq(false, cache.remove("b", "3"), "remove with a wrong value");
        checkEq("2", cache.getAndRemove("b"), "getAndRemove");
        checkEq(false, cache.remove("b"), "remove of an absent key");
        Map<String, String> many = new HashMap<>();
        for (int i = 0; i < 300; i++) {
            many.put("k" + i, "v" + i);
        }
        cache.putAll(many);
        Set<String> some = new HashSet<>(List.of("k1", "k299", "absent"));
        checkEq(Map.of("k1", "v1", "k299", "v299"), cache.getAll(some), "getAll");
        Map<String, String> seen = new HashMap<>();
        for (Cache.Entry<String, String> e : cache) {
            seen.put(e.getKey(), e.getValue());
        }
        many.put("a", "6");
        checkEq(many, seen, "iteration answers every entry once");
        cache.removeAll(Set.of("k1", "k2"));
        checkEq(false, cache.containsKey("k1"), "removeAll(keys)");
        cache.removeAll();
        checkEq(false, cache.iterator().hasNext(), "removeAll() leaves the cache empty");
    }

    static void listener(Cache<String, String> cache) throws InterruptedException {
        MutableCacheEntryListenerConfiguration<String, String> config = new MutableCacheEntryListenerConfiguration<>(
                FactoryBuilder.factoryOf(new Recorder()), null, true, true);
        cache.registerCacheEntryListener(config);
        cache.put("e", "1");
        cache.put("e", "2");
        cache.remove("e");
        checkEq("CREATED e -->1", nextEvent(), "CREATED event");
        checkEq("UPDATED e 1->2", nextEvent(), "UPDATED event with the old value");
        checkEq("REMOVED e 2->-", nextEvent(), "REMOVED event with the old value");
        cache.deregisterCacheEntryListener(config);
        cache.put("f", "1");
        checkEq(null, EVENTS.poll(2, TimeUnit.SECONDS), "no event after deregistration");
    }

    static void expiry(CacheManager manager, String name) throws InterruptedException {
        MutableConfiguration<String, String> config = new MutableConfiguration<String, String>()
                .setTypes(String.class, String.class)
                .setExpiryPolicyFactory(CreatedExpiryPolicy.factoryOf(new Duration(TimeUnit.SECONDS, 1)));
        Cache<String, String> cache = manager.createCache(name, config);
        cache.registerCacheEntryListener(new MutableCacheEntryListenerConfiguration<>(
                FactoryBuilder.factoryOf(new Recorder()), null, true, false));
        cache.put("x", "1");
        checkEq("1", cache.get("x"), "get before expiry");
        checkEq("CREATED x -->1", nextEvent(), "CREATED event of the expiring entry");
        Thread.sleep(2_500);
        checkEq(null, cache.get("x"), "get after the created duration");
        checkEq("EXPIRED x 1->1", nextEvent(), "EXPIRED event with the value");
        manager.destroyCache(name);
    }

    /**
     * Hazelcast's own HazelcastExpiryPolicy: a cache's (its factory, Java-serialized) expires
     * an entry after 1.5 s; an operation's (IdentifiedDataSerializable) of a minute stands for
     * the cache's.
     */
    @SuppressWarnings("unchecked")
    static void hazelcastPolicy(CacheManager manager, String name) throws InterruptedException {
        MutableConfiguration<String, String> config = new MutableConfiguration<String, String>()
                .setTypes(String.class, String.class)
                .setExpiryPolicyFactory(FactoryBuilder.factoryOf(new HazelcastExpiryPolicy(1500, 1500, 1500, TimeUnit.MILLISECONDS)));
        Cache<String, String> cache = manager.createCache(name, config);
        ICache<String, String> icache = cache.unwrap(ICache.class);
        cache.put("cache's", "1");
        icache.put("own", "1", new HazelcastExpiryPolicy(1, 1, 1, TimeUnit.MINUTES));
        checkEq("1", cache.get("cache's"), "get before the cache's policy expires it");
        Thread.sleep(2_500);
        checkEq(null, cache.get("cache's"), "the cache's HazelcastExpiryPolicy expired the entry");
        checkEq("1", cache.get("own"), "the operation's HazelcastExpiryPolicy stands for the cache's");
        manager.destroyCache(name);
    }

    /** An entry processor whose class only the client has: the member cannot run it. */
    public static final class Exclaim implements EntryProcessor<String, String, String>, Serializable {
        private static final long serialVersionUID = 1L;

        @Override
        public String process(MutableEntry<String, String> entry, Object... arguments) {
            return entry.getValue() + "!";
        }
    }

    static void invoke(Cache<String, String> cache) {
        cache.put("p", "1");
        try {
            cache.invoke("p", new Exclaim());
            throw new AssertionError("an entry processor the member has no class of must fail");
        } catch (EntryProcessorException expected) {
            checkEq(true, String.valueOf(expected).contains("JCache$Exclaim"), "the failure names the class: " + expected);
        }
        checkEq("1", cache.get("p"), "the entry is unchanged");
    }

    /**
     * A second client with a near cache on the cache reads a key (now held in its near cache);
     * the first client changes it: the member's invalidation reaches the near cache, and the
     * second client reads the new value.
     */
    static void nearCache(Cache<String, String> cache, String name, String address) throws InterruptedException {
        ClientConfig cfg = Harness.clientConfig(address, System.getProperty("jcache.clusterName", "dev"));
        cfg.addNearCacheConfig(new NearCacheConfig(name).setInvalidateOnChange(true));
        HazelcastInstance reader = HazelcastClient.newHazelcastClient(cfg);
        try {
            ICache<String, String> near = reader.getCacheManager().getCache(name);
            checkEq(true, near.getClass().getSimpleName().contains("NearCached"), "the reader's cache has a near cache: " + near.getClass());
            cache.put("n", "1");
            checkEq("1", near.get("n"), "the reader's first get");
            checkEq("1", near.get("n"), "the reader's second get (from its near cache)");
            cache.put("n", "2");
            long deadline = System.currentTimeMillis() + 10_000;
            String seen = near.get("n");
            while (!"2".equals(seen) && System.currentTimeMillis() < deadline) {
                Thread.sleep(50);
                seen = near.get("n");
            }
            checkEq("2", seen, "the near cache was invalidated by the change");
            cache.clear();
            deadline = System.currentTimeMillis() + 10_000;
            seen = near.get("n");
            while (seen != null && System.currentTimeMillis() < deadline) {
                Thread.sleep(50);
                seen = near.get("n");
            }
            checkEq(null, seen, "the near cache was invalidated by the clear");
        } finally {
            reader.shutdown();
        }
    }

    /** "TYPE key old->new" of each journal event read. */
    static List<String> described(ReadResultSet<EventJournalCacheEvent<String, String>> events) {
        List<String> seen = new ArrayList<>();
        for (EventJournalCacheEvent<String, String> e : events) {
            seen.add(e.getType() + " " + e.getKey() + " " + e.getOldValue() + "->" + e.getNewValue());
        }
        return seen;
    }

    /**
     * A cache configured with an event journal (Hazelcast's CacheConfig), read through the
     * client's EventJournalReader: each change with its sequence, and a read that waits for an
     * event.
     */
    @SuppressWarnings("unchecked")
    static void journal(CacheManager manager, String name, HazelcastInstance client)
            throws InterruptedException, ExecutionException {
        CacheConfig<String, String> config = new CacheConfig<>();
        config.setTypes(String.class, String.class);
        config.getEventJournalConfig().setEnabled(true).setCapacity(271 * 10);
        Cache<String, String> cache = manager.createCache(name, config);
        EventJournalReader<EventJournalCacheEvent<String, String>> reader =
                (EventJournalReader<EventJournalCacheEvent<String, String>>) cache.unwrap(ICache.class);
        int partition = client.getPartitionService().getPartition("j").getPartitionId();
        cache.put("j", "1");
        cache.put("j", "2");
        cache.remove("j");
        EventJournalInitialSubscriberState state = reader.subscribeToEventJournal(partition).toCompletableFuture().get();
        checkEq(List.of(0L, 2L), List.of(state.getOldestSequence(), state.getNewestSequence()), "the journal's sequences");
        ReadResultSet<EventJournalCacheEvent<String, String>> events = reader
                .<EventJournalCacheEvent<String, String>>readFromEventJournal(0, 3, 10, partition, null, null)
                .toCompletableFuture().get();
        checkEq(List.of("CREATED j null->1", "UPDATED j 1->2", "REMOVED j 2->null"), described(events), "the journal's events");
        checkEq(2L, events.getSequence(2), "the last event's sequence");
        CompletableFuture<ReadResultSet<EventJournalCacheEvent<String, String>>> waiting = reader
                .<EventJournalCacheEvent<String, String>>readFromEventJournal(3, 1, 10, partition, null, null)
                .toCompletableFuture();
        Thread.sleep(200);
        checkEq(false, waiting.isDone(), "a read of the next event waits for it");
        cache.put("j", "3");
        checkEq(List.of("CREATED j null->3"), described(waiting.get()), "the waiting read gets the next event");
        manager.destroyCache(name);
    }

    /**
     * A cache with statistics enabled: the client's ICache counts what it sent and what came
     * back (Hazelcast's client keeps them; the member is told of the switch by
     * CacheManager.enableStatistics).
     */
    static void statistics(CacheManager manager, String name) {
        MutableConfiguration<String, String> config = new MutableConfiguration<String, String>()
                .setTypes(String.class, String.class).setStatisticsEnabled(true);
        Cache<String, String> cache = manager.createCache(name, config);
        cache.put("s", "1");
        cache.put("t", "2");
        cache.get("s");
        cache.get("absent");
        cache.remove("s");
        cache.getAndRemove("absent");
        CacheStatistics stats = cache.unwrap(ICache.class).getLocalCacheStatistics();
        List<Long> counted = List.of(stats.getCachePuts(), stats.getCacheHits(), stats.getCacheMisses(), stats.getCacheRemovals());
        checkEq(List.of(2L, 1L, 2L, 1L), counted, "puts, hits, misses and removals the client counted");
        manager.enableStatistics(name, false);
        manager.enableManagement(name, true);
        checkEq("2", cache.get("t"), "the cache serves on after the switches");
        manager.destroyCache(name);
    }

    static void run(HazelcastInstance client, String address) throws InterruptedException, ExecutionException {
        CachingProvider provider = Caching.getCachingProvider("com.hazelcast.client.cache.HazelcastClientCachingProvider");
        CacheManager manager = provider.getCacheManager(null, null, HazelcastCachingProvider.propertiesByInstanceItself(client));
        String name = "jcache-nc-" + UUID.randomUUID();
        Cache<String, String> cache = manager.createCache(name, new MutableConfiguration<String, String>().setTypes(String.class, String.class));
        checkEq(cache, manager.getCache(name, String.class, String.class), "getCache answers the created cache");
        operations(cache);
        listener(cache);
        invoke(cache);
        nearCache(cache, name, address);
        List<String> names = new ArrayList<>();
        manager.getCacheNames().forEach(names::add);
        checkEq(true, names.contains(name), "getCacheNames lists the cache");
        manager.destroyCache(name);
        checkEq(null, manager.getCache(name, String.class, String.class), "a destroyed cache is gone");
        expiry(manager, name + "-expiry");
        hazelcastPolicy(manager, name + "-hazelcast-policy");
        journal(manager, name + "-journal", client);
        statistics(manager, name + "-statistics");
    }

    public static void main(String[] args) {
        String address = Harness.address(args, "JCache");
        Harness.watchdog("java jcache", HARD_TIMEOUT_MS);
        int rc = 1;
        HazelcastInstance client = null;
        try {
            ClientConfig cfg = Harness.clientConfig(address, System.getProperty("jcache.clusterName", "dev"));
            client = HazelcastClient.newHazelcastClient(cfg);
            run(client, address);
            rc = 0;
            System.out.println("java jcache: ok (" + checks + " checks)");
        } catch (Throwable t) {
            System.err.println("java jcache: FAILED after " + checks + " checks:");
            t.printStackTrace();
        } finally {
            if (client != null) {
                client.shutdown();
            }
        }
        System.exit(rc);
    }
}
