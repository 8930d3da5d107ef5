/** What the `storesync store …` commands share: a client for one command, output as tables or JSON. */
import { ConfigError } from '../errors.js';
import { StoreClient } from '../store/client.js';
import { type CliContext, formatTable, printResult } from './context.js';
import { OptionValues } from './option-values.js';
import { openCliStoreLimiter } from './store-limiter.js';

/** A single record as a two-column table of its scalar fields (`{ok: true}` for an empty answer). */
export function printRecord(ctx: CliContext, value: unknown, json: boolean): void {
  if (json || value === null || typeof value !== 'object' || Array.isArray(value)) {
    printResult(ctx.io, value ?? { ok: true }, json);
    return;
  }
  const rows = Object.entries(value)
    .filter(([, v]) => v === null || typeof v !== 'object')
    .map(([field, v]) => ({ field, value: v }));
  ctx.io.stdout.write(`${formatTable(rows, ['field', 'value'])}\n`);
}

/** Records as a table of `columns` (all scalar columns when undefined), or JSON. */
export function printRows(ctx: CliContext, rows: ReadonlyArray<Record<string, unknown>>, columns: readonly string[] | undefined, json: boolean): void {
  if (json) printResult(ctx.io, rows, true);
  else ctx.io.stdout.write(`${formatTable(rows, rows.length === 0 ? undefined : columns)}\n`);
}

/** Runs `action` with a client built from the configuration, and closes it whatever happens. */
export async function withClient<T>(ctx: CliContext, action: (client: StoreClient) => Promise<T>): Promise<T> {
  const config = ctx.config().store;
  if (!config.username || !config.password) {
    throw new ConfigError(['store.username and store.password: required to call the store (env STORE_USERNAME, STORE_PASSWORD)']);
  }
  const budget = await openCliStoreLimiter(ctx);
  const client = new StoreClient({ config, logger: ctx.logger(), ...(budget.limiter ? { limiter: budget.limiter } : {}) });
  try {
    return await action(client);
  } finally {
    await client.close();
    budget.close();
  }
}

/** The `<id>` argument of a command as a positive integer, or a ValidationError (exit 3). */
export function idArgument(value: string, what: string): number {
  const values = new OptionValues();
  const id = values.int('ID', value, 'positive integer');
  values.check(what);
  return id ?? 0;
}

/** The string value of option `key` of a command's options, if given as a string. */
export function textOption(opts: Readonly<Record<string, unknown>>, key: string): string | undefined {
  const value = opts[key];
  return typeof value === 'string' ? value : undefined;
}

/** Help text of `--json-body`, the escape hatch of every write command. */
export const JSON_BODY_HELP = 'the body as a JSON object, inline or @file; options given as well win over its fields';
