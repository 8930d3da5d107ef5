/**
 * `storesync store …`: the store API by hand, through the same typed client the daemon uses. Output is
 * a table, or JSON with --json. Option values are checked before anything is sent; a bad one is a
 * ValidationError naming the option (exit 3).
 */
import type { Command } from 'commander';

import { ConfigError, ValidationError } from '../errors.js';
import { StoreClient } from '../store/client.js';
import type { InventoryUpdateInput, UserCreate, UserSearchField, UserUpdate } from '../store/schemas/index.js';
import { validateInventoryUpdate } from '../store/validation.js';
import { type CliContext, formatTable, printResult } from './context.js';
import { defined, OptionValues } from './option-values.js';

const INVENTORY_COLUMNS = ['Code', 'Name', 'Stock', 'Price', 'OfferPrice', 'Published', 'ForSale', 'SiteId', 'DepStock'];
const SALE_COLUMNS = ['Id', 'Status', 'StatusText', 'Total', 'CreationDate', 'ExternalReference', 'SiteId', 'TrackingCode'];
const USER_COLUMNS = ['Id', 'Username', 'FirstName', 'LastName', 'EMail', 'Access', 'SiteId'];

/** A single record as a two-column table of its scalar fields. */
function printRecord(ctx: CliContext, value: unknown, json: boolean): void {
  if (json || value === null || typeof value !== 'object' || Array.isArray(value)) {
    printResult(ctx.io, value ?? { ok: true }, json);
    return;
  }
  const rows = Object.entries(value)
    .filter(([, v]) => v === null || typeof v !== 'object')
    .map(([field, v]) => ({ field, value: v }));
  ctx.io.stdout.write(`${formatTable(rows, ['field', 'value'])}\n`);
}

function printRows(ctx: CliContext, rows: ReadonlyArray<Record<string, unknown>>, columns: readonly string[] | undefined, json: boolean): void {
  if (json) printResult(ctx.io, rows, true);
  else ctx.io.stdout.write(`${formatTable(rows, rows.length === 0 ? undefined : columns)}\n`);
}

/** Runs `action` with a client built from the configuration, and closes it whatever happens. */
async function withClient<T>(ctx: CliContext, action: (client: StoreClient) => Promise<T>): Promise<T> {
  const config = ctx.config().store;
  if (!config.username || !config.password) {
    throw new ConfigError(['store.username and store.password: required to call the store (env STORE_USERNAME, STORE_PASSWORD)']);
  }
  const client = new StoreClient({ config, logger: ctx.logger() });
  try {
    return await action(client);
  } finally {
    await client.close();
  }
}

function idArgument(value: string, what: string): number {
  const values = new OptionValues();
  const id = values.int('ID', value, 'positive integer');
  values.check(what);
  return id ?? 0;
}

/** Registers `storesync store …`. */
export function registerStoreCommands(program: Command, ctx: CliContext): void {
  const store = program.command('store').description('call the store API directly (inventory, products, sales, users, clients)');
  store
    .command('login')
    .description('log in with the configured credentials and report the outcome')
    .action(() => withClient(ctx, async (client) => {
      await client.login();
      ctx.io.stdout.write('login ok\n');
    }));
  registerInventory(store, ctx);
  registerProducts(store, ctx);
  registerSales(store, ctx);
  registerUsers(store, ctx);
  registerClients(store, ctx);
}

function registerInventory(store: Command, ctx: CliContext): void {
  const inventory = store.command('inventory').description('read and update inventory items');
  inventory
    .command('get')
    .description('list inventory items (all, or one by code)')
    .option('--code <code>', 'one item by its code')
    .option('--site-id <n>', 'site id')
    .option('--price-list-id <n>', 'price list id')
    .option('--include-preferences', 'include preferences and custom settings')
    .option('--json', 'print JSON')
    .action((opts: { code?: string; siteId?: string; priceListId?: string; includePreferences?: boolean; json?: boolean }) => {
      const values = new OptionValues();
      const siteId = values.int('--site-id', opts.siteId, 'positive integer');
      const pricelistId = values.int('--price-list-id', opts.priceListId, 'positive integer');
      values.check('inventory get');
      return withClient(ctx, async (client) => {
        const items = await client.inventory.get(defined({ code: opts.code, siteId, pricelistId, includePreferences: opts.includePreferences }));
        printRows(ctx, items, INVENTORY_COLUMNS, opts.json ?? false);
      });
    });
  inventory
    .command('set')
    .description('update one item by code (only the fields given change)')
    .requiredOption('--code <code>', 'the item code')
    .option('--stock <n>', 'available stock, 0 to 999999')
    .option('--price <p>', 'final price, 0.01 to 999999.99')
    .option('--offer-price <p>', 'struck-through list price')
    .option('--published <bool>', 'true or false')
    .option('--for-sale <bool>', 'true or false')
    .option('--site-id <n>', 'site id')
    .option('--dry-run', 'validate and print the payload; send nothing')
    .option('--json', 'print JSON')
    .action((opts: Record<string, string | boolean | undefined>) => {
      const text = (key: string): string | undefined => (typeof opts[key] === 'string' ? opts[key] : undefined);
      const values = new OptionValues();
      const item: InventoryUpdateInput = {
        InternalId: 0,
        Code: text('code') ?? '',
        ...defined({
          Stock: values.int('--stock', text('stock')),
          Price: values.number('--price', text('price')),
          OfferPrice: values.number('--offer-price', text('offerPrice')),
          Published: values.bool('--published', text('published')),
          ForSale: values.bool('--for-sale', text('forSale')),
          SiteId: values.int('--site-id', text('siteId'), 'positive integer'),
        }),
      };
      values.check('inventory set');
      const json = opts.json === true;
      if (opts.dryRun) {
        const issues = validateInventoryUpdate(item);
        if (issues.length > 0) throw new ValidationError(issues, 'inventory set');
        printRecord(ctx, json ? { dryRun: true, payload: item } : item, json);
        return;
      }
      return withClient(ctx, async (client) => printRecord(ctx, await client.inventory.update(item), json));
    });
}

