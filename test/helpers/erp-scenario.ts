/**
 * The run of an ERP-shaped end-to-end scenario: a whole inventory flow (poll, worker, reconcile) over
 * real Redis and the simulator over HTTP, driven by hand (sources on a schedule that never fires), and
 * the check that ends every scenario: the store shows the ERP's truth.
 */
import type { Simulator } from '../../src/simulator/index.js';
import { type InventoryFlow, type ReconcileOptions, startInventoryFlow } from '../../src/sync/inventory/index.js';
import type { DiffReport, PollReport, ReconcileReport } from '../../src/sync/inventory/types.js';
import { waitFor } from '../../src/wait-for.js';
import type { Harness } from '../sync/inventory/harness.js';

/** A cron that never fires during a test (1 January, midnight): scenarios poll by hand. */
export const NEVER = '0 0 0 1 1 *';

/** What the store should show for a SKU; a SKU the ERP no longer sells should show Stock 0. */
export interface Expected {
  Stock: number;
  Price?: number;
}

/** A started flow and the steps of a scenario. */
export interface Scenario {
  flow: InventoryFlow;
  /** Polls a source's changes and waits until the store has taken every job. */
  poll(source: string): Promise<PollReport>;
  /** Runs a source's snapshot diff and waits until the store has taken every job. */
  diff(source: string): Promise<DiffReport>;
  /** Runs a full reconcile and waits until the store has taken every job. */
  reconcile(options?: ReconcileOptions): Promise<ReconcileReport>;
  /** Waits until the inventory queue has nothing waiting, running or delayed. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the inventory flow (producer and worker) with `config` merged into the harness's. */
export async function startScenario(h: Harness, config: Record<string, unknown>): Promise<Scenario> {
  const flow = await startInventoryFlow(h.deps(config), { role: 'all' });
  const queue = flow.queues[0]!;
  const settle = async (): Promise<void> => {
    await waitFor(
      async () => {
        const counts = await queue.getJobCounts('active', 'waiting', 'prioritized', 'delayed', 'waiting-children');
        return Object.values(counts).every((n) => n === 0);
      },
      { message: 'the inventory queue drained', timeoutMs: 30_000 },
    );
  };
  return {
    flow,
    settle,
    async poll(source) {
      const report = await flow.poll(source);
      await settle();
      return report;
    },
    async diff(source) {
      const report = await flow.diff(source);
      await settle();
      return report;
    },
    async reconcile(options) {
      const report = await flow.reconcile(options);
      await settle();
      return report;
    },
    close: () => flow.close(1000),
  };
}

/**
 * Where the store differs from `truth` for the SKUs of `codes`: a SKU in `truth` must show its Stock
 * (and Price when given); one not in it (deleted, archived, disabled) must show Stock 0. Empty when equal.
 */
export function storeMismatches(sim: Simulator, truth: ReadonlyMap<string, Expected>, codes: Iterable<string>): string[] {
  const out: string[] = [];
  for (const code of codes) {
    const item = sim.state.items.get(code)?.item;
    const expected = truth.get(code) ?? { Stock: 0 };
    if (item === undefined) {
      out.push(`${code}: not on the store`);
      continue;
    }
    if (item.Stock !== expected.Stock) out.push(`${code}: Stock ${item.Stock} on the store, ${expected.Stock} in the ERP`);
    if (expected.Price !== undefined && item.Price !== expected.Price) out.push(`${code}: Price ${item.Price} on the store, ${expected.Price} in the ERP`);
  }
  return out;
}
