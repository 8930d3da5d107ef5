import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { cursorToVersion } from '../../src/erp/cursor.js';
import { openSql, type SqlClient } from '../../src/erp/sql-client.js';
import type { ChangeBatch, ChangeSource, Cursor, KnownRows } from '../../src/erp/types.js';
import { DeliveredWindow } from '../../src/sync/delivered-window.js';
import { drainSource } from '../../src/sync/drain-source.js';
import { CHANGES_TABLE, changesSource, PG_URL } from '../support/pg-changes.js';

const schema = `drain_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
let admin: SqlClient;
const sources: ChangeSource[] = [];

/** A PostgreSQL source over `schema.changes`, with a 60 s overlap and a tiny limit. */
function source(limit: number, inSchema = schema): ChangeSource {
  const created = changesSource(inSchema, 'busy', limit);
  sources.push(created);
  return created;
}

async function drain(src: ChangeSource, cursor: Cursor, limit: number, maxRounds: number, known?: KnownRows) {
  const batches: ChangeBatch[] = [];
  const saved: Cursor[] = [];
  const result = await drainSource(src, {
    cursor,
    limit,
    maxRounds,
    ...(known ? { known } : {}),
    queue: async (batch) => void batches.push(batch),
    saveCursor: async (next) => void saved.push(next),
  });
  return { ...result, batches, saved, codes: batches.flatMap((b) => b.records.map((r) => String(r.fields.Code))) };
}

beforeAll(async () => {
  admin = openSql(PG_URL);
  await admin.query(`CREATE SCHEMA "${schema}"`);
  await admin.query(`CREATE TABLE "${schema}".changes ${CHANGES_TABLE}`);
});

afterAll(async () => {
  await Promise.all(sources.map((s) => s.close()));
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.close();
});

describe('drainSource', () => {
  it('crosses an overlap window busier than the whole round budget once, then reads what is new', async () => {
    // 200 rows changed within the 60 s overlap window before the stored cursor: a bulk update. With a
    // limit of 2 and 3 rounds the window holds 33 times the round budget and 100 times the limit.
    const base = Date.now() - 30_000;
    await admin.query(
      `INSERT INTO "${schema}".changes SELECT 'OLD-' || lpad(i::text, 3, '0'), i, to_timestamp((${base} + i * 10) / 1000.0) FROM generate_series(1, 200) i`,
    );
    const stored = new Date(base + 2000).toISOString();
    await admin.query(`INSERT INTO "${schema}".changes VALUES ('NEW-1', 1, to_timestamp(${base + 5000} / 1000.0))`);

    const result = await drain(source(2), stored, 2, 3);

    expect(result.codes).toContain('NEW-1');
    expect(new Set(result.codes).size).toBe(201);
    // Each row of the window read at most twice: a read continues at the previous batch's last cursor
    // (>=), so with a limit of 2 every read repeats one row; with real limits that is one row per batch.
    expect(result.read).toBeLessThanOrEqual(2 * 201);
    expect(result.cursor).toBe(new Date(base + 5000).toISOString());
    // Only the first read of the poll starts before the stored cursor.
    expect(result.saved).toEqual([new Date(base + 5000).toISOString()]);
  });

  it('never moves the stored cursor backwards while reading inside the overlap window', async () => {
    const stored = new Date(Date.now() + 60_000).toISOString();
    const result = await drain(source(5), stored, 5, 2);
    expect(result.cursor).toBe(stored);
    expect(result.saved).toEqual([]);
  });

  it('pages through a window of rows it already delivered by the rows it read, and still reads a late row and a changed one', async () => {
    const other = `${schema}_known`;
    await admin.query(`CREATE SCHEMA "${other}"`);
    try {
      await admin.query(`CREATE TABLE "${other}".changes ${CHANGES_TABLE}`);
      const base = Date.now() - 20_000;
      await admin.query(`INSERT INTO "${other}".changes SELECT 'K-' || i, i, to_timestamp((${base} + i * 100) / 1000.0) FROM generate_series(1, 9) i`);
      const src = source(2, other);
      const window = new DeliveredWindow(60_000);
      const first = await drain(src, null, 2, 50, window);
      expect(new Set(first.codes)).toEqual(new Set(Array.from({ length: 9 }, (_, i) => `K-${i + 1}`)));
      const records = first.batches.flatMap((batch) => batch.records);
      expect(records.every((record) => typeof record.rowKey === 'string')).toBe(true);
      // What the producer does once the records are queued.
      window.add(records.map((r) => ({ key: String(r.fields.Code), version: cursorToVersion(r.cursor) ?? 0, fields: r.fields, rowKey: r.rowKey!, cursor: r.cursor })));

      // Committed late inside the overlap window, and a row changed without a new timestamp.
      await admin.query(`INSERT INTO "${other}".changes VALUES ('K-0', 0, to_timestamp(${base + 50} / 1000.0))`);
      await admin.query(`UPDATE "${other}".changes SET stock = 55 WHERE code = 'K-5'`);
      const second = await drain(src, first.cursor, 2, 50, window);

      // Nine known rows in batches of two: a batch of known rows is a full batch, so the read goes on.
      // (A row on a batch boundary is read by both batches: the cursor condition is inclusive.)
      expect(new Set(second.codes)).toEqual(new Set(['K-0', 'K-5']));
      const known = second.batches.reduce((sum, batch) => sum + (batch.known ?? 0), 0);
      expect(known).toBeGreaterThanOrEqual(8);
      expect(second.read).toBe(known + second.batches.reduce((sum, batch) => sum + batch.records.length + batch.rejected.length, 0));
      expect(second.cursor).toBe(first.cursor);
      // Without the window the same poll reads and normalises every row of it.
      const unknown = await drain(src, first.cursor, 2, 50);
      expect(new Set(unknown.codes).size).toBe(10);
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS "${other}" CASCADE`);
    }
  });
});
