import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { pollStart } from '../../src/erp/cursor.js';
import { createSource, INVENTORY_FIELDS } from '../../src/erp/index.js';
import { openSql, type SqlClient } from '../../src/erp/sql-client.js';
import type { ChangeSource, Cursor } from '../../src/erp/types.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import type { SourceCursors } from '../../src/sync/drain-source.js';
import { pollChangeSource, type PollHistory } from '../../src/sync/poll-source.js';
import { sqlConfig } from '../erp/sources.js';
import { CHANGES_TABLE, changesSource, PG_URL } from '../support/pg-changes.js';

const schema = `pollsrc_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
/** The ERP's and storesync's clock in this test (fixed: the polls' instants are chosen). */
const BASE = Date.parse('2025-03-01T00:00:00.000Z');
const at = (ms: number): string => new Date(BASE + ms).toISOString();
let admin: SqlClient;
let source: ChangeSource;

beforeAll(async () => {
  admin = openSql(PG_URL);
  await admin.query(`CREATE SCHEMA "${schema}"`);
  await admin.query(`CREATE TABLE "${schema}".changes ${CHANGES_TABLE}`);
  source = changesSource(schema, 'burst', 1000);
});

afterAll(async () => {
  await source.close();
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.close();
});

describe('pollStart', () => {
  it('reaches back the overlap before the last complete poll began, never before the overlap before the cursor, never past the cursor', () => {
    const cursor = at(60_000);
    expect(pollStart(cursor, 60_000)).toEqual(new Date(BASE));
    expect(pollStart(cursor, 60_000, BASE + 90_000)).toEqual(new Date(BASE + 30_000));
    expect(pollStart(cursor, 60_000, BASE + 500_000)).toEqual(new Date(BASE + 60_000));
    expect(pollStart(cursor, 60_000, BASE + 10_000)).toEqual(new Date(BASE));
    expect(pollStart(42, 60_000, BASE)).toBe(42);
  });
});

/**
 * A poller of the test's source with its own stored cursor, history and clock: `poll(when)` polls as if
 * storesync's clock read `when`; `codes()` takes the codes read since the last call, sorted.
 */
function poller(from: ChangeSource = source) {
  let now = BASE;
  let stored: Cursor | undefined;
  const cursors = { get: async () => stored, set: async (_: string, cursor: Cursor) => void (stored = cursor) } as unknown as SourceCursors;
  const history: PollHistory = {};
  const read: string[] = [];
  const poll = (when: number) => {
    now = when;
    return pollChangeSource(
      from,
      { limit: 1000, history },
      {
        flow: 'inventory',
        cursors,
        metrics: new Metrics({ defaultMetrics: false }),
        now: () => now,
        queueBatch: async (batch) => {
          read.push(...batch.records.map((record) => String(record.fields.Code)));
          return { queued: batch.records.length, rejected: 0 };
        },
      },
    );
  };
  return { poll, history, codes: () => read.splice(0).sort() };
}

describe('the overlap after a burst', () => {
  it('stops re-reading a burst once the overlap has passed it on the clock, and still reads a row committed late', async () => {
    await admin.query(`TRUNCATE "${schema}".changes`);
    const { poll, codes } = poller();

    // A burst of 50 rows, 10 s before the first poll.
    await admin.query(`INSERT INTO "${schema}".changes SELECT 'B-' || lpad(i::text, 2, '0'), i, to_timestamp((${BASE - 10_000} + i) / 1000.0) FROM generate_series(1, 50) i`);
    expect((await poll(BASE)).read).toBe(50);
    codes();
    // A second later the burst is still inside the overlap of both the cursor and the last poll.
    expect((await poll(BASE + 1000)).read).toBe(50);
    codes();
    // Two minutes on, nothing new: one poll still covers the minute before the last poll began…
    expect((await poll(BASE + 120_000)).read).toBe(50);
    codes();
    // …and the next, its window wholly after the cursor and the last poll caught up there, starts just
    // past the cursor: not even the row at it is read again.
    expect((await poll(BASE + 121_000)).read).toBe(0);
    expect(codes()).toEqual([]);

    // A new row moves the cursor; then a row committed late, stamped 10 s before it, is still read.
    await admin.query(`INSERT INTO "${schema}".changes VALUES ('N-1', 1, '${at(115_000)}')`);
    await poll(BASE + 122_000);
    expect(codes()).toContain('N-1');
    await admin.query(`INSERT INTO "${schema}".changes VALUES ('LATE-1', 1, '${at(105_000)}')`);
    await poll(BASE + 123_000);
    expect(codes()).toContain('LATE-1');
  });

  it('stops re-reading 3,000 rows sharing one cursor (paged with :afterKey) once the overlap has passed them, and still reads a row committed late', async () => {
    await admin.query(`TRUNCATE "${schema}".changes`);
    const paged = createSource(
      sqlConfig({
        url: PG_URL,
        limit: 1000,
        changes: `SELECT code, stock, changed_at AS cursor FROM "${schema}".changes
                  WHERE CAST(:cursor AS timestamptz) IS NULL
                     OR (changed_at, code) > (CAST(:cursor AS timestamptz), COALESCE(CAST(:afterKey AS text), ''))
                  ORDER BY changed_at, code LIMIT :limit`,
      }),
      { fields: INVENTORY_FIELDS, logger: silentLogger() },
    );
    try {
      const { poll, history, codes } = poller(paged);
      // A bulk load: 3,000 rows under one timestamp, 5 s before the first poll.
      const tie = '2025-02-28T23:59:55.123Z';
      await admin.query(`INSERT INTO "${schema}".changes SELECT 'T-' || lpad(i::text, 4, '0'), i, '${tie}' FROM generate_series(1, 3000) i`);
      expect(await poll(BASE)).toMatchObject({ read: 3000, cursor: tie });
      expect(new Set(codes()).size).toBe(3000);
      expect(history.caughtUpAt).toBe(tie);
      // While the window (the overlap before the last poll began) reaches the group, it is read again:
      // a row committed late could share its timestamp. The last poll began at BASE + 30 s: not yet.
      expect((await poll(BASE + 30_000)).read).toBe(3000);
      expect((await poll(BASE + 70_000)).read).toBe(3000);
      codes();
      // Once the window lies wholly after the group (the last poll began at BASE + 70 s), not at all.
      expect((await poll(BASE + 100_000)).read).toBe(0);
      expect((await poll(BASE + 130_000)).read).toBe(0);
      // A row committed late, stamped within the overlap of the last poll, is still read.
      await admin.query(`INSERT INTO "${schema}".changes VALUES ('LATE-T', 1, '${at(90_000)}')`);
      await poll(BASE + 131_000);
      expect(codes()).toEqual(['LATE-T']);
    } finally {
      await paged.close();
    }
  });

  it("reads the whole overlap when the ERP's timestamps are far behind the clock (a time zone read wrong)", async () => {
    await admin.query(`TRUNCATE "${schema}".changes`);
    // Every row is stamped three hours behind the clock: the lag learned from the newest rows covers it.
    const behind = 3 * 3_600_000;
    const { poll, history, codes } = poller();
    await admin.query(`INSERT INTO "${schema}".changes VALUES ('Z-1', 1, '${at(-behind)}')`);
    await poll(BASE + 500);
    await poll(BASE + 1500);
    expect(history.lagMs).toBeGreaterThanOrEqual(behind);
    // Committed late, stamped 30 s before the cursor on the ERP's clock.
    await admin.query(`INSERT INTO "${schema}".changes VALUES ('Z-LATE', 1, '${at(-behind - 30_000)}')`);
    codes();
    await poll(BASE + 2500);
    expect(codes()).toContain('Z-LATE');
  });
});
