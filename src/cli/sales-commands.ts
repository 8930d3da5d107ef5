/**
 * `storesync sales pull|export|fulfil|processed` and `storesync migrate`: the sales flow by hand
 * (`processed`: the ERP booked these sales, so their reservations are released). A pull queues
 * jobs for the daemon's workers (or lists them with --dry-run); export and fulfil do their work for
 * one sale right away, through the same code and guards as the workers.
 */
import type { Command } from 'commander';

import { tableNames } from '../erp/sinks/index.js';
import { assertInterfaceTables, migrateInterfaceTables } from '../erp/sinks/migrations.js';
import { openSql } from '../erp/sql-client.js';
import { ValidationError } from '../errors.js';
import { type FulfillmentUpdate, updateSale } from '../sync/fulfillment/index.js';
import { markSalesProcessed } from '../sync/inventory/index.js';
import { exportOneSale, type PullReport, pullSales } from '../sync/sales/index.js';
import { pullSiteId } from '../sync/sales/runtime.js';
import { type CliContext, formatTable, printResult } from './context.js';
import { withFlowDeps } from './flow-deps.js';
import { defined, OptionValues } from './option-values.js';

interface PullOptions {
  from?: string;
  to?: string;
  status?: string;
  externalReference?: string[];
  dryRun?: boolean;
  json?: boolean;
}

interface ExportOptions {
  force?: boolean;
  site?: string;
  json?: boolean;
}

interface FulfilOptions {
  status?: string;
  statusText?: string;
  trackingCode?: string;
  observations?: string;
  force?: boolean;
  json?: boolean;
}


function saleId(value: string): number {
  const values = new OptionValues();
  const id = values.int('ID', value, 'positive integer');
  values.check('sale id');
  return id ?? 0;
}

function describePull(report: PullReport): string {
  const window = report.from === null ? 'by external reference' : `${report.from} .. ${report.to} (store time zone)`;
  const lines = [
    `${report.dryRun ? 'Dry run: nothing queued. ' : ''}Sales ${window}, ${report.siteIds.length > 1 ? 'sites' : 'site'} ${report.siteIds.join(', ') || 'any'}, statuses ${report.statuses.join(',') || 'any'}`,
    `seen ${report.seen}  ${report.dryRun ? 'would queue' : 'queued'} ${report.queued}  already queued ${report.alreadyQueued}  retried ${report.retried}  refused ${report.refused}  done ${report.done}  settling ${report.skippedSettling}  other status ${report.skippedStatus}${report.skippedSite > 0 ? `  other site ${report.skippedSite}` : ''}`,
  ];
  if (report.dryRun && report.sales.length > 0) lines.push('', formatTable(report.sales as unknown as Array<Record<string, unknown>>));
  if (!report.dryRun && report.queued > 0) lines.push('The running daemon\'s workers export the queued sales.');
  return lines.join('\n');
}

