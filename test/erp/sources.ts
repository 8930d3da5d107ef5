/** Shared helpers of the source tests: config builders and a poll loop. */
import { type SqlSourceConfig,sqlSourceSchema } from '../../src/config/schema.js';
import { compareCursors } from '../../src/erp/cursor.js';
import type { ChangeSource, Cursor, SourceRecord } from '../../src/erp/types.js';

/** A SQL source config with the schema's defaults. */
export function sqlConfig(fields: Partial<SqlSourceConfig> & Pick<SqlSourceConfig, 'url' | 'changes'>): SqlSourceConfig {
  return sqlSourceSchema.parse({ name: 'erp-test', kind: 'sql', schedule: '* * * * * *', ...fields });
}

/** Polls until the cursor stops advancing (bounded), returning every record read and the final cursor. */
export async function drain(source: ChangeSource, limit: number, from: Cursor = null): Promise<{ records: SourceRecord[]; cursor: Cursor; polls: number }> {
  const records: SourceRecord[] = [];
  let cursor = from;
  for (let polls = 1; polls <= 50; polls += 1) {
    const batch = await source.readChanges(cursor, limit);
    records.push(...batch.records);
    if (compareCursors(batch.nextCursor, cursor) <= 0) return { records, cursor, polls };
    cursor = batch.nextCursor;
  }
  throw new Error('the cursor kept advancing after 50 polls');
}

/** The distinct codes of some records, sorted. */
export function codes(records: readonly SourceRecord[]): string[] {
  return [...new Set(records.map((record) => String(record.fields.Code)))].sort();
}
