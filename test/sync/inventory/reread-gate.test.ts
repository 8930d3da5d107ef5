import { randomUUID } from 'node:crypto';

import { afterAll, describe, expect, it } from 'vitest';

import { silentLogger } from '../../../src/log.js';
import { createRedis } from '../../../src/queue/connection.js';
import { markReread, RereadGate,rereadKey } from '../../../src/sync/inventory/reread-gate.js';
import { epochKey, redisIdentity } from '../../../src/sync/redis-identity.js';
import { deleteKeys } from '../../support/redis.js';
import { testConfig } from './harness.js';

const prefix = `test-${randomUUID()}`;
const redis = createRedis('redis://127.0.0.1:6379/0');
const source = (name: string, schedule?: string) => ({ name, kind: 'csv', dir: '/tmp', ...(schedule ? { schedule } : {}) });
const config = testConfig(prefix, 'http://127.0.0.1:1', {
  inventory: { sources: [source('a', '*/1 * * * * *'), source('b', '*/1 * * * * *'), source('off', '*/1 * * * * *')] },
});
// A disabled source is not waited for.
(config.inventory.sources[2] as { enabled: boolean }).enabled = false;

afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

describe('RereadGate', () => {
  it('passes at once while Redis stays the same; after a change, waits until every scheduled source was re-read under the new Redis', async () => {
    const gate = new RereadGate({ redis, config, logger: silentLogger() }, 60_000);
    await gate.pass();
    await gate.pass();

    // Redis is not the one it was (here: the epoch marker is gone, as after a flush).
    await redis.del(epochKey(prefix));
    const identity = await redisIdentity(redis, prefix);
    // One source re-read is not enough. The job is aborted before it asks: a gate that decides to wait
    // after its first read of the marks stops there with the abort, one that lets the job through resolves.
    await markReread(redis, prefix, 'a', identity);
    const early = new AbortController();
    early.abort(new Error('still waiting for a source'));
    const oneSource = await gate.pass(early.signal).then(() => 'passed', (error: unknown) => (error as Error).message);
    expect(oneSource, 'the gate passed with source a re-read and source b not').toBe('still waiting for a source');
    // Nothing re-read under the new Redis at all: it waits too.
    await redis.del(rereadKey(prefix, 'a'));
    const none = await gate.pass(early.signal).then(() => 'passed', (error: unknown) => (error as Error).message);
    expect(none, 'the gate passed with no source re-read').toBe('still waiting for a source');

    // Both scheduled sources re-read (the disabled one never is): it passes, even with the job's signal aborted.
    await markReread(redis, prefix, 'a', identity);
    await markReread(redis, prefix, 'b', identity);
    const both = await gate.pass(early.signal).then(() => 'passed', (error: unknown) => (error as Error).message);
    expect(both, 'the gate held the job with both scheduled sources re-read (a disabled source is never waited for)').toBe('passed');
    // Cleared for that Redis: the next job passes at once.
    await gate.pass(early.signal);
  });

  it('goes on after its bound when a source is not re-read, and stops waiting when the job is aborted', async () => {
    await redis.del(epochKey(prefix));
    const gate = new RereadGate({ redis, config, logger: silentLogger() }, 0);
    await gate.pass();
    await redis.del(epochKey(prefix));
    await gate.pass();

    const patient = new RereadGate({ redis, config, logger: silentLogger() }, 60_000);
    await patient.pass();
    await redis.del(epochKey(prefix));
    const abort = new AbortController();
    const waiting = patient.pass(abort.signal);
    abort.abort(new Error('shutting down'));
    await expect(waiting).rejects.toThrow('shutting down');
  });
});
