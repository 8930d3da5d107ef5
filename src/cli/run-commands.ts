/**
 * `storesync run`: the daemon, until SIGINT/SIGTERM. `storesync demo`: everything on one machine
 * (simulated store, sample ERP, daemon) to see storesync work. The demo (and the simulator it starts)
 * is imported when it runs, so that `storesync run` does not carry it in memory.
 */
import { once } from 'node:events';
import { hostname } from 'node:os';

import { type Command, CommanderError, Option } from 'commander';

import { assertCredentials } from '../config/credentials.js';
import type { Config } from '../config/schema.js';
import { startDaemon } from '../daemon.js';
import type { Role } from '../sync/flow.js';
import type { CliContext } from './context.js';
import { RedisUnavailableError } from './demo/local-redis.js';
import { OptionValues } from './option-values.js';

const ROLES: readonly Role[] = ['all', 'producer', 'worker'];

/** Resolves when `signal` aborts. */
async function untilAborted(signal: AbortSignal): Promise<void> {
  if (!signal.aborted) await once(signal, 'abort');
}

/** Registers `run` and `demo`. */
export function registerRunCommands(program: Command, ctx: CliContext): void {
  program
    .command('run')
    .description('run the daemon: the sync flows, /metrics, /livez, /readyz and the admin dashboard')
    .option('--role <role>', 'all: producers and workers; producer: cron pollers only; worker: queue workers only', 'all')
    .action(async (opts: { role: string }) => {
      const values = new OptionValues();
      const role = values.oneOf('--role', opts.role, ROLES) ?? 'all';
      values.check('run options');
      const config = ctx.config('daemon');
      const logger = ctx.logger('daemon');
      const instance = ctx.io.pid === undefined ? undefined : `${hostname()}:${ctx.io.pid}`;
      // Refused before anything starts: without store credentials every job would only collect refused
      // logins, and a short admin token could be guessed.
      assertCredentials(config);
      const daemon = await startDaemon({ config, logger, ...(instance ? { instance } : {}) }, { role });
      await untilAborted(ctx.io.stopSignal);
      logger.info({ signal: String(ctx.io.stopSignal.reason ?? 'stop') }, 'stopping: finishing running jobs (a second signal exits at once)');
      await daemon.close();
    });

  program
    .command('demo')
    .description('run storesync against a simulated store and a sample ERP on this machine (needs only Redis)')
    .option('--once', 'run one full cycle (ERP -> store, reconcile, sales pull, fulfillment), print a summary and exit')
    .option('--port <n>', 'HTTP port of the dashboard and metrics (0: any free port)', '9464')
    .addOption(new Option('--redis-prefix <prefix>', 'Redis key prefix of the demo (emptied at start)').default('storesync-demo'))
    .action(async (opts: { once?: boolean; port: string; redisPrefix: string }) => {
      const values = new OptionValues();
      const port = values.port('--port', opts.port) ?? 0;
      values.check('demo options');
      const logLevel = program.opts<{ logLevel?: Config['log']['level'] }>().logLevel;
      const { runDemo } = await import('./demo/run-demo.js');
      try {
        await runDemo({ io: ctx.io, once: opts.once === true, port, prefix: opts.redisPrefix, ...(logLevel ? { logLevel } : {}) });
      } catch (error) {
        if (!(error instanceof RedisUnavailableError)) throw error;
        // One line, then a CommanderError: the CLI exits non-zero (2) without printing anything more.
        ctx.io.stderr.write(`${error.message}\n`);
        throw new CommanderError(2, 'storesync.redisUnavailable', error.message);
      }
    });
}
