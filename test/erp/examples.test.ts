import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig, packageRoot } from '../../src/config/load.js';
import type { SourceConfig } from '../../src/config/schema.js';
import { FULFILLMENT_FIELDS, INVENTORY_FIELDS } from '../../src/erp/fields.js';
import { createSource } from '../../src/erp/index.js';
import type { SourceRecord } from '../../src/erp/types.js';
import { ConfigError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { validateInventoryUpdate } from '../../src/store/validation.js';
import { mariaScratch, PG_URL, pgScratch } from './databases.js';
import { ErpnextErp } from './erpnext-erp.js';
import { exampleSqlSource, pgUrlIn } from './example-sources.js';
import { LegacyErp } from './legacy-erp.js';
import { ODOO_SHELF, ODOO_STOCK, OdooErp, type StoreTruth } from './odoo-erp.js';
import { drain } from './sources.js';

const root = packageRoot();
const logger = silentLogger();
const example = (name: string) => loadConfig({ configFile: join(root, 'config', 'examples', name), env: { ERP_API_TOKEN: 'tok-example-1' } });

/** Replaces the demo schema name in a query or script with a scratch schema. */
function inSchema<T extends SourceConfig>(config: T, schema: string): T {
  if (config.kind !== 'sql') return config;
  return { ...config, changes: config.changes?.replaceAll('erp_demo', schema), snapshot: config.snapshot?.replaceAll('erp_demo', schema) };
}

describe('example configs', () => {
  it('load, one per source kind, and build their sources', async () => {
    for (const [file, kind] of [
      ['sql-source.yaml', 'sql'],
      ['csv-source.yaml', 'csv'],
      ['http-source.yaml', 'http'],
      ['odoo.yaml', 'sql'],
      ['erpnext.yaml', 'sql'],
      ['no-change-column.yaml', 'sql'],
      ['price-lists.yaml', 'sql'],
    ] as const) {
      const config = example(file);
      const source = config.inventory.sources[0];
      expect(source?.kind).toBe(kind);
      const created = createSource(source as SourceConfig, { fields: INVENTORY_FIELDS, logger });
      await created.close();
    }
  });

  it('refuse a mapping target that is not a field', () => {
    const config = example('csv-source.yaml').inventory.sources[0] as SourceConfig;
    expect(() => createSource({ ...config, mapping: { Precio: 'Prize' } }, { fields: INVENTORY_FIELDS, logger })).toThrow(ConfigError);
  });
});

describe('examples/erp/postgres-schema.sql with config/examples/sql-source.yaml', () => {
  let scratch: Awaited<ReturnType<typeof pgScratch>>;

  beforeAll(async () => {
    scratch = await pgScratch();
    const script = await readFile(join(root, 'examples', 'erp', 'postgres-schema.sql'), 'utf8');
    await scratch.db.query(script.replaceAll('erp_demo', scratch.schema));
  });
  afterAll(() => scratch.drop());

  it('yields the 200 seeded articles, all valid store updates, through the example query and snapshot', async () => {
    const config = inSchema(example('sql-source.yaml').inventory.sources[0] as SourceConfig, scratch.schema);
    const source = createSource(config, { fields: INVENTORY_FIELDS, logger });
    const { records } = await drain(source, 64);
    const latest = new Map(records.map((record) => [record.fields.Code, record]));
    expect(latest.size).toBe(200);
    const sample = latest.get('SKU-000010') as SourceRecord;
    expect(Object.keys(sample.fields).sort()).toEqual(['Code', 'DepStock', 'OfferPrice', 'Price', 'Published', 'Stock', 'Taxes']);
    expect(sample.fields.Taxes).toBe(10.5);
    for (const record of latest.values()) expect(validateInventoryUpdate({ InternalId: 0, ...record.fields })).toEqual([]);

    let snapshotRows = 0;
    for await (const chunk of source.snapshot?.() ?? []) snapshotRows += chunk.length;
    expect(snapshotRows).toBe(200);
    await source.close();
  });

  it('reads shipments through the example fulfillment source', async () => {
    await scratch.db.query(`INSERT INTO ${scratch.schema}."Envíos" ("NroVentaWeb", "Estado", "EstadoTexto", "Seguimiento", "Observación")
      VALUES (1001, 3, 'Despachado', 'AR-123', 'Entregar por la tarde')`);
    const config = inSchema(example('sql-source.yaml').fulfillment.sources[0] as SourceConfig, scratch.schema);
    const source = createSource(config, { fields: FULFILLMENT_FIELDS, logger });
    const batch = await source.readChanges(null, 10);
    expect(batch.records.map((r) => r.fields)).toEqual([
      { SaleId: 1001, Status: 3, StatusText: 'Despachado', TrackingCode: 'AR-123', Obeservations: 'Entregar por la tarde' },
    ]);
    await source.close();
  });
});

describe('examples/erp/inventory with config/examples/csv-source.yaml', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'storesync-drop-'));
    await cp(join(root, 'examples', 'erp', 'inventory'), dir, { recursive: true });
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads every fixture row as a valid store update for the simulator codes, and moves the files on commit', async () => {
    const config = example('csv-source.yaml').inventory.sources[0] as SourceConfig;
    const source = createSource({ ...config, dir, settleMs: 0 } as SourceConfig, { fields: INVENTORY_FIELDS, logger });
    const batch = await source.readChanges(null, 10_000);
    expect(batch.rejected).toEqual([]);
    expect(batch.records.length).toBeGreaterThan(300);
    for (const record of batch.records) {
      expect(record.fields.Code).toMatch(/^SKU-000(0\d\d|1\d\d|200)$/);
      expect(validateInventoryUpdate({ InternalId: 0, ...record.fields })).toEqual([]);
    }
    expect(batch.records.some((r) => typeof r.fields.Price === 'number' && r.fields.Price > 1000)).toBe(true);
    await source.commit?.(batch);
    expect((await readdir(join(dir, 'processed'))).length).toBe(3);
    await source.close();
  });

  it('streams the full stock export as the snapshot, with the example settings', async () => {
    const config = example('csv-source.yaml').inventory.sources[0] as SourceConfig;
    const snapshotFile = join(dir, 'all-items.txt');
    await cp(join(root, 'examples', 'erp', 'inventory', '2024-05-01T09-00_stock.csv'), snapshotFile);
    const source = createSource({ ...config, dir, settleMs: 0, snapshotFile } as SourceConfig, { fields: INVENTORY_FIELDS, logger });
    const records = [];
    for await (const chunk of source.snapshot?.() ?? []) records.push(...chunk);
    expect(records).toHaveLength(200);
    expect(records[0]?.fields).toEqual({ Code: 'SKU-000001', Stock: 13, DepStock: 'NORTE' });
    await source.close();
  });
});

