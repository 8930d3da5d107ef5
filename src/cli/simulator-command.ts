/**
 * `storesync simulator`: runs the store simulator standalone until the process is asked to stop. The
 * simulator is imported when the command runs, so that other commands (`run`) do not carry it in memory.
 */
import type { Command } from 'commander';

import type { CliContext } from './context.js';
import { OptionValues } from './option-values.js';

/** The options as commander hands them over: text, read by `OptionValues` in the action. */
interface SimulatorCommandOptions {
  port: string;
  host: string;
  items: string;
  sales: string;
  users: string;
  clients: string;
  seed: string;
  latencyMs: string;
  jitterMs: string;
  failRate: string;
  rate429: string;
  rateLimit: string;
  hashTtlS: string;
  successFalseRate: string;
  variance: boolean;
  /** `true` when given without a value. */
  itemsPerSite?: string | true;
  priceLists?: string | true;
  user: string;
  pass: string;
}

/** The simulator's demo password, which the README prints; one given with --pass is not echoed. */
const DEMO_PASSWORD = 'demo-password';

/** The credentials the start line shows: the user, and the password when it is the documented demo one. */
function credentialsShown(user: string, pass: string): string {
  return `${user} / ${pass === DEMO_PASSWORD ? pass : 'the password given with --pass'}`;
}

/** Registers `storesync simulator`. */
export function registerSimulatorCommand(program: Command, ctx: CliContext): void {
  program
    .command('simulator')
    .description('run an in-memory store that implements the store API (for tests, benchmarks and the demo)')
    .option('--port <n>', 'port to listen on (0: a free one)', '8080')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--items <n>', 'items to generate (codes SKU-000001...)', '200')
    .option('--sales <n>', 'sales to generate', '50')
    .option('--users <n>', 'users to generate', '20')
    .option('--clients <n>', 'clients to generate', '10')
    .option('--seed <n>', 'seed of the generated data', '1')
    .option('--latency-ms <ms>', 'delay added to every API response', '0')
    .option('--jitter-ms <ms>', 'random extra delay, 0 to this', '0')
    .option('--fail-rate <p>', 'probability of an injected 500', '0')
    .option('--rate-429 <p>', 'probability of an injected 429 (Retry-After: 1)', '0')
    .option('--rate-limit <r>', 'most API requests per second (0: unlimited)', '0')
    .option('--hash-ttl-s <s>', 'lifetime of an authentication hash, seconds', '1800')
    .option('--success-false-rate <p>', 'probability that a write answers 200 {Success:false}', '0')
    .option('--variance', 'behave unlike the default simulator where the spec allows it (capped paging, loose types, replacing sale PUTs, non-JSON write bodies)', false)
    .option('--items-per-site [ids]', 'hold every item on each of these sites, each copy with its own stock and flags (bare: 1,2,3)')
    .option('--price-lists [lists]', 'price lists as id:CODE,... each with its own price for every item (bare: 1:MINORISTA,2:MAYORISTA,3:OUTLET)')
    .option('--user <name>', 'accepted username', 'demo')
    .option('--pass <password>', 'accepted password', DEMO_PASSWORD)
    .action(async (opts: SimulatorCommandOptions) => {
      const values = new OptionValues();
      const count = (option: string, value: string) => values.int(option, value, 'integer >= 0');
      const rate = (option: string, value: string) => values.number(option, value, 'probability from 0 to 1');
      const settings = {
        port: values.port('--port', opts.port),
        items: count('--items', opts.items),
        sales: count('--sales', opts.sales),
        users: count('--users', opts.users),
        clients: count('--clients', opts.clients),
        seed: count('--seed', opts.seed),
        latencyMs: count('--latency-ms', opts.latencyMs),
        jitterMs: count('--jitter-ms', opts.jitterMs),
        failRate: rate('--fail-rate', opts.failRate),
        rate429: rate('--rate-429', opts.rate429),
        rateLimit: count('--rate-limit', opts.rateLimit),
        hashTtlS: values.number('--hash-ttl-s', opts.hashTtlS, 'number > 0'),
        successFalseRate: rate('--success-false-rate', opts.successFalseRate),
      };
      const itemsPerSite = opts.itemsPerSite === undefined ? undefined : values.uniqueIds('--items-per-site', opts.itemsPerSite === true ? '1,2,3' : opts.itemsPerSite);
      const priceLists = opts.priceLists === undefined ? undefined : values.idCodes('--price-lists', opts.priceLists === true ? '1:MINORISTA,2:MAYORISTA,3:OUTLET' : opts.priceLists);
      values.check('simulator options');
      const { startSimulator, VARIANCE_PROFILE } = await import('../simulator/index.js');
      // check() passed and every option has a default: each setting is a number.
      const simulator = await startSimulator({
        ...(opts.variance ? VARIANCE_PROFILE : {}),
        ...(settings as { [K in keyof typeof settings]: number }),
        ...(itemsPerSite ? { itemsPerSite } : {}),
        ...(priceLists ? { priceLists } : {}),
        host: opts.host,
        username: opts.user,
        password: opts.pass,
      });
      ctx.io.stdout.write(`storesync simulator listening on ${simulator.url}   (credentials ${credentialsShown(opts.user, opts.pass)})\n`);
      const stop = ctx.io.stopSignal;
      if (!stop.aborted) await new Promise<void>((resolve) => stop.addEventListener('abort', () => resolve(), { once: true }));
      await simulator.close();
    });
}

