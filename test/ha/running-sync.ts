/**
 * A running sync for the failover tests (Sentinel, Cluster): a PostgreSQL ERP of its own that changes all along
 * (the chaos run's driver), sales created on the store every 250 ms, pulled, exported to the ERP's interface table
 * and acknowledged; a marker SKU to time a failover by; and the chaos run's end-state checks after a drain: the store
 * holds the ERP's latest figures, no write replaced a newer version with an older one, every sale exported once and
 * acknowledged once.
 */
import { randomUUID } from 'node:crypto';

import pg from 'pg';

import { checkFinalValues, checkNoStaleWrites, checkSalesAckedOnce, checkSalesExportedOnce, finalValueMismatches, saleAcks, salesExportCounts } from '../../bench/lib/chaos/checks.js';
import { CHANGES_QUERY, ErpDriver, priceOf } from '../../bench/lib/chaos/erp-driver.js';
import { seededRandom } from '../../bench/lib/random.js';
import { migrateInterfaceTables } from '../../src/erp/sinks/migrations.js';
import { openSql } from '../../src/erp/sql-client.js';
import type { Simulator } from '../../src/simulator/index.js';
import { waitFor } from '../../src/wait-for.js';
import { onRedisNode } from '../support/redis-ha.js';

const ADMIN_PG = 'postgres://postgres@127.0.0.1:5432/test';
export const SKUS = Array.from({ length: 40 }, (_, i) => `HA-${String(i + 1).padStart(3, '0')}`);
export const MARK = 'HA-MARK';
const ACK_STATUS = 2;

/** The simulator's items: every SKU the driver changes and the marker. */
export const simulatorItems = (): Array<{ Code: string; Stock: number; Price: number }> => [...SKUS, MARK].map((Code) => ({ Code, Stock: 0, Price: 99.99 }));

/** A PostgreSQL database of its own, with the sales interface tables. */
export interface ErpDatabase {
  readonly url: string;
  /** A connection for the marker's changes. */
  readonly client: pg.Client;
  drop(): Promise<void>;
}

export async function createErpDatabase(): Promise<ErpDatabase> {
  const database = `ha_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
  const url = `postgres://postgres@127.0.0.1:5432/${database}`;
  const admin = new pg.Client({ connectionString: ADMIN_PG });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const sql = openSql(url);
  await migrateInterfaceTables(sql, { sales: 'storesync_sales', items: 'storesync_sale_items' });
  await sql.close();
  return {
    url,
    client,
    async drop() {
      await client.end();
      const dropper = new pg.Client({ connectionString: ADMIN_PG });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await dropper.end();
    },
  };
}

/** The inventory (polling the ERP every second) and sales (pulled every second, SQL sink) blocks of the config. */
export function runningSyncConfig(erpUrl: string): { inventory: Record<string, unknown>; sales: Record<string, unknown> } {
  return {
    inventory: {
      concurrency: 4,
      attempts: 25,
      backoffMs: 100,
      sources: [
        { name: 'erp', kind: 'sql', url: erpUrl, schedule: '*/1 * * * * *', limit: 5000, overlapMs: 10_000, initialCursor: '1970-01-01T00:00:00.000Z', changes: CHANGES_QUERY },
      ],
    },
    sales: {
      enabled: true,
      concurrency: 4,
      attempts: 25,
      backoffMs: 200,
      pull: { schedule: '*/1 * * * * *', statuses: [1], lookbackHours: 48, settleMinutes: 0, pageSize: 50 },
      sink: { kind: 'sql', url: erpUrl },
    },
  };
}

/** The ERP changing and sales coming in, until `stop()`; then `drainAndCheck()`. */
export class RunningSync {
  readonly driver: ErpDriver;
  readonly saleIds: number[] = [];
  /** Called before a wait times out (diagnostics). */
  diagnose: (() => Promise<void>) | undefined;
  private selling: NodeJS.Timeout | undefined;
  private markVersion = 0;

  constructor(
    private readonly sim: Simulator,
    private readonly erp: ErpDatabase,
    seed: number,
  ) {
    this.driver = new ErpDriver({ url: erp.url, skus: SKUS, rate: 40, lateShare: 0.1, maxLateMs: 1000, repeatShare: 0.05, invalidRows: 0, durationS: 30, random: seededRandom(seed) });
  }

  async start(): Promise<void> {
    await this.driver.prepare();
    this.driver.start();
    this.selling = setInterval(() => this.saleIds.push(this.sim.addSale({ Status: 1, SiteId: 1 }).Id), 250);
  }

