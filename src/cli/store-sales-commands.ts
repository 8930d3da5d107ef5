/**
 * `storesync store sales …`: list with every filter of the spec, one sale, and the update, which reads
 * the sale first and sends the complete update structure (what the options leave alone keeps its value).
 */
import type { Command } from 'commander';

import { ValidationError } from '../errors.js';
import type { SaleUpdate } from '../store/schemas/index.js';
import type { CliContext } from './context.js';
import { defined, OptionValues } from './option-values.js';
import { idArgument, JSON_BODY_HELP, printRecord, printRows, textOption, withClient } from './store-command-io.js';

const SALE_COLUMNS = ['Id', 'Status', 'StatusText', 'Total', 'CreationDate', 'ExternalReference', 'SiteId', 'TrackingCode'];

type Opts = Record<string, unknown>;

/** Registers `storesync store sales list | get | update`. */
export function registerStoreSales(store: Command, ctx: CliContext): void {
  const sales = store.command('sales').description('query and update sales');
  sales
    .command('list')
    .description('list sales matching the filters (every page unless --limit)')
    .option('--status <list>', 'statuses, comma-separated: 1,2')
    .option('--from <date>', 'from date, YYYY-MM-DD')
    .option('--to <date>', 'to date, YYYY-MM-DD')
    .option('--email <e>', 'customer e-mail, exact')
    .option('--site-id <n>', 'site id')
    .option('--external-reference <r>', 'reference in the external system (with --site-id)')
    .option('--sub-status <n>', 'sub-status')
    .option('--pay-method-id <n>', 'payment method id')
    .option('--identification-number <n>', 'customer document number, exact')
    .option('--last-digits-phone <digits>', 'last digits of the phone')
    .option('--postal-code <n>', 'postal code (an integer)')
    .option('--full-name <name>', 'customer full name, may be partial')
    .option('--offset <n>', 'sales to skip before the first printed')
    .option('--limit <n>', 'most sales to print')
    .option('--json', 'print JSON')
    .action((opts: Opts) => {
      const text = (key: string): string | undefined => textOption(opts, key);
      const timeZone = ctx.config().store.timeZone;
      const values = new OptionValues();
      const limit = values.int('--limit', text('limit'), 'positive integer');
      const filters = defined({
        status: values.ints('--status', text('status')),
        from: values.date('--from', text('from'), timeZone),
        to: values.date('--to', text('to'), timeZone),
        email: text('email'),
        siteId: values.int('--site-id', text('siteId'), 'positive integer'),
        externalReference: text('externalReference'),
        subStatus: values.int('--sub-status', text('subStatus')),
        payMethodId: values.int('--pay-method-id', text('payMethodId'), 'positive integer'),
        identificationNumber: text('identificationNumber'),
        lastDigitsPhone: text('lastDigitsPhone'),
        // Checked as the spec types it (an integer) by the client, before anything is sent.
        postalCode: text('postalCode'),
        fullName: text('fullName'),
        offset: values.int('--offset', text('offset')),
      });
      values.check('sales list');
      return withClient(ctx, async (client) => {
        const found = [];
        for await (const sale of client.sales.iterate({ ...filters, pageSize: Math.min(limit ?? 100, 100) })) {
          found.push(sale);
          if (limit !== undefined && found.length >= limit) break;
        }
        printRows(ctx, found, SALE_COLUMNS, opts.json === true);
      });
    });
  sales
    .command('get <id>')
    .description('one sale by id')
    .option('--from <date>', 'from date, YYYY-MM-DD (passed to the store as the spec lists it)')
    .option('--to <date>', 'to date, YYYY-MM-DD')
    .option('--json', 'print JSON')
    .action((id: string, opts: Opts) => {
      const saleId = idArgument(id, 'sales get');
      const timeZone = ctx.config().store.timeZone;
      const values = new OptionValues();
      const range = defined({ from: values.date('--from', textOption(opts, 'from'), timeZone), to: values.date('--to', textOption(opts, 'to'), timeZone) });
      values.check('sales get');
      return withClient(ctx, async (client) => printRecord(ctx, await client.sales.get(saleId, range), opts.json === true));
    });
  sales
    .command('update <id>')
    .description('update a sale: reads it, then sends the complete update structure with the changes given')
    .option('--status <n>', 'new status (integer); its text comes from store.statusTexts unless --status-text')
    .option('--status-text <t>', 'status description')
    .option('--operation-status <n>', 'operation status (integer)')
    .option('--tracking <t>', 'tracking code')
    .option('--observations <text>', 'observations (replaces them)')
    .option('--message <text>', 'message')
    .option('--json-body <json|@file>', JSON_BODY_HELP)
    .option('--json', 'print JSON')
    .action((id: string, opts: Opts) => {
      const saleId = idArgument(id, 'sales update');
      const text = (key: string): string | undefined => textOption(opts, key);
      const values = new OptionValues();
      const change = {
        ...values.jsonObjectOrFile('--json-body', text('jsonBody')),
        ...defined({
          Status: values.int('--status', text('status')),
          StatusText: text('statusText'),
          OperationStatus: values.int('--operation-status', text('operationStatus')),
          TrackingCode: text('tracking'),
          Obeservations: text('observations'),
          Message: text('message'),
        }),
      } as SaleUpdate;
      values.check('sales update');
      if (Object.keys(change).length === 0) {
        throw new ValidationError(
          [{ record: `sale ${saleId}`, field: '(options)', value: undefined, rule: 'at least one change: --status, --status-text, --operation-status, --tracking, --observations, --message or --json-body' }],
          'sales update',
        );
      }
      return withClient(ctx, async (client) => {
        const { sent, answer } = await client.sales.change(saleId, change);
        printRecord(ctx, answer ?? sent, opts.json === true);
      });
    });
}
