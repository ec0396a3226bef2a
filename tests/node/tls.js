'use strict';
// Node.js client over TLS: node tls.js 127.0.0.1:5701 CLUSTER CA.pem [CERT.pem KEY.pem]
// Connects with `network.ssl` (trusting CA.pem, presenting CERT/KEY when given), puts and gets a
// value on a fresh map, prints "node tls: ok" and exits 0; exits 1 on any failure or after 20 s.
// Run by tests/python/test_tls.py, which makes the certificates and starts a TLS member.

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const { Client } = require('hazelcast-client');

const HARD_TIMEOUT_MS = 20000;
process.exitCode = 1; // only a completed run sets 0

const timer = setTimeout(() => {
    console.error(`node tls: FAILED: timed out after ${HARD_TIMEOUT_MS / 1000} s`);
    process.exit(1);
}, HARD_TIMEOUT_MS);

async function main() {
    const [address, clusterName, caFile, certFile, keyFile] = process.argv.slice(2);
    if (!address || !clusterName || !caFile) {
        throw new Error('usage: node tls.js HOST:PORT CLUSTER CA.pem [CERT.pem KEY.pem]');
    }
    const host = address.slice(0, address.lastIndexOf(':'));
    if (!(host.startsWith('127.') || host === 'localhost')) {
        throw new Error(`refusing non-loopback address ${address}`);
    }
    const sslOptions = { ca: [fs.readFileSync(caFile)], servername: 'localhost' };
    if (certFile) {
        sslOptions.cert = fs.readFileSync(certFile);
        sslOptions.key = fs.readFileSync(keyFile);
    }
    const client = await Client.newHazelcastClient({
        clusterName,
        network: { clusterMembers: [address], ssl: { enabled: true, sslOptions } },
        connectionStrategy: { connectionRetry: { clusterConnectTimeoutMillis: 5000 } },
        properties: { 'hazelcast.logging.level': 'WARN' },
    });
    try {
        const map = await client.getMap('node-tls-' + crypto.randomUUID());
        const value = 'v'.repeat(100000);
        assert.equal(await map.put('k', value), null, 'put new key returns null');
        assert.equal(await map.get('k'), value, 'get returns the value');
        assert.equal(await map.size(), 1, 'size');
    } finally {
        await client.shutdown();
    }
    console.log('node tls: ok');
    process.exitCode = 0;
}

main()
    .catch((error) => {
        console.error('node tls: FAILED:', error);
        process.exitCode = 1;
    })
    .finally(() => clearTimeout(timer));