function registerProducts(store: Command, ctx: CliContext): void {
  store
    .command('products')
    .description('query products')
    .command('list')
    .description('list products matching the filters')
    .option('--term <t>', 'search term')
    .option('--parent-id <n>', 'parent product id')
    .option('--order <field>', 'field to sort by')
    .option('--ascending <bool>', 'true ascending, false descending')
    .option('--mode <m>', 'mode')
    .option('--status <s>', 'status')
    .option('--fields <f>', 'fields to include')
    .option('--filters-and <x>', 'AND filters')
    .option('--filters-or <x>', 'OR filters')
    .option('--created-from <date>', 'creation date from, YYYY-MM-DD')
    .option('--created-to <date>', 'creation date to, YYYY-MM-DD')
    .option('--json', 'print JSON')
    .action((opts: Record<string, string | boolean | undefined>) => {
      const text = (key: string): string | undefined => (typeof opts[key] === 'string' ? opts[key] : undefined);
      const timeZone = ctx.config().store.timeZone;
      const values = new OptionValues();
      const filters = defined({
        term: text('term'),
        parentId: values.int('--parent-id', text('parentId')),
        order: text('order'),
        ascending: values.bool('--ascending', text('ascending')),
        mode: text('mode'),
        status: text('status'),
        fields: text('fields'),
        filtersAnd: text('filtersAnd'),
        filtersOr: text('filtersOr'),
        creationDateFrom: values.date('--created-from', text('createdFrom'), timeZone),
        creationDateTo: values.date('--created-to', text('createdTo'), timeZone),
      });
      values.check('products list');
      return withClient(ctx, async (client) => printRows(ctx, await client.products.list(filters), undefined, opts.json === true));
    });
}

