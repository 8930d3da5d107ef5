/**
 * The chaos run with `--kits` (issue 26): the same disorder, with eight kits over the change log's
 * first SKUs and kits sold alongside their components.
 * - A composition table in the run's PostgreSQL, read whole by an `inventory.kits` source every 5
 *   seconds (the composition never changes: the re-reads must change nothing). `KIT-n` is one unit of
 *   SKU-000001 (in every kit), two of SKU(2n) and one of SKU(2n + 1).
 * - The simulator holds the kits as items; besides the plain sales, each tick places a sale of a kit
 *   and of SKU-000001 alone, so the shared component is sold alone and inside kits at once.
 * The per-Code value check of checks.ts gives way to one that counts each kit sale's components
 * (`ceil(quantity × units)`), and kits end at `min floor(sellable ÷ quantity)`; the stale-write check
 * leaves the kits out (their writes carry no ERP version). After every kit write, its figure times each
 * component's quantity is at most that component's sellable stock: the ERP's latest version (stock only
 * ever goes up in this run) less the units of every sale placed more than `SLACK_MS` before the write.
 */
import pg from 'pg';

import type { Simulator } from '../../../src/simulator/index.js';
import type { CheckResult } from './checks.js';
import type { ErpModel } from './erp-driver.js';

const SHARED = 'SKU-000001';
const code = (i: number): string => `SKU-${String(i).padStart(6, '0')}`;
/** Each kit's components per ONE kit. */
const KITS: ReadonlyMap<string, Readonly<Record<string, number>>> = new Map(
  Array.from({ length: 8 }, (_, i) => [`KIT-${i + 1}`, { [SHARED]: 1, [code(2 * (i + 1))]: 2, [code(2 * (i + 1) + 1)]: 1 }] as const),
);
/**
 * A sale counts against a write placed this long after it: one sales pull interval (2 s) and the
 * outage of the Redis restart, during which no pull can reserve it.
 */
const SLACK_MS = 10_000;

const sample = (items: readonly string[], n = 5): string => `${items.slice(0, n).join('; ')}${items.length > n ? ` … (${items.length} in all)` : ''}`;

/** The units each open sale takes from each code: its own lines, and for a kit line its components. */
function takenBySale(sim: Simulator): Array<{ at: number; taken: Map<string, number> }> {
  const out: Array<{ at: number; taken: Map<string, number> }> = [];
  for (const { sale, createdAtMs } of sim.state.sales) {
    if (typeof sale.Status !== 'number' || sale.Status < 0 || sale.Status > 3) continue;
    const units = new Map<string, number>();
    for (const line of sale.Items ?? []) {
      if (typeof line.Code === 'string' && typeof line.Quantity === 'number') units.set(line.Code, (units.get(line.Code) ?? 0) + line.Quantity);
    }
    const taken = new Map<string, number>();
    const add = (c: string, n: number): void => void taken.set(c, (taken.get(c) ?? 0) + n);
    for (const [c, n] of units) {
      add(c, Math.ceil(n));
      for (const [component, quantity] of Object.entries(KITS.get(c) ?? {})) add(component, Math.ceil(quantity * n));
    }
    out.push({ at: createdAtMs, taken });
  }
  return out;
}

/** ERP latest less the units the sales before `before` take (all sales: Infinity), never below 0. */
function sellableOf(model: ErpModel, sales: ReturnType<typeof takenBySale>, before = Number.POSITIVE_INFINITY): (c: string) => number {
  return (c) => Math.max(0, (model.latest.get(c) ?? 0) - sales.reduce((sum, sale) => sum + (sale.at < before ? (sale.taken.get(c) ?? 0) : 0), 0));
}

function kitFigure(kit: string, sellable: (c: string) => number): number {
  return Math.min(...Object.entries(KITS.get(kit) ?? {}).map(([c, quantity]) => Math.floor(sellable(c) / quantity)));
}

/** The `--kits` parts of one chaos run. */
export class KitsRun {
  #kitSales = 0;
  #next = 0;

  /** The kits' codes (the simulator's items). */
  get codes(): string[] {
    return [...KITS.keys()];
  }

