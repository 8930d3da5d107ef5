/**
 * src/queue/redis-diagnosis.ts: which errors are Redis connection errors (counted during an outage, never logged with
 * a stack) and the words for them, with errors raised by real clients against a closed port and the shared Redis.
 */
import { type AddressInfo, createServer } from 'node:net';

import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';

import { loadConfig } from '../../src/config/load.js';
import { describeConnectionError, diagnoseRedis, isConnectionError } from '../../src/queue/redis-diagnosis.js';
import { sparePort } from '../../src/queue/redis-server.js';

const clients: Redis[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect();
});

/** A client that tries once and keeps no command while it is not connected. */
function client(port: number, options: { maxRetriesPerRequest?: number; enableOfflineQueue?: boolean } = {}): Redis {
  const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null, ...options });
  redis.on('error', () => undefined);
  clients.push(redis);
  return redis;
}

/** The socket error of a connection to a closed port (`connect()` itself rejects with "Connection is closed."). */
async function refusal(port: number): Promise<unknown> {
  const redis = client(port);
  const error = new Promise((resolve) => redis.once('error', resolve));
  await rejection(redis.connect());
  return error;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error('expected a rejection'),
    (error: unknown) => error,
  );
}

describe('isConnectionError and describeConnectionError', () => {
  it('names a refused connection with its address, and tells it from a command Redis refused', async () => {
    const port = await sparePort();
    const refused = await refusal(port);
    expect(isConnectionError(refused)).toBe(true);
    expect(describeConnectionError(refused)).toBe(`connection refused at 127.0.0.1:${port}`);

    const shared = client(6379);
    const reply = await rejection(shared.call('NO-SUCH-COMMAND'));
    expect(reply, 'Redis answered: a command error, not an outage').toBeInstanceOf(Error);
    expect(isConnectionError(reply)).toBe(false);
    expect(describeConnectionError(reply)).toBeUndefined();
  });

  it('counts ioredis errors of a connection that is not open, and wrapped ones, but not a job error that mentions a stream', async () => {
    const port = await sparePort();
    const offline = client(port, { enableOfflineQueue: false });
    const notWritable = await rejection(offline.ping());
    expect(String((notWritable as Error).message)).toMatch(/^Stream isn't writeable/);
    expect(isConnectionError(notWritable)).toBe(true);
    expect(describeConnectionError(notWritable)).toBe('the connection is not open (reconnecting)');

    const once = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 0, retryStrategy: (times) => (times > 3 ? null : 10) });
    once.on('error', () => undefined);
    clients.push(once);
    const retries = await rejection(once.ping());
    expect(isConnectionError(retries), String(retries)).toBe(true);
    expect(isConnectionError(new Error('job failed', { cause: notWritable }))).toBe(true);

    expect(isConnectionError(new Error("ERP export failed: Stream isn't writeable"))).toBe(false);
    expect(isConnectionError(new Error('store answered 503'))).toBe(false);
  });
});

describe('a connection the server resets', () => {
  it('is a connection error, in words "connection closed by the server" (a Redis killed mid-connection, a proxy dropping it)', async () => {
    // A server that accepts and resets each connection at once: the client's socket fails with ECONNRESET.
    const server = createServer((socket) => socket.resetAndDestroy());
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    onTestFinished(() => new Promise<void>((closed) => server.close(() => closed())));
    const redis = client((server.address() as AddressInfo).port);
    const error = new Promise((resolve) => redis.once('error', resolve));
    await rejection(redis.connect());
    const reset = await error;
    expect((reset as NodeJS.ErrnoException).code, String(reset)).toBe('ECONNRESET');
    expect(isConnectionError(reset)).toBe(true);
    expect(describeConnectionError(reset)).toMatch(/^connection closed by the server/);
  });
});

describe('diagnoseRedis', () => {
  it('says no sentinel answers, naming each, when none does (not "All sentinels are unreachable" when they do)', async () => {
    const [a, b] = [await sparePort(), await sparePort()];
    const redis = loadConfig({ env: {}, overrides: { redis: { sentinels: [{ host: '127.0.0.1', port: a }, { host: '127.0.0.1', port: b }], name: 'storesync' } } }).redis;
    expect(await diagnoseRedis(redis, undefined, 500)).toBe(
      `no sentinel answers (127.0.0.1:${a}: connection refused at 127.0.0.1:${a}; 127.0.0.1:${b}: connection refused at 127.0.0.1:${b})`,
    );
  });

  it('says what refused a single server, and that the connection was lost when no error came yet', async () => {
    const port = await sparePort();
    const redis = loadConfig({ env: {}, overrides: { redis: { url: `redis://127.0.0.1:${port}/0` } } }).redis;
    const refused = await refusal(port);
    expect(await diagnoseRedis(redis, refused)).toBe(`connection refused at 127.0.0.1:${port}`);
    expect(await diagnoseRedis(redis, undefined)).toBe(`connection to redis://127.0.0.1:${port}/0 lost`);
  });
});
