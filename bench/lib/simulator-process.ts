/**
 * The simulator as a child process (`storesync simulator`), driven through its HTTP control API. On two
 * cores a simulator in its own process keeps the store's work off the event loop of whatever is being
 * measured (the raw loop or the daemon), which makes the comparison fair.
 */
import { join } from 'node:path';

import { request } from 'undici';

import { type Child, lineWaiter, startChild } from './child.js';

/** Fault settings of the simulator (see src/simulator/faults.ts). */
export interface Faults {
  latencyMs?: number;
  jitterMs?: number;
  failRate?: number;
  rate429?: number;
  rateLimit?: number;
  hashTtlS?: number;
}

/** An accepted inventory write of the simulator's log. */
export interface Write {
  seq: number;
  at: number;
  code: string;
  op: 'update' | 'create';
  fields: Record<string, unknown>;
}

/** A running simulator child. */
export interface SimulatorProcess {
  readonly url: string;
  readonly child: Child;
  setFaults(faults: Faults): Promise<void>;
  /** Accepted `PUT /Api/Inventory` requests so far. */
  inventoryPuts(): Promise<number>;
  writes(since?: number): Promise<Write[]>;
  /** Upserts items (chunked). */
  putItems(items: ReadonlyArray<Record<string, unknown>>): Promise<void>;
  stop(): Promise<void>;
}

async function control<T>(url: string, method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<T> {
  const res = await request(`${url}/__control/${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`simulator control ${method} ${path}: HTTP ${res.statusCode} ${text.slice(0, 200)}`);
  return JSON.parse(text) as T;
}

/** How a simulator child is started. */
export interface SimulatorProcessOptions {
  root: string;
  logDir: string;
  items: number;
  password: string;
  /** Every item held on each of these sites (`--items-per-site`). @defaultValue one site */
  itemsPerSite?: readonly number[];
  /** The store's price lists (`--price-lists`). @defaultValue one list */
  priceLists?: ReadonlyArray<{ id: number; code: string }>;
  /** Stem of its log file. @defaultValue 'simulator' */
  name?: string;
}

/** Starts `storesync simulator` on a spare port with `items` seeded items and no sales. */
export async function startSimulatorProcess(options: SimulatorProcessOptions): Promise<SimulatorProcess> {
  const lines = lineWaiter();
  const args = [join(options.root, 'bin', 'storesync.js'), 'simulator', '--port', '0', '--items', String(options.items), '--sales', '0', '--pass', options.password];
  if (options.itemsPerSite) args.push('--items-per-site', options.itemsPerSite.join(','));
  if (options.priceLists) args.push('--price-lists', options.priceLists.map((list) => `${list.id}:${list.code}`).join(','));
  const child = startChild(
    process.execPath,
    args,
    join(options.logDir, `${options.name ?? 'simulator'}.log`),
    { onLine: lines.onLine, env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn' } },
  );
  const match = await lines.wait(/listening on (http:\/\/\S+)/, 120_000, child);
  const url = match[1] as string;
  return {
    url,
    child,
    async setFaults(faults) {
      await control(url, 'POST', 'faults', faults);
    },
    async inventoryPuts() {
      const counters = await control<{ requests: Record<string, number>; responses: Record<string, number> }>(url, 'GET', 'counters');
      return counters.requests['PUT /Api/Inventory'] ?? 0;
    },
    writes: (since = 0) => control<Write[]>(url, 'GET', `writes?since=${since}`),
    async putItems(items) {
      for (let i = 0; i < items.length; i += 10_000) await control(url, 'PUT', 'items', items.slice(i, i + 10_000));
    },
    stop: () => child.stop(5000),
  };
}
