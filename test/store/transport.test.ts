import { afterEach, describe, expect, it } from 'vitest';

import { storeSchema } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { type RequestLimiter, StoreClient } from '../../src/store/client.js';
import {
  StoreBadRequestError,
  StoreBadResponseError,
  StoreNetworkError,
  StoreRateLimitedError,
  StoreRejectedError,
  StoreServerError,
} from '../../src/store/errors.js';
import type { RecordReject } from '../../src/store/records.js';
import { backoffMs, MAX_RETRY_AFTER_MS, parseRetryAfter } from '../../src/store/transport.js';
import { type FakeAnswer, type FakeRemote, type FakeRequest, startFakeRemote } from './fake-remote.js';

const open: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()));
});

async function remote(handler: (request: FakeRequest) => FakeAnswer | undefined): Promise<FakeRemote> {
  const fake = await startFakeRemote(handler);
  open.push(fake);
  return fake;
}

function client(baseUrl: string, delays: number[] = [], retry = {}): StoreClient {
  const store = new StoreClient({
    config: storeSchema.parse({ baseUrl, username: 'demo', password: 'demo-password', retry }),
    logger: silentLogger(),
    sleep: async (ms) => void delays.push(ms),
  });
  open.push(store);
  return store;
}

function sales(from: number, count: number): Array<{ Id: number; Status: number }> {
  return Array.from({ length: count }, (_, i) => ({ Id: from + i, Status: 1 }));
}

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates, caps them and ignores garbage', () => {
    const now = Date.parse('2024-01-01T00:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('Mon, 01 Jan 2024 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Sun, 31 Dec 2023 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('86400', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('backoffMs', () => {
  it('grows exponentially up to the cap, with full jitter', () => {
    expect(backoffMs(1, 200, 10_000, () => 1)).toBe(200);
    expect(backoffMs(4, 200, 10_000, () => 1)).toBe(1600);
    expect(backoffMs(20, 200, 10_000, () => 1)).toBe(10_000);
    expect(backoffMs(3, 200, 10_000, () => 0)).toBe(0);
  });
});

describe('sales.iterate against a remote that ignores offset', () => {
  it('stops after the repeated page, yielding each sale once', async () => {
    const fake = await remote((request) => (request.path === '/Api/Sale/' ? { body: sales(1, 3) } : undefined));
    const seen: number[] = [];
    for await (const sale of client(fake.url).sales.iterate({ pageSize: 3 })) seen.push(sale.Id);
    expect(seen).toEqual([1, 2, 3]);
    expect(fake.requests.filter((r) => r.path === '/Api/Sale/').map((r) => r.query.get('offset'))).toEqual(['0', '3']);
  });

  it('keeps paging when pages overlap partly, without yielding a sale twice', async () => {
    // A sale arriving mid-paging shifts the next page by one: its first sale was already seen.
    const pages: Record<string, Array<{ Id: number; Status: number }>> = { '0': sales(1, 2), '2': sales(2, 2), '4': sales(4, 1) };
    const fake = await remote((request) =>
      request.path === '/Api/Sale/' ? { body: pages[request.query.get('offset') ?? ''] ?? [] } : undefined,
    );
    const seen: number[] = [];
    for await (const sale of client(fake.url).sales.iterate({ pageSize: 2 })) seen.push(sale.Id);
    expect(seen).toEqual([1, 2, 3, 4]);
  });
});

describe('responses that are not what the spec describes', () => {
  it('turns an HTML page on HTTP 200 into StoreBadResponseError without retrying', async () => {
    const fake = await remote((request) =>
      request.path === '/Api/Sale/' ? { headers: { 'content-type': 'text/html' }, body: '<html>maintenance</html>' } : undefined,
    );
    await expect(client(fake.url).sales.list()).rejects.toBeInstanceOf(StoreBadResponseError);
    expect(fake.requests.filter((r) => r.path === '/Api/Sale/')).toHaveLength(1);
  });

  it('turns truncated JSON into StoreBadResponseError', async () => {
    const fake = await remote((request) => (request.path === '/Api/Sale/' ? { body: '[{"Id": 1, "Sta' } : undefined));
    await expect(client(fake.url).sales.list()).rejects.toThrow(/not JSON/);
  });

  it('turns {Success:false, Message} on HTTP 200 into StoreRejectedError with the message', async () => {
    const fake = await remote((request) =>
      request.path === '/Api/Inventory' ? { body: { Success: false, Message: 'Código inexistente' } } : undefined,
    );
    const error = await client(fake.url).inventory.update({ Code: 'A-1', Stock: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreRejectedError);
    expect((error as StoreRejectedError).message).toContain('PUT /Api/Inventory');
    expect((error as StoreRejectedError).message).toContain('Código inexistente');
    expect(fake.requests.filter((r) => r.path === '/Api/Inventory')).toHaveLength(1);
  });

  it('sets aside a sale without an Id, reporting it, and returns the others', async () => {
    const fake = await remote((request) => (request.path === '/Api/Sale/' ? { body: [{ Status: 1 }, { Id: 2, Status: 1 }] } : undefined));
    const rejects: RecordReject[] = [];
    const found = await client(fake.url).sales.list({}, { onReject: (reject) => void rejects.push(reject) });
    expect(found.map((sale) => sale.Id)).toEqual([2]);
    expect(rejects).toMatchObject([{ resource: 'sale', id: null, field: 'Id', value: undefined, rule: 'integer (or an integer written as text)' }]);
  });

  it('refuses an answer that is not a list as a bad response', async () => {
    const fake = await remote((request) => (request.path === '/Api/Sale/' ? { body: { Data: [{ Id: 1 }] } } : undefined));
    await expect(client(fake.url).sales.list()).rejects.toThrow(/unexpected response shape/);
  });
});

describe('retries', () => {
  it('honours a Retry-After HTTP date on 429, then succeeds', async () => {
    let calls = 0;
    const retryAt = new Date(Date.now() + 120_000).toUTCString();
    const fake = await remote((request) => {
      if (request.path !== '/Api/Sale/') return undefined;
      calls += 1;
      return calls === 1 ? { status: 429, headers: { 'retry-after': retryAt }, body: 'slow down' } : { body: [] };
    });
    const delays: number[] = [];
    await expect(client(fake.url, delays).sales.list()).resolves.toEqual([]);
    expect(delays).toHaveLength(1);
    expect(delays[0]).toBeGreaterThan(100_000);
    expect(delays[0]).toBeLessThanOrEqual(120_000);
  });

  it('gives up after the configured attempts with the last error, exposing retryAfterMs', async () => {
    const fake = await remote((request) =>
      request.path === '/Api/Sale/' ? { status: 429, headers: { 'retry-after': '2' }, body: '' } : undefined,
    );
    const delays: number[] = [];
    const error = await client(fake.url, delays, { attempts: 3 }).sales.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreRateLimitedError);
    expect((error as StoreRateLimitedError).retryAfterMs).toBe(2000);
    expect(delays).toEqual([2000, 2000]);
  });

  it('retries a 5xx on GET and PUT but never repeats a POST that reached the store', async () => {
    const fake = await remote((request) => (request.path === '/Api/Auth/' ? undefined : { status: 503, body: 'busy' }));
    const store = client(fake.url, [], { attempts: 3 });
    await expect(store.sales.list()).rejects.toBeInstanceOf(StoreServerError);
    await expect(store.inventory.update({ Code: 'A', Stock: 1 })).rejects.toBeInstanceOf(StoreServerError);
    await expect(store.inventory.create({ Code: 'A', Stock: 1 })).rejects.toBeInstanceOf(StoreServerError);
    const counts = (method: string, path: string): number => fake.requests.filter((r) => r.method === method && r.path === path).length;
    expect(counts('GET', '/Api/Sale/')).toBe(3);
    expect(counts('PUT', '/Api/Inventory')).toBe(3);
    expect(counts('POST', '/Api/Inventory')).toBe(1);
  });

  it('does not retry when the call asks for one attempt', async () => {
    const fake = await remote((request) => (request.path === '/Api/Sale/' ? { status: 500, body: 'oops' } : undefined));
    await expect(client(fake.url).sales.list({}, { attempts: 1 })).rejects.toBeInstanceOf(StoreServerError);
    expect(fake.requests.filter((r) => r.path === '/Api/Sale/')).toHaveLength(1);
  });

  it('never retries a 400', async () => {
    const fake = await remote((request) => (request.path === '/Api/Sale/' ? { status: 400, body: { Message: 'bad status' } } : undefined));
    await expect(client(fake.url).sales.list()).rejects.toBeInstanceOf(StoreBadRequestError);
    expect(fake.requests.filter((r) => r.path === '/Api/Sale/')).toHaveLength(1);
  });

  it('retries even a POST when the connection was refused (the store never saw it)', async () => {
    const fake = await remote(() => undefined);
    const delays: number[] = [];
    const store = client(fake.url, delays, { attempts: 3 });
    await store.login();
    await fake.close();
    const error = await store.inventory.create({ Code: 'A' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreNetworkError);
    expect((error as StoreNetworkError).message).toContain('ECONNREFUSED');
    expect(delays).toHaveLength(2);
  });
});

describe('the request limiter (store.rateLimit)', () => {
  /** A limiter that records its calls; the Redis one is tested with two processes in test/queue/store-rate-limit.test.ts. */
  function recordingLimiter(log: string[], fail?: Error): RequestLimiter {
    let n = 0;
    return {
      async acquire() {
        if (fail) throw fail;
        n += 1;
        const id = n;
        log.push(`acquire ${id}`);
        return { release: () => void log.push(`release ${id}`) };
      },
    };
  }

  it('takes a permit before every request, the login and each retry included, and releases it after the answer', async () => {
    let calls = 0;
    const fake = await remote((request) => {
      if (request.path !== '/Api/Sale/') return undefined;
      calls += 1;
      return calls === 1 ? { status: 503, body: 'busy' } : { body: [] };
    });
    const log: string[] = [];
    const store = new StoreClient({
      config: storeSchema.parse({ baseUrl: fake.url, username: 'demo', password: 'demo-password' }),
      logger: silentLogger(),
      sleep: async () => undefined,
      limiter: recordingLimiter(log),
    });
    open.push(store);
    await expect(store.sales.list()).resolves.toEqual([]);
    expect(fake.requests).toHaveLength(3);
    expect(log).toEqual(['acquire 1', 'release 1', 'acquire 2', 'release 2', 'acquire 3', 'release 3']);
  });

  it('fails a request whose limiter cannot be consulted as a temporary network error, sending nothing', async () => {
    const fake = await remote(() => ({ body: [] }));
    const store = new StoreClient({
      config: storeSchema.parse({ baseUrl: fake.url, username: 'demo', password: 'demo-password', retry: { attempts: 1 } }),
      logger: silentLogger(),
      limiter: recordingLimiter([], new Error('Connection is closed.')),
    });
    open.push(store);
    const error = await store.sales.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreNetworkError);
    expect((error as StoreNetworkError).retryable).toBe(true);
    expect((error as Error).message).toMatch(/the store-wide rate limit cannot be consulted \(Connection is closed\.\)/);
    expect(fake.requests).toHaveLength(0);
  });
});
