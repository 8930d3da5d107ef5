import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterEach, describe, expect, it, vi } from 'vitest';

import { storeSchema } from '../../src/config/schema.js';
import { TypedEmitter } from '../../src/events.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../src/simulator/index.js';
import { type RequestLimiter, StoreClient } from '../../src/store/client.js';
import {
  StoreBadRequestError,
  StoreBadResponseError,
  StoreNetworkError,
  StoreRateLimitedError,
  StoreRejectedError,
  StoreServerError,
  StoreTimeoutError,
} from '../../src/store/errors.js';
import type { RecordReject } from '../../src/store/records.js';
import { backoffMs, MAX_RETRY_AFTER_MS, parseRetryAfter, type StoreEvents, Transport } from '../../src/store/transport.js';
import { type FakeAnswer, type FakeRemote, type FakeRequest, startFakeRemote } from './fake-remote.js';

const open: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()));
});

/** Listens on a free loopback port, closed (its connections too) after the test; the server's base URL. */
async function listening(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push({ close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The project's simulator with the given faults: the store the client meets, whenever it can produce the case. */
async function simulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = await startSimulator({ port: 0, ...options });
  open.push(sim);
  return sim;
}

/** Requests the simulator received on one endpoint (`GET /Api/Sale`). */
function received(sim: Simulator, endpoint: string): number {
  return sim.counters().requests[endpoint] ?? 0;
}

/**
 * A fake remote, only for behaviours the simulator does not produce (partly overlapping pages, HTML or truncated
 * bodies on a read, a sale without Id, a Retry-After HTTP date); each use says which.
 */
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
    const sim = await simulator({ ignoreOffset: true, sales: 0 });
    for (let i = 0; i < 3; i += 1) sim.addSale({ Status: 1 });
    const ids = sim.state.sales.map((stored) => stored.sale.Id);
    const seen: number[] = [];
    for await (const sale of client(sim.url).sales.iterate({ pageSize: 3 })) seen.push(sale.Id);
    expect(seen.sort()).toEqual([...ids].sort());
    // The second page repeats the first: the client stops there.
    expect(received(sim, 'GET /Api/Sale')).toBe(2);
  });

  it('keeps paging when pages overlap partly, without yielding a sale twice', async () => {
    // Fake: the simulator either pages correctly or ignores offset entirely; a partial overlap is beyond it.
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
    // Fake: the simulator's non-JSON bodies (nonJsonWriteBodies) are for writes; a read always answers JSON there.
    const fake = await remote((request) =>
      request.path === '/Api/Sale/' ? { headers: { 'content-type': 'text/html' }, body: '<html>maintenance</html>' } : undefined,
    );
    await expect(client(fake.url).sales.list()).rejects.toBeInstanceOf(StoreBadResponseError);
    expect(fake.requests.filter((r) => r.path === '/Api/Sale/')).toHaveLength(1);
  });

  it('turns truncated JSON into StoreBadResponseError', async () => {
    // Fake: the simulator never truncates a body.
    const fake = await remote((request) => (request.path === '/Api/Sale/' ? { body: '[{"Id": 1, "Sta' } : undefined));
    await expect(client(fake.url).sales.list()).rejects.toThrow(/not JSON/);
  });

  it('turns {Success:false, Message} on HTTP 200 into StoreRejectedError with the message', async () => {
    const sim = await simulator({ successFalseRate: 1 });
    const error = await client(sim.url).inventory.update({ Code: 'SKU-000001', Stock: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreRejectedError);
    expect((error as StoreRejectedError).message).toContain('PUT /Api/Inventory');
    expect(sim.counters().faults.successFalse).toBe(1);
    expect(received(sim, 'PUT /Api/Inventory')).toBe(1);
    expect(sim.writes).toEqual([]);
  });

  it('sets aside a sale without an Id, reporting it, and returns the others', async () => {
    // Fake: the simulator's malformed sales (malformedSaleIds) keep their Id.
    const fake = await remote((request) => (request.path === '/Api/Sale/' ? { body: [{ Status: 1 }, { Id: 2, Status: 1 }] } : undefined));
    const rejects: RecordReject[] = [];
    const found = await client(fake.url).sales.list({}, { onReject: (reject) => void rejects.push(reject) });
    expect(found.map((sale) => sale.Id)).toEqual([2]);
    expect(rejects).toMatchObject([{ resource: 'sale', id: null, field: 'Id', value: undefined, rule: 'integer (or an integer written as text)' }]);
  });

  it('refuses an answer that is not a list as a bad response', async () => {
    // Fake: the simulator always answers a list.
    const fake = await remote((request) => (request.path === '/Api/Sale/' ? { body: { Data: [{ Id: 1 }] } } : undefined));
    await expect(client(fake.url).sales.list()).rejects.toThrow(/unexpected response shape/);
  });
});

