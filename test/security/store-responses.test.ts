import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { storeSchema } from '../../src/config/schema.js';
import { StoreSyncError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { StoreClient } from '../../src/store/client.js';
import { StoreError } from '../../src/store/errors.js';
import { specViolations } from '../helpers/inventory-oracle.js';

/** What the fake store answers to the next API call (auth is answered separately). */
interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const PASSWORD = 'fuzz-Pa55&word#x';
const HASH = 'fuzz-hash-5b1f0c9d2e';

let server: Server;
let baseUrl = '';
let answer: Answer = { status: 200, headers: {}, body: '[]' };
let authAnswer: Answer | undefined;
const received: Array<{ method: string; url: string; body: string }> = [];

function reply(res: ServerResponse, a: Answer): void {
  res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
  res.end(a.body);
}

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.url?.startsWith('/Api/Auth/')) {
        return reply(res, authAnswer ?? { status: 200, headers: {}, body: JSON.stringify({ status: '0', message: 'OK', data: HASH }) });
      }
      received.push({ method: req.method ?? '', url: req.url ?? '', body });
      reply(res, answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function client(): StoreClient {
  const config = storeSchema.parse({
    baseUrl,
    username: 'fuzz',
    password: PASSWORD,
    requestTimeoutMs: 5000,
    retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
  });
  return new StoreClient({ config, logger: silentLogger(), sleep: async () => {} });
}

const sale = { Id: 7, Status: 1, Total: 10.5, SiteId: 1, CreationDate: '05/06/2024 10:11:12', Items: [{ Code: 'SKU-1', Quantity: 1, Price: 10.5 }] };
const item = { InternalId: 3, Code: 'SKU-000001', Stock: 4, Price: 12.5, Name: 'Mate de calabaza' };

/** Bodies a broken or hostile store could send. */
const hostileBody = fc.oneof(
  fc.json(),
  fc.constantFrom(JSON.stringify([item]), JSON.stringify([sale]), JSON.stringify(sale), JSON.stringify({ Success: true, Message: 'ok' })),
  // Truncated JSON.
  fc.tuple(fc.constantFrom(JSON.stringify([item, item]), JSON.stringify([sale])), fc.nat()).map(([text, n]) => text.slice(0, n % text.length)),
  // Malformed numbers and wrong types in otherwise right shapes.
  fc.constantFrom('[{"Code":"A","Stock":"12abc"}]', '[{"Code":"A","Stock":1e999}]', '[{"Code":5,"Stock":null}]', '[{"Id":"x","Status":"one"}]', '{"Id":1e309}', '[{"Code":"A","Price":NaN}]', '{"Success":false,"Message":"<b>no</b>"}', '{"Success":"false"}', 'null', 'true', '"text"', '0'),
  // Error pages that echo the request, as proxies do: the hash and the password must not come back out.
  fc.constantFrom(
    `<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1><p>GET /Api/Inventory/Get?hash=${HASH}</p><p>${HASH}</p></body></html>`,
    `<html>Service Unavailable: /Api/Auth/?username=fuzz&password=${encodeURIComponent(PASSWORD)} (${PASSWORD})</html>`,
  ),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.integer({ min: 1_000, max: 200_000 }).map((n) => JSON.stringify([{ Code: 'A'.repeat(n), Name: 'ñ'.repeat(n) }])),
  fc.constant(''),
);

const hostileAnswer = fc.record({
  status: fc.constantFrom(200, 200, 200, 201, 204, 301, 400, 401, 403, 404, 409, 418, 429, 500, 502, 503),
  headers: fc.oneof(fc.constant({}), fc.record({ 'retry-after': fc.constantFrom('1', '0', '-5', 'soon', 'Wed, 21 Oct 2015 07:28:00 GMT', '99999999') })),
  body: hostileBody,
});

/** A call's outcome: a value of the promised shape, or a typed storesync error that names the endpoint. */
async function outcome(call: () => Promise<unknown>): Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await call() };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Checks `error` is a typed store error naming the endpoint, without any of `secrets` (the hash only once issued). */
function expectTypedError(error: unknown, endpoint: RegExp, secrets: readonly string[] = [PASSWORD, HASH]): void {
  expect(error, String(error)).toBeInstanceOf(StoreSyncError);
  expect(error).toBeInstanceOf(StoreError);
  const storeError = error as StoreError;
  expect(storeError.code).toMatch(/^ERR_STORE_/);
  expect(storeError.endpoint).toMatch(endpoint);
  for (const secret of secrets) expect(storeError.message).not.toContain(secret);
  expect(storeError.message.length).toBeLessThan(2000);
}

