/** `storesync simulator`: runs the store simulator standalone until the process is asked to stop. */
import { type Command, InvalidArgumentError } from 'commander';

import { startSimulator, VARIANCE_PROFILE } from '../simulator/index.js';
import type { CliContext } from './context.js';

function number(kind: 'int' | 'rate' | 'positive') {
  return (text: string): number => {
    const value = Number(text);
    const ok =
      text.trim() !== '' &&
      Number.isFinite(value) &&
      (kind === 'int' ? Number.isInteger(value) && value >= 0 : kind === 'rate' ? value >= 0 && value <= 1 : value > 0);
    if (!ok) {
      throw new InvalidArgumentError(
        kind === 'int' ? 'expected a whole number >= 0' : kind === 'rate' ? 'expected a probability from 0 to 1' : 'expected a number > 0',
      );
    }
    return value;
  };
}

interface SimulatorCommandOptions {
  port: number;
  host: string;
  items: number;
  sales: number;
  users: number;
  clients: number;
  seed: number;
  latencyMs: number;
  jitterMs: number;
  failRate: number;
  rate429: number;
  rateLimit: number;
  hashTtlS: number;
  successFalseRate: number;
  variance: boolean;
  user: string;
  pass: string;
}

/** Registers `storesync simulator`. */
export function registerSimulatorCommand(program: Command, ctx: CliContext): void {
  program
    .command('simulator')
    .description('run an in-memory store that implements the store API (for tests, benchmarks and the demo)')
    .option('--port <n>', 'port to listen on (0: a free one)', number('int'), 8080)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--items <n>', 'items to generate (codes SKU-000001...)', number('int'), 200)
    .option('--sales <n>', 'sales to generate', number('int'), 50)
    .option('--users <n>', 'users to generate', number('int'), 20)
    .option('--clients <n>', 'clients to generate', number('int'), 10)
    .option('--seed <n>', 'seed of the generated data', number('int'), 1)
    .option('--latency-ms <ms>', 'delay added to every API response', number('int'), 0)
    .option('--jitter-ms <ms>', 'random extra delay, 0 to this', number('int'), 0)
    .option('--fail-rate <p>', 'probability of an injected 500', number('rate'), 0)
    .option('--rate-429 <p>', 'probability of an injected 429 (Retry-After: 1)', number('rate'), 0)
    .option('--rate-limit <r>', 'most API requests per second (0: unlimited)', number('int'), 0)
    .option('--hash-ttl-s <s>', 'lifetime of an authentication hash, seconds', number('positive'), 1800)
    .option('--success-false-rate <p>', 'probability that a write answers 200 {Success:false}', number('rate'), 0)
    .option('--variance', 'behave unlike the default simulator where the spec allows it (capped paging, loose types, replacing sale PUTs, non-JSON write bodies)', false)
    .option('--user <name>', 'accepted username', 'demo')
    .option('--pass <password>', 'accepted password', 'demo-password')
    .action(async (opts: SimulatorCommandOptions) => {
      const simulator = await startSimulator({
        ...(opts.variance ? VARIANCE_PROFILE : {}),
        port: opts.port,
        host: opts.host,
        items: opts.items,
        sales: opts.sales,
        users: opts.users,
        clients: opts.clients,
        seed: opts.seed,
        latencyMs: opts.latencyMs,
        jitterMs: opts.jitterMs,
        failRate: opts.failRate,
        rate429: opts.rate429,
        rateLimit: opts.rateLimit,
        hashTtlS: opts.hashTtlS,
        successFalseRate: opts.successFalseRate,
        username: opts.user,
        password: opts.pass,
      });
      ctx.io.stdout.write(`storesync simulator listening on ${simulator.url}\n`);
      const stop = ctx.io.stopSignal;
      if (!stop.aborted) await new Promise<void>((resolve) => stop.addEventListener('abort', () => resolve(), { once: true }));
      await simulator.close();
    });
}