  describe(): string {
    return `kits: ${KITS.size} kits over ${new Set([...KITS.values()].flatMap((kit) => Object.keys(kit))).size} components, ${SHARED} in every kit`;
  }

  /** Creates and fills the composition table in the ERP database at `url`. */
  async prepare(url: string): Promise<void> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query('CREATE TABLE IF NOT EXISTS kits (kit text NOT NULL, component text NOT NULL, quantity double precision NOT NULL)');
      for (const [kit, components] of KITS) {
        for (const [component, quantity] of Object.entries(components)) await client.query('INSERT INTO kits VALUES ($1, $2, $3)', [kit, component, quantity]);
      }
    } finally {
      await client.end();
    }
  }

  /** The daemons' kits source. */
  source(erpUrl: string): Record<string, unknown> {
    return { name: 'kits', kind: 'sql', url: erpUrl, schedule: '*/5 * * * * *', snapshot: 'SELECT kit, component, quantity FROM kits' };
  }

  /** Places a sale of the next kit and of the shared component alone; returns its id. */
  placeSale(sim: Simulator): number {
    const kit = this.codes[this.#next % KITS.size] as string;
    this.#next += 1;
    this.#kitSales += 1;
    return sim.addSale({ Status: 1, SiteId: 1, Items: [{ Code: kit, Quantity: 1 + (this.#next % 2) }, { Code: SHARED, Quantity: 1 }] }).Id;
  }

  /** What is not yet where it must be: every change-log SKU and every kit. */
  mismatches(sim: Simulator, model: ErpModel): string[] {
    const sellable = sellableOf(model, takenBySale(sim));
    const wrong: string[] = [];
    for (const c of model.latest.keys()) {
      const stock = sim.state.items.get(c)?.item.Stock;
      if (stock !== sellable(c)) wrong.push(`${c} store Stock ${stock}, ERP latest ${model.latest.get(c)} less its sales and its kits' sales: ${sellable(c)}`);
    }
    for (const kit of KITS.keys()) {
      const stock = sim.state.items.get(kit)?.item.Stock;
      if (stock !== kitFigure(kit, sellable)) wrong.push(`${kit} store Stock ${stock}, its figure ${kitFigure(kit, sellable)}`);
    }
    return wrong;
  }

  /** The kits' checks, in place of checks.ts's per-Code values. */
  checks(sim: Simulator, model: ErpModel): CheckResult[] {
    const wrong = this.mismatches(sim, model);
    const sales = takenBySale(sim);
    const over: string[] = [];
    let kitWrites = 0;
    for (const write of sim.writes) {
      const kit = KITS.get(write.code);
      if (!kit || typeof write.fields.Stock !== 'number') continue;
      kitWrites += 1;
      const sellable = sellableOf(model, sales, write.at - SLACK_MS);
      for (const [c, quantity] of Object.entries(kit)) {
        if (write.fields.Stock * quantity > sellable(c)) over.push(`${write.code} written ${write.fields.Stock} (seq ${write.seq}): × ${quantity} ${c} is over its ${sellable(c)}`);
      }
    }
    return [
      {
        name: `kits: every change-log SKU ends at its ERP latest less its own and its kits' sales, every kit at min floor(sellable ÷ quantity) (${KITS.size} kits, ${this.#kitSales} kit sales)`,
        ok: wrong.length === 0,
        detail: wrong.length === 0 ? 'all equal' : sample(wrong),
      },
      {
        name: `kits: no kit write over what its components can deliver, sales placed ${SLACK_MS / 1000} s before counted (${kitWrites} kit writes)`,
        ok: over.length === 0 && kitWrites > 0,
        detail: over.length === 0 ? (kitWrites > 0 ? 'within' : 'no kit was written') : sample(over),
      },
    ];
  }

  /** Codes the stale-write check leaves out: a kit's write carries no ERP version. */
  get unversioned(): ReadonlySet<string> {
    return new Set(KITS.keys());
  }

  stats(): Record<string, unknown> {
    return { kits: KITS.size, kitSales: this.#kitSales };
  }
}