describe('retries', () => {
  it('honours a Retry-After HTTP date on 429, then succeeds', async () => {
    // Fake: the simulator's 429s carry Retry-After in seconds, never as an HTTP date.
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
    const sim = await simulator();
    const delays: number[] = [];
    const store = client(sim.url, delays, { attempts: 3 });
    await store.login();
    sim.faults.set({ rate429: 1 });
    const error = await store.sales.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreRateLimitedError);
    expect((error as StoreRateLimitedError).retryAfterMs).toBe(1000);
    expect(delays).toEqual([1000, 1000]);
    expect(sim.counters().faults.tooManyRequests).toBe(3);
  });

  it('retries a 5xx on GET and PUT but never repeats a POST that reached the store', async () => {
    const sim = await simulator();
    const store = client(sim.url, [], { attempts: 3 });
    await store.login();
    sim.faults.set({ failRate: 1 });
    await expect(store.sales.list()).rejects.toBeInstanceOf(StoreServerError);
    await expect(store.inventory.update({ Code: 'A', Stock: 1 })).rejects.toBeInstanceOf(StoreServerError);
    await expect(store.inventory.create({ Code: 'A', Stock: 1 })).rejects.toBeInstanceOf(StoreServerError);
    expect(received(sim, 'GET /Api/Sale')).toBe(3);
    expect(received(sim, 'PUT /Api/Inventory')).toBe(3);
    expect(received(sim, 'POST /Api/Inventory')).toBe(1);
  });

  it('does not retry when the call asks for one attempt', async () => {
    const sim = await simulator();
    const store = client(sim.url);
    await store.login();
    sim.faults.set({ failRate: 1 });
    await expect(store.sales.list({}, { attempts: 1 })).rejects.toBeInstanceOf(StoreServerError);
    expect(received(sim, 'GET /Api/Sale')).toBe(1);
  });

  it('tells each exchange of a request read whole with its own attempt and status: two 429s without Retry-After, then the answer', async () => {
    // Fake remote: the simulator's 429s carry a Retry-After; without one the wait is the backoff of the attempt.
    let calls = 0;
    const fake = await remote((request) => {
      if (request.path !== '/Api/Sale/') return undefined;
      calls += 1;
      return calls <= 2 ? { status: 429, body: 'slow down' } : { body: [] };
    });
    const store = client(fake.url, [], { attempts: 3 });
    const told: Array<{ attempt: number; status: number | 'error' }> = [];
    store.events.on('store:request', ({ endpoint, attempt, status }) => {
      if (endpoint === '/Api/Sale/') told.push({ attempt, status });
    });
    await expect(store.sales.list()).resolves.toEqual([]);
    expect(told).toEqual([
      { attempt: 1, status: 429 },
      { attempt: 2, status: 429 },
      { attempt: 3, status: 200 },
    ]);
  });

  it('never retries a 400', async () => {
    const sim = await simulator();
    // The store refuses an order by a field products do not have with 400.
    await expect(client(sim.url).products.list({ order: 'NoSuchField' })).rejects.toBeInstanceOf(StoreBadRequestError);
    expect(received(sim, 'GET /Api/product')).toBe(1);
  });

  it('retries even a POST when the connection was refused (the store never saw it)', async () => {
    const sim = await simulator();
    const delays: number[] = [];
    const store = client(sim.url, delays, { attempts: 3 });
    await store.login();
    await sim.close();
    const error = await store.inventory.create({ Code: 'A' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreNetworkError);
    expect((error as StoreNetworkError).message).toContain('ECONNREFUSED');
    expect(delays).toHaveLength(2);
  });
});

