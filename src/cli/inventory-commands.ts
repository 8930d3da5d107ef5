/**
 * `storesync resync inventory`: runs the reconcile from the command line. It queues the differences
 * (the running daemon's workers send them) and prints the plan: counts per field, the first
 * differences, SKUs missing on the store. `--dry-run` compares without writing anything.
 * `storesync inventory explain SKU`: why the store shows what it shows for a SKU (reads only).
 */
import type { Command } from 'commander';

import { explainSku, type SkuExplanation } from '../sync/inventory/explain.js';
import { describeKit } from '../sync/inventory/listing/index.js';
import { runReconcile } from '../sync/inventory/reconcile/index.js';
import type { ReconcileReport } from '../sync/inventory/types.js';
import { type CliContext, type CliIo, formatTable, printResult } from './context.js';
import { withFlowDeps } from './flow-deps.js';
import { OptionValues } from './option-values.js';
import { describeVanished } from './vanished-commands.js';

interface ResyncInventoryOptions {
  source?: string;
  sku?: string[];
  dryRun?: boolean;
  json?: boolean;
  force?: boolean;
  confirmOrphans?: boolean;
}

const BAR_WIDTH = 30;

/** Registers `resync inventory` (under a `resync` command shared with other areas). */
export function registerInventoryCommands(program: Command, ctx: CliContext): void {
  const resync =
    program.commands.find((command) => command.name() === 'resync') ??
    program.command('resync').description('compare the ERP with the store and queue what differs');
  resync
    .command('inventory')
    .description('reconcile inventory: read the ERP snapshot and the store, queue only the differences')
    .option('--source <name>', 'only this inventory source')
    .option('--sku <code...>', 'only these SKUs')
    .option('--dry-run', 'compare and print the plan; write nothing')
    .option('--force', 'queue every ERP field, even those equal on the store')
    .option('--confirm-orphans', 'act on store items no ERP source has (inventory.reconcile.orphans) even when the guard holds them')
    .option('--json', 'print the report as JSON')
    .action((options: ResyncInventoryOptions) => resyncInventory(ctx, options));

  const inventory =
    program.commands.find((command) => command.name() === 'inventory') ??
    program.command('inventory').description('inventory sync: look into what storesync publishes');
  inventory
    .command('explain')
    .argument('<sku>', 'the SKU (Code)')
    .description('why the store shows what it shows: ERP values, reservations, safety stock, the published figure, jobs (reads only)')
    .option('--site <n>', 'the target on this site (default: the SKU\'s default target); lists the reservations of this site only')
    .option('--price-list <list>', 'the target of this price list, by id or code (inventory.priceLists; default: the store\'s default list)')
    .option('--json', 'print the explanation as JSON')
    .action(async (sku: string, options: { site?: string; priceList?: string; json?: boolean }) => {
      const values = new OptionValues();
      const siteId = values.int('--site', options.site, 'positive integer');
      values.check('inventory explain');
      const target = { ...(siteId === undefined ? {} : { siteId }), ...(options.priceList === undefined ? {} : { priceList: options.priceList }) };
      const explanation = await withFlowDeps(ctx, (deps) => explainSku(deps, sku, target));
      if (options.json) printResult(ctx.io, explanation, true);
      else ctx.io.stdout.write(`${describeExplanation(explanation)}\n`);
    });
}

/** The human-readable explanation. */
export function describeExplanation(e: SkuExplanation): string {
  const lines = [`SKU ${e.target}${e.siteId === null ? '' : ` (reservations of site ${e.siteId})`}`];
  lines.push('', 'ERP values:', e.erp.length === 0 ? '  none received' : formatTable(e.erp as unknown as Array<Record<string, unknown>>));
  lines.push('', `Reservations (version ${e.reservationVersion}):`);
  lines.push(e.reservations.length === 0 ? '  none' : formatTable(e.reservations as unknown as Array<Record<string, unknown>>, ['siteId', 'saleId', 'quantity', 'since', 'state', 'bookedAt', 'appliesToFigure']));
  lines.push('', `Safety stock: ${e.safetyStock.value} (from ${e.safetyStock.from === 'record' ? 'the ERP record' : 'inventory.safetyStock'})`);
  const formula = e.allocation ? '' : '  (ERP − reserved − safety stock)';
  if (e.kit) lines.push(...describeKit(e.kit));
  else lines.push(`Published stock: ${e.published ? `${e.published.formula}${formula}` : 'none (no ERP stock received)'}`);
  if (e.allocation) lines.push(...e.allocation.lines);
  if (e.nextStockWrite !== null) lines.push(`Next job sends Stock = ${e.nextStockWrite}`);
  const acknowledged = Object.entries(e.store.acknowledged).map(([field, value]) => `${field}=${JSON.stringify(value)}`);
  lines.push(`Store last acknowledged: ${acknowledged.join(' ') || 'nothing'}${e.store.at ? ` at ${e.store.at}` : ''}`);
  if (e.vanished.length > 0) lines.push('', 'Vanished:', ...describeVanished(e.vanished).map((line) => `  ${line}`));
  lines.push('', 'Jobs:', e.jobs.length === 0 ? '  none' : formatTable(e.jobs as unknown as Array<Record<string, unknown>>));
  lines.push('', 'Refused ERP rows:', e.rejects.length === 0 ? '  none' : formatTable(e.rejects as unknown as Array<Record<string, unknown>>));
  return lines.join('\n');
}

