/**
 * Regression: a flow whose start fails part-way (fulfillment leaked its sources and its Redis connection
 * when its schedule failed to start) leaves no Redis connection open. Connections are counted on the
 * server (CLIENT LIST) by the name this test gives them.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { loadConfig, mergeDeep } from '../../src/config/load.js';
import { FileSalesSink } from '../../src/erp/sinks/file-sink.js';
import type { SalesSink } from '../../src/erp/sinks/index.js';
import { ErpError } from '../../src/errors.js';
import { createRedis } from '../../src/queue/connection.js';
import { startControlFlow } from '../../src/sync/control/index.js';
import type { FlowDeps } from '../../src/sync/flow.js';
import { startFulfillmentFlow } from '../../src/sync/fulfillment/index.js';
import { startInventoryFlow } from '../../src/sync/inventory/index.js';
import { startSalesFlow } from '../../src/sync/sales/index.js';
import { waitFor } from '../../src/wait-for.js';
import { type Harness, startHarness } from './sales/harness.js';

const REDIS_URL = 'redis://127.0.0.1:6379/0';

describe('a flow whose start fails', () => {
  let h: Harness;
  let dir: string;
  let name: string;
  let opened: Redis[];

  beforeEach(async () => {
    h = await startHarness();
    dir = await mkdtemp(join(tmpdir(), 'storesync-leaks-'));
    name = `leak-${randomUUID()}`;
    opened = [];
  });

  afterEach(async () => {
    for (const connection of opened) connection.disconnect();
    await h.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** The harness's dependencies with `config` layered on, and connections named for CLIENT LIST. */
  function deps(config: Record<string, unknown>): FlowDeps {
    return {
      ...h.deps,
      config: loadConfig({ env: {}, overrides: mergeDeep(JSON.parse(JSON.stringify(h.config)) as Record<string, unknown>, config) }),
      connect: () => {
        const connection = createRedis(REDIS_URL, { connectionName: name });
        opened.push(connection);
        return connection;
      },
    };
  }

  /** Connections to Redis named by this test, as the server sees them. */
  async function openConnections(): Promise<number> {
    const list = (await h.redis.client('LIST')) as string;
    return list.split('\n').filter((line) => line.includes(` name=${name} `)).length;
  }

  /**
   * Waits until every connection of this test is closed on both sides: ended in the client, and gone
   * from the server (QUIT is answered before the socket closes). A connection still connecting has no
   * name on the server yet, hence the client side too.
   */
  async function expectNoConnectionLeft(): Promise<void> {
    await waitFor(async () => opened.every((connection) => connection.status === 'end') && (await openConnections()) === 0, {
      message: 'every connection of the flow closed',
    });
  }

  const badSchedule = 'every minute';
  const csvSource = (schedule: string) => ({ name: 'drop', kind: 'csv', dir, schedule, settleMs: 0 });

  it('inventory: a source with an invalid schedule closes the source, the worker and every connection', async () => {
    await expect(startInventoryFlow(deps({ inventory: { sources: [csvSource(badSchedule)] } }), { role: 'all' })).rejects.toThrow('is not a cron expression');
    expect(opened.length).toBeGreaterThanOrEqual(2);
    await expectNoConnectionLeft();
  });

  it('fulfillment: a source with an invalid schedule closes the source, the worker and every connection', async () => {
    await expect(startFulfillmentFlow(deps({ fulfillment: { sources: [csvSource(badSchedule)] } }), { role: 'all' })).rejects.toThrow(
      'is not a cron expression',
    );
    await expectNoConnectionLeft();
  });

  it('sales: an invalid pull schedule closes the worker and every connection', async () => {
    const sink = new FileSalesSink({ dir });
    await expect(startSalesFlow(deps({ sales: { enabled: true, pull: { schedule: badSchedule } } }), { role: 'all', sink })).rejects.toThrow(
      'is not a cron expression',
    );
    expect(opened.length).toBeGreaterThanOrEqual(2);
    await expectNoConnectionLeft();
  });

  it('sales: a sink that cannot work as configured stops the start and closes the runtime', async () => {
    const sink: SalesSink = {
      kind: 'file',
      check: () => Promise.reject(new ErpError('test-sink', 'interface tables not ready', { code: 'ERR_ERP_SCHEMA', retryable: false })),
      export: () => Promise.reject(new Error('not used')),
      close: () => Promise.resolve(),
    };
    await expect(startSalesFlow(deps({}), { role: 'all', sink })).rejects.toThrow('interface tables not ready');
    expect(opened).toHaveLength(1);
    await expectNoConnectionLeft();
  });

  it('every flow, started and closed, leaves no connection open', async () => {
    const all = deps({ fulfillment: { sources: [csvSource('0 0 0 1 1 *')] }, inventory: { sources: [csvSource('0 0 0 1 1 *')] } });
    const flows = [
      await startInventoryFlow(all, { role: 'all' }),
      await startFulfillmentFlow(all, { role: 'all' }),
      await startSalesFlow(all, { role: 'all', sink: new FileSalesSink({ dir }) }),
      await startControlFlow(all, { role: 'all', actions: { reconcile: () => Promise.reject(new Error('unused')), pullSales: () => Promise.reject(new Error('unused')) } }),
    ];
    await waitFor(async () => (await openConnections()) >= 8, { message: 'the flows connected' });
    for (const flow of flows) await flow.close();
    await expectNoConnectionLeft();
  });
});