describe('the deadline of a whole exchange (store.requestTimeoutMs)', () => {
  /**
   * A store that answers at once but trickles its body a space every 40 ms, never ending it (raw server:
   * neither the simulator nor the fake remote sends a body a few bytes at a time). Each chunk comes well
   * within undici's body timeout, so only the deadline of the whole exchange can end it.
   */
  async function tricklingStore(on: { request?: () => void; closed?: () => void }): Promise<string> {
    return listening(
      createServer((req, res) => {
        if (req.url?.startsWith('/Api/Auth/')) {
          res.end(JSON.stringify({ status: '0', message: 'ok', data: 'trickle-hash' }));
          return;
        }
        on.request?.();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('[');
        const drip = setInterval(() => res.write(' '), 40);
        res.on('close', () => {
          clearInterval(drip);
          on.closed?.();
        });
      }),
    );
  }

  function clientOf(baseUrl: string, requestTimeoutMs: number, attempts: number): StoreClient {
    const store = new StoreClient({
      config: storeSchema.parse({
        baseUrl,
        username: 'demo',
        password: 'demo-password',
        requestTimeoutMs,
        retry: { attempts, baseDelayMs: 1, maxDelayMs: 1 },
      }),
      logger: silentLogger(),
    });
    open.push(store);
    return store;
  }

  it('ends a store that answers at once but trickles its body, with StoreTimeoutError, and retries it', async () => {
    let requests = 0;
    const store = clientOf(await tricklingStore({ request: () => void (requests += 1) }), 300, 2);
    const error = await store.sales.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreTimeoutError);
    expect((error as StoreTimeoutError).message).toContain('no answer within the timeout (300 ms)');
    expect(requests).toBe(2);
  });

  it('ends the request itself when the deadline passes: the store sees its connection closed, the call fails soon after', async () => {
    // The same trickling store, without retries: the deadline must abort the exchange, not only mark it passed.
    let closed = 0;
    const store = clientOf(await tricklingStore({ closed: () => void (closed += 1) }), 200, 1);
    const started = Date.now();
    const outcome = await Promise.race([
      store.sales.list().then(
        () => 'answered',
        (error: unknown) => error,
      ),
      new Promise((resolve) => setTimeout(() => resolve('still running after 3 s'), 3_000)),
    ]);
    expect(outcome).toBeInstanceOf(StoreTimeoutError);
    expect(Date.now() - started).toBeLessThan(3_000);
    await vi.waitFor(() => expect(closed).toBe(1));
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

  it('releases the permit of a request whose body cannot be written as JSON, sends nothing and retries nothing', async () => {
    // The Transport itself (no API checks this body): a BigInt has no JSON form, so JSON.stringify throws.
    const fake = await remote(() => ({ body: [] }));
    const log: string[] = [];
    const transport = new Transport({
      config: storeSchema.parse({ baseUrl: fake.url, username: 'demo', password: 'demo-password', retry: { attempts: 3 } }),
      logger: silentLogger(),
      events: new TypedEmitter<StoreEvents>(),
      now: Date.now,
      sleep: async () => undefined,
      limiter: recordingLimiter(log),
    });
    open.push({ close: async () => transport.close() });
    const error = await transport.request({ method: 'POST', endpoint: '/Api/Sale/', body: { n: 1n } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(fake.requests).toHaveLength(0);
    // Every permit taken was given back: none, or one taken and released.
    expect(log.filter((line) => line.startsWith('acquire')).length).toBe(log.filter((line) => line.startsWith('release')).length);
    await expect(transport.request({ method: 'GET', endpoint: '/Api/Sale/' })).resolves.toEqual([]);
    expect(log.at(-1)).toMatch(/^release /);
  });
});

describe('what the transport tells of each exchange (store:request, store_requests_total, store_request_duration_seconds)', () => {
  /** A store answering `GET /Api/Sale/` with `[{"Id":1},{"Id":2}]` after `delayMs` (raw server: the answer's time is the test's to set). */
  async function slowStore(delayMs: number): Promise<string> {
    return listening(
      createServer((_req, res) => {
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('[{"Id":1},{"Id":2}]');
        }, delayMs);
      }),
    );
  }

  /** A transport recording what it tells: its events and its metrics; `limiter` is the store-wide budget, if any. */
  function recordingTransport(baseUrl: string, limiter?: RequestLimiter) {
    const events = new TypedEmitter<StoreEvents>();
    const told: Array<{ status: number | 'error'; durationMs: number }> = [];
    events.on('store:request', ({ status, durationMs }) => void told.push({ status, durationMs }));
    const counted: string[] = [];
    const observed: number[] = [];
    const metrics = {
      storeRequests: { inc: (labels: { status?: string }) => void counted.push(labels.status ?? '') },
      storeRequestDuration: { observe: (_labels: unknown, value: number) => void observed.push(value) },
      storeLogins: { inc: () => undefined },
      storeAuthFailures: { inc: () => undefined },
      storePagingStopped: { inc: () => undefined },
    };
    const transport = new Transport({
      config: storeSchema.parse({ baseUrl, username: 'demo', password: 'demo-password', retry: { attempts: 1 } }),
      logger: silentLogger(),
      events,
      metrics,
      now: Date.now,
      ...(limiter ? { limiter } : {}),
    });
    open.push({ close: async () => transport.close() });
    return { transport, told, counted, observed };
  }

  it('times a request read whole from when its permit is granted to its answer, and observes the duration in seconds', async () => {
    const url = await slowStore(200);
    // A limiter that makes the request wait 400 ms for its permit: that wait is the limiter's, not the store's.
    let granted = 0;
    const limiter: RequestLimiter = {
      async acquire() {
        await new Promise((resolve) => setTimeout(resolve, 400));
        granted = performance.now();
        return { release: () => undefined };
      },
    };
    const { transport, told, counted, observed } = recordingTransport(url, limiter);
    await expect(transport.request({ method: 'GET', endpoint: '/Api/Sale/' })).resolves.toEqual([{ Id: 1 }, { Id: 2 }]);
    const exchangeMs = performance.now() - granted;
    expect(counted).toEqual(['200']);
    expect(told).toHaveLength(1);
    const { status, durationMs } = told[0] as { status: number | 'error'; durationMs: number };
    expect(status).toBe(200);
    // At least the store's 200 ms, at most the time since the permit was granted (not the 400 ms before it).
    expect(durationMs).toBeGreaterThanOrEqual(190);
    expect(durationMs).toBeLessThanOrEqual(exchangeMs + 1);
    expect(observed).toHaveLength(1);
    expect(observed[0]).toBeGreaterThanOrEqual(0.19);
    expect(observed[0]).toBeLessThanOrEqual((exchangeMs + 1) / 1000);
  });

  it('tells a streamed exchange (streamArray) with the status the store answered, and its duration in seconds', async () => {
    const url = await slowStore(200);
    const { transport, told, counted, observed } = recordingTransport(url);
    const visited: unknown[] = [];
    const started = performance.now();
    await transport.streamArray({ method: 'GET', endpoint: '/Api/Sale/' }, (element) => void visited.push(element));
    const wholeMs = performance.now() - started;
    expect(visited).toEqual([{ Id: 1 }, { Id: 2 }]);
    expect(counted).toEqual(['200']);
    expect(told.map(({ status }) => status)).toEqual([200]);
    expect(observed).toHaveLength(1);
    expect(observed[0]).toBeGreaterThanOrEqual(0.19);
    expect(observed[0]).toBeLessThanOrEqual((wholeMs + 1) / 1000);
  });
});
