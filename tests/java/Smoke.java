import com.hazelcast.cardinality.CardinalityEstimator;
import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.cluster.Address;
import com.hazelcast.cluster.Member;
import com.hazelcast.instance.EndpointQualifier;
import com.hazelcast.config.InvalidConfigurationException;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.NearCacheConfig;
import com.hazelcast.config.QueueConfig;
import com.hazelcast.core.DistributedObject;
import com.hazelcast.core.EntryView;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.collection.IList;
import com.hazelcast.collection.IQueue;
import com.hazelcast.collection.ISet;
import com.hazelcast.collection.ItemEvent;
import com.hazelcast.collection.ItemListener;
import com.hazelcast.map.IMap;
import com.hazelcast.multimap.MultiMap;
import com.hazelcast.replicatedmap.ReplicatedMap;
import com.hazelcast.ringbuffer.OverflowPolicy;
import com.hazelcast.ringbuffer.ReadResultSet;
import com.hazelcast.ringbuffer.Ringbuffer;
import com.hazelcast.sql.SqlResult;
import com.hazelcast.sql.SqlRow;
import com.hazelcast.sql.SqlStatement;
import com.hazelcast.topic.ITopic;
import com.hazelcast.transaction.HazelcastXAResource;
import com.hazelcast.transaction.TransactionContext;
import com.hazelcast.transaction.TransactionalMap;
import com.hazelcast.transaction.TransactionalQueue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.transaction.xa.XAException;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

/**
 * Java client smoke test (client classes of hazelcast-5.6.0.jar).
 *
 * <pre>
 *   javac -cp hazelcast-5.6.0.jar -d out Smoke.java
 *   java -cp out:hazelcast-5.6.0.jar Smoke 127.0.0.1:5701
 * </pre>
 *
 * Prints "java smoke: ok" and exits 0; prints the failure and exits 1 otherwise (or after 90 s).
 */
public final class Smoke {
    private static final long HARD_TIMEOUT_MS = 90_000;
    private static int checks = 0;

    private Smoke() {
    }

    static void check(boolean condition, String what) {
        checks++;
        if (!condition) {
            throw new AssertionError("check failed: " + what);
        }
    }

    static void checkEq(Object expected, Object actual, String what) {
        checks++;
        if (!Objects.equals(expected, actual)) {
            throw new AssertionError("check failed: " + what + ": expected <" + expected + "> but was <" + actual + ">");
        }
    }

    /** Advanced network: every member names a CLIENT endpoint apart from its MEMBER one. */
    static void clientEndpoints(HazelcastInstance client) {
        Set<Member> members = client.getCluster().getMembers();
        check(!members.isEmpty(), "the client sees members");
        for (Member member : members) {
            Map<EndpointQualifier, Address> addresses = member.getAddressMap();
            Address clientAddress = addresses.get(EndpointQualifier.CLIENT);
            Address memberAddress = addresses.get(EndpointQualifier.MEMBER);
            check(clientAddress != null && memberAddress != null, "CLIENT and MEMBER endpoints of " + member + ": " + addresses);
            check(clientAddress.getPort() != memberAddress.getPort(), "separate ports of " + member + ": " + addresses);
        }
    }

    /**
     * A second client with a near cache on a map: the Java client's repairing handler fetches
     * the members' invalidation metadata (partition uuids and sequences) when it starts, then
     * checks each invalidation's. It reads a key (the second read from its near cache); the
     * first client changes the key, then clears the map: the second reads each change.
     */
    static void nearCache(HazelcastInstance client, String address) throws InterruptedException {
        String name = "smoke-near-" + UUID.randomUUID();
        ClientConfig cfg = Harness.clientConfig(address, System.getProperty("smoke.clusterName", "dev"));
        cfg.addNearCacheConfig(new NearCacheConfig(name).setInvalidateOnChange(true));
        HazelcastInstance second = HazelcastClient.newHazelcastClient(cfg);
        try {
            IMap<String, String> writer = client.getMap(name);
            IMap<String, String> near = second.getMap(name);
            writer.put("n", "1");
            checkEq("1", near.get("n"), "near-cached map: the first get");
            checkEq("1", near.get("n"), "near-cached map: the second get");
            checkEq(true, near.getClass().getSimpleName().contains("NearCached"), "the second client's map has a near cache: " + near.getClass());
            writer.put("n", "2");
            checkEq("2", awaitValue(near, "n", "2"), "the near cache was invalidated by the change");
            writer.clear();
            checkEq(null, awaitValue(near, "n", null), "the near cache was invalidated by the clear");
            writer.destroy();
        } finally {
            second.shutdown();
        }
    }