/** Registers `sales pull|export|fulfil` and `migrate`. */
export function registerSalesCommands(program: Command, ctx: CliContext): void {
  const sales = program.command('sales').description('sales sync: pull store sales to the ERP, export one, update a shipment');
  sales
    .command('pull')
    .description('read the store\'s sales and queue those not yet exported (--dry-run lists them)')
    .option('--from <YYYY-MM-DD>', 'first day of the window, store time zone (default: the lookback before the last pull)')
    .option('--to <YYYY-MM-DD>', 'last day of the window (default: tomorrow)')
    .option('--status <list>', 'statuses to pull, e.g. 1,2 (default: sales.pull.statuses)')
    .option('--external-reference <ref...>', 'pull these sales by external reference instead of by window')
    .option('--dry-run', 'list what would be exported; queue and record nothing')
    .option('--json', 'print the report as JSON')
    .action(async (options: PullOptions) => {
      const timeZone = ctx.config().store.timeZone;
      const values = new OptionValues();
      const pull = defined({
        from: values.date('--from', options.from, timeZone),
        to: values.date('--to', options.to, timeZone),
        statuses: values.ints('--status', options.status),
        externalReferences: options.externalReference,
        dryRun: options.dryRun === true,
      });
      values.check('sales pull');
      const report = await withFlowDeps(ctx, (deps) => pullSales(deps, pull));
      if (options.json) printResult(ctx.io, report, true);
      else ctx.io.stdout.write(`${describePull(report)}\n`);
    });
  sales
    .command('export')
    .argument('<id>', 'sale id')
    .description('export one sale to the ERP now and acknowledge it on the store')
    .option('--force', 'export again even if it was exported before (an acknowledged sale is not acknowledged again)')
    .option('--site <n>', 'the sale\'s site (default: sales.pull.siteId, else store.siteId without inventory.sites, else the sale\'s own)')
    .option('--json', 'print the outcome as JSON')
    .action(async (id: string, options: ExportOptions) => {
      const values = new OptionValues();
      const site = values.int('--site', options.site, 'positive integer');
      const sale = saleId(id);
      values.check('sales export');
      const outcome = await withFlowDeps(ctx, (deps) => exportOneSale(deps, sale, defined({ force: options.force === true, siteId: site })));
      printResult(ctx.io, outcome, options.json === true);
    });
  sales
    .command('fulfil')
    .argument('<id>', 'sale id')
    .description('update a sale\'s shipment (status, tracking code, observations) through the transition guard')
    .option('--status <n>', 'new status (one of fulfillment.statuses)')
    .option('--status-text <text>', 'status text')
    .option('--tracking-code <code>', 'tracking code')
    .option('--observations <text>', 'observations')
    .option('--force', 'move a sale out of a final status (Delivered, Rejected, Cancelled)')
    .option('--json', 'print the outcome as JSON')
    .action(async (id: string, options: FulfilOptions) => {
      const values = new OptionValues();
      const update: FulfillmentUpdate = defined({
        Status: values.int('--status', options.status),
        StatusText: options.statusText,
        TrackingCode: options.trackingCode,
        Obeservations: options.observations,
      });
      values.check('sales fulfil');
      const sale = saleId(id);
      if (Object.keys(update).length === 0) {
        throw new ValidationError([{ field: 'options', value: {}, rule: 'at least one of --status, --status-text, --tracking-code, --observations' }], 'sales fulfil');
      }
      const result = await withFlowDeps(ctx, (deps) => updateSale(deps, sale, update, { force: options.force === true }));
      printResult(ctx.io, result, options.json === true);
    });

  sales
    .command('processed')
    .argument('<ids...>', 'sale ids the ERP has booked')
    .description('tell storesync the ERP has booked these sales, releasing their reservations (README, "Overselling")')
    .option('--site <n>', 'the sales\' site (default: sales.pull.siteId, else store.siteId without inventory.sites)')
    .option('--booked-at <time>', 'when the ERP booked them, ISO 8601 with a zone (default: now)')
    .option('--json', 'print the outcome as JSON')
    .action(async (ids: string[], options: { site?: string; bookedAt?: string; json?: boolean }) => {
      const values = new OptionValues();
      const site = values.int('--site', options.site, 'positive integer');
      const bookedAt = values.instant('--booked-at', options.bookedAt);
      const saleIds = ids.map((id) => values.int('ID', id, 'positive integer') ?? 0);
      values.check('sales processed');
      const siteId = site ?? pullSiteId(ctx.config());
      if (siteId === null) {
        throw new ValidationError([{ field: '--site', value: undefined, rule: 'required when neither sales.pull.siteId nor store.siteId is set, and with inventory.sites (a sale may be on any of them)' }], 'sales processed');
      }
      const outcomes = await withFlowDeps(ctx, (deps) => markSalesProcessed(deps, { siteId, saleIds, ...(bookedAt === undefined ? {} : { bookedAt }) }));
      if (options.json) printResult(ctx.io, outcomes, true);
      else ctx.io.stdout.write(`${formatTable(outcomes as unknown as Array<Record<string, unknown>>)}\n`);
    });

  program
    .command('migrate')
    .description('create the ERP interface tables of the sql sales sink, or check them (--check)')
    .option('--check', 'only check; exit 1 naming what is missing')
    .option('--json', 'print the report as JSON')
    .action(async (options: { check?: boolean; json?: boolean }) => {
      const sink = ctx.config().sales.sink;
      if (sink === null) {
        ctx.io.stdout.write('sales.sink is not configured (sales sync is off): there are no interface tables to migrate\n');
        return;
      }
      if (sink.kind !== 'sql') {
        ctx.io.stdout.write(`sales.sink.kind is ${sink.kind}: there are no interface tables to migrate\n`);
        return;
      }
      const sql = openSql(sink.url, { name: 'sales sink' });
      const names = tableNames(sink);
      try {
        if (options.check) {
          await assertInterfaceTables(sql, names);
          ctx.io.stdout.write(`interface tables ${names.sales} and ${names.items} are ready\n`);
          return;
        }
        const report = await migrateInterfaceTables(sql, names);
        if (options.json) {
          printResult(ctx.io, report, true);
          return;
        }
        const where = names.schema ? ` in ${names.schema}` : '';
        const lines = [
          ...report.created.map((table) => `created table ${table}${where}`),
          ...report.addedColumns.map((column) => `added column ${column}${where}`),
          ...report.unchanged.map((table) => `table ${table}${where} is up to date`),
        ];
        ctx.io.stdout.write(`${lines.join('\n')}\n`);
      } finally {
        await sql.close();
      }
    });
}
