/**
 * A PostgreSQL change log for the tests of polling: `schema.changes (code, stock, changed_at)` read by a
 * SQL source with the default 60 s overlap and an inclusive, null-safe cursor condition.
 */
import { INVENTORY_FIELDS } from '../../src/erp/fields.js';
import { createSource } from '../../src/erp/index.js';
import type { ChangeSource } from '../../src/erp/types.js';
import { silentLogger } from '../../src/log.js';

/** The test database every polling test uses (each under its own schema). */
export const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** The table's definition (create it in the test's schema). */
export const CHANGES_TABLE = '(code text PRIMARY KEY, stock int NOT NULL, changed_at timestamptz(3) NOT NULL)';

/** A source named `name` over `schema.changes`, reading `limit` rows at a time. */
export function changesSource(schema: string, name: string, limit: number): ChangeSource {
  return createSource(
    {
      name,
      kind: 'sql',
      url: PG_URL,
      schedule: '* * * * * *',
      enabled: true,
      limit,
      mapping: {},
      initialCursor: null,
      overlapMs: 60_000,
      changes: `SELECT code, stock, changed_at AS cursor FROM "${schema}".changes
                WHERE changed_at >= COALESCE(CAST(:cursor AS timestamptz), '-infinity') ORDER BY changed_at, code LIMIT :limit`,
    },
    { fields: INVENTORY_FIELDS, logger: silentLogger() },
  );
}
