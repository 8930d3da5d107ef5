/**
 * `storesync store …`: the store API by hand, through the same typed client the daemon uses. Output is
 * a table, or JSON with --json. Option values are checked before anything is sent; a bad one is a
 * ValidationError naming the option (exit 3).
 */
import type { Command } from 'commander';

import { ValidationError } from '../errors.js';
import type { UserCreate, UserSearchField, UserUpdate } from '../store/schemas/index.js';
import { userCreateIssues, userUpdateIssues } from '../store/users.js';
import type { CliContext } from './context.js';
import { defined, OptionValues } from './option-values.js';
import { idArgument, JSON_BODY_HELP, printRecord, printRows, textOption, withClient } from './store-command-io.js';
import { registerStoreInventory } from './store-inventory-commands.js';
import { registerStoreSales } from './store-sales-commands.js';

const USER_COLUMNS = ['Id', 'Username', 'FirstName', 'LastName', 'EMail', 'Access', 'SiteId'];

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
  registerStoreInventory(store, ctx);
  registerProducts(store, ctx);
  registerStoreSales(store, ctx);
  registerUsers(store, ctx);
  registerClients(store, ctx);
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
      const text = (key: string): string | undefined => textOption(opts, key);
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

/**
 * Options of `users create` and `users update`. None is required by commander: with --json-body the
 * fields may come from the body, and the client's schema names each missing one (exit 3, nothing sent).
 */
function userOptions(command: Command, create: boolean): Command {
  command
    .option('--username <u>', `user name (normally the e-mail)${create ? '; required' : ''}`)
    .option('--first-name <f>', `first name${create ? '; required' : ''}`)
    .option('--last-name <l>', `last name${create ? '; required' : ''}`)
    .option('--email <e>', `e-mail${create ? '; required' : ''}`);
  // The spec uses the password only on creation; an update refuses it.
  if (create) command.option('--password <p>', 'password; required');
  return command
    .option('--site-id <n>', 'site id')
    .option('--phone <p>', 'phone')
    .option('--mobile <m>', 'mobile')
    .option('--id-number <n>', 'identification number')
    .option('--internal-code <c>', 'internal code')
    .option('--price-list-id <n>', 'price list id')
    .option('--profile-id <n>', 'profile id')
    .option('--access <bool>', 'may log in: true or false')
    .option('--ui-lang <lang>', 'interface language')
    .option('--address <a>', 'address')
    .option('--city <code>', 'city code')
    .option('--state <code>', 'state code')
    .option('--country <code>', 'country code')
    .option('--town <code>', 'town code')
    .option('--postal-code <p>', 'postal code')
    .option('--birthday <date>', 'birthday, YYYY-MM-DD')
    .option('--json-body <json|@file>', JSON_BODY_HELP)
    .option('--json', 'print JSON');
}

type UserOpts = Record<string, unknown>;

/** The user the options describe, over the `--json-body` fields (checked by the client's strict schema). */
function userFields(opts: UserOpts, values: OptionValues): Record<string, unknown> {
  const text = (key: string): string | undefined => textOption(opts, key);
  return {
    ...values.jsonObjectOrFile('--json-body', text('jsonBody')),
    ...defined({
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
      ProfileId: values.int('--profile-id', text('profileId'), 'positive integer'),
      Access: values.bool('--access', text('access')),
      UILang: text('uiLang'),
      Address: text('address'),
      City: text('city'),
      State: text('state'),
      Country: text('country'),
      Town: text('town'),
      PostalCode: text('postalCode'),
      Birthday: text('birthday'),
    }),
  };
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
    .description('search users (without --fields the store searches as it does by default, None)')
    .option('--fields <f>', 'UserName | FirstName | LastName | IdNumber | InternalCode | PriceList | None')
    .option('--term <t>', 'search term (empty with --fields None or none: all users)', '')
    .option('--json', 'print JSON')
    .action((opts: { fields?: string; term: string; json?: boolean }) =>
      withClient(ctx, async (client) => {
        const found = await client.users.search(defined({ term: opts.term, fields: opts.fields as UserSearchField | undefined }));
        printRows(ctx, found, USER_COLUMNS, opts.json ?? false);
      }),
    );
  userOptions(users.command('create').description('create a user'), true).action((opts: UserOpts) => {
    const values = new OptionValues();
    const user = userFields(opts, values) as UserCreate;
    // One report: the values that do not parse and what the store's schema refuses in the others.
    values.check('users create', userCreateIssues(user));
    return withClient(ctx, async (client) => printRecord(ctx, await client.users.create(user), opts.json === true));
  });
  userOptions(users.command('update <id>').description('update a user (only the fields given change)'), false).action(
    (id: string, opts: UserOpts) => {
      const values = new OptionValues();
      const user = { ...userFields(opts, values), Id: idArgument(id, 'users update') } as UserUpdate;
      values.check('users update', userUpdateIssues(user));
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
    .requiredOption('--json-body <json|@file>', 'the client as a JSON object, inline or @file')
    .option('--json', 'print JSON')
    .action((opts: { jsonBody: string; json?: boolean }) => {
      const values = new OptionValues();
      const body = values.jsonObjectOrFile('--json-body', opts.jsonBody) ?? {};
      values.check('clients create');
      return withClient(ctx, async (client) => printRecord(ctx, await client.clients.create(body), opts.json ?? false));
    });
  clients
    .command('update <id>')
    .description('update a client from a JSON body')
    .requiredOption('--json-body <json|@file>', 'the fields as a JSON object, inline or @file')
    .option('--json', 'print JSON')
    .action((id: string, opts: { jsonBody: string; json?: boolean }) => {
      const clientId = idArgument(id, 'clients update');
      const values = new OptionValues();
      const body = values.jsonObjectOrFile('--json-body', opts.jsonBody) ?? {};
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
