import { describe, expect, it } from 'vitest';

import { INVENTORY_FIELDS } from '../../src/erp/fields.js';
import { pollChanges, pollSettingsFor } from '../../src/erp/polling.js';
import { logCollector } from '../ops/helpers.js';

describe('pollChanges', () => {
  it('names the source once in its "full batch without progress" warning (the source child logger carries it)', async () => {
    const logs = logCollector('debug');
    const settings = pollSettingsFor({ name: 'erp-articulos', overlapMs: 0, mapping: {} }, { fields: INVENTORY_FIELDS, logger: logs.logger }, 'row', 'set initialCursor');
    const tie = new Date('2025-01-01T00:00:01Z');
    // Two rows share one cursor and fill a batch of 2: the limit is raised and the read repeated.
    const rows = [
      { code: 'A', stock: 1, cursor: tie },
      { code: 'B', stock: 2, cursor: tie },
      { code: 'C', stock: 3, cursor: new Date('2025-01-01T00:00:02Z') },
    ];
    const batch = await pollChanges(null, 2, settings, async (_start, limit) => rows.slice(0, limit));
    expect(batch.records.map((record) => record.fields.Code)).toEqual(['A', 'B', 'C']);
    const raw = logs.text().split('\n').find((line) => line.includes('full batch without progress')) ?? '';
    expect(raw.match(/"source":/g)).toHaveLength(1);
    expect(JSON.parse(raw)).toMatchObject({ level: 'warn', source: 'erp-articulos', limit: 4 });
  });
});
