import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { httpSourceSchema } from '../../src/config/schema.js';
import { INVENTORY_FIELDS } from '../../src/erp/fields.js';
import { createSource } from '../../src/erp/index.js';
import type { ChangeSource } from '../../src/erp/types.js';
import { logCollector } from '../ops/helpers.js';
import { mariaScratch, PG_URL, pgScratch } from './databases.js';
import { sqlConfig } from './sources.js';

const FIRST_POLL = /the first poll \(no stored cursor, no initialCursor\) read no/;

/** The first-poll warnings a collector caught, as [source, message]. */
function firstPollWarnings(logs: ReturnType<typeof logCollector>): Array<[unknown, string]> {
  return logs
    .lines()
    .filter((line) => line.level === 'warn' && FIRST_POLL.test(String(line.msg)))
    .map((line) => [line.source, String(line.msg)]);
}

/** Two polls without a stored cursor (the cursor stays null when nothing is read), as the daemon does them. */
async function pollTwice(source: ChangeSource): Promise<number[]> {
  const first = await source.readChanges(null, 100);
  const second = await source.readChanges(first.nextCursor, 100);
  return [first.records.length, second.records.length];
}

describe('first poll that reads nothing', () => {
  const opened: ChangeSource[] = [];
  afterAll(async () => {
    await Promise.all(opened.map((source) => source.close()));
  });

  describe('on PostgreSQL', () => {
    let scratch: Awaited<ReturnType<typeof pgScratch>>;
    beforeAll(async () => {
      scratch = await pgScratch();
      await scratch.db.query(`CREATE TABLE ${scratch.schema}.items (code text PRIMARY KEY, stock int NOT NULL, changed_at timestamp NOT NULL)`);
      await scratch.db.query(`INSERT INTO ${scratch.schema}.items VALUES ('SKU-1', 3, '2024-05-01 10:00:00'), ('SKU-2', 4, '2024-05-01 10:00:01')`);
    });
    afterAll(async () => {
      await scratch.drop();
    });

    function source(name: string, where: string, logs: ReturnType<typeof logCollector>, initialCursor: string | null = null): ChangeSource {
      const created = createSource(
        sqlConfig({
          name,
          url: PG_URL,
          changes: `SELECT code, stock, changed_at AS cursor FROM ${scratch.schema}.items WHERE ${where} ORDER BY cursor, code LIMIT :limit`,
          initialCursor,
        }),
        { fields: INVENTORY_FIELDS, logger: logs.logger },
      );
      opened.push(created);
      return created;
    }

    it('warns once, naming the source and the null-safe idiom, when `changed_at > :cursor` reads nothing', async () => {
      const logs = logCollector();
      const erp = source('pg-bad-query', 'changed_at > :cursor', logs);
      expect(await pollTwice(erp)).toEqual([0, 0]);
      await erp.readChanges(null, 100);
      const warnings = firstPollWarnings(logs);
      expect(warnings).toHaveLength(1);
      const [name, message] = warnings[0] ?? [];
      expect(name).toBe('pg-bad-query');
      expect(message).toContain('source pg-bad-query');
      expect(message).toContain("COALESCE(CAST(:cursor AS timestamp), '-infinity')");
      expect(message).toContain('initialCursor');
    });

    it('stays quiet with the null-safe query, which reads the rows', async () => {
      const logs = logCollector();
      const erp = source('pg-good-query', "changed_at >= COALESCE(CAST(:cursor AS timestamp), '-infinity')", logs);
      expect(await pollTwice(erp)).toEqual([2, 2]);
      expect(firstPollWarnings(logs)).toEqual([]);
    });

    it('stays quiet when an initialCursor is set: the first poll does not start from null', async () => {
      const logs = logCollector();
      const erp = source('pg-initial-cursor', 'changed_at > :cursor', logs, '2030-01-01T00:00:00Z');
      expect(await pollTwice(erp)).toEqual([0, 0]);
      expect(firstPollWarnings(logs)).toEqual([]);
    });
  });

  describe('on MariaDB', () => {
    let scratch: Awaited<ReturnType<typeof mariaScratch>>;
    beforeAll(async () => {
      scratch = await mariaScratch();
      await scratch.db.query('CREATE TABLE items (code VARCHAR(30) PRIMARY KEY, stock INT NOT NULL, changed_at DATETIME(3) NOT NULL)');
      await scratch.db.query("INSERT INTO items VALUES ('SKU-1', 3, '2024-05-01 10:00:00'), ('SKU-2', 4, '2024-05-01 10:00:01')");
    });
    afterAll(async () => {
      await scratch.drop();
    });

    function source(name: string, where: string, logs: ReturnType<typeof logCollector>): ChangeSource {
      const created = createSource(
        sqlConfig({ name, url: scratch.url, changes: `SELECT code, stock, changed_at AS \`cursor\` FROM items WHERE ${where} ORDER BY changed_at, code LIMIT :limit` }),
        { fields: INVENTORY_FIELDS, logger: logs.logger },
      );
      opened.push(created);
      return created;
    }

    it('warns once, naming the source and the null-safe idiom, when `changed_at > :cursor` reads nothing', async () => {
      const logs = logCollector();
      const erp = source('maria-bad-query', 'changed_at > :cursor', logs);
      expect(await pollTwice(erp)).toEqual([0, 0]);
      const warnings = firstPollWarnings(logs);
      expect(warnings).toHaveLength(1);
      const [name, message] = warnings[0] ?? [];
      expect(name).toBe('maria-bad-query');
      expect(message).toContain('source maria-bad-query');
      expect(message).toContain('WHERE (:cursor IS NULL OR changed_at >= :cursor)');
    });

    it('stays quiet with the null-safe query, which reads the rows', async () => {
      const logs = logCollector();
      const erp = source('maria-good-query', '(:cursor IS NULL OR changed_at >= :cursor)', logs);
      expect(await pollTwice(erp)).toEqual([2, 2]);
      expect(firstPollWarnings(logs)).toEqual([]);
    });

    /** A source whose deletions query reads an empty ERPNext `tabDeleted Document`. */
    function withDeletions(name: string, where: string, logs: ReturnType<typeof logCollector>): ChangeSource {
      const created = createSource(
        sqlConfig({
          name,
          url: scratch.url,
          changes: `SELECT code, stock, changed_at AS \`cursor\` FROM items WHERE ${where} ORDER BY changed_at, code LIMIT :limit`,
          deletions:
            "SELECT deleted_name AS code, modified AS `cursor` FROM `tabDeleted Document` WHERE deleted_doctype = 'Item' AND (:cursor IS NULL OR modified >= :cursor) ORDER BY modified, deleted_name LIMIT :limit",
        }),
        { fields: INVENTORY_FIELDS, logger: logs.logger },
      );
      opened.push(created);
      return created;
    }

    it('stays quiet when the deletions query reads an empty tabDeleted Document on a fresh ERPNext setup (issue 28, 6a)', async () => {
      await scratch.db.query('CREATE TABLE IF NOT EXISTS `tabDeleted Document` (name VARCHAR(140) PRIMARY KEY, modified DATETIME(6), deleted_name VARCHAR(140), deleted_doctype VARCHAR(140))');
      const logs = logCollector();
      const erp = withDeletions('maria-fresh-erpnext', '(:cursor IS NULL OR changed_at >= :cursor)', logs);
      const deleted = await erp.readDeletions?.(null, 100);
      expect(deleted?.records).toEqual([]);
      expect(await pollTwice(erp)).toEqual([2, 2]);
      expect(firstPollWarnings(logs), 'an empty deletions table logged the changes query\'s first-poll warning').toEqual([]);
    });

    it('still warns for the changes query after an empty deletions read', async () => {
      const logs = logCollector();
      const erp = withDeletions('maria-bad-with-deletions', 'changed_at > :cursor', logs);
      await erp.readDeletions?.(null, 100);
      expect(await pollTwice(erp)).toEqual([0, 0]);
      const warnings = firstPollWarnings(logs);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.[1]).toContain('the first poll (no stored cursor, no initialCursor) read no rows');
    });
  });

  describe('on an HTTP endpoint', () => {
    let server: Server;
    let base = '';
    beforeAll(async () => {
      // An ERP endpoint that answers only when asked with a cursor: the HTTP form of the same trap.
      server = createServer((req, res) => {
        const since = new URL(req.url ?? '/', 'http://erp').searchParams.get('since');
        const items = since === null ? [] : [{ code: 'SKU-1', stock: 1, cursor: '2024-05-01T10:00:00.000Z' }];
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    function source(name: string, logs: ReturnType<typeof logCollector>, initialCursor: string | null = null): ChangeSource {
      const config = httpSourceSchema.parse({ name, kind: 'http', schedule: '* * * * * *', url: `${base}/changes`, initialCursor });
      const created = createSource(config, { fields: INVENTORY_FIELDS, logger: logs.logger });
      opened.push(created);
      return created;
    }

    it('warns once when the endpoint answers nothing without a cursor parameter', async () => {
      const logs = logCollector();
      expect(await pollTwice(source('http-needs-cursor', logs))).toEqual([0, 0]);
      const warnings = firstPollWarnings(logs);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.[0]).toBe('http-needs-cursor');
      expect(warnings[0]?.[1]).toContain('cursor parameter');
    });

    it('stays quiet with an initialCursor, which the first poll sends', async () => {
      const logs = logCollector();
      expect(await pollTwice(source('http-initial-cursor', logs, '2024-01-01T00:00:00Z'))).toEqual([1, 1]);
      expect(firstPollWarnings(logs)).toEqual([]);
    });
  });
});