describe('store responses of any shape', () => {
  it('inventory.get returns items of the right shape or throws a typed error naming the endpoint', async () => {
    const store = client();
    await fc.assert(
      fc.asyncProperty(hostileAnswer, async (a) => {
        answer = a;
        const result = await outcome(() => store.inventory.get({}, { attempts: 1 }));
        if (result.ok) {
          expect(Array.isArray(result.value)).toBe(true);
          for (const it of result.value as Array<Record<string, unknown>>) expect(typeof it.Code).toBe('string');
        } else {
          expectTypedError(result.error, /\/Api\/Inventory\/Get|\/Api\/Auth/);
        }
      }),
      { numRuns: 300 },
    );
    await store.close();
  });

  it('sales.list and sales.get return sales or throw a typed error naming the endpoint', async () => {
    const store = client();
    await fc.assert(
      fc.asyncProperty(hostileAnswer, fc.boolean(), async (a, one) => {
        answer = a;
        const result = await outcome(() => (one ? store.sales.get(7, {}, { attempts: 1 }) : store.sales.list({ limit: 10 }, { attempts: 1 })));
        if (result.ok) {
          const sales = (one ? [result.value] : result.value) as Array<Record<string, unknown>>;
          expect(Array.isArray(sales)).toBe(true);
          for (const s of sales) expect(Number.isInteger(s.Id)).toBe(true);
        } else {
          expectTypedError(result.error, /\/Api\/Sale/);
        }
      }),
      { numRuns: 300 },
    );
    await store.close();
  });

  it('a broken login answer becomes a typed auth or response error without the password', async () => {
    const store = client();
    await fc.assert(
      fc.asyncProperty(hostileAnswer, async (a) => {
        authAnswer = a;
        const result = await outcome(() => store.login());
        if (!result.ok) expectTypedError(result.error, /\/Api\/Auth/, [PASSWORD]);
      }),
      { numRuns: 200 },
    );
    authAnswer = undefined;
    await store.close();
  });

  it('inventory.update never sends a body that breaks the spec, whatever the caller passes', async () => {
    const store = client();
    received.length = 0;
    answer = { status: 200, headers: {}, body: '{"Success":true,"Message":"ok"}' };
    const valid = fc.record(
      {
        Code: fc.stringMatching(/^SKU-\d{3}$/),
        Stock: fc.integer({ min: 0, max: 999999 }),
        Price: fc.integer({ min: 1, max: 99999999 }).map((cents) => cents / 100),
        Taxes: fc.integer({ min: 0, max: 10000 }).map((hundredths) => hundredths / 100),
        ForSale: fc.boolean(),
        PriceMode: fc.constantFrom(0, null),
      },
      { requiredKeys: ['Code'] },
    );
    const junk = fc.oneof(fc.integer({ min: -10, max: 1_100_000 }), fc.double(), fc.string({ maxLength: 6 }), fc.boolean(), fc.constant(null));
    // Mostly valid items with one field replaced by junk, so both sides of the rule are exercised.
    const candidate = fc.oneof(
      valid,
      fc.tuple(valid, fc.constantFrom('InternalId', 'Code', 'Stock', 'Price', 'OfferPrice', 'Taxes', 'ForSale', 'PriceMode'), junk).map(
        ([item, field, value]) => ({ ...item, [field]: value }),
      ),
    );
    let rejected = 0;
    await fc.assert(
      fc.asyncProperty(candidate, async (input) => {
        const result = await outcome(() => store.inventory.update(input as never, { attempts: 1 }));
        if (!result.ok) {
          expect(result.error).toBeInstanceOf(StoreSyncError);
          if ((result.error as StoreSyncError).code === 'ERR_VALIDATION') rejected += 1;
        }
      }),
      { numRuns: 500 },
    );
    await store.close();
    expect(rejected).toBeGreaterThan(0);
    const puts = received.filter((r) => r.method === 'PUT');
    expect(puts.length).toBeGreaterThan(0);
    for (const put of puts) expect(specViolations(JSON.parse(put.body)), put.body).toEqual([]);
  });
});
