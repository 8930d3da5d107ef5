/**
 * Issue 22: a table bulk-loaded under one timestamp failed with ERR_ERP_CURSOR ("more than 192 rows share
 * cursor"). With `:afterKey` the rows are paged on (cursor, key): 100,000 rows under one timestamp sync
 * in one poll, in reads of `limit` rows, on MariaDB (ERPNext's tabBin); 20,000 on PostgreSQL, where Odoo's
 * stock is a sum over quants and every page groups the whole tie group again (100,000 take 40 s there).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { SqlSourceConfig } from '../../src/config/schema.js';
import { INVENTORY_FIELDS } from '../../src/erp/fields.js';
import { createSource } from '../../src/erp/index.js';
import type { ChangeBatch, ChangeSource, Cursor } from '../../src/erp/types.js';
import { ErpError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { drainSource } from '../../src/sync/drain-source.js';
import { mariaScratch, PG_URL, pgScratch } from './databases.js';
import {
  createErpnextShape,
  createOdooShape,
  ERPNEXT_CHANGES_QUERY,
  ERPNEXT_CHANGES_QUERY_WITHOUT_AFTER_KEY,
  insertErpnextBins,
  insertOdooQuants,
  odooChangesQuery,
} from './erp-shapes.js';
import { sqlConfig } from './sources.js';

const ROWS = 100_000;
const PG_ROWS = 20_000;
const LIMIT = 1000;
const deps = { fields: INVENTORY_FIELDS, logger: silentLogger() };
const opened: ChangeSource[] = [];

function source(config: Partial<SqlSourceConfig> & Pick<SqlSourceConfig, 'url' | 'changes'>): ChangeSource {
  const created = createSource(sqlConfig(config), deps);
  opened.push(created);
  return created;
}

/**
 * One poll as the daemon runs it (drainSource, 50 rounds); what each read returned. Each read is checked
 * as it comes: a read that brings back a row already read (paging that does not advance), or more reads
 * than `rows` need, fails the poll at once with what went wrong, rather than by the test's time limit.
 */
async function poll(erp: ChangeSource, cursor: Cursor, rows: number) {
  const sizes: number[] = [];
  const seen = new Set<string>();
  let duplicates = 0;
  const mostReads = Math.ceil(rows / LIMIT) + 2;
  const result = await drainSource(erp, {
    cursor,
    limit: LIMIT,
    maxRounds: 50,
    queue: async (batch: ChangeBatch) => {
      sizes.push(batch.records.length + batch.rejected.length);
      for (const record of batch.records) {
        const code = String(record.fields.Code);
        if (seen.has(code)) duplicates += 1;
        seen.add(code);
      }
      expect(duplicates, `read ${sizes.length} (${sizes.at(-1)} rows) returned rows already read: paging on (cursor, key) does not advance`).toBe(0);
      expect(sizes.length, `more than ${mostReads} reads for ${rows} rows in reads of ${LIMIT}: the poll does not progress (${seen.size} distinct rows so far)`).toBeLessThanOrEqual(mostReads);
    },
    saveCursor: async () => undefined,
  });
  return { ...result, sizes, seen, duplicates };
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((o) => o.close()));
});

describe('rows under one timestamp, more than the limit many times over', () => {
  let pg: Awaited<ReturnType<typeof pgScratch>>;
  let maria: Awaited<ReturnType<typeof mariaScratch>>;

  beforeAll(async () => {
    [pg, maria] = await Promise.all([pgScratch(), mariaScratch()]);
    await Promise.all([createOdooShape(pg.db, pg.schema), createErpnextShape(maria.db)]);
    await Promise.all([
      insertOdooQuants(pg.db, pg.schema, { count: PG_ROWS, quantity: '4.000', writeDate: '2024-05-01 10:00:00.654321' }),
      insertErpnextBins(maria.db, { count: ROWS, actualQty: '4.000000000', modified: '2024-05-01 12:00:00.654321' }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([pg.drop(), maria.drop()]);
  });

  it('100,000 sync in one poll on MariaDB (ERPNext tabBin, :afterKey), in reads of at most the limit', async () => {
    const result = await poll(source({ url: maria.url, changes: ERPNEXT_CHANGES_QUERY, timeZone: 'Europe/Madrid' }), null, ROWS);
    expect(result.seen.size).toBe(ROWS);
    expect(result.duplicates).toBe(0);
    expect(Math.max(...result.sizes)).toBeLessThanOrEqual(LIMIT);
    expect(result.cursor).toBe('2024-05-01T10:00:00.654321Z');
  }, 120_000);

  it('20,000 sync in one poll on PostgreSQL (Odoo stock_quant summed per product, :afterKey), in reads of at most the limit', async () => {
    const result = await poll(source({ url: PG_URL, changes: odooChangesQuery(pg.schema) }), null, PG_ROWS);
    expect(result.seen.size).toBe(PG_ROWS);
    expect(result.duplicates).toBe(0);
    expect(Math.max(...result.sizes)).toBeLessThanOrEqual(LIMIT);
    expect(result.cursor).toBe('2024-05-01T10:00:00.654321Z');
  }, 120_000);

  it('are read again by the next poll from the stored cursor (the overlap), and nothing is lost or left', async () => {
    const erp = source({ url: PG_URL, changes: odooChangesQuery(pg.schema) });
    const result = await poll(erp, '2024-05-01T10:00:00.654321Z', PG_ROWS);
    expect(result.seen.size).toBe(PG_ROWS);
    expect(result.duplicates).toBe(0);
    expect(Math.max(...result.sizes)).toBeLessThanOrEqual(LIMIT);
  }, 120_000);

  it('fail a query without :afterKey with ERR_ERP_CURSOR naming :afterKey', async () => {
    const erp = source({ url: maria.url, changes: ERPNEXT_CHANGES_QUERY_WITHOUT_AFTER_KEY, timeZone: 'Europe/Madrid' });
    const failure = await erp.readChanges(null, 3).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ErpError);
    expect(failure).toMatchObject({ code: 'ERR_ERP_CURSOR' });
    expect((failure as Error).message).toMatch(/more than 192 rows share cursor 2024-05-01T10:00:00\.654321Z: page the changes query on \(cursor, key\) with :afterKey/);
  });
});
