/**
 * `storesync store inventory …`: read items, update one (`set`) and create one (`create`) with every
 * writable field of the item. Values are read with OptionValues, then the item is checked against the
 * same strict schema the client uses, so a bad value exits 3 with nothing sent.
 */
import type { Command } from 'commander';

import type { InventoryUpdateInput } from '../store/schemas/index.js';
import { validateInventoryUpdate } from '../store/validation.js';
import type { CliContext } from './context.js';
import { defined, OptionValues } from './option-values.js';
import { JSON_BODY_HELP, printRecord, printRows, textOption, withClient } from './store-command-io.js';

const INVENTORY_COLUMNS = ['Code', 'Name', 'Stock', 'Price', 'OfferPrice', 'Published', 'ForSale', 'SiteId', 'DepStock'];

/** The same for a price list's read: its prices, and the list they are of beside them. */
const PRICE_LIST_COLUMNS = ['Code', 'Name', 'Stock', 'Price', 'OfferPrice', 'PriceListId', 'PriceListCode', 'Published', 'ForSale', 'SiteId', 'DepStock'];

type Opts = Record<string, unknown>;

/** The options of every writable field of an item (`--code` is added by each command). */
function itemOptions(command: Command): Command {
  return command
    .option('--stock <n>', 'available stock, 0 to 999999')
    .option('--price <p>', 'final price, 0.01 to 999999.99')
    .option('--offer-price <p>', 'struck-through list price, 0.01 to 999999.99')
    .option('--taxes <percent>', 'tax percentage, 0 to 100 (21 means 21%)')
    .option('--for-sale <bool>', 'available for sale: true or false')
    .option('--published <bool>', 'published on the channel: true or false')
    .option('--is-item <bool>', 'true: simple item, false: variant')
    .option('--parent-item-id <n|null>', 'parent item id, for variants')
    .option('--parent-item-code <code>', 'parent item code, for variants')
    .option('--price-list-id <n>', 'price list id')
    .option('--price-list-code <code>', 'price list code (when no price list id is used)')
    .option('--price-mode <0|null>', 'price mode: always 0 or null')
    .option('--precio-original <decimal>', 'original reference price, a decimal as text: 1234.50')
    .option('--dep-stock <code>', 'code of the warehouse')
    .option('--property <key=value...>', 'a custom attribute; repeat or list several')
    .option('--name <name>', 'product name')
    .option('--code2 <code>', 'alternative code')
    .option('--external-reference <ref>', 'id in the ERP')
    .option('--site-id <n>', 'publication site id')
    .option('--extended-warranty <json>', 'extended warranties as a JSON array of {Name, Price, Active, Cant, Code}')
    .option('--json-body <json|@file>', JSON_BODY_HELP)
    .option('--dry-run', 'validate and print the payload; send nothing')
    .option('--json', 'print JSON');
}

/** The item the options describe, over the `--json-body` fields; bad option values are collected in `values`. */
function itemFrom(opts: Opts, values: OptionValues): InventoryUpdateInput {
  const text = (key: string): string | undefined => textOption(opts, key);
  const body = values.jsonObjectOrFile('--json-body', text('jsonBody')) ?? {};
  const properties = Array.isArray(opts.property) ? (opts.property as string[]) : undefined;
  return {
    InternalId: 0,
    ...body,
    ...defined({
      Code: text('code'),
      Stock: values.int('--stock', text('stock')),
      Price: values.number('--price', text('price')),
      OfferPrice: values.number('--offer-price', text('offerPrice')),
      Taxes: values.number('--taxes', text('taxes')),
      ForSale: values.bool('--for-sale', text('forSale')),
      Published: values.bool('--published', text('published')),
      IsItem: values.bool('--is-item', text('isItem')),
      ParentItemId: values.nullableInt('--parent-item-id', text('parentItemId')),
      ParentItemCode: text('parentItemCode'),
      PriceListId: values.int('--price-list-id', text('priceListId'), 'positive integer'),
      PriceListCode: text('priceListCode'),
      PriceMode: values.nullableInt('--price-mode', text('priceMode')),
      PrecioOriginal: text('precioOriginal'),
      DepStock: text('depStock'),
      Properties: values.keyValues('--property', properties),
      Name: text('name'),
      Code2: text('code2'),
      ExternalReference: text('externalReference'),
      SiteId: values.int('--site-id', text('siteId'), 'positive integer'),
      ExtendedWarranty: values.json('--extended-warranty', text('extendedWarranty')),
    }),
  } as InventoryUpdateInput;
}

/** Reads the item, checks it, then prints it (--dry-run) or sends it with `send`. */
function writeItem(ctx: CliContext, opts: Opts, what: string, send: (item: InventoryUpdateInput) => Promise<unknown>): Promise<void> | void {
  const values = new OptionValues();
  const item = itemFrom(opts, values);
  // Checked here as well as in the client so that --dry-run reports what sending would refuse, and in
  // one report with the values that do not even parse (those are left out of `item`).
  values.check(what, validateInventoryUpdate(item));
  const json = opts.json === true;
  if (opts.dryRun === true) {
    printRecord(ctx, json ? { dryRun: true, payload: item } : item, json);
    return;
  }
  return send(item).then((answer) => printRecord(ctx, answer, json));
}

/** Registers `storesync store inventory get | set | create`. */
export function registerStoreInventory(store: Command, ctx: CliContext): void {
  const inventory = store.command('inventory').description('read, update and create inventory items');
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
        printRows(ctx, items, pricelistId === undefined ? INVENTORY_COLUMNS : PRICE_LIST_COLUMNS, opts.json ?? false);
      });
    });
  itemOptions(
    inventory
      .command('set')
      .description('update one item by code (only the fields given change)')
      .requiredOption('--code <code>', 'the item code'),
  ).action((opts: Opts) => writeItem(ctx, opts, 'inventory set', (item) => withClient(ctx, (client) => client.inventory.update(item))));
  itemOptions(
    inventory
      .command('create')
      .description('create an item (POST to store.inventoryCreatePath; fields left out take the store defaults)')
      .requiredOption('--code <code>', 'the new item code (unique)'),
  ).action((opts: Opts) => writeItem(ctx, opts, 'inventory create', (item) => withClient(ctx, (client) => client.inventory.create(item))));
}