  /** Stops the ERP changes (flushing the late rows) and the sales. */
  async stop(): Promise<void> {
    clearInterval(this.selling);
    await this.driver.stop(30_000);
  }

  async close(): Promise<void> {
    clearInterval(this.selling);
    await this.driver.close();
  }

  /** Writes a change of the marker SKU into the ERP now; resolves with the time its store write was seen. */
  async markerWritten(): Promise<number> {
    this.markVersion += 1;
    const version = this.markVersion;
    await this.erp.client.query('INSERT INTO stock_changes (code, stock, price, changed_at) VALUES ($1, $2, $3, now())', [MARK, version, priceOf(version)]);
    let seenAt = 0;
    await waitFor(
      () => {
        // By its price: its stock is less the units open sales hold.
        const write = this.sim.writes.find((w) => w.code === MARK && w.fields.Price === priceOf(version));
        if (write) seenAt = write.at;
        return write !== undefined;
      },
      { timeoutMs: 45_000, intervalMs: 20, message: `the store write of marker version ${version}` },
    ).catch(async (error: unknown) => {
      await this.diagnose?.();
      throw error;
    });
    return seenAt;
  }

  /** Resolves once `count` more sales were exported to the ERP and acknowledged on the store than now. */
  async salesMove(count: number): Promise<void> {
    const before = this.saleIds.length;
    await waitFor(() => this.saleIds.length >= before + count, { timeoutMs: 30_000, message: `${count} more sales created` });
    const wanted = this.saleIds.slice(before, before + count);
    await waitFor(
      async () => {
        const exported = await salesExportCounts(this.erp.url);
        const acks = saleAcks(this.sim, ACK_STATUS);
        return wanted.every((id) => (exported.get(id) ?? 0) >= 1 && (acks.get(id) ?? 0) >= 1);
      },
      { timeoutMs: 45_000, intervalMs: 200, message: `sales ${wanted.join(', ')} exported and acknowledged after the failover` },
    );
  }

  /**
   * Holds back the replica on `port` (`CLIENT PAUSE WRITE`: it reads the replication stream but applies nothing, for
   * 20 s at most or until `CLIENT UNPAUSE`) while 30 store writes and 2 sales go through; resolves with the bytes it
   * read but did not apply. Unpaused after its master is killed, what it had not applied goes with the dead link.
   */
  async lagReplica(port: number): Promise<number> {
    await onRedisNode(port, (client) => client.call('CLIENT', 'PAUSE', '20000', 'WRITE'));
    const writesBefore = this.sim.writes.length;
    await waitFor(() => this.sim.writes.length >= writesBefore + 30, { timeoutMs: 30_000, message: 'store writes while the replica lags' });
    await this.salesMove(2);
    const offsets = await onRedisNode(port, (client) => client.info('replication'));
    const read = Number(/slave_read_repl_offset:(\d+)/.exec(offsets)?.[1]);
    const applied = Number(/slave_repl_offset:(\d+)/.exec(offsets)?.[1]);
    return read - applied;
  }

  /**
   * Waits (up to a minute) for every SKU at its ERP figure and every sale exported and acknowledged, then runs the
   * checks; resolves with the failed ones (`name: detail`), and a summary line.
   */
  async drainAndCheck(): Promise<{ failed: string[]; summary: string }> {
    const { sim, driver, saleIds } = this;
    await waitFor(
      async () => {
        if (finalValueMismatches(sim, driver.model).length > 0) return false;
        const exported = await salesExportCounts(this.erp.url);
        const acks = saleAcks(sim, ACK_STATUS);
        return saleIds.every((id) => exported.get(id) === 1 && (acks.get(id) ?? 0) >= 1);
      },
      { timeoutMs: 60_000, intervalMs: 250, message: 'the sync to catch up after the failovers' },
    ).catch(() => undefined);
    const exported = await salesExportCounts(this.erp.url);
    const acks = saleAcks(sim, ACK_STATUS);
    const checks = [checkFinalValues(sim, driver.model), checkNoStaleWrites(sim), checkSalesExportedOnce(saleIds, exported), checkSalesAckedOnce(saleIds, acks)];
    return {
      failed: checks.filter((check) => !check.ok).map((check) => `${check.name}: ${check.detail}`),
      summary: `${driver.model.rowsWritten} ERP rows, ${saleIds.length} sales, ${sim.writes.length} store writes`,
    };
  }
}