/** SKU → Stock and Price of records (the newest per SKU), as the store would take them. */
function figures(records: readonly SourceRecord[]): Map<string, StoreTruth> {
  return new Map(records.map((record) => [String(record.fields.Code), { Stock: Number(record.fields.Stock), Price: Number(record.fields.Price) }]));
}

/** Every record of a source's snapshot. */
async function snapshotOf(source: ReturnType<typeof createSource>): Promise<SourceRecord[]> {
  const records: SourceRecord[] = [];
  for await (const chunk of source.snapshot?.() ?? []) records.push(...chunk);
  return records;
}

describe('the ERP examples (odoo.yaml, erpnext.yaml, no-change-column.yaml) on ERP-shaped databases', () => {
  it('odoo.yaml: its changes and snapshot queries give the stock and price Odoo holds', async () => {
    const scratch = await pgScratch();
    const odoo = await OdooErp.create(scratch.db, scratch.schema, PG_URL);
    try {
      await odoo.createProducts(
        Array.from({ length: 30 }, (_, i) => ({
          sku: `OD-${i}`,
          price: 10 + i,
          quants: [
            { location: ODOO_STOCK, quantity: i, reserved: i % 4 === 0 ? 0 : 1 },
            { location: ODOO_SHELF, quantity: 1.5 },
          ],
        })),
      );
      await odoo.archive('OD-3');
      const source = createSource({ ...exampleSqlSource('odoo.yaml'), url: pgUrlIn(scratch.schema) }, { fields: INVENTORY_FIELDS, logger });
      try {
        const truth = await odoo.truth();
        expect(truth.size).toBe(29);
        // Paging by :afterKey through one write_date is the scenarios' (odoo-scenarios.test.ts, bulk load).
        expect(figures((await drain(source, 100)).records)).toEqual(truth);
        expect(figures(await snapshotOf(source))).toEqual(truth);
      } finally {
        await source.close();
      }
    } finally {
      await odoo.close();
      await scratch.drop();
    }
  });

  it('erpnext.yaml: its changes, snapshot and deletions queries give what ERPNext holds and deleted', async () => {
    const scratch = await mariaScratch();
    const erp = await ErpnextErp.create(scratch.db, { zone: 'Europe/Madrid' });
    try {
      await erp.createItems(
        Array.from({ length: 20 }, (_, i) => ({
          code: `EN-${i}`,
          price: 5 + i,
          bins: [
            { warehouse: 'Stores - S', actualQty: `${i}.250000000`, reservedQty: '0.000000000' },
            { warehouse: 'Finished Goods - S', actualQty: '2.000000000' },
            { warehouse: 'Work In Progress - S', actualQty: '9.000000000' },
          ],
        })),
        '2026-03-29 02:30:00.123456',
      );
      await erp.disable('EN-4');
      await erp.deleteItem('EN-5');
      const source = createSource({ ...exampleSqlSource('erpnext.yaml'), url: scratch.url }, { fields: INVENTORY_FIELDS, logger });
      try {
        const truth = await erp.truth();
        expect(truth.size).toBe(18);
        expect(figures((await drain(source, 100)).records)).toEqual(truth);
        expect(figures(await snapshotOf(source))).toEqual(truth);
        const deletions = await source.readDeletions!(null, 10);
        expect(deletions.records.map((record) => record.fields.Code)).toEqual(['EN-5']);
      } finally {
        await source.close();
      }
    } finally {
      await scratch.drop();
    }
  });

  it('no-change-column.yaml: a snapshot and a diff only, its query giving the table', async () => {
    const config = loadConfig({ configFile: join(root, 'config', 'examples', 'no-change-column.yaml'), env: {} });
    const example = exampleSqlSource('no-change-column.yaml');
    expect(example).toMatchObject({ diff: { schedule: expect.any(String) } });
    expect(example.changes).toBeUndefined();
    expect(example.schedule).toBeUndefined();
    expect(config.inventory.sources).toHaveLength(1);
    const scratch = await pgScratch();
    try {
      const legacy = await LegacyErp.create(scratch.db, scratch.schema);
      for (let i = 0; i < 12; i++) await legacy.set(`LG-${i}`, i, 1.25 + i);
      const source = createSource({ ...example, url: pgUrlIn(scratch.schema) }, { fields: INVENTORY_FIELDS, logger });
      try {
        expect(figures(await snapshotOf(source))).toEqual(await legacy.truth());
      } finally {
        await source.close();
      }
    } finally {
      await scratch.drop();
    }
  });
});