async function resyncInventory(ctx: CliContext, options: ResyncInventoryOptions): Promise<void> {
  const progress = isTty(ctx.io.stderr) ? progressBar(ctx.io) : undefined;
  const report = await withFlowDeps(ctx, (deps) =>
    runReconcile(deps, {
      ...(options.source === undefined ? {} : { source: options.source }),
      ...(options.sku === undefined ? {} : { skus: options.sku }),
      dryRun: options.dryRun === true,
      force: options.force === true,
      confirmOrphans: options.confirmOrphans === true,
      ...(progress ? { onProgress: progress.update } : {}),
    }),
  );
  progress?.end();
  if (options.json) printResult(ctx.io, report, true);
  else ctx.io.stdout.write(`${describe(report)}\n`);
}

/** The human-readable plan. */
function describe(report: ReconcileReport): string {
  const lines = [
    `${report.dryRun ? 'Dry run: nothing written. ' : ''}Sources: ${report.sources.join(', ') || '(none with a snapshot)'}`,
    `Sites read: ${report.sites.map((site) => site ?? 'all').join(', ')}${report.priceLists.length > 0 ? `; price lists read: ${report.priceLists.join(', ')}` : ''}`,
    `ERP records: ${report.erpRecords}  store items: ${report.storeItems}  rejected ERP records: ${report.rejected}  rejected store items: ${report.storeRejected}`,
    `Differences: ${report.differences} in ${report.itemsWithDifferences} targets of ${report.skusWithDifferences} SKUs; missing on the store: ${report.missingOnStore}; on other sites: ${report.onOtherSites}`,
    `${report.dryRun ? 'Jobs that would be queued' : 'Jobs queued'}: ${report.queued}`,
  ];
  const perField = Object.entries(report.perField).map(([field, count]) => ({ field, differences: count }));
  if (perField.length > 0) lines.push('', formatTable(perField));
  if (report.sample.length > 0) {
    // The target names the site and price list that differ; the default target is the bare SKU.
    const rows = report.sample.map(({ sku, target, field, erp, store, siteId }) => ({ target: target ?? sku, field, erp, store, siteId }));
    lines.push('', `First ${report.sample.length} differences:`, formatTable(rows, ['target', 'field', 'erp', 'store', 'siteId']));
  }
  if (report.missingSample.length > 0) lines.push('', `Missing on the store (first ${report.missingSample.length}): ${report.missingSample.join(', ')}`);
  if (report.orphans.checked) lines.push('', describeOrphans(report));
  if (report.otherSiteSample.length > 0) {
    const onSites = report.otherSiteSample.map(({ sku, siteIds }) => `${sku} on site ${siteIds.join(', ')}`);
    lines.push('', `On sites not reconciled (first ${onSites.length}): ${onSites.join('; ')}`);
  }
  return lines.join('\n');
}

/** The store items no ERP source has, and what the run did with them. */
function describeOrphans(report: ReconcileReport): string {
  const { action, toChange, queued, held } = report.orphans;
  const sample = report.onlyOnStoreSample.length > 0 ? ` (first ${report.onlyOnStoreSample.length}: ${report.onlyOnStoreSample.join(', ')})` : '';
  const lines = [`Only on the store, in no ERP source: ${report.onlyOnStore}${sample}`];
  if (action === 'report') return lines[0]!;
  const verb = action === 'zero' ? 'zeroed' : 'unpublished';
  if (held > 0) lines.push(`HELD by the guard: ${held} would be ${verb} (more than inventory.reconcile.orphansMaxFraction); check the ERP sources, then run again with --confirm-orphans`);
  else lines.push(`To be ${verb}: ${toChange}; ${report.dryRun ? 'would be queued' : 'queued'}: ${queued}`);
  return lines.join('\n');
}

function isTty(stream: object): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}

/** A one-line progress bar redrawn in place on stderr. */
function progressBar(io: CliIo): { update: (done: number, total: number) => void; end: () => void } {
  let drawn = false;
  return {
    update(done, total) {
      const ratio = total > 0 ? Math.min(1, done / total) : 0;
      const filled = Math.round(ratio * BAR_WIDTH);
      io.stderr.write(`\r[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${Math.round(ratio * 100)}% ${done}/${total}`);
      drawn = true;
    },
    end() {
      if (drawn) io.stderr.write('\n');
    },
  };
}
