import type { Command } from 'commander';

import { assertCredentials } from '../config/credentials.js';
import { summarizeConfig } from '../config/summary.js';
import { maskSecrets } from '../secrets.js';
import type { CliContext } from './context.js';

/**
 * `storesync config check`: validates the configuration (the store credentials included when an enabled flow
 * calls the store), says in one line what will run, prints it with secrets masked.
 */
export function registerConfigCommands(program: Command, ctx: CliContext): void {
  const config = program.command('config').description('inspect the configuration');
  config
    .command('check')
    .description('validate the configuration, summarize what will run and print the effective values, secrets masked')
    .option('--json', 'print JSON instead of YAML-like text')
    .action(async (opts: { json?: boolean }) => {
      const loaded = ctx.config('daemon');
      const effective = maskSecrets(loaded);
      assertCredentials(loaded);
      if (opts.json) {
        ctx.io.stdout.write(`${JSON.stringify(effective, null, 2)}\n`);
      } else {
        const { stringify } = await import('yaml');
        ctx.io.stdout.write(`${summarizeConfig(loaded)}\n# effective configuration (secrets masked)\n${stringify(effective)}`);
      }
    });
}
