import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type HttpSourceConfig, httpSourceSchema } from '../../src/config/schema.js';
import { INVENTORY_FIELDS } from '../../src/erp/fields.js';
import { recordsAt } from '../../src/erp/http-source.js';
import { createSource } from '../../src/erp/index.js';
import type { ChangeSource } from '../../src/erp/types.js';
import { ErpError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { drainSource } from '../../src/sync/drain-source.js';

const TOKEN = 'erp-token-5b1f9c0d';

interface ErpItem {
  sku: string;
  available: number | string;
  updatedAt: string;
}

/** The ERP's own endpoint stand-in: filters by `since`, orders by `updatedAt`, honours `limit`. */
describe('HTTP source', () => {
  let server: Server;
  let base: string;
  let items: ErpItem[];
  let requests: URL[];
  let respond: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const opened: ChangeSource[] = [];

  function source(overrides: Partial<HttpSourceConfig> = {}): ChangeSource {
    const config = httpSourceSchema.parse({
      name: 'erp-api',
      kind: 'http',
      schedule: '* * * * * *',
      url: `${base}/api/stock?site=1`,
      recordsPath: 'data.items',
      headers: { Authorization: `Bearer ${TOKEN}` },
      mapping: { sku: 'Code', available: 'Stock', updatedAt: 'cursor' },
      ...overrides,
    });
    const created = createSource(config, { fields: INVENTORY_FIELDS, logger: silentLogger() });
    opened.push(created);
    return created;
  }

  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://erp');
      requests.push(url);
      if (respond) return respond(req, res);
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'bad token', got: req.headers.authorization }));
        return;
      }
      const since = url.searchParams.get('since');
      const limit = Number(url.searchParams.get('limit'));
      // With `after` (a source's afterKeyParam): the records with (updatedAt, sku) after (since, after).
      const after = url.searchParams.get('after');
      const isAfter = (item: ErpItem) =>
        since === null || Date.parse(item.updatedAt) > Date.parse(since) || (Date.parse(item.updatedAt) === Date.parse(since) && (after === null || item.sku > after));
      const selected = items
        .filter(isAfter)
        .sort((a, b) => Date.parse(a.updatedAt) - Date.parse(b.updatedAt) || a.sku.localeCompare(b.sku))
        .slice(0, limit);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { items: selected } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    items = [];
    requests = [];
    respond = undefined;
  });
  afterAll(async () => {
    await Promise.all(opened.map((o) => o.close()));
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('polls with the cursor and limit parameters and maps the records', async () => {
    items = [
      { sku: 'SKU-1', available: '5', updatedAt: '2024-05-01T10:00:00-03:00' },
      { sku: 'SKU-2', available: 0, updatedAt: '2024-05-01T13:00:05Z' },
    ];
    const erp = source({ overlapMs: 60_000 });
    const first = await erp.readChanges(null, 50);
    expect(first.records).toEqual([
      { ref: 'erp-api record cursor=2024-05-01T13:00:00.000Z Code=SKU-1', cursor: '2024-05-01T13:00:00.000Z', fields: { Code: 'SKU-1', Stock: 5 } },
      { ref: 'erp-api record cursor=2024-05-01T13:00:05.000Z Code=SKU-2', cursor: '2024-05-01T13:00:05.000Z', fields: { Code: 'SKU-2', Stock: 0 } },
    ]);
    expect(requests[0]?.searchParams.has('since')).toBe(false);
    expect(requests[0]?.searchParams.get('limit')).toBe('50');
    expect(requests[0]?.searchParams.get('site')).toBe('1');

    await erp.readChanges(first.nextCursor, 50);
    expect(requests[1]?.searchParams.get('since')).toBe('2024-05-01T12:59:05.000Z');
  });

  it('sends the cursor and the limit under the names cursorParam and limitParam give', async () => {
    // This ERP knows only `changedSince` and `max`: with the default names it would answer everything each time.
    const rows = [
      { Code: 'SKU-1', Stock: 1, cursor: '2024-05-01T13:00:01.000Z' },
      { Code: 'SKU-2', Stock: 2, cursor: '2024-05-01T13:00:02.000Z' },
      { Code: 'SKU-3', Stock: 3, cursor: '2024-05-01T13:00:03.000Z' },
    ];
    respond = (req, res) => {
      const url = new URL(req.url ?? '/', 'http://erp');
      const since = url.searchParams.get('changedSince');
      const max = Number(url.searchParams.get('max') ?? 1000);
      res.end(JSON.stringify(rows.filter((row) => since === null || row.cursor >= since).slice(0, max)));
    };
    const erp = source({ recordsPath: '', mapping: {}, cursorParam: 'changedSince', limitParam: 'max', overlapMs: 0 });
    const first = await erp.readChanges(null, 2);
    expect(first.records.map((r) => r.fields.Code)).toEqual(['SKU-1', 'SKU-2']);
    const second = await erp.readChanges(first.nextCursor, 2);
    expect(second.records.map((r) => r.fields.Code)).toEqual(['SKU-2', 'SKU-3']);
    expect(requests.map((url) => Object.fromEntries(url.searchParams))).toEqual([
      { site: '1', max: '2' },
      { site: '1', changedSince: '2024-05-01T13:00:02.000Z', max: '2' },
    ]);
  });

  it('reads a body that is the array itself when recordsPath is empty', async () => {
    respond = (_req, res) => res.end(JSON.stringify([{ Code: 'SKU-7', Stock: 1, cursor: 12 }]));
    const batch = await source({ recordsPath: '', mapping: {} }).readChanges(null, 10);
    expect(batch.records.map((r) => r.fields)).toEqual([{ Code: 'SKU-7', Stock: 1 }]);
    expect(batch.nextCursor).toBe(12);
  });

  it('rejects a record whose values cannot be coerced', async () => {
    items = [{ sku: 'SKU-1', available: 'many', updatedAt: '2024-05-01T13:00:00Z' }];
    const batch = await source().readChanges(null, 10);
    expect(batch.rejected).toEqual([
      {
        ref: 'erp-api record cursor=2024-05-01T13:00:00.000Z',
        issues: [{ record: 'SKU-1', field: 'Stock', value: 'many', rule: 'integer' }],
      },
    ]);
  });

  it('turns HTTP errors into ErpErrors with a body excerpt that never shows the header secret', async () => {
    const error = await source({ headers: { Authorization: `Bearer ${TOKEN}-wrong` } })
      .readChanges(null, 10)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErpError);
    expect((error as ErpError).retryable).toBe(false);
    expect((error as ErpError).code).toBe('ERR_ERP_HTTP');
    expect((error as ErpError).message).toMatch(/GET http:\/\/127\.0\.0\.1:\d+\/api\/stock answered HTTP 401: .*bad token/);
    expect((error as ErpError).message).not.toContain(TOKEN);
  });

  it('marks 5xx answers as temporary', async () => {
    respond = (_req, res) => res.writeHead(503).end('maintenance');
    const error = await source().readChanges(null, 10).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErpError);
    expect((error as ErpError).retryable).toBe(true);
    expect((error as ErpError).message).toContain('HTTP 503: maintenance');
    expect((error as ErpError).code).toBe('ERR_ERP_HTTP');
  });

  it('refuses a body that is not JSON or has no array at recordsPath', async () => {
    respond = (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>');
    const notJson = await source().readChanges(null, 10).catch((e: unknown) => e);
    expect((notJson as ErpError).message).toContain('not JSON: <html>login</html>');
    respond = (_req, res) => res.end(JSON.stringify({ data: { rows: [] } }));
    const noArray = await source().readChanges(null, 10).catch((e: unknown) => e);
    expect((noArray as ErpError).message).toContain('expected an array of objects at "data.items"');
  });

  it('gives up on an endpoint that does not answer within timeoutMs, as a temporary failure', async () => {
    respond = () => undefined;
    const error = await source({ timeoutMs: 200 }).readChanges(null, 10).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErpError);
    expect((error as ErpError).retryable).toBe(true);
  });

  it('reports an unreachable endpoint as a temporary failure', async () => {
    const error = await source({ url: 'http://127.0.0.1:1/api' }).readChanges(null, 10).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErpError);
    expect(error).toMatchObject({ code: 'ERR_ERP_CONNECTION', retryable: true });
  });

  it('pages records sharing one cursor with afterKeyParam, any number of them, in reads of the limit', async () => {
    items = Array.from({ length: 25 }, (_, i) => ({ sku: `TIE-${String(i).padStart(2, '0')}`, available: i, updatedAt: '2024-05-01T10:00:00.000Z' }));
    const seen: string[] = [];
    const result = await drainSource(source({ afterKeyParam: 'after' }), {
      cursor: null,
      limit: 10,
      maxRounds: 5,
      queue: async (batch) => void seen.push(...batch.records.map((record) => String(record.fields.Code))),
      saveCursor: async () => undefined,
    });
    expect(seen).toEqual(items.map((item) => item.sku));
    expect(result.cursor).toBe('2024-05-01T10:00:00.000Z');
    expect(requests.map((url) => url.searchParams.get('after'))).toEqual([null, 'TIE-09', 'TIE-19']);
    expect(requests.every((url) => url.searchParams.get('limit') === '10')).toBe(true);
  });

  it('without afterKeyParam fails a tie group it cannot get past, naming afterKeyParam', async () => {
    items = Array.from({ length: 70 }, (_, i) => ({ sku: `TIE-${String(i).padStart(2, '0')}`, available: i, updatedAt: '2024-05-01T10:00:00.000Z' }));
    await expect(source().readChanges(null, 1)).rejects.toThrow(/more than 64 records share cursor 2024-05-01T10:00:00\.000Z: set the source's afterKeyParam/);
  });

  it('asks for a pageKey unique per record when the key repeats in the tie group (one record per item and list)', async () => {
    items = Array.from({ length: 70 }, (_, i) => ({ sku: `TIE-${String(i >> 1).padStart(2, '0')}`, available: i, updatedAt: '2024-05-01T10:00:00.000Z' }));
    await expect(source().readChanges(null, 1)).rejects.toThrow(
      /more than 64 records share cursor 2024-05-01T10:00:00\.000Z: their key is not unique per record \("TIE-00": 2 records\), so paging on it would skip records: give each record a pageKey field unique per record/,
    );
  });
});

describe('recordsAt', () => {
  it('follows a dotted path, and returns the body for an empty path', () => {
    expect(recordsAt({ a: { b: [1] } }, 'a.b')).toEqual([1]);
    expect(recordsAt([2], '')).toEqual([2]);
    expect(recordsAt({ a: 1 }, 'a.b')).toBeUndefined();
  });
});