function registerSales(store: Command, ctx: CliContext): void {
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
    .option('--limit <n>', 'most sales to print')
    .option('--json', 'print JSON')
    .action((opts: Record<string, string | boolean | undefined>) => {
      const text = (key: string): string | undefined => (typeof opts[key] === 'string' ? opts[key] : undefined);
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
    .option('--json', 'print JSON')
    .action((id: string, opts: { json?: boolean }) => {
      const saleId = idArgument(id, 'sales get');
      return withClient(ctx, async (client) => printRecord(ctx, await client.sales.get(saleId), opts.json ?? false));
    });
  sales
    .command('update <id>')
    .description('update a sale: status, tracking code, observations')
    .option('--status <n>', 'new status (integer)')
    .option('--status-text <t>', 'status description')
    .option('--tracking <t>', 'tracking code')
    .option('--observations <text>', 'observations')
    .option('--json', 'print JSON')
    .action((id: string, opts: { status?: string; statusText?: string; tracking?: string; observations?: string; json?: boolean }) => {
      const saleId = idArgument(id, 'sales update');
      const values = new OptionValues();
      const payload = defined({
        Status: values.int('--status', opts.status),
        StatusText: opts.statusText,
        TrackingCode: opts.tracking,
        Obeservations: opts.observations,
      });
      values.check('sales update');
      return withClient(ctx, async (client) => printRecord(ctx, await client.sales.update(saleId, payload), opts.json ?? false));
    });
}

/** Options shared by `users create` and `users update`. */
function userOptions(command: Command, required: boolean): Command {
  const add = (flags: string, description: string): void => {
    if (required) command.requiredOption(flags, description);
    else command.option(flags, description);
  };
  add('--username <u>', 'user name (normally the e-mail)');
  add('--first-name <f>', 'first name');
  add('--last-name <l>', 'last name');
  add('--email <e>', 'e-mail');
  add('--password <p>', 'password');
  return command
    .option('--site-id <n>', 'site id')
    .option('--phone <p>', 'phone')
    .option('--mobile <m>', 'mobile')
    .option('--id-number <n>', 'identification number')
    .option('--internal-code <c>', 'internal code')
    .option('--price-list-id <n>', 'price list id')
    .option('--access <bool>', 'may log in: true or false')
    .option('--json', 'print JSON');
}

type UserOpts = Record<string, string | boolean | undefined>;

function userFields(opts: UserOpts, values: OptionValues): Partial<UserCreate> {
  const text = (key: string): string | undefined => (typeof opts[key] === 'string' ? opts[key] : undefined);
  return defined({
    Username: text('username'),
    FirstName: text('firstName'),
    LastName: text('lastName'),
    EMail: text('email'),
    Password: text('password'),
    SiteId: values.int('--site-id', text('siteId'), 'positive integer'),
    Phone: text('phone'),
    Mobile: text('mobile'),
    IdNumber: text('idNumber'),
    InternalCode: text('internalCode'),
    PriceListId: values.int('--price-list-id', text('priceListId'), 'positive integer'),
    Access: values.bool('--access', text('access')),
  });
}

function registerUsers(store: Command, ctx: CliContext): void {
  const users = store.command('users').description('query, create and update users');
  users
    .command('get <id>')
    .description('one user by id')
    .option('--json', 'print JSON')
    .action((id: string, opts: { json?: boolean }) => {
      const userId = idArgument(id, 'users get');
      return withClient(ctx, async (client) => printRecord(ctx, await client.users.get(userId), opts.json ?? false));
    });
  users
    .command('search')
    .description('search users')
    .requiredOption('--fields <f>', 'UserName | FirstName | LastName | IdNumber | InternalCode | PriceList | None')
    .option('--term <t>', 'search term (empty with --fields None: all users)', '')
    .option('--json', 'print JSON')
    .action((opts: { fields: string; term: string; json?: boolean }) =>
      withClient(ctx, async (client) => {
        const found = await client.users.search({ term: opts.term, fields: opts.fields as UserSearchField });
        printRows(ctx, found, USER_COLUMNS, opts.json ?? false);
      }),
    );
  userOptions(users.command('create').description('create a user'), true).action((opts: UserOpts) => {
    const values = new OptionValues();
    const user = userFields(opts, values) as UserCreate;
    values.check('users create');
    return withClient(ctx, async (client) => printRecord(ctx, await client.users.create(user), opts.json === true));
  });
  userOptions(users.command('update <id>').description('update a user (only the fields given change)'), false).action(
    (id: string, opts: UserOpts) => {
      const values = new OptionValues();
      const user: UserUpdate = { ...userFields(opts, values), Id: idArgument(id, 'users update') };
      values.check('users update');
      return withClient(ctx, async (client) => printRecord(ctx, await client.users.update(user), opts.json === true));
    },
  );
}

function registerClients(store: Command, ctx: CliContext): void {
  const clients = store.command('clients').description('list, read, create, update and delete clients');
  clients
    .command('list')
    .description('all clients')
    .option('--json', 'print JSON')
    .action((opts: { json?: boolean }) =>
      withClient(ctx, async (client) => printRows(ctx, await client.clients.list(), undefined, opts.json ?? false)),
    );
  clients
    .command('get <id>')
    .description('one client by id')
    .option('--form <form>', 'plain: /Api/Client/{id}; get: /Api/Client/Get/{id}', 'plain')
    .option('--json', 'print JSON')
    .action((id: string, opts: { form: string; json?: boolean }) => {
      const clientId = idArgument(id, 'clients get');
      if (opts.form !== 'plain' && opts.form !== 'get') {
        throw new ValidationError([{ field: '--form', value: opts.form, rule: 'plain or get' }], 'clients get');
      }
      const form = opts.form;
      return withClient(ctx, async (client) => printRecord(ctx, await client.clients.get(clientId, { form }), opts.json ?? false));
    });
  clients
    .command('create')
    .description('create a client from a JSON body')
    .requiredOption('--json-body <json>', 'the client as a JSON object')
    .option('--json', 'print JSON')
    .action((opts: { jsonBody: string; json?: boolean }) => {
      const values = new OptionValues();
      const body = values.jsonObject('--json-body', opts.jsonBody);
      values.check('clients create');
      return withClient(ctx, async (client) => printRecord(ctx, await client.clients.create(body), opts.json ?? false));
    });
  clients
    .command('update <id>')
    .description('update a client from a JSON body')
    .requiredOption('--json-body <json>', 'the fields as a JSON object')
    .option('--json', 'print JSON')
    .action((id: string, opts: { jsonBody: string; json?: boolean }) => {
      const clientId = idArgument(id, 'clients update');
      const values = new OptionValues();
      const body = values.jsonObject('--json-body', opts.jsonBody);
      values.check('clients update');
      return withClient(ctx, async (client) => printRecord(ctx, await client.clients.update(clientId, body), opts.json ?? false));
    });
  clients
    .command('delete <id>')
    .description('delete a client')
    .option('--json', 'print JSON')
    .action((id: string, opts: { json?: boolean }) => {
      const clientId = idArgument(id, 'clients delete');
      return withClient(ctx, async (client) => printRecord(ctx, await client.clients.delete(clientId), opts.json ?? false));
    });
}
