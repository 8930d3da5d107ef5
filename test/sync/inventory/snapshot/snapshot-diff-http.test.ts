import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { type InventoryFlow, startInventoryFlow } from '../../../../src/sync/inventory/index.js';
import { type InventoryRuntime, openInventoryRuntime } from '../../../../src/sync/inventory/runtime.js';
import { waitFor } from '../../../../src/wait-for.js';
import { createHarness, type Harness } from '../harness.js';

const TOKEN = 'erp-snapshot-token-7c2d';

let h: Harness;
let rt: InventoryRuntime;
let flow: InventoryFlow;
let server: Server;
/** What the ERP's "all items" endpoint answers. */
let items: Array<{ sku: string; qty: number | string }>;

async function settled(): Promise<void> {
  await waitFor(async () => Object.values(await rt.queue.getJobCounts('active', 'waiting', 'prioritized', 'delayed')).every((n) => n === 0), { message: 'the inventory queue to drain' });
}

beforeEach(async () => {
  items = [];
  server = createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(401).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: items }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  h = await createHarness(['H-1', 'H-2', 'H-3'].map((Code) => ({ Code, Stock: 1, Price: 10 })));
  const deps = h.deps({
    inventory: {
      sources: [
        {
          name: 'erp-api',
          kind: 'http',
          url: `${base}/api/changes`,
          snapshotUrl: `${base}/api/items`,
          recordsPath: 'data',
          headers: { Authorization: `Bearer ${TOKEN}` },
          mapping: { sku: 'Code', qty: 'Stock' },
          limit: 2,
          diff: { schedule: '0 0 0 1 1 *' },
        },
      ],
    },
  });
  rt = openInventoryRuntime(deps);
  flow = await startInventoryFlow(deps, { role: 'all' });
});

afterEach(async () => {
  await flow.close();
  await rt.close();
  await h.close();
  await new Promise((resolve) => server.close(resolve));
});

describe('snapshot diff of an HTTP source (snapshotUrl)', () => {
  it('queues what changed and zeroes what is gone, keeping a SKU whose record is refused', async () => {
    items = [
      { sku: 'H-1', qty: 5 },
      { sku: 'H-2', qty: 6 },
      { sku: 'H-3', qty: 7 },
    ];
    expect(await flow.diff('erp-api')).toMatchObject({ read: 3, queued: 3 });
    await settled();
    items = [
      { sku: 'H-1', qty: 9 },
      { sku: 'H-2', qty: 'many' },
    ];
    expect(await flow.diff('erp-api')).toMatchObject({ read: 2, changed: 1, queued: 1, vanished: 1, refused: 1 });
    await settled();
    expect(['H-1', 'H-2', 'H-3'].map((code) => h.sim.state.items.get(code)?.item.Stock)).toEqual([9, 6, 0]);
  });
});
