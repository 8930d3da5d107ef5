/**
 * Timestamps as real ERPs write them (field-lessons.md): Odoo's naive-UTC `timestamp(6)` on PostgreSQL
 * and ERPNext's local-time `datetime(6)` on MariaDB, read under a process TZ that is neither (Asia/Tokyo):
 * microseconds kept, the zone the source's, and a DST fall-back hour losing no row.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { SqlSourceConfig } from '../../src/config/schema.js';
import { INVENTORY_FIELDS } from '../../src/erp/fields.js';
import { createSource } from '../../src/erp/index.js';
import { openSql } from '../../src/erp/sql-client.js';
import type { ChangeSource } from '../../src/erp/types.js';
import { silentLogger } from '../../src/log.js';
import { mariaScratch, PG_URL, pgScratch } from './databases.js';
import { createErpnextShape, createOdooShape, ERPNEXT_CHANGES_QUERY, insertOdooQuants, odooChangesQuery, upsertErpnextBin } from './erp-shapes.js';
import { codes, sqlConfig } from './sources.js';

const deps = { fields: INVENTORY_FIELDS, logger: silentLogger() };
const originalTz = process.env.TZ;
const opened: ChangeSource[] = [];

function source(config: Partial<SqlSourceConfig> & Pick<SqlSourceConfig, 'url' | 'changes'>): ChangeSource {
  const created = createSource(sqlConfig(config), deps);
  opened.push(created);
  return created;
}

beforeEach(() => {
  // Node re-reads TZ when it is assigned: the drivers' own Date handling would now be Tokyo's.
  process.env.TZ = 'Asia/Tokyo';
});
afterEach(async () => {
  if (originalTz === undefined) delete process.env.TZ;
  else process.env.TZ = originalTz;
  await Promise.all(opened.splice(0).map((o) => o.close()));
});

describe('Odoo stock_quant on PostgreSQL (write_date timestamp(6) without time zone, naive UTC)', () => {
  let scratch: Awaited<ReturnType<typeof pgScratch>>;

  beforeAll(async () => {
    scratch = await pgScratch();
    await createOdooShape(scratch.db, scratch.schema);
  });
  afterAll(async () => {
    await scratch.drop();
  });

  it('reads write_date as UTC with its microseconds under TZ=Asia/Tokyo, and pages after the exact microsecond', async () => {
    await insertOdooQuants(scratch.db, scratch.schema, { count: 3, quantity: '7', writeDate: '2024-05-01 10:00:00.123456' });
    await insertOdooQuants(scratch.db, scratch.schema, { count: 1, quantity: '2', writeDate: '2024-05-01 10:00:00.123457', prefix: 'LATER-' });
    const erp = source({ url: PG_URL, changes: odooChangesQuery(scratch.schema), overlapMs: 0 });

    const first = await erp.readChanges(null, 3);
    expect(first.records.map((r) => [r.fields.Code, r.cursor])).toEqual([
      ['ODOO-000001', '2024-05-01T10:00:00.123456Z'],
      ['ODOO-000002', '2024-05-01T10:00:00.123456Z'],
      ['ODOO-000003', '2024-05-01T10:00:00.123456Z'],
    ]);
    expect(first.resumeKey).toBe('ODOO-000003');

    // A bound truncated to the millisecond (…123) would read the three again; rounded up (…124), nothing.
    const next = await erp.readChanges(first.resumeFrom ?? null, 3, { overlap: false, afterKey: 'ODOO-000003' });
    expect(next.records.map((r) => [r.fields.Code, r.cursor])).toEqual([['LATER-000001', '2024-05-01T10:00:00.123457Z']]);
  });
});

describe('ERPNext tabBin on MariaDB (modified datetime(6) in the site time zone)', () => {
  let scratch: Awaited<ReturnType<typeof mariaScratch>>;

  beforeAll(async () => {
    scratch = await mariaScratch();
    await createErpnextShape(scratch.db);
  });
  beforeEach(async () => {
    await scratch.db.query('TRUNCATE TABLE `tabBin`');
  });
  afterAll(async () => {
    await scratch.drop();
  });

  it('reads modified in the configured zone (Europe/Madrid) with its microseconds under TZ=Asia/Tokyo', async () => {
    await upsertErpnextBin(scratch.db, 'ITEM-A', '3', '2024-05-01 12:00:00.123456');
    await upsertErpnextBin(scratch.db, 'ITEM-B', '3', '2024-05-01 12:00:00.123457');
    const erp = source({ url: scratch.url, changes: ERPNEXT_CHANGES_QUERY, timeZone: 'Europe/Madrid', overlapMs: 0 });

    const first = await erp.readChanges(null, 1);
    expect(first.records.map((r) => [r.fields.Code, r.cursor])).toEqual([['ITEM-A', '2024-05-01T10:00:00.123456Z']]);
    const next = await erp.readChanges(first.resumeFrom ?? null, 1, { overlap: false, afterKey: 'ITEM-A' });
    expect(next.records.map((r) => [r.fields.Code, r.cursor])).toEqual([['ITEM-B', '2024-05-01T10:00:00.123457Z']]);
    // A new poll from the stored cursor reads the row at it again (>=), not one microsecond later.
    expect(codes((await erp.readChanges(next.nextCursor, 10)).records)).toEqual(['ITEM-B']);
  });

  it('loses no row written in the hour a DST fall-back repeats, after the cursor passed that wall time', async () => {
    const erp = source({ url: scratch.url, changes: ERPNEXT_CHANGES_QUERY, timeZone: 'Europe/Madrid', overlapMs: 60_000 });
    // 2024-10-27 in Madrid: 02:50 CEST (00:50Z), then at 03:00 CEST the clock goes back to 02:00 CET.
    await upsertErpnextBin(scratch.db, 'BEFORE', '1', '2024-10-27 02:50:00.000000');
    const first = await erp.readChanges(null, 10);
    expect(first.nextCursor).toBe('2024-10-27T00:50:00.000Z');

    // 01:10Z, in the repeated hour: the wall clock says 02:10, forty minutes before the cursor's 02:50.
    await upsertErpnextBin(scratch.db, 'REPEATED', '2', '2024-10-27 02:10:00.000000');
    const second = await erp.readChanges(first.nextCursor, 10);
    expect(codes(second.records)).toContain('REPEATED');

    // Past the repeated hour (03:05 CET, 02:05Z) the cursor leaves it, and the polls narrow again.
    await upsertErpnextBin(scratch.db, 'AFTER', '3', '2024-10-27 03:05:00.000000');
    const third = await erp.readChanges(second.nextCursor, 10);
    expect(codes(third.records)).toContain('AFTER');
    expect(third.nextCursor).toBe('2024-10-27T02:05:00.000Z');
    expect(codes((await erp.readChanges(third.nextCursor, 10)).records)).toEqual(['AFTER']);
  });
});

describe('DATE columns', () => {
  it('start at midnight in the configured zone on both databases, whatever TZ is', async () => {
    const maria = await mariaScratch();
    try {
      const onPg = openSql(PG_URL, { timeZone: 'Europe/Madrid' });
      const onMaria = openSql(maria.url, { timeZone: 'Europe/Madrid' });
      try {
        const [fromPg] = await onPg.query<{ day: Date }>("SELECT DATE '2024-05-01' AS day");
        const [fromMaria] = await onMaria.query<{ day: Date }>("SELECT DATE '2024-05-01' AS day");
        expect(fromPg?.day.toISOString()).toBe('2024-04-30T22:00:00.000Z');
        expect(fromMaria?.day.toISOString()).toBe('2024-04-30T22:00:00.000Z');
      } finally {
        await Promise.all([onPg.close(), onMaria.close()]);
      }
    } finally {
      await maria.drop();
    }
  });
});
