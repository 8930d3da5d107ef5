import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Config } from '../../src/config/schema.js';
import { ValidationError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { Readiness } from '../../src/ops/health.js';
import { buildHttpServer } from '../../src/ops/http-server.js';
import type { SkuExplanation } from '../../src/sync/inventory/index.js';

const TOKEN = 'tok-typos-0123456789';
const headers = { authorization: `Bearer ${TOKEN}` };
let app: FastifyInstance;
const queued: unknown[] = [];
const explained: Array<{ siteId?: number; priceList?: string }> = [];

beforeAll(async () => {
  app = await buildHttpServer({
    config: { http: { host: '127.0.0.1', port: 0 }, admin: { token: TOKEN, username: '', password: '' } } as Pick<Config, 'http' | 'admin'>,
    logger: silentLogger(),
    metrics: new Metrics({ defaultMetrics: false }),
    readiness: new Readiness({ redis: { ping: async () => 'PONG' }, store: { login: async () => undefined } }),
    queues: [],
    control: { queueName: 'control', enqueue: async (data) => String(queued.push(data)) },
    inventory: {
      explain: async (sku, options) => {
        explained.push(options);
        if (options.priceList === 'NOPE') throw new ValidationError([{ field: '--price-list', value: 'NOPE', rule: 'the id or code of a price list of inventory.priceLists (1:RETAIL)' }], 'inventory explain');
        return { sku } as unknown as SkuExplanation;
      },
      markProcessed: async () => [],
      heldPage: async (source) => ({ source, action: 'zero', held: 0, since: null, skus: [], next: null }),
      confirmVanished: async (source) => ({ source, action: 'zero', confirmed: 0, sample: [] }),
      keepVanished: async (source) => ({ source, action: 'keep', confirmed: 0, sample: [] }),
      defaultSiteId: 1,
    },
  });
});

afterAll(async () => {
  await app.close();
});

describe('a mistyped key in an admin request', () => {
  it.each([
    ['/admin/resync/inventory', { dryrun: true }, 'dryrun', 'dryRun'],
    ['/admin/resync/inventory', { sku: ['A-1'] }, 'sku', 'skus'],
    ['/admin/resync/inventory', { froce: true }, 'froce', 'force'],
    ['/admin/resync/sales', { form: '2024-01-01', to: '2024-01-02' }, 'form', 'from'],
    ['/admin/resync/sales', { from: '2024-01-01', to: '2024-01-02', dry_run: true }, 'dry_run', 'dryRun'],
    ['/admin/sales/processed', { saleId: [7] }, 'saleId', 'saleIds'],
    ['/admin/sales/processed', { saleIds: [7], bookedat: '2024-01-01T10:00:00Z' }, 'bookedat', 'bookedAt'],
    ['/admin/inventory/vanished/confirm', { sources: 'erp' }, 'sources', 'source'],
  ])('POST %s with %j answers 400 naming %s and the field meant', async (url, payload, field, meant) => {
    const answer = await app.inject({ method: 'POST', url, headers, payload });
    expect(answer.statusCode).toBe(400);
    const body = answer.json() as { error: string; issues: Array<{ field: string; rule: string }> };
    expect(body.issues).toContainEqual({ field, rule: `not a known field (did you mean "${meant}"?)` });
    expect(body.error).toContain(`did you mean "${meant}"?`);
  });

  it('names each unknown field of a body on its own, with no guess for a key like no known one', async () => {
    const answer = await app.inject({ method: 'POST', url: '/admin/resync/inventory', headers, payload: { dryrun: true, colour: 'red' } });
    expect((answer.json() as { issues: unknown[] }).issues).toEqual([
      { field: 'dryrun', rule: 'not a known field (did you mean "dryRun"?)' },
      { field: 'colour', rule: 'not a known field' },
    ]);
    expect(queued).toEqual([]);
  });

  it('answers 400 for an unknown query parameter of GET /admin/inventory/{sku}, naming the one meant', async () => {
    const answer = await app.inject({ method: 'GET', url: '/admin/inventory/A-1?siteId=2', headers });
    expect(answer.statusCode).toBe(400);
    expect(answer.json()).toMatchObject({ issues: [{ field: 'siteId', rule: 'not a known query parameter (did you mean "site"?)' }] });
    expect((await app.inject({ method: 'GET', url: '/admin/inventory/A-1?site=2', headers })).statusCode).toBe(200);
  });

  it('explains the target of ?site=&priceList=, and answers 400 naming a price list not configured', async () => {
    explained.length = 0;
    expect((await app.inject({ method: 'GET', url: '/admin/inventory/A-1?site=2&priceList=RETAIL', headers })).statusCode).toBe(200);
    expect(explained).toEqual([{ siteId: 2, priceList: 'RETAIL' }]);
    const answer = await app.inject({ method: 'GET', url: '/admin/inventory/A-1?priceList=NOPE', headers });
    expect(answer.statusCode).toBe(400);
    expect(answer.json()).toMatchObject({ issues: [{ field: '--price-list', value: 'NOPE' }] });
    expect((answer.json() as { error: string }).error).toMatch(/NOPE.*1:RETAIL/);
  });
});
