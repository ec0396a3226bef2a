'use strict';
// Node.js client smoke test: node smoke.js 127.0.0.1:5701
// Connects (cluster name "dev"), runs put/get/size/entrySet/remove on a fresh map with string
// and number keys, offer/poll/peek and an item listener on a queue, add/readOne/readMany on a
// ringbuffer, publish and a listener on a reliable topic, index operations and an item listener
// on a list, add/contains/remove on a set, put/get/remove/removeAll on a multimap,
// put/get/putAll/views/remove/clear and an entry listener on a replicated map, prints
// "node smoke: ok" and exits 0; exits 1 on any failure or after 60 s.

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { Client } = require('hazelcast-client');

const HARD_TIMEOUT_MS = 60000;
process.exitCode = 1; // only a completed run sets 0

const timer = setTimeout(() => {
    console.error(`node smoke: FAILED: timed out after ${HARD_TIMEOUT_MS / 1000} s`);
    process.exit(1);
}, HARD_TIMEOUT_MS);

function sortEntries(entries) {
    return entries
        .map(([k, v]) => [typeof k + ':' + String(k), v])
        .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

async function main() {
    const address = process.argv[2] || process.env.FERROGRID_ADDRESS;
    if (!address) {
        throw new Error('usage: node smoke.js HOST:PORT');
    }
    const host = address.slice(0, address.lastIndexOf(':'));
    if (!(host.startsWith('127.') || host === 'localhost')) {
        throw new Error(`refusing non-loopback address ${address}`);
    }

    const client = await Client.newHazelcastClient({
        clusterName: 'dev',
        instanceName: 'node-smoke',
        network: { clusterMembers: [address] },
        connectionStrategy: { connectionRetry: { clusterConnectTimeoutMillis: 30000 } },
        properties: { 'hazelcast.logging.level': 'WARN' },
    });
    try {
        const mapName = 'node-smoke-' + crypto.randomUUID();
        const map = await client.getMap(mapName);

        // --- fresh map
        assert.equal(await map.size(), 0, 'fresh map size');
        assert.equal(await map.get('k1'), null, 'get on a fresh map');

        // --- put (string keys): previous value or null
        assert.equal(await map.put('k1', 'v1'), null, 'put new key returns null');
        assert.equal(await map.put('k2', 'v2'), null, 'put new key returns null');
        assert.equal(await map.put('k1', 'v1b'), 'v1', 'put existing key returns previous value');

        // --- number keys (JS numbers serialize as Double by default) and a number value
        assert.equal(await map.put(42, 'forty-two'), null, 'put number key');
        assert.equal(await map.put(3.5, 7), null, 'put number key with number value');
        assert.equal(await map.put('42', 'string-42'), null, 'string "42" is a different key than 42');

        // --- get
        assert.equal(await map.get('k1'), 'v1b', 'get k1');
        assert.equal(await map.get('k2'), 'v2', 'get k2');
        assert.equal(await map.get(42), 'forty-two', 'get 42');
        assert.equal(await map.get('42'), 'string-42', 'get "42"');
        assert.equal(await map.get(3.5), 7, 'get 3.5');
        assert.equal(await map.get('absent'), null, 'get absent key');

        // --- size
        assert.equal(await map.size(), 5, 'size after puts');

        // --- entrySet
        const entries = await map.entrySet();
        assert.deepEqual(
            sortEntries(entries),
            sortEntries([['k1', 'v1b'], ['k2', 'v2'], [42, 'forty-two'], [3.5, 7], ['42', 'string-42']]),
            'entrySet',
        );

        // --- remove: previous value, then null
        assert.equal(await map.remove('k2'), 'v2', 'remove returns previous value');
        assert.equal(await map.remove('k2'), null, 'remove absent returns null');
        assert.equal(await map.remove(42), 'forty-two', 'remove number key');
        assert.equal(await map.get('42'), 'string-42', 'string key untouched by removing number key');
        assert.equal(await map.size(), 3, 'size after removes');
        assert.deepEqual(
            sortEntries(await map.entrySet()),
            sortEntries([['k1', 'v1b'], [3.5, 7], ['42', 'string-42']]),
            'entrySet after removes',
        );

        await map.destroy();

        // --- queue: FIFO, a listener, a poll that waits for a later offer
        const queue = await client.getQueue('node-smoke-q-' + crypto.randomUUID());
        const added = [];
        await queue.addItemListener({ itemAdded: (event) => added.push(event.item) }, true);
        assert.equal(await queue.offer('a'), true, 'queue offer');
        await queue.put('b');
        assert.equal(await queue.size(), 2, 'queue size');
        assert.equal(await queue.peek(), 'a', 'queue peek');
        assert.equal(await queue.poll(), 'a', 'queue poll in order');
        assert.equal(await queue.poll(), 'b', 'queue poll second');
        const waiting = queue.poll(10000);
        setTimeout(() => queue.offer('late'), 300);
        assert.equal(await waiting, 'late', 'a timed poll gets a later offer');
        for (let i = 0; i < 100 && added.length < 3; i++) {
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assert.deepEqual(added, ['a', 'b', 'late'], 'item listener heard every add');
        assert.equal(await queue.isEmpty(), true, 'queue drained');
        await queue.destroy();

        // --- ringbuffer: sequences, readOne, readMany, a readOne that waits for a later add
        const rb = await client.getRingbuffer('node-smoke-rb-' + crypto.randomUUID());
        assert.equal((await rb.capacity()).toNumber(), 10000, 'ringbuffer default capacity');
        assert.equal((await rb.tailSequence()).toNumber(), -1, 'empty ringbuffer tail');
        assert.equal((await rb.add('a')).toNumber(), 0, 'ringbuffer add answers sequence 0');
        assert.equal((await rb.addAll(['b', 'c', 'd'])).toNumber(), 3, 'addAll answers the last sequence');
        assert.equal((await rb.size()).toNumber(), 4, 'ringbuffer size');
        assert.equal(await rb.readOne(2), 'c', 'ringbuffer readOne');
        const readMany = await rb.readMany(1, 1, 2);
        assert.deepEqual([...readMany], ['b', 'c'], 'readMany answers at most maxCount items');
        assert.equal(readMany.getReadCount(), 2, 'readMany read count');
        assert.equal(readMany.getSequence(1).toNumber(), 2, 'readMany item sequence');
        assert.equal(readMany.getNextSequenceToReadFrom().toNumber(), 3, 'readMany next sequence');
        const waitingRead = rb.readOne(4);
        setTimeout(() => rb.add('e'), 300);
        assert.equal(await waitingRead, 'e', 'readOne(tail + 1) gets a later add');
        await rb.destroy();

        // --- list: insertion order, index operations, an item listener
        const list = await client.getList('node-smoke-list-' + crypto.randomUUID());
        const listAdded = [];
        await list.addItemListener({ itemAdded: (event) => listAdded.push(event.item) }, true);
        assert.equal(await list.add('a'), true, 'list add');
        assert.equal(await list.addAll(['b', 'c']), true, 'list addAll');
        await list.addAt(0, 'z');
        assert.equal(await list.size(), 4, 'list size');
        assert.equal(await list.get(1), 'a', 'list get by index');
        assert.equal(await list.set(0, 'y'), 'z', 'list set answers the item it replaced');
        assert.equal(await list.removeAt(0), 'y', 'list removeAt answers the removed item');
        assert.equal(await list.remove('b'), true, 'list remove');
        assert.equal(await list.remove('b'), false, 'list remove of an absent item');
        assert.equal(await list.indexOf('c'), 1, 'list indexOf');
        assert.deepEqual(await list.toArray(), ['a', 'c'], 'list keeps insertion order');
        assert.deepEqual((await list.subList(1, 2)).toArray(), ['c'], 'list subList');
        for (let i = 0; i < 100 && listAdded.length < 5; i++) {
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
        // the events of one addAll come in no promised order
        assert.deepEqual([...listAdded].sort(), ['a', 'b', 'c', 'y', 'z'], 'list item listener heard every add');
        await list.destroy();

        // --- set: no duplicates
        const set = await client.getSet('node-smoke-set-' + crypto.randomUUID());
        assert.equal(await set.add('a'), true, 'set add');
        assert.equal(await set.add('a'), false, 'set add of an item already there');
        assert.equal(await set.addAll(['a', 'b', 'c']), true, 'set addAll');
        assert.equal(await set.size(), 3, 'set size');
        assert.equal(await set.contains('b'), true, 'set contains');
        assert.equal(await set.remove('b'), true, 'set remove');
        assert.equal(await set.remove('b'), false, 'set remove of an absent item');
        assert.deepEqual((await set.toArray()).sort(), ['a', 'c'], 'set items');
        await set.destroy();

        // --- multimap: a set of values per key (Hazelcast's default value collection)
        const mm = await client.getMultiMap('node-smoke-mm-' + crypto.randomUUID());
        assert.equal(await mm.put('k', 'v1'), true, 'multimap put');
        assert.equal(await mm.put('k', 'v2'), true, 'multimap put of a second value');
        assert.equal(await mm.put('k', 'v1'), false, 'multimap put of a value already there');
        assert.equal(await mm.put('other', 'o'), true, 'multimap put of another key');
        assert.deepEqual((await mm.get('k')).toArray().sort(), ['v1', 'v2'], 'multimap get');
        assert.equal(await mm.size(), 3, 'multimap size counts values');
        assert.equal(await mm.valueCount('k'), 2, 'multimap valueCount');
        assert.equal(await mm.containsEntry('k', 'v2'), true, 'multimap containsEntry');
        assert.equal(await mm.remove('k', 'v1'), true, 'multimap remove of one value');
        assert.deepEqual((await mm.removeAll('k')).toArray(), ['v2'], 'multimap removeAll answers the values');
        assert.deepEqual((await mm.get('k')).toArray(), [], 'multimap get of a removed key');
        assert.deepEqual(await mm.keySet(), ['other'], 'multimap keySet');
        await mm.destroy();

        // --- replicated map: a full copy on every member
        const rm = await client.getReplicatedMap('node-smoke-rm-' + crypto.randomUUID());
        const rmEvents = [];
        const rmListener = await rm.addEntryListener({
            added: (event) => rmEvents.push(['ADDED', event.key, event.value]),
            updated: (event) => rmEvents.push(['UPDATED', event.key, event.value, event.oldValue]),
            removed: (event) => rmEvents.push(['REMOVED', event.key, event.oldValue]),
        });
        assert.equal(await rm.put('k', 'v1'), null, 'replicated map put of a new key');
        assert.equal(await rm.put('k', 'v2'), 'v1', 'replicated map put answers the previous value');
        assert.equal(await rm.get('k'), 'v2', 'replicated map get');
        await rm.putAll([['a', 'x'], ['b', 'y']]);
        assert.equal(await rm.size(), 3, 'replicated map size');
        assert.equal(await rm.isEmpty(), false, 'replicated map isEmpty');
        assert.equal(await rm.containsKey('a'), true, 'replicated map containsKey');
        assert.equal(await rm.containsValue('y'), true, 'replicated map containsValue');
        assert.deepEqual((await rm.keySet()).sort(), ['a', 'b', 'k'], 'replicated map keySet');
        assert.deepEqual((await rm.values()).toArray().sort(), ['v2', 'x', 'y'], 'replicated map values');
        assert.deepEqual((await rm.entrySet()).sort(), [['a', 'x'], ['b', 'y'], ['k', 'v2']], 'replicated map entrySet');
        assert.equal(await rm.remove('k'), 'v2', 'replicated map remove answers the value');
        assert.equal(await rm.remove('k'), null, 'replicated map remove of an absent key');
        for (let i = 0; i < 200 && rmEvents.length < 6; i++) {
            await new Promise((resolve) => setTimeout(resolve, 25));
        }
        assert.deepEqual(rmEvents.filter((event) => event[1] === 'k'), [
            ['ADDED', 'k', 'v1'],
            ['UPDATED', 'k', 'v2', 'v1'],
            ['REMOVED', 'k', 'v2'],
            ['REMOVED', 'k', null], // an absent key's removal is heard too, as in Hazelcast
        ], 'replicated map entry events');
        assert.equal(await rm.removeEntryListener(rmListener), true, 'replicated map removeEntryListener');
        await rm.clear();
        assert.equal(await rm.size(), 0, 'replicated map size after clear');
        await rm.destroy();

        // --- reliable topic (the Node.js client's only topic, on ringbuffer _hz_rb_<name>)
        const topic = await client.getReliableTopic('node-smoke-rt-' + crypto.randomUUID());
        const heard = [];
        const listenerId = topic.addMessageListener((message) => heard.push(message.messageObject));
        // the listener reads from the tail as of its start (an asynchronous tailSequence):
        // publish until it hears something, then once more
        const published = [];
        for (let i = 0; i < 100 && heard.length === 0; i++) {
            published.push('m' + i);
            await topic.publish('m' + i);
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
        published.push('last');
        await topic.publish('last');
        for (let i = 0; i < 100 && heard[heard.length - 1] !== 'last'; i++) {
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assert.ok(heard.length >= 2, 'reliable topic listener heard the messages');
        assert.deepEqual(heard, published.slice(published.length - heard.length), 'reliable topic messages in order');
        assert.equal(topic.removeMessageListener(listenerId), true, 'removeMessageListener');
        await topic.destroy();

        // --- flake id generator: ids (Long) from batches of 100, unique and increasing
        const flake = await client.getFlakeIdGenerator('node-smoke-flake-' + crypto.randomUUID());
        const flakeIds = [];
        for (let i = 0; i < 250; i++) {
            flakeIds.push(await flake.newId());
        }
        assert.equal(new Set(flakeIds.map((id) => id.toString())).size, 250, 'flake ids are unique');
        for (let i = 1; i < flakeIds.length; i++) {
            assert.ok(flakeIds[i].greaterThan(flakeIds[i - 1]), 'flake ids increase');
        }
        await flake.destroy();
    } finally {
        await client.shutdown();
    }
}

main().then(
    () => {
        clearTimeout(timer);
        console.log('node smoke: ok');
        process.exitCode = 0;
    },
    (err) => {
        clearTimeout(timer);
        console.error('node smoke: FAILED:', err && err.stack ? err.stack : err);
        process.exit(1);
    },
);