    /** The value of `key` once it is `expected`, or what it is after 10 s. */
    static String awaitValue(IMap<String, String> map, String key, String expected) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 10_000;
        String seen = map.get(key);
        while (!Objects.equals(expected, seen) && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
            seen = map.get(key);
        }
        return seen;
    }

    public static void main(String[] args) {
        String address = Harness.address(args, "Smoke");
        Harness.watchdog("java smoke", HARD_TIMEOUT_MS);
        int rc = 1;
        HazelcastInstance client = null;
        try {
            ClientConfig cfg = Harness.clientConfig(address, System.getProperty("smoke.clusterName", "dev"));
            cfg.setInstanceName("java-smoke-" + UUID.randomUUID());
            client = HazelcastClient.newHazelcastClient(cfg);
            if (Boolean.getBoolean("smoke.clientEndpoints")) {
                clientEndpoints(client);
            }
            run(client);
            queue(client);
            topic(client);
            ringbuffer(client);
            list(client);
            set(client);
            multiMap(client);
            replicatedMap(client);
            cardinalityEstimator(client);
            dynamicConfig(client);
            transaction(client);
            xa(client, cfg);
            nearCache(client, address);
            if (Boolean.parseBoolean(System.getProperty("smoke.sql", "true"))) {
                sqlPages(client);
            }
            rc = 0;
            System.out.println("java smoke: ok (" + checks + " checks)");
        } catch (Throwable t) {
            System.err.println("java smoke: FAILED after " + checks + " checks:");
            t.printStackTrace();
        } finally {
            if (client != null) {
                try {
                    client.shutdown();
                } catch (Throwable t) {
                    System.err.println("java smoke: shutdown failed: " + t);
                    rc = 1;
                }
            }
        }
        System.exit(rc);
    }

    /**
     * SQL rows fetched in pages of 64 (Sql.Execute, then Sql.Fetch): every row once, and an
     * OFFSET that skips the first pages' rows (ferrogrid streams these scans: its rounds whose
     * rows OFFSET skipped must not answer an empty page before the last, which ends this
     * client's iteration).
     */
    static void sqlPages(HazelcastInstance client) {
        String name = "smoke_sql_pages_" + UUID.randomUUID().toString().replace("-", "");
        IMap<Integer, String> map = client.getMap(name);
        Map<Integer, String> all = new HashMap<>();
        for (int key = 0; key < 5000; key++) {
            all.put(key, "v" + key);
        }
        map.putAll(all);
        client.getSql().execute("CREATE MAPPING " + name
            + " TYPE IMap OPTIONS ('keyFormat'='int', 'valueFormat'='varchar')").close();
        checkEq(10, sqlRows(client, "SELECT __key FROM " + name + " LIMIT 50 OFFSET 4990").size(), "rows past an OFFSET");
        Set<Integer> keys = new HashSet<>(sqlRows(client, "SELECT __key FROM " + name));
        checkEq(5000, keys.size(), "every row once, in pages");
        checkEq(5, sqlRows(client, "SELECT __key FROM " + name + " WHERE __key % 1000 = 7").size(), "a WHERE's rows");
        client.getSql().execute("DROP MAPPING " + name).close();
        map.destroy();
    }

    static List<Integer> sqlRows(HazelcastInstance client, String sql) {
        List<Integer> keys = new ArrayList<>();
        try (SqlResult result = client.getSql().execute(new SqlStatement(sql).setCursorBufferSize(64))) {
            for (SqlRow row : result) {
                keys.add(row.<Integer>getObject(0));
            }
        }
        return keys;
    }

    /** A map and a queue committed together; a queue's poll and a list's add rolled back. */
    static void transaction(HazelcastInstance client) throws InterruptedException {
        String suffix = UUID.randomUUID().toString();
        IMap<String, String> map = client.getMap("java-smoke-txn-map-" + suffix);
        IQueue<String> queue = client.getQueue("java-smoke-txn-q-" + suffix);
        IList<String> list = client.getList("java-smoke-txn-list-" + suffix);
        queue.offer("first");
        TransactionContext context = client.newTransactionContext();
        context.beginTransaction();
        TransactionalMap<String, String> txMap = context.getMap(map.getName());
        TransactionalQueue<String> txQueue = context.getQueue(queue.getName());
        checkEq(null, txMap.put("k", "v"), "transactional put");
        checkEq("first", txQueue.poll(), "transactional poll");
        check(txQueue.offer("second"), "transactional offer");
        checkEq(1, txQueue.size(), "transactional size counts its own offer and poll");
        checkEq(0, queue.size(), "others see neither the reserved item nor the offer");
        context.commitTransaction();
        checkEq("v", map.get("k"), "the map's put committed");
        checkEq(Arrays.asList("second"), new ArrayList<>(queue), "the queue's poll and offer committed");
        TransactionContext rolledBack = client.newTransactionContext();
        rolledBack.beginTransaction();
        checkEq("second", rolledBack.getQueue(queue.getName()).poll(), "transactional poll");
        check(rolledBack.getList(list.getName()).add("x"), "transactional list add");
        rolledBack.rollbackTransaction();
        checkEq(Arrays.asList("second"), new ArrayList<>(queue), "rolled back: the item is back");
        checkEq(0, list.size(), "rolled back: nothing added");
    }

    /** A plain Xid: a format, a global transaction id and a branch qualifier. */
    static final class SmokeXid implements Xid {
        private final byte[] global;
        private final byte[] branch;

        SmokeXid(String global, int branch) {
            this.global = global.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            this.branch = new byte[] {(byte) branch};
        }

        @Override
        public int getFormatId() {
            return 42;
        }

        @Override
        public byte[] getGlobalTransactionId() {
            return global.clone();
        }

        @Override
        public byte[] getBranchQualifier() {
            return branch.clone();
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Xid && sameXid(this, (Xid) other);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(global) * 31 + Arrays.hashCode(branch);
        }
    }

    static boolean sameXid(Xid one, Xid other) {
        return one.getFormatId() == other.getFormatId()
                && Arrays.equals(one.getGlobalTransactionId(), other.getGlobalTransactionId())
                && Arrays.equals(one.getBranchQualifier(), other.getBranchQualifier());
    }

    static boolean listed(Xid[] xids, Xid xid) {
        return Arrays.stream(xids).anyMatch(listed -> sameXid(listed, xid));
    }

    /**
     * Whether `xid` drops out of `xa`'s recover within 10 s. An ended transaction leaves the
     * other members' lists a moment after the commit's answer (Hazelcast 5.6 with two members:
     * a backup's finalize; ferrogrid: the XA_ENDED announcement).
     */
    static boolean unlisted(HazelcastXAResource xa, Xid xid) throws XAException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (listed(xa.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN), xid)) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    /** A branch of `xid` that puts `key` through the XA resource's transactional map. */
    static void xaPut(HazelcastXAResource xa, Xid xid, String mapName, String key) throws XAException {
        xa.start(xid, XAResource.TMNOFLAGS);
        TransactionalMap<String, String> txMap = xa.getTransactionContext().getMap(mapName);
        checkEq(null, txMap.put(key, key + "-value"), "XA transactional put");
        xa.end(xid, XAResource.TMSUCCESS);
    }

    /**
     * XA through HazelcastXAResource: prepare and commit, rollback, one-phase commit, a prepared
     * branch recovered and committed by a second client, and unknown Xids.
     */
    static void xa(HazelcastInstance client, ClientConfig cfg) throws XAException {
        String suffix = UUID.randomUUID().toString();
        IMap<String, String> map = client.getMap("java-smoke-xa-" + suffix);
        HazelcastXAResource xa = client.getXAResource();

        Xid twoPhase = new SmokeXid(suffix, 1);
        xaPut(xa, twoPhase, map.getName(), "two-phase");
        checkEq(null, map.get("two-phase"), "not visible before its commit");
        checkEq(XAResource.XA_OK, xa.prepare(twoPhase), "XA prepare");
        check(listed(xa.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN), twoPhase), "recover lists a prepared Xid");
        xa.commit(twoPhase, false);
        checkEq("two-phase-value", map.get("two-phase"), "prepared and committed: visible");
        check(unlisted(xa, twoPhase), "committed: no longer listed");

        Xid rolledBack = new SmokeXid(suffix, 2);
        xaPut(xa, rolledBack, map.getName(), "rolled-back");
        checkEq(XAResource.XA_OK, xa.prepare(rolledBack), "XA prepare");
        xa.rollback(rolledBack);
        checkEq(null, map.get("rolled-back"), "prepared and rolled back: not visible");

        Xid onePhase = new SmokeXid(suffix, 3);
        xaPut(xa, onePhase, map.getName(), "one-phase");
        xa.commit(onePhase, true);
        checkEq("one-phase-value", map.get("one-phase"), "one-phase commit: visible");

        Xid recovered = new SmokeXid(suffix, 4);
        xaPut(xa, recovered, map.getName(), "recovered");
        checkEq(XAResource.XA_OK, xa.prepare(recovered), "XA prepare");
        cfg.setInstanceName("java-smoke-recovery-" + suffix);
        HazelcastInstance recovery = HazelcastClient.newHazelcastClient(cfg);
        try {
            HazelcastXAResource other = recovery.getXAResource();
            Xid[] prepared = other.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN);
            check(listed(prepared, recovered), "another client's recover lists the prepared Xid");
            other.commit(recovered, false);
            checkEq("recovered-value", map.get("recovered"), "committed by another client's XAResource");
            check(unlisted(other, recovered), "recovered: no longer listed");
            // An Xid no one prepared: Hazelcast's member answers its finalize as done.
            other.commit(new SmokeXid(suffix, 98), false);
            other.rollback(new SmokeXid(suffix, 98));
        } finally {
            recovery.shutdown();
        }

        Xid unknown = new SmokeXid(suffix, 99);
        try {
            xa.prepare(unknown);
            check(false, "prepare of an unknown Xid refused");
        } catch (XAException expected) {
            check(true, "prepare of an unknown Xid refused");
        }
        try {
            xa.commit(unknown, true);
            check(false, "one-phase commit of an unknown Xid refused");
        } catch (XAException expected) {
            check(true, "one-phase commit of an unknown Xid refused");
        }
        map.put("after", "ok");
        checkEq("ok", map.get("after"), "the connection still serves after the refusals");
    }

    static void queue(HazelcastInstance client) throws InterruptedException {
        IQueue<String> q = client.getQueue("java-smoke-q-" + UUID.randomUUID());
        List<String> added = new CopyOnWriteArrayList<>();
        q.addItemListener(new ItemListener<String>() {
            @Override
            public void itemAdded(ItemEvent<String> event) {
                added.add(event.getItem());
            }

            @Override
            public void itemRemoved(ItemEvent<String> event) {
            }
        }, true);
        check(q.offer("a"), "queue offer");
        q.put("b");
        checkEq(2, q.size(), "queue size");
        checkEq("a", q.peek(), "queue peek");
        checkEq("a", q.poll(), "queue poll in order");
        checkEq("b", q.take(), "queue take");
        Thread later = new Thread(() -> q.offer("late"));
        later.start();
        checkEq("late", q.poll(10, TimeUnit.SECONDS), "a timed poll gets a later offer");
        later.join();
        check(q.addAll(Arrays.asList("x", "y")), "queue addAll");
        List<String> drained = new ArrayList<>();
        checkEq(2, q.drainTo(drained), "queue drainTo");
        checkEq(Arrays.asList("x", "y"), drained, "drained in order");
        for (int i = 0; i < 100 && added.size() < 5; i++) {
            Thread.sleep(50);
        }
        checkEq(Arrays.asList("a", "b", "late", "x", "y"), new ArrayList<>(added), "item listener heard every add");
        q.destroy();
    }

    static void topic(HazelcastInstance client) throws Exception {
        ITopic<String> topic = client.getTopic("java-smoke-t-" + UUID.randomUUID());
        List<String> heard = new CopyOnWriteArrayList<>();
        List<Boolean> fromMember = new CopyOnWriteArrayList<>();
        UUID id = topic.addMessageListener(message -> {
            fromMember.add(message.getPublishingMember() != null);
            heard.add(message.getMessageObject());
        });
        topic.publish("a");
        topic.publishAll(Arrays.asList("b", "c"));
        for (int i = 0; i < 100 && heard.size() < 3; i++) {
            Thread.sleep(50);
        }
        checkEq(Arrays.asList("a", "b", "c"), new ArrayList<>(heard), "topic listener heard every message in order");
        checkEq(Arrays.asList(true, true, true), new ArrayList<>(fromMember), "topic messages name their member");
        check(topic.removeMessageListener(id), "topic removeMessageListener");
        topic.destroy();
    }

    static void ringbuffer(HazelcastInstance client) throws Exception {
        Ringbuffer<String> rb = client.getRingbuffer("java-smoke-rb-" + UUID.randomUUID());
        checkEq(10000L, rb.capacity(), "ringbuffer default capacity");
        checkEq(-1L, rb.tailSequence(), "empty ringbuffer tail");
        checkEq(0L, rb.add("a"), "ringbuffer add answers sequence 0");
        long last = rb.addAllAsync(Arrays.asList("b", "c", "d"), OverflowPolicy.OVERWRITE)
                .toCompletableFuture().get(10, TimeUnit.SECONDS);
        checkEq(3L, last, "ringbuffer addAll answers the last sequence");
        checkEq(4L, rb.size(), "ringbuffer size");
        checkEq("c", rb.readOne(2), "ringbuffer readOne");
        ReadResultSet<String> batch = rb.readManyAsync(1, 1, 2, null).toCompletableFuture().get(10, TimeUnit.SECONDS);
        checkEq(2, batch.size(), "readMany answers at most maxCount items");
        checkEq("b", batch.get(0), "readMany first item");
        checkEq(2L, batch.getSequence(1), "readMany item sequence");
        checkEq(2, batch.readCount(), "readMany read count");
        checkEq(3L, batch.getNextSequenceToReadFrom(), "readMany next sequence");
        Thread later = new Thread(() -> rb.add("e"));
        later.start();
        checkEq("e", rb.readOne(4), "readOne(tail + 1) gets a later add");
        later.join();
        rb.destroy();
    }

    /** Adds "item-<from>" .. "item-<to - 1>", 1000 in flight at a time. */
    static void addItems(CardinalityEstimator estimator, int from, int to) throws Exception {
        List<CompletionStage<Void>> pending = new ArrayList<>();
        for (int n = from; n < to; n++) {
            pending.add(estimator.addAsync("item-" + n));
            if (pending.size() == 1000 || n == to - 1) {
                for (CompletionStage<Void> added : pending) {
                    added.toCompletableFuture().get(10, TimeUnit.SECONDS);
                }
                pending.clear();
            }
        }
    }

    static void cardinalityEstimator(HazelcastInstance client) throws Exception {
        String name = "java-smoke-ce-" + UUID.randomUUID();
        CardinalityEstimator estimator = client.getCardinalityEstimator(name);
        checkEq(0L, estimator.estimate(), "a new estimator estimates 0");
        addItems(estimator, 0, 1000);
        checkEq(1000L, estimator.estimate(), "estimate of 1000 items (exact while sparse)");
        addItems(estimator, 0, 1000);
        checkEq(1000L, estimator.estimate(), "items added again do not count");
        addItems(estimator, 1000, 20000);
        // What a Hazelcast 5.6.0 member answers for these adds and estimates.
        checkEq(20078L, estimator.estimate(), "estimate of 20000 items (dense)");
        estimator.destroy();
        checkEq(0L, client.getCardinalityEstimator(name).estimate(), "a destroyed estimator starts again");
        client.getCardinalityEstimator(name).destroy();
    }

    static void dynamicConfig(HazelcastInstance client) {
        String name = "java-smoke-dc-" + UUID.randomUUID();
        client.getConfig().addMapConfig(new MapConfig(name).setTimeToLiveSeconds(5));
        client.getConfig().addMapConfig(new MapConfig(name).setTimeToLiveSeconds(5));
        IMap<String, String> map = client.getMap(name);
        map.put("k", "v");
        EntryView<String, String> view = map.getEntryView("k");
        checkEq(5000L, view.getTtl(), "the added map config's time-to-live governs a new map");
        try {
            client.getConfig().addMapConfig(new MapConfig(name).setTimeToLiveSeconds(6));
            check(false, "a conflicting map config is refused");
        } catch (InvalidConfigurationException expected) {
            check(true, "a conflicting map config is refused");
        }
        client.getConfig().addQueueConfig(new QueueConfig(name).setMaxSize(1));
        IQueue<String> queue = client.getQueue(name);
        check(queue.offer("a") && !queue.offer("b"), "the added queue config's max-size governs a new queue");
        map.destroy();
        queue.destroy();
    }

    static void list(HazelcastInstance client) throws InterruptedException {
        IList<String> list = client.getList("java-smoke-list-" + UUID.randomUUID());
        List<String> added = new CopyOnWriteArrayList<>();
        UUID id = list.addItemListener(new ItemListener<String>() {
            @Override
            public void itemAdded(ItemEvent<String> event) {
                added.add(event.getItem());
            }

            @Override
            public void itemRemoved(ItemEvent<String> event) {
            }
        }, true);
        check(list.add("a"), "list add");
        check(list.addAll(Arrays.asList("b", "c")), "list addAll");
        list.add(0, "z");
        checkEq(4, list.size(), "list size");
        checkEq("a", list.get(1), "list get by index");
        checkEq("z", list.set(0, "y"), "list set answers the item it replaced");
        checkEq("y", list.remove(0), "list remove(index) answers the removed item");
        check(list.remove("b"), "list remove(item)");
        check(!list.remove("b"), "list remove of an absent item");
        checkEq(1, list.indexOf("c"), "list indexOf");
        checkEq(Arrays.asList("a", "c"), new ArrayList<>(list), "list keeps insertion order");
        checkEq(Arrays.asList("c"), new ArrayList<>(list.subList(1, 2)), "list subList");
        for (int i = 0; i < 100 && added.size() < 5; i++) {
            Thread.sleep(50);
        }
        List<String> heard = new ArrayList<>(added);
        heard.sort(null); // the events of one addAll come in no promised order
        checkEq(Arrays.asList("a", "b", "c", "y", "z"), heard, "list item listener heard every add");
        check(list.removeItemListener(id), "list removeItemListener");
        list.destroy();
    }

    static void set(HazelcastInstance client) {
        ISet<String> set = client.getSet("java-smoke-set-" + UUID.randomUUID());
        check(set.add("a"), "set add");
        check(!set.add("a"), "set add of an item already there");
        check(set.addAll(Arrays.asList("a", "b", "c")), "set addAll");
        checkEq(3, set.size(), "set size");
        check(set.contains("b"), "set contains");
        check(set.remove("b"), "set remove");
        check(!set.remove("b"), "set remove of an absent item");
        checkEq(new HashSet<>(Arrays.asList("a", "c")), new HashSet<>(set), "set items");
        set.destroy();
    }

    static void multiMap(HazelcastInstance client) {
        // Hazelcast's default value collection: a set of values per key
        MultiMap<String, String> mm = client.getMultiMap("java-smoke-mm-" + UUID.randomUUID());
        check(mm.put("k", "v1"), "multimap put");
        check(mm.put("k", "v2"), "multimap put of a second value");
        check(!mm.put("k", "v1"), "multimap put of a value already there");
        check(mm.put("other", "o"), "multimap put of another key");
        checkEq(new HashSet<>(Arrays.asList("v1", "v2")), new HashSet<>(mm.get("k")), "multimap get");
        checkEq(3, mm.size(), "multimap size counts values");
        checkEq(2, mm.valueCount("k"), "multimap valueCount");
        check(mm.containsEntry("k", "v2"), "multimap containsEntry");
        check(mm.remove("k", "v1"), "multimap remove of one value");
        checkEq(Arrays.asList("v2"), new ArrayList<>(mm.remove("k")), "multimap remove(key) answers the values");
        check(mm.get("k").isEmpty(), "multimap get of a removed key");
        mm.put("gone", "g1");
        mm.put("gone", "g2");
        mm.delete("gone");
        check(!mm.containsKey("gone"), "multimap delete removes the key");
        checkEq(new HashSet<>(Arrays.asList("other")), mm.keySet(), "multimap keySet");
        mm.destroy();
    }

    static void replicatedMap(HazelcastInstance client) throws InterruptedException {
        // a full copy on every member (no entry listener here: EntryEvent's class file fails
        // javac -Xlint:all -Werror; the Python and Node.js suites listen)
        ReplicatedMap<String, String> rm = client.getReplicatedMap("java-smoke-rm-" + UUID.randomUUID());
        checkEq(null, rm.put("k", "v1"), "replicated map put of a new key");
        checkEq("v1", rm.put("k", "v2"), "replicated map put answers the previous value");
        checkEq("v2", rm.get("k"), "replicated map get");
        Map<String, String> more = new HashMap<>();
        more.put("a", "x");
        more.put("b", "y");
        rm.putAll(more);
        // putAll's entries reach every member asynchronously (Hazelcast's replicated map is
        // eventually consistent): a member the client reads from may have 2 of 3 for a moment
        for (int i = 0; i < 200 && rm.size() != 3; i++) {
            Thread.sleep(25);
        }
        checkEq(3, rm.size(), "replicated map size");
        check(!rm.isEmpty(), "replicated map isEmpty");
        check(rm.containsKey("a"), "replicated map containsKey");
        check(rm.containsValue("y"), "replicated map containsValue");
        checkEq(new HashSet<>(Arrays.asList("a", "b", "k")), new HashSet<>(rm.keySet()), "replicated map keySet");
        checkEq(new HashSet<>(Arrays.asList("v2", "x", "y")), new HashSet<>(rm.values()), "replicated map values");
        checkEq(3, rm.entrySet().size(), "replicated map entrySet");
        checkEq("v2", rm.remove("k"), "replicated map remove answers the value");
        checkEq(null, rm.remove("k"), "replicated map remove of an absent key");
        rm.put("short", "s", 1, TimeUnit.SECONDS);
        checkEq("s", rm.get("short"), "replicated map get before the ttl ends");
        for (int i = 0; i < 200 && rm.get("short") != null; i++) {
            Thread.sleep(25);
        }
        checkEq(null, rm.get("short"), "replicated map entry gone after its ttl");
        rm.clear();
        checkEq(0, rm.size(), "replicated map size after clear");
        rm.destroy();
    }

    static void run(HazelcastInstance client) {
        String name = "java-smoke-" + UUID.randomUUID();
        IMap<String, String> m = client.getMap(name);

        // fresh map
        checkEq(0, m.size(), "fresh size");
        check(m.isEmpty(), "fresh isEmpty");
        checkEq(null, m.get("k1"), "get on fresh map");

        // put / get
        checkEq(null, m.put("k1", "v1"), "put new returns null");
        checkEq("v1", m.put("k1", "v1b"), "put existing returns previous");
        checkEq("v1b", m.get("k1"), "get k1");

        // set
        m.set("k2", "v2");
        checkEq("v2", m.get("k2"), "get after set");
        m.set("k2", "v2b");
        checkEq("v2b", m.get("k2"), "get after second set");

        // putIfAbsent
        checkEq(null, m.putIfAbsent("k3", "v3"), "putIfAbsent absent returns null");
        checkEq("v3", m.putIfAbsent("k3", "other"), "putIfAbsent present returns existing");
        checkEq("v3", m.get("k3"), "putIfAbsent did not overwrite");

        // replace
        checkEq(null, m.replace("absent", "x"), "replace absent returns null");
        check(!m.containsKey("absent"), "replace absent creates nothing");
        checkEq("v3", m.replace("k3", "v3b"), "replace present returns previous");
        check(m.replace("k3", "v3b", "v3c"), "replace(k, old, new) with matching old");
        check(!m.replace("k3", "wrong", "v3d"), "replace(k, old, new) with wrong old");
        checkEq("v3c", m.get("k3"), "value after replaces");

        // remove
        checkEq("v3c", m.remove("k3"), "remove returns previous");
        checkEq(null, m.remove("k3"), "remove absent returns null");
        check(!m.remove("k2", "wrong"), "remove(k, v) with wrong value");
        check(m.remove("k2", "v2b"), "remove(k, v) with matching value");

        // size / containsKey / containsValue
        checkEq(1, m.size(), "size");
        check(m.containsKey("k1"), "containsKey present");
        check(!m.containsKey("k2"), "containsKey absent");
        check(m.containsValue("v1b"), "containsValue present");
        check(!m.containsValue("v1"), "containsValue absent");

        // putAll / getAll / keySet / values / entrySet
        Map<String, String> batch = new HashMap<>();
        for (int i = 0; i < 100; i++) {
            batch.put("b" + i, "bv" + i);
        }
        m.putAll(batch);
        checkEq(101, m.size(), "size after putAll");
        Map<String, String> got = m.getAll(new HashSet<>(Arrays.asList("b0", "b99", "k1", "absent")));
        Map<String, String> want = new HashMap<>();
        want.put("b0", "bv0");
        want.put("b99", "bv99");
        want.put("k1", "v1b");
        checkEq(want, got, "getAll omits absent keys");

        Set<String> expectedKeys = new HashSet<>(batch.keySet());
        expectedKeys.add("k1");
        checkEq(expectedKeys, new HashSet<>(m.keySet()), "keySet");
        List<String> values = new ArrayList<>(m.values());
        List<String> expectedValues = new ArrayList<>(batch.values());
        expectedValues.add("v1b");
        values.sort(null);
        expectedValues.sort(null);
        checkEq(expectedValues, values, "values");
        Map<String, String> entries = new HashMap<>();
        for (Map.Entry<String, String> e : m.entrySet()) {
            entries.put(e.getKey(), e.getValue());
        }
        Map<String, String> expectedEntries = new HashMap<>(batch);
        expectedEntries.put("k1", "v1b");
        checkEq(expectedEntries, entries, "entrySet");

        // the map is listed as a distributed object
        boolean listed = false;
        Collection<DistributedObject> objects = client.getDistributedObjects();
        for (DistributedObject o : objects) {
            if (o.getName().equals(name) && o.getServiceName().equals("hz:impl:mapService")) {
                listed = true;
            }
        }
        check(listed, "getDistributedObjects lists the map");

        // clear
        m.clear();
        checkEq(0, m.size(), "size after clear");
        check(m.isEmpty(), "isEmpty after clear");
        checkEq(null, m.get("k1"), "get after clear");

        // Long keys and values
        IMap<Long, Long> lm = client.getMap(name + "-long");
        checkEq(null, lm.put(1L, 100L), "long put new");
        checkEq(100L, lm.put(1L, 101L), "long put existing");
        lm.set(Long.MAX_VALUE, Long.MIN_VALUE);
        lm.set(-1L, 0L);
        checkEq(101L, lm.get(1L), "long get");
        checkEq(Long.MIN_VALUE, lm.get(Long.MAX_VALUE), "long get max");
        checkEq(null, lm.get(2L), "long get absent");
        checkEq(3, lm.size(), "long size");
        check(lm.containsKey(-1L), "long containsKey");
        Map<Long, Long> lbatch = new HashMap<>();
        for (long i = 10; i < 20; i++) {
            lbatch.put(i, i * i);
        }
        lm.putAll(lbatch);
        checkEq(13, lm.size(), "long size after putAll");
        checkEq(lbatch, lm.getAll(lbatch.keySet()), "long getAll");
        checkEq(101L, lm.remove(1L), "long remove");
        checkEq(12, lm.size(), "long size after remove");

        // Iteration (MapFetchEntries by partition, 100 at a time), and removeAll(predicate)
        IMap<Integer, Integer> im = client.getMap(name + "-iterated");
        Map<Integer, Integer> ibatch = new HashMap<>();
        for (int i = 0; i < 4000; i++) {
            ibatch.put(i, i);
        }
        im.putAll(ibatch);
        Map<Integer, Integer> iterated = new HashMap<>();
        int visits = 0;
        for (Map.Entry<Integer, Integer> e : im) {
            iterated.put(e.getKey(), e.getValue());
            visits++;
        }
        checkEq(4000, visits, "for (Map.Entry e : map) visits every entry once");
        checkEq(ibatch, iterated, "for (Map.Entry e : map) entries");
        im.removeAll(com.hazelcast.query.Predicates.lessThan("this", 1000));
        checkEq(3000, im.size(), "removeAll(predicate) size");
        checkEq(null, im.get(999), "removeAll(predicate) removed");
        checkEq(1000, im.get(1000), "removeAll(predicate) kept");
        im.destroy();

        // String "1" and Long 1 are different keys, even in the same map
        IMap<Object, Object> mixed = client.getMap(name + "-mixed");
        mixed.put("1", "string");
        mixed.put(1L, "long");
        mixed.put(1, "int");
        checkEq(3, mixed.size(), "mixed key types are different keys");
        checkEq("long", mixed.get(1L), "mixed get long");
        checkEq("int", mixed.get(1), "mixed get int");
        checkEq("string", mixed.get("1"), "mixed get string");

        // destroy
        m.destroy();
        lm.destroy();
        mixed.destroy();
        for (DistributedObject o : client.getDistributedObjects()) {
            check(!o.getName().startsWith(name), "destroyed map no longer listed: " + o.getName());
        }
        IMap<String, String> again = client.getMap(name);
        checkEq(0, again.size(), "size after destroy");
        checkEq(null, again.get("b0"), "get after destroy");
        again.destroy();
    }
}
